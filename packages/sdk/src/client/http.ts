/**
 * @module client/http
 * The internal request helper of the typed HTTP clients: JSON over the global `fetch` (or an
 * injected one), a per-request timeout, a bounded response size, a Content-Type check, typed
 * errors from the wire body, and schema validation of every successful body.
 *
 * Error messages name the route template (`GET /intent/{id}`) and the origin only: never a token,
 * a header value, a path parameter or a query string.
 */
import type { z } from 'zod';
import {
  errorFromBody,
  TransportError,
  ValidationError,
  type ErrorBody,
  type VaultError,
} from '../errors.js';
import { ErrorBodySchema } from '../schemas/control-plane.js';
import { parseWith } from '../schemas/index.js';

/**
 * The subset of `fetch` the clients use. The global `fetch` of Node 20+ (and of browsers) fits;
 * inject another implementation for tests, proxies or custom dispatchers.
 */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Default per-request timeout, covering connection, headers and body: 15 s. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Default ceiling on a response body: 8 MiB. Larger replies are refused while streaming. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Options shared by the clients' transports. */
export interface HttpOptions {
  /** Base URL of the service, e.g. `http://127.0.0.1:7331`. A path prefix is kept. */
  baseUrl: string;
  /** A `fetch` implementation; defaults to the global `fetch`. */
  fetch?: FetchLike | undefined;
  /** Per-request timeout in milliseconds (default 15 000). */
  timeoutMs?: number | undefined;
  /** Largest accepted response body in bytes (default 8 MiB). */
  maxResponseBytes?: number | undefined;
}

/** One request, as the clients describe it. */
export interface RequestSpec {
  method: 'GET' | 'POST';
  /** Path with encoded parameters and query, starting with `/`. */
  path: string;
  /** Route template used in error messages, e.g. `GET /intent/{id}`. */
  label: string;
  /** Extra headers (auth). Their values never reach an error message. */
  headers?: Record<string, string> | undefined;
  /** JSON body; `undefined` sends no body. */
  body?: unknown;
  /** Strings to blank out of any server-provided message (the credentials sent). */
  secrets?: readonly string[] | undefined;
}

/** A received reply whose body was read, size-checked and parsed as JSON (or is empty). */
export interface RawReply {
  status: number;
  /** The parsed JSON body; `undefined` when the body was empty. */
  body: unknown;
}

/** The transport of one client. */
export interface Http {
  readonly baseUrl: string;
  readonly origin: string;
  /** Sends and reads a reply of any status; throws TransportError on transport faults only. */
  send(spec: RequestSpec): Promise<RawReply>;
  /** Sends, throws typed errors for non-2xx, and validates a 2xx body with `schema`. */
  request<S extends z.ZodType>(spec: RequestSpec, schema: S): Promise<z.infer<S>>;
  /** Maps a non-2xx reply to the error to throw (typed VaultError or TransportError). */
  errorFor(spec: RequestSpec, reply: RawReply): VaultError;
  /** Validates a 2xx body; a mismatch is a TransportError naming the field. */
  parseReply<S extends z.ZodType>(spec: RequestSpec, reply: RawReply, schema: S): z.infer<S>;
}

function optionError(path: string, message: string): ValidationError {
  return new ValidationError('client options', [{ path, message }]);
}

function positiveInt(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw optionError(name, `${name} must be a positive integer`);
  return value;
}

/** Normalises and checks a base URL: http(s), no query or fragment, no trailing slash. */
export function normalizeBaseUrl(baseUrl: unknown): { baseUrl: string; origin: string } {
  if (typeof baseUrl !== 'string' || baseUrl === '') throw optionError('baseUrl', 'baseUrl is required');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw optionError('baseUrl', 'baseUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw optionError('baseUrl', 'baseUrl must be an absolute http(s) URL');
  }
  if (url.search !== '' || url.hash !== '') {
    throw optionError('baseUrl', 'baseUrl must not carry a query or a fragment');
  }
  if (url.username !== '' || url.password !== '') {
    throw optionError('baseUrl', 'baseUrl must not carry credentials');
  }
  return { baseUrl: url.href.replace(/\/+$/, ''), origin: url.origin };
}

/**
 * Checks a credential before it goes into a header. `fetch` rejects invalid header values with a
 * message that quotes the value, so a malformed token is refused here, without echoing it.
 */
export function isHeaderSafeToken(token: unknown): token is string {
  return typeof token === 'string' && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(token);
}

function isJsonContentType(value: string | null): boolean {
  if (value === null) return false;
  const type = value.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** A secret this long is redacted wherever it appears: no word contains it by chance. */
const REDACT_ANYWHERE_LENGTH = 16;

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Replaces each secret in a server's message with `[redacted]` where it stands as a value: not
 * inside a longer run of letters and digits. A short passphrase ("a") must not turn "wrong
 * passphrase" into "wrong p[redacted]ssphr[redacted]se" (which also tells a shoulder-surfer the
 * passphrase). A long one (a session token) is redacted even inside a word: there it cannot be a
 * coincidence. Longest first, so a secret that contains another is redacted whole.
 */
export function redact(text: string, secrets: readonly string[] | undefined): string {
  let out = text;
  const list = [...new Set(secrets ?? [])].filter((s) => s !== '').sort((a, b) => b.length - a.length);
  for (const secret of list) {
    out =
      secret.length >= REDACT_ANYWHERE_LENGTH
        ? out.split(secret).join('[redacted]')
        : out.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(secret)}(?![\\p{L}\\p{N}])`, 'gu'), '[redacted]');
  }
  return out;
}

function causeCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z0-9_]+$/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

class Timeout extends Error {
  constructor() {
    super('timeout');
  }
}

class TooLarge extends Error {
  constructor() {
    super('too large');
  }
}

async function readBounded(response: Response, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  const declared = response.headers.get('content-length');
  if (declared !== null && /^[0-9]+$/.test(declared) && Number(declared) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new TooLarge();
  }
  const stream = response.body;
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      if (signal.aborted) throw new Timeout();
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new TooLarge();
      chunks.push(value);
    }
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    throw err;
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function resolveFetch(injected: FetchLike | undefined): FetchLike {
  const candidate: unknown = injected ?? globalThis.fetch;
  if (typeof candidate !== 'function') throw optionError('fetch', 'no fetch implementation: pass options.fetch');
  return candidate as FetchLike;
}

/** Creates the transport of one client. Options are checked here, once. */
export function createHttp(options: HttpOptions): Http {
  const { baseUrl, origin } = normalizeBaseUrl(options.baseUrl);
  const timeoutMs = positiveInt(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs');
  const maxBytes = positiveInt(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
  const doFetch: FetchLike = resolveFetch(options.fetch);

  async function send(spec: RequestSpec): Promise<RawReply> {
    const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
    const init: RequestInit = { method: spec.method, headers, redirect: 'error' };
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(spec.body);
    }
    const controller = new AbortController();
    init.signal = controller.signal;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    let status: number | undefined;
    try {
      const response = await doFetch(baseUrl + spec.path, init);
      status = response.status;
      const bytes = await readBounded(response, maxBytes, controller.signal);
      const contentType = response.headers.get('content-type');
      if (bytes.byteLength === 0) {
        if (status >= 200 && status < 300) return { status, body: undefined };
        throw new TransportError(`${spec.label}: HTTP ${status} with an empty body`, { status });
      }
      if (!isJsonContentType(contentType)) {
        const shown = contentType === null ? 'none' : JSON.stringify(contentType.slice(0, 64));
        throw new TransportError(`${spec.label}: HTTP ${status} reply is not JSON (content-type ${shown})`, {
          status,
        });
      }
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch (cause) {
        throw new TransportError(`${spec.label}: HTTP ${status} reply is not valid UTF-8`, { status, cause });
      }
      try {
        return { status, body: JSON.parse(text) as unknown };
      } catch (cause) {
        throw new TransportError(`${spec.label}: HTTP ${status} reply is not valid JSON`, { status, cause });
      }
    } catch (err) {
      if (err instanceof TransportError) throw err;
      const withStatus = status === undefined ? {} : { status };
      if (err instanceof TooLarge) {
        throw new TransportError(`${spec.label}: reply larger than ${maxBytes} bytes refused`, withStatus);
      }
      if (timedOut || err instanceof Timeout) {
        throw new TransportError(`${spec.label}: no reply from ${origin} within ${timeoutMs} ms`, {
          ...withStatus,
          cause: err,
        });
      }
      const code = causeCode(err);
      throw new TransportError(
        `${spec.label}: request to ${origin} failed${code === undefined ? '' : ` (${code})`}`,
        { ...withStatus, cause: err },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  function errorFor(spec: RequestSpec, reply: RawReply): VaultError {
    const parsed = ErrorBodySchema.safeParse(reply.body);
    if (parsed.success) {
      const body: ErrorBody = {
        error: { ...parsed.data.error, message: redact(parsed.data.error.message, spec.secrets) },
      };
      return errorFromBody(body, reply.status);
    }
    return new TransportError(`${spec.label}: HTTP ${reply.status} with an unexpected body`, {
      status: reply.status,
    });
  }

  function parseReply<S extends z.ZodType>(spec: RequestSpec, reply: RawReply, schema: S): z.infer<S> {
    try {
      return parseWith(schema, reply.body, 'response');
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      throw new TransportError(`${spec.label}: malformed reply: ${redact(err.shortMessage, spec.secrets)}`, {
        status: reply.status,
        data: { path: err.path, issues: err.issues.map((i) => ({ ...i })) },
        cause: err,
      });
    }
  }

  async function request<S extends z.ZodType>(spec: RequestSpec, schema: S): Promise<z.infer<S>> {
    const reply = await send(spec);
    if (reply.status < 200 || reply.status >= 300) throw errorFor(spec, reply);
    return parseReply(spec, reply, schema);
  }

  return { baseUrl, origin, send, request, errorFor, parseReply };
}

/** Encodes one path parameter; an empty or non-string value is a ValidationError. */
export function pathParam(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new ValidationError('request', [{ path: name, message: `${name} must be a non-empty string` }]);
  }
  return encodeURIComponent(value);
}

/** Checks a `limit` query value: an integer from 1 to 10 000. */
export function limitParam(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > 10_000) {
    throw new ValidationError('request', [{ path: 'limit', message: 'limit must be an integer from 1 to 10000' }]);
  }
  return value;
}
