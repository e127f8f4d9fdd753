/**
 * @module rpc
 * JSON-RPC over HTTP to a rippled or Clio endpoint (xrpl.js's Client is WebSocket-only):
 * `POST {method, params:[{...}]}`, always HTTP 200 with `result.status` "success" or "error".
 */
import { TransportError } from '@vault/sdk';

export type FetchLike = (input: string, init: { method: string; headers: Record<string, string>; body: string; signal?: AbortSignal }) => Promise<{
  ok: boolean;
  status: number;
  text(): Promise<string>;
}>;

export interface XrplTransport {
  url: string;
  fetch: FetchLike;
  /** rippled API version sent with every request. Default 2. */
  apiVersion?: 1 | 2;
  /** Per-request timeout. Default 15 s. */
  timeoutMs?: number;
}

/** A JSON-RPC result: success fields, or `error`, `error_message`, `error_exception`. */
export type RpcResult = Record<string, unknown> & { status?: string; error?: string; error_message?: string; error_exception?: string };

/**
 * One JSON-RPC call. Resolves with `result` (also when it is an error result: callers branch on
 * `error`); rejects with a TransportError for transport faults (unreachable, non-200, not JSON).
 */
export async function rpcCall(transport: XrplTransport, method: string, params: Record<string, unknown> = {}): Promise<RpcResult> {
  const body = JSON.stringify({ method, params: [{ api_version: transport.apiVersion ?? 2, ...params }] });
  let text: string;
  let status: number;
  try {
    const res = await transport.fetch(transport.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
      signal: AbortSignal.timeout(transport.timeoutMs ?? 15_000),
    });
    status = res.status;
    text = await res.text();
  } catch (cause) {
    throw new TransportError(`XRPL ${method} to ${transport.url} failed: ${(cause as Error)?.message ?? String(cause)}`, { cause, data: { method } });
  }
  if (status !== 200) {
    throw new TransportError(`XRPL ${method}: HTTP ${status} from ${transport.url}`, { data: { method, status, body: text.slice(0, 200) } });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new TransportError(`XRPL ${method}: the reply from ${transport.url} is not JSON`, { cause, data: { method } });
  }
  const result = (parsed as { result?: unknown })?.result;
  if (result === null || typeof result !== 'object') {
    throw new TransportError(`XRPL ${method}: the reply from ${transport.url} has no result object`, { data: { method } });
  }
  return result as RpcResult;
}

/** The error token of an error result, or null on success. */
export function rpcError(result: RpcResult): string | null {
  if (result.status === 'error' || typeof result.error === 'string') return String(result.error ?? 'unknown');
  return null;
}

export function rpcErrorMessage(result: RpcResult): string {
  return String(result.error_exception ?? result.error_message ?? result.error ?? 'error');
}
