import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, normalizeIntent, protectChainFacts, SignerRefusedError, TransportError, ValidationError, type BuiltPayload, type Contribution, type IntentRequest } from '@vault/sdk';
import { createWalletClient, decodeFunctionData, encodeAbiParameters, encodeFunctionData, http, keccak256, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmSafeDriver, decodeSymbol, encodeExecTransaction, SAFE_ABI, SAFE_BLOB_FORMAT, safeTxHash, type EvmSafeDriver, type SafePayload } from '../src/index.js';
import { createEvmSafeSigner } from '../src/signer.js';
import { startEvmDevnet, TEST_TOKEN_ABI } from '../src/devnet/index.js';
import { rawRpc, rawTokenBalance, safeWallet, secpKey } from './helpers.js';

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());

const chain = devnet.chain;
const url = devnet.rpcUrl;
const executor = privateKeyToAccount(devnet.accounts.executor.privateKey);
const driver = createEvmSafeDriver({
  chains: { [chain]: { rpcUrl: url, pollingInterval: 50, tokens: [devnet.token.address] } },
  executor,
});
const signer = createEvmSafeSigner({ chains: [chain] });
const keys = devnet.safe.owners.map((o) => secpKey(o.privateKey));
const wallet = safeWallet(chain, devnet.safe.address, keys, 2, 'treasury');
const SAFE = devnet.safe.address;
const TOKEN = devnet.token.address;
const balance = async (a: Address) => BigInt(await rawRpc<string>(url, 'eth_getBalance', [a, 'latest']));
const safeNonce = async (safe: Address = SAFE) =>
  BigInt(await rawRpc<string>(url, 'eth_call', [{ to: safe, data: encodeFunctionData({ abi: SAFE_ABI, functionName: 'nonce' }) }, 'latest']));

const evmParams = async () => {
  const p = await driver.fetchParams({ wallet });
  if (p.kind !== 'evm_safe') throw new Error('kind');
  return p;
};
const intent = (req: Partial<IntentRequest>) => normalizeIntent({ wallet: wallet.wallet, destination: secpKey().address, amount: '1', ...req });
const build = async (req: Partial<IntentRequest>, w = wallet) => driver.buildPayload({ intent: intent(req), wallet: w, params: await driver.fetchParams({ wallet: w }) });
const signWith = (built: BuiltPayload, idx: readonly number[], k = keys, w = wallet) =>
  Promise.all(idx.map((i) => signer.signPayload({ built, key: k[i]!, signerAddress: w.control.kind === 'evm_safe' ? w.control.owners[i]!.address : '' })));

async function confirmed(d: EvmSafeDriver, txHash: string, built: BuiltPayload) {
  for (let i = 0; i < 100; i++) {
    const r = await d.confirm({ chain, txHash, built });
    if (r.status !== 'pending') return r;
    await new Promise((res) => setTimeout(res, 30));
  }
  throw new Error('still pending');
}

/** Build, sign by owners 0 and 1, assemble, submit, confirm. */
async function execute(req: Partial<IntentRequest>, d: EvmSafeDriver = driver) {
  const built = await build(req);
  const result = d.assemble({ built, contributions: await signWith(built, [0, 1]), wallet });
  if (!result.ok) throw new Error('short');
  const submitted = await d.submit({ chain, blob: result.blob });
  expect(submitted, JSON.stringify(submitted)).toMatchObject({ status: 'submitted', txHash: result.txHash });
  return { built, result, outcome: await confirmed(d, result.txHash, built) };
}

/** A blob with hand-picked signatures (to show what the contract itself says). */
function blobWith(payload: SafePayload, signatures: Hex, overrides: Record<string, unknown> = {}) {
  return canonicalize({
    format: SAFE_BLOB_FORMAT,
    chain_id: payload.chain_id,
    safe: payload.safe,
    nonce: payload.tx.nonce,
    safe_tx_hash: safeTxHash({ chainId: payload.chain_id, safe: payload.safe, tx: payload.tx }),
    data: encodeExecTransaction(payload.tx, signatures),
    ...overrides,
  });
}
const sigHex = (cs: Contribution[]) => `0x${[...cs].sort((a, b) => (a.signer_address.toLowerCase() < b.signer_address.toLowerCase() ? -1 : 1)).map((c) => c.signature.hex).join('')}` as Hex;

describe('safeTxHash', () => {
  it("equals the Safe contract's own getTransactionHash for each operation", async () => {
    const payloads = [
      await build({ amount: '123456789' }),
      await build({ asset_issuer: TOKEN, asset_symbol: 'VTT', amount: '5' }),
      await build({ destination: TOKEN, amount: '0', operation: { op: 'contract_call', data_hex: '0x18160ddd' } }),
      await build({ asset_issuer: TOKEN, amount: '9', operation: { op: 'issue' } }),
    ];
    for (const built of payloads) {
      const { tx } = built.payload as SafePayload;
      const data = encodeFunctionData({
        abi: SAFE_ABI,
        functionName: 'getTransactionHash',
        args: [tx.to, BigInt(tx.value), tx.data, tx.operation, BigInt(tx.safeTxGas), BigInt(tx.baseGas), BigInt(tx.gasPrice), tx.gasToken, tx.refundReceiver, BigInt(tx.nonce)],
      });
      const onChain = await rawRpc<string>(url, 'eth_call', [{ to: SAFE, data }, 'latest']);
      expect(onChain).toBe(`0x${built.digest}`);
    }
  });
});

describe('operations on chain (checked by raw JSON-RPC reads)', () => {
  it('2-of-3 native transfer: the executor pays gas, the Safe pays exactly the amount', async () => {
    const dest = secpKey().address;
    const [safeBefore, execBefore] = [await balance(SAFE), await balance(executor.address)];
    const { outcome, built } = await execute({ destination: dest, amount: '250000000000000000' });
    expect(outcome).toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
    expect(built.summary).toMatch(/transfer 0\.25 ETH -> 0x/);
    expect(await balance(dest)).toBe(250000000000000000n);
    expect(await balance(SAFE)).toBe(safeBefore - 250000000000000000n);
    expect(await balance(executor.address)).toBeLessThan(execBefore);
    expect(outcome.status === 'confirmed' && outcome.outcome?.['ethTxHash']).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('ERC-20 transfer by asset_issuer', async () => {
    const dest = secpKey().address;
    const before = await rawTokenBalance(url, TOKEN, SAFE);
    const { outcome, built } = await execute({ destination: dest, amount: '12345', asset_issuer: TOKEN, asset_symbol: 'VTT' });
    expect(outcome).toMatchObject({ status: 'confirmed' });
    expect(built.summary).toMatch(/ERC-20 transfer 0\.012345 VTT/);
    expect(await rawTokenBalance(url, TOKEN, dest)).toBe(12345n);
    expect(await rawTokenBalance(url, TOKEN, SAFE)).toBe(before - 12345n);
  });

  it('issue mints on a token the Safe owns', async () => {
    const dest = secpKey().address;
    const supply = async () => BigInt(await rawRpc<string>(url, 'eth_call', [{ to: TOKEN, data: '0x18160ddd' }, 'latest']));
    const before = await supply();
    const { outcome } = await execute({ destination: dest, amount: '777', asset_issuer: TOKEN, operation: { op: 'issue' } });
    expect(outcome).toMatchObject({ status: 'confirmed' });
    expect(await rawTokenBalance(url, TOKEN, dest)).toBe(777n);
    expect(await supply()).toBe(before + 777n);
  });

  it('contract_call sends data_hex to the destination', async () => {
    const dest = secpKey().address;
    const data = encodeFunctionData({ abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [dest, 42n] });
    const { outcome, built } = await execute({ destination: TOKEN, amount: '0', operation: { op: 'contract_call', data_hex: data } });
    expect(outcome).toMatchObject({ status: 'confirmed' });
    expect((built.payload as SafePayload).tx).toMatchObject({ to: TOKEN, value: '0', data, operation: 0 });
    expect(await rawTokenBalance(url, TOKEN, dest)).toBe(42n);
  });

  it('confirm works from another driver instance (no memory of the submit): Safe events are the record', async () => {
    const { result, built } = await execute({ amount: '1000' });
    const fresh = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, pollingInterval: 50 } } });
    await expect(fresh.confirm({ chain, txHash: result.txHash, built })).resolves.toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
  });
});

describe('refused operations', () => {
  it('authorize_holder, clawback, mpt_create and account_flags are refused naming operation.op', async () => {
    const params = await driver.fetchParams({ wallet });
    const ops = [
      { op: 'authorize_holder' as const },
      { op: 'clawback' as const },
      { op: 'mpt_create' as const, asset_scale: 2, flags: 0x20 },
      { op: 'account_flags' as const, set: 8 },
    ];
    for (const operation of ops) {
      let err: unknown;
      try {
        driver.buildPayload({ intent: intent({ operation }), wallet, params });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).path).toBe('operation.op');
      expect((err as Error).message).toContain(`${operation.op} is refused`);
    }
  });

  it('refuses bad inputs naming the field', async () => {
    const params = await driver.fetchParams({ wallet });
    const attempt = (req: Partial<IntentRequest>, p = params) => {
      try {
        driver.buildPayload({ intent: intent(req), wallet, params: p });
      } catch (e) {
        return (e as ValidationError).path;
      }
      return 'no error';
    };
    expect(attempt({ destination: '0x123' })).toBe('destination');
    expect(attempt({ destination: SAFE })).toBe('destination');
    expect(attempt({ amount: '0' })).toBe('amount');
    expect(attempt({ asset_symbol: 'USDC' })).toBe('asset_symbol');
    expect(attempt({ asset_symbol: 'ETH' })).toBe('asset_decimals');
    expect(attempt({ asset_issuer: 'not-an-address' })).toBe('asset_issuer');
    expect(attempt({ operation: { op: 'issue' } })).toBe('asset_issuer');
    expect(attempt({ asset_issuer: TOKEN, operation: { op: 'contract_call', data_hex: '0x18160ddd' } })).toBe('asset_issuer');
    expect(attempt({}, { kind: 'xrpl', sequence: 1, base_fee_drops: 10, last_ledger_sequence: 5, network_id: null })).toBe('kind');
    expect(attempt({}, { kind: 'evm_safe', chain_id: 31337, safe_nonce: '-1' })).toBe('safe_nonce');
    expect(attempt({ asset_symbol: 'eth', asset_decimals: 18, amount: '2' })).toBe('no error');
  });
});

describe('guard facts, balances and control state', () => {
  it('code facts for the destination and the token (the hash of the code a raw read returns), the on-chain symbol, an unburned owner', async () => {
    const eoa = secpKey().address;
    const plain = await driver.fetchProtectInputs({ intent: intent({ destination: eoa }), wallet });
    expect(plain).toEqual({ destination: { address: eoa, hasCode: false, codeHash: null }, issuer: null, assetSymbol: null, issuerKeyBurned: false });
    expect(protectChainFacts(plain)).toEqual({ evm_code: [[eoa, '0x']], onchain_symbol: null, token_owner_burned: false });
    const token = await driver.fetchProtectInputs({ intent: intent({ destination: eoa, asset_issuer: TOKEN.toLowerCase() }), wallet });
    const code = await rawRpc<Hex>(url, 'eth_getCode', [TOKEN, 'latest']);
    expect(code).toMatch(/^0x[0-9a-f]{100,}$/);
    expect(token.issuer).toEqual({ address: TOKEN, hasCode: true, codeHash: keccak256(code) });
    expect(token).toMatchObject({ assetSymbol: 'VTT', issuerKeyBurned: false });
    expect(protectChainFacts(token).evm_code).toEqual([[eoa, '0x'], [TOKEN, keccak256(code)]]);
  });

  it('a bytes32 symbol, a burned owner (0x…dEaD and zero), a contract without symbol or owner', async () => {
    const mkr = await devnet.deployToken('0x000000000000000000000000000000000000dEaD', { symbol: 'MKR', stringEncoding: 'bytes32' });
    await expect(driver.fetchProtectInputs({ intent: intent({ asset_issuer: mkr }), wallet })).resolves.toMatchObject({ assetSymbol: 'MKR', issuerKeyBurned: true });
    const zero = await devnet.deployToken('0x0000000000000000000000000000000000000000');
    await expect(driver.fetchProtectInputs({ intent: intent({ asset_issuer: zero }), wallet })).resolves.toMatchObject({ assetSymbol: 'VTT', issuerKeyBurned: true });
    // The Safe singleton has code but neither symbol() nor owner().
    await expect(driver.fetchProtectInputs({ intent: intent({ asset_issuer: devnet.safeAddresses.multiSend }), wallet })).resolves.toMatchObject({ assetSymbol: null, issuerKeyBurned: false });
    // No code at the issuer: no symbol, and the guard sees '0x'.
    const nobody = secpKey().address;
    const facts = await driver.fetchProtectInputs({ intent: intent({ asset_issuer: nobody }), wallet });
    expect(facts.issuer).toEqual({ address: nobody, hasCode: false, codeHash: null });
    expect(protectChainFacts(facts).evm_code.find(([a]) => a === nobody)?.[1]).toBe('0x');
    expect(facts.assetSymbol).toBeNull();
  });

  it('balances: native and configured tokens agree with raw reads', async () => {
    const balances = await driver.balances({ wallet });
    expect(balances[0]).toEqual({ asset: 'native', symbol: 'ETH', amount: (await balance(SAFE)).toString(), decimals: 18 });
    expect(balances[1]).toEqual({ asset: TOKEN, symbol: 'VTT', amount: (await rawTokenBalance(url, TOKEN, SAFE)).toString(), decimals: 6 });
  });

  it('controlState: owners, threshold, nonce and version from the Safe', async () => {
    const state = await driver.controlState({ wallet });
    expect(state.address).toBe(SAFE);
    expect(state.quorum).toBe(2);
    expect(state.members.map((m) => m.address).sort()).toEqual(keys.map((k) => k.address).sort());
    expect(state.members.every((m) => m.weight === 1)).toBe(true);
    expect(state.extra).toEqual({ nonce: (await safeNonce()).toString(), version: '1.4.1' });
  });

  it('a Safe address without code is NotFound', async () => {
    const ghost = safeWallet(chain, secpKey().address, keys, 2);
    await expect(driver.fetchParams({ wallet: ghost })).rejects.toMatchObject({ name: 'NotFoundError' });
  });
});

describe('negative: short threshold', () => {
  it('assemble with one of two signatures is short_of_quorum, and the Safe itself reverts GS020', async () => {
    const built = await build({ amount: '1000' });
    const one = await signWith(built, [2]);
    const short = driver.assemble({ built, contributions: one, wallet });
    expect(short).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: 1, quorum: 2, invalid: [] });
    if (short.ok) return;
    expect(short.missing.map((m) => m.address).sort()).toEqual([keys[0]!.address, keys[1]!.address].sort());
    const before = await balance(SAFE);
    const submitted = await driver.submit({ chain, blob: blobWith(built.payload as SafePayload, sigHex(one)) });
    expect(submitted).toMatchObject({ status: 'rejected', code: 'GS020', retriable: false });
    expect(await balance(SAFE)).toBe(before);
  });
});

describe('negative: wrong chain id', () => {
  it('buildPayload refuses params for another chain id', async () => {
    const params = await evmParams();
    expect(() => driver.buildPayload({ intent: intent({}), wallet, params: { ...params, chain_id: 1 } })).toThrow(/chain_id 1 is not the id of eip155:31337/);
  });

  it('owner signatures over the chain-1 safeTxHash revert GS026 on chain 31337', async () => {
    const built = await build({ amount: '1000' });
    const payload = built.payload as SafePayload;
    const mainnetPayload = { ...payload, chain: 'eip155:1', chain_id: 1 };
    const mainnetSigner = createEvmSafeSigner({ chains: ['eip155:1'] });
    const mainnetBuilt = { payload: mainnetPayload, digest: safeTxHash({ chainId: 1, safe: SAFE, tx: payload.tx }).slice(2), summary: '' };
    const sigs = await Promise.all([0, 1].map((i) => mainnetSigner.signPayload({ built: mainnetBuilt, key: keys[i]!, signerAddress: keys[i]!.address })));
    expect(driver.assemble({ built, contributions: sigs, wallet })).toMatchObject({ ok: false, weight: 0 });
    const submitted = await driver.submit({ chain, blob: blobWith(payload, sigHex(sigs)) });
    expect(submitted).toMatchObject({ status: 'rejected', code: 'GS026', retriable: false });
  });

  it('a blob for another chain, or an RPC of another chain, is refused as wrong_chain', async () => {
    const built = await build({ amount: '1000' });
    const sigs = await signWith(built, [0, 1]);
    await expect(driver.submit({ chain, blob: blobWith(built.payload as SafePayload, sigHex(sigs), { chain_id: 1 }) })).resolves.toMatchObject({ status: 'rejected', code: 'wrong_chain' });
    const liar = createEvmSafeDriver({ chains: { 'eip155:1': { rpcUrl: url } }, executor });
    const w1 = { ...wallet, chain: 'eip155:1' };
    await expect(liar.fetchParams({ wallet: w1 })).rejects.toBeInstanceOf(TransportError);
    await expect(liar.submit({ chain: 'eip155:1', blob: blobWith({ ...(built.payload as SafePayload), chain_id: 1 }, sigHex(sigs)) })).resolves.toMatchObject({ code: 'wrong_chain' });
  });

  it('the signer refuses a payload whose chain_id is not its chain', async () => {
    const built = await build({ amount: '1000' });
    const payload = { ...(built.payload as SafePayload), chain_id: 1 };
    const lie = { payload, digest: safeTxHash({ chainId: 1, safe: SAFE, tx: payload.tx }).slice(2), summary: '' };
    await expect(signer.signPayload({ built: lie, key: keys[0]!, signerAddress: keys[0]!.address })).rejects.toMatchObject({ reason: 'chain' });
  });
});

describe('negative: replayed nonce', () => {
  it('two payloads at one nonce: the second reverts GS026 and confirm proves it dead', async () => {
    const a = await build({ amount: '1000' });
    const b = await build({ amount: '2000' });
    expect((a.payload as SafePayload).tx.nonce).toBe((b.payload as SafePayload).tx.nonce);
    const ra = driver.assemble({ built: a, contributions: await signWith(a, [0, 1]), wallet });
    const rb = driver.assemble({ built: b, contributions: await signWith(b, [1, 2]), wallet });
    if (!ra.ok || !rb.ok) throw new Error('quorum');
    await expect(driver.submit({ chain, blob: ra.blob })).resolves.toMatchObject({ status: 'submitted' });
    await expect(confirmed(driver, ra.txHash, a)).resolves.toMatchObject({ status: 'confirmed' });
    const replay = await driver.submit({ chain, blob: rb.blob });
    expect(replay).toMatchObject({ status: 'rejected', code: 'GS026', retriable: false });
    expect(replay.status === 'rejected' && replay.message).toMatch(/already consumed/);
    await expect(driver.confirm({ chain, txHash: rb.txHash, built: b })).resolves.toMatchObject({ status: 'failed', code: 'nonce_consumed', dead: true });
    // The executed one cannot run twice either.
    await expect(driver.submit({ chain, blob: ra.blob })).resolves.toMatchObject({ status: 'rejected', code: 'GS026' });
  });

  it('a race: a competitor executes another SafeTx at our nonce first; ours reverts on chain and is dead', async () => {
    const ours = await build({ amount: '1000' });
    const theirs = await build({ amount: '2000' });
    const r = driver.assemble({ built: ours, contributions: await signWith(ours, [0, 1]), wallet });
    const t = driver.assemble({ built: theirs, contributions: await signWith(theirs, [0, 2]), wallet });
    if (!r.ok || !t.ok) throw new Error('quorum');
    await rawRpc(url, 'evm_setAutomine', [false]);
    try {
      await expect(driver.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'submitted' });
      await expect(driver.confirm({ chain, txHash: r.txHash, built: ours })).resolves.toMatchObject({ status: 'pending' });
      // Someone else carries the other SafeTx with a higher tip: it is ordered first in the block.
      const competitor = devnet.accounts.funded[1]!.address;
      const gwei = 10n ** 9n;
      await rawRpc(url, 'eth_sendTransaction', [
        { from: competitor, to: SAFE, data: (JSON.parse(t.blob) as { data: Hex }).data, gas: toHex(500_000n), maxFeePerGas: toHex(1000n * gwei), maxPriorityFeePerGas: toHex(500n * gwei) },
      ]);
      await rawRpc(url, 'evm_mine', []);
    } finally {
      await rawRpc(url, 'evm_setAutomine', [true]);
    }
    await expect(driver.confirm({ chain, txHash: t.txHash, built: theirs })).resolves.toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
    await expect(confirmed(driver, r.txHash, ours)).resolves.toMatchObject({ status: 'failed', code: 'reverted', dead: true });
    // Asked again (no memory of the send now), the consumed nonce still proves it dead.
    await expect(driver.confirm({ chain, txHash: r.txHash, built: ours })).resolves.toMatchObject({ status: 'failed', code: 'nonce_consumed', dead: true });
  });

  it('a SafeTx built elsewhere with safeTxGas > 0 whose call fails: ExecutionFailure consumes the nonce, dead', async () => {
    const base = await build({ asset_issuer: TOKEN, amount: (10n ** 30n).toString() });
    const payload = base.payload as SafePayload;
    // Not something this driver builds (it always sets safeTxGas 0), but a valid SafeTx owners may sign.
    const tx = { ...payload.tx, safeTxGas: '100000' };
    const p = { ...payload, tx };
    const built = { payload: p, digest: safeTxHash({ chainId: p.chain_id, safe: p.safe, tx }).slice(2), summary: 'safeTxGas 100000' };
    const r = driver.assemble({ built, contributions: await signWith(built, [1, 2]), wallet });
    if (!r.ok) throw new Error('quorum');
    const nonce = await safeNonce();
    await expect(driver.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'submitted' });
    await expect(confirmed(driver, r.txHash, built)).resolves.toMatchObject({ status: 'failed', code: 'ExecutionFailure', dead: true });
    expect(await safeNonce()).toBe(nonce + 1n);
    // And from the Safe's events alone.
    const fresh = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url } } });
    await expect(fresh.confirm({ chain, txHash: r.txHash, built })).resolves.toMatchObject({ status: 'failed', code: 'ExecutionFailure', dead: true });
  });

  it('a future nonce is rejected as retriable and stays pending', async () => {
    const params = await evmParams();
    const ahead = driver.buildPayload({ intent: intent({}), wallet, params: { ...params, safe_nonce: (BigInt(params.safe_nonce) + 3n).toString() } });
    const r = driver.assemble({ built: ahead, contributions: await signWith(ahead, [0, 1]), wallet });
    if (!r.ok) throw new Error('quorum');
    await expect(driver.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'rejected', code: 'GS026', retriable: true });
    await expect(driver.confirm({ chain, txHash: r.txHash, built: ahead })).resolves.toMatchObject({ status: 'pending' });
  });

  it('an inner call that fails reverts the whole execTransaction (GS013) and consumes nothing', async () => {
    const nonce = await safeNonce();
    const built = await build({ asset_issuer: TOKEN, amount: (10n ** 30n).toString() });
    const r = driver.assemble({ built, contributions: await signWith(built, [0, 2]), wallet });
    if (!r.ok) throw new Error('quorum');
    await expect(driver.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'rejected', code: 'GS013', retriable: false });
    expect(await safeNonce()).toBe(nonce);
  });
});

describe('assemble', () => {
  it('orders signatures by owner address whatever the order they arrive in', async () => {
    const built = await build({ amount: '1' });
    const sigs = await signWith(built, [0, 1, 2]);
    const r = driver.assemble({ built, contributions: [sigs[2]!, sigs[0]!, sigs[1]!], wallet });
    if (!r.ok) throw new Error('quorum');
    expect(r.weight).toBe(3);
    const data = (JSON.parse(r.blob) as { data: Hex }).data;
    const { args } = decodeFunctionData({ abi: SAFE_ABI, data });
    const packed = (args[9] as Hex).slice(2);
    const order = [0, 1, 2].map((i) => packed.slice(i * 130, i * 130 + 130));
    const byOwner = [...sigs].sort((x, y) => (x.signer_address.toLowerCase() < y.signer_address.toLowerCase() ? -1 : 1)).map((c) => c.signature.hex);
    expect(order).toEqual(byOwner);
  });

  it('lists malformed contributions and those with a wrong key, curve, encoding or v', async () => {
    const built = await build({ amount: '1' });
    const [good] = await signWith(built, [0]);
    const c = good!;
    const other = secpKey();
    const variants: Contribution[] = [
      { ...c, public_key: { curve: 'ed25519', hex: c.public_key.hex } },
      { ...c, signature: { encoding: 'xrpl-der', hex: c.signature.hex } },
      { ...c, signature: { ...c.signature, hex: c.signature.hex.slice(0, 128) + '00' } },
      { ...c, public_key: { curve: 'secp256k1', hex: Buffer.from(other.publicKey).toString('hex') } },
      { ...c, signature: { ...c.signature, hex: 'zz' } },
    ];
    const r = driver.assemble({ built, contributions: variants, wallet });
    expect(r).toMatchObject({ ok: false, weight: 0 });
    if (r.ok) return;
    expect(r.invalid.map((i) => [i.index, i.reason, i.detail])).toEqual([
      [0, 'wrong_key', "curve ed25519 is not the member's curve secp256k1"],
      [1, 'bad_signature', 'signature encoding xrpl-der is not eip712-rsv'],
      [2, 'bad_signature', 'v = 0: only ECDSA owner signatures (v 27/28) are accepted'],
      [3, 'wrong_key', `public key does not control ${c.signer_address}`],
      [4, 'malformed', expect.stringMatching(/^not a Contribution: signature\.hex: /)],
    ]);
  });

  it('refuses a payload for another Safe or with a digest that is not its safeTxHash', async () => {
    const built = await build({ amount: '1' });
    expect(() => driver.assemble({ built: { ...built, digest: 'ab'.repeat(32) }, contributions: [], wallet })).toThrow(/digest is not the safeTxHash/);
    const other = safeWallet(chain, secpKey().address, keys, 2);
    expect(() => driver.assemble({ built, contributions: [], wallet: other })).toThrow(/not this wallet/);
  });
});

describe('the signer', () => {
  it('refuses a handed digest, a key that is not the owner, a non-secp256k1 key and refund fields', async () => {
    const built = await build({ amount: '1' });
    await expect(signer.signPayload({ built: { ...built, digest: 'ab'.repeat(32) }, key: keys[0]!, signerAddress: keys[0]!.address })).rejects.toMatchObject({ reason: 'digest_mismatch' });
    await expect(signer.signPayload({ built, key: keys[1]!, signerAddress: keys[0]!.address })).rejects.toMatchObject({ reason: 'key' });
    const ed = { curve: 'ed25519' as const, publicKey: new Uint8Array(32), sign: async () => new Uint8Array(64) };
    await expect(signer.signPayload({ built, key: ed, signerAddress: keys[0]!.address })).rejects.toMatchObject({ reason: 'key' });
    const payload = built.payload as SafePayload;
    for (const tx of [{ ...payload.tx, gasPrice: '1' }, { ...payload.tx, operation: 1 as const }]) {
      const p = { ...payload, tx };
      const refund = { payload: p, digest: safeTxHash({ chainId: p.chain_id, safe: p.safe, tx }).slice(2), summary: '' };
      await expect(signer.signPayload({ built: refund, key: keys[0]!, signerAddress: keys[0]!.address })).rejects.toBeInstanceOf(SignerRefusedError);
    }
    const broken = { ...keys[0]!, sign: async () => new Uint8Array(65).fill(1) };
    await expect(signer.signPayload({ built, key: broken, signerAddress: keys[0]!.address })).rejects.toMatchObject({ reason: 'key' });
  });

  it('derives addresses from compressed keys only for secp256k1 on served chains', () => {
    expect(signer.deriveAddress({ chain, publicKey: keys[0]!.publicKey, curve: 'secp256k1' })).toBe(keys[0]!.address);
    expect(() => signer.deriveAddress({ chain, publicKey: keys[0]!.publicKey, curve: 'ed25519' })).toThrow(ValidationError);
    expect(() => signer.deriveAddress({ chain, publicKey: Uint8Array.from([2, ...new Array<number>(32).fill(0xff)]), curve: 'secp256k1' })).toThrow(/not a secp256k1 public key/);
    expect(() => signer.deriveAddress({ chain: 'eip155:1', publicKey: keys[0]!.publicKey, curve: 'secp256k1' })).toThrow(/does not serve/);
  });
});

describe('executors: who pays gas', () => {
  let server: Server;
  let relayerUrl = '';
  const received: Record<string, unknown>[] = [];
  let failNext = 0;
  beforeAll(async () => {
    // An external relayer with its own gas key (anvil dev account 2), not an owner.
    const relayerKey = privateKeyToAccount(devnet.accounts.funded[0]!.privateKey);
    const relayerWallet = createWalletClient({ account: relayerKey, transport: http(url), chain: { id: 31337, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } } });
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', async () => {
        const job = JSON.parse(body) as { to: Address; data: Hex };
        received.push(job);
        if (failNext > 0) {
          failNext--;
          res.writeHead(503).end('busy');
          return;
        }
        const hash = await relayerWallet.sendTransaction({ to: job.to, data: job.data });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tx_hash: hash }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    relayerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/relay`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('an external relayer carries execTransaction and pays its gas', async () => {
    const relayed = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, pollingInterval: 50, executor: { relayerUrl } } } });
    const relayerBefore = await balance(devnet.accounts.funded[0]!.address);
    const execBefore = await balance(executor.address);
    const dest = secpKey().address;
    const { outcome, result } = await execute({ destination: dest, amount: '31337' }, relayed);
    expect(outcome).toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
    expect(await balance(dest)).toBe(31337n);
    expect(received.at(-1)).toMatchObject({ chain, chain_id: 31337, to: SAFE, safe_tx_hash: result.txHash });
    expect(await balance(devnet.accounts.funded[0]!.address)).toBeLessThan(relayerBefore);
    expect(await balance(executor.address)).toBe(execBefore);
  });

  it('a busy relayer is a retriable rejection; an unreachable one too', async () => {
    const relayed = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, executor: { relayerUrl } } } });
    const built = await build({ amount: '5' });
    const r = relayed.assemble({ built, contributions: await signWith(built, [0, 1]), wallet });
    if (!r.ok) throw new Error('quorum');
    failNext = 1;
    await expect(relayed.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'rejected', code: 'relayer_error', retriable: true });
    const gone = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, executor: { relayerUrl: 'http://127.0.0.1:9/relay' } } } });
    await expect(gone.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'rejected', code: 'relayer_error', retriable: true });
  });

  it('without an executor nothing is sent', async () => {
    const keyless = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url } } });
    const built = await build({ amount: '5' });
    const r = keyless.assemble({ built, contributions: await signWith(built, [0, 1]), wallet });
    if (!r.ok) throw new Error('quorum');
    await expect(keyless.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'rejected', code: 'no_executor' });
    await expect(keyless.submit({ chain, blob: 'not json' })).resolves.toMatchObject({ status: 'rejected', code: 'malformed' });
    // A blob whose calldata is not the SafeTx its safe_tx_hash names is refused before anything is sent.
    const other = await build({ amount: '6' });
    const forged = canonicalize({ ...(JSON.parse(r.blob) as Record<string, unknown>), safe_tx_hash: `0x${other.digest}` });
    await expect(driver.submit({ chain, blob: forged })).resolves.toMatchObject({ status: 'rejected', code: 'malformed' });
    await expect(driver.submit({ chain, blob: canonicalize({ ...(JSON.parse(r.blob) as Record<string, unknown>), data: '0x12345678' }) })).resolves.toMatchObject({ code: 'malformed' });
  });
});

describe('configuration', () => {
  it('every JSON-RPC call goes through the injected fetch', async () => {
    const seen: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      seen.push(JSON.parse(String(init?.body)).method as string);
      return fetch(input, init);
    };
    const d = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url } }, fetch: counting });
    await d.fetchParams({ wallet });
    expect(seen).toEqual(expect.arrayContaining(['eth_chainId', 'eth_getCode', 'eth_call']));
  });

  it('refuses chains that are not eip155:<id>, non-http RPC URLs and bad token addresses', () => {
    expect(() => createEvmSafeDriver({ chains: {} })).toThrow(/at least one chain/);
    expect(() => createEvmSafeDriver({ chains: { 'evm:1': { rpcUrl: url } } })).toThrow(/not "eip155:<chain id>"/);
    expect(() => createEvmSafeDriver({ chains: { 'eip155:1': { rpcUrl: 'ws://x' } } })).toThrow(/rpcUrl/);
    expect(() => createEvmSafeDriver({ chains: { 'eip155:1': { rpcUrl: url, tokens: ['0x12'] } } })).toThrow(/tokens/);
    expect(driver.validateAddress({ chain: 'eip155:1', address: SAFE })).toMatchObject({ valid: false });
    expect(driver.validateAddress({ chain, address: SAFE.toLowerCase() })).toEqual({ valid: true, normalized: SAFE, network: null });
    expect(() => createEvmSafeSigner({ chains: ['eip155:0'] })).toThrow(/eip155/);
  });

  it('refuses wallets that are not Safes or whose owners are not weight-1 secp256k1 addresses', async () => {
    const params = await evmParams();
    const build1 = (w: unknown) => () => driver.buildPayload({ intent: intent({}), wallet: w as typeof wallet, params });
    const c = wallet.control.kind === 'evm_safe' ? wallet.control : (null as never);
    expect(build1({ ...wallet, control: { kind: 'native_multisig', address: SAFE, signers: c.owners, quorum: 2 } })).toThrow(/evm_safe wallets only/);
    expect(build1({ ...wallet, control: { ...c, owners: c.owners.map((o) => ({ ...o, weight: 2 })) } })).toThrow(/counts 1/);
    expect(build1({ ...wallet, control: { ...c, owners: c.owners.map((o) => ({ ...o, curve: 'ed25519' })) } })).toThrow(/secp256k1/);
    expect(build1({ ...wallet, control: { ...c, safe: '0x1' } })).toThrow(/control.safe/);
    expect(build1({ ...wallet, chain: 'eip155:5' })).toThrow(/does not serve/);
  });
});

describe('faults and decoding', () => {
  it('an unreachable RPC is a TransportError, never a silent default', async () => {
    const down = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: 'http://127.0.0.1:9' } } });
    await expect(down.fetchParams({ wallet })).rejects.toBeInstanceOf(TransportError);
    await expect(down.balances({ wallet })).rejects.toBeInstanceOf(TransportError);
  });

  it('confirm refuses a txHash that is not the payload safeTxHash', async () => {
    const built = await build({ amount: '1' });
    await expect(driver.confirm({ chain, txHash: `0x${'11'.repeat(32)}`, built })).rejects.toBeInstanceOf(ValidationError);
  });

  it('decodeSymbol reads ABI strings and bytes32, and nothing else', () => {
    const str = encodeAbiParameters([{ type: 'string' }], ['USDC']);
    expect(decodeSymbol(str)).toBe('USDC');
    expect(decodeSymbol(`0x${Buffer.from('MKR').toString('hex').padEnd(64, '0')}`)).toBe('MKR');
    expect(decodeSymbol('0x')).toBeNull();
    expect(decodeSymbol(undefined)).toBeNull();
    expect(decodeSymbol(`0x${'00'.repeat(32)}`)).toBeNull();
    expect(decodeSymbol(`0x${'01'.repeat(32)}`)).toBeNull(); // control characters
    expect(decodeSymbol(`0x${'ff'.repeat(64)}`)).toBeNull(); // an offset past the data
    expect(decodeSymbol('0x1234')).toBeNull();
  });
});
