/**
 * @module plugin
 * The configuration entry the reference servers load (`{ "module": "@vault/driver-evm-safe",
 * "options": {…} }`): `createDriver(options)`, `createSigner(options)` and
 * `createProvisioner(options)` (`vault provision`) over one plain-JSON
 * options object, validated field by field. Secrets never sit in the options: the executor's key
 * (and a relayer's authorization) are read from environment variables the options name.
 */
import { ValidationError, defineChainDriver, endpointUrlProblem, type SubmitInput, type SubmitResult, type WalletProvisioner } from '@vault/sdk';
import { nonceManager } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { chainIdOf, evmAddressProblem } from './chains.js';
import { createEvmSafeDriver, EVM_FINALITIES, type EvmChainConfig, type EvmExecutor, type EvmFinality, type EvmSafeDriver } from './driver.js';
import type { EvmSafeSigner } from './signer.js';

/** Who pays gas for execTransaction: at most one of the two, per chain or for all chains. */
export interface EvmExecutorOptions {
  /** NAME of the environment variable holding the executor's private key (0x + 64 hex). Never the key itself. */
  executor_key_env?: string;
  /** An external relayer: the driver POSTs `{chain, chain_id, to, data, safe_tx_hash}` and expects `{tx_hash}`. */
  relayer_url?: string;
  /** NAME of the environment variable holding the relayer's `Authorization` header value. */
  relayer_authorization_env?: string;
}

export interface EvmChainOptions extends EvmExecutorOptions {
  /** Numeric chain id (e.g. 11155111); the chain is served as `eip155:<chain_id>`. */
  chain_id: number;
  /** Optional, must equal `eip155:<chain_id>` when given. */
  chain?: string;
  /** JSON-RPC endpoint, http(s). */
  rpc_url: string;
  /** Head payloadFate trusts: `finalized` (default), `safe`, or `latest` (a local single-node chain only). */
  finality?: EvmFinality;
  /** Native asset symbol. Default `ETH`. */
  native_symbol?: string;
  /** ERC-20 contracts that balances() reports. */
  tokens?: string[];
  /** Receipt polling interval in ms. Default 4000. */
  polling_interval_ms?: number;
}

/** The plugin's JSON options: what an operator writes in the control plane state file or a signer trust file. */
export interface EvmSafePluginOptions extends EvmExecutorOptions {
  chains: EvmChainOptions[];
  /** Plugin name. Default `@vault/driver-evm-safe`. */
  name?: string;
}

const ENV_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEY_RE = /^(0x)?[0-9a-fA-F]{64}$/;
const EXECUTOR_KEYS = ['executor_key_env', 'relayer_url', 'relayer_authorization_env'] as const;
const CHAIN_KEYS = ['chain_id', 'chain', 'rpc_url', 'finality', 'native_symbol', 'tokens', 'polling_interval_ms', ...EXECUTOR_KEYS] as const;
const TOP_KEYS = ['chains', 'name', ...EXECUTOR_KEYS] as const;

function fail(path: string, message: string): never {
  throw new ValidationError('options', [{ path, message }]);
}

function object(v: unknown, path: string, keys: readonly string[]): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'must be an object');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!keys.includes(k)) fail(path ? `${path}.${k}` : k, `unknown option (known: ${keys.join(', ')})`);
  return o;
}

function optString(o: Record<string, unknown>, key: string, path: string, re?: RegExp, what = 'a non-empty string'): string | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '' || (re && !re.test(v))) fail(path, `must be ${what}`);
  return v;
}

function httpUrl(v: unknown, path: string): string {
  const problem = endpointUrlProblem(v);
  if (problem !== null) fail(path, problem);
  return v as string;
}

function executorOptions(o: Record<string, unknown>, prefix: string): EvmExecutorOptions | undefined {
  const p = (k: string) => (prefix ? `${prefix}.${k}` : k);
  const key = optString(o, 'executor_key_env', p('executor_key_env'), ENV_RE, 'the NAME of an environment variable (letters, digits, _), not a key');
  const relayer = o['relayer_url'] === undefined ? undefined : httpUrl(o['relayer_url'], p('relayer_url'));
  const auth = optString(o, 'relayer_authorization_env', p('relayer_authorization_env'), ENV_RE, 'the NAME of an environment variable (letters, digits, _)');
  if (key !== undefined && relayer !== undefined) fail(p('relayer_url'), 'give either executor_key_env or relayer_url, not both');
  if (auth !== undefined && relayer === undefined) fail(p('relayer_authorization_env'), 'only applies with relayer_url');
  if (key === undefined && relayer === undefined) return undefined;
  return { executor_key_env: key, relayer_url: relayer, relayer_authorization_env: auth };
}

/**
 * Validates plugin options; throws a ValidationError naming the option (`options.chains.0.rpc_url`).
 * Reads no environment variable.
 *
 * @example
 * parseEvmSafePluginOptions({ chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:8545', finality: 'latest' }] })
 */
export function parseEvmSafePluginOptions(value: unknown): EvmSafePluginOptions {
  const o = object(value, '', TOP_KEYS);
  const name = optString(o, 'name', 'name');
  if (!Array.isArray(o['chains']) || o['chains'].length === 0) fail('chains', 'must be a non-empty list of chains');
  const seen = new Set<number>();
  const chains = (o['chains'] as unknown[]).map((c, i): EvmChainOptions => {
    const at = `chains.${i}`;
    const co = object(c, at, CHAIN_KEYS);
    const id = co['chain_id'];
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1 || chainIdOf(`eip155:${id}`) !== id) fail(`${at}.chain_id`, 'must be a positive integer chain id');
    if (seen.has(id)) fail(`${at}.chain_id`, `chain ${id} is configured twice`);
    seen.add(id);
    const chain = optString(co, 'chain', `${at}.chain`);
    if (chain !== undefined && chain !== `eip155:${id}`) fail(`${at}.chain`, `must be "eip155:${id}" (the name of chain_id ${id})`);
    const finality = co['finality'];
    if (finality !== undefined && !EVM_FINALITIES.includes(finality as EvmFinality)) fail(`${at}.finality`, `must be one of ${EVM_FINALITIES.join(', ')}`);
    const tokens = co['tokens'];
    if (tokens !== undefined) {
      if (!Array.isArray(tokens)) fail(`${at}.tokens`, 'must be a list of ERC-20 addresses');
      tokens.forEach((t, j) => {
        const problem = typeof t === 'string' ? evmAddressProblem(t) : 'must be a string';
        if (problem) fail(`${at}.tokens.${j}`, problem);
      });
    }
    const poll = co['polling_interval_ms'];
    if (poll !== undefined && (typeof poll !== 'number' || !Number.isSafeInteger(poll) || poll < 1 || poll > 600_000)) {
      fail(`${at}.polling_interval_ms`, 'must be an integer number of milliseconds, 1 to 600000');
    }
    return {
      chain_id: id as number,
      ...(chain !== undefined && { chain }),
      rpc_url: httpUrl(co['rpc_url'], `${at}.rpc_url`),
      ...(finality !== undefined && { finality: finality as EvmFinality }),
      ...(co['native_symbol'] !== undefined && { native_symbol: optString(co, 'native_symbol', `${at}.native_symbol`) as string }),
      ...(tokens !== undefined && { tokens: [...(tokens as string[])] }),
      ...(poll !== undefined && { polling_interval_ms: poll as number }),
      ...executorOptions(co, at),
    };
  });
  return { chains, ...(name !== undefined && { name }), ...executorOptions(o, '') };
}

/** The executor options describe, from the environment; `missing` says which variable is unset. */
function resolveExecutor(e: EvmExecutorOptions | undefined, path: string): { executor?: EvmExecutor; missing?: string } {
  if (!e) return {};
  if (e.executor_key_env !== undefined) {
    const raw = process.env[e.executor_key_env];
    if (raw === undefined || raw === '') return { missing: e.executor_key_env };
    // Never echo the value: it is a private key.
    const bad = () => fail(`${path}executor_key_env`, `environment variable ${e.executor_key_env} does not hold a secp256k1 private key (0x + 64 hex digits)`);
    const key = raw.trim();
    if (!KEY_RE.test(key)) bad();
    try {
      return { executor: privateKeyToAccount((key.startsWith('0x') ? key : `0x${key}`) as `0x${string}`, { nonceManager }) };
    } catch {
      return bad();
    }
  }
  const relayerUrl = e.relayer_url as string;
  if (e.relayer_authorization_env === undefined) return { executor: { relayerUrl } };
  const auth = process.env[e.relayer_authorization_env];
  if (auth === undefined || auth === '') return { missing: e.relayer_authorization_env };
  return { executor: { relayerUrl, headers: { authorization: auth } } };
}

/**
 * The keyless ChainDriver from plugin options. An executor variable that is unset does not stop
 * the driver (signer processes load the same options and never submit): submit then answers
 * `rejected` / `no_executor` naming the variable. A variable that is set but holds no key is a
 * ValidationError.
 *
 * @example
 * process.env.VAULT_EVM_EXECUTOR_KEY = '0x…'
 * const driver = createDriver({ chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:8545', finality: 'latest' }], executor_key_env: 'VAULT_EVM_EXECUTOR_KEY' })
 */
export function createDriver(options: EvmSafePluginOptions, _context?: { stateDir?: string }): EvmSafeDriver {
  const o = parseEvmSafePluginOptions(options);
  const top = resolveExecutor(o, '');
  const chains: Record<string, EvmChainConfig> = {};
  const missing = new Map<string, string>();
  o.chains.forEach((c, i) => {
    const chain = `eip155:${c.chain_id}`;
    const own = executorOptionsOf(c) ? resolveExecutor(c, `chains.${i}.`) : top;
    if (own.missing) missing.set(chain, own.missing);
    chains[chain] = { ...chainConfig(c), ...(own.executor && { executor: own.executor }) };
  });
  const driver = createEvmSafeDriver({ chains, ...(o.name !== undefined && { name: o.name }) });
  if (missing.size === 0) return driver;
  return defineChainDriver({
    ...driver,
    async submit({ chain, blob }: SubmitInput): Promise<SubmitResult> {
      const r = await driver.submit({ chain, blob });
      const env = missing.get(chain);
      if (r.status === 'rejected' && r.code === 'no_executor' && env) {
        return { ...r, message: `no executor for ${chain}: environment variable ${env} is not set, so nobody pays gas for execTransaction` };
      }
      return r;
    },
  }) as EvmSafeDriver;
}

/** The driver's config for one chain entry, without its executor. */
function chainConfig(c: EvmChainOptions): EvmChainConfig {
  return {
    rpcUrl: c.rpc_url,
    ...(c.finality && { finality: c.finality }),
    ...(c.native_symbol && { nativeSymbol: c.native_symbol }),
    ...(c.tokens && { tokens: c.tokens }),
    ...(c.polling_interval_ms && { pollingInterval: c.polling_interval_ms }),
  };
}

function executorOptionsOf(c: EvmExecutorOptions): boolean {
  return c.executor_key_env !== undefined || c.relayer_url !== undefined;
}

/**
 * The ChainSigner from the same plugin options (only the chains matter; no variable is read). The
 * signing code is imported only here, so a control plane that calls createDriver alone never
 * loads it.
 *
 * @example
 * const signer = await createSigner({ chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:8545' }] })
 */
export async function createSigner(options: EvmSafePluginOptions): Promise<EvmSafeSigner> {
  const o = parseEvmSafePluginOptions(options);
  const { createEvmSafeSigner } = await import('./signer.js');
  return createEvmSafeSigner({ chains: o.chains.map((c) => `eip155:${c.chain_id}`), ...(o.name !== undefined && { name: `${o.name}/signer` }) });
}

/**
 * The WalletProvisioner (`vault provision`) from the same plugin options: deploys Safe v1.4.1
 * wallets on the configured chains. Executor options are ignored (no variable is read here);
 * what pays for the deployment is the request's `funding`. Like the signer it is imported only
 * when called: it generates and signs with a throwaway deployer key.
 *
 * @example
 * const provisioner = await createProvisioner({ chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:8545', finality: 'latest' }] })
 * await provisioner.provision({ wallet: 'treasury', chain: 'eip155:31337', members, quorum: 2, funding: { kind: 'faucet', url: 'http://127.0.0.1:8545' } })
 */
export async function createProvisioner(options: EvmSafePluginOptions): Promise<WalletProvisioner> {
  const o = parseEvmSafePluginOptions(options);
  const chains: Record<string, EvmChainConfig> = {};
  for (const c of o.chains) chains[`eip155:${c.chain_id}`] = chainConfig(c);
  const { createEvmSafeProvisioner } = await import('./provision.js');
  return createEvmSafeProvisioner({ chains, ...(o.name !== undefined && { name: o.name }) });
}
