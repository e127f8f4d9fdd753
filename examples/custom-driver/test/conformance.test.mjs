/**
 * The SDK's published conformance suite against the toy ledger running as a real process.
 * Outcomes are checked through an IndependentReader that reads the ledger's own HTTP API.
 */
import { describeChainDriver } from '@vault/sdk/testing';
import { afterAll, expect } from 'vitest';
import { createDriver, createSigner } from '../src/index.mjs';
import { CHAIN, freshAddress, fundedWallet, independentReader, ledgerPost, startLedgerProcess } from './devnet.mjs';

const devnet = await startLedgerProcess();
afterAll(() => devnet.stop());

const options = { chain: CHAIN, url: devnet.url };
const driver = createDriver(options);
const signer = createSigner(options);
const FUNDED = '1000000000';

/** @param {{ weights: number[], quorum: number }} shape @returns {() => Promise<import('@vault/sdk/testing').ConformanceFixture>} */
const setup = (shape) => async () => {
  const { wallet, keys } = await fundedWallet(devnet.url, { ...shape, balance: FUNDED });
  return {
    chain: CHAIN,
    wallet,
    keys,
    destination: freshAddress(),
    invalidAddresses: [
      `toy1${'0'.repeat(39)}`, // too short
      `toy1${'0'.repeat(41)}`, // too long
      `toy1${'A'.repeat(40)}`, // upper case
      `toy2${'0'.repeat(40)}`, // wrong prefix
      'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', // another ledger's address
    ],
    fundedAmount: FUNDED,
    ledger: independentReader(devnet.url),
  };
};

/** @type {import('@vault/sdk/testing').OperationCase[]} */
const operations = [
  {
    name: 'transfer with a memo',
    intent: (f) => ({ destination: f.destination, amount: '2500', memo: 'invoice 42', operation: { op: 'transfer' } }),
    verify: async (f, confirmed) => {
      expect(await f.ledger.balance(f.destination)).toBe(2500n);
      const { tx } = await ledgerPost(devnet.url, '/tx', { hash: confirmed.txHash });
      expect(tx.payload).toMatchObject({ type: 'transfer', destination: f.destination, amount: '2500', memo: 'invoice 42' });
    },
  },
];

describeChainDriver({ name: 'toy 2-of-3', driver, signer, setup: setup({ weights: [1, 1, 1], quorum: 2 }), operations });
describeChainDriver({ name: 'toy weighted (2,1,1) quorum 3', driver, signer, setup: setup({ weights: [2, 1, 1], quorum: 3 }), operations });
