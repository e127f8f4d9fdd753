/**
 * @module chains/xrpl
 * XRPL issuers: obligations from gateway_balances (the row's query), the domain from account_info,
 * and notes from account_info flags and account_tx (limit 100). Replies are rippled JSON-RPC over
 * HTTP: always HTTP 200 with `result.status` "success" or "error".
 */
import type { XrplIssuerRow } from '../report-types.js';
import { normalizeDecimal } from '../decimal.js';
import { SupplyReportError } from '../errors.js';
import type { HttpReply } from '../http.js';
import { isObject, parseJsonExact, type Json } from '../json.js';
import { diffFigures, diffText, postQuery, type Change, type ChainContext, type Provenance } from './common.js';

/** lsfAMM: the AccountRoot of an AMM pool (XLS-30). */
export const LSF_AMM = 0x02000000;

export const gatewayBalancesQuery = (account: string) => JSON.stringify({ method: 'gateway_balances', params: [{ account, ledger_index: 'validated' }] });
export const accountInfoQuery = (account: string) => JSON.stringify({ method: 'account_info', params: [{ account, ledger_index: 'validated' }] });
export const accountTxQuery = (account: string, limit = 100) => JSON.stringify({ method: 'account_tx', params: [{ account, limit }] });

/** rippled's `slowDown` (and `tooBusy`) arrive as HTTP 200: retry them like a 503. */
export function rippledBusy(reply: HttpReply): boolean {
  return /"error"\s*:\s*"(slowDown|tooBusy|noNetwork)"/.test(reply.text);
}

/**
 * The `result` of a rippled reply; an error becomes SupplyReportError('rpc') with its token and
 * message. JSON-RPC over HTTP puts `status` inside `result`; the WebSocket envelope (recorded
 * replies) puts it beside `result`, with the error fields at the top level. Both are read.
 */
export function rippledResult(json: unknown, what: string): Json {
  if (!isObject(json)) throw new SupplyReportError('bad_reply', `${what}: reply is not an object`);
  const result = json['result'];
  const status = isObject(result) && result['status'] !== undefined ? result['status'] : json['status'];
  const errorSource = isObject(result) && result['error'] !== undefined ? result : json;
  if (status !== 'success' || errorSource['error'] !== undefined) {
    throw new SupplyReportError('rpc', `${what}: ${String(errorSource['error'] ?? 'error')}${errorSource['error_message'] ? `: ${String(errorSource['error_message'])}` : ''}`);
  }
  if (!isObject(result)) throw new SupplyReportError('bad_reply', `${what}: reply has no result object`);
  return result;
}

/**
 * A currency code as the report shows it: 3-letter codes as they are; 40-hex codes decoded to text
 * when they are printable ASCII padded with zero bytes (e.g. "RLUSD"); the ISO form (leading zero
 * byte) to its 3 letters; anything else (AMM LP tokens start with 0x03) stays hex.
 */
export function decodeCurrency(code: string): string {
  if (!/^[0-9A-Fa-f]{40}$/.test(code)) return code;
  const bytes = Buffer.from(code, 'hex');
  if (bytes[0] === 0x00) {
    const iso = bytes.subarray(12, 15).toString('latin1');
    return /^[A-Za-z0-9?!@#$%^&*<>(){}[\]|]{3}$/.test(iso) && bytes.subarray(0, 12).every((b) => b === 0) && bytes.subarray(15).every((b) => b === 0) ? iso : code.toUpperCase();
  }
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end -= 1;
  const text = bytes.subarray(0, end);
  if (text.length === 0 || !text.every((b) => b >= 0x20 && b <= 0x7e)) return code.toUpperCase();
  return text.toString('latin1');
}

/** Obligations as decimal strings in plain notation, keyed by decoded currency code. */
export function parseObligations(result: Json, what: string): Record<string, string> {
  const raw = result['obligations'];
  if (raw === undefined) return {};
  if (!isObject(raw)) throw new SupplyReportError('bad_reply', `${what}: obligations is not an object`);
  const out: Record<string, string> = {};
  for (const [code, value] of Object.entries(raw)) {
    if (typeof value !== 'string') throw new SupplyReportError('bad_reply', `${what}: obligations.${code} is not a string`);
    let key = decodeCurrency(code);
    // Two raw codes that decode to the same text keep their raw form, so neither hides the other.
    if (key in out || Object.keys(raw).some((c) => c !== code && decodeCurrency(c) === key)) key = code;
    out[key] = normalizeDecimal(value, `${what}: obligations.${code}`);
  }
  return out;
}

/** The ledger a rippled reply describes: validated index + hash, or the open ledger's index. */
export function rippledAt(result: Json): NonNullable<Provenance['at']> {
  const idx = result['ledger_index'] ?? result['ledger_current_index'];
  const ledger = typeof idx === 'number' || typeof idx === 'string' ? idx : typeof idx === 'bigint' ? idx.toString() : 'unknown';
  return { ledger, hash: typeof result['ledger_hash'] === 'string' ? result['ledger_hash'] : null };
}

/** Domain field (hex of ASCII/UTF-8) as text; null when absent. */
export function decodeDomain(accountData: Json): string | null {
  const d = accountData['Domain'];
  if (typeof d !== 'string' || d.length === 0) return null;
  if (!/^([0-9A-Fa-f]{2})+$/.test(d)) throw new SupplyReportError('bad_reply', 'account_info: Domain is not hex');
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.from(d, 'hex'));
}

export interface XrplFacts {
  isAmm: boolean;
  memoCount: number;
  txCount: number;
}

/** Reads account_tx entries in API v1 (`tx`) and v2 (`tx_json`) shapes; counts those carrying Memos. */
export function countMemos(result: Json, what: string): { memoCount: number; txCount: number } {
  const txs = result['transactions'];
  if (!Array.isArray(txs)) throw new SupplyReportError('bad_reply', `${what}: transactions is not an array`);
  let memoCount = 0;
  for (const t of txs) {
    const tx = isObject(t) ? (t['tx_json'] ?? t['tx']) : undefined;
    if (!isObject(tx)) throw new SupplyReportError('bad_reply', `${what}: a transaction entry has neither tx nor tx_json`);
    if (Array.isArray(tx['Memos']) && tx['Memos'].length > 0) memoCount += 1;
  }
  return { memoCount, txCount: txs.length };
}

export function xrplNote(obligations: Record<string, string>, provider: string | undefined, stablecoinCodes: readonly string[], facts: XrplFacts): string | undefined {
  const notes: string[] = [];
  const lookalikes = Object.keys(obligations).filter((c) => stablecoinCodes.includes(c.toUpperCase()));
  if (lookalikes.length > 0 && provider === undefined) {
    notes.push(`${lookalikes.join(', ')} ${lookalikes.length === 1 ? 'is a self-issued IOU' : 'are self-issued IOUs'} of this account, not the asset of the named stablecoin providers.`);
  }
  if (facts.isAmm) notes.push('AMM pool account (lsfAMM / AMMID): its obligations are LP tokens.');
  if (facts.memoCount > 0) notes.push(`Anchor account carrying memos: ${facts.memoCount} of its last ${facts.txCount} transactions have Memos.`);
  return notes.length > 0 ? notes.join(' ') : undefined;
}

/** Builds one issuer row; throws (and the caller omits the row) when any of its requests fails. */
export async function collectXrplIssuer(ctx: ChainContext, issuer: { account: string; provider?: string }, stablecoinCodes: readonly string[], limit: number): Promise<XrplIssuerRow> {
  const query = gatewayBalancesQuery(issuer.account);
  const gb = await postQuery(ctx, query, `gateway_balances ${issuer.account}`, rippledBusy);
  const gbResult = rippledResult(gb.json, `gateway_balances ${issuer.account}`);
  const obligations = parseObligations(gbResult, `gateway_balances ${issuer.account}`);

  const ai = await postQuery(ctx, accountInfoQuery(issuer.account), `account_info ${issuer.account}`, rippledBusy);
  const aiResult = rippledResult(ai.json, `account_info ${issuer.account}`);
  const data = aiResult['account_data'];
  if (!isObject(data)) throw new SupplyReportError('bad_reply', `account_info ${issuer.account}: account_data missing`);
  const domain = decodeDomain(data);
  const flags = typeof data['Flags'] === 'number' ? data['Flags'] : 0;
  const isAmm = (flags & LSF_AMM) !== 0 || typeof data['AMMID'] === 'string';

  const at = await postQuery(ctx, accountTxQuery(issuer.account, limit), `account_tx ${issuer.account}`, rippledBusy);
  const { memoCount, txCount } = countMemos(rippledResult(at.json, `account_tx ${issuer.account}`), `account_tx ${issuer.account}`);

  const note = xrplNote(obligations, issuer.provider, stablecoinCodes, { isAmm, memoCount, txCount });
  return {
    account: issuer.account,
    domain,
    obligations,
    query,
    ...(note ? { note } : {}),
    at: rippledAt(gbResult),
    response_sha256: gb.reply.sha256,
  };
}

/**
 * Re-runs a row's query and lists what changed: the obligations, then the supporting fact `domain`
 * from account_info (validated). A failing account_info fails the row, as a failing query does.
 */
export async function reverifyXrplRow(ctx: ChainContext, row: XrplIssuerRow): Promise<{ changes: Change[]; sha256: string; at: Provenance['at'] }> {
  const parsed = parseJsonExact(row.query, 'row query') as Json;
  if (!isObject(parsed) || parsed['method'] !== 'gateway_balances') throw new SupplyReportError('bad_query', `xrpl row ${row.account}: query is not a gateway_balances request`);
  const { reply, json } = await postQuery(ctx, row.query, `gateway_balances ${row.account}`, rippledBusy);
  const result = rippledResult(json, `gateway_balances ${row.account}`);
  const now = parseObligations(result, `gateway_balances ${row.account}`);
  const before = Object.fromEntries(Object.entries(row.obligations).map(([k, v]) => [k, normalizeDecimal(v)]));
  const ai = await postQuery(ctx, accountInfoQuery(row.account), `account_info ${row.account}`, rippledBusy);
  const data = rippledResult(ai.json, `account_info ${row.account}`)['account_data'];
  if (!isObject(data)) throw new SupplyReportError('bad_reply', `account_info ${row.account}: account_data missing`);
  return {
    changes: [...diffFigures('obligations', before, now), ...diffText('account', row.account, String(result['account'] ?? row.account)), ...diffText('domain', row.domain, decodeDomain(data))],
    sha256: reply.sha256,
    at: rippledAt(result),
  };
}
