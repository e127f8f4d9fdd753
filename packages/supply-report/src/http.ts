/**
 * @module http
 * The only place that talks to chain endpoints: bounded concurrency over all endpoints, a token
 * bucket per endpoint, retry with exponential backoff on 429 and 503 honouring Retry-After and on
 * transport failures (connection refused or reset, socket hang up, timeout), a reply size cap and a
 * timeout. Log lines go through `scrub`, so a key in an endpoint URL never reaches them.
 */
import { SupplyReportError } from './errors.js';
import { sha256Hex } from './json.js';
import { scrub } from './redact.js';
import type { HttpConfig, RateLimit } from './config.js';

export type Logger = (line: string) => void;

export interface HttpReply {
  status: number;
  text: string;
  /** SHA-256 (hex) of the reply body bytes exactly as received. */
  sha256: string;
  headers: Headers;
  /** Attempts it took (1 = no retry). */
  attempts: number;
}

export interface RequestSpec {
  method: 'GET' | 'POST';
  /** Full URL with secrets (never logged). */
  url: string;
  body?: string;
  /** Short text for log lines, e.g. `gateway_balances rXYZ`. */
  label: string;
  /** Non-2xx statuses the caller handles itself (e.g. Horizon's 404 for a merged account). */
  accept?: readonly number[];
  /** Reply that must be retried although its status is 200 (rippled's `slowDown`). */
  retryIf?: (reply: HttpReply) => boolean;
}

type Sleep = (ms: number) => Promise<void>;
const realSleep: Sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A token bucket: `burst` requests back to back, then `perSecond` sustained. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private queue: Promise<void> = Promise.resolve();
  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: Sleep = realSleep,
  ) {
    this.tokens = limit.burst;
    this.last = now();
  }
  /** Resolves when a token is taken; callers are served in order. */
  take(): Promise<void> {
    const turn = this.queue.then(async () => {
      for (;;) {
        const t = this.now();
        this.tokens = Math.min(this.limit.burst, this.tokens + ((t - this.last) / 1000) * this.limit.perSecond);
        this.last = t;
        if (this.tokens >= 1) {
          this.tokens -= 1;
          return;
        }
        await this.sleep(Math.ceil(((1 - this.tokens) / this.limit.perSecond) * 1000));
      }
    });
    this.queue = turn;
    return turn;
  }
}

/** Counting semaphore for the global in-flight bound. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  peak = 0;
  constructor(private readonly size: number) {}
  async acquire(): Promise<void> {
    if (this.active >= this.size) await new Promise<void>((r) => this.waiting.push(r));
    else this.active += 1;
    this.peak = Math.max(this.peak, this.active);
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active -= 1;
  }
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. Null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^[0-9]+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * A failure below HTTP: the connection was refused or reset, the socket hung up (a code in
 * TRANSIENT_CODES), or no (complete) reply came within the timeout. Every request this package
 * makes is a read, so sending it again is safe; `send` retries these with the same bounded backoff
 * as a 503.
 */
class TransportFailure extends SupplyReportError {
  constructor(
    code: 'http' | 'timeout',
    label: string,
    /** What went wrong, without the label: shown in the retry line. */
    readonly detail: string,
  ) {
    super(code, `${label}: ${detail}`);
  }
}

/**
 * Socket-level error codes worth another attempt: the peer refused or dropped the connection, the
 * network was briefly unreachable, or undici gave up waiting. Anything else fetch rejects with (a
 * "bad port", an unresolvable host, a TLS certificate error, a redirect refused) fails at once:
 * sending the same request again cannot change the answer.
 */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** The socket error code behind a fetch failure (its `cause`, or the cause's own cause), if any. */
function socketCode(err: Error): string | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return code;
  }
  return null;
}

function causeText(err: Error): string {
  const code = socketCode(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}${code && !cause.includes(code) ? ` [${code}]` : ''}`;
}

export class HttpClient {
  private readonly gate: Semaphore;
  private readonly buckets = new Map<string, TokenBucket>();
  /** Every request made (public form only), for the run log. */
  readonly requests: { endpoint: string; label: string; status: number | null; attempts: number }[] = [];

  constructor(
    private readonly cfg: HttpConfig,
    private readonly secrets: readonly string[],
    private readonly log: Logger = () => {},
    private readonly sleep: Sleep = realSleep,
  ) {
    this.gate = new Semaphore(cfg.concurrency);
  }

  /** Peak number of requests in flight so far. */
  get peakConcurrency(): number {
    return this.gate.peak;
  }

  /** Registers a rate limit for an endpoint (keyed by its public URL). */
  limit(publicUrl: string, rate: RateLimit | undefined): void {
    if (rate) this.buckets.set(publicUrl, new TokenBucket(rate, undefined, this.sleep));
  }

  private say(line: string): void {
    this.log(scrub(line, this.secrets));
  }

  /**
   * Sends one request with retries. `endpoint` is the public URL (for logs and the rate limit key).
   * Throws SupplyReportError: `rate_limited` (429/503 after all retries or a Retry-After too long),
   * `http` (any other non-2xx status, or a network failure still failing after all retries),
   * `timeout` (still no reply after all retries), `bad_reply` (reply too large; not retried).
   */
  async send(endpoint: string, spec: RequestSpec): Promise<HttpReply> {
    const bucket = this.buckets.get(endpoint);
    const record = { endpoint, label: spec.label, status: null as number | null, attempts: 0 };
    this.requests.push(record);
    for (let attempt = 0; ; attempt++) {
      if (bucket) await bucket.take();
      await this.gate.acquire();
      let reply: HttpReply | null = null;
      let failure: unknown = null;
      try {
        reply = await this.once(spec, attempt + 1);
      } catch (e) {
        failure = e;
      } finally {
        this.gate.release();
      }
      if (reply === null) {
        // The run log shows the last attempt: it had no HTTP status.
        record.status = null;
        record.attempts = attempt + 1;
        const e = failure;
        if (e instanceof TransportFailure && attempt < this.cfg.retries) {
          const wait = Math.min(this.cfg.backoffMs * 2 ** attempt, this.cfg.maxBackoffMs);
          // `detail` names the cause (e.g. ECONNRESET), never the URL; `say` scrubs it all the same.
          this.say(`  ${spec.label}: ${endpoint} transport failure (${e.detail}); retry ${attempt + 1}/${this.cfg.retries} in ${wait} ms`);
          await this.sleep(wait);
          continue;
        }
        const tries = e instanceof TransportFailure ? ` after ${attempt + 1} attempt${attempt === 0 ? '' : 's'}` : '';
        const msg = e instanceof SupplyReportError ? `${e.message}${tries}` : `${spec.label}: ${(e as Error).message}`;
        throw new SupplyReportError(e instanceof SupplyReportError ? e.code : 'http', scrub(msg, this.secrets));
      }
      record.status = reply.status;
      record.attempts = attempt + 1;
      const overloaded = reply.status === 429 || reply.status === 503 || (reply.status === 200 && spec.retryIf?.(reply) === true);
      if (!overloaded) {
        if (spec.accept?.includes(reply.status)) return reply;
        if (reply.status < 200 || reply.status >= 300) {
          throw new SupplyReportError('http', scrub(`${spec.label}: HTTP ${reply.status} from ${endpoint}: ${reply.text.slice(0, 200)}`, this.secrets));
        }
        return reply;
      }
      const hinted = retryAfterMs(reply.headers.get('retry-after'));
      if (hinted !== null && hinted > this.cfg.maxRetryAfterMs) {
        throw new SupplyReportError('rate_limited', `${spec.label}: ${endpoint} asked to retry after ${hinted} ms, more than http.maxRetryAfterMs (${this.cfg.maxRetryAfterMs})`);
      }
      if (attempt >= this.cfg.retries) {
        throw new SupplyReportError('rate_limited', `${spec.label}: ${endpoint} still answered ${reply.status}${reply.status === 200 ? ' (slowDown)' : ''} after ${attempt + 1} attempts`);
      }
      const backoff = Math.min(this.cfg.backoffMs * 2 ** attempt, this.cfg.maxBackoffMs);
      const wait = hinted ?? backoff;
      this.say(`  ${spec.label}: ${endpoint} answered ${reply.status}; retry ${attempt + 1}/${this.cfg.retries} in ${wait} ms${hinted !== null ? ' (Retry-After)' : ''}`);
      await this.sleep(wait);
    }
  }

  private async once(spec: RequestSpec, attempts: number): Promise<HttpReply> {
    let res: Response;
    // fetch refuses URLs with credentials: userinfo becomes a Basic Authorization header.
    const target = new URL(spec.url);
    const headers: Record<string, string> = spec.body !== undefined ? { 'content-type': 'application/json', accept: 'application/json' } : { accept: 'application/json' };
    if (target.username || target.password) {
      headers['authorization'] = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
      target.username = '';
      target.password = '';
    }
    try {
      res = await fetch(target, {
        method: spec.method,
        headers,
        ...(spec.body !== undefined ? { body: spec.body } : {}),
        signal: AbortSignal.timeout(this.cfg.timeoutMs),
        redirect: 'error',
      });
    } catch (e) {
      const err = e as Error;
      if (err.name === 'TimeoutError') throw new TransportFailure('timeout', spec.label, `no reply within ${this.cfg.timeoutMs} ms`);
      // fetch rejects with a TypeError whose cause is the socket error (ECONNREFUSED, ECONNRESET,
      // UND_ERR_SOCKET "other side closed", ...): those are retried; any other cause is final.
      const detail = `request failed (${causeText(err)})`;
      if (socketCode(err) !== null) throw new TransportFailure('http', spec.label, detail);
      throw new SupplyReportError('http', `${spec.label}: ${detail}`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.length;
          if (size > this.cfg.maxResponseBytes) {
            await reader.cancel();
            throw new SupplyReportError('bad_reply', `${spec.label}: reply larger than http.maxResponseBytes (${this.cfg.maxResponseBytes})`);
          }
          chunks.push(value);
        }
      } catch (e) {
        if (e instanceof SupplyReportError) throw e;
        const err = e as Error;
        if (err.name === 'TimeoutError') throw new TransportFailure('timeout', spec.label, `reply not complete within ${this.cfg.timeoutMs} ms`);
        const detail = `reading the reply failed (${causeText(err)})`;
        if (socketCode(err) !== null) throw new TransportFailure('http', spec.label, detail);
        throw new SupplyReportError('http', `${spec.label}: ${detail}`);
      }
    }
    const bytes = Buffer.concat(chunks);
    return { status: res.status, text: bytes.toString('utf8'), sha256: sha256Hex(bytes), headers: res.headers, attempts };
  }
}
