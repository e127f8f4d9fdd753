import { Keypair } from '@stellar/stellar-base';
import { NotFoundError, type WalletDescriptor } from '@vault/sdk';
import { describe, expect, it } from 'vitest';
import { createStellarDriver } from './driver.js';
import type { FetchLike } from './horizon.js';

const CHAIN = 'stellar:local';
const PASSPHRASE = 'vault local devnet';
const account = Keypair.random().publicKey();
const wallet: WalletDescriptor = {
  wallet: 'w',
  chain: CHAIN,
  control: { kind: 'native_multisig', address: account, signers: [{ address: Keypair.random().publicKey(), curve: 'ed25519', weight: 1, label: 'a' }], quorum: 1 },
};
const reply = (status: number, body: unknown) => ({ status, text: async () => JSON.stringify(body) });

/** A Horizon whose answers are given per path; each GET of /accounts waits for `accountGate`. */
function horizon(answers: { account: () => ReturnType<typeof reply>; fees: () => ReturnType<typeof reply> }, accountGate: Promise<void> = Promise.resolve()) {
  const seen: string[] = [];
  const fetch: FetchLike = async (url) => {
    const path = new URL(url).pathname;
    seen.push(path);
    if (path === '/') return reply(200, { network_passphrase: PASSPHRASE });
    if (path.startsWith('/accounts/')) return accountGate.then(answers.account);
    if (path === '/fee_stats') return answers.fees();
    return reply(404, {});
  };
  return { seen, driver: createStellarDriver({ chains: { [CHAIN]: { horizonUrl: 'http://horizon.test', networkPassphrase: PASSPHRASE, fetch } } }) };
}

describe('stellar fetchParams reads the account and the fee stats at once', () => {
  it('asks for /fee_stats before the account has answered', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const h = horizon({ account: () => reply(404, {}), fees: () => (open(), reply(200, { last_ledger_base_fee: '100' })) }, gate);
    // Read one after the other, /fee_stats would wait for the account, which waits for /fee_stats.
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('/fee_stats was not asked while the account read was open')), 3000));
    await expect(Promise.race([h.driver.fetchParams({ wallet }), timeout])).rejects.toBeInstanceOf(NotFoundError);
    expect(h.seen).toContain('/fee_stats');
  });

  it('a missing account is the answer even when /fee_stats fails too (the order they were judged in before)', async () => {
    const h = horizon({ account: () => reply(404, {}), fees: () => reply(500, {}) });
    await expect(h.driver.fetchParams({ wallet })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('an account read that fails in transport is a TransportError naming it, whatever /fee_stats answers', async () => {
    const down = horizon({
      account: () => {
        throw new Error('connection refused');
      },
      fees: () => reply(503, {}),
    });
    await expect(down.driver.fetchParams({ wallet })).rejects.toThrow(/GET \/accounts\//);
  });
});
