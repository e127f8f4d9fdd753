import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import {
  RefusedError,
  TransportError,
  ValidationError,
  WalletDescriptorSchema,
  normalizeIntent,
  type DriverPlugin,
  type ProvisionRequest,
  type WalletDescriptor,
} from '@vault/sdk';
import { encodeAbiParameters, encodeFunctionData, getAddress, keccak256, toFunctionSelector, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createDriver,
  createProvisioner,
  createSigner,
  predictSafeAddress,
  provisionSaltNonce,
  encodeSetup,
  SAFE_ABI,
  SAFE_V141_ADDRESSES,
  type EvmSafePluginOptions,
} from '../src/index.js';
import { startEvmDevnet } from '../src/devnet/index.js';
import { createEvmSafeProvisioner } from '../src/provision.js';
import { rawRpc, secpKey } from './helpers.js';

// The reference servers' and `vault provision`'s contract, checked by the compiler.
({ createDriver, createSigner, createProvisioner }) satisfies DriverPlugin<EvmSafePluginOptions>;

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());

const chain = devnet.chain;
const url = devnet.rpcUrl;
const EXECUTOR_ENV = 'VAULT_TEST_PROVISION_EXECUTOR_KEY';
const FUNDER_ENV = 'VAULT_TEST_PROVISION_FUNDER_KEY';
process.env[EXECUTOR_ENV] = devnet.accounts.executor.privateKey;
afterAll(() => {
  delete process.env[EXECUTOR_ENV];
  delete process.env[FUNDER_ENV];
});

/** What an operator writes in a JSON file, through JSON and back. */
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const options: EvmSafePluginOptions = json({
  chains: [{ chain_id: devnet.chainId, chain, rpc_url: url, finality: 'latest', polling_interval_ms: 50 }],
  executor_key_env: EXECUTOR_ENV,
});
const provisioner = await createProvisioner(json(options));
const driver = createDriver(json(options));
const signer = await createSigner(json(options));

const balance = async (a: string) => BigInt(await rawRpc<string>(url, 'eth_getBalance', [a, 'latest']));
const blockNumber = async () => BigInt(await rawRpc<string>(url, 'eth_blockNumber'));
const txCount = async (a: string) => BigInt(await rawRpc<string>(url, 'eth_getTransactionCount', [a, 'latest']));
const rawCall = async (to: string, data: Hex) => rawRpc<Hex>(url, 'eth_call', [{ to, data }, 'latest']);
const ownersOnChain = async (safe: string) => {
  const out = await rawCall(safe, encodeFunctionData({ abi: SAFE_ABI, functionName: 'getOwners' }));
  // ABI address[]: offset, length, then one word per owner.
  const words = out.slice(2).match(/.{64}/g) ?? [];
  return words.slice(2).map((w) => getAddress(`0x${w.slice(24)}`));
};
const thresholdOnChain = async (safe: string) => Number(BigInt(await rawCall(safe, encodeFunctionData({ abi: SAFE_ABI, functionName: 'getThreshold' }))));

const keys = [secpKey(), secpKey(), secpKey()];
const members = keys.map((k, i) => ({ address: k.address, weight: 1, curve: 'secp256k1' as const, ...(i === 0 && { label: 'alice' }) }));
const request = (over: Partial<ProvisionRequest> = {}): ProvisionRequest =>
  json({ wallet: 'treasury', chain, members, quorum: 2, funding: { kind: 'faucet', url }, fundAmount: '1000000000000000000', ...over });

/** Errors as values, to look at their class and text. */
async function failure(p: Promise<unknown>): Promise<Error & { path?: string; data?: Record<string, unknown> | null }> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}

let first: Awaited<ReturnType<typeof provisioner.provision>>;

describe('provisioning a 2-of-3 Safe from a faucet', () => {
  it('deploys the Safe at its deterministic address, funds it, and returns a descriptor controlState reproduces', async () => {
    first = await provisioner.provision(request());
    const d = first.descriptor;
    expect(first.changed).toBe(true);
    expect(first.transactions.map((t) => t.what.split(' ')[0])).toEqual(['deploy', 'fund']);
    expect(WalletDescriptorSchema.parse(d)).toEqual(d);
    if (d.control.kind !== 'evm_safe') throw new Error('kind');
    // The address is the CREATE2 address of (chain, wallet id, owners, threshold), computed independently.
    const proxyCode = await rawCall(SAFE_V141_ADDRESSES.safeProxyFactory, toFunctionSelector('proxyCreationCode()'));
    const creationCode = `0x${proxyCode.slice(2 + 128, 2 + 128 + Number(BigInt(`0x${proxyCode.slice(66, 130)}`)) * 2)}` as Hex;
    const predicted = predictSafeAddress({ proxyCreationCode: creationCode, initializer: encodeSetup(keys.map((k) => k.address), 2), saltNonce: provisionSaltNonce(chain, 'treasury') });
    expect(d.control.safe).toBe(predicted);
    expect(d).toEqual({
      wallet: 'treasury',
      chain,
      control: {
        kind: 'evm_safe',
        safe: predicted,
        owners: [
          { address: keys[0]!.address, curve: 'secp256k1', weight: 1, label: 'alice' },
          { address: keys[1]!.address, curve: 'secp256k1', weight: 1, label: 'member-2' },
          { address: keys[2]!.address, curve: 'secp256k1', weight: 1, label: 'member-3' },
        ],
        threshold: 2,
        // Pinned, so an upgrade or another fallback handler shows as drift in reconcile.
        version: '1.4.1',
        singleton: SAFE_V141_ADDRESSES.safe,
        fallback_handler: SAFE_V141_ADDRESSES.compatibilityFallbackHandler,
      },
    });
    // Raw reads, not the driver: the owners, threshold and balance on chain.
    expect(await ownersOnChain(predicted)).toEqual(keys.map((k) => k.address));
    expect(await thresholdOnChain(predicted)).toBe(2);
    expect(await balance(predicted)).toBe(10n ** 18n);
    for (const t of first.transactions) {
      expect(await rawRpc<{ status: string }>(url, 'eth_getTransactionReceipt', [t.txHash])).toMatchObject({ status: '0x1' });
    }
    // Reconcile: the driver's own controlState reproduces the descriptor exactly.
    const state = await driver.controlState({ wallet: d });
    expect(state.address).toBe(d.control.safe);
    expect(state.members).toEqual(d.control.owners.map((o) => ({ address: o.address, weight: o.weight })));
    expect(state.quorum).toBe(d.control.threshold);
  });

  it('the provisioned Safe moves funds: build, sign at quorum, assemble, submit, confirm', async () => {
    const wallet = first.descriptor;
    const destination = secpKey().address;
    const intent = normalizeIntent({ wallet: wallet.wallet, destination, amount: '123456789' });
    const built = driver.buildPayload({ intent, wallet, params: await driver.fetchParams({ wallet }) });
    const contributions = await Promise.all([1, 2].map((i) => signer.signPayload({ built, key: keys[i]!, signerAddress: keys[i]!.address })));
    const short = driver.assemble({ built, contributions: contributions.slice(0, 1), wallet });
    expect(short).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: 1, quorum: 2 });
    const assembled = driver.assemble({ built, contributions, wallet });
    if (!assembled.ok) throw new Error('quorum');
    expect(await driver.submit({ chain, blob: assembled.blob })).toMatchObject({ status: 'submitted' });
    let outcome = await driver.confirm({ chain, txHash: assembled.txHash, built });
    for (let i = 0; i < 100 && outcome.status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 30));
      outcome = await driver.confirm({ chain, txHash: assembled.txHash, built });
    }
    expect(outcome).toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
    expect(await balance(destination)).toBe(123456789n);
  });

  it('a re-run with the existing descriptor sends nothing and returns the same descriptor', async () => {
    const head = await blockNumber();
    const again = await provisioner.provision(request({ existing: first.descriptor }));
    expect(again).toEqual({ descriptor: first.descriptor, changed: false, transactions: [] });
    expect(await blockNumber(), 'no transaction was mined').toBe(head);
  });

  it('a re-run without existing finds the Safe at the deterministic address and sends nothing', async () => {
    const head = await blockNumber();
    const again = await provisioner.provision(request());
    expect(again).toEqual({ descriptor: first.descriptor, changed: false, transactions: [] });
    expect(await blockNumber()).toBe(head);
  });

  it('a re-run with the same members in another order and new labels sends nothing; owners keep the Safe order', async () => {
    const reordered = [members[2]!, members[0]!, { ...members[1]!, label: 'bob' }];
    const again = await provisioner.provision(request({ members: reordered, existing: first.descriptor }));
    expect(again.changed).toBe(false);
    if (again.descriptor.control.kind !== 'evm_safe') throw new Error('kind');
    expect(again.descriptor.control.owners.map((o) => [o.address, o.label])).toEqual([
      [keys[0]!.address, 'alice'],
      [keys[1]!.address, 'bob'],
      // A default label is `member-<i>` by the member's place in this request.
      [keys[2]!.address, 'member-1'],
    ]);
  });
});

describe('re-runs that still have something to do', () => {
  it('an existing descriptor whose Safe the chain lost (a restarted devnet) at the address this request deploys to: deployed again', async () => {
    const creation = await rawCall(SAFE_V141_ADDRESSES.safeProxyFactory, toFunctionSelector('proxyCreationCode()'));
    const proxyCreationCode = `0x${creation.slice(2 + 128, 2 + 128 + Number(BigInt(`0x${creation.slice(66, 130)}`)) * 2)}` as Hex;
    const safe = predictSafeAddress({ proxyCreationCode, initializer: encodeSetup(keys.map((k) => k.address), 2), saltNonce: provisionSaltNonce(chain, 'reborn') });
    const existing = { ...first.descriptor, wallet: 'reborn', control: { ...(first.descriptor.control as Extract<WalletDescriptor['control'], { kind: 'evm_safe' }>), safe } };
    expect(await rawRpc<Hex>(url, 'eth_getCode', [safe, 'latest'])).toBe('0x');
    const r = await provisioner.provision(request({ wallet: 'reborn', existing, fundAmount: '0' }));
    expect(r.changed).toBe(true);
    expect(r.descriptor).toEqual(existing);
    expect(await ownersOnChain(safe)).toEqual(keys.map((k) => k.address));
  });

  it('a deployment the chain refuses (an RPC that hid the Safe already there) fails at the deploy step with the revert reason', async () => {
    const safe = (first.descriptor.control as { safe: string }).safe.toLowerCase();
    // A lagging RPC: eth_getCode says nothing is at the Safe's address; the chain itself knows better.
    const stale: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: unknown[] };
      if (body.method === 'eth_getCode' && String(body.params[0]).toLowerCase() === safe) {
        return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: '0x' }), { headers: { 'content-type': 'application/json' } });
      }
      return fetch(input, init);
    };
    const p = createEvmSafeProvisioner({ chains: { [chain]: { rpcUrl: url, pollingInterval: 50 } }, fetch: stale });
    const head = await blockNumber();
    const err = await failure(p.provision(request()));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toBe('provision step deploy: reverted (Create2 call failed)');
    expect(await blockNumber()).toBe(head);
  });
});

describe('a Safe that differs from the request is an error naming the difference, never fixed', () => {
  it('another threshold', async () => {
    const head = await blockNumber();
    const err = await failure(provisioner.provision(request({ quorum: 3, existing: first.descriptor })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toContain('threshold on chain 2, requested 3');
    expect(err.data?.['differences']).toEqual(['threshold on chain 2, requested 3']);
    expect(await blockNumber()).toBe(head);
    expect(await thresholdOnChain((first.descriptor.control as { safe: string }).safe)).toBe(2);
  });

  it('another owner', async () => {
    const stranger = secpKey().address;
    const err = await failure(provisioner.provision(request({ members: [...members.slice(0, 2), { address: stranger, weight: 1, curve: 'secp256k1' }], existing: first.descriptor })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toContain(`owners requested but not on chain: ${stranger}`);
    expect(err.message).toContain(`owners on chain but not requested: ${keys[2]!.address}`);
  });

  it('an existing descriptor that names another Safe (the devnet default one)', async () => {
    const other: WalletDescriptor = { ...first.descriptor, control: { ...(first.descriptor.control as Extract<WalletDescriptor['control'], { kind: 'evm_safe' }>), safe: devnet.safe.address } };
    const err = await failure(provisioner.provision(request({ existing: other })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toContain(`Safe ${devnet.safe.address}`);
    expect(err.message).toContain('owners requested but not on chain');
  });

  it('an existing descriptor whose Safe is not on the chain, at an address this request would not deploy to', async () => {
    const gone = { ...first.descriptor, control: { ...(first.descriptor.control as Extract<WalletDescriptor['control'], { kind: 'evm_safe' }>), safe: secpKey().address } };
    const head = await blockNumber();
    const err = await failure(provisioner.provision(request({ existing: gone })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toContain('no Safe at existing.control.safe');
    expect(await blockNumber()).toBe(head);
  });

  it('a guard or a module added since is another way to move funds: named', async () => {
    const wallet = 'guarded';
    const r = await provisioner.provision(request({ wallet, fundAmount: '0' }));
    expect(r.transactions.map((t) => t.what.split(' ')[0])).toEqual(['deploy']);
    const safe = (r.descriptor.control as { safe: string }).safe;
    const guard = secpKey().address;
    const word = (a: string) => `0x${a.slice(2).toLowerCase().padStart(64, '0')}`;
    await rawRpc(url, 'anvil_setStorageAt', [safe, '0x4a204f620c8c5ccdca3fd54d003badd85ba500436a431f0cbda4f558c93c34c8', word(guard)]);
    let err = await failure(provisioner.provision(request({ wallet, existing: r.descriptor })));
    expect(err.message).toContain(`guard on chain ${guard}, not allowed`);
    await rawRpc(url, 'anvil_setStorageAt', [safe, '0x4a204f620c8c5ccdca3fd54d003badd85ba500436a431f0cbda4f558c93c34c8', word('0x00')]);
    // modules is mapping(address => address) at slot 1: SENTINEL -> module -> SENTINEL.
    const module = secpKey().address;
    const slot = (key: string) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [key as Address, 1n]));
    await rawRpc(url, 'anvil_setStorageAt', [safe, slot('0x0000000000000000000000000000000000000001'), word(module)]);
    await rawRpc(url, 'anvil_setStorageAt', [safe, slot(module), word('0x0000000000000000000000000000000000000001')]);
    err = await failure(provisioner.provision(request({ wallet })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toContain(`module(s) enabled on chain and not allowed: ${module}`);
  });
});

describe('funding', () => {
  it('key_env: a funded operator key pays the deployment and the funding; its key is read from the variable', async () => {
    const funder = devnet.accounts.funded[0]!;
    process.env[FUNDER_ENV] = funder.privateKey;
    const before = await balance(funder.address);
    const nonce = await txCount(funder.address);
    const r = await provisioner.provision(request({ wallet: 'ops', quorum: 1, funding: { kind: 'key_env', env: FUNDER_ENV }, fundAmount: '5000' }));
    expect(r.changed).toBe(true);
    expect(r.transactions).toHaveLength(2);
    const safe = (r.descriptor.control as { safe: string }).safe;
    expect(await balance(safe)).toBe(5000n);
    expect(await txCount(funder.address)).toBe(nonce + 2n);
    expect(await balance(funder.address)).toBeLessThan(before - 5000n);
    expect(await thresholdOnChain(safe)).toBe(1);
    // A re-run (same funding) sends nothing and spends nothing.
    const again = await provisioner.provision(request({ wallet: 'ops', quorum: 1, funding: { kind: 'key_env', env: FUNDER_ENV }, fundAmount: '5000', existing: r.descriptor }));
    expect(again.changed).toBe(false);
    expect(await txCount(funder.address)).toBe(nonce + 2n);
  });

  it('key_env: an unset variable, or one without a key, is a ValidationError naming funding.env and never its value', async () => {
    const unset = await failure(provisioner.provision(request({ wallet: 'k1', funding: { kind: 'key_env', env: 'VAULT_TEST_PROVISION_UNSET' } })));
    expect(unset).toBeInstanceOf(ValidationError);
    expect(unset.path).toBe('funding.env');
    expect(unset.message).toContain('VAULT_TEST_PROVISION_UNSET');
    for (const value of ['not-a-key', `0x${'00'.repeat(32)}`]) {
      process.env[FUNDER_ENV] = value;
      const err = await failure(provisioner.provision(request({ wallet: 'k2', funding: { kind: 'key_env', env: FUNDER_ENV } })));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.path).toBe('funding.env');
      expect(JSON.stringify({ m: err.message, d: err.data })).not.toContain(value);
    }
  });

  it('key_env: an unfunded key fails at the deploy step, naming it, without the key', async () => {
    const key = generatePrivateKey();
    process.env[FUNDER_ENV] = key;
    const err = await failure(provisioner.provision(request({ wallet: 'poor', funding: { kind: 'key_env', env: FUNDER_ENV } })));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.message).toMatch(/^provision step deploy: /);
    expect(err.data?.['step']).toBe('deploy');
    expect(err.message).not.toContain(key.slice(2));
    expect(await txCount(privateKeyToAccount(key).address)).toBe(0n);
  });

  it('faucet: an RPC of another chain is refused (funding.url); one that is down or refuses anvil_setBalance fails at fund_deployer', async () => {
    let mode: 'other' | 'refuse' = 'other';
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        res.setHeader('content-type', 'application/json');
        if (method === 'eth_chainId') res.end(JSON.stringify({ jsonrpc: '2.0', id, result: mode === 'other' ? '0x1' : `0x${devnet.chainId.toString(16)}` }));
        else res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'method not found' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const fake = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const other = await failure(provisioner.provision(request({ wallet: 'f1', funding: { kind: 'faucet', url: fake } })));
      expect(other).toBeInstanceOf(ValidationError);
      expect(other.path).toBe('funding.url');
      mode = 'refuse';
      const refused = await failure(provisioner.provision(request({ wallet: 'f1', funding: { kind: 'faucet', url: fake } })));
      expect(refused).toBeInstanceOf(TransportError);
      expect(refused.message).toContain('provision step fund_deployer');
      expect(refused.message).toContain('anvil_setBalance');
    } finally {
      await new Promise((r) => server.close(r));
    }
    const down = await failure(provisioner.provision(request({ wallet: 'f1', funding: { kind: 'faucet', url: 'http://127.0.0.1:9/' } })));
    expect(down).toBeInstanceOf(TransportError);
    expect(down.message).toContain('provision step fund_deployer');
  });
});

describe('the chain must be the one configured, with Safe v1.4.1 deployed', () => {
  it('an RPC that serves another chain fails the check step', async () => {
    const wrong = await createProvisioner(json({ chains: [{ chain_id: 1, rpc_url: url, polling_interval_ms: 50 }] }));
    expect(wrong.chains).toEqual(['eip155:1']);
    const err = await failure(wrong.provision(request({ chain: 'eip155:1' })));
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toBe(`provision step check: the RPC at ${url} serves chain ${devnet.chainId}, not 1`);
  });

  it('an unreachable RPC fails the check step', async () => {
    const down = await createProvisioner(json({ chains: [{ chain_id: devnet.chainId, rpc_url: 'http://127.0.0.1:9', polling_interval_ms: 50 }] }));
    const err = await failure(down.provision(request()));
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toMatch(/^provision step check: /);
  });

  it('a chain without the Safe factory fails the check step', async () => {
    const factory = SAFE_V141_ADDRESSES.safeProxyFactory;
    const code = await rawRpc<Hex>(url, 'eth_getCode', [factory, 'latest']);
    await rawRpc(url, 'anvil_setCode', [factory, '0x']);
    try {
      const err = await failure(provisioner.provision(request({ wallet: 'nofactory' })));
      expect(err).toBeInstanceOf(RefusedError);
      expect(err.message).toContain(`provision step check: Safe v1.4.1 SafeProxyFactory is not deployed on ${chain}`);
    } finally {
      await rawRpc(url, 'anvil_setCode', [factory, code]);
    }
  });
});

describe('the salt nonce is a documented function of (chain, wallet id)', () => {
  it('uint256 of sha256 over the JCS JSON {chain, domain, wallet}', () => {
    const expected = BigInt(`0x${createHash('sha256').update('{"chain":"eip155:31337","domain":"vault/evm-safe/provision/v1","wallet":"treasury"}').digest('hex')}`);
    expect(provisionSaltNonce('eip155:31337', 'treasury')).toBe(expected);
    expect(provisionSaltNonce('eip155:1', 'treasury')).not.toBe(expected);
    expect(provisionSaltNonce('eip155:31337', 'treasury2')).not.toBe(expected);
  });

  it('another wallet id with the same owners is another Safe', async () => {
    const r = await provisioner.provision(request({ wallet: 'treasury-2', fundAmount: '0' }));
    expect(r.changed).toBe(true);
    expect((r.descriptor.control as { safe: string }).safe).not.toBe((first.descriptor.control as { safe: string }).safe);
  });
});

describe('a bad request is a ValidationError naming the field', () => {
  const existing = () => first.descriptor;
  const lower = keys[0]!.address.toLowerCase();
  // The checksummed address with the case of its first letter flipped: a mistyped checksum.
  const mixedBad = keys[0]!.address.replace(/(?<=^0x[0-9]*)[a-fA-F]/, (c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()));
  const cases: [string, () => unknown, string][] = [
    ['no wallet id', () => request({ wallet: '' }), 'wallet'],
    ['a chain not served', () => request({ chain: 'eip155:1' }), 'chain'],
    ['no members', () => request({ members: [] }), 'members'],
    ['members not a list', () => ({ ...request(), members: 'x' }), 'members'],
    ['a member that is not an object', () => ({ ...request(), members: [7] }), 'members.0'],
    ['a bad address', () => request({ members: [members[0]!, { ...members[1]!, address: '0x1234' }] }), 'members.1.address'],
    ['an address with a wrong checksum', () => request({ members: [{ ...members[0]!, address: mixedBad }] }), 'members.0.address'],
    ['the zero address', () => request({ members: [{ ...members[0]!, address: '0x0000000000000000000000000000000000000000' }], quorum: 1 }), 'members.0.address'],
    ['the same owner twice (case differs)', () => request({ members: [members[0]!, { ...members[1]!, address: lower }] }), 'members.1.address'],
    ['an ed25519 member', () => request({ members: [members[0]!, { ...members[1]!, curve: 'ed25519' }] }), 'members.1.curve'],
    ['a weight of 2', () => request({ members: [members[0]!, members[1]!, { ...members[2]!, weight: 2 }] }), 'members.2.weight'],
    ['a label that is not a string', () => ({ ...request(), members: [{ ...members[0]!, label: 5 }] }), 'members.0.label'],
    ['quorum 0', () => request({ quorum: 0 }), 'quorum'],
    ['quorum above the owners', () => request({ quorum: 4 }), 'quorum'],
    ['quorum not an integer', () => request({ quorum: 1.5 }), 'quorum'],
    ['no funding', () => ({ ...request(), funding: undefined }), 'funding'],
    ['an unknown funding kind', () => ({ ...request(), funding: { kind: 'gift' } }), 'funding.kind'],
    ['a faucet URL that is not http', () => request({ funding: { kind: 'faucet', url: 'ws://127.0.0.1:8545' } }), 'funding.url'],
    ['a faucet URL that is not a URL', () => request({ funding: { kind: 'faucet', url: 'faucet' } }), 'funding.url'],
    ['attack: a faucet URL carrying credentials', () => request({ funding: { kind: 'faucet', url: 'https://u:p@rpc.example' } }), 'funding.url'],
    ['a key where the variable name belongs', () => request({ funding: { kind: 'key_env', env: devnet.accounts.funded[1]!.privateKey } }), 'funding.env'],
    ['a negative fundAmount', () => request({ fundAmount: '-1' }), 'fundAmount'],
    ['a decimal fundAmount', () => request({ fundAmount: '1.5' }), 'fundAmount'],
    ['existing for another wallet id', () => request({ existing: { ...existing(), wallet: 'other' } }), 'existing.wallet'],
    ['existing for another chain', () => request({ existing: { ...existing(), chain: 'eip155:1' } }), 'existing.chain'],
    ['existing that is not a descriptor', () => request({ existing: { wallet: 'treasury' } as unknown as WalletDescriptor }), 'existing.chain'],
    [
      'existing of another kind',
      () => request({ existing: { wallet: 'treasury', chain, control: { kind: 'native_multisig', address: 'r1', signers: [{ address: 'r2', curve: 'ed25519', weight: 1, label: 'x' }], quorum: 1 } } }),
      'existing.control.kind',
    ],
    ['existing with a bad Safe address', () => request({ existing: { ...existing(), control: { ...(existing().control as Extract<WalletDescriptor['control'], { kind: 'evm_safe' }>), safe: '0x12' } } }), 'existing.control.safe'],
  ];
  for (const [what, bad, path] of cases) {
    it(what, async () => {
      const head = await blockNumber();
      const err = await failure(provisioner.provision(json(bad()) as ProvisionRequest));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.path).toBe(path);
      expect(err.message).toContain(path === '' ? 'invalid provision' : `provision.${path}`);
      expect(err.message, 'never echo a key').not.toContain(devnet.accounts.funded[1]!.privateKey.slice(2));
      expect(await blockNumber(), 'nothing sent').toBe(head);
    });
  }

  it('a request that is not an object', async () => {
    const err = await failure(provisioner.provision(null as unknown as ProvisionRequest));
    expect(err).toBeInstanceOf(ValidationError);
  });

  it('bad plugin options are refused as by createDriver', async () => {
    await expect(createProvisioner(json({ chains: [] }) as EvmSafePluginOptions)).rejects.toThrow(ValidationError);
  });
});
