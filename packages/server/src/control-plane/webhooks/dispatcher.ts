/**
 * @module control-plane/webhooks/dispatcher
 * Delivers the event log to each endpoint: at least once, in order per subject, retried with
 * exponential back-off and jitter until the retry horizon, then dead-lettered.
 *
 * Per endpoint, a cursor (the last event seq read from the feed) and the deliveries not yet done
 * live in the control plane's LMDB environment (one sub-database, `webhooks`): reading a batch of
 * events writes their deliveries and the advanced cursor in one transaction, and each attempt's
 * outcome is written as it comes. A restart reloads them and carries on with the same ids (the
 * `webhook-id` is the event id). A crash after a receiver answered but before its outcome was
 * written sends that event again: at least once, never lost.
 *
 * Order: a delivery waits while an earlier delivery of the same endpoint that shares a subject
 * member with it (the same intent, wallet or device) is neither delivered nor dead-lettered.
 * Memory is bounded: at most WINDOW deliveries per endpoint are open; the cursor stops while the
 * window is full, and the events wait in the log.
 *
 * Several instances on one database (PostgreSQL): only the writer delivers, and each instance's
 * LMDB is its own, so a new writer's cursor is wherever it last delivered (or the endpoint's start).
 * The writer therefore shares each endpoint's low water (every event at or below it delivered or
 * dead-lettered) through `progress`, fenced by its lease, at most every PROGRESS_MS and at close. A
 * new writer reads the marks before it delivers anything and starts each endpoint from the higher of
 * its cursor and the mark: what the old writer had open (above the mark) is sent again, nothing
 * below it is, and nothing is skipped.
 */
import { canonicalize, signWebhook, type VaultEvent } from '@vault/sdk';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Database } from 'lmdb';
import type { IntentStore } from '../store.js';
import { typeMatches, type WebhookEndpoint, type WebhooksConfig } from './config.js';
import type { DeliveryProgress, EventFeed } from './feed.js';
import { sendOnce, systemResolver, type AttemptResult, type Resolver } from './send.js';

/** Open deliveries per endpoint (memory bound; the cursor waits beyond it). */
export const WINDOW = 1000;
/** Events read from the feed at once. */
const BATCH = 200;
/** Delivered records kept per endpoint for GET /webhooks/{id}/deliveries (oldest pruned). */
export const RETAIN_DELIVERED = 1000;
/** Attempts kept per delivery (the count goes on). */
const ATTEMPTS_KEPT = 20;
/** The longest the dispatcher sleeps before looking again (clock jumps, config changes). */
const MAX_SLEEP_MS = 30_000;
/** How often the writer shares its low water marks (at most; also at close). */
export const PROGRESS_MS = 200;
/** Before a failed read or write of the shared progress is tried again. */
const PROGRESS_RETRY_MS = 1000;

export interface RetrySchedule {
  /** The first retry's delay (default 5 s); each next one doubles ... */
  baseSeconds: number;
  /** ... up to this (default 1 h), each with jitter (a random half of it). */
  capSeconds: number;
}
export const DEFAULT_RETRY: RetrySchedule = { baseSeconds: 5, capSeconds: 3600 };

export interface Attempt {
  at: number;
  status: number | null;
  error: string | null;
  ms: number;
  /** The first bytes of the response body (at most EXCERPT_BYTES). */
  excerpt: string | null;
}

export type DeliveryState = 'pending' | 'delivered' | 'dead';

export interface DeliveryRecord {
  /** The event id: the `webhook-id`, the same on every attempt. */
  id: string;
  seq: number;
  type: string;
  /** Ordering keys (`intent:<id>`, `wallet:<id>`, `device:<id>`). */
  keys: string[];
  /** The exact bytes signed and sent (RFC 8785 JSON of the event), so retries are identical. */
  body: string;
  state: DeliveryState;
  /** Sent again on request: neither waits for nor holds back its subject's other deliveries. */
  resend: boolean;
  created_at: number;
  first_attempt_at: number | null;
  next_attempt_at: number | null;
  attempt_count: number;
  attempts: Attempt[];
  finished_at: number | null;
}

type Space = 'p' | 'h' | 'x';
const SPACE: Record<DeliveryState, Space> = { pending: 'p', delivered: 'h', dead: 'x' };

interface Endpoint {
  cursor: number;
  /** Open deliveries by seq. */
  open: Map<number, DeliveryRecord>;
  inflight: Set<number>;
  delivered: number;
  /** The feed may hold events past the cursor (set by each append, cleared by a short read). */
  more: boolean;
  /** The feed broke its contract (out of order): this endpoint reads no further until a restart. */
  broken: boolean;
}

export interface DispatcherOptions {
  /** The control plane's store: delivery state goes in its LMDB environment (lmdb's types stay out of the declarations). */
  store: IntentStore;
  feed: EventFeed | null;
  /** The webhooks section of the state in force (read on every pass: reloads take effect). */
  config: () => WebhooksConfig;
  /** The endpoint's secret, or null when it cannot be opened (then nothing is sent). */
  secret: (endpoint: WebhookEndpoint) => string | null;
  /** Integer Unix seconds. */
  now: () => number;
  log: (event: Record<string, unknown>) => void;
  resolve?: Resolver | undefined;
  retry?: Partial<RetrySchedule> | undefined;
  random?: () => number;
  /**
   * Shared delivery progress (PostgreSQL): read before the first delivery, written as delivery
   * advances. Absent: the cursor in this LMDB is the only one (LMDB alone).
   */
  progress?: DeliveryProgress | undefined;
}

/** Ordering keys of an event: every member of its subject. */
export function subjectKeys(e: VaultEvent): string[] {
  const k: string[] = [];
  if (e.subject.intent !== undefined) k.push(`intent:${e.subject.intent}`);
  if (e.subject.wallet !== undefined) k.push(`wallet:${e.subject.wallet}`);
  if (e.subject.device !== undefined) k.push(`device:${e.subject.device}`);
  return k;
}

/** Seconds before attempt number `n + 1` (n >= 1 attempts made): doubling, capped, equal jitter. */
export function backoffSeconds(n: number, schedule: RetrySchedule, random: () => number): number {
  const d = Math.min(schedule.capSeconds, schedule.baseSeconds * 2 ** Math.min(n - 1, 40));
  return Math.max(1, Math.ceil(d / 2 + random() * (d / 2)));
}

/**
 * The seq at and below which every event of the endpoint is delivered or dead-lettered: just below
 * its lowest open delivery, else its cursor. A resend reopens an old event by an operator's
 * request; it does not pull the mark back (a new writer would otherwise replay all after it).
 */
function lowWater(st: Endpoint): number {
  let low = st.cursor;
  for (const r of st.open.values()) if (!r.resend && r.seq <= low) low = r.seq - 1;
  return low;
}

export class WebhookDispatcher {
  readonly #db: Database<unknown, (string | number)[]>;
  readonly #o: DispatcherOptions;
  readonly #resolve: Resolver;
  readonly #retry: RetrySchedule;
  readonly #random: () => number;
  readonly #eps = new Map<string, Endpoint>();
  readonly #agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 64 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }) };
  readonly #abort = new AbortController();
  readonly #running = new Set<Promise<void>>();
  readonly #writes = new Set<Promise<unknown>>();
  #inflight = 0;
  #timer: NodeJS.Timeout | null = null;
  #scheduled = false;
  #closed = false;
  #started = false;
  #unsubscribe: () => void = () => undefined;
  /** The shared marks as read at start (PostgreSQL); null until then, and nothing is delivered meanwhile. */
  #marks: Map<string, number> | null = null;
  /** Endpoints whose mark may have risen since it was last shared, and the marks last shared. */
  readonly #dirty = new Set<string>();
  readonly #shared = new Map<string, number>();
  #shareTimer: NodeJS.Timeout | null = null;
  #sharing: Promise<void> | null = null;

  constructor(o: DispatcherOptions) {
    this.#o = o;
    this.#db = o.store.root.openDB<unknown, (string | number)[]>({ name: 'webhooks' });
    this.#resolve = o.resolve ?? systemResolver;
    this.#retry = { ...DEFAULT_RETRY, ...o.retry };
    this.#random = o.random ?? Math.random;
  }

  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    if (this.#o.feed) {
      this.#unsubscribe = this.#o.feed.onAppend(() => {
        for (const st of this.#eps.values()) st.more = true;
        this.kick();
      });
    }
    if (this.#o.progress) void this.#adopt();
    else this.kick();
  }

  /**
   * Reads the shared marks, then delivers. Fails closed: while they cannot be read nothing is sent
   * (this instance's own cursor may be far behind: it would replay the history), and it tries again.
   */
  async #adopt(): Promise<void> {
    let marks: Map<string, number>;
    try {
      marks = await this.#o.progress!.readProgress();
    } catch (e) {
      this.#o.log({ event: 'webhook_progress_failed', op: 'read', error: e instanceof Error ? e.name : 'unknown' });
      if (!this.#closed) setTimeout(() => void this.#adopt(), PROGRESS_RETRY_MS).unref();
      return;
    }
    if (this.#closed) return;
    this.#marks = marks;
    for (const [id, m] of marks) this.#shared.set(id, m);
    // Anything loaded before (a read, a resend) is loaded again against the marks.
    this.#eps.clear();
    this.kick();
  }

  /** Looks again soon: new events, a finished attempt, a changed clock or configuration. */
  kick(): void {
    // Only once started (a standby's dispatcher never runs) and, on a shared database, once the marks are in.
    if (this.#scheduled || this.#closed || !this.#started || (this.#o.progress && !this.#marks)) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      try {
        this.#pass();
      } catch (e) {
        // Never a crash of the control plane: logged, and looked at again shortly.
        this.#o.log({ event: 'webhook_fault', error: e instanceof Error ? e.name : 'unknown' });
        if (!this.#closed) setTimeout(() => this.kick(), 1000).unref();
      }
    });
  }

  // ---------------------------------------------------------------- the pass

  #pass(): void {
    if (this.#closed) return;
    const cfg = this.#o.config();
    const active = new Set(cfg.endpoints.map((e) => e.id));
    // An endpoint removed (DELETE, or a reload) stops at once; outcomes still in flight are dropped.
    for (const id of [...this.#eps.keys()]) if (!active.has(id)) this.#eps.delete(id);
    const now = this.#o.now();
    let wake = Number.POSITIVE_INFINITY;
    for (const ep of cfg.endpoints) {
      const st = this.#load(ep);
      this.#ingest(ep, st);
      const held = new Set<string>();
      for (const seq of [...st.open.keys()].sort((a, b) => a - b)) {
        const r = st.open.get(seq)!;
        const blocked = !r.resend && r.keys.some((k) => held.has(k));
        if (!r.resend) for (const k of r.keys) held.add(k);
        if (blocked || st.inflight.has(seq)) continue;
        const due = r.next_attempt_at ?? now;
        if (due > now) wake = Math.min(wake, due);
        else if (this.#inflight < cfg.max_concurrency) this.#start(ep, st, r, cfg);
      }
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (wake !== Number.POSITIVE_INFINITY) {
      this.#timer = setTimeout(() => this.kick(), Math.min(MAX_SLEEP_MS, Math.max(0, (wake - now) * 1000)));
      this.#timer.unref();
    }
  }

  #load(ep: WebhookEndpoint): Endpoint {
    let st = this.#eps.get(ep.id);
    if (st) return st;
    const local = (this.#db.get(['c', ep.id]) as number | undefined) ?? ep.start_seq;
    // Another writer got further than this instance's own records: start from its mark (no replay
    // of what it delivered) and drop what was still open here below it (done there).
    const mark = this.#marks?.get(ep.id);
    const cursor = mark !== undefined && mark > local ? mark : local;
    const open = new Map<number, DeliveryRecord>();
    const done: number[] = [];
    for (const { value } of this.#db.getRange({ start: ['p', ep.id, 0], end: ['p', ep.id, Number.MAX_SAFE_INTEGER] })) {
      const r = value as DeliveryRecord;
      if (mark !== undefined && !r.resend && r.seq <= mark) done.push(r.seq);
      else open.set(r.seq, r);
    }
    if (cursor !== local || done.length > 0) {
      this.#o.log({ event: 'webhook_progress_adopted', endpoint: ep.id, from: local, to: cursor, dropped: done.length });
      this.#write(() => {
        for (const seq of done) this.#db.remove(['p', ep.id, seq]);
        this.#db.put(['c', ep.id], cursor);
      });
    }
    const delivered = this.#db.getCount({ start: ['h', ep.id, 0], end: ['h', ep.id, Number.MAX_SAFE_INTEGER] });
    st = { cursor, open, inflight: new Set(), delivered, more: true, broken: false };
    this.#eps.set(ep.id, st);
    return st;
  }

  /** Reads the next events into the window, writing their deliveries with the cursor in one transaction. */
  #ingest(ep: WebhookEndpoint, st: Endpoint): void {
    const feed = this.#o.feed;
    if (!feed || !st.more || st.broken || st.open.size >= WINDOW) return;
    const limit = Math.min(BATCH, WINDOW - st.open.size);
    let events: VaultEvent[];
    try {
      events = feed.after(st.cursor, limit);
    } catch (e) {
      // The log refused the read: nothing is skipped; the next append (or a restart) tries again.
      this.#o.log({ event: 'webhook_feed_failed', endpoint: ep.id, error: e instanceof Error ? e.name : 'unknown' });
      st.more = false;
      return;
    }
    const now = this.#o.now();
    const fresh: DeliveryRecord[] = [];
    let last = st.cursor;
    for (const e of events) {
      // The feed's contract, checked: ascending, after the cursor. Anything else stops this endpoint.
      if (!Number.isSafeInteger(e.seq) || e.seq <= last) {
        this.#o.log({ event: 'webhook_feed_out_of_order', endpoint: ep.id, after: last, seq: e.seq });
        st.broken = true;
        return;
      }
      last = e.seq;
      if (!typeMatches(ep.types, e.type)) continue;
      fresh.push({
        id: e.id,
        seq: e.seq,
        type: e.type,
        keys: subjectKeys(e),
        body: canonicalize(e),
        state: 'pending',
        resend: false,
        created_at: now,
        first_attempt_at: null,
        next_attempt_at: now,
        attempt_count: 0,
        attempts: [],
        finished_at: null,
      });
    }
    st.more = events.length === limit;
    if (last === st.cursor) return;
    st.cursor = last;
    for (const r of fresh) st.open.set(r.seq, r);
    this.#write(() => {
      for (const r of fresh) this.#db.put(['p', ep.id, r.seq], r);
      this.#db.put(['c', ep.id], last);
    });
    this.#share(ep.id);
  }

  #start(ep: WebhookEndpoint, st: Endpoint, r: DeliveryRecord, cfg: WebhooksConfig): void {
    st.inflight.add(r.seq);
    this.#inflight += 1;
    const at = this.#o.now();
    const run = this.#attempt(ep, r, cfg, at)
      .catch((e: unknown): AttemptResult & { at: number } => {
        // A fault is a failed attempt like any other (recorded, backed off), never a tight loop.
        this.#o.log({ event: 'webhook_fault', endpoint: ep.id, error: e instanceof Error ? e.name : 'unknown' });
        return { ok: false, status: null, error: 'fault', excerpt: null, ms: 0, at };
      })
      .then((res) => {
        // Removed or closed meanwhile: the outcome is not written (a restart sends it again).
        if (this.#closed || this.#eps.get(ep.id) !== st) return;
        this.#record(ep, st, r, res);
      })
      .catch((e: unknown) => this.#o.log({ event: 'webhook_fault', endpoint: ep.id, error: e instanceof Error ? e.name : 'unknown' }))
      .finally(() => {
        st.inflight.delete(r.seq);
        this.#inflight -= 1;
        this.#running.delete(run);
        this.kick();
      });
    this.#running.add(run);
  }

  async #attempt(ep: WebhookEndpoint, r: DeliveryRecord, cfg: WebhooksConfig, at: number): Promise<AttemptResult & { at: number }> {
    const secret = this.#o.secret(ep);
    // No secret, no delivery: an unsigned (or wrongly signed) event is never sent.
    if (secret === null) return { ok: false, status: null, error: 'secret_unreadable', excerpt: null, ms: 0, at };
    const headers = {
      'webhook-id': r.id,
      'webhook-timestamp': String(at),
      'webhook-signature': signWebhook({ secret, id: r.id, timestamp: at, body: r.body }),
    };
    const res = await sendOnce(ep.url, headers, r.body, {
      policy: { allowPrivate: cfg.allow_private, allowNetworks: cfg.allow_networks },
      resolve: this.#resolve,
      timeoutMs: cfg.attempt_timeout_seconds * 1000,
      agents: this.#agents,
      signal: this.#abort.signal,
    });
    return { ...res, at };
  }

  #record(ep: WebhookEndpoint, st: Endpoint, r: DeliveryRecord, res: AttemptResult & { at: number }): void {
    const now = this.#o.now();
    const current = st.open.get(r.seq) ?? r;
    const attempt: Attempt = { at: res.at, status: res.status, error: res.error, ms: res.ms, excerpt: res.excerpt };
    const next: DeliveryRecord = {
      ...current,
      attempt_count: current.attempt_count + 1,
      attempts: [...current.attempts, attempt].slice(-ATTEMPTS_KEPT),
      first_attempt_at: current.first_attempt_at ?? res.at,
    };
    const horizonAt = next.first_attempt_at! + this.#o.config().retry_horizon_seconds;
    if (res.ok) {
      Object.assign(next, { state: 'delivered', next_attempt_at: null, finished_at: now });
    } else if (now >= horizonAt) {
      Object.assign(next, { state: 'dead', next_attempt_at: null, finished_at: now });
      this.#o.log({ event: 'webhook_dead_letter', endpoint: ep.id, delivery: r.id, attempts: next.attempt_count });
    } else {
      // The last attempt lands on the horizon itself, then the delivery is dead-lettered.
      next.next_attempt_at = Math.min(horizonAt, now + backoffSeconds(next.attempt_count, this.#retry, this.#random));
    }
    if (next.state === 'pending') st.open.set(r.seq, next);
    else st.open.delete(r.seq);
    const prune: number[] = [];
    if (next.state === 'delivered') {
      st.delivered += 1;
      if (st.delivered > RETAIN_DELIVERED) {
        for (const key of this.#db.getKeys({ start: ['h', ep.id, 0], end: ['h', ep.id, Number.MAX_SAFE_INTEGER], limit: st.delivered - RETAIN_DELIVERED })) {
          prune.push((key as [string, string, number])[2]);
        }
        st.delivered -= prune.length;
      }
    }
    this.#write(() => {
      this.#db.remove(['p', ep.id, r.seq]);
      this.#db.remove(['h', ep.id, r.seq]);
      this.#db.remove(['x', ep.id, r.seq]);
      this.#db.put([SPACE[next.state], ep.id, r.seq], next);
      for (const seq of prune) this.#db.remove(['h', ep.id, seq]);
    });
    if (next.state !== 'pending') this.#share(ep.id);
  }

  // ---------------------------------------------------------------- shared progress (PostgreSQL)

  /** Notes that an endpoint's mark may have risen; shared within PROGRESS_MS (one write for all endpoints). */
  #share(endpointId: string): void {
    if (!this.#o.progress || !this.#marks || this.#closed) return;
    this.#dirty.add(endpointId);
    if (!this.#shareTimer && !this.#sharing) this.#shareLater(PROGRESS_MS);
  }

  #shareLater(ms: number): void {
    this.#shareTimer = setTimeout(() => {
      this.#shareTimer = null;
      void this.#flush();
    }, ms);
    this.#shareTimer.unref();
  }

  /** Writes the marks that rose. A refused write (the lease lost, the database away) is retried, never skipped. */
  #flush(): Promise<void> {
    if (this.#sharing) return this.#sharing;
    const marks = new Map<string, number>();
    for (const id of this.#dirty) {
      const st = this.#eps.get(id);
      if (!st) continue;
      const m = lowWater(st);
      if (m > (this.#shared.get(id) ?? Number.NEGATIVE_INFINITY)) marks.set(id, m);
    }
    this.#dirty.clear();
    if (marks.size === 0) return Promise.resolve();
    const run = this.#o.progress!.writeProgress(marks).then(
      () => {
        for (const [id, m] of marks) if (m > (this.#shared.get(id) ?? Number.NEGATIVE_INFINITY)) this.#shared.set(id, m);
      },
      (e: unknown) => {
        this.#o.log({ event: 'webhook_progress_failed', op: 'write', error: e instanceof Error ? e.name : 'unknown' });
        for (const id of marks.keys()) this.#dirty.add(id);
      },
    );
    this.#sharing = run.finally(() => {
      this.#sharing = null;
      if (this.#dirty.size > 0 && !this.#closed && !this.#shareTimer) this.#shareLater(PROGRESS_RETRY_MS);
    });
    return this.#sharing;
  }

  #write(fn: () => void): void {
    const w = this.#db
      .transaction(fn)
      .catch((e: unknown) => this.#o.log({ event: 'webhook_store_failed', error: e instanceof Error ? e.name : 'unknown' }))
      .finally(() => this.#writes.delete(w));
    this.#writes.add(w);
  }

  // ---------------------------------------------------------------- reads and operator actions

  /** Resolves once every write issued so far is committed (reads after it see them). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#writes]);
  }

  /** Newest first, across states (or one state), at most `limit`, as committed (see settled()). */
  deliveries(endpointId: string, limit: number, state?: DeliveryState): DeliveryRecord[] {
    const spaces: Space[] = state ? [SPACE[state]] : ['p', 'h', 'x'];
    const all: DeliveryRecord[] = [];
    for (const s of spaces) {
      for (const { value } of this.#db.getRange({ start: [s, endpointId, Number.MAX_SAFE_INTEGER], end: [s, endpointId, -1], reverse: true, limit })) {
        all.push(value as DeliveryRecord);
      }
    }
    // Open deliveries as memory has them (an outcome may not be on disk yet).
    const st = this.#eps.get(endpointId);
    return all
      .map((r) => (r.state === 'pending' && st?.open.get(r.seq)) || r)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit);
  }

  find(endpointId: string, seq: number): DeliveryRecord | null {
    const open = this.#eps.get(endpointId)?.open.get(seq);
    if (open) return open;
    for (const s of ['p', 'h', 'x'] as const) {
      const r = this.#db.get([s, endpointId, seq]) as DeliveryRecord | undefined;
      if (r) return r;
    }
    return null;
  }

  counts(endpointId: string): { pending: number; dead: number } {
    const st = this.#eps.get(endpointId);
    return {
      pending: st ? st.open.size : this.#db.getCount({ start: ['p', endpointId, 0], end: ['p', endpointId, Number.MAX_SAFE_INTEGER] }),
      dead: this.#db.getCount({ start: ['x', endpointId, 0], end: ['x', endpointId, Number.MAX_SAFE_INTEGER] }),
    };
  }

  /**
   * Sends a delivery again now (same webhook-id and body), with a fresh retry horizon; durable
   * before it resolves. One whose attempt is in flight is left to it.
   */
  async resend(ep: WebhookEndpoint, seq: number): Promise<DeliveryRecord | null> {
    const st = this.#load(ep);
    const r = this.find(ep.id, seq);
    if (!r) return null;
    if (st.inflight.has(seq)) return r;
    const now = this.#o.now();
    const next: DeliveryRecord = { ...r, state: 'pending', resend: r.state !== 'pending' || r.resend, first_attempt_at: now, next_attempt_at: now, finished_at: null };
    if (r.state === 'delivered') st.delivered -= 1;
    st.open.set(seq, next);
    await this.#db.transaction(() => {
      this.#db.remove(['h', ep.id, seq]);
      this.#db.remove(['x', ep.id, seq]);
      this.#db.put(['p', ep.id, seq], next);
    });
    this.kick();
    return next;
  }

  /** Forgets an endpoint's cursor and deliveries (after it was removed from the state). */
  async purge(endpointId: string): Promise<void> {
    this.#eps.delete(endpointId);
    await this.#db.transaction(() => {
      this.#db.remove(['c', endpointId]);
      for (const s of ['p', 'h', 'x'] as const) {
        for (const key of this.#db.getKeys({ start: [s, endpointId, 0], end: [s, endpointId, Number.MAX_SAFE_INTEGER] })) this.#db.remove(key);
      }
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Stops: attempts in flight are cut off (and sent again after a restart), writes are awaited. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    if (this.#timer) clearTimeout(this.#timer);
    this.#abort.abort();
    await Promise.allSettled([...this.#running]);
    await Promise.allSettled([...this.#writes]);
    if (this.#shareTimer) clearTimeout(this.#shareTimer);
    this.#shareTimer = null;
    // The last marks, while a clean stop still holds the lease (after a lost lease the write is refused).
    await this.#sharing;
    if (this.#marks) await this.#flush();
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }
}
