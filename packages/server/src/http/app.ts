/**
 * @module http/app
 * What both services share at the HTTP edge: the loopback Host check (DNS-rebinding defence), body
 * size limits, JSON bodies validated against the SDK schemas with the failing field named, and one
 * place where errors become wire bodies. Route handlers only do I/O, auth and persistence.
 */
import { httpStatusOf, parseWith, toErrorBody, ValidationError, VaultError, NotFoundError } from '@vault/sdk';
import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';

/** Host names a loopback service answers to. Anything else is refused (DNS rebinding). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export const DEFAULT_BODY_LIMIT = 256 * 1024;

/** `host[:port]` → host, keeping IPv6 brackets. */
export function hostOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(0, end + 1);
  }
  // A bare IPv6 literal (not valid in a Host header, but seen) has no port to strip.
  if (h.indexOf(':') !== h.lastIndexOf(':')) return h;
  const colon = h.indexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

export function isLoopbackHost(hostHeader: string | undefined): boolean {
  if (hostHeader === undefined || hostHeader === '') return false;
  return LOOPBACK_HOSTS.has(hostOf(hostHeader));
}

/** Refuses any request whose Host header is not a loopback name: a rebinding page cannot reach us. */
export function loopbackHostGuard(extraHosts: readonly string[] | (() => readonly string[]) = []): MiddlewareHandler {
  // A function is read per request, so a reloaded configuration applies without a restart.
  const fixed = typeof extraHosts === 'function' ? null : new Set(extraHosts.map((h) => h.toLowerCase()));
  const allowed = (h: string) => (fixed ? fixed.has(h) : (extraHosts as () => readonly string[])().some((x) => x.toLowerCase() === h));
  return async (c, next) => {
    const host = c.req.header('host');
    if (!isLoopbackHost(host) && !(host !== undefined && allowed(hostOf(host)))) {
      return c.json(
        { error: { code: -32602, message: 'refused: Host header is not a loopback name', data: { reason: 'host' } } },
        403,
      );
    }
    await next();
  };
}

export interface ServiceAppOptions {
  /** Largest request body accepted, bytes. */
  bodyLimit?: number;
  /** Host names accepted besides loopback (only when deliberately bound elsewhere); a function is read per request. */
  extraHosts?: readonly string[] | (() => readonly string[]);
}

/** A Hono app with the shared edge: Host check, errors as wire bodies, 4040 for unknown routes. */
export function createServiceApp(options: ServiceAppOptions = {}): Hono {
  const app = new Hono();
  app.use('*', loopbackHostGuard(options.extraHosts));
  app.onError((err, c) => errorResponse(c, err));
  app.notFound((c) => errorResponse(c, new NotFoundError('route', `${c.req.method} ${new URL(c.req.url).pathname}`)));
  return app;
}

/** The one place an error becomes a response. Faults are not described to the caller. */
export function errorResponse(c: Context, err: unknown): Response {
  // An error may carry its own HTTP status (execute refusals are -32602 but 500, rate limits 429).
  const own = (err as { httpStatus?: unknown } | null)?.httpStatus;
  const status = (err instanceof VaultError && typeof own === 'number' && own >= 400 && own <= 599 ? own : httpStatusOf(err)) as ContentfulStatusCode;
  return c.json(toErrorBody(err), status);
}

/**
 * Reads a JSON body of at most `limit` bytes and validates it. Malformed JSON, a wrong content
 * type, an oversized body and a schema failure are all 400s naming the problem (never a 500).
 */
export async function readJson<S extends z.ZodType>(c: Context, schema: S, what: string, limit = DEFAULT_BODY_LIMIT): Promise<z.infer<S>> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new ValidationError(what, [{ path: '', message: 'body must be application/json' }]);
  }
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) {
    throw new ValidationError(what, [{ path: '', message: `body larger than ${limit} bytes` }]);
  }
  let text = '';
  if (declared !== undefined && /^[0-9]{1,12}$/.test(declared)) {
    // A declared length is enforced by the HTTP parser (the body cannot run past it), so the
    // body can be read in one go; web-stream chunk reading costs far more per request.
    text = await c.req.text();
    if (Buffer.byteLength(text, 'utf8') > limit) {
      throw new ValidationError(what, [{ path: '', message: `body larger than ${limit} bytes` }]);
    }
  } else if (c.req.raw.body !== null) {
    // No declared length (chunked): read the stream and stop at the limit.
    const reader = c.req.raw.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        throw new ValidationError(what, [{ path: '', message: `body larger than ${limit} bytes` }]);
      }
      chunks.push(value);
    }
    text = Buffer.concat(chunks).toString('utf8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError(what, [{ path: '', message: 'body is not valid JSON' }]);
  }
  return parseWith(schema, value, what);
}

/** True for errors that are expected outcomes on the wire (not faults worth a stack trace in logs). */
export function isWireError(err: unknown): err is VaultError {
  return err instanceof VaultError && err.code !== -32603;
}
