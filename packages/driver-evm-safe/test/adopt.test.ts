/**
 * `vault provision` with a chosen Safe version, and adoption of Safes a team already has: a plain
 * Safe is adopted and executes; a module or a guard (ways to move or block funds without the
 * owners) is refused until the operator names it; a module enabled after adoption is drift.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { compareControl, normalizeIntent, RefusedError, ValidationError, type BuiltPayload, type IntentRequest, type ProvisionRequest, type WalletDescriptor } from '@vault/sdk';
import { encodeFunctionData, getAddress, parseAbi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmSafeDriver, GUARD_SLOT, safeContracts, type SafeVersion } from '../src/index.js';
import { createEvmSafeSigner } from '../src/signer.js';
import { createEvmSafeProvisioner } from '../src/provision.js';
import { safeVersionBytecode, startEvmDevnet } from '../src/devnet/index.js';
import { confirmedBy, rawRpc, safeWallet, secpKey } from './helpers.js';

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());
const chain = devnet.chain;
const url = devnet.rpcUrl;
const chains = { [chain]: { rpcUrl: url, pollingInterval: 50, finality: 'latest' as const } };
const driver = createEvmSafeDriver({ chains, executor: privateKeyToAccount(devnet.accounts.executor.privateKey) });
const signer = createEvmSafeSigner({ chains: [chain] });
const provisioner = createEvmSafeProvisioner({ chains });
const MODULE_ABI = parseAbi(['function enableModule(address module)', 'function setGuard(address guard)', 'function setFallbackHandler(address handler)']);

const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
type Key = ReturnType<typeof secpKey>;
const membersOf = (keys: readonly Key[]) => keys.map((k) => ({ address: k.address, weight: 1, curve: 'secp256k1' as const }));
const request = (keys: readonly Key[], over: Partial<ProvisionRequest> = {}): ProvisionRequest =>
  json({ wallet: `w-${keys[0]!.address.slice(2, 10)}`, chain, members: membersOf(keys), quorum: 2, funding: { kind: 'faucet', url }, fundAmount: '0', ...over });

async function failure(p: Promise<unknown>): Promise<Error & { path?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}

const confirmed = (txHash: string, built: BuiltPayload) => confirmedBy(driver, chain, txHash, built);

/** Runs one intent through the driver with owners 0 and 1, to confirmation. */
async function execute(wallet: WalletDescriptor, keys: readonly Key[], req: Partial<IntentRequest>) {
  const built = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: secpKey().address, amount: '0', ...req }), wallet, params: await driver.fetchParams({ wallet: wallet }) });
  const sigs = await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: keys[i]!, signerAddress: keys[i]!.address })));
  const assembled = driver.assemble({ built: built, contributions: sigs, wallet: wallet });
  if (!assembled.ok) throw new Error('no quorum');
  expect(await driver.submit({ chain, blob: assembled.blob })).toMatchObject({ status: 'submitted' });
  return confirmed(assembled.txHash, built);
}

/** A Safe the team already has (not deployed by vault), of a given version. */
async function existingSafe(version: SafeVersion = '1.3.0') {
  const keys = [secpKey(), secpKey(), secpKey()];
  const safe = await devnet.createSafe({ owners: keys.map((k) => k.address), threshold: 2, balance: 10n ** 18n, version });
  return { keys, safe, wallet: safeWallet(chain, safe, keys, 2) };
}

/** The Safe enables a module through its own signed SafeTx (a contract_call to itself). */
const enableModule = (s: Awaited<ReturnType<typeof existingSafe>>, module: Address) =>
  execute(s.wallet, s.keys, { destination: s.safe, operation: { op: 'contract_call', data_hex: encodeFunctionData({ abi: MODULE_ABI, functionName: 'enableModule', args: [module] }) } });

describe('provision deploys the version asked for', () => {
  it.each([
    ['1.3.0', false],
    ['1.5.0', true],
  ] as const)('Safe v%s (l2: %s): the descriptor pins version, singleton and fallback handler; a re-run sends nothing', async (version, l2) => {
    const keys = [secpKey(), secpKey(), secpKey()];
    const r = await provisioner.provision(request(keys, { options: { safe_version: version, l2 } }));
    const c = safeContracts(version, devnet.chainId);
    expect(r.changed).toBe(true);
    expect(r.descriptor.control).toMatchObject({ version, singleton: l2 ? c.singletonL2 : c.singleton, fallback_handler: c.fallbackHandler });
    expect(r.descriptor.control).not.toHaveProperty('modules');
    const again = await provisioner.provision(request(keys, { options: { safe_version: version, l2 }, existing: r.descriptor }));
    expect(again).toMatchObject({ changed: false, transactions: [] });
    expect(compareControl(r.descriptor, await driver.controlState({ wallet: r.descriptor }))).toMatchObject({ clean: true });
  });

  it('options are validated, each refusal naming its field', async () => {
    const keys = [secpKey(), secpKey()];
    const cases: [Record<string, unknown>, string][] = [
      [{ safe_version: '1.2.0' }, 'options.safe_version'],
      [{ l2: 'yes' }, 'options.l2'],
      [{ salt: 1 }, 'options.salt'],
      [{ adopt: 'not-an-address' }, 'options.adopt'],
      [{ adopt: keys[0]!.address, safe_version: '1.3.0' }, 'options.adopt'],
      [{ allow_modules: [keys[0]!.address] }, 'options.allow_modules'],
      [{ adopt: keys[0]!.address, allow_modules: ['0x0000000000000000000000000000000000000001'] }, 'options.allow_modules.0'],
    ];
    for (const [options, path] of cases) {
      const err = await failure(provisioner.provision(request(keys, { options })));
      expect(err, JSON.stringify(options)).toBeInstanceOf(ValidationError);
      expect(err.path, JSON.stringify(options)).toBe(path);
    }
  });
});

describe('adopting an existing Safe', () => {
  it('a plain Safe is adopted as the chain shows it, sending nothing, and then executes', async () => {
    const s = await existingSafe('1.3.0');
    const before = await rawRpc<string>(url, 'eth_blockNumber');
    const r = await provisioner.provision(request(s.keys, { wallet: 'adopted', options: { adopt: s.safe } }));
    expect(r).toMatchObject({ changed: false, transactions: [] });
    expect(await rawRpc<string>(url, 'eth_blockNumber')).toBe(before);
    expect(r.descriptor.control).toMatchObject({ kind: 'evm_safe', safe: s.safe, threshold: 2, version: '1.3.0', singleton: safeContracts('1.3.0', devnet.chainId).singleton });
    const destination = secpKey().address;
    expect(await execute(r.descriptor, s.keys, { destination, amount: '5000' })).toMatchObject({ status: 'confirmed' });
    expect(BigInt(await rawRpc<string>(url, 'eth_getBalance', [destination, 'latest']))).toBe(5000n);
    // A re-run with the descriptor it wrote changes nothing.
    expect(await provisioner.provision(request(s.keys, { wallet: 'adopted', options: { adopt: s.safe }, existing: r.descriptor }))).toMatchObject({ changed: false });
  });

  it('owners or threshold other than requested are refused, naming each difference', async () => {
    const s = await existingSafe('1.4.1');
    const err = await failure(provisioner.provision(request([s.keys[0]!, secpKey()], { options: { adopt: s.safe } })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toMatch(/owners requested but not on chain/);
    expect(err.message).toMatch(/owners on chain but not requested/);
  });

  it('attack: adopting a Safe with an enabled module, which moves funds without any owner', async () => {
    const s = await existingSafe('1.3.0');
    const module = secpKey().address;
    expect(await enableModule(s, module)).toMatchObject({ status: 'confirmed' });
    const err = await failure(provisioner.provision(request(s.keys, { options: { adopt: s.safe } })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toContain(`module(s) enabled on chain and not allowed: ${module}`);
    // Named by the operator: adopted, with the module recorded so reconcile watches it.
    const r = await provisioner.provision(request(s.keys, { options: { adopt: s.safe, allow_modules: [module.toLowerCase()] } }));
    expect(r.descriptor.control).toMatchObject({ modules: [module] });
    const state = await driver.controlState({ wallet: r.descriptor });
    expect(compareControl(r.descriptor, state)).toMatchObject({ clean: true });
    expect(state.bypasses).toEqual([{ kind: 'module', address: module }]);
  });

  it('attack: adopting a Safe with a transaction guard, which can block every execution', async () => {
    const s = await existingSafe('1.3.0');
    const guard = secpKey().address;
    // v1.3.0's setGuard takes any address (v1.4.0 added an ERC-165 check); after this the Safe
    // executes nothing, which is exactly why a guard must be named.
    expect(await execute(s.wallet, s.keys, { destination: s.safe, operation: { op: 'contract_call', data_hex: encodeFunctionData({ abi: MODULE_ABI, functionName: 'setGuard', args: [guard] }) } })).toMatchObject({
      status: 'confirmed',
    });
    expect(getAddress(`0x${(await rawRpc<Hex>(url, 'eth_getStorageAt', [s.safe, GUARD_SLOT, 'latest'])).slice(26)}`)).toBe(guard);
    const err = await failure(provisioner.provision(request(s.keys, { options: { adopt: s.safe } })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toContain(`guard on chain ${guard}, not allowed`);
    const r = await provisioner.provision(request(s.keys, { options: { adopt: s.safe, allow_guard: guard } }));
    expect(r.descriptor.control).toMatchObject({ guard });
  });

  it('attack: a Safe whose singleton is an unofficial copy is refused, whatever VERSION() says', async () => {
    // The v1.4.1 singleton's own bytecode, deployed by plain CREATE: same code, unofficial address.
    const deployer = privateKeyToAccount(devnet.accounts.funded[3]!.privateKey);
    const hash = await rawRpc<Hex>(url, 'eth_sendTransaction', [{ from: deployer.address, data: safeVersionBytecode('1.4.1', 'singleton'), gas: '0x7a1200' }]);
    // Mined when the receipt exists (automine, but not necessarily by the time the send answers).
    const receipt = await devnet.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (!receipt.contractAddress) throw new Error('the copy deployed no contract');
    const s = await existingSafe('1.4.1');
    await rawRpc(url, 'anvil_setStorageAt', [s.safe, '0x0', `0x${receipt.contractAddress.slice(2).toLowerCase().padStart(64, '0')}`]);
    const err = await failure(provisioner.provision(request(s.keys, { options: { adopt: s.safe } })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toMatch(/runs code that is not an official Safe .* \(VERSION\(\) says "1\.4\.1"\)/);
  });

  it('a module enabled after adoption is drift in reconcile and a way around the quorum', async () => {
    const s = await existingSafe('1.5.0');
    const r = await provisioner.provision(request(s.keys, { options: { adopt: s.safe } }));
    expect(compareControl(r.descriptor, await driver.controlState({ wallet: r.descriptor }))).toMatchObject({ clean: true });
    const module = secpKey().address;
    await enableModule({ ...s, wallet: r.descriptor }, module);
    const state = await driver.controlState({ wallet: r.descriptor });
    const cmp = compareControl(r.descriptor, state);
    expect(cmp.clean).toBe(false);
    expect(cmp.drift).toEqual([{ field: 'modules', expected: [], actual: [module], ok: false }]);
    expect(state.bypasses).toEqual([{ kind: 'module', address: module }]);
  });

  it('a new fallback handler, or an upgrade to another singleton, after provisioning is drift', async () => {
    const keys = [secpKey(), secpKey(), secpKey()];
    const r = await provisioner.provision(request(keys, { options: { safe_version: '1.3.0' }, fundAmount: '0' }));
    const handler = secpKey().address;
    const data_hex = encodeFunctionData({ abi: MODULE_ABI, functionName: 'setFallbackHandler', args: [handler] });
    const safe = (r.descriptor.control as { safe: Address }).safe;
    expect(await execute(r.descriptor, keys, { destination: safe, operation: { op: 'contract_call', data_hex } })).toMatchObject({ status: 'confirmed' });
    expect(compareControl(r.descriptor, await driver.controlState({ wallet: r.descriptor })).drift.map((d) => d.field)).toEqual(['fallback_handler']);
    // An upgrade rewrites slot 0 (what SafeMigration's delegatecall does): the version moves with it.
    const v141 = safeContracts('1.4.1', devnet.chainId).singleton;
    await rawRpc(url, 'anvil_setStorageAt', [safe, '0x0', `0x${v141.slice(2).toLowerCase().padStart(64, '0')}`]);
    const drift = compareControl(r.descriptor, await driver.controlState({ wallet: r.descriptor })).drift;
    expect(drift.map((d) => [d.field, d.actual])).toEqual([
      ['version', '1.4.1'],
      ['singleton', v141],
      ['fallback_handler', handler],
    ]);
  });
});
