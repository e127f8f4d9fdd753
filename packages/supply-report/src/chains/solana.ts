/**
 * @module chains/solana
 * Solana mints over JSON-RPC: the supply from getTokenSupply (`value.amount` and `value.decimals`;
 * `uiAmount` is a float and is never read), authorities and Token-2022 extensions from
 * getAccountInfo (jsonParsed). Every reply is parsed bigint-safe: extension fields and `rentEpoch`
 * are u64 and pass 2^53. History (getSignaturesForAddress, then getTransaction of the newest
 * signature) is read only for a zero-supply mint, to explain the zero.
 */
import type { SolanaMintRow } from '../report-types.js';
import { unitsToDecimal, normalizeDecimal } from '../decimal.js';
import { SupplyReportError } from '../errors.js';
import { isObject, parseJsonExact, stringifyExact, toBigInt, type Json } from '../json.js';
import { diffFigures, diffText, jsonRpcResult, postQuery, type Change, type ChainContext, type Provenance } from './common.js';

export const TOKEN_PROGRAMS = ['spl-token', 'spl-token-2022'] as const;

const rpcBody = (method: string, params: unknown[]) => stringifyExact({ jsonrpc: '2.0', id: 1, method, params });
export const tokenSupplyQuery = (mint: string, commitment: string) => rpcBody('getTokenSupply', [mint, { commitment }]);
export const accountInfoQuery = (mint: string, commitment: string) => rpcBody('getAccountInfo', [mint, { encoding: 'jsonParsed', commitment }]);
export const signaturesQuery = (mint: string, commitment: string, limit: number) => rpcBody('getSignaturesForAddress', [mint, { limit, commitment }]);
export const transactionQuery = (signature: string, commitment: string) => rpcBody('getTransaction', [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment }]);

export interface TokenSupply {
  units: bigint;
  decimals: number;
  supply: string;
  slot: number | string;
}

/** getTokenSupply's result: exact amount and decimals; the float uiAmount is ignored. */
export function parseTokenSupply(result: unknown, what: string): TokenSupply {
  if (!isObject(result) || !isObject(result['value']) || !isObject(result['context'])) throw new SupplyReportError('bad_reply', `${what}: result.value or result.context missing`);
  const v = result['value'];
  const amount = v['amount'];
  if (typeof amount !== 'string' || !/^[0-9]+$/.test(amount)) throw new SupplyReportError('bad_reply', `${what}: value.amount is not an integer string`);
  const decimals = v['decimals'];
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 255) throw new SupplyReportError('bad_reply', `${what}: value.decimals is not a small integer`);
  const slotRaw = result['context']['slot'];
  const slot = typeof slotRaw === 'bigint' ? slotRaw.toString() : toBigInt(slotRaw, `${what}: context.slot`) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(slotRaw) : String(slotRaw);
  const units = BigInt(amount);
  return { units, decimals, supply: unitsToDecimal(units, decimals), slot };
}

export interface MintInfo {
  program: string;
  mintAuthority: string | null;
  freezeAuthority: string | null;
  decimals: number;
  supply: bigint;
  extensions: { extension: string; state?: unknown }[];
}

/** getAccountInfo (jsonParsed) of a mint account; refuses anything that is not a token mint. */
export function parseMintAccount(result: unknown, what: string): MintInfo {
  if (!isObject(result)) throw new SupplyReportError('bad_reply', `${what}: result missing`);
  const value = result['value'];
  if (value === null) throw new SupplyReportError('rpc', `${what}: account does not exist`);
  if (!isObject(value) || !isObject(value['data'])) throw new SupplyReportError('bad_reply', `${what}: value.data is not jsonParsed (is the RPC ignoring encoding?)`);
  const data = value['data'];
  const program = data['program'];
  if (typeof program !== 'string' || !(TOKEN_PROGRAMS as readonly string[]).includes(program)) throw new SupplyReportError('bad_reply', `${what}: owned by ${String(program)}, not a token program`);
  const parsed = data['parsed'];
  if (!isObject(parsed) || parsed['type'] !== 'mint' || !isObject(parsed['info'])) throw new SupplyReportError('bad_reply', `${what}: not a mint account`);
  const info = parsed['info'];
  const auth = (k: string) => {
    const a = info[k];
    if (a !== null && typeof a !== 'string') throw new SupplyReportError('bad_reply', `${what}: ${k} is neither null nor an address`);
    return a as string | null;
  };
  const extRaw = info['extensions'];
  const extensions: MintInfo['extensions'] = [];
  if (extRaw !== undefined) {
    if (!Array.isArray(extRaw)) throw new SupplyReportError('bad_reply', `${what}: extensions is not an array`);
    for (const e of extRaw) {
      if (!isObject(e) || typeof e['extension'] !== 'string') throw new SupplyReportError('bad_reply', `${what}: malformed extension`);
      extensions.push({ extension: e['extension'], ...(e['state'] !== undefined ? { state: e['state'] } : {}) });
    }
  }
  const decimals = info['decimals'];
  if (typeof decimals !== 'number') throw new SupplyReportError('bad_reply', `${what}: decimals missing`);
  return { program, mintAuthority: auth('mintAuthority'), freezeAuthority: auth('freezeAuthority'), decimals, supply: toBigInt(info['supply'], `${what}: supply`), extensions };
}

/** Net change of `mint` units in one transaction's token balances (post - pre), from meta. */
export function mintDelta(tx: unknown, mint: string, what: string): bigint {
  if (!isObject(tx) || !isObject(tx['meta'])) throw new SupplyReportError('bad_reply', `${what}: meta missing`);
  const sum = (k: string) => {
    const list = (tx['meta'] as Json)[k];
    if (list === undefined || list === null) return 0n;
    if (!Array.isArray(list)) throw new SupplyReportError('bad_reply', `${what}: meta.${k} is not an array`);
    let total = 0n;
    for (const b of list) {
      if (!isObject(b) || b['mint'] !== mint) continue;
      const ui = b['uiTokenAmount'];
      if (!isObject(ui)) throw new SupplyReportError('bad_reply', `${what}: uiTokenAmount missing`);
      total += toBigInt(ui['amount'], `${what}: uiTokenAmount.amount`);
    }
    return total;
  };
  return sum('postTokenBalances') - sum('preTokenBalances');
}

function extensionsNote(ext: MintInfo['extensions']): string {
  return ext.map((e) => (e.state === undefined ? e.extension : `${e.extension} ${stringifyExact(e.state)}`)).join('; ');
}

/** Explains a zero supply from the mint's newest transaction. */
async function explainZero(ctx: ChainContext, mint: string, commitment: string, limit: number, decimals: number): Promise<string> {
  const sigs = await postQuery(ctx, signaturesQuery(mint, commitment, limit), `getSignaturesForAddress ${mint}`);
  const list = jsonRpcResult(sigs.json, `getSignaturesForAddress ${mint}`);
  if (!Array.isArray(list)) throw new SupplyReportError('bad_reply', `getSignaturesForAddress ${mint}: result is not an array`);
  if (list.length === 0) return '0 (no tokens outstanding; the mint has no transactions)';
  const newest = list[0];
  if (!isObject(newest) || typeof newest['signature'] !== 'string') throw new SupplyReportError('bad_reply', `getSignaturesForAddress ${mint}: malformed entry`);
  const sig = newest['signature'];
  const txReply = await postQuery(ctx, transactionQuery(sig, commitment), `getTransaction ${sig.slice(0, 12)}…`);
  const tx = jsonRpcResult(txReply.json, `getTransaction ${sig}`);
  if (tx === null) throw new SupplyReportError('rpc', `getTransaction ${sig}: transaction not found`);
  const delta = mintDelta(tx, mint, `getTransaction ${sig}`);
  const bt = isObject(tx) ? tx['blockTime'] : undefined;
  const when = typeof bt === 'number' ? ` on ${new Date(bt * 1000).toISOString().replace('.000Z', 'Z')}` : '';
  const what = delta < 0n ? `, which removed ${unitsToDecimal(-delta, decimals)}` : delta > 0n ? `, which added ${unitsToDecimal(delta, decimals)}` : '';
  return `0 (no tokens outstanding; newest transaction ${sig}${when}${what})`;
}

/** One mint's row (query: the getTokenSupply request). */
export async function collectSolanaMint(ctx: ChainContext, m: { mint: string; label: string }, commitment: string, historyLimit: number): Promise<SolanaMintRow> {
  const query = tokenSupplyQuery(m.mint, commitment);
  const ts = await postQuery(ctx, query, `getTokenSupply ${m.mint}`);
  const supply = parseTokenSupply(jsonRpcResult(ts.json, `getTokenSupply ${m.mint}`), `getTokenSupply ${m.mint}`);
  const ai = await postQuery(ctx, accountInfoQuery(m.mint, commitment), `getAccountInfo ${m.mint}`);
  const info = parseMintAccount(jsonRpcResult(ai.json, `getAccountInfo ${m.mint}`), `getAccountInfo ${m.mint}`);
  if (info.decimals !== supply.decimals) throw new SupplyReportError('bad_reply', `${m.mint}: getTokenSupply says ${supply.decimals} decimals, the mint account ${info.decimals}`);
  const supplyText = supply.units === 0n ? await explainZero(ctx, m.mint, commitment, historyLimit, supply.decimals) : supply.supply;
  const notes: string[] = [];
  if (info.program === 'spl-token-2022') notes.push(`Token-2022 mint${info.extensions.length ? ` with extensions: ${extensionsNote(info.extensions)}` : ''}.`);
  if (info.mintAuthority === null) notes.push('No mint authority: the supply cannot grow.');
  return {
    mint: m.mint,
    label: m.label,
    supply: supplyText,
    decimals: supply.decimals,
    mintAuthority: info.mintAuthority,
    freezeAuthority: info.freezeAuthority,
    query,
    ...(notes.length ? { note: notes.join(' ') } : {}),
    at: { ledger: supply.slot, hash: null },
    response_sha256: ts.reply.sha256,
  };
}

/** The decimal at the start of a supply field ("12.5", or "0 (explanation)"). */
export function leadingDecimal(supply: string): string {
  const m = /^-?[0-9]+(\.[0-9]+)?/.exec(supply);
  if (!m) throw new SupplyReportError('bad_report', `supply "${supply}" does not start with a number`);
  return normalizeDecimal(m[0]);
}

/** The commitment a recorded getTokenSupply query asked for (the supporting re-reads use the same one). */
function queryCommitment(query: string, mint: string): string {
  const q = parseJsonExact(query, 'row query');
  const params = isObject(q) ? q['params'] : undefined;
  const opts = Array.isArray(params) ? params[1] : undefined;
  const c = isObject(opts) ? opts['commitment'] : undefined;
  if (!isObject(q) || q['method'] !== 'getTokenSupply' || !Array.isArray(params)) throw new SupplyReportError('bad_query', `solana row ${mint}: query is not a getTokenSupply request`);
  return typeof c === 'string' ? c : 'finalized';
}

/**
 * Re-runs a row's query and lists what changed: supply and decimals, then the supporting facts
 * `mintAuthority` and `freezeAuthority` from getAccountInfo (jsonParsed, the query's commitment),
 * each compared when the row records it. A failing getAccountInfo fails the row.
 */
export async function reverifySolanaRow(ctx: ChainContext, row: SolanaMintRow): Promise<{ changes: Change[]; sha256: string; at: Provenance['at'] }> {
  const commitment = queryCommitment(row.query, row.mint);
  const { reply, json } = await postQuery(ctx, row.query, `getTokenSupply ${row.mint}`);
  const now = parseTokenSupply(jsonRpcResult(json, `getTokenSupply ${row.mint}`), `getTokenSupply ${row.mint}`);
  const changes = diffFigures('', { supply: leadingDecimal(row.supply), decimals: String(row.decimals) }, { supply: normalizeDecimal(now.supply), decimals: String(now.decimals) }).map((c) => ({ ...c, field: c.field.slice(1) }));
  const ai = await postQuery(ctx, accountInfoQuery(row.mint, commitment), `getAccountInfo ${row.mint}`);
  const info = parseMintAccount(jsonRpcResult(ai.json, `getAccountInfo ${row.mint}`), `getAccountInfo ${row.mint}`);
  if (row.mintAuthority !== undefined) changes.push(...diffText('mintAuthority', row.mintAuthority, info.mintAuthority));
  if (row.freezeAuthority !== undefined) changes.push(...diffText('freezeAuthority', row.freezeAuthority, info.freezeAuthority));
  return { changes, sha256: reply.sha256, at: { ledger: now.slot, hash: null } };
}
