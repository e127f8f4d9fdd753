/**
 * @module control-plane/webhooks/send
 * One delivery attempt over HTTP(S). The host is resolved once, every address it resolves to is
 * checked (address.ts), and the request connects to the checked address itself (the name goes
 * only in the Host header and TLS SNI/certificate check): nothing resolves the name a second time,
 * so DNS rebinding cannot move the connection after the check. Redirects are not followed. The
 * response is read up to a bound and only a short excerpt kept.
 */
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import { checkAddress, type AddressPolicy } from './address.js';

/** Resolves a host name to every address it has (the system resolver by default). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/** Bytes of a response body kept with the attempt. */
export const EXCERPT_BYTES = 256;
/** Bytes of a response body read at most (the rest is cut off with the connection). */
const READ_LIMIT = 64 * 1024;

export interface SendOptions {
  policy: AddressPolicy;
  resolve: Resolver;
  timeoutMs: number;
  agents?: { http: HttpAgent; https: HttpsAgent };
  signal?: AbortSignal;
}

/** What an attempt came to: a status (any) or an error code, never both null. */
export interface AttemptResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  excerpt: string | null;
  ms: number;
}

function fail(error: string, t0: number): AttemptResult {
  return { ok: false, status: null, error, excerpt: null, ms: Math.round(performance.now() - t0) };
}

/** The checked address to connect to, or why none is allowed. */
export async function resolveChecked(host: string, o: Pick<SendOptions, 'policy' | 'resolve'>): Promise<{ address: string } | { error: string }> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  let addrs: { address: string }[];
  if (isIP(bare) !== 0) addrs = [{ address: bare }];
  else {
    try {
      addrs = await o.resolve(bare);
    } catch (e) {
      return { error: `dns:${(e as NodeJS.ErrnoException).code ?? 'failed'}` };
    }
    if (addrs.length === 0) return { error: 'dns:no_address' };
  }
  // Every address is checked, not just the one used: a name with one public and one internal
  // address is refused whole (which one a client picks is not ours to control).
  for (const a of addrs) {
    const v = checkAddress(a.address, o.policy);
    if (!v.ok) return { error: `address_refused:${v.class}` };
  }
  return { address: addrs[0]!.address };
}

function errorCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'ABORT_ERR' || (e as Error)?.name === 'AbortError') return 'timeout';
  if (typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code)) return `net:${code}`;
  return 'net:error';
}

/** POSTs `body` to `url` with `headers`; never throws. */
export async function sendOnce(url: string, headers: Record<string, string>, body: string, o: SendOptions): Promise<AttemptResult> {
  const t0 = performance.now();
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return fail('bad_url', t0);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return fail('bad_url', t0);
  const deadline = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([deadline, o.signal]) : deadline;
  const target = await Promise.race([
    resolveChecked(u.hostname, o),
    new Promise<{ error: string }>((resolve) => {
      if (signal.aborted) resolve({ error: 'timeout' });
      signal.addEventListener('abort', () => resolve({ error: 'timeout' }), { once: true });
    }),
  ]);
  if ('error' in target) return fail(target.error, t0);
  const https = u.protocol === 'https:';
  const name = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const payload = Buffer.from(body, 'utf8');
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const done = (r: AttemptResult) => {
      if (!settled) {
        settled = true;
        resolve(r);
      }
    };
    let req: ReturnType<typeof httpRequest>;
    try {
      req = (https ? httpsRequest : httpRequest)({
        // The checked address: no second resolution (see the module note).
        host: target.address,
        port: u.port === '' ? (https ? 443 : 80) : Number(u.port),
        path: `${u.pathname}${u.search}`,
        method: 'POST',
        ...(https && isIP(name) === 0 ? { servername: name } : {}),
        headers: { ...headers, host: u.host, 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': 'vault-webhooks/1' },
        agent: o.agents ? (https ? o.agents.https : o.agents.http) : false,
        signal,
      });
    } catch {
      done(fail('bad_request', t0));
      return;
    }
    req.on('error', (e) => done(fail(errorCode(e), t0)));
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let kept = 0;
      let read = 0;
      const finish = () => {
        const excerpt = kept > 0 ? Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8').replace(/\uFFFD+$/, '') : null;
        const ok = status >= 200 && status < 300;
        // A redirect is an answer, not an instruction: the Location is never requested.
        const error = ok ? null : status >= 300 && status < 400 ? 'redirect_not_followed' : 'http_status';
        done({ ok, status, error, excerpt, ms: Math.round(performance.now() - t0) });
      };
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (kept < EXCERPT_BYTES) {
          chunks.push(chunk.subarray(0, EXCERPT_BYTES - kept));
          kept += Math.min(chunk.length, EXCERPT_BYTES - kept);
        }
        if (read > READ_LIMIT) {
          // Enough read: the answer is known, the rest is not ours to buffer.
          res.destroy();
          finish();
        }
      });
      res.on('end', finish);
      res.on('error', () => finish());
      res.on('close', finish);
    });
    req.end(payload);
  });
}
