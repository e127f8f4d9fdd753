import { afterAll, describe, expect, it } from 'vitest';
import { normalizeIntent, TransportError, ValidationError, type BuiltPayload, type IntentRequest } from '@vault/sdk';
import { encodeFunctionData, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmSafeDriver, EXECUTION_FAILURE, EXECUTION_SUCCESS, executionEvent, nonceRecord, SAFE_ABI, safeTxHash, type EvmSafeDriver, type SafeHistory, type SafePayload } from '../src/index.js';
import { createEvmSafeSigner } from '../src/signer.js';
import { startEvmDevnet } from '../src/devnet/index.js';
import { confirmedBy, rawRpc, safeWallet, secpKey } from './helpers.js';

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());

const chain = devnet.chain;
const url = devnet.rpcUrl;
const executor = privateKeyToAccount(devnet.accounts.executor.privateKey);
/** payloadFate at anvil's `finalized` head, 64 blocks behind latest (the default finality). */
const finalized = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, pollingInterval: 50 } }, executor });
/** payloadFate at latest: anvil never reorgs. */
const latest = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, pollingInterval: 50, finality: 'latest' } }, executor });
const signer = createEvmSafeSigner({ chains: [chain] });

const SLOT_NONCE = 5n; // Safe v1.4.1 storage: singleton, modules, owners, ownerCount, threshold, nonce

/** A fresh 2-of-3 Safe so tests never share nonces. */
async function freshSafe() {
  const keys = [secpKey(), secpKey(), secpKey()];
  const safe = await devnet.createSafe({ owners: keys.map((k) => k.address), threshold: 2, balance: 10n ** 18n });
  const wallet = safeWallet(chain, safe, keys, 2);
  const build = async (req: Partial<IntentRequest> = {}, d: EvmSafeDriver = latest) =>
    d.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: secpKey().address, amount: '1000', ...req }), wallet, params: await d.fetchParams({ wallet }) });
  const blob = async (built: BuiltPayload, who: readonly number[] = [0, 1]) => {
    const sigs = await Promise.all(who.map((i) => signer.signPayload({ built, key: keys[i]!, signerAddress: keys[i]!.address })));
    const r = latest.assemble({ built, contributions: sigs, wallet });
    if (!r.ok) throw new Error('quorum');
    return r;
  };
  return { safe, keys, wallet, build, blob };
}

const confirmed = (txHash: string, built: BuiltPayload) => confirmedBy(latest, chain, txHash, built);

async function land(s: Awaited<ReturnType<typeof freshSafe>>, built: BuiltPayload) {
  const r = await s.blob(built);
  expect(await latest.submit({ chain, blob: r.blob })).toMatchObject({ status: 'submitted' });
  return confirmed(r.txHash, built);
}

const mine = (blocks: number) => rawRpc(url, 'anvil_mine', [toHex(blocks)]);
const nonceOf = async (safe: Address) =>
  BigInt(await rawRpc<string>(url, 'eth_call', [{ to: safe, data: encodeFunctionData({ abi: SAFE_ABI, functionName: 'nonce' }) }, 'latest']));

describe('payloadFate on the chain', () => {
  it('live while unsubmitted, applied once executed; the rival at that nonce is dead (nonce_consumed)', async () => {
    const s = await freshSafe();
    const ours = await s.build({ amount: '1000' });
    const rival = await s.build({ amount: '2000' });
    await expect(latest.payloadFate({ chain, built: ours })).resolves.toMatchObject({ fate: 'live', code: 'pending' });
    expect(await land(s, ours)).toMatchObject({ status: 'confirmed' });
    await expect(latest.payloadFate({ chain, built: ours })).resolves.toMatchObject({ fate: 'applied', code: 'applied' });
    const dead = await latest.payloadFate({ chain, built: rival });
    expect(dead).toMatchObject({ fate: 'dead', code: 'nonce_consumed' });
    expect(dead.message).toMatch(/block \d+/);
  });

  it('only finalized blocks count: live (unfinalized) until the execution is 64 blocks deep, then applied / dead', async () => {
    const s = await freshSafe();
    const ours = await s.build({ amount: '1000' }, finalized);
    const rival = await s.build({ amount: '2000' }, finalized);
    expect(await land(s, ours)).toMatchObject({ status: 'confirmed' });
    await expect(finalized.payloadFate({ chain, built: ours })).resolves.toMatchObject({ fate: 'live', code: 'unfinalized' });
    // The rival must never be called dead while the block that consumed its nonce could be undone.
    await expect(finalized.payloadFate({ chain, built: rival })).resolves.toMatchObject({ fate: 'live', code: 'unfinalized' });
    await mine(64);
    await expect(finalized.payloadFate({ chain, built: ours })).resolves.toMatchObject({ fate: 'applied' });
    await expect(finalized.payloadFate({ chain, built: rival })).resolves.toMatchObject({ fate: 'dead', code: 'nonce_consumed' });
  });

  it('finds the consuming block however deep it is (doubling walk back, then bisection)', async () => {
    const s = await freshSafe();
    const first = await s.build({ amount: '1' });
    const rival = await s.build({ amount: '2' });
    await land(s, first);
    await mine(300);
    const second = await s.build({ amount: '3' });
    await land(s, second);
    await mine(7);
    await expect(latest.payloadFate({ chain, built: first })).resolves.toMatchObject({ fate: 'applied' });
    await expect(latest.payloadFate({ chain, built: rival })).resolves.toMatchObject({ fate: 'dead', code: 'nonce_consumed' });
    await expect(latest.payloadFate({ chain, built: second })).resolves.toMatchObject({ fate: 'applied' });
    // And confirm, with no memory of the send, reads the same record.
    const fresh = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url } } });
    await expect(fresh.confirm({ chain, txHash: `0x${first.digest}`, built: first })).resolves.toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
    await expect(fresh.confirm({ chain, txHash: `0x${rival.digest}`, built: rival })).resolves.toMatchObject({ status: 'failed', code: 'nonce_consumed', dead: true });
  });

  it('an inner call that reverts under safeTxGas > 0 (ExecutionFailure) is dead: execution_failure, nothing moved', async () => {
    const s = await freshSafe();
    // A token transfer the Safe cannot cover: the inner call reverts.
    const base = await s.build({ asset_issuer: devnet.token.address, amount: (10n ** 30n).toString() });
    const payload = base.payload as SafePayload;
    const tx = { ...payload.tx, safeTxGas: '100000' };
    const p = { ...payload, tx };
    const built = { payload: p, digest: safeTxHash({ chainId: p.chain_id, safe: p.safe, tx }).slice(2), summary: 'safeTxGas 100000' };
    await expect(latest.payloadFate({ chain, built })).resolves.toMatchObject({ fate: 'live' });
    const before = await nonceOf(s.safe);
    expect(await land(s, built)).toMatchObject({ status: 'failed', code: 'ExecutionFailure', dead: true });
    expect(await nonceOf(s.safe)).toBe(before + 1n);
    await expect(latest.payloadFate({ chain, built })).resolves.toMatchObject({ fate: 'dead', code: 'execution_failure' });
  });

  it('a nonce ahead of the Safe, or a Safe with no code yet, is live', async () => {
    const s = await freshSafe();
    const params = await latest.fetchParams({ wallet: s.wallet });
    if (params.kind !== 'evm_safe') throw new Error('kind');
    const ahead = latest.buildPayload({
      intent: normalizeIntent({ wallet: s.wallet.wallet, destination: secpKey().address, amount: '1' }),
      wallet: s.wallet,
      params: { ...params, safe_nonce: '5' },
    });
    await expect(latest.payloadFate({ chain, built: ahead })).resolves.toMatchObject({ fate: 'live', code: 'pending' });
    const nowhere = safeWallet(chain, secpKey().address, s.keys, 2);
    const ghost = latest.buildPayload({ intent: normalizeIntent({ wallet: nowhere.wallet, destination: secpKey().address, amount: '1' }), wallet: nowhere, params });
    await expect(latest.payloadFate({ chain, built: ghost })).resolves.toMatchObject({ fate: 'live', code: 'pending' });
  });

  it('fails closed when the nonce moved without an execution event (storage written, not executed): throws, never dead', async () => {
    const s = await freshSafe();
    const ours = await s.build({ amount: '1000' });
    await rawRpc(url, 'anvil_setStorageAt', [s.safe, toHex(SLOT_NONCE, { size: 32 }), toHex(1n, { size: 32 })]);
    await mine(1);
    expect(await nonceOf(s.safe)).toBe(1n);
    await expect(latest.payloadFate({ chain, built: ours })).rejects.toBeInstanceOf(TransportError);
    await expect(latest.payloadFate({ chain, built: ours })).rejects.toThrow(/cannot attribute nonce 0/);
  });

  it("a head whose state runs ahead of its events (anvil while it mines, a node's log lag): confirm waits, payloadFate refuses, never a wrong answer", async () => {
    const s = await freshSafe();
    const ours = await s.build({ amount: '1' });
    const r = await s.blob(ours);
    expect(await latest.submit({ chain, blob: r.blob })).toMatchObject({ status: 'submitted' });
    const mined = BigInt(await rawRpc<string>(url, 'eth_blockNumber'));
    // What anvil answered mid-mining: the block before ours as the head, and at it the state after
    // ours (its nonce moved), with no receipt yet and, rightly, no events in that block.
    const racy: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: unknown[] };
      const answer = (result: unknown) => new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }), { headers: { 'content-type': 'application/json' } });
      if (body.method === 'eth_blockNumber') return answer(toHex(mined - 1n));
      if (body.method === 'eth_call' && body.params[1] === toHex(mined - 1n)) {
        return fetch(input, { ...init, body: JSON.stringify({ ...body, params: [body.params[0], 'latest'] }) });
      }
      if (body.method === 'eth_getTransactionReceipt') return answer(null);
      return fetch(input, init);
    };
    const racing = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, pollingInterval: 50, finality: 'latest' } }, fetch: racy });
    await expect(racing.confirm({ chain, txHash: r.txHash, built: ours })).resolves.toEqual({ status: 'pending', txHash: r.txHash });
    await expect(racing.payloadFate({ chain, built: ours })).rejects.toThrow(/cannot attribute nonce 0/);
    // The head as it is: settled.
    await expect(confirmed(r.txHash, ours)).resolves.toMatchObject({ status: 'confirmed' });
    await expect(latest.payloadFate({ chain, built: ours })).resolves.toMatchObject({ fate: 'applied' });
  });

  it('someone else carried the same SafeTx first: our transaction reverts, yet confirm says confirmed and payloadFate applied', async () => {
    const s = await freshSafe();
    const ours = await s.build({ amount: '4242' });
    const r = await s.blob(ours);
    await rawRpc(url, 'evm_setAutomine', [false]);
    try {
      expect(await latest.submit({ chain, blob: r.blob })).toMatchObject({ status: 'submitted' });
      const gwei = 10n ** 9n;
      await rawRpc(url, 'eth_sendTransaction', [
        { from: devnet.accounts.funded[1]!.address, to: s.safe, data: (JSON.parse(r.blob) as { data: Hex }).data, gas: toHex(500_000n), maxFeePerGas: toHex(1000n * gwei), maxPriorityFeePerGas: toHex(500n * gwei) },
      ]);
      await rawRpc(url, 'evm_mine', []);
    } finally {
      await rawRpc(url, 'evm_setAutomine', [true]);
    }
    await expect(confirmed(r.txHash, ours)).resolves.toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
    await expect(latest.payloadFate({ chain, built: ours })).resolves.toMatchObject({ fate: 'applied' });
  });
});

describe('payloadFate refusals', () => {
  it('an unreachable RPC throws a TransportError', async () => {
    const s = await freshSafe();
    const built = await s.build();
    const down = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: 'http://127.0.0.1:9', finality: 'latest' } } });
    await expect(down.payloadFate({ chain, built })).rejects.toBeInstanceOf(TransportError);
  });

  it('an RPC that answers errors for history (e.g. a pruned node) throws, never guesses', async () => {
    const s = await freshSafe();
    const ours = await s.build({ amount: '1' });
    const rival = await s.build({ amount: '2' });
    await land(s, ours);
    // A proxy in front of anvil that refuses eth_call below the latest block, like a pruned node.
    const head = BigInt(await rawRpc<string>(url, 'eth_blockNumber'));
    const pruned: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: unknown[] };
      if (body.method === 'eth_call' && typeof body.params[1] === 'string' && body.params[1].startsWith('0x') && BigInt(body.params[1]) < head) {
        return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32000, message: 'missing trie node' } }), { headers: { 'content-type': 'application/json' } });
      }
      return fetch(input, init);
    };
    const d = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, finality: 'latest' } }, fetch: pruned });
    await expect(d.payloadFate({ chain, built: rival })).rejects.toBeInstanceOf(TransportError);
  });

  it('an RPC serving another chain throws (the same Safe address can exist on many chains)', async () => {
    const s = await freshSafe();
    const built = await s.build();
    const other = createEvmSafeDriver({ chains: { 'eip155:1': { rpcUrl: url, finality: 'latest' } } });
    const p = { ...(built.payload as SafePayload), chain: 'eip155:1', chain_id: 1 };
    const mainnet = { payload: p, digest: safeTxHash({ chainId: 1, safe: p.safe, tx: p.tx }).slice(2), summary: '' };
    await expect(other.payloadFate({ chain: 'eip155:1', built: mainnet })).rejects.toThrow(/serves chain 31337, not 1/);
  });

  it('a finality tag the RPC does not know throws', async () => {
    const s = await freshSafe();
    const built = await s.build();
    const noTag: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number; method: string };
      if (body.method === 'eth_getBlockByNumber') return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: null }), { headers: { 'content-type': 'application/json' } });
      return fetch(input, init);
    };
    const d = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, finality: 'safe' } }, fetch: noTag });
    await expect(d.payloadFate({ chain, built })).rejects.toThrow(/no safe block/);
  });

  it('a payload for another chain, or whose digest is not its safeTxHash, is a ValidationError', async () => {
    const s = await freshSafe();
    const built = await s.build();
    await expect(latest.payloadFate({ chain, built: { ...built, digest: 'ab'.repeat(32) } })).rejects.toBeInstanceOf(ValidationError);
    const p = { ...(built.payload as SafePayload), chain: 'eip155:1', chain_id: 1 };
    const foreign = { payload: p, digest: safeTxHash({ chainId: 1, safe: p.safe, tx: p.tx }).slice(2), summary: '' };
    await expect(latest.payloadFate({ chain, built: foreign })).rejects.toMatchObject({ path: 'payload.chain' });
    expect(() => createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, finality: 'final' as never } } })).toThrow(/finality/);
  });
});

describe('nonceRecord (the search, over a recorded history)', () => {
  const H = `0x${'11'.repeat(32)}` as Hex;
  /** nonces[b] is the nonce at the end of block b; events[b] the execution logs in block b. */
  const history = (nonces: bigint[], events: Record<number, { topics: Hex[]; data?: Hex }[]> = {}): SafeHistory & { reads: bigint[] } => {
    const reads: bigint[] = [];
    return {
      reads,
      nonceAt: async (b) => {
        reads.push(b);
        return nonces[Number(b)] as bigint;
      },
      // v1.4.0+ logs (txHash indexed) carry the payment as their data unless a test says otherwise.
      executionLogs: async (b) => (events[Number(b)] ?? []).map((e) => ({ data: `0x${'00'.repeat(32)}` as Hex, ...e, transactionHash: null })),
    };
  };

  it('finds the block and reads few blocks', async () => {
    const nonces = Array.from({ length: 10_001 }, (_, b) => (b >= 1234 ? 1n : 0n));
    const h = history(nonces, { 1234: [{ topics: [EXECUTION_SUCCESS, H] }] });
    await expect(nonceRecord(h, { nonce: 0n, safeTxHash: H, head: 10_000n })).resolves.toMatchObject({ state: 'applied', block: 1234n });
    expect(h.reads.length).toBeLessThan(40);
  });

  it('a success beats a forged failure for the same hash; a failure alone is failed; neither is consumed', async () => {
    const nonces = [0n, 0n, 2n];
    const other = `0x${'22'.repeat(32)}` as Hex;
    await expect(nonceRecord(history(nonces, { 2: [{ topics: [EXECUTION_FAILURE, H] }, { topics: [EXECUTION_SUCCESS, H] }] }), { nonce: 0n, safeTxHash: H, head: 2n })).resolves.toMatchObject({ state: 'applied' });
    await expect(nonceRecord(history(nonces, { 2: [{ topics: [EXECUTION_FAILURE, H] }, { topics: [EXECUTION_SUCCESS, other] }] }), { nonce: 0n, safeTxHash: H, head: 2n })).resolves.toMatchObject({ state: 'failed' });
    await expect(nonceRecord(history(nonces, { 2: [{ topics: [EXECUTION_SUCCESS, other] }, { topics: [EXECUTION_SUCCESS, other] }] }), { nonce: 0n, safeTxHash: H, head: 2n })).resolves.toMatchObject({ state: 'consumed', block: 2n });
  });

  it('reads Safe v1.3.0 events, whose txHash is in the data, not a topic: an applied payload is never consumed', async () => {
    const nonces = [0n, 0n, 1n];
    const v130 = (sig: Hex, hash: Hex) => ({ topics: [sig], data: `${hash}${'00'.repeat(32)}` as Hex });
    const other = `0x${'22'.repeat(32)}` as Hex;
    await expect(nonceRecord(history(nonces, { 2: [v130(EXECUTION_SUCCESS, H)] }), { nonce: 0n, safeTxHash: H, head: 2n })).resolves.toMatchObject({ state: 'applied', block: 2n });
    await expect(nonceRecord(history(nonces, { 2: [v130(EXECUTION_FAILURE, H)] }), { nonce: 0n, safeTxHash: H, head: 2n })).resolves.toMatchObject({ state: 'failed' });
    await expect(nonceRecord(history(nonces, { 2: [v130(EXECUTION_SUCCESS, other)] }), { nonce: 0n, safeTxHash: H, head: 2n })).resolves.toMatchObject({ state: 'consumed' });
    // Neither form when the shape is off: a log that is neither is nobody's execution.
    expect(executionEvent({ topics: [EXECUTION_SUCCESS], data: H })).toBeNull();
    expect(executionEvent({ topics: [EXECUTION_SUCCESS, H], data: `${H}${'00'.repeat(32)}` as Hex })).toBeNull();
    expect(executionEvent({ topics: [EXECUTION_SUCCESS, H], data: `0x${'00'.repeat(32)}` })).toEqual({ kind: 'success', txHash: H });
  });

  it('throws when the nonce is already past at genesis, or a block’s events do not match its nonce increase', async () => {
    await expect(nonceRecord(history([1n, 1n, 1n]), { nonce: 0n, safeTxHash: H, head: 2n })).rejects.toThrow(/at genesis/);
    await expect(nonceRecord(history([0n, 0n, 2n, 2n], { 2: [{ topics: [EXECUTION_SUCCESS, H] }] }), { nonce: 0n, safeTxHash: H, head: 3n })).rejects.toThrow(/cannot attribute/);
  });

  it('the same mismatch at the head itself proves nothing yet: unproven, never applied, failed or consumed', async () => {
    // The head's state moved the nonce; its events are not (yet) served.
    await expect(nonceRecord(history([0n, 0n, 1n]), { nonce: 0n, safeTxHash: H, head: 2n })).resolves.toEqual({ state: 'unproven', head: 2n, safeNonce: 1n, block: 2n });
    await expect(nonceRecord(history([0n, 0n, 2n], { 2: [{ topics: [EXECUTION_SUCCESS, H] }] }), { nonce: 0n, safeTxHash: H, head: 2n })).resolves.toMatchObject({ state: 'unproven' });
    // Once a block is above it, the same record is a fault.
    await expect(nonceRecord(history([0n, 0n, 1n, 1n]), { nonce: 0n, safeTxHash: H, head: 3n })).rejects.toThrow(/cannot attribute nonce 0/);
  });
});
