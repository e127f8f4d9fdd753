/**
 * @module horizon
 * A thin Horizon client over an injected fetch, and parsers for the resources the driver reads.
 * Expected ledger answers (404, 400 problem+json) are values; only transport faults throw.
 */
import { TransportError } from '@vault/sdk';
import { fromDecimal } from './amounts.js';

export type FetchLike = (input: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<{
  status: number;
  text(): Promise<string>;
}>;

export interface HorizonReply {
  status: number;
  body: unknown;
}

export class HorizonClient {
  constructor(
    readonly baseUrl: string,
    private readonly fetchFn: FetchLike,
    private readonly chain: string,
  ) {}

  async get(path: string): Promise<HorizonReply> {
    return this.request(path, { method: 'GET', headers: { accept: 'application/json' } });
  }

  async postTransaction(envelopeXdr: string): Promise<HorizonReply> {
    return this.request('/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: `tx=${encodeURIComponent(envelopeXdr)}`,
    });
  }

  private async request(path: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<HorizonReply> {
    const url = `${this.baseUrl.replace(/\/+$/, '')}${path}`;
    let status: number;
    let text: string;
    try {
      const res = await this.fetchFn(url, init);
      status = res.status;
      text = await res.text();
    } catch (cause) {
      throw new TransportError(`Horizon ${this.chain}: ${init.method} ${path} failed`, { cause, data: { chain: this.chain, url } });
    }
    let body: unknown = null;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch (cause) {
        throw new TransportError(`Horizon ${this.chain}: ${init.method} ${path} answered ${status} with a body that is not JSON`, {
          cause,
          data: { chain: this.chain, url, status },
        });
      }
    }
    return { status, body };
  }
}

export interface AccountSigner {
  key: string;
  weight: number;
  type: string;
}

export interface AccountBalance {
  /** `native`, `CODE:ISSUER`, or `liquidity_pool:<id>`. */
  asset: string;
  assetType: string;
  code: string | null;
  issuer: string | null;
  amount: bigint;
  limit: bigint | null;
  authorized: boolean | null;
  authorizedToMaintainLiabilities: boolean | null;
  clawbackEnabled: boolean | null;
}

/** The facts of GET /accounts/:id the driver and the guards use. */
export interface AccountFacts {
  id: string;
  /** Current sequence (the next transaction uses sequence + 1). */
  sequence: bigint;
  thresholds: { low: number; med: number; high: number };
  masterWeight: number;
  flags: { auth_required: boolean; auth_revocable: boolean; auth_immutable: boolean; auth_clawback_enabled: boolean };
  signers: AccountSigner[];
  balances: AccountBalance[];
  subentryCount: number;
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new TypeError(`${what} must be an object`);
  return v as Record<string, unknown>;
}
function num(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${what} must be an integer`);
  return v;
}
function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new TypeError(`${what} must be a string`);
  return v;
}
function bool(v: unknown): boolean | null {
  return typeof v === 'boolean' ? v : null;
}

/** Parses a Horizon account resource. Throws TypeError on a shape Horizon never returns. */
export function parseAccount(body: unknown): AccountFacts {
  const a = obj(body, 'account');
  const id = str(a['account_id'] ?? a['id'], 'account_id');
  const seqText = str(a['sequence'], 'sequence');
  if (!/^[0-9]{1,19}$/.test(seqText)) throw new TypeError('sequence must be an int64 decimal string');
  const t = obj(a['thresholds'], 'thresholds');
  const f = obj(a['flags'], 'flags');
  const signers = (Array.isArray(a['signers']) ? a['signers'] : []).map((s, i) => {
    const o = obj(s, `signers.${i}`);
    return { key: str(o['key'], 'signer.key'), weight: num(o['weight'], 'signer.weight'), type: str(o['type'], 'signer.type') };
  });
  const balances = (Array.isArray(a['balances']) ? a['balances'] : []).map((b, i): AccountBalance => {
    const o = obj(b, `balances.${i}`);
    const assetType = str(o['asset_type'], 'asset_type');
    const code = typeof o['asset_code'] === 'string' ? o['asset_code'] : null;
    const issuer = typeof o['asset_issuer'] === 'string' ? o['asset_issuer'] : null;
    const asset =
      assetType === 'native'
        ? 'native'
        : assetType === 'liquidity_pool_shares'
          ? `liquidity_pool:${str(o['liquidity_pool_id'], 'liquidity_pool_id')}`
          : `${code ?? ''}:${issuer ?? ''}`;
    return {
      asset,
      assetType,
      code,
      issuer,
      amount: fromDecimal(str(o['balance'], 'balance')),
      limit: typeof o['limit'] === 'string' ? fromDecimal(o['limit']) : null,
      authorized: bool(o['is_authorized']),
      authorizedToMaintainLiabilities: bool(o['is_authorized_to_maintain_liabilities']),
      clawbackEnabled: bool(o['is_clawback_enabled']),
    };
  });
  const master = signers.find((s) => s.key === id);
  return {
    id,
    sequence: BigInt(seqText),
    thresholds: { low: num(t['low_threshold'], 'low_threshold'), med: num(t['med_threshold'], 'med_threshold'), high: num(t['high_threshold'], 'high_threshold') },
    masterWeight: master?.weight ?? 0,
    flags: {
      auth_required: f['auth_required'] === true,
      auth_revocable: f['auth_revocable'] === true,
      auth_immutable: f['auth_immutable'] === true,
      auth_clawback_enabled: f['auth_clawback_enabled'] === true,
    },
    signers,
    balances,
    subentryCount: typeof a['subentry_count'] === 'number' ? a['subentry_count'] : 0,
  };
}

/**
 * An issuer is locked when no combination of its signers can reach its medium threshold (the
 * payment threshold): master weight 0 and no other signer, or too little total weight. Weights
 * count at most 255 each, as stellar-core caps them.
 */
export function issuerLocked(account: AccountFacts): boolean {
  const total = account.signers.filter((s) => s.type === 'ed25519_public_key').reduce((sum, s) => sum + Math.min(s.weight, 255), 0);
  return total === 0 || total < account.thresholds.med;
}

/**
 * The per-operation base fee (stroops) from a GET /fee_stats body: `last_ledger_base_fee` when it
 * is an integer above the protocol minimum of 100 (capped at 100_000_000), else 100.
 */
export function baseFeeOf(feeStats: unknown): number {
  const base = Number((feeStats as Record<string, unknown> | null)?.['last_ledger_base_fee'] ?? 100);
  return Number.isInteger(base) && base > 100 ? Math.min(base, 100_000_000) : 100;
}

/** Horizon's problem+json `extras.result_codes` and `extras.result_xdr`, when present. */
export function problemExtras(body: unknown): { resultCodes: { transaction: string; operations?: string[] } | null; resultXdr: string | null; hash: string | null } {
  const b = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const extras = typeof b['extras'] === 'object' && b['extras'] !== null ? (b['extras'] as Record<string, unknown>) : {};
  const rc = extras['result_codes'];
  let resultCodes: { transaction: string; operations?: string[] } | null = null;
  if (typeof rc === 'object' && rc !== null && typeof (rc as Record<string, unknown>)['transaction'] === 'string') {
    const r = rc as Record<string, unknown>;
    resultCodes = { transaction: r['transaction'] as string };
    if (Array.isArray(r['operations'])) resultCodes.operations = r['operations'].filter((x): x is string => typeof x === 'string');
  }
  return {
    resultCodes,
    resultXdr: typeof extras['result_xdr'] === 'string' ? extras['result_xdr'] : null,
    hash: typeof extras['hash'] === 'string' ? extras['hash'] : null,
  };
}
