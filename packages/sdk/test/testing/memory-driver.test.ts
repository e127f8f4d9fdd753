import { beforeEach, describe, expect, it } from 'vitest';
import { normalizeIntent } from '../../src/digest.js';
import { defineChainDriver } from '../../src/driver/define.js';
import { assembleContributions, ContributionMemo } from '../../src/driver/tally.js';
import { verifyEd25519 } from '../../src/ed25519.js';
import { fromHex } from '../../src/encoding.js';
import type { AssembleResult, BuiltPayload, ChainDriver, SigningKey } from '../../src/driver/types.js';
import { SignerRefusedError, TransportError, ValidationError } from '../../src/errors.js';
import type { Contribution } from '../../src/schemas/sign.js';
import type { WalletDescriptor } from '../../src/schemas/wallet.js';
import {
  MEMORY_EXPIRY_LEDGERS,
  MemoryLedger,
  conformanceChecks,
  operationCase,
  createMemoryDriver,
  createMemorySigner,
  createSoftwareKey,
  decodeMemoryBlob,
  encodeMemoryBlob,
  memoryAddress,
  memoryDigest,
  memoryWallet,
  txHashOfBlob,
  type ConformanceOptions,
  type MemoryPayload,
} from '../../src/testing/index.js';
import { memoryFixture } from './fixture.js';

let ledger: MemoryLedger;
let driver: ReturnType<typeof createMemoryDriver>;
const signer = createMemorySigner();

beforeEach(() => {
  ledger = new MemoryLedger();
  driver = createMemoryDriver({ ledger });
});

const DEST = memoryAddress(createSoftwareKey(new Uint8Array(32).fill(7)).publicKey);

async function signAll(built: BuiltPayload, wallet: WalletDescriptor, keys: SigningKey[], count = keys.length): Promise<Contribution[]> {
  if (wallet.control.kind !== 'native_multisig') throw new Error('native only');
  const signers = wallet.control.signers;
  return Promise.all(keys.slice(0, count).map((k, i) => signer.signPayload({ built, key: k, signerAddress: signers[i]?.address ?? '' })));
}

/** A 2-of-3 wallet, a built transfer of `amount` and a blob signed at quorum. */
async function ready(amount = '5000', extra: { balance?: bigint } = {}) {
  const w = memoryWallet({ ledger, members: 3, quorum: 2, ...extra });
  const params = await driver.fetchParams({ wallet: w.wallet });
  const built = driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: DEST, amount }), wallet: w.wallet, params });
  const result = driver.assemble({ built, contributions: await signAll(built, w.wallet, w.keys, 2), wallet: w.wallet });
  if (!result.ok) throw new Error('not at quorum');
  return { ...w, params, built, result: result as Extract<AssembleResult, { ok: true }> };
}

function reencode(blob: string, change: (env: { payload: MemoryPayload; signatures: { address: string; public_key: string; signature: string }[] }) => void): string {
  const { envelope } = decodeMemoryBlob(blob);
  const copy = structuredClone(envelope);
  change(copy);
  return encodeMemoryBlob(copy);
}

describe('memory ledger faults (each observable through the driver)', () => {
  it('fetchParamsError makes fetchParams throw a TransportError, then clears', async () => {
    const { wallet } = memoryWallet({ ledger });
    ledger.faults.fetchParamsError = true;
    await expect(driver.fetchParams({ wallet })).rejects.toBeInstanceOf(TransportError);
    ledger.faults.fetchParamsError = new Error('ECONNREFUSED');
    const err = await driver.fetchParams({ wallet }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).cause).toMatchObject({ message: 'ECONNREFUSED' });
    ledger.resetFaults();
    await expect(driver.fetchParams({ wallet })).resolves.toMatchObject({ kind: 'xrpl', sequence: 1, network_id: null });
  });

  it('submitError throws before the ledger sees the blob', async () => {
    const { result } = await ready();
    ledger.faults.submitError = true;
    await expect(driver.submit({ chain: ledger.chain, blob: result.blob })).rejects.toBeInstanceOf(TransportError);
    expect(ledger.tx(result.txHash)).toBeNull();
    expect(ledger.balance(DEST)).toBe(0n);
  });

  it('submitReject answers with the injected code and applies nothing', async () => {
    const { result } = await ready();
    ledger.faults.submitReject = { code: 'overloaded', retriable: true };
    await expect(driver.submit({ chain: ledger.chain, blob: result.blob })).resolves.toMatchObject({
      status: 'rejected',
      code: 'overloaded',
      retriable: true,
      txHash: result.txHash,
    });
    expect(ledger.tx(result.txHash)).toBeNull();
  });

  it('confirmPending keeps N polls pending, then confirm sees the applied tx', async () => {
    const { built, result } = await ready();
    await driver.submit({ chain: ledger.chain, blob: result.blob });
    ledger.faults.confirmPending = 2;
    await expect(driver.confirm({ chain: ledger.chain, txHash: result.txHash, built })).resolves.toEqual({ status: 'pending', txHash: result.txHash });
    await expect(driver.confirm({ chain: ledger.chain, txHash: result.txHash, built })).resolves.toEqual({ status: 'pending', txHash: result.txHash });
    await expect(driver.confirm({ chain: ledger.chain, txHash: result.txHash, built })).resolves.toMatchObject({ status: 'confirmed', code: 'ok' });
  });

  it('dropSubmit: accepted, never applied, pending until expiry, then failed and dead', async () => {
    const { built, result, address } = await ready();
    const before = ledger.balance(address);
    ledger.faults.dropSubmit = true;
    await expect(driver.submit({ chain: ledger.chain, blob: result.blob })).resolves.toMatchObject({ status: 'submitted', txHash: result.txHash });
    await expect(driver.confirm({ chain: ledger.chain, txHash: result.txHash, built })).resolves.toMatchObject({ status: 'pending' });
    ledger.close(MEMORY_EXPIRY_LEDGERS + 1);
    await expect(driver.confirm({ chain: ledger.chain, txHash: result.txHash, built })).resolves.toMatchObject({ status: 'failed', code: 'expired', dead: true });
    expect(ledger.tx(result.txHash)).toBeNull();
    expect(ledger.balance(address)).toBe(before);
    expect(ledger.balance(DEST)).toBe(0n);
  });

  it('payloadFate: live, then applied; a rival at the same sequence is dead; expiry is dead; historyError throws', async () => {
    const { wallet, built, result, params } = await ready('10');
    const rival = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: DEST, amount: '11' }), wallet, params });
    await expect(driver.payloadFate({ chain: ledger.chain, built })).resolves.toMatchObject({ fate: 'live', code: 'pending' });
    await driver.submit({ chain: ledger.chain, blob: result.blob });
    await expect(driver.payloadFate({ chain: ledger.chain, built })).resolves.toMatchObject({ fate: 'applied' });
    await expect(driver.payloadFate({ chain: ledger.chain, built: rival })).resolves.toMatchObject({ fate: 'dead', code: 'sequence_consumed' });
    const later = await driver.fetchParams({ wallet });
    const next = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: DEST, amount: '12' }), wallet, params: later });
    ledger.close(MEMORY_EXPIRY_LEDGERS + 1);
    await expect(driver.payloadFate({ chain: ledger.chain, built: next })).resolves.toMatchObject({ fate: 'dead', code: 'expired' });
    ledger.faults.historyError = true;
    await expect(driver.payloadFate({ chain: ledger.chain, built: next })).rejects.toBeInstanceOf(TransportError);
  });

  it('latencyMs delays every rpc call', async () => {
    const { wallet } = memoryWallet({ ledger });
    ledger.faults.latencyMs = 40;
    const t0 = performance.now();
    await driver.balances({ wallet });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
  });
});

describe('the memory ledger verifies what it applies', () => {
  it('applies a quorum-signed transfer: amount to the destination, amount + fee from the wallet, sequence + 1', async () => {
    const { result, address, params } = await ready('5000');
    const before = ledger.balance(address);
    await expect(driver.submit({ chain: ledger.chain, blob: result.blob })).resolves.toMatchObject({ status: 'submitted', code: 'ok' });
    expect(ledger.balance(DEST)).toBe(5000n);
    expect(ledger.balance(address)).toBe(before - 5000n - BigInt(params.kind === 'xrpl' ? params.base_fee_drops : 0));
    expect(ledger.account(address)?.sequence).toBe(2);
    expect(ledger.tx(result.txHash)).toMatchObject({ applied: true, code: 'ok' });
  });

  it('rejects a tampered blob (amount changed after signing) as bad_signature', async () => {
    const { result } = await ready('5000');
    const tampered = reencode(result.blob, (e) => {
      e.payload.amount = '5000000';
    });
    await expect(driver.submit({ chain: ledger.chain, blob: tampered })).resolves.toMatchObject({ status: 'rejected', code: 'bad_signature', retriable: false });
    expect(ledger.balance(DEST)).toBe(0n);
  });

  it('rejects a blob that is not base64url JSON as malformed', async () => {
    await expect(driver.submit({ chain: ledger.chain, blob: 'not a blob!' })).resolves.toMatchObject({ status: 'rejected', code: 'malformed' });
  });

  it('rejects under-quorum, duplicate signers, non-members and a key that does not match its address', async () => {
    const { result, keys, built } = await ready();
    const under = reencode(result.blob, (e) => void e.signatures.pop());
    await expect(driver.submit({ chain: ledger.chain, blob: under })).resolves.toMatchObject({ code: 'under_quorum' });
    const dup = reencode(result.blob, (e) => {
      e.signatures = [e.signatures[0]!, e.signatures[0]!];
    });
    await expect(driver.submit({ chain: ledger.chain, blob: dup })).resolves.toMatchObject({ code: 'duplicate_signer' });
    const outsider = createSoftwareKey();
    const stranger = await signer.signPayload({ built, key: outsider, signerAddress: memoryAddress(outsider.publicKey) });
    const foreign = reencode(result.blob, (e) => {
      e.signatures.push({ address: stranger.signer_address, public_key: stranger.public_key.hex, signature: stranger.signature.hex });
    });
    await expect(driver.submit({ chain: ledger.chain, blob: foreign })).resolves.toMatchObject({ code: 'not_a_signer' });
    const swapped = reencode(result.blob, (e) => {
      e.signatures[0]!.public_key = Buffer.from(keys[2]!.publicKey).toString('hex');
    });
    await expect(driver.submit({ chain: ledger.chain, blob: swapped })).resolves.toMatchObject({ code: 'key_mismatch' });
    expect(ledger.balance(DEST)).toBe(0n);
  });

  it('rejects a replay of an applied blob as already_applied, moving funds once', async () => {
    const { result } = await ready('700');
    await driver.submit({ chain: ledger.chain, blob: result.blob });
    await expect(driver.submit({ chain: ledger.chain, blob: result.blob })).resolves.toMatchObject({ status: 'rejected', code: 'already_applied' });
    expect(ledger.balance(DEST)).toBe(700n);
  });

  it('rejects a stale sequence (past) and a future one (retriable); confirm calls the stale tx dead', async () => {
    const w = memoryWallet({ ledger, members: 2, quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const build = (amount: string, p = params) =>
      driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: DEST, amount }), wallet: w.wallet, params: p });
    const first = build('1');
    const second = build('2'); // same sequence: only one of them can land
    const a = driver.assemble({ built: first, contributions: await signAll(first, w.wallet, w.keys), wallet: w.wallet });
    const b = driver.assemble({ built: second, contributions: await signAll(second, w.wallet, w.keys), wallet: w.wallet });
    if (!a.ok || !b.ok) throw new Error('quorum');
    await driver.submit({ chain: ledger.chain, blob: a.blob });
    await expect(driver.submit({ chain: ledger.chain, blob: b.blob })).resolves.toMatchObject({ code: 'past_sequence', retriable: false });
    await expect(driver.confirm({ chain: ledger.chain, txHash: b.txHash, built: second })).resolves.toMatchObject({ status: 'failed', code: 'sequence_consumed', dead: true });
    if (params.kind !== 'xrpl') throw new Error('kind');
    const ahead = build('3', { ...params, sequence: params.sequence + 5, last_ledger_sequence: ledger.index + 10 });
    const c = driver.assemble({ built: ahead, contributions: await signAll(ahead, w.wallet, w.keys), wallet: w.wallet });
    if (!c.ok) throw new Error('quorum');
    await expect(driver.submit({ chain: ledger.chain, blob: c.blob })).resolves.toMatchObject({ code: 'future_sequence', retriable: true });
  });

  it('rejects a payload past its last_ledger as expired', async () => {
    const { result, built } = await ready();
    ledger.close(MEMORY_EXPIRY_LEDGERS + 1);
    await expect(driver.submit({ chain: ledger.chain, blob: result.blob })).resolves.toMatchObject({ status: 'rejected', code: 'expired' });
    await expect(driver.confirm({ chain: ledger.chain, txHash: result.txHash, built })).resolves.toMatchObject({ status: 'failed', dead: true });
  });

  it('rejects a transfer larger than the balance as insufficient_balance', async () => {
    const { result } = await ready('1000', { balance: 500n });
    await expect(driver.submit({ chain: ledger.chain, blob: result.blob })).resolves.toMatchObject({ status: 'rejected', code: 'insufficient_balance' });
  });

  it('refuses account_flags even when properly signed (the ledger implements transfer only)', async () => {
    const { built: transfer, wallet, keys } = await ready();
    const payload = { ...(transfer.payload as MemoryPayload), op: 'account_flags' };
    const built = { payload, digest: memoryDigest(payload), summary: 'flags' };
    const result = driver.assemble({ built, contributions: await signAll(built, wallet, keys, 2), wallet });
    if (!result.ok) throw new Error('quorum');
    await expect(driver.submit({ chain: ledger.chain, blob: result.blob })).resolves.toMatchObject({ status: 'rejected', code: 'unsupported_op' });
  });

  it('the tx hash is over the canonical content, not the encoding', async () => {
    const { result } = await ready();
    const reordered = Buffer.from(JSON.stringify(JSON.parse(Buffer.from(result.blob, 'base64url').toString()), null, 2)).toString('base64url');
    expect(txHashOfBlob(reordered)).toBe(result.txHash);
  });
});

describe('memory driver and signer', () => {
  it('buildPayload refuses other operations with a ValidationError naming operation.op', async () => {
    const { wallet } = memoryWallet({ ledger });
    const params = await driver.fetchParams({ wallet });
    const intent = normalizeIntent({ wallet: wallet.wallet, destination: DEST, amount: '1', operation: { op: 'account_flags', set: 8 } });
    const err = (() => {
      try {
        driver.buildPayload({ intent, wallet, params });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).path).toBe('operation.op');
  });

  it('buildPayload refuses a non-native asset, a bad destination and a self-transfer', async () => {
    const { wallet, address } = memoryWallet({ ledger });
    const params = await driver.fetchParams({ wallet });
    const build = (req: Record<string, unknown>) => () =>
      driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: DEST, amount: '1', ...req }), wallet, params });
    expect(build({ asset_symbol: 'USD' })).toThrow(/asset_symbol/);
    expect(build({ destination: 'mem1xyz' })).toThrow(/destination/);
    expect(build({ destination: address })).toThrow(/itself/);
    expect(build({ amount: '0' })).toThrow(/amount/);
  });

  it('the summary names amount, parties, fee, sequence and expiry', async () => {
    const { built } = await ready('1500000');
    expect(built.summary).toMatch(/^Transfer 1\.5 MEM mem1.+ -> mem1.+, fee 10, seq 1, valid through ledger \d+$/);
  });

  it('signPayload refuses a digest that is not the payload hash, and a key that does not control the address', async () => {
    const { built, keys, wallet } = await ready();
    if (wallet.control.kind !== 'native_multisig') throw new Error('kind');
    const member = wallet.control.signers[0]!.address;
    const lie = { ...built, digest: 'ab'.repeat(32) };
    await expect(signer.signPayload({ built: lie, key: keys[0]!, signerAddress: member })).rejects.toMatchObject({ reason: 'digest_mismatch' });
    await expect(signer.signPayload({ built, key: keys[1]!, signerAddress: member })).rejects.toBeInstanceOf(SignerRefusedError);
  });

  it('serves exactly its chains', async () => {
    const testnet = new MemoryLedger({ chain: 'memory:testnet' });
    const both = createMemoryDriver({ ledger: [ledger, testnet] });
    expect(both.chains).toEqual(['memory:devnet', 'memory:testnet']);
    const { result } = await ready();
    await expect(driver.submit({ chain: 'memory:testnet', blob: result.blob })).rejects.toMatchObject({ reason: 'unknown_chain' });
    expect(driver.validateAddress({ chain: 'memory:testnet', address: DEST })).toMatchObject({ valid: false });
    expect(() => createMemoryDriver({ ledger, chains: ['memory:mainnet'] })).toThrow(/no ledger/);
  });

  it('createSoftwareKey from a secret is reproducible and does not expose mutable key bytes', async () => {
    const secret = new Uint8Array(32).fill(1);
    const a = createSoftwareKey(secret);
    const b = createSoftwareKey(secret);
    expect(a.publicKey).toEqual(b.publicKey);
    a.publicKey.fill(0);
    expect(a.publicKey).toEqual(b.publicKey);
    expect(await a.sign(new Uint8Array([1, 2]))).toEqual(await b.sign(new Uint8Array([1, 2])));
    expect(() => createSoftwareKey(new Uint8Array(31))).toThrow(ValidationError);
  });
});

describe('the conformance suite catches broken drivers', () => {
  const options = (broken: ChainDriver): ConformanceOptions => ({
    name: 'broken',
    driver: broken,
    signer,
    setup: async () => memoryFixture(ledger),
    confirmAttempts: 2,
    confirmIntervalMs: 1,
  });
  const check = (broken: ChainDriver, prefix: string) => {
    const found = conformanceChecks(options(broken)).find((c) => c.name.startsWith(prefix));
    if (!found) throw new Error(`no check ${prefix}`);
    return found.run();
  };

  it('operation cases: a driver listing an operation without a case fails the coverage check', async () => {
    const claimsMore = { ...driver, operations: ['transfer', 'issue'] as const } as unknown as ChainDriver;
    const cases = [{ name: 'transfer', intent: (f: { destination: string }) => ({ destination: f.destination, amount: '5' }), verify: async () => undefined }];
    const coverage = conformanceChecks({ ...options(claimsMore), operations: cases }).find((c) => c.name.startsWith('every operation'));
    await expect(coverage?.run()).rejects.toThrow(/operations without a case/);
  });

  it('operation cases: a verify that sees no effect fails, and a passing case passes', async () => {
    const failing = conformanceChecks({
      ...options(driver),
      operations: [{ name: 'transfer', intent: (f) => ({ destination: f.destination, amount: '5' }), verify: async (f) => expect(await f.ledger.balance(f.destination)).toBe(6n) }],
    }).find((c) => c.name.startsWith('operation transfer'));
    await expect(failing?.run()).rejects.toThrow();
    const passing = conformanceChecks({
      ...options(driver),
      operations: [{ name: 'transfer', intent: (f) => ({ destination: f.destination, amount: '5' }), verify: async (f) => expect(await f.ledger.balance(f.destination)).toBe(5n) }],
    }).filter((c) => c.group === 'operations');
    for (const c of passing) await c.run();
  });

  it('operationCase hands each setup its own context', async () => {
    const cases = [
      operationCase(
        'transfer with context',
        async () => ({ fixture: await memoryFixture(ledger), ctx: { amount: 9n } }),
        (f, ctx) => ({ destination: f.destination, amount: ctx.amount.toString() }),
        async (f, ctx) => expect(await f.ledger.balance(f.destination)).toBe(ctx.amount),
      ),
    ];
    for (const c of conformanceChecks({ ...options(driver), operations: cases }).filter((c) => c.group === 'operations')) await c.run();
    expect(() => cases[0]?.intent({ wallet: { wallet: 'never-set-up' } } as never)).toThrow(/no context/);
  });

  it('every check passes for the real memory driver when run as plain functions', async () => {
    for (const c of conformanceChecks(options(driver))) await c.run();
  });

  it('a driver that reports confirmed without the ledger applying fails the independent read', async () => {
    const liar = defineChainDriver({
      ...driver,
      submit: async ({ chain: _chain, blob }) => ({ status: 'submitted' as const, txHash: txHashOfBlob(blob), code: 'ok' }),
      confirm: async ({ chain: _chain, txHash }) => ({ status: 'confirmed' as const, txHash, code: 'ok' }),
    });
    await expect(check(liar, 'submit + confirm')).rejects.toThrow(/independent reader: destination balance/);
  });

  it('a fee that understates what the ledger takes fails the independent read (a cap on it would not hold)', async () => {
    const understating = defineChainDriver({ ...driver, fee: () => ({ amount: 0n, unit: 'minor units of MEM' }) });
    await expect(check(understating, 'the ledger takes no more than fee(built)')).rejects.toThrow(/independent reader: the wallet paid 10 in fees/);
  });

  it('a driver without fee fails the fee check; a default cap below its own payloads fails too', async () => {
    const { fee: _fee, defaultMaxFee: _cap, ...mute } = driver;
    await expect(check(defineChainDriver(mute), 'fee states')).rejects.toThrow(/cannot state its fee/);
    await expect(check(defineChainDriver({ ...driver, defaultMaxFee: 9n }), 'fee states')).rejects.toThrow(/above its defaultMaxFee 9/);
  });

  it('a non-deterministic buildPayload fails the determinism check', async () => {
    let n = 0;
    const noisy = defineChainDriver({
      ...driver,
      buildPayload: (input) => {
        const built = driver.buildPayload(input);
        const payload = { ...(built.payload as MemoryPayload), memo: `nonce ${n++}` };
        return { ...built, payload, digest: memoryDigest(payload) };
      },
    });
    await expect(check(noisy, 'buildPayload is deterministic')).rejects.toThrow(/same input/);
  });

  it('an assemble that counts a repeated contribution twice fails', async () => {
    const doubleCounter = defineChainDriver({
      ...driver,
      assemble: ({ built, contributions, wallet }) => {
        const r = driver.assemble({ built, contributions, wallet });
        if (r.ok || wallet.control.kind !== 'native_multisig') return r;
        const weights = new Map(wallet.control.signers.map((s) => [s.address, s.weight]));
        return { ...r, weight: contributions.reduce((s, c) => s + (weights.get(c.signer_address) ?? 0), 0), invalid: [] };
      },
    });
    await expect(check(doubleCounter, 'a repeated contribution counts once')).rejects.toThrow(/counts once/);
  });

  it('an assemble that carries a memo over to another payload fails the memo check', async () => {
    // Keys what it remembers on the memo alone: the signatures checked for the first payload count for any.
    const firstSeen = new WeakMap<ContributionMemo, BuiltPayload>();
    const sloppy = defineChainDriver({
      ...driver,
      assemble: ({ built, contributions, wallet, memo }) => {
        if (!memo) return driver.assemble({ built, contributions, wallet });
        if (!firstSeen.has(memo)) firstSeen.set(memo, built);
        return driver.assemble({ built: firstSeen.get(memo) as BuiltPayload, contributions, wallet });
      },
    });
    await expect(check(sloppy, 'a memo gives what verifying afresh gives')).rejects.toThrow(/must not count through the memo/);
  });

  it('an assemble that ignores a repeated contribution instead of listing it duplicate fails', async () => {
    // The XRPL driver's old tally: a repeat of a counted member was dropped silently.
    const silent = defineChainDriver({
      ...driver,
      assemble: ({ built, contributions, wallet }) => {
        const r = driver.assemble({ built, contributions, wallet });
        return r.ok ? r : { ...r, invalid: r.invalid.filter((x) => x.reason !== 'duplicate') };
      },
    });
    await expect(check(silent, 'a repeated contribution counts once')).rejects.toThrow(/invalid lists each uncounted contribution/);
  });

  it('an assemble that throws on a null contribution fails the malformed check', async () => {
    // The example driver's old tally: `c.signer_address` on null is a TypeError.
    const brittle = defineChainDriver({
      ...driver,
      assemble: ({ built, contributions, wallet }) => {
        for (const c of contributions) if (typeof c.signer_address !== 'string') throw new TypeError('bad contribution');
        return driver.assemble({ built, contributions, wallet });
      },
    });
    await expect(check(brittle, 'malformed contributions')).rejects.toThrow(/not a throw/);
  });

  it('an assemble that strips unknown members and counts the rest fails the malformed check', async () => {
    const lenient = defineChainDriver({
      ...driver,
      assemble: ({ built, contributions, wallet }) => {
        const trimmed = contributions.map((c) =>
          c !== null && typeof c === 'object' && !Array.isArray(c) ? { signer_address: c.signer_address, public_key: c.public_key, signature: c.signature } : c,
        );
        return driver.assemble({ built, contributions: trimmed, wallet });
      },
    });
    await expect(check(lenient, 'malformed contributions')).rejects.toThrow(/no malformed variant may count/);
  });

  it('an assemble that reports free-text reasons instead of the published set fails', async () => {
    const prose = defineChainDriver({
      ...driver,
      assemble: ({ built, contributions, wallet }) => {
        const r = driver.assemble({ built, contributions, wallet });
        return r.ok ? r : { ...r, invalid: r.invalid.map((x) => ({ ...x, reason: x.detail as 'bad_signature' })) };
      },
    });
    await expect(check(prose, 'a contribution with a corrupted signature')).rejects.toThrow(/invalid lists each/);
    await expect(check(prose, "a member's signature relabelled")).rejects.toThrow(/invalid lists each/);
  });

  it('attack: an assemble that checks the signature but not whose key it is counts a relabelled signature, and fails', async () => {
    const careless = defineChainDriver({
      ...driver,
      assemble: ({ built, contributions, wallet }) =>
        assembleContributions({
          contributions,
          wallet,
          // Verifies under the key the contribution carries; never asks whether it is the member's.
          verify: (c) =>
            verifyEd25519(fromHex(c.signature.hex, 'signature', 64), fromHex(built.digest, 'digest', 32), fromHex(c.public_key.hex, 'key', 32))
              ? null
              : { reason: 'bad_signature', detail: 'signature does not verify' },
          encode: () => ({ blob: 'unused', txHash: 'unused' }),
        }),
    });
    await expect(check(careless, "a member's signature relabelled")).rejects.toThrow(/must not count for the tipping member/);
  });

  it('an assemble that counts a corrupted signature fails', async () => {
    // Checks membership but forgets to verify signatures.
    const trusting = defineChainDriver({
      ...driver,
      assemble: ({ built, contributions, wallet }) => {
        if (wallet.control.kind !== 'native_multisig') throw new Error('kind');
        const { signers, quorum } = wallet.control;
        const members = signers.filter((s) => contributions.some((c) => c.signer_address === s.address));
        const weight = members.reduce((sum, m) => sum + m.weight, 0);
        if (weight < quorum) return driver.assemble({ built, contributions, wallet });
        const envelope = {
          payload: built.payload as MemoryPayload,
          signatures: contributions.map((c) => ({ address: c.signer_address, public_key: c.public_key.hex, signature: c.signature.hex })),
        };
        return { ok: true as const, blob: encodeMemoryBlob(envelope), txHash: txHashOfBlob(encodeMemoryBlob(envelope)), weight, quorum };
      },
    });
    await expect(check(trusting, 'a contribution with a corrupted signature')).rejects.toThrow(/must not count/);
  });

  it('a payloadFate that calls an applied payload dead fails (a signer would sign a second payment)', async () => {
    const probe = driver.payloadFate.bind(driver);
    const careless = defineChainDriver({
      ...driver,
      // Looks the payload up by its digest as if it were the transaction hash: never finds it.
      payloadFate: async ({ chain, built }) => {
        const r = await probe({ chain, built });
        return r.fate === 'applied' ? { fate: 'dead' as const, code: 'sequence_consumed' } : r;
      },
    });
    await expect(check(careless, 'payloadFate: a signed, unsubmitted')).rejects.toThrow(/applied, never dead/);
    await expect(check(careless, 'payloadFate: a payload whose sequence')).rejects.toThrow(/the payload that landed/);
  });

  it('a payloadFate that never says dead fails the rival check', async () => {
    const probe = driver.payloadFate.bind(driver);
    const timid = defineChainDriver({
      ...driver,
      payloadFate: async ({ chain, built }) => {
        const r = await probe({ chain, built });
        return r.fate === 'dead' ? { fate: 'live' as const, code: 'pending' } : r;
      },
    });
    await expect(check(timid, 'payloadFate: a payload whose sequence')).rejects.toThrow(/can never land/);
  });

  it('attack: a driver without payloadFate (a signer could sign a second payment for one intent) fails the suite, and defineChainDriver refuses it', async () => {
    const { payloadFate: _omit, ...rest } = driver;
    const without = rest as unknown as ChainDriver;
    expect(() => defineChainDriver(without)).toThrow(/payloadFate must be a function/);
    await expect(check(without, 'driver and signer have every required method')).rejects.toThrow(/driver\.payloadFate/);
    // The fate group is not skipped for it: it runs, and fails.
    const fate = conformanceChecks(options(without)).filter((c) => c.group === 'fate');
    expect(fate.length).toBe(2);
    expect(fate.every((c) => c.enabled)).toBe(true);
    for (const c of fate) await expect(c.run()).rejects.toThrow(/has no payloadFate: it is required/);
    // The same driver with it passes the method check.
    await expect(check(driver, 'driver and signer have every required method')).resolves.toBeUndefined();
  });

  it('balances that disagree with the ledger fail the independent read', async () => {
    const inflated = defineChainDriver({
      ...driver,
      balances: async ({ wallet }) => (await driver.balances({ wallet })).map((b) => ({ ...b, amount: (BigInt(b.amount) + 1n).toString() })),
    });
    await expect(check(inflated, 'balances agree')).rejects.toThrow(/independent read/);
  });

  it('a controlState that misreports the quorum fails', async () => {
    const wrong = defineChainDriver({
      ...driver,
      controlState: async ({ wallet }) => ({ ...(await driver.controlState({ wallet })), quorum: 1 }),
    });
    await expect(check(wrong, 'controlState agrees')).rejects.toThrow(/quorum/);
  });

  it('a driver that accepts any string as an address fails', async () => {
    const lax = defineChainDriver({ ...driver, validateAddress: ({ address }) => ({ valid: true as const, normalized: address, network: null }) });
    await expect(check(lax, 'validateAddress rejects')).rejects.toThrow(/must be invalid/);
  });

  it('a driver that crashes on unsupported operations (not a VaultError) fails', async () => {
    const crashy = defineChainDriver({
      ...driver,
      buildPayload: (input) => {
        if (input.intent.operation.op !== 'transfer') throw new TypeError('cannot read properties of undefined');
        return driver.buildPayload(input);
      },
    });
    await expect(check(crashy, 'unsupported operations')).rejects.toThrow(/VaultError/);
  });

  it('capabilities skip groups', () => {
    const checks = conformanceChecks({ ...options(driver), capabilities: { submit: false } });
    expect(checks.filter((c) => !c.enabled).map((c) => c.group)).toEqual(['submit', 'submit', 'submit', 'fate', 'fate']);
  });
});

describe('createSoftwareKey secp256k1', () => {
  it('signs a 32-byte digest as r || s || recovery with low s, recoverable to its public key', async () => {
    const { secp256k1 } = await import('@noble/curves/secp256k1.js');
    const key = createSoftwareKey(new Uint8Array(32).fill(5), 'secp256k1');
    expect(key.curve).toBe('secp256k1');
    expect(key.publicKey).toHaveLength(33);
    const digest = new Uint8Array(32).fill(7);
    const sig = await key.sign(digest);
    expect(sig).toHaveLength(65);
    const parsed = new secp256k1.Signature(
      BigInt(`0x${Buffer.from(sig.subarray(0, 32)).toString('hex')}`),
      BigInt(`0x${Buffer.from(sig.subarray(32, 64)).toString('hex')}`),
      sig[64],
    );
    expect(parsed.hasHighS()).toBe(false);
    expect(Buffer.from(parsed.recoverPublicKey(digest).toBytes(true))).toEqual(Buffer.from(key.publicKey));
    await expect(key.sign(new Uint8Array(31))).rejects.toThrow(/32-byte digest/);
  });
});
