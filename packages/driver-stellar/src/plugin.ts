/**
 * @module plugin
 * The plugin entry the reference servers load from configuration
 * (`{ "module": "@vault/driver-stellar", "options": { … } }`): `createDriver(options)` and
 * `createSigner(options)` (and `createProvisioner(options)`, for `vault provision`) take the same
 * plain-JSON options, checked here field by field.
 */
import { ValidationError, endpointUrlProblem, type DriverPlugin, type WalletProvisioner } from '@vault/sdk';
import { createStellarDriver, type StellarChainConfig, type StellarDriver } from './driver.js';
import { STELLAR_FAMILY, STELLAR_NETWORKS } from './constants.js';
import type { StellarSigner } from './signer.js';

/** One chain an operator serves. */
export interface StellarPluginChain {
  /** Chain name, `stellar:<network>` (e.g. `stellar:testnet`). */
  chain: string;
  /** Horizon base URL (http or https). */
  horizonUrl: string;
  /** Network passphrase; optional for stellar:pubnet, stellar:testnet and stellar:local, whose passphrases are known. */
  networkPassphrase?: string;
  /** Seconds a built transaction stays valid (max_time = now + this). Default 300. */
  txTimeoutSeconds?: number;
  /** After a 504 from POST /transactions: lookups of the hash, and the pause between them. Defaults 5 and 500 ms. */
  timeoutPolls?: number;
  timeoutPollIntervalMs?: number;
}

/** The JSON options of both factories. */
export interface StellarPluginOptions {
  chains: StellarPluginChain[];
  /** Driver name for errors and /health (default `@vault/driver-stellar`). */
  name?: string;
}

const CHAIN_KEYS = ['chain', 'horizonUrl', 'networkPassphrase', 'txTimeoutSeconds', 'timeoutPolls', 'timeoutPollIntervalMs'];
const TOP_KEYS = ['chains', 'name'];

function bad(path: string, message: string): never {
  throw new ValidationError('options', [{ path, message }]);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function integer(v: unknown, path: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) bad(path, `must be an integer from ${min} to ${max}`);
  return v;
}

/**
 * Checks plugin options as an operator wrote them in JSON. Throws a ValidationError naming the
 * option path (`chains.0.horizonUrl`; its message reads `invalid options.chains.0.horizonUrl: …`).
 */
export function parsePluginOptions(options: unknown): { chains: Record<string, StellarChainConfig>; name?: string } {
  if (!isObject(options)) bad('', 'options must be an object with a "chains" array');
  for (const k of Object.keys(options)) if (!TOP_KEYS.includes(k)) bad(k, 'unknown option');
  if (options['name'] !== undefined && (typeof options['name'] !== 'string' || options['name'] === '')) bad('name', 'must be a non-empty string');
  const list = options['chains'];
  if (!Array.isArray(list) || list.length === 0) bad('chains', 'must be a non-empty array of { chain, horizonUrl, networkPassphrase? }');
  const chains: Record<string, StellarChainConfig> = {};
  list.forEach((entry: unknown, i) => {
    const at = `chains.${i}`;
    if (!isObject(entry)) bad(at, 'must be an object');
    for (const k of Object.keys(entry)) if (!CHAIN_KEYS.includes(k)) bad(`${at}.${k}`, 'unknown option');
    const chain = entry['chain'];
    if (typeof chain !== 'string' || !new RegExp(`^${STELLAR_FAMILY}:[A-Za-z0-9_-]+$`).test(chain)) bad(`${at}.chain`, 'must be a chain name such as "stellar:testnet"');
    if (chains[chain] !== undefined) bad(`${at}.chain`, `${chain} is listed twice`);
    const url = entry['horizonUrl'];
    if (endpointUrlProblem(url) !== null) bad(`${at}.horizonUrl`, 'must be an http(s) URL without credentials');
    const known = (STELLAR_NETWORKS as Record<string, string>)[chain];
    const passphrase = entry['networkPassphrase'] ?? known;
    if (typeof passphrase !== 'string' || passphrase === '') bad(`${at}.networkPassphrase`, `is required for ${chain} (it is part of every transaction hash)`);
    if (known !== undefined && passphrase !== known) bad(`${at}.networkPassphrase`, `${chain} is "${known}", not "${passphrase}"`);
    const config: StellarChainConfig = { horizonUrl: url as string, networkPassphrase: passphrase };
    const timeout = integer(entry['txTimeoutSeconds'], `${at}.txTimeoutSeconds`, 1, 86_400);
    const polls = integer(entry['timeoutPolls'], `${at}.timeoutPolls`, 0, 100);
    const interval = integer(entry['timeoutPollIntervalMs'], `${at}.timeoutPollIntervalMs`, 0, 60_000);
    if (timeout !== undefined) config.txTimeoutSeconds = timeout;
    if (polls !== undefined) config.timeoutPolls = polls;
    if (interval !== undefined) config.timeoutPollIntervalMs = interval;
    chains[chain] = config;
  });
  return { chains, ...(typeof options['name'] === 'string' ? { name: options['name'] } : {}) };
}

/**
 * The keyless driver from JSON options (the control plane's second argument, `{ stateDir }`, is
 * not needed: the driver keeps no state).
 *
 * @example
 * const driver = createDriver({ chains: [{ chain: 'stellar:testnet', horizonUrl: 'https://horizon-testnet.stellar.org' }] })
 */
export function createDriver(options: StellarPluginOptions): StellarDriver {
  const { chains, name } = parsePluginOptions(options);
  return createStellarDriver({ chains, ...(name !== undefined ? { name } : {}) });
}

/**
 * The signer from the same JSON options: it signs for the listed chains under their passphrases
 * (the Horizon URLs are not used by the signer). The signing code is imported only here, so a
 * control plane that calls createDriver alone never loads it.
 *
 * @example
 * const signer = await createSigner({ chains: [{ chain: 'stellar:testnet', horizonUrl: 'https://horizon-testnet.stellar.org' }] })
 */
export async function createSigner(options: StellarPluginOptions): Promise<StellarSigner> {
  const { chains, name } = parsePluginOptions(options);
  const { createStellarSigner } = await import('./signer.js');
  return createStellarSigner({
    chains: Object.fromEntries(Object.entries(chains).map(([chain, c]) => [chain, { networkPassphrase: c.networkPassphrase }])),
    ...(name !== undefined ? { name: `${name}/signer` } : {}),
  });
}

/**
 * The wallet provisioner (`vault provision`) from the same JSON options. Like the signer it is
 * imported only when called: it generates and signs with a set-up key, which the keyless control
 * plane never loads. See provision.ts and the README ("Provisioning a wallet").
 *
 * @example
 * const provisioner = await createProvisioner({ chains: [{ chain: 'stellar:testnet', horizonUrl: 'https://horizon-testnet.stellar.org' }] })
 * await provisioner.provision({ wallet: 'w1', chain: 'stellar:testnet', members, quorum: 2, funding: { kind: 'faucet', url: 'https://friendbot.stellar.org' } })
 */
export async function createProvisioner(options: StellarPluginOptions): Promise<WalletProvisioner> {
  const { chains, name } = parsePluginOptions(options);
  const { createStellarProvisioner } = await import('./provision.js');
  return createStellarProvisioner({ chains, ...(name !== undefined ? { name } : {}) });
}

// Compile-time check only: the three factories form a DriverPlugin over these options.
({ createDriver, createSigner, createProvisioner }) satisfies DriverPlugin<StellarPluginOptions>;
