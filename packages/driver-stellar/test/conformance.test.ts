/**
 * The SDK's ChainDriver conformance suite against the devnet, for a 2-of-3 wallet, a weighted
 * wallet, a high threshold above the quorum, a wallet whose low / medium / high thresholds all
 * differ, and the master key as a member. Outcomes are read from the devnet's ledger directly (IndependentReader), never through
 * the driver. Every wallet shape also runs every operation the driver lists (test/operation-cases.ts)
 * end to end.
 */
import { Keypair } from '@stellar/stellar-base';
import { afterAll } from 'vitest';
import { describeChainDriver, type ConformanceFixture, type IndependentReader } from '@vault/sdk/testing';
import { startDevnet, type StellarDevnet } from '../src/devnet/index.js';
import { CHAIN, driverFor, multisigWallet, plainAccount, signerFor } from './helpers.js';
import { stellarOperationCases, type WalletExtras } from './operation-cases.js';

// describeChainDriver registers its tests synchronously: start the devnet first (top-level await).
const devnet: StellarDevnet = await startDevnet();
afterAll(async () => {
  await devnet.close();
});
const driver = driverFor(devnet);
const signer = signerFor(devnet);

const reader: IndependentReader = {
  balance: async (address) => devnet.ledger.nativeBalance(address),
  txResult: async (hash) => {
    const rec = devnet.ledger.transaction(hash);
    return rec ? { applied: rec.successful, code: rec.resultCodes.transaction } : null;
  },
};

const INVALID = [
  'GCFYTCPSBLFIZ5VZ3JIBCWG4GUXHYK65Q25SPAKHVTQLLH2UQGKD6CVB', // checksum
  'gcfytcpsblfiz5vz3jibcwg4guxhyk65q25spakhvtqllh2uqgkd6cva', // lowercase
  'GCFYTCPSBLFIZ5VZ3JIBCWG4GUXHYK65Q25SPAKHVTQLLH2UQGKD6C', // short
  Keypair.random().secret(), // a secret seed
  'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC', // a contract
  'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAJLL', // muxed, bad checksum
  'rN7n7otQDd6FczFgLdSqtcsAUxDkw6fzRH', // XRPL
];

async function fixture(weights: number[], quorum: number, high?: number, masterWeight?: number, extra: WalletExtras = {}, low?: number): Promise<ConformanceFixture> {
  const w = await multisigWallet(devnet, { weights, quorum, ...(high ? { high } : {}), ...(low !== undefined ? { low } : {}), ...(masterWeight ? { masterWeight } : {}), ...extra.wallet });
  const destination = extra.destination ?? (await plainAccount(devnet)).publicKey();
  return {
    chain: CHAIN,
    wallet: w.wallet,
    keys: w.keys,
    destination,
    invalidAddresses: INVALID,
    fundedAmount: devnet.ledger.nativeBalance(w.address).toString(),
    ledger: reader,
    transferAmount: '1000',
  };
}

describeChainDriver({
  name: 'stellar 2-of-3',
  driver,
  signer,
  setup: () => fixture([1, 1, 1], 2),
  confirmIntervalMs: 20,
  operations: stellarOperationCases(devnet, (extra) => fixture([1, 1, 1], 2, undefined, undefined, extra)),
});

describeChainDriver({
  name: 'stellar weighted (3,2,1 quorum 4)',
  driver,
  signer,
  setup: () => fixture([3, 2, 1], 4),
  confirmIntervalMs: 20,
  operations: stellarOperationCases(devnet, (extra) => fixture([3, 2, 1], 4, undefined, undefined, extra)),
});

// High threshold above the quorum (signer changes need every member): payments, at medium, still
// need exactly the quorum and nothing more.
describeChainDriver({
  name: 'stellar 2-of-4, high threshold 4',
  driver,
  signer,
  setup: () => fixture([1, 1, 1, 1], 2, 4),
  confirmIntervalMs: 20,
  operations: stellarOperationCases(devnet, (extra) => fixture([1, 1, 1, 1], 2, 4, undefined, extra)),
});

// Every threshold class different (low 1, medium 2 = the quorum, high 3): payments, issue,
// clawback and account_flags (setOptions changing only flags) are medium and need two signatures;
// authorize_holder is low and needs one: the suite signs with the quorum's two, and assemble must
// attach only the one the ledger will use (a second is tx_bad_auth_extra). No operation the driver
// builds is high class on stellar-core (thresholds.test.ts shows the devnet enforcing high).
describeChainDriver({
  name: 'stellar 2-of-3, thresholds low 1 / medium 2 / high 3',
  driver,
  signer,
  setup: () => fixture([1, 1, 1], 2, 3, undefined, {}, 1),
  confirmIntervalMs: 20,
  operations: stellarOperationCases(devnet, (extra) => fixture([1, 1, 1], 2, 3, undefined, extra, 1)),
});

// The account's own (master) key as a weighted member after two added signers. (Listed last: the
// suite uses the first member as "another destination", and a payment to the wallet itself is refused.)
describeChainDriver({
  name: 'stellar signers 1,1 + master key 2, quorum 3',
  driver,
  signer,
  setup: () => fixture([1, 1, 2], 3, undefined, 2),
  confirmIntervalMs: 20,
  operations: stellarOperationCases(devnet, (extra) => fixture([1, 1, 2], 3, undefined, 2, extra)),
});
