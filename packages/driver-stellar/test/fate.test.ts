/**
 * payloadFate against the devnet over loopback HTTP: live -> applied, a rival on the same sequence
 * is dead, an expired payload is dead only once a ledger closes past max_time, a transaction
 * included but failed is dead with its result code, and every Horizon answer that cannot prove
 * anything (5xx, odd shapes, pruned history, another network) throws instead of guessing.
 * Outcomes are cross-checked on the devnet's ledger directly.
 */
import { Keypair } from '@stellar/stellar-base';
import { afterAll, describe, expect, it } from 'vitest';
import { RefusedError, TransportError, ValidationError, normalizeIntent, type BuiltPayload, type SigningKey, type WalletDescriptor } from '@vault/sdk';
import { STELLAR_NETWORKS, createStellarDriver, type FetchLike, type StellarDriver } from '../src/index.js';
import { startDevnet } from '../src/devnet/index.js';
import { CHAIN, buildSignAssemble, driverFor, multisigWallet, plainAccount, signerFor, trust, type WalletSetup } from './helpers.js';

let clock = Math.floor(Date.now() / 1000);
const devnet = await startDevnet({ clock: () => clock });
afterAll(() => devnet.close());
const driver = driverFor(devnet);
const signer = signerFor(devnet);

/** A driver whose fetch goes to the devnet over HTTP, with `rewrite` free to change the answer. */
function proxied(rewrite: (url: string, status: number, body: string) => { status: number; body: string }): StellarDriver {
  const fetchFn: FetchLike = async (url, init) => {
    const res = await fetch(url, init);
    const out = rewrite(url, res.status, await res.text());
    return { status: out.status, text: async () => out.body };
  };
  return createStellarDriver({ chains: { [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase } }, fetch: fetchFn });
}

const path = (url: string) => new URL(url).pathname;

async function payment(w: WalletSetup, amount: string, overrides: { max_time?: number } = {}): Promise<BuiltPayload> {
  const dest = await plainAccount(devnet);
  const params = { ...(await driver.fetchParams({ wallet: w.wallet })), ...overrides };
  return driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount }), wallet: w.wallet, params });
}

async function submitAtQuorum(w: WalletSetup, built: BuiltPayload): Promise<string> {
  const members = (w.wallet.control as { signers: { address: string }[] }).signers;
  const cs = await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: w.keys[i] as SigningKey, signerAddress: members[i]!.address })));
  const a = driver.assemble({ built, contributions: cs, wallet: w.wallet });
  if (!a.ok) throw new Error('short of quorum');
  expect(await driver.submit({ chain: CHAIN, blob: a.blob })).toMatchObject({ status: 'submitted' });
  return a.txHash;
}

describe('payloadFate on the devnet', () => {
  it('live until submitted, applied once in a ledger; its rival on the same sequence is dead (sequence_consumed)', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const dest = await plainAccount(devnet);
    const mk = (amount: string) => driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount }), wallet: w.wallet, params });
    const first = mk('10');
    const rival = mk('11');
    expect(await driver.payloadFate({ chain: CHAIN, built: first })).toMatchObject({ fate: 'live', code: 'pending' });
    expect(await driver.payloadFate({ chain: CHAIN, built: rival })).toMatchObject({ fate: 'live', code: 'pending' });
    const hash = await submitAtQuorum(w, first);
    expect(hash).toBe(first.digest); // the digest is the ledger's hash, whoever signed
    expect(devnet.ledger.transaction(first.digest)?.successful).toBe(true);
    expect(await driver.payloadFate({ chain: CHAIN, built: first })).toMatchObject({ fate: 'applied', code: 'applied' });
    expect(await driver.payloadFate({ chain: CHAIN, built: rival })).toMatchObject({ fate: 'dead', code: 'sequence_consumed' });
    expect(devnet.ledger.transaction(rival.digest)).toBeUndefined();
  });

  it('a later transaction does not change an applied payload: still applied, the rival still dead', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const first = await payment(w, '10');
    await submitAtQuorum(w, first);
    const second = await payment(w, '12');
    await submitAtQuorum(w, second);
    expect(devnet.ledger.account(w.address)!.seq).toBe(BigInt((first.payload as { sequence: string }).sequence) + 1n);
    expect(await driver.payloadFate({ chain: CHAIN, built: first })).toMatchObject({ fate: 'applied' });
    expect(await driver.payloadFate({ chain: CHAIN, built: second })).toMatchObject({ fate: 'applied' });
  });

  it('expired: live while no ledger has closed past max_time (whatever the wall clock says), dead once one has', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const built = await payment(w, '10', { max_time: clock + 60 });
    clock += 120; // time passes, but the latest closed ledger is still before max_time
    try {
      expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'live', code: 'pending' });
      await devnet.fund(Keypair.random().publicKey()); // closes a ledger at the new time
      expect(devnet.ledger.closedAt).toBeGreaterThan(clock - 1);
      expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'dead', code: 'expired' });
      expect(devnet.ledger.transaction(built.digest)).toBeUndefined();
    } finally {
      clock -= 120;
    }
  });

  it('included but failed (op_not_authorized): dead with its result code; the fee and sequence were consumed, nothing moved', async () => {
    const issuer = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, flags: 0x3 });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'FATE', issuer.address);
    const r = await buildSignAssemble(
      driver,
      signer,
      issuer,
      { destination: holder.publicKey(), amount: '1', asset_symbol: 'FATE', asset_issuer: issuer.address, asset_decimals: 7, operation: { op: 'issue' } },
      [0, 1],
    );
    if (!r.assembled.ok) throw new Error('short');
    expect(await driver.submit({ chain: CHAIN, blob: r.assembled.blob })).toMatchObject({ status: 'rejected', code: 'tx_failed:op_not_authorized' });
    expect(devnet.ledger.transaction(r.built.digest)).toMatchObject({ successful: false });
    expect(devnet.ledger.trustLine(holder.publicKey(), 'FATE', issuer.address)?.balance).toBe(0n);
    expect(await driver.payloadFate({ chain: CHAIN, built: r.built })).toMatchObject({ fate: 'dead', code: 'tx_failed:op_not_authorized' });
  });

  it('a payload for an account that does not exist: live until a ledger closes past max_time, then dead (expired)', async () => {
    const ghost = Keypair.random().publicKey();
    const wallet: WalletDescriptor = {
      wallet: 'ghost',
      chain: CHAIN,
      control: { kind: 'native_multisig', address: ghost, signers: [{ address: Keypair.random().publicKey(), curve: 'ed25519', weight: 1, label: 'm1' }], quorum: 1 },
    };
    const dest = await plainAccount(devnet);
    const built = driver.buildPayload({
      intent: normalizeIntent({ wallet: 'ghost', destination: dest.publicKey(), amount: '5' }),
      wallet,
      params: { kind: 'stellar', sequence: '5', base_fee_stroops: 100, max_time: clock + 30 },
    });
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'live', code: 'account_missing' });
    clock += 60;
    try {
      await devnet.fund(Keypair.random().publicKey());
      expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'dead', code: 'expired' });
    } finally {
      clock -= 60;
    }
  });
});

describe('devnet GET /ledgers/:seq/transactions (Horizon shape)', () => {
  it('lists the ledger\'s transactions, failed ones only with include_failed=true; 404 past the last ledger, 400 for a bad id', async () => {
    const issuer = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, flags: 0x3 });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'LIST', issuer.address);
    const r = await buildSignAssemble(
      driver,
      signer,
      issuer,
      { destination: holder.publicKey(), amount: '1', asset_symbol: 'LIST', asset_issuer: issuer.address, asset_decimals: 7, operation: { op: 'issue' } },
      [0, 1],
    );
    if (!r.assembled.ok) throw new Error('short');
    await driver.submit({ chain: CHAIN, blob: r.assembled.blob });
    const rec = devnet.ledger.transaction(r.built.digest)!;
    expect(rec.successful).toBe(false);
    const get = async (q: string) => {
      const res = await fetch(`${devnet.url}${q}`);
      return { status: res.status, body: (await res.json()) as { _embedded?: { records: Record<string, unknown>[] } } };
    };
    expect((await get(`/ledgers/${rec.ledger}/transactions`)).body._embedded?.records).toEqual([]);
    const all = await get(`/ledgers/${rec.ledger}/transactions?include_failed=true&order=desc&limit=5`);
    expect(all.body._embedded?.records).toMatchObject([{ hash: rec.hash, successful: false, source_account: issuer.address, source_account_sequence: rec.sequence }]);
    const after = await get(`/ledgers/${rec.ledger}/transactions?include_failed=true&cursor=${rec.pagingToken}`);
    expect(after.body._embedded?.records).toEqual([]);
    expect((await get(`/ledgers/${devnet.ledger.ledger + 1}/transactions`)).status).toBe(404);
    expect((await get('/ledgers/x/transactions')).status).toBe(400);
  });
});

describe('payloadFate refuses to guess', () => {
  it('a Horizon 5xx on any read throws TransportError (root, account, transaction)', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const built = await payment(w, '10');
    await submitAtQuorum(w, built);
    for (const target of ['/', `/accounts/${w.address}`, `/transactions/${built.digest}`]) {
      const broken = proxied((url, status, body) => (path(url) === target ? { status: 503, body: '{"type":"https://stellar.org/horizon-errors/server_error","status":503}' } : { status, body }));
      await expect(broken.payloadFate({ chain: CHAIN, built }), target).rejects.toThrow(TransportError);
      await expect(broken.payloadFate({ chain: CHAIN, built }), target).rejects.toThrow(/answered 503/);
    }
    // A 4xx other than 404 proves nothing either; nor does a body that is not JSON.
    const teapot = proxied((url, status, body) => (path(url).startsWith('/transactions/') ? { status: 429, body: '{}' } : { status, body }));
    await expect(teapot.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/answered 429/);
    const garbled = proxied((url, status, body) => (path(url).startsWith('/accounts/') ? { status: 200, body: '<html>' } : { status, body }));
    await expect(garbled.payloadFate({ chain: CHAIN, built })).rejects.toThrow(TransportError);
    // The very same payload through the honest Horizon is applied.
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'applied' });
  });

  it('odd shapes throw: no closed-ledger time, no elder ledger, no sequence, a transaction without "successful" or for another hash', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const built = await payment(w, '10');
    await submitAtQuorum(w, built);
    const edit = (target: (p: string) => boolean, change: (b: Record<string, unknown>) => void) =>
      proxied((url, status, body) => {
        if (!target(path(url))) return { status, body };
        const b = JSON.parse(body) as Record<string, unknown>;
        change(b);
        return { status, body: JSON.stringify(b) };
      });
    const cases: [string, StellarDriver, RegExp][] = [
      ['closed_at', edit((p) => p === '/', (b) => delete b['history_latest_ledger_closed_at']), /history_latest_ledger_closed_at/],
      ['elder', edit((p) => p === '/', (b) => (b['history_elder_ledger'] = 'one')), /history_elder_ledger/],
      ['sequence', edit((p) => p.startsWith('/accounts/'), (b) => (b['sequence'] = 12)), /int64 sequence/],
      ['successful', edit((p) => p.startsWith('/transactions/'), (b) => delete b['successful']), /"successful"/],
      ['hash', edit((p) => p.startsWith('/transactions/'), (b) => (b['hash'] = 'ab'.repeat(32))), /another hash/],
    ];
    // A fee bump around our transaction: Horizon answers the inner hash with the outer record.
    const bumped = edit((p) => p.startsWith('/transactions/'), (b) => {
      b['inner_transaction'] = { hash: b['hash'], signatures: [] };
      b['hash'] = 'ef'.repeat(32);
    });
    expect(await bumped.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'applied' });
    for (const [what, d, message] of cases) {
      await expect(d.payloadFate({ chain: CHAIN, built }), what).rejects.toThrow(TransportError);
      await expect(d.payloadFate({ chain: CHAIN, built }), what).rejects.toThrow(message);
    }
  });

  it('pruned history: a used sequence is dead only when the ledger that used it is still held; otherwise it throws', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const dest = await plainAccount(devnet);
    const mk = (amount: string) => driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount }), wallet: w.wallet, params });
    const first = mk('10');
    const rival = mk('11');
    await submitAtQuorum(w, first);
    const usedAt = devnet.ledger.account(w.address)!.seqLedger;
    const pruned = (elder: number) =>
      proxied((url, status, body) => {
        if (path(url) !== '/') return { status, body };
        return { status, body: JSON.stringify({ ...(JSON.parse(body) as object), history_elder_ledger: elder }) };
      });
    // The ledger that used the sequence is retained and holds the transaction that used it: proof.
    const dead = await pruned(usedAt).payloadFate({ chain: CHAIN, built: rival });
    expect(dead).toMatchObject({ fate: 'dead', code: 'sequence_consumed' });
    expect(dead.message).toContain(first.digest);
    // The same, but that ledger does not show the transaction (or answers an error): no proof.
    const hidden = (change: (status: number, body: string) => { status: number; body: string }) =>
      proxied((url, status, body) => {
        if (path(url) === '/') return { status, body: JSON.stringify({ ...(JSON.parse(body) as object), history_elder_ledger: usedAt }) };
        if (path(url).startsWith('/ledgers/')) return change(status, body);
        return { status, body };
      });
    const empty = hidden((status, body) => ({ status, body: JSON.stringify({ ...(JSON.parse(body) as object), _embedded: { records: [] } }) }));
    await expect(empty.payloadFate({ chain: CHAIN, built: rival })).rejects.toThrow(/no transaction on that sequence/);
    await expect(hidden(() => ({ status: 500, body: '{}' })).payloadFate({ chain: CHAIN, built: rival })).rejects.toThrow(/answered 500/);
    await expect(hidden((status) => ({ status, body: '{"_embedded":{}}' })).payloadFate({ chain: CHAIN, built: rival })).rejects.toThrow(/_embedded.records/);
    // A busy ledger: the transaction is on the second page.
    const filler = Array.from({ length: 200 }, (_, i) => ({ hash: 'cd'.repeat(32), source_account: w.address, source_account_sequence: '1', paging_token: String(i + 1) }));
    const busy = proxied((url, status, body) => {
      if (path(url) === '/') return { status, body: JSON.stringify({ ...(JSON.parse(body) as object), history_elder_ledger: usedAt }) };
      if (path(url).startsWith('/ledgers/') && !new URL(url).searchParams.has('cursor')) return { status: 200, body: JSON.stringify({ _embedded: { records: filler } }) };
      return { status, body }; // the second page is the devnet's own answer
    });
    expect(await busy.payloadFate({ chain: CHAIN, built: rival })).toMatchObject({ fate: 'dead', code: 'sequence_consumed' });
    const noToken = proxied((url, status, body) => {
      if (path(url) === '/') return { status, body: JSON.stringify({ ...(JSON.parse(body) as object), history_elder_ledger: usedAt }) };
      if (path(url).startsWith('/ledgers/')) return { status: 200, body: JSON.stringify({ _embedded: { records: filler.map(({ paging_token: _, ...r }) => r) } }) };
      return { status, body };
    });
    await expect(noToken.payloadFate({ chain: CHAIN, built: rival })).rejects.toThrow(/paging_token/);
    const endless = proxied((url, status, body) => {
      if (path(url) === '/') return { status, body: JSON.stringify({ ...(JSON.parse(body) as object), history_elder_ledger: usedAt }) };
      if (path(url).startsWith('/ledgers/')) return { status: 200, body: JSON.stringify({ _embedded: { records: filler } }) };
      return { status, body };
    });
    await expect(endless.payloadFate({ chain: CHAIN, built: rival })).rejects.toThrow(/not searched further/);
    // History starts after it: the 404 proves nothing.
    await expect(pruned(usedAt + 1).payloadFate({ chain: CHAIN, built: rival })).rejects.toThrow(/history starts at ledger/);
    // Once the account has moved past the sequence, the ledger that used it is unknown: throw.
    await submitAtQuorum(w, await payment(w, '12'));
    await expect(pruned(3).payloadFate({ chain: CHAIN, built: rival })).rejects.toThrow(TransportError);
    // The applied payload is found by hash whatever the history says.
    expect(await pruned(usedAt + 1).payloadFate({ chain: CHAIN, built: first })).toMatchObject({ fate: 'applied' });
  });

  it('confirm, like payloadFate, never calls a payload dead from the local clock: no closed-ledger time, no answer', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const built = await payment(w, '10', { max_time: clock - 10 });
    const blind = proxied((url, status, body) => {
      if (path(url) !== '/') return { status, body };
      const b = JSON.parse(body) as Record<string, unknown>;
      delete b['history_latest_ledger_closed_at'];
      return { status, body: JSON.stringify(b) };
    });
    await expect(blind.confirm({ chain: CHAIN, txHash: built.digest, built })).rejects.toThrow(TransportError);
    await expect(blind.payloadFate({ chain: CHAIN, built })).rejects.toThrow(TransportError);
    const down = proxied((url, status, body) => (path(url) === '/' ? { status: 502, body: '' } : { status, body }));
    await expect(down.confirm({ chain: CHAIN, txHash: built.digest, built })).rejects.toThrow(/answered 502/);
    // A hash that is not the payload's is refused rather than judged by the payload's sequence.
    await expect(driver.confirm({ chain: CHAIN, txHash: 'ab'.repeat(32), built })).rejects.toThrow(ValidationError);
    // The honest Horizon's latest ledger closed after max_time: both call it dead.
    expect(await driver.confirm({ chain: CHAIN, txHash: built.digest, built })).toMatchObject({ status: 'failed', code: 'tx_too_late', dead: true });
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'dead', code: 'expired' });
  });

  it('pruned history and a missing account: throws rather than calling a payload that might have run dead', async () => {
    const ghost = Keypair.random().publicKey();
    const wallet: WalletDescriptor = {
      wallet: 'ghost-2',
      chain: CHAIN,
      control: { kind: 'native_multisig', address: ghost, signers: [{ address: Keypair.random().publicKey(), curve: 'ed25519', weight: 1, label: 'm1' }], quorum: 1 },
    };
    const built = driver.buildPayload({
      intent: normalizeIntent({ wallet: 'ghost-2', destination: Keypair.random().publicKey(), amount: '5' }),
      wallet,
      params: { kind: 'stellar', sequence: '5', base_fee_stroops: 100, max_time: clock - 10 },
    });
    const pruned = proxied((url, status, body) => (path(url) === '/' ? { status, body: JSON.stringify({ ...(JSON.parse(body) as object), history_elder_ledger: 100 }) } : { status, body }));
    await expect(pruned.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/is gone/);
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'dead', code: 'expired' });
  });

  it('another network: a Horizon serving another passphrase is refused; a payload for another chain or passphrase is a ValidationError', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const built = await payment(w, '10');
    const other = proxied((url, status, body) =>
      path(url) === '/' ? { status, body: JSON.stringify({ ...(JSON.parse(body) as object), network_passphrase: STELLAR_NETWORKS['stellar:testnet'] }) } : { status, body },
    );
    await expect(other.payloadFate({ chain: CHAIN, built })).rejects.toThrow(RefusedError);

    const two = createStellarDriver({
      chains: {
        [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase },
        'stellar:other': { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase },
        'stellar:testnet': { horizonUrl: devnet.url, networkPassphrase: STELLAR_NETWORKS['stellar:testnet'] },
      },
    });
    await expect(two.payloadFate({ chain: 'stellar:other', built })).rejects.toThrow(/payload\.chain/);
    await expect(two.payloadFate({ chain: 'stellar:testnet', built })).rejects.toThrow(ValidationError);
    const relabelled = { ...built, payload: { ...(built.payload as object), chain: 'stellar:testnet' } };
    await expect(two.payloadFate({ chain: 'stellar:testnet', built: relabelled })).rejects.toThrow(/payload\.network_passphrase/);
    // A digest that is not the payload's hash is refused before any lookup.
    await expect(driver.payloadFate({ chain: CHAIN, built: { ...built, digest: 'ab'.repeat(32) } })).rejects.toThrow(ValidationError);
  });
});
