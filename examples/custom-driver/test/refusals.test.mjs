/**
 * Every refusal path, tested like the happy path: bad options, intents and params the driver will
 * not build, keys the signer will not use, and each transaction the toy ledger rejects (over real
 * loopback HTTP, checked by reading the ledger directly), plus payloadFate's safety rule.
 */
import { canonicalize, normalizeIntent, TransportError, ValidationError } from '@vault/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDriver, createSigner, payloadDigest } from '../src/index.mjs';
import { startToyLedger } from '../src/toy-ledger.mjs';
import { CHAIN, freshAddress, fundedWallet, ledgerPost, testKey } from './devnet.mjs';

/** @type {Awaited<ReturnType<typeof startToyLedger>>} */
let devnet;
/** @type {ReturnType<typeof createDriver>} */
let driver;
/** @type {ReturnType<typeof createSigner>} */
let signer;

beforeAll(async () => {
  devnet = await startToyLedger({ port: 0 });
  driver = createDriver({ chain: CHAIN, url: devnet.url });
  signer = createSigner({ chain: CHAIN, url: devnet.url });
});
afterAll(() => devnet.close());

/** The ValidationError `fn` throws (sync or async), or fails the test. */
async function refusal(fn) {
  const err = await (async () => fn())().then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return /** @type {ValidationError} */ (err);
}

const balance = async (address) => BigInt((await ledgerPost(devnet.url, '/account', { address })).balance);

/** A funded 2-of-3 wallet and a builder for its payloads. */
async function world(balanceAmount = '1000000') {
  const w = await fundedWallet(devnet.url, { weights: [1, 1, 1], quorum: 2, balance: balanceAmount });
  const destination = freshAddress();
  const build = async (overrides = {}, params) =>
    driver.buildPayload({
      intent: normalizeIntent({ wallet: w.wallet.wallet, destination, amount: '1000', ...overrides }),
      wallet: w.wallet,
      params: params ?? (await driver.fetchParams({ wallet: w.wallet })),
    });
  const members = w.wallet.control.signers;
  const sign = (built, indexes = [0, 1]) => Promise.all(indexes.map((i) => signer.signPayload({ built, key: w.keys[i], signerAddress: members[i].address })));
  /** Signs `built` with `indexes`, assembles, submits. */
  const submit = async (built, indexes = [0, 1]) => {
    const result = driver.assemble({ built, contributions: await sign(built, indexes), wallet: w.wallet });
    if (!result.ok) throw new Error(`short: ${JSON.stringify(result)}`);
    return { result, submitted: await driver.submit({ chain: CHAIN, blob: result.blob }) };
  };
  return { ...w, destination, build, sign, submit, members };
}

describe('options', () => {
  it.each([
    [undefined, ''],
    [{ url: 'http://127.0.0.1:1' }, 'chain'],
    [{ chain: 'xrpl:testnet', url: 'http://127.0.0.1:1' }, 'chain'],
    [{ chain: CHAIN }, 'url'],
    [{ chain: CHAIN, url: 'ftp://127.0.0.1:1' }, 'url'],
    [{ chain: CHAIN, url: 'http://user:secret@127.0.0.1:1' }, 'url'],
    [{ chain: CHAIN, url: 'http://127.0.0.1:1', timeoutMs: -1 }, 'timeoutMs'],
    [{ chain: CHAIN, url: 'http://127.0.0.1:1', rpc: 'x' }, 'rpc'],
  ])('%j is refused naming %s', async (options, path) => {
    for (const factory of [createDriver, createSigner]) expect((await refusal(() => factory(options))).path).toBe(path);
  });
});

describe('the driver refuses what it does not build', () => {
  it.each([
    [{ asset_issuer: freshAddress(), asset_symbol: 'USD' }, 'asset_issuer'],
    [{ asset_symbol: 'USD' }, 'asset_symbol'],
    [{ asset_decimals: 2 }, 'asset_decimals'],
    [{ operation: { op: 'account_flags', set: 8 } }, 'operation.op'],
    [{ amount: '0' }, 'amount'],
  ])('intent %j (%s)', async (overrides, path) => {
    const w = await world();
    expect((await refusal(() => w.build(overrides))).path).toBe(path);
  });

  it('a wallet paying itself, and a wallet on another chain', async () => {
    const w = await world();
    expect((await refusal(() => w.build({ destination: w.address }))).path).toBe('destination');
    const params = await driver.fetchParams({ wallet: w.wallet });
    const foreign = normalizeIntent({ wallet: 'another-wallet', destination: w.destination, amount: '1' });
    expect((await refusal(() => driver.buildPayload({ intent: foreign, wallet: w.wallet, params }))).path).toBe('wallet');
    const other = { ...w.wallet, chain: 'toy:other' };
    await refusal(() => driver.fetchParams({ wallet: other }));
    await refusal(() => driver.buildPayload({ intent: normalizeIntent({ wallet: other.wallet, destination: w.destination, amount: '1' }), wallet: other, params: { kind: 'custom', family: 'toy', fields: {} } }));
    expect(driver.validateAddress({ chain: 'toy:other', address: w.destination })).toMatchObject({ valid: false });
  });

  it.each([
    [{ kind: 'custom', family: 'evm', fields: { sequence: 1, fee: '10', expires_ledger: 9 } }, 'kind'],
    [{ kind: 'custom', family: 'toy', fields: { sequence: 1, fee: '10', expires_ledger: 9, gas: 1 } }, 'fields.gas'],
    [{ kind: 'custom', family: 'toy', fields: { sequence: '1', fee: '10', expires_ledger: 9 } }, 'fields.sequence'],
    [{ kind: 'custom', family: 'toy', fields: { sequence: 1, fee: 10, expires_ledger: 9 } }, 'fields.fee'],
    [{ kind: 'custom', family: 'toy', fields: { sequence: 1, fee: '10' } }, 'fields.expires_ledger'],
  ])('params %j (%s)', async (params, path) => {
    const w = await world();
    expect((await refusal(() => w.build({}, params))).path).toBe(path);
  });

  it('fetchParams of an account the ledger does not hold is NotFound', async () => {
    const w = await world();
    const ghost = { ...w.wallet, control: { ...w.wallet.control, address: freshAddress() } };
    await expect(driver.fetchParams({ wallet: ghost })).rejects.toMatchObject({ name: 'NotFoundError' });
  });
});

describe('the signer refuses', () => {
  it('keys on another curve, another chain, an address the key does not control, a payload whose digest is not its hash', async () => {
    const w = await world();
    const built = await w.build();
    expect((await refusal(() => signer.deriveAddress({ chain: CHAIN, publicKey: new Uint8Array(33), curve: 'secp256k1' }))).message).toMatch(/ed25519 only/);
    await refusal(() => signer.deriveAddress({ chain: 'toy:other', publicKey: w.keys[0].publicKey, curve: 'ed25519' }));
    await refusal(() => signer.signPayload({ built, key: w.keys[0], signerAddress: w.members[1].address }));
    await refusal(() => signer.signPayload({ built: { ...built, payload: { ...built.payload, amount: '999999' } }, key: w.keys[0], signerAddress: w.members[0].address }));
    await refusal(() => signer.signPayload({ built, key: { ...w.keys[0], curve: 'secp256k1' }, signerAddress: w.members[0].address }));
  });
});

describe('the toy ledger rejects, and nothing moves', () => {
  /** Submits a hand-made envelope (signatures as given) and expects a rejection `code`. */
  async function rejects(w, payload, signatures, code) {
    const before = await balance(w.address);
    const r = await driver.submit({ chain: CHAIN, blob: canonicalize({ payload, signatures }) });
    expect(r).toMatchObject({ status: 'rejected', code });
    expect(await balance(w.address)).toBe(before);
    expect(await balance(payload.destination ?? w.destination)).toBe(0n);
  }
  const sig = (c) => ({ signer: c.signer_address, public_key: c.public_key.hex, signature: c.signature.hex });

  it('short of quorum, a corrupted signature, a non-member, a signer twice, a key that does not control its address', async () => {
    const w = await world();
    const built = await w.build();
    const [a, b] = (await w.sign(built)).map(sig);
    await rejects(w, built.payload, [a], 'short_of_quorum');
    await rejects(w, built.payload, [a, { ...b, signature: `${b.signature.slice(0, 10)}${b.signature[10] === '0' ? '1' : '0'}${b.signature.slice(11)}` }], 'bad_signature');
    const outsider = testKey();
    const stranger = sig(await signer.signPayload({ built, key: outsider, signerAddress: signer.deriveAddress({ chain: CHAIN, publicKey: outsider.publicKey, curve: 'ed25519' }) }));
    await rejects(w, built.payload, [a, stranger], 'not_a_signer');
    await rejects(w, built.payload, [a, a], 'duplicate_signer');
    await rejects(w, built.payload, [a, { ...b, signer: a.signer }], 'bad_signer');
    await rejects(w, built.payload, [], 'malformed');
  });

  it('transactions it does not model: another type, another chain, an unknown field, another format', async () => {
    const w = await world();
    const built = await w.build();
    for (const [payload, code] of [
      [{ ...built.payload, type: 'issue' }, 'unsupported'],
      [{ ...built.payload, chain: 'toy:other' }, 'wrong_chain'],
      [{ ...built.payload, flags: 1 }, 'malformed'],
      [{ ...built.payload, format: 'toy-tx-v2' }, 'unsupported'],
    ]) {
      // Properly signed by a quorum: the ledger refuses the transaction itself, not the signatures.
      const signed = { payload, digest: payloadDigest(payload), summary: '' };
      const sigs = await Promise.all([0, 1].map((i) => w.keys[i].sign(Buffer.from(signed.digest, 'hex'))));
      await rejects(w, payload, sigs.map((s, i) => ({ signer: w.members[i].address, public_key: Buffer.from(w.keys[i].publicKey).toString('hex'), signature: Buffer.from(s).toString('hex') })), code);
    }
    expect(await driver.submit({ chain: CHAIN, blob: '{"not":"a transaction"}' })).toMatchObject({ status: 'rejected', code: 'malformed' });
    await refusal(() => driver.submit({ chain: CHAIN, blob: 'not json' }));
  });

  it('a sequence ahead of the account, a fee below the base fee, more than the balance', async () => {
    const w = await world('5000');
    const params = await driver.fetchParams({ wallet: w.wallet });
    const ahead = await w.build({}, { ...params, fields: { ...params.fields, sequence: params.fields.sequence + 1 } });
    expect((await w.submit(ahead)).submitted).toMatchObject({ status: 'rejected', code: 'sequence_ahead', retriable: true });
    const cheap = await w.build({}, { ...params, fields: { ...params.fields, fee: '1' } });
    expect((await w.submit(cheap)).submitted).toMatchObject({ status: 'rejected', code: 'fee_too_low' });
    const rich = await w.build({ amount: '4991' });
    expect((await w.submit(rich)).submitted).toMatchObject({ status: 'rejected', code: 'insufficient_funds' });
    expect(await balance(w.address)).toBe(5000n);
    expect(await w.submit(await w.build({ amount: '4990' }))).toMatchObject({ submitted: { status: 'submitted' } });
    expect(await balance(w.address)).toBe(0n);
  });

  it('a replay, even re-encoded, is already_applied and moves nothing twice', async () => {
    const w = await world();
    const built = await w.build();
    const { result, submitted } = await w.submit(built);
    expect(submitted).toMatchObject({ status: 'submitted', txHash: result.txHash });
    expect(await driver.submit({ chain: CHAIN, blob: result.blob })).toMatchObject({ status: 'rejected', code: 'already_applied' });
    const reencoded = JSON.stringify(JSON.parse(result.blob), null, 2);
    expect(await driver.submit({ chain: CHAIN, blob: reencoded })).toMatchObject({ status: 'rejected', code: 'already_applied', txHash: result.txHash });
    expect(await balance(w.destination)).toBe(1000n);
  });
});

describe('payloadFate and confirm: by account + sequence, applied is never dead', () => {
  it('a payload past its expiry ledger is dead (expired) and the ledger refuses it', async () => {
    const w = await world();
    const built = await w.build();
    const signatures = await w.sign(built);
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'live', code: 'pending' });
    while (devnet.ledger.ledgerIndex < built.payload.expires_ledger) await ledgerPost(devnet.url, '/close', {});
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'dead', code: 'expired' });
    const result = driver.assemble({ built, contributions: signatures, wallet: w.wallet });
    expect(await driver.confirm({ chain: CHAIN, txHash: result.txHash, built })).toMatchObject({ status: 'failed', code: 'expired', dead: true });
    expect(await driver.submit({ chain: CHAIN, blob: result.blob })).toMatchObject({ status: 'rejected', code: 'expired' });
    expect(await balance(w.destination)).toBe(0n);
  });

  it('the same payload landed under other co-signers: applied, and confirm reports the hash that landed', async () => {
    const w = await world();
    const built = await w.build();
    const first = driver.assemble({ built, contributions: await w.sign(built, [0, 1]), wallet: w.wallet });
    const second = driver.assemble({ built, contributions: await w.sign(built, [1, 2]), wallet: w.wallet });
    expect(first.txHash).not.toBe(second.txHash);
    expect(await driver.submit({ chain: CHAIN, blob: second.blob })).toMatchObject({ status: 'submitted' });
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'applied' });
    expect(await driver.confirm({ chain: CHAIN, txHash: first.txHash, built })).toMatchObject({ status: 'confirmed', txHash: second.txHash });
    expect(await driver.submit({ chain: CHAIN, blob: first.blob })).toMatchObject({ status: 'rejected', code: 'sequence_consumed' });
    // A hash that is not this payload's is a fault to report, not a confirmation.
    await expect(driver.confirm({ chain: CHAIN, txHash: second.txHash, built: await w.build({ amount: '5' }) })).rejects.toBeInstanceOf(TransportError);
    expect(await balance(w.destination)).toBe(1000n);
  });

  it('a ledger that cannot tell (sequence used, no record) or cannot be reached: a TransportError, never a guess', async () => {
    const w = await world();
    const built = await w.build();
    await w.submit(built);
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'applied' });
    // Corrupt the ledger's index: the sequence is used but no transaction is found for it.
    devnet.ledger.bySequence.delete(`${w.address}/${built.payload.sequence}`);
    await expect(driver.payloadFate({ chain: CHAIN, built })).rejects.toBeInstanceOf(TransportError);
    const unreachable = createDriver({ chain: CHAIN, url: 'http://127.0.0.1:9', timeoutMs: 2000 });
    await expect(unreachable.payloadFate({ chain: CHAIN, built })).rejects.toBeInstanceOf(TransportError);
    await expect(unreachable.confirm({ chain: CHAIN, txHash: '0'.repeat(64), built })).rejects.toBeInstanceOf(TransportError);
    await expect(unreachable.fetchParams({ wallet: w.wallet })).rejects.toBeInstanceOf(TransportError);
    await refusal(() => driver.payloadFate({ chain: CHAIN, built: { ...built, digest: '0'.repeat(64) } }));
  });
});
