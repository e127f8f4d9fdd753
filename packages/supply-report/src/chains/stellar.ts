/**
 * @module chains/stellar
 * Stellar issuers through Horizon. Supply of an asset = the three `balances` buckets (authorized,
 * authorized_to_maintain_liabilities, unauthorized) + claimable_balances_amount +
 * liquidity_pools_amount + contracts_amount, summed exactly in stroops (7 places). Horizon dropped
 * the old `amount` field; a record missing any of the six parts fails closed.
 */
import type { StellarIssuerRow } from '../report-types.js';
import { SupplyReportError } from '../errors.js';
import { isObject, type Json } from '../json.js';
import { diffFigures, diffText, getQuery, type Change, type ChainContext, type Provenance } from './common.js';

export const PAGE_LIMIT = 200;
export const assetsQuery = (issuer: string) => `GET /assets?asset_issuer=${issuer}&limit=${PAGE_LIMIT}`;
export const assetsByCodeQuery = (code: string) => `GET /assets?asset_code=${code}&limit=${PAGE_LIMIT}`;
export const accountQuery = (account: string) => `GET /accounts/${account}`;
export const operationsQuery = (account: string) => `GET /accounts/${account}/operations?order=asc&limit=${PAGE_LIMIT}`;
/** One whole unit, the supply of each member of a locked group. */
export const ONE_UNIT = '1.0000000';

const AMOUNT = /^[0-9]+\.[0-9]{7}$/;

function stroops(v: unknown, path: string): bigint {
  if (typeof v !== 'string' || !AMOUNT.test(v)) throw new SupplyReportError('bad_reply', `${path} is missing or not a 7-place amount`);
  return BigInt(v.replace('.', ''));
}

export function formatStroops(units: bigint): string {
  const s = units.toString().padStart(8, '0');
  return `${s.slice(0, -7)}.${s.slice(-7)}`;
}

/** Exact supply of one /assets record, in Horizon's 7-place notation. */
export function assetSupply(record: Json, what: string): string {
  const b = record['balances'];
  if (!isObject(b)) throw new SupplyReportError('bad_reply', `${what}: balances is missing`);
  const parts = [
    stroops(b['authorized'], `${what}: balances.authorized`),
    stroops(b['authorized_to_maintain_liabilities'], `${what}: balances.authorized_to_maintain_liabilities`),
    stroops(b['unauthorized'], `${what}: balances.unauthorized`),
    stroops(record['claimable_balances_amount'], `${what}: claimable_balances_amount`),
    stroops(record['liquidity_pools_amount'], `${what}: liquidity_pools_amount`),
    stroops(record['contracts_amount'], `${what}: contracts_amount`),
  ];
  return formatStroops(parts.reduce((a, x) => a + x, 0n));
}

/** Records of an /assets page; refuses a full page, which one GET cannot reproduce. */
export function assetRecords(json: unknown, what: string): Json[] {
  const records = isObject(json) && isObject(json['_embedded']) ? json['_embedded']['records'] : undefined;
  if (!Array.isArray(records)) throw new SupplyReportError('bad_reply', `${what}: _embedded.records is missing`);
  if (records.length >= PAGE_LIMIT) throw new SupplyReportError('bad_query', `${what}: a full page of ${PAGE_LIMIT} records; the answer spans more than one request, so the row cannot be re-run from one query`);
  return records.map((r, i) => {
    if (!isObject(r)) throw new SupplyReportError('bad_reply', `${what}: records[${i}] is not an object`);
    return r;
  });
}

/** Supply per asset code of one issuer. */
export function issuerAssets(json: unknown, issuer: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of assetRecords(json, what)) {
    if (r['asset_issuer'] !== issuer) throw new SupplyReportError('bad_reply', `${what}: record for another issuer (${String(r['asset_issuer'])})`);
    const code = r['asset_code'];
    if (typeof code !== 'string') throw new SupplyReportError('bad_reply', `${what}: a record has no asset_code`);
    out[code] = assetSupply(r, `${what} ${code}`);
  }
  return out;
}

/**
 * Locked: the master key weight is 0 and the remaining signers together cannot reach the medium
 * threshold (what issuing a payment needs) nor the high threshold (what re-adding a signer needs).
 * A threshold of 0 still needs one signature of weight >= 1, hence max(threshold, 1).
 */
export function isLocked(account: Json, id: string, what: string): boolean {
  const signers = account['signers'];
  const t = account['thresholds'];
  if (!Array.isArray(signers) || !isObject(t)) throw new SupplyReportError('bad_reply', `${what}: signers or thresholds missing`);
  let master: number | null = null;
  let others = 0;
  for (const s of signers) {
    if (!isObject(s) || typeof s['key'] !== 'string' || typeof s['weight'] !== 'number') throw new SupplyReportError('bad_reply', `${what}: malformed signer`);
    if (s['key'] === id) master = s['weight'];
    else others += s['weight'];
  }
  // Horizon lists the master key among the signers even at weight 0; its absence is a malformed reply.
  if (master === null) throw new SupplyReportError('bad_reply', `${what}: the master key is not among the signers`);
  const med = t['med_threshold'];
  const high = t['high_threshold'];
  if (typeof med !== 'number' || typeof high !== 'number') throw new SupplyReportError('bad_reply', `${what}: thresholds malformed`);
  return master === 0 && others < Math.max(med, 1) && others < Math.max(high, 1);
}

/** created_at of the account_merge that removed `id`, or null when the first page shows none. */
export function mergeDate(json: unknown, id: string, what: string): string | null {
  const records = isObject(json) && isObject(json['_embedded']) ? json['_embedded']['records'] : undefined;
  if (!Array.isArray(records)) throw new SupplyReportError('bad_reply', `${what}: _embedded.records is missing`);
  for (const r of records) {
    if (isObject(r) && r['type'] === 'account_merge' && (r['account'] === id || r['source_account'] === id) && typeof r['created_at'] === 'string') return r['created_at'];
  }
  return null;
}

function ledgerOf(headers: Headers): Provenance['at'] {
  const l = headers.get('latest-ledger');
  return l && /^[0-9]+$/.test(l) ? { ledger: Number(l), hash: null } : undefined;
}

export interface IssuerAccountFacts {
  /** null: the account does not exist (404). */
  locked: boolean | null;
  /** created_at of the account_merge that removed it, when found. */
  merged?: string;
  note?: string;
}

/**
 * The supporting facts of one issuer account: GET /accounts/<G…> gives `locked`; a 404 means the
 * account is gone, and GET /accounts/<G…>/operations is searched for the account_merge date.
 * With `withMerge: false` a 404 only gives `locked: null` (no operations request).
 */
export async function issuerAccountFacts(ctx: ChainContext, issuer: string, withMerge = true): Promise<IssuerAccountFacts> {
  const acct = await getQuery(ctx, accountQuery(issuer), `account ${issuer}`, [404]);
  if (acct.reply.status !== 404) {
    if (!isObject(acct.json)) throw new SupplyReportError('bad_reply', `account ${issuer}: not an object`);
    return { locked: isLocked(acct.json, issuer, `account ${issuer}`) };
  }
  if (!withMerge) return { locked: null };
  const ops = await getQuery(ctx, operationsQuery(issuer), `operations ${issuer}`, [404]);
  const date = ops.reply.status === 404 ? null : mergeDate(ops.json, issuer, `operations ${issuer}`);
  if (date) return { locked: null, merged: date, note: 'The issuer account was merged; no key can issue more of its assets.' };
  return { locked: null, note: `The issuer account does not exist and no account_merge is among its first ${PAGE_LIMIT} operations.` };
}

/** One issuer's row (query: GET /assets?asset_issuer=…). */
export async function collectStellarIssuer(ctx: ChainContext, issuer: string): Promise<StellarIssuerRow> {
  const query = assetsQuery(issuer);
  const assetsReply = await getQuery(ctx, query, `assets ${issuer}`);
  const assets = issuerAssets(assetsReply.json, issuer, `assets ${issuer}`);
  const { locked, merged, note } = await issuerAccountFacts(ctx, issuer);
  const at = ledgerOf(assetsReply.reply.headers);
  return {
    issuer,
    locked,
    ...(merged ? { merged } : {}),
    assets,
    query,
    ...(note ? { note } : {}),
    ...(at ? { at } : {}),
    response_sha256: assetsReply.reply.sha256,
  };
}

export const groupLabel = (n: number) => `(${n} locked issuers, 1 unit each)`;

/**
 * Grouping rule: issuers that are locked, not merged, and issue exactly one asset whose supply is
 * exactly one whole unit are grouped by asset code; a code shared by at least `min` such issuers
 * becomes one row labelled "(N locked issuers, 1 unit each)" whose query is
 * GET /assets?asset_code=<code>, with the member accounts listed in `members`. The group query is
 * run too, and the group is only formed when its answer shows every member at one unit; otherwise
 * the members keep their own rows.
 */
export async function groupLocked(ctx: ChainContext, rows: StellarIssuerRow[], min: number): Promise<StellarIssuerRow[]> {
  const candidates = new Map<string, StellarIssuerRow[]>();
  for (const r of rows) {
    const codes = Object.keys(r.assets);
    if (r.locked === true && !r.merged && codes.length === 1 && r.assets[codes[0] as string] === ONE_UNIT) {
      const code = codes[0] as string;
      candidates.set(code, [...(candidates.get(code) ?? []), r]);
    }
  }
  const grouped = new Set<StellarIssuerRow>();
  const groups: StellarIssuerRow[] = [];
  for (const [code, members] of candidates) {
    if (members.length < min) continue;
    const query = assetsByCodeQuery(code);
    let reply;
    try {
      reply = await getQuery(ctx, query, `assets code ${code}`);
    } catch (e) {
      ctx.log(`[stellar] not grouping ${code}: ${(e as Error).message}`);
      continue;
    }
    let supplies: Map<string, string>;
    try {
      supplies = new Map(assetRecords(reply.json, `assets code ${code}`).map((r) => [String(r['asset_issuer']), assetSupply(r, `assets code ${code}`)]));
    } catch (e) {
      ctx.log(`[stellar] not grouping ${code}: ${(e as Error).message}`);
      continue;
    }
    if (!members.every((m) => supplies.get(m.issuer) === ONE_UNIT)) continue;
    for (const m of members) grouped.add(m);
    const at = ledgerOf(reply.reply.headers);
    groups.push({
      issuer: groupLabel(members.length),
      locked: true,
      assets: { [code]: `(${members.length} issuers)` },
      query,
      note: `Each member issuer has master weight 0 and no signers able to issue more; each issued exactly ${ONE_UNIT} ${code}.`,
      members: members.map((m) => m.issuer).sort(),
      ...(at ? { at } : {}),
      response_sha256: reply.reply.sha256,
    });
  }
  return [...rows.filter((r) => !grouped.has(r)), ...groups];
}

const lockedText = (v: boolean | null | undefined) => (v === undefined ? undefined : String(v));

/**
 * Re-runs a row's query and lists what changed: the supplies, then the supporting facts from
 * /accounts: `locked` and `merged` of an issuer row; for a group row, `locked.<member>` of each
 * member (recorded as true: the group only holds locked issuers; a member whose account is gone
 * shows `true -> null`). A failing /accounts request fails the row, as a failing query does.
 */
export async function reverifyStellarRow(ctx: ChainContext, row: StellarIssuerRow): Promise<{ changes: Change[]; sha256: string; at: Provenance['at'] }> {
  const { reply, json } = await getQuery(ctx, row.query, row.members ? `assets group ${row.issuer}` : `assets ${row.issuer}`);
  if (row.members) {
    const code = /asset_code=([^&]+)/.exec(row.query)?.[1];
    if (!code) throw new SupplyReportError('bad_query', `stellar group row ${row.issuer}: query has no asset_code`);
    const supplies = new Map(assetRecords(json, row.query).filter((r) => r['asset_code'] === code).map((r) => [String(r['asset_issuer']), assetSupply(r, row.query)]));
    const before = Object.fromEntries(row.members.map((m) => [m, ONE_UNIT]));
    const now: Record<string, string> = {};
    for (const m of row.members) {
      const s = supplies.get(m);
      if (s !== undefined) now[m] = s;
    }
    const lockedChanges: Change[] = [];
    for (const m of row.members) {
      const facts = await issuerAccountFacts(ctx, m, false);
      lockedChanges.push(...diffText(`locked.${m}`, 'true', lockedText(facts.locked)));
    }
    return { changes: [...diffFigures(`assets.${code}`, before, now), ...lockedChanges], sha256: reply.sha256, at: ledgerOf(reply.headers) };
  }
  const now = issuerAssets(json, row.issuer, row.query);
  const facts = await issuerAccountFacts(ctx, row.issuer);
  return {
    changes: [...diffFigures('assets', row.assets, now), ...diffText('locked', lockedText(row.locked), lockedText(facts.locked)), ...diffText('merged', row.merged, facts.merged)],
    sha256: reply.sha256,
    at: ledgerOf(reply.headers),
  };
}
