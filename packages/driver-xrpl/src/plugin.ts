/**
 * @module plugin
 * The plugin entry the reference servers load from configuration
 * (`{ "module": "@vault/driver-xrpl", "options": { … } }`): `createDriver(options)`,
 * `createSigner(options)` and `createProvisioner(options)` take the same plain-JSON options,
 * checked by hand here (the package does not depend on a schema library) with a ValidationError
 * naming the option path.
 */
import { ValidationError, endpointUrlProblem, type DriverPlugin, type WalletProvisioner } from '@vault/sdk';
import { createXrplDriver, type XrplChainConfig, type XrplDriver } from './driver.js';
import type { XrplSigner } from './signer.js';

/** One chain an operator serves. */
export interface XrplPluginChain {
  /** Chain name, `xrpl:<network>` (e.g. `xrpl:testnet`). */
  chain: string;
  /** JSON-RPC URL of a rippled or Clio server (http or https, no credentials). */
  url: string;
  /**
   * The network id the server must report. Defaults for the public networks (xrpl:mainnet 0,
   * xrpl:testnet 1, xrpl:devnet 2); other chains are not checked unless it is given.
   */
  networkId?: number;
  /** X-address test flag. Default: every chain but xrpl:mainnet. */
  test?: boolean;
  apiVersion?: 1 | 2;
  lastLedgerOffset?: number;
  maxFeeDrops?: number;
  iouDecimals?: number;
  timeoutMs?: number;
  historyPageSize?: number;
  historyMaxPages?: number;
}

/** The JSON options of both factories. */
export interface XrplPluginOptions {
  chains: XrplPluginChain[];
  /** Driver name for errors and /health (default `@vault/driver-xrpl`; the signer's gets `/signer`). */
  name?: string;
}

/** Network ids of the public XRPL networks, by chain name. */
export const KNOWN_NETWORK_IDS: Readonly<Record<string, number>> = Object.freeze({ 'xrpl:mainnet': 0, 'xrpl:testnet': 1, 'xrpl:devnet': 2 });

const TOP_KEYS = new Set(['chains', 'name']);
/** Integer options: [min, max]. */
const INTEGER_KEYS: Record<string, [number, number]> = {
  networkId: [0, 0xffffffff],
  lastLedgerOffset: [1, 1000],
  maxFeeDrops: [10, 100_000_000],
  iouDecimals: [0, 96],
  timeoutMs: [100, 600_000],
  historyPageSize: [1, 400],
  historyMaxPages: [1, 1000],
};
const CHAIN_KEYS = new Set(['chain', 'url', 'test', 'apiVersion', ...Object.keys(INTEGER_KEYS)]);

function bad(path: string, message: string): never {
  throw new ValidationError('options', [{ path, message }]);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks plugin options as an operator wrote them in JSON and maps them onto
 * `createXrplDriver`'s options. Throws a ValidationError naming the option path (`chains.0.url`).
 *
 * @example
 * parsePluginOptions({ chains: [{ chain: 'xrpl:testnet', url: 'https://s.altnet.rippletest.net:51234/' }] })
 */
export function parsePluginOptions(options: unknown): { chains: Record<string, XrplChainConfig>; name?: string } {
  if (!isObject(options)) return bad('', 'options must be an object with a "chains" array');
  for (const k of Object.keys(options)) if (!TOP_KEYS.has(k)) bad(k, 'unknown option');
  const name = options['name'];
  if (name !== undefined && (typeof name !== 'string' || name === '')) bad('name', 'must be a non-empty string');
  const list = options['chains'];
  if (!Array.isArray(list) || list.length === 0) bad('chains', 'must be a non-empty array of { chain, url, networkId? }');
  const chains: Record<string, XrplChainConfig> = {};
  list.forEach((entry: unknown, i) => {
    const at = `chains.${i}`;
    if (!isObject(entry)) bad(at, 'must be an object');
    for (const k of Object.keys(entry)) if (!CHAIN_KEYS.has(k)) bad(`${at}.${k}`, 'unknown option');
    const chain = entry['chain'];
    if (typeof chain !== 'string' || !/^xrpl:[A-Za-z0-9_-]{1,64}$/.test(chain)) bad(`${at}.chain`, 'must be a chain name such as "xrpl:testnet"');
    if (Object.hasOwn(chains, chain)) bad(`${at}.chain`, `${chain} is listed twice`);
    const url = entry['url'];
    if (endpointUrlProblem(url) !== null) bad(`${at}.url`, 'must be an http(s) JSON-RPC URL without credentials');
    const config: XrplChainConfig = { url: url as string };
    for (const [k, [min, max]] of Object.entries(INTEGER_KEYS)) {
      const v = entry[k];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) bad(`${at}.${k}`, `must be an integer from ${min} to ${max}`);
      (config as unknown as Record<string, number>)[k] = v;
    }
    const known = KNOWN_NETWORK_IDS[chain];
    if (known !== undefined) {
      if (config.networkId !== undefined && config.networkId !== known) bad(`${at}.networkId`, `${chain} is network ${known}, not ${config.networkId}`);
      config.networkId = known;
    }
    const test = entry['test'];
    if (test !== undefined) {
      if (typeof test !== 'boolean') bad(`${at}.test`, 'must be true or false');
      if (chain === 'xrpl:mainnet' && test) bad(`${at}.test`, 'xrpl:mainnet does not use test-network X-addresses');
      config.test = test;
    }
    const api = entry['apiVersion'];
    if (api !== undefined) {
      if (api !== 1 && api !== 2) bad(`${at}.apiVersion`, 'must be 1 or 2');
      config.apiVersion = api;
    }
    chains[chain] = config;
  });
  return { chains, ...(typeof name === 'string' ? { name } : {}) };
}

/**
 * The keyless driver from JSON options (the control plane's second argument, `{ stateDir }`, is
 * not needed: the driver keeps no state).
 *
 * @example
 * const driver = createDriver({ chains: [{ chain: 'xrpl:testnet', url: 'https://s.altnet.rippletest.net:51234/' }] })
 */
export function createDriver(options: XrplPluginOptions): XrplDriver {
  const { chains, name } = parsePluginOptions(options);
  return createXrplDriver({ chains, ...(name !== undefined ? { name } : {}) });
}

/**
 * The signer from the same JSON options: it serves exactly the listed chains (the URLs are not
 * used: the signer signs only what the payload itself hashes to). The signing code is imported
 * only here, so a control plane that calls createDriver alone never loads it.
 *
 * @example
 * const signer = await createSigner({ chains: [{ chain: 'xrpl:testnet', url: 'https://s.altnet.rippletest.net:51234/' }] })
 */
export async function createSigner(options: XrplPluginOptions): Promise<XrplSigner> {
  const { chains, name } = parsePluginOptions(options);
  const { createXrplSigner } = await import('./signer.js');
  return createXrplSigner({ chains: Object.keys(chains), ...(name !== undefined ? { name: `${name}/signer` } : {}) });
}

/**
 * The provisioner (`vault provision`) from the same JSON options: it sets wallets up on the listed
 * chains (fresh account, funding, signer list, master key disabled). Funding comes with each
 * request (a faucet URL, or the name of an environment variable holding a funded seed). Like the
 * signer it is imported only when called: it generates and signs with a set-up key.
 *
 * @example
 * const provisioner = await createProvisioner({ chains: [{ chain: 'xrpl:testnet', url: 'https://s.altnet.rippletest.net:51234/' }] })
 */
export async function createProvisioner(options: XrplPluginOptions): Promise<WalletProvisioner> {
  const { chains, name } = parsePluginOptions(options);
  const { createXrplProvisioner } = await import('./provision.js');
  return createXrplProvisioner({ chains, ...(name !== undefined ? { name } : {}) });
}

// Compile-time check only: the factories form a DriverPlugin over these options.
({ createDriver, createSigner, createProvisioner }) satisfies Required<DriverPlugin<XrplPluginOptions>>;
