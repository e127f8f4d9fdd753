/**
 * @module config
 * The run configuration (a JSON file). Validation is strict: unknown keys are refused and every error
 * names the offending field path (e.g. `xrpl.issuers[2].account`), so a typo never silently drops a row.
 */
import { isValidClassicAddress } from 'ripple-address-codec';
import { SupplyReportError } from './errors.js';
import { resolveEndpoint, type ResolvedEndpoint } from './redact.js';

export interface RateLimit {
  /** Sustained requests per second. */
  perSecond: number;
  /** Bucket size: requests allowed back to back. Default 1. */
  burst: number;
}

export interface EndpointConfig {
  url: string;
  publicUrl?: string;
  rateLimit?: RateLimit;
}

export interface XrplIssuerConfig {
  account: string;
  /** The named stablecoin provider this account belongs to; absent means "not a named provider". */
  provider?: string;
}
export interface SolanaMintConfig {
  mint: string;
  label: string;
}
export interface PolygonContractConfig {
  address: string;
  label: string;
}

export interface HttpConfig {
  /** Requests in flight at once, over all endpoints. Default 4. */
  concurrency: number;
  /** Retries after a 429 or 503 (or rippled `slowDown`), or a transport failure (refused, reset, hang up, timeout). Default 5. */
  retries: number;
  /** First backoff delay; doubles each retry. Default 500 ms. */
  backoffMs: number;
  /** Cap for one backoff delay. Default 30 s. */
  maxBackoffMs: number;
  /** A Retry-After longer than this fails the request instead of waiting. Default 120 s. */
  maxRetryAfterMs: number;
  /** Per-request timeout. Default 20 s. */
  timeoutMs: number;
  /** Largest reply accepted. Default 8 MiB. */
  maxResponseBytes: number;
}

export interface ReportConfig {
  rule?: string;
  http: HttpConfig;
  xrpl: { endpoint: EndpointConfig; issuers: XrplIssuerConfig[]; stablecoinCodes: string[]; accountTxLimit: number };
  stellar: { endpoint: EndpointConfig; issuers: string[]; groupLockedMin: number };
  solana: { endpoint: EndpointConfig; mints: SolanaMintConfig[]; commitment: 'finalized' | 'confirmed'; historyLimit: number };
  polygon: { endpoint: EndpointConfig; owner: string; contracts: PolygonContractConfig[]; note: string };
}

export const DEFAULT_HTTP: HttpConfig = {
  concurrency: 4,
  retries: 5,
  backoffMs: 500,
  maxBackoffMs: 30_000,
  maxRetryAfterMs: 120_000,
  timeoutMs: 20_000,
  maxResponseBytes: 8 * 1024 * 1024,
};

/** Codes that look like fiat stablecoins; an issuer without `provider` gets the self-issued note. */
export const DEFAULT_STABLECOIN_CODES = ['USD', 'USDC', 'USDT', 'RLUSD', 'EUR', 'EURC', 'EUROP', 'GBP', 'PYUSD', 'DAI', 'BUSD', 'TUSD', 'USDP', 'JPY', 'CNY', 'XSGD'];

export const DEFAULT_POLYGON_NOTE = 'Ownership of the contracts should be moved before any is put to use.';

type Obj = Record<string, unknown>;
const fail = (path: string, msg: string): never => {
  throw new SupplyReportError('bad_config', `${path}: ${msg}`);
};
function obj(v: unknown, path: string, allowed: readonly string[]): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return fail(path, 'expected an object');
  for (const k of Object.keys(v)) if (!allowed.includes(k)) fail(path ? `${path}.${k}` : k, `unknown field (allowed: ${allowed.join(', ')})`);
  return v as Obj;
}
function str(v: unknown, path: string): string {
  if (typeof v !== 'string' || v.length === 0) return fail(path, 'expected a non-empty string');
  return v;
}
function int(v: unknown, path: string, min: number, max: number, dflt?: number): number {
  if (v === undefined && dflt !== undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) return fail(path, `expected an integer from ${min} to ${max}`);
  return v;
}
function num(v: unknown, path: string, dflt?: number): number {
  if (v === undefined && dflt !== undefined) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return fail(path, 'expected a positive number');
  return v;
}
function arr(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) return fail(path, 'expected an array');
  return v;
}
function unique<T>(items: T[], key: (t: T) => string, path: string, what: string): T[] {
  const seen = new Set<string>();
  items.forEach((t, i) => {
    const k = key(t);
    if (seen.has(k)) fail(`${path}[${i}]`, `duplicate ${what} ${k}`);
    seen.add(k);
  });
  return items;
}

function endpoint(v: unknown, path: string): EndpointConfig {
  if (typeof v === 'string') return { url: str(v, path) };
  const o = obj(v, path, ['url', 'publicUrl', 'rateLimit']);
  const out: EndpointConfig = { url: str(o['url'], `${path}.url`) };
  if (o['publicUrl'] !== undefined) out.publicUrl = str(o['publicUrl'], `${path}.publicUrl`);
  if (o['rateLimit'] !== undefined) {
    const r = obj(o['rateLimit'], `${path}.rateLimit`, ['perSecond', 'burst']);
    out.rateLimit = { perSecond: num(r['perSecond'], `${path}.rateLimit.perSecond`), burst: int(r['burst'], `${path}.rateLimit.burst`, 1, 10_000, 1) };
  }
  return out;
}

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const STELLAR_ACCOUNT = /^G[A-Z2-7]{55}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Validates a parsed config file and fills defaults.
 *
 * @example
 * const config = parseConfig(JSON.parse(readFileSync('supply.config.json', 'utf8')))
 */
export function parseConfig(raw: unknown): ReportConfig {
  const root = obj(raw, '', ['$schema', 'rule', 'http', 'xrpl', 'stellar', 'solana', 'polygon']);
  const h = root['http'] === undefined ? {} : obj(root['http'], 'http', Object.keys(DEFAULT_HTTP));
  const http: HttpConfig = {
    concurrency: int(h['concurrency'], 'http.concurrency', 1, 64, DEFAULT_HTTP.concurrency),
    retries: int(h['retries'], 'http.retries', 0, 20, DEFAULT_HTTP.retries),
    backoffMs: int(h['backoffMs'], 'http.backoffMs', 0, 600_000, DEFAULT_HTTP.backoffMs),
    maxBackoffMs: int(h['maxBackoffMs'], 'http.maxBackoffMs', 0, 3_600_000, DEFAULT_HTTP.maxBackoffMs),
    maxRetryAfterMs: int(h['maxRetryAfterMs'], 'http.maxRetryAfterMs', 0, 3_600_000, DEFAULT_HTTP.maxRetryAfterMs),
    timeoutMs: int(h['timeoutMs'], 'http.timeoutMs', 1, 600_000, DEFAULT_HTTP.timeoutMs),
    maxResponseBytes: int(h['maxResponseBytes'], 'http.maxResponseBytes', 1024, 1 << 30, DEFAULT_HTTP.maxResponseBytes),
  };

  const x = obj(root['xrpl'], 'xrpl', ['endpoint', 'issuers', 'stablecoinCodes', 'accountTxLimit']);
  const xrplIssuers = unique(
    arr(x['issuers'], 'xrpl.issuers').map((v, i) => {
      const p = `xrpl.issuers[${i}]`;
      const o = typeof v === 'string' ? { account: v } : obj(v, p, ['account', 'provider']);
      const account = str(o['account'], `${p}.account`);
      if (!isValidClassicAddress(account)) fail(`${p}.account`, 'not a valid XRPL classic address');
      return { account, ...(o['provider'] !== undefined ? { provider: str(o['provider'], `${p}.provider`) } : {}) };
    }),
    (t) => t.account,
    'xrpl.issuers',
    'account',
  );
  const codes = x['stablecoinCodes'] === undefined ? DEFAULT_STABLECOIN_CODES : arr(x['stablecoinCodes'], 'xrpl.stablecoinCodes').map((c, i) => str(c, `xrpl.stablecoinCodes[${i}]`).toUpperCase());

  const s = obj(root['stellar'], 'stellar', ['endpoint', 'issuers', 'groupLockedMin']);
  const stellarIssuers = unique(
    arr(s['issuers'], 'stellar.issuers').map((v, i) => {
      const id = str(v, `stellar.issuers[${i}]`);
      if (!STELLAR_ACCOUNT.test(id)) fail(`stellar.issuers[${i}]`, 'not a Stellar G… account');
      return id;
    }),
    (t) => t,
    'stellar.issuers',
    'issuer',
  );

  const so = obj(root['solana'], 'solana', ['endpoint', 'mints', 'commitment', 'historyLimit']);
  const mints = unique(
    arr(so['mints'], 'solana.mints').map((v, i) => {
      const p = `solana.mints[${i}]`;
      const o = obj(v, p, ['mint', 'label']);
      const mint = str(o['mint'], `${p}.mint`);
      if (!BASE58.test(mint)) fail(`${p}.mint`, 'not a base58 Solana address');
      return { mint, label: str(o['label'], `${p}.label`) };
    }),
    (t) => t.mint,
    'solana.mints',
    'mint',
  );
  const commitment = (so['commitment'] ?? 'finalized') as 'finalized' | 'confirmed';
  if (commitment !== 'finalized' && commitment !== 'confirmed') fail('solana.commitment', 'expected "finalized" or "confirmed"');

  const pg = obj(root['polygon'], 'polygon', ['endpoint', 'owner', 'contracts', 'note']);
  const owner = str(pg['owner'], 'polygon.owner');
  if (!EVM_ADDRESS.test(owner)) fail('polygon.owner', 'not a 0x-prefixed 20-byte address');
  const contracts = unique(
    arr(pg['contracts'], 'polygon.contracts').map((v, i) => {
      const p = `polygon.contracts[${i}]`;
      const o = obj(v, p, ['address', 'label']);
      const address = str(o['address'], `${p}.address`);
      if (!EVM_ADDRESS.test(address)) fail(`${p}.address`, 'not a 0x-prefixed 20-byte address');
      return { address, label: str(o['label'], `${p}.label`) };
    }),
    (t) => t.address.toLowerCase(),
    'polygon.contracts',
    'address',
  );

  return {
    ...(root['rule'] !== undefined ? { rule: str(root['rule'], 'rule') } : {}),
    http,
    xrpl: { endpoint: endpoint(x['endpoint'], 'xrpl.endpoint'), issuers: xrplIssuers, stablecoinCodes: codes, accountTxLimit: 100 },
    stellar: { endpoint: endpoint(s['endpoint'], 'stellar.endpoint'), issuers: stellarIssuers, groupLockedMin: int(s['groupLockedMin'], 'stellar.groupLockedMin', 2, 1_000_000, 2) },
    solana: { endpoint: endpoint(so['endpoint'], 'solana.endpoint'), mints, commitment, historyLimit: int(so['historyLimit'], 'solana.historyLimit', 1, 1000, 10) },
    polygon: { endpoint: endpoint(pg['endpoint'], 'polygon.endpoint'), owner, contracts, note: pg['note'] === undefined ? DEFAULT_POLYGON_NOTE : str(pg['note'], 'polygon.note') },
  };
}

export type ChainName = 'xrpl' | 'stellar' | 'solana' | 'polygon';
export const CHAINS: readonly ChainName[] = ['xrpl', 'stellar', 'solana', 'polygon'];

/** Expands `${VAR}` placeholders of every endpoint; errors name the field. */
export function resolveEndpoints(config: ReportConfig, env: Record<string, string | undefined> = process.env): Record<ChainName, ResolvedEndpoint & { rateLimit?: RateLimit }> {
  const out = {} as Record<ChainName, ResolvedEndpoint & { rateLimit?: RateLimit }>;
  for (const c of CHAINS) {
    const e = config[c].endpoint;
    out[c] = { ...resolveEndpoint(e.url, e.publicUrl, env, `${c}.endpoint`), ...(e.rateLimit ? { rateLimit: e.rateLimit } : {}) };
  }
  return out;
}
