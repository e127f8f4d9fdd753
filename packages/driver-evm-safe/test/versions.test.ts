/**
 * Safe v1.3.0, v1.4.1 and v1.5.0, plain and L2, on anvil with each version's own contracts at
 * its official addresses (from @safe-global/safe-deployments): the SafeTx hash is the contract's
 * own, a transfer executes and confirms, payloadFate tells applied from dead, and controlState
 * identifies the version by the singleton's code.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { compareControl, normalizeIntent, type BuiltPayload } from '@vault/sdk';
import { encodeFunctionData, keccak256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmSafeDriver, identifySingleton, knownSingletons, SAFE_ABI, safeContracts, SAFE_VERSIONS, type SafePayload } from '../src/index.js';
import { createEvmSafeSigner } from '../src/signer.js';
import { startEvmDevnet } from '../src/devnet/index.js';
import { confirmedBy, rawRpc, safeWallet, secpKey } from './helpers.js';

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());
const chain = devnet.chain;
const url = devnet.rpcUrl;
const driver = createEvmSafeDriver({
  chains: { [chain]: { rpcUrl: url, pollingInterval: 50, finality: 'latest' } },
  executor: privateKeyToAccount(devnet.accounts.executor.privateKey),
});
const signer = createEvmSafeSigner({ chains: [chain] });

export const VARIANTS = SAFE_VERSIONS.flatMap((version) => [false, true].map((l2) => ({ version, l2, name: `Safe v${version}${l2 ? ' L2' : ''}` })));

const confirmed = (txHash: string, built: BuiltPayload) => confirmedBy(driver, chain, txHash, built);

describe('the devnet deploys every version at its official address', () => {
  it('each singleton’s code hash is the registry’s, and identifies its version', async () => {
    for (const version of SAFE_VERSIONS) {
      const c = safeContracts(version, devnet.chainId);
      expect(devnet.safeVersions[version]).toEqual(c);
      for (const [address, l2] of [
        [c.singleton, false],
        [c.singletonL2, true],
      ] as const) {
        const code = (await rawRpc<Hex>(url, 'eth_getCode', [address, 'latest'])) as Hex;
        expect(identifySingleton(address, keccak256(code)), `${version} ${l2 ? 'L2' : ''}`).toMatchObject({ version, l2 });
      }
    }
  });

  it('a singleton with other code, or official code at another address, is not identified', () => {
    const v141 = knownSingletons().find((k) => k.version === '1.4.1' && !k.l2)!;
    expect(identifySingleton(v141.address, keccak256('0x6000'))).toBeNull();
    expect(identifySingleton('0x00000000000000000000000000000000000000aa', v141.codeHash)).toBeNull();
  });
});

describe.each(VARIANTS)('$name', ({ version, l2 }) => {
  it('hashes a SafeTx as the contract’s own getTransactionHash, executes it, and never calls the applied payload dead (v1.3.0 events are unindexed)', async () => {
    const keys = [secpKey(), secpKey(), secpKey()];
    const safe = await devnet.createSafe({ owners: keys.map((k) => k.address), threshold: 2, balance: 10n ** 18n, version, l2 });
    const wallet = safeWallet(chain, safe, keys, 2);
    expect(await rawRpc<Hex>(url, 'eth_call', [{ to: safe, data: encodeFunctionData({ abi: SAFE_ABI, functionName: 'VERSION' }) }, 'latest'])).toContain(
      Buffer.from(version).toString('hex'),
    );

    const destination = secpKey().address;
    const params = await driver.fetchParams({ wallet: wallet });
    const build = (amount: string) => driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination, amount }), wallet, params });
    const built = build('1000');
    const rival = build('2000');
    const p = built.payload as SafePayload;
    const onChain = await rawRpc<Hex>(url, 'eth_call', [
      {
        to: safe,
        data: encodeFunctionData({
          abi: SAFE_ABI,
          functionName: 'getTransactionHash',
          args: [p.tx.to, BigInt(p.tx.value), p.tx.data, p.tx.operation, BigInt(p.tx.safeTxGas), BigInt(p.tx.baseGas), BigInt(p.tx.gasPrice), p.tx.gasToken, p.tx.refundReceiver, BigInt(p.tx.nonce)],
        }),
      },
      'latest',
    ]);
    expect(onChain).toBe(`0x${built.digest}`);

    const sigs = await Promise.all([0, 2].map((i) => signer.signPayload({ built, key: keys[i]!, signerAddress: keys[i]!.address })));
    const assembled = driver.assemble({ built: built, contributions: sigs, wallet: wallet });
    if (!assembled.ok) throw new Error('no quorum');
    expect(await driver.submit({ chain, blob: assembled.blob })).toMatchObject({ status: 'submitted' });
    expect(await confirmed(assembled.txHash, built)).toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
    expect(BigInt(await rawRpc<string>(url, 'eth_getBalance', [destination, 'latest']))).toBe(1000n);

    // The double-spend rule on this version's events: applied is applied, the rival is dead.
    expect(await driver.payloadFate({ chain, built: built })).toMatchObject({ fate: 'applied' });
    expect(await driver.payloadFate({ chain, built: rival })).toMatchObject({ fate: 'dead', code: 'nonce_consumed' });
    // And with the execution no longer remembered by this driver instance: read from the chain.
    const fresh = createEvmSafeDriver({ chains: { [chain]: { rpcUrl: url, pollingInterval: 50, finality: 'latest' } } });
    expect(await fresh.confirm({ chain, txHash: assembled.txHash, built: built })).toMatchObject({ status: 'confirmed' });
  });

  it('controlState identifies the version and singleton by code, and reconcile is clean against them', async () => {
    const keys = [secpKey(), secpKey()];
    const safe = await devnet.createSafe({ owners: keys.map((k) => k.address), threshold: 1, version, l2 });
    const c = safeContracts(version, devnet.chainId);
    const wallet = safeWallet(chain, safe, keys, 1);
    const state = await driver.controlState({ wallet: wallet });
    expect(state.settings).toMatchObject({ version, singleton: l2 ? c.singletonL2 : c.singleton, fallback_handler: c.fallbackHandler, modules: [] });
    expect(state.bypasses).toEqual([]);
    const pinned = { ...wallet, control: { ...wallet.control, version, singleton: (l2 ? c.singletonL2 : c.singleton) as Address, fallback_handler: c.fallbackHandler } };
    expect(compareControl(pinned, state)).toMatchObject({ clean: true });
  });
});
