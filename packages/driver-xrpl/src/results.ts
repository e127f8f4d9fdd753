/**
 * @module results
 * Classifies rippled's engine results and local-check errors, and parses `tx` replies of API v1
 * (fields at the root) and v2 (`tx_json`, `hash`, `meta`, `validated`).
 */
import type { RpcResult } from './rpc.js';

export type ResultClass = 'tes' | 'tec' | 'tef' | 'tel' | 'tem' | 'ter' | 'error';

/** The class of an engine result token (tesSUCCESS, tecPATH_DRY, …); anything else is 'error'. */
export function resultClass(code: string): ResultClass {
  const prefix = code.slice(0, 3);
  return (['tes', 'tec', 'tef', 'tel', 'tem', 'ter'] as const).find((p) => p === prefix) ?? 'error';
}

/**
 * What a submit result means for the caller: accepted into the open ledger (tes, tec, terQUEUED)
 * or rejected; ter and most tel rejections may succeed if retried later; tef, tem and the tel
 * results that say the transaction does not fit this network never will.
 */
export function classifySubmit(code: string): { accepted: boolean; retriable: boolean } {
  const cls = resultClass(code);
  if (cls === 'tes' || cls === 'tec' || code === 'terQUEUED') return { accepted: true, retriable: false };
  return { accepted: false, retriable: (cls === 'tel' && !PERMANENT_TEL.has(code)) || cls === 'ter' };
}

/** Local errors that no retry on the same server can fix (the transaction itself is wrong for it). */
const PERMANENT_TEL = new Set([
  'telWRONG_NETWORK',
  'telREQUIRES_NETWORK_ID',
  'telNETWORK_ID_MAKES_TX_NON_CANONICAL',
  'telBAD_PUBLIC_KEY',
  'telBAD_DOMAIN',
  'telBAD_PATH_COUNT',
]);

export interface ParsedTx {
  hash: string;
  validated: boolean;
  ledgerIndex: number | null;
  result: string | null;
  tx: Record<string, unknown>;
  meta: Record<string, unknown> | null;
}

/** A `tx` (or account_tx entry) reply in either API version, normalised. */
export function parseTxResult(result: RpcResult | Record<string, unknown>): ParsedTx {
  const r = result as Record<string, unknown>;
  const tx = (r['tx_json'] ?? r['tx'] ?? r) as Record<string, unknown>;
  const metaRaw = r['meta'] ?? r['metaData'];
  const meta = metaRaw !== null && typeof metaRaw === 'object' ? (metaRaw as Record<string, unknown>) : null;
  const ledger = r['ledger_index'] ?? tx['ledger_index'] ?? r['inLedger'];
  return {
    hash: String(r['hash'] ?? tx['hash'] ?? ''),
    validated: r['validated'] === true,
    ledgerIndex: typeof ledger === 'number' ? ledger : null,
    result: typeof meta?.['TransactionResult'] === 'string' ? (meta['TransactionResult'] as string) : null,
    tx,
    meta,
  };
}
