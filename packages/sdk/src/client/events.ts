/**
 * @module client/events
 * The control plane's event log from the outside: `replay` pages through `GET /events`, `follow`
 * reads `GET /events/stream` (Server-Sent Events, parsed here with a bound on the line length) and
 * reconnects with `Last-Event-ID` after the last event it handed out, so a dropped connection or a
 * restarted control plane loses and repeats nothing.
 */
import { SessionError, TransportError, ValidationError, VaultError } from '../errors.js';
import { EventIdSchema, EventPageSchema, VaultEventSchema, type EventPage, type VaultEvent } from '../schemas/event.js';
import type { EventFilter } from '../events.js';
import { createHttp, isHeaderSafeToken, type FetchLike } from './http.js';

/** The longest SSE line `follow` accepts (an event is one data line): 1 MiB. */
export const DEFAULT_MAX_SSE_LINE_BYTES = 1024 * 1024;

export interface EventsClientOptions {
  /** Base URL of the control plane, e.g. `http://127.0.0.1:7331`. */
  baseUrl: string;
  /** The session token, or a function read before each request (a client whose token changes). */
  token: string | (() => string | undefined);
  fetch?: FetchLike | undefined;
  /** Per-request timeout of `page` and `replay` (default 15 000 ms). */
  timeoutMs?: number | undefined;
  /** Longest SSE line accepted (default 1 MiB); a longer one is a TransportError. */
  maxLineBytes?: number | undefined;
}

export interface EventsQuery {
  /** Start after this event id (absent: from the first event). */
  after?: string | undefined;
  filter?: EventFilter | undefined;
}

export interface FollowOptions extends EventsQuery {
  /** Ends the iteration (the connection is closed). */
  signal?: AbortSignal | undefined;
  /** Delay before a reconnection (default 1000 ms, doubled on each failure in a row up to 30 s). */
  reconnectDelayMs?: number | undefined;
  /** Called on each reconnection with the error that ended the last connection. */
  onReconnect?: ((error: unknown, after: string | undefined) => void) | undefined;
  /**
   * Called when the session is refused (a restarted control plane knows no earlier session):
   * resolve true once a new token is in place to reconnect, false to end with the SessionError.
   */
  reauthenticate?: (() => Promise<boolean>) | undefined;
}

export interface EventsClient {
  /** One page of `GET /events`. */
  page(query?: EventsQuery & { limit?: number }): Promise<EventPage>;
  /** Every page after `after` until the end of the log, in order (pages with no event are skipped). */
  replay(query?: EventsQuery & { pageSize?: number }): AsyncIterableIterator<EventPage>;
  /** Every event after `after`, then each new one as it is committed, until `signal` aborts. */
  follow(options?: FollowOptions): AsyncIterableIterator<VaultEvent>;
}

function queryString(q: EventsQuery & { limit?: number }): string {
  const p = new URLSearchParams();
  if (q.after !== undefined) p.set('after', EventIdSchema.parse(q.after));
  if (q.filter?.types && q.filter.types.length > 0) p.set('types', q.filter.types.join(','));
  if (q.filter?.wallet !== undefined) p.set('wallet', q.filter.wallet);
  if (q.filter?.intent !== undefined) p.set('intent', q.filter.intent);
  if (q.limit !== undefined) p.set('limit', String(q.limit));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/**
 * Parses a Server-Sent Events byte stream into its events (`id` and `data`), one line at a time,
 * refusing a line longer than `maxLineBytes` before it is buffered whole.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>, maxLineBytes: number): AsyncGenerator<{ id: string | undefined; data: string }> {
  const decoder = new TextDecoder('utf-8');
  const reader = body.getReader();
  let buf = '';
  let data: string[] = [];
  let id: string | undefined;
  let lastWasCr = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      let text = decoder.decode(value, { stream: true });
      // A \r\n split across two chunks: the \n was already a line end.
      if (lastWasCr && text.startsWith('\n')) text = text.slice(1);
      lastWasCr = text.endsWith('\r');
      buf += text;
      let nl: number;
      while ((nl = buf.search(/[\r\n]/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(buf[nl] === '\r' && buf[nl + 1] === '\n' ? nl + 2 : nl + 1);
        if (line === '') {
          if (data.length > 0) yield { id, data: data.join('\n') };
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: heartbeat
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(v);
        else if (field === 'id' && !v.includes('\0')) id = v;
      }
      // Counted in UTF-16 units: at most one per byte, so the bound holds for bytes too.
      if (buf.length > maxLineBytes || data.reduce((n, d) => n + d.length, 0) > maxLineBytes) {
        throw new TransportError(`GET /events/stream: a line longer than ${maxLineBytes} bytes refused`);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * A client of the event log.
 *
 * @example
 * const events = createEventsClient({ baseUrl: 'http://127.0.0.1:7331', token })
 * for await (const e of events.follow({ filter: { types: ['intent.confirmed'] }, signal })) {
 *   console.log(e.id, e.type, e.subject.intent)
 * }
 */
export function createEventsClient(options: EventsClientOptions): EventsClient {
  const http = createHttp(options);
  const doFetch: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const maxLine = options.maxLineBytes ?? DEFAULT_MAX_SSE_LINE_BYTES;
  if (!Number.isSafeInteger(maxLine) || maxLine < 1024) throw new ValidationError('client options', [{ path: 'maxLineBytes', message: 'maxLineBytes must be an integer >= 1024' }]);

  function token(label: string): string {
    const t = typeof options.token === 'function' ? options.token() : options.token;
    if (t === undefined || !isHeaderSafeToken(t)) throw new SessionError(`${label}: no session token; call unlock() first`);
    return t;
  }

  async function page(q: EventsQuery & { limit?: number } = {}): Promise<EventPage> {
    const t = token('GET /events');
    return http.request({ method: 'GET', path: `/events${queryString(q)}`, label: 'GET /events', headers: { authorization: `Bearer ${t}` }, secrets: [t] }, EventPageSchema);
  }

  async function* replay(q: EventsQuery & { pageSize?: number } = {}): AsyncGenerator<EventPage> {
    let after = q.after;
    for (;;) {
      const p = await page({ after, filter: q.filter, ...(q.pageSize !== undefined ? { limit: q.pageSize } : {}) });
      if (p.events.length > 0) yield p;
      if (!p.has_more) return;
      after = p.next;
    }
  }

  /** One connection: yields its events; returns when the server ends it, throws on a fault. */
  async function* connect(after: string | undefined, filter: EventFilter | undefined, signal: AbortSignal): AsyncGenerator<VaultEvent> {
    const t = token('GET /events/stream');
    const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${t}` };
    if (after !== undefined) headers['last-event-id'] = after;
    const res = await doFetch(`${http.baseUrl}/events/stream${queryString({ filter })}`, { method: 'GET', headers, signal, redirect: 'error' });
    if (res.status !== 200) {
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        body = undefined;
      }
      throw http.errorFor({ method: 'GET', path: '/events/stream', label: 'GET /events/stream', secrets: [t] }, { status: res.status, body });
    }
    if (!/^text\/event-stream\b/i.test(res.headers.get('content-type') ?? '') || res.body === null) {
      throw new TransportError('GET /events/stream: the reply is not an event stream', { status: res.status });
    }
    for await (const m of parseSse(res.body, maxLine)) {
      let json: unknown;
      try {
        json = JSON.parse(m.data);
      } catch (cause) {
        throw new TransportError('GET /events/stream: an event is not valid JSON', { cause });
      }
      const parsed = VaultEventSchema.safeParse(json);
      if (!parsed.success) throw new TransportError('GET /events/stream: malformed event');
      if (m.id !== parsed.data.id) throw new TransportError('GET /events/stream: an event whose id line differs from its id');
      yield parsed.data;
    }
  }

  async function* follow(o: FollowOptions = {}): AsyncGenerator<VaultEvent> {
    let after = o.after === undefined ? undefined : EventIdSchema.parse(o.after);
    const base = o.reconnectDelayMs ?? 1000;
    let delay = base;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      while (!stop.signal.aborted) {
        let error: unknown = new TransportError('GET /events/stream: the server ended the stream');
        try {
          for await (const e of connect(after, o.filter, stop.signal)) {
            // A resumed stream starts after `after`; anything at or before it is a repeat.
            if (after !== undefined && e.id <= after) continue;
            after = e.id;
            delay = base;
            yield e;
          }
        } catch (e) {
          if (stop.signal.aborted) return;
          // A session refused does not heal by retrying, unless the caller can unlock again.
          if (e instanceof SessionError) {
            if (!o.reauthenticate || !(await o.reauthenticate())) throw e;
          } else if (e instanceof VaultError && !(e instanceof TransportError) && e.code !== -32603) {
            // A request the server calls invalid (a bad filter) does not heal either.
            throw e;
          }
          error = e;
        }
        if (stop.signal.aborted) return;
        o.onReconnect?.(error, after);
        await new Promise<void>((r) => {
          const timer = setTimeout(r, delay);
          stop.signal.addEventListener('abort', () => (clearTimeout(timer), r()), { once: true });
        });
        delay = Math.min(delay * 2, 30_000);
      }
    } finally {
      o.signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  return { page, replay, follow };
}
