/**
 * @module chains/common
 * What every chain module shares: the request context, the run-log entry for a left-out row, the
 * drift record `verify` prints, and the one way a row's `query` string is turned back into a request.
 */
import type { ChainName } from '../config.js';
import { SupplyReportError } from '../errors.js';
import type { HttpClient, HttpReply, Logger } from '../http.js';
import { decimalDelta, parseDecimal, compareDecimal } from '../decimal.js';
import { isObject, parseJsonExact, type Json } from '../json.js';

export interface Endpoint {
  /** With secrets; only given to fetch. */
  url: string;
  /** Public form: the report's `endpoint` and the logs. */
  publicUrl: string;
}

export interface ChainContext {
  chain: ChainName;
  client: HttpClient;
  endpoint: Endpoint;
  log: Logger;
}

/** A row that was left out of the report, with the reason; the run log lists these. */
export interface Omission {
  chain: ChainName;
  subject: string;
  query: string;
  reason: string;
}

export interface Provenance {
  at?: { ledger: number | string; hash?: string | null };
  response_sha256?: string;
}

/** One field that changed between the report and a re-run. */
export interface Change {
  field: string;
  before: string | null;
  now: string | null;
  /** Exact signed difference (now - before) when both are numbers. */
  delta?: string;
}

/** Compares two maps of decimal strings; values that are not decimals are compared as text. */
export function diffFigures(prefix: string, before: Record<string, string>, now: Record<string, string>): Change[] {
  const out: Change[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(now)])].sort();
  for (const k of keys) {
    const b = before[k] ?? null;
    const n = now[k] ?? null;
    const f = `${prefix}.${k}`;
    if (b === null || n === null) {
      if (b !== n) out.push({ field: f, before: b, now: n, ...(numeric(b ?? n) ? { delta: b === null ? `+${n}` : decimalDelta(b, '0') } : {}) });
      continue;
    }
    if (numeric(b) && numeric(n)) {
      if (compareDecimal(parseDecimal(b), parseDecimal(n)) !== 0) out.push({ field: f, before: b, now: n, delta: decimalDelta(b, n) });
    } else if (b !== n) out.push({ field: f, before: b, now: n });
  }
  return out;
}

function numeric(v: string | null): v is string {
  return v !== null && /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(v);
}

/** The text change of a single field, or nothing. */
export function diffText(field: string, before: string | null | undefined, now: string | null | undefined): Change[] {
  const b = before ?? null;
  const n = now ?? null;
  return b === n ? [] : [{ field, before: b, now: n }];
}

/** A JSON-RPC row query: the exact body text, POSTed to the chain endpoint. */
export async function postQuery(ctx: ChainContext, body: string, label: string, retryIf?: (r: HttpReply) => boolean): Promise<{ reply: HttpReply; json: unknown }> {
  const reply = await ctx.client.send(ctx.endpoint.publicUrl, { method: 'POST', url: ctx.endpoint.url, body, label: `[${ctx.chain}] ${label}`, ...(retryIf ? { retryIf } : {}) });
  return { reply, json: parseJsonExact(reply.text, `[${ctx.chain}] ${label}`) };
}

/** A `GET /path?query` row query: the path is appended to the endpoint (keeping the endpoint's own query string). */
export async function getQuery(ctx: ChainContext, line: string, label: string, accept?: readonly number[]): Promise<{ reply: HttpReply; json: unknown }> {
  const m = /^GET (\/[^\s]*)$/.exec(line);
  if (!m) throw new SupplyReportError('bad_query', `query "${line}" is not a GET request line`);
  const url = joinUrl(ctx.endpoint.url, m[1] as string);
  const reply = await ctx.client.send(ctx.endpoint.publicUrl, { method: 'GET', url, label: `[${ctx.chain}] ${label}`, ...(accept ? { accept } : {}) });
  return { reply, json: parseJsonExact(reply.text, `[${ctx.chain}] ${label}`) };
}

/** Joins an endpoint (which may carry a path, userinfo and a secret query string) and a request path with its own query. */
export function joinUrl(base: string, pathAndQuery: string): string {
  const b = new URL(base);
  const q = pathAndQuery.indexOf('?');
  const path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q);
  const query = q < 0 ? '' : pathAndQuery.slice(q + 1);
  const search = [b.search.slice(1), query].filter(Boolean).join('&');
  const auth = b.username ? `${b.username}${b.password ? `:${b.password}` : ''}@` : '';
  return `${b.protocol}//${auth}${b.host}${b.pathname.replace(/\/$/, '')}${path}${search ? `?${search}` : ''}`;
}

/** Standard JSON-RPC 2.0 `result`, or a SupplyReportError('rpc') naming the method and the server's error. */
export function jsonRpcResult(json: unknown, what: string): unknown {
  if (!isObject(json)) throw new SupplyReportError('bad_reply', `${what}: reply is not a JSON-RPC object`);
  if (json['error'] !== undefined) {
    const e = json['error'] as Json;
    throw new SupplyReportError('rpc', `${what}: JSON-RPC error ${String(e?.['code'])}: ${String(e?.['message'])}`);
  }
  if (!('result' in json)) throw new SupplyReportError('bad_reply', `${what}: reply has no result`);
  return json['result'];
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
