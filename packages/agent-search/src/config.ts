/**
 * @module config
 * Configuration of the three commands (serve, facilitator, query) from flags and environment
 * variables. A flag wins over its env var. Every error names the flag/env var at fault; no error
 * ever includes the value of a secret.
 *
 * Secrets (the facilitator's gas key, the payer's key) are read from a file named by a flag or env
 * var, or from an env var holding the key itself; never from a flag, because flags show in `ps`.
 */
import { endpointUrlProblem } from '@vault/sdk';
import { readFileSync } from 'node:fs';
import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { ConfigError } from './payment/errors.js';
import { decimalToBaseUnits } from './payment/price.js';
import { validateTerms, type EvmNetwork, type PaymentTerms } from './payment/requirements.js';

export type Env = Readonly<Record<string, string | undefined>>;
export type Flags = Readonly<Record<string, string | boolean | undefined>>;

/** Env var names, one place (documented in the README). */
export const ENV = {
  host: 'AGENT_SEARCH_HOST',
  port: 'AGENT_SEARCH_PORT',
  baseUrl: 'AGENT_SEARCH_BASE_URL',
  operator: 'AGENT_SEARCH_OPERATOR',
  service: 'AGENT_SEARCH_SERVICE',
  answerTimeoutMs: 'AGENT_SEARCH_ANSWER_TIMEOUT_MS',
  network: 'X402_NETWORK',
  asset: 'X402_ASSET',
  assetName: 'X402_ASSET_NAME',
  assetVersion: 'X402_ASSET_VERSION',
  assetSymbol: 'X402_ASSET_SYMBOL',
  decimals: 'X402_ASSET_DECIMALS',
  payTo: 'X402_PAY_TO',
  maxTimeoutSeconds: 'X402_MAX_TIMEOUT_SECONDS',
  facilitatorUrl: 'X402_FACILITATOR_URL',
  facilitatorTimeoutMs: 'X402_FACILITATOR_TIMEOUT_MS',
  rpcUrl: 'X402_RPC_URL',
  gasKey: 'X402_GAS_KEY',
  gasKeyFile: 'X402_GAS_KEY_FILE',
  confirmationTimeoutMs: 'X402_CONFIRMATION_TIMEOUT_MS',
  chargeLog: 'X402_CHARGE_LOG',
  databaseUrl: 'X402_DATABASE_URL',
  facilitatorHost: 'FACILITATOR_HOST',
  facilitatorPort: 'FACILITATOR_PORT',
  payerKey: 'X402_PAYER_KEY',
  payerKeyFile: 'X402_PAYER_KEY_FILE',
  agentUrl: 'AGENT_SEARCH_URL',
  maxPrice: 'X402_MAX_PRICE',
  budget: 'X402_BUDGET',
} as const;

type Key = keyof typeof ENV;

/** `--kebab-case` flag name of a config key. */
const flagName = (k: Key): string => `--${k.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}`;
const label = (k: Key): string => `${flagName(k)} / ${ENV[k]}`;

function get(k: Key, flags: Flags, env: Env): string | undefined {
  const flagKey = flagName(k).slice(2);
  const f = flags[flagKey];
  if (typeof f === 'string' && f.length > 0) return f;
  const e = env[ENV[k]];
  return e !== undefined && e.length > 0 ? e : undefined;
}

function int(k: Key, flags: Flags, env: Env, dflt: number, min: number, max: number): number {
  const raw = get(k, flags, env);
  if (raw === undefined) return dflt;
  if (!/^[0-9]+$/.test(raw)) throw new ConfigError(label(k), `must be an integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(label(k), `must be from ${min} to ${max}, got ${n}`);
  return n;
}

function address(k: Key, raw: string): Address {
  if (!isAddress(raw, { strict: false })) throw new ConfigError(label(k), `must be a 0x-prefixed 20-byte address, got ${JSON.stringify(raw.slice(0, 60))}`);
  return getAddress(raw);
}

function network(raw: string): EvmNetwork {
  if (!/^eip155:[1-9][0-9]{0,15}$/.test(raw)) throw new ConfigError(label('network'), `must be CAIP-2 "eip155:<chainId>", got ${JSON.stringify(raw.slice(0, 60))}`);
  return raw as EvmNetwork;
}

function httpUrl(k: Key, raw: string): string {
  // The SDK's one endpoint check: http(s) and no credentials (URLs are shown in logs and errors).
  const problem = endpointUrlProblem(raw);
  if (problem !== null) throw new ConfigError(label(k), problem);
  return raw.replace(/\/+$/, '');
}

/** X402_DATABASE_URL: a postgres:// or postgresql:// URL. Its value (with its password) is never in an error. */
function postgresUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.length === 0) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(ENV.databaseUrl, 'must be a URL (value not shown)');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') throw new ConfigError(ENV.databaseUrl, 'must be a postgres:// or postgresql:// URL (value not shown)');
  return raw;
}

/**
 * Reads a private key from `<k>File` (flag or env) or `<k>` (env only). The value never appears in
 * an error: a wrong key in a message is a leaked key.
 */
export function readSecretKey(fileKey: 'gasKeyFile' | 'payerKeyFile', envKey: 'gasKey' | 'payerKey', flags: Flags, env: Env, readFile: (p: string) => string = (p) => readFileSync(p, 'utf8')): Hex | undefined {
  const file = get(fileKey, flags, env);
  let raw: string | undefined;
  let where: string;
  if (file !== undefined) {
    where = label(fileKey);
    try {
      raw = readFile(file);
    } catch (err) {
      throw new ConfigError(where, `cannot read the key file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  } else {
    where = ENV[envKey];
    raw = env[ENV[envKey]];
    if (raw === undefined || raw.length === 0) return undefined;
  }
  const key = raw.trim();
  const hex = key.startsWith('0x') ? key : `0x${key}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(where, 'must hold one private key: 64 hex digits, optionally 0x-prefixed (value not shown)');
  return hex.toLowerCase() as Hex;
}

function terms(flags: Flags, env: Env): PaymentTerms {
  const need = (k: Key): string => {
    const v = get(k, flags, env);
    if (v === undefined) throw new ConfigError(label(k), 'is required when payment is configured');
    return v;
  };
  return validateTerms({
    network: network(need('network')),
    asset: address('asset', need('asset')),
    assetName: get('assetName', flags, env) ?? 'USD Coin',
    assetVersion: get('assetVersion', flags, env) ?? '2',
    assetSymbol: get('assetSymbol', flags, env) ?? 'USDC',
    decimals: int('decimals', flags, env, 6, 0, 36),
    payTo: address('payTo', need('payTo')),
    maxTimeoutSeconds: int('maxTimeoutSeconds', flags, env, 60, 10, 3600),
  });
}

export type FacilitatorSetup =
  | { kind: 'http'; url: string; timeoutMs: number }
  | { kind: 'local'; rpcUrl: string; gasPrivateKey: Hex; confirmationTimeoutMs: number };

export interface PaymentSetup {
  terms: PaymentTerms;
  facilitator: FacilitatorSetup;
  chargeLogPath: string | undefined;
  /**
   * PostgreSQL URL (X402_DATABASE_URL, env only: it carries a password, and flags show in `ps`).
   * Set: the one-use-per-authorization store and the charge log live there, shared by every process.
   */
  databaseUrl: string | undefined;
}

export interface ServeConfig {
  host: string;
  port: number;
  baseUrl: string;
  /** False when baseUrl was derived from host:port (then the server uses the address it actually binds). */
  baseUrlExplicit: boolean;
  operator: string;
  service: string | undefined;
  /** An answer slower than this is abandoned with 504 and nothing is charged. */
  answerTimeoutMs: number;
  /** null: payment not configured; the descriptor says enabled false, status ABSENT; paid routes answer 503. */
  payment: PaymentSetup | null;
}

const PAYMENT_KEYS: Key[] = ['network', 'asset', 'payTo', 'facilitatorUrl', 'rpcUrl', 'gasKey', 'gasKeyFile'];

/**
 * Config of `serve`. Payment is configured when any payment setting is present; then all required
 * ones must be (a half-configured payment is an error, never a silently free or silently absent API).
 *
 * @example
 * loadServeConfig({ port: '8402' }, process.env)
 */
export function loadServeConfig(flags: Flags, env: Env): ServeConfig {
  const host = get('host', flags, env) ?? '127.0.0.1';
  const port = int('port', flags, env, 8402, 0, 65535);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const explicitBase = get('baseUrl', flags, env);
  const baseUrl = httpUrl('baseUrl', explicitBase ?? `http://${shownHost}:${port}`);
  const baseUrlExplicit = explicitBase !== undefined;
  const operator = get('operator', flags, env) ?? 'unnamed operator';
  const service = get('service', flags, env);
  const answerTimeoutMs = int('answerTimeoutMs', flags, env, 10_000, 100, 600_000);
  const anyPayment = PAYMENT_KEYS.some((k) => get(k, flags, env) !== undefined);
  if (!anyPayment) return { host, port, baseUrl, baseUrlExplicit, operator, service, answerTimeoutMs, payment: null };

  const t = terms(flags, env);
  const facilitatorUrl = get('facilitatorUrl', flags, env);
  const rpcUrl = get('rpcUrl', flags, env);
  let facilitator: FacilitatorSetup;
  if (facilitatorUrl !== undefined) {
    if (rpcUrl !== undefined) throw new ConfigError(label('facilitatorUrl'), `give either it (HTTP facilitator) or ${label('rpcUrl')} (in-process facilitator), not both`);
    facilitator = { kind: 'http', url: httpUrl('facilitatorUrl', facilitatorUrl), timeoutMs: int('facilitatorTimeoutMs', flags, env, 30_000, 100, 600_000) };
  } else {
    if (rpcUrl === undefined) throw new ConfigError(`${label('facilitatorUrl')} or ${label('rpcUrl')}`, 'one is required when payment is configured');
    const gasPrivateKey = readSecretKey('gasKeyFile', 'gasKey', flags, env);
    if (gasPrivateKey === undefined) throw new ConfigError(`${label('gasKeyFile')} or ${ENV.gasKey}`, 'the in-process facilitator needs a gas-paying key');
    facilitator = { kind: 'local', rpcUrl: httpUrl('rpcUrl', rpcUrl), gasPrivateKey, confirmationTimeoutMs: int('confirmationTimeoutMs', flags, env, 30_000, 100, 600_000) };
  }
  const databaseUrl = postgresUrl(env[ENV.databaseUrl]);
  const chargeLogPath = get('chargeLog', flags, env);
  if (databaseUrl !== undefined && chargeLogPath !== undefined) throw new ConfigError(label('chargeLog'), `charges are recorded in one place: give it or ${ENV.databaseUrl}, not both`);
  return { host, port, baseUrl, baseUrlExplicit, operator, service, answerTimeoutMs, payment: { terms: t, facilitator, chargeLogPath, databaseUrl } };
}

export interface FacilitatorServeConfig {
  host: string;
  port: number;
  rpcUrl: string;
  gasPrivateKey: Hex;
  terms: Omit<PaymentTerms, 'payTo'>;
  /** Payees the facilitator settles for (from --pay-to / X402_PAY_TO, comma-separated). Required. */
  payTo: Address[];
  confirmationTimeoutMs: number;
}

/** True for the loopback names and addresses a local-only server may bind. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(host);
}

/** Config of `facilitator`. Its payees are required: an open HTTP facilitator spends gas for anyone. */
export function loadFacilitatorConfig(flags: Flags, env: Env): FacilitatorServeConfig {
  const host = (typeof flags.host === 'string' ? flags.host : undefined) ?? env[ENV.facilitatorHost] ?? '127.0.0.1';
  // The HTTP facilitator has no authentication and pays gas for every settlement it is sent:
  // reachable from elsewhere, anyone could make it spend. Loopback only; a deployment that needs
  // it remote puts an authenticating proxy in front.
  if (!isLoopbackHost(host)) throw new ConfigError(`--host / ${ENV.facilitatorHost}`, `${host} is not loopback; the facilitator has no authentication and binds 127.0.0.1, ::1 or localhost only`);
  const portRaw = (typeof flags.port === 'string' ? flags.port : undefined) ?? env[ENV.facilitatorPort];
  let port = 8403;
  if (portRaw !== undefined && portRaw.length > 0) {
    if (!/^[0-9]+$/.test(portRaw) || Number(portRaw) > 65535) throw new ConfigError(`--port / ${ENV.facilitatorPort}`, 'must be an integer from 0 to 65535');
    port = Number(portRaw);
  }
  const rpcUrl = get('rpcUrl', flags, env);
  if (rpcUrl === undefined) throw new ConfigError(label('rpcUrl'), 'is required');
  const payToRaw = get('payTo', flags, env);
  if (payToRaw === undefined) throw new ConfigError(label('payTo'), 'is required: the payees this facilitator settles for (comma-separated)');
  const payTo = payToRaw.split(',').map((s) => address('payTo', s.trim()));
  const gasPrivateKey = readSecretKey('gasKeyFile', 'gasKey', flags, env);
  if (gasPrivateKey === undefined) throw new ConfigError(`${label('gasKeyFile')} or ${ENV.gasKey}`, 'is required');
  const { payTo: _ignored, ...rest } = terms({ ...flags, 'pay-to': payTo[0] }, env);
  return { host, port, rpcUrl: httpUrl('rpcUrl', rpcUrl), gasPrivateKey, terms: rest, payTo, confirmationTimeoutMs: int('confirmationTimeoutMs', flags, env, 30_000, 100, 600_000) };
}

export interface QueryConfig {
  baseUrl: string;
  payerPrivateKey: Hex;
  maxPrice: string;
  budget: string;
  /** Trusted payment token; `undefined` only if the caller explicitly allowed any (--asset any). */
  asset: Address | undefined;
  network: EvmNetwork | undefined;
  decimals: number;
}

/** Config of `query`: where, with which key, and how much at most. */
export function loadQueryConfig(flags: Flags, env: Env): QueryConfig {
  const baseUrl = httpUrl('agentUrl', (typeof flags.base === 'string' ? flags.base : undefined) ?? env[ENV.agentUrl] ?? 'http://127.0.0.1:8402');
  const fl: Flags = { ...flags, 'payer-key-file': flags['key-file'] };
  const payerPrivateKey = readSecretKey('payerKeyFile', 'payerKey', fl, env);
  if (payerPrivateKey === undefined) throw new ConfigError(`--key-file / ${ENV.payerKeyFile} or ${ENV.payerKey}`, 'a payer key is required');
  const maxPrice = get('maxPrice', flags, env);
  if (maxPrice === undefined) throw new ConfigError(label('maxPrice'), 'is required: the most one call may cost, e.g. 0.05');
  const decimals = int('decimals', flags, env, 6, 0, 36);
  decimalToBaseUnits(maxPrice, decimals, label('maxPrice'));
  const budget = get('budget', flags, env) ?? maxPrice;
  decimalToBaseUnits(budget, decimals, label('budget'));
  const assetRaw = get('asset', flags, env);
  if (assetRaw === undefined) throw new ConfigError(label('asset'), 'is required: the token you agree to pay with (or "any" to accept whatever the server asks, still capped by --max-price)');
  const asset = assetRaw === 'any' ? undefined : address('asset', assetRaw);
  const netRaw = get('network', flags, env);
  return { baseUrl, payerPrivateKey, maxPrice, budget, asset, network: netRaw === undefined ? undefined : network(netRaw), decimals };
}
