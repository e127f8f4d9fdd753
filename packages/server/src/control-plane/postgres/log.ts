/**
 * @module control-plane/postgres/log
 * The control plane on PostgreSQL: several instances on one database, one writer at a time.
 *
 * The writer holds a lease in `cp_lease` and renews it; a standby takes it over only once it has
 * expired on the database's clock, with `token + 1`. Every commit is one transaction that first
 * reads the lease row `FOR SHARE` and goes on only if it still names this instance, this token and
 * a time not yet past: a writer that was paused (GC, SIGSTOP, a slow disk) and wakes after a
 * takeover finds the token moved and appends nothing. The row lock also makes a takeover wait for
 * a commit already under way, so no commit straddles two writers. Receipts carry the token
 * (`fence`), and the SDK's chain check refuses one that goes down.
 *
 * The writer also stops by itself: it counts its lease from when it sent the last renewal, less a
 * margin, and refuses writes (503 `not_writer`) once that passes without a renewal, before the
 * database would let anyone take over.
 *
 * Standbys follow `cp_log` (LISTEN/NOTIFY, and a poll in case a notification is missed) and apply
 * each batch to their LMDB replica, so any instance serves reads. A standby that takes over first
 * applies the whole log, then the control plane reloads its head from the replica (promoted).
 *
 * `pg` is loaded only when this module is used. The connection string is never logged.
 */
import { applyMigrations, InternalError, pendingMigrations, ValidationError, type SqlPool, type SqlQueryable, type VaultErrorOptions } from '@vault/sdk';
import { performance } from 'node:perf_hooks';
import { readSecretFile } from '../../http/files.js';
import type { CommitBatch, IntentRecord, IntentStore, SharedLog } from '../store.js';
import type { DeliveryProgress } from '../webhooks/feed.js';
import { CONTROL_PLANE_SCHEMA } from './schema.js';

/** 503: this instance does not hold the writer's lease. `data.writer` is the writer's URL when known. */
export class NotWriterError extends InternalError {
  override name = 'NotWriterError';
  readonly httpStatus = 503;
  constructor(message: string, writer: string | null, options: VaultErrorOptions = {}) {
    super(message, { ...options, data: { reason: 'not_writer', writer } });
  }
}

interface PgClient extends SqlQueryable {
  release(): void;
}
interface PgPool extends SqlQueryable {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: 'error', fn: (e: Error) => void): void;
  on(event: 'connect', fn: (client: { on(event: 'error', fn: (e: Error) => void): void }) => void): void;
}
interface PgListener extends SqlQueryable {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'notification', fn: () => void): void;
  on(event: 'error', fn: (e: Error) => void): void;
}

export type LeaseRole = 'standby' | 'promoting' | 'writer';

export interface PostgresLogOptions {
  /** The connection string (VAULT_DATABASE_URL or its file). Never logged. */
  url: string;
  /** This instance's name in the lease (default: host:pid:random). */
  instanceId: string;
  /** The URL other instances and clients are told to send writes to while this one writes. */
  advertiseUrl: () => string;
  /** Lease length in seconds (default 10): failover takes about this long. */
  leaseSeconds?: number;
  /** How often a standby looks for new log entries without a notification, ms (default 1000). */
  pollMs?: number;
  poolMax?: number;
  log: (event: Record<string, unknown>) => void;
}

export interface RoleHooks {
  /** Called once this instance holds the lease and its replica has the whole log; writes open after it resolves. */
  promoted(): Promise<void>;
  /**
   * Called once writes are open (after promoted): what writes on its own (resuming executions in
   * flight, the expiry sweep) starts here, never in promoted, where each of its writes is refused.
   */
  writing?(): void;
  /** Called when this instance stops writing (the lease lost, expired or fenced). */
  demoted(reason: string): void;
}

const BATCH_ROWS = 256;

/** An instance's name in the lease: printable, no spaces, bounded (it is logged and shown in /metrics). */
const INSTANCE_ID_RE = /^[A-Za-z0-9._:@-]{1,128}$/;
const WRITER_URL_MAX = 2048;

/**
 * `text` as an address to send writes to, or null: a plain http(s) URL without credentials, at most
 * 2048 characters. Both what an instance advertises and what it reads back from the lease row pass
 * here: a URL planted in the database is not handed to clients (503 `writer`, /ready) as the writer.
 */
export function writerUrl(text: unknown): string | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > WRITER_URL_MAX) return null;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return null;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username !== '' || u.password !== '') return null;
  return text;
}

/** One commit per intent per batch in cp_intents (a group may write one record twice; the last wins). */
function lastWrites(batch: CommitBatch): IntentRecord[] {
  const byId = new Map<string, IntentRecord>();
  for (const w of batch.writes) if (w.record) byId.set(w.record.intentId, w.record);
  return [...byId.values()];
}

/**
 * A commit: one statement, so one round trip and one transaction (each statement outside BEGIN is
 * its own). The fence: the lease row, read FOR SHARE, still names this instance ($1), its token
 * ($2) and a time not yet past; every insert reads the log entry's RETURNING row, which exists
 * only when the lease row does, so a fenced writer appends nothing and gets no row back. The row
 * lock is held to the commit, so a takeover waits for a commit under way. The rows for the query
 * tables come as one JSON array each ($6 receipts, $7 intents, $8 events), parsed by PostgreSQL;
 * $5 is the entry's exact text and $9 the receipt key's signature over it.
 */
const APPEND = `
WITH held AS (
  SELECT 1 FROM cp_lease WHERE name = 'writer' AND holder = $1 AND token = $2 AND expires_at > now() FOR SHARE
), log AS (
  INSERT INTO cp_log (seq, fence, at, batch, sig) SELECT $3, $2, $4, $5, $9 FROM held RETURNING seq
), receipts AS (
  INSERT INTO cp_receipts (seq, hash, prev, fence, kind, intent_id, record)
  SELECT (r->>'seq')::bigint, r->>'hash', r->>'prev', coalesce((r->>'fence')::bigint, $2), r->>'kind', r->>'intentId', r
  FROM log, jsonb_array_elements($6::jsonb) AS r
), intents AS (
  INSERT INTO cp_intents (intent_id, n, wallet, status, created_at, updated_at, record)
  SELECT r->>'intentId', (r->>'n')::bigint, r->'intent'->>'wallet', r->>'status', (r->>'created_at')::bigint, (r->>'updated_at')::bigint, r
  FROM log, jsonb_array_elements($7::jsonb) AS r
  ON CONFLICT (intent_id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at, record = EXCLUDED.record
), events AS (
  INSERT INTO cp_events (seq, type, event)
  SELECT (e->>'seq')::bigint, e->>'type', e FROM log, jsonb_array_elements($8::jsonb) AS e
)
SELECT pg_notify('cp_log', seq::text) FROM log`;

export class PostgresLog implements SharedLog, DeliveryProgress {
  readonly #pool: PgPool;
  readonly #listener: PgListener;
  readonly #o: Required<Omit<PostgresLogOptions, 'url' | 'poolMax'>>;
  #store: IntentStore | null = null;
  #hooks: RoleHooks | null = null;
  #role: LeaseRole = 'standby';
  #token: number | undefined;
  /** performance.now() after which this instance no longer counts on its lease. */
  #deadline = 0;
  #writerUrl: string | null = null;
  #leaseTimer: NodeJS.Timeout | null = null;
  #pollTimer: NodeJS.Timeout | null = null;
  #catchingUp: Promise<void> | null = null;
  #again = false;
  #leaseBusy = false;
  /** The promotion under way or last finished (start() waits for the first). */
  #promotion: Promise<void> = Promise.resolve();
  #closed = false;
  /** Takeovers by this instance and losses, for /metrics. */
  readonly counters = { promotions: 0, demotions: 0, applied: 0 };

  private constructor(pool: PgPool, listener: PgListener, o: PostgresLogOptions) {
    this.#pool = pool;
    this.#listener = listener;
    this.#o = {
      instanceId: o.instanceId,
      advertiseUrl: o.advertiseUrl,
      leaseSeconds: o.leaseSeconds ?? 10,
      pollMs: o.pollMs ?? 1000,
      log: o.log,
    };
  }

  /**
   * Connects and checks the schema is current (it never migrates: `vault-control-plane migrate`
   * does). Refuses a database that is behind or ahead, naming what to do.
   */
  static async open(o: PostgresLogOptions): Promise<PostgresLog> {
    const lease = o.leaseSeconds ?? 10;
    if (!Number.isInteger(lease) || lease < 1 || lease > 3600) throw new Error('lease seconds must be an integer 1..3600');
    if (typeof o.instanceId !== 'string' || !INSTANCE_ID_RE.test(o.instanceId)) {
      throw new ValidationError('database', [{ path: 'instanceId', message: 'must be 1-128 characters of A-Z a-z 0-9 . _ : @ -' }]);
    }
    const { default: pg } = await import('pg');
    // A commit is one statement, which the server finishes without the client. The webhook
    // progress write is a transaction: a writer paused inside it would hold the lease row FOR SHARE
    // and a takeover would wait on it, so the server ends a transaction left idle for half a lease
    // (that write then fails, as it must). No statement may run longer than a lease.
    const pool = new pg.Pool({
      connectionString: o.url,
      max: o.poolMax ?? 8,
      connectionTimeoutMillis: 10_000,
      idle_in_transaction_session_timeout: Math.max(500, (lease * 1000) / 2),
      statement_timeout: lease * 1000,
    }) as unknown as PgPool;
    // An idle client losing its connection must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    // Nor one checked out (the server ended a stalled commit's session): its query fails instead.
    pool.on('connect', (client) => client.on('error', () => undefined));
    let listener: PgListener | null = null;
    try {
      const pending = await pendingMigrations(pool, CONTROL_PLANE_SCHEMA);
      if (pending.length > 0) throw new Error(`the database schema is behind (missing migrations ${pending.join(', ')}); run: vault-control-plane migrate`);
      listener = new pg.Client({ connectionString: o.url, connectionTimeoutMillis: 10_000 }) as unknown as PgListener;
      listener.on('error', () => undefined);
      await listener.connect();
      await listener.query('LISTEN cp_log');
    } catch (e) {
      await listener?.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw e;
    }
    return new PostgresLog(pool, listener, o);
  }

  /** Binds the replica this log feeds (catchUp works from then on). */
  attachStore(store: IntentStore): void {
    this.#store = store;
  }

  /** Binds the replica and the control plane's role hooks; then start(). */
  attach(store: IntentStore, hooks: RoleHooks): void {
    this.#store = store;
    this.#hooks = hooks;
  }

  /** Catches the replica up with the log, then starts following it and competing for the lease. */
  async start(): Promise<void> {
    await this.#checkReplica();
    await this.catchUp();
    this.#listener.on('notification', () => this.#kick());
    const poll = (): void => {
      this.#kick();
      if (!this.#closed) (this.#pollTimer = setTimeout(poll, this.#o.pollMs)).unref();
    };
    poll();
    // Renewed four times per lease: a renewal can be lost or slow three times before the lease runs out.
    const every = Math.max(100, Math.floor((this.#o.leaseSeconds * 1000) / 4));
    const tick = async (): Promise<void> => {
      await this.#leaseTick();
      if (!this.#closed) (this.#leaseTimer = setTimeout(() => void tick(), every)).unref();
    };
    await tick();
    // The lease was free: return once this instance writes (or its promotion failed, logged).
    await this.#promotion;
  }

  /**
   * Refuses a replica that is not a prefix of this database's log: one from another database, or
   * one ahead of a database restored to an earlier point. Followed, it would have this instance
   * append after entries the log never had (a gap in cp_log, receipts only this map holds).
   */
  async #checkReplica(): Promise<void> {
    const store = this.#store;
    if (!store) throw new InternalError('postgres log: no store attached');
    const applied = store.appliedLogSeq;
    const meta = store.getMeta();
    if (applied === 0 && meta.receipts === 0) return;
    const { rows } = await this.#pool.query('SELECT EXISTS (SELECT 1 FROM cp_log WHERE seq = $1) AS entry, (SELECT hash FROM cp_receipts WHERE seq = $2) AS head', [applied, meta.receipts - 1]);
    const entryOk = applied > 0 && rows[0]?.['entry'] === true;
    const headOk = meta.receipts === 0 || rows[0]?.['head'] === meta.head;
    if (!entryOk || !headOk) {
      throw new Error(
        `this instance's replica (log entry ${applied}, ${meta.receipts} receipts) does not match the database's log: it comes from another database, or the database was restored to an earlier point; remove the instance's replica directory to rebuild it from the log, or point it at its own database`,
      );
    }
  }

  get role(): LeaseRole {
    return this.#role;
  }

  /** The fencing token while this instance writes. */
  get fence(): number | undefined {
    return this.#role === 'writer' ? this.#token : undefined;
  }

  /** The writer's advertised URL as last read from the lease (this instance's own while it writes). */
  get writerUrl(): string | null {
    return this.#writerUrl;
  }

  /** Publishes this instance's URL in the lease now (called once it listens), rather than at the next renewal. */
  advertise(): void {
    if (this.#role === 'writer') void this.#leaseTick();
  }

  assertWriter(): void {
    if (this.#role !== 'writer') throw new NotWriterError(`this instance is a standby; send writes to the writer${this.#writerUrl ? ` (${this.#writerUrl})` : ''}`, this.#writerUrl);
    if (performance.now() >= this.#deadline) {
      this.#demote('lease_expired');
      throw new NotWriterError('this instance could not renew its lease in time and stopped writing', null);
    }
  }

  async append(entry: { batch: CommitBatch; text: string; sig: string }, logSeq: number): Promise<number> {
    const { batch } = entry;
    this.assertWriter();
    const token = this.#token!;
    const receipts = batch.writes.flatMap((w) => (w.receipt ? [w.receipt] : []));
    const r = await this.#pool.query(APPEND, [
      this.#o.instanceId,
      token,
      logSeq,
      Math.floor(Date.now() / 1000),
      entry.text,
      JSON.stringify(receipts),
      JSON.stringify(lastWrites(batch)),
      JSON.stringify(batch.events),
      entry.sig,
    ]);
    if (r.rowCount !== 1) {
      // Only the token this append ran under is lost: a late answer must not demote a newer lease.
      if (this.#token === token) this.#demote('fenced');
      throw new NotWriterError('this instance lost the writer lease; the write was not made', null);
    }
    return logSeq;
  }

  /**
   * The fence, inside the caller's transaction: the lease still names us, with our token, and has
   * not run out. The row lock (FOR SHARE) holds a takeover back until the transaction ends.
   */
  async #holdsLease(client: PgClient, token: number): Promise<boolean> {
    const held = await client.query("SELECT 1 FROM cp_lease WHERE name = 'writer' AND holder = $1 AND token = $2 AND expires_at > now() FOR SHARE", [this.#o.instanceId, token]);
    return held.rowCount === 1;
  }

  /** Webhook delivery's shared low water marks by endpoint (webhooks/dispatcher.ts). */
  async readProgress(): Promise<Map<string, number>> {
    const { rows } = await this.#pool.query('SELECT endpoint_id, low_water FROM cp_webhook_progress');
    return new Map(rows.map((r) => [r['endpoint_id'] as string, Number(r['low_water'])]));
  }

  /** Raises webhook low water marks, fenced as append is: only the writer, in one transaction with the lease check. */
  async writeProgress(marks: ReadonlyMap<string, number>): Promise<void> {
    this.assertWriter();
    const token = this.#token!;
    const ids = [...marks.keys()];
    const client = await this.#pool.connect();
    let fenced = false;
    try {
      await client.query('BEGIN');
      if (!(await this.#holdsLease(client, token))) {
        fenced = true;
        throw new NotWriterError('this instance lost the writer lease; webhook progress was not written', null);
      }
      // GREATEST: a mark only rises (a late write can never send the next writer back over delivered events).
      await client.query(
        `INSERT INTO cp_webhook_progress (endpoint_id, low_water, fence, updated_at)
         SELECT id, mark, $3, $4 FROM unnest($1::text[], $2::bigint[]) AS m(id, mark)
         ON CONFLICT (endpoint_id) DO UPDATE SET low_water = GREATEST(cp_webhook_progress.low_water, EXCLUDED.low_water), fence = EXCLUDED.fence, updated_at = EXCLUDED.updated_at`,
        [ids, ids.map((id) => marks.get(id)!), token, Math.floor(Date.now() / 1000)],
      );
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (fenced && this.#token === token) this.#demote('fenced');
      throw e;
    } finally {
      client.release();
    }
  }

  /**
   * A commit of this writer failed after the fence let it through (the database, the batch, or the
   * replica after the append): its store now refuses every write, so it steps down and gives the
   * lease up at once. Holding it would leave every instance refusing writes until a restart; a
   * standby, or this instance once its replica has caught up with the log, takes over instead.
   */
  commitFailed(error: unknown): void {
    if (this.#role !== 'writer') return;
    const token = this.#token;
    this.#o.log({ event: 'commit_failed', error: error instanceof Error ? error.message : String(error) });
    this.#demote('commit_failed');
    void this.#release(token);
  }

  /** Applies every log entry the replica lacks (one catch-up at a time; a call during one waits for a fresh pass). */
  catchUp(): Promise<void> {
    if (this.#catchingUp) {
      this.#again = true;
      return this.#catchingUp;
    }
    this.#catchingUp = (async () => {
      try {
        do {
          this.#again = false;
          await this.#applyAll();
        } while (this.#again && !this.#closed);
      } finally {
        this.#catchingUp = null;
      }
    })();
    return this.#catchingUp;
  }

  async #applyAll(): Promise<void> {
    const store = this.#store;
    if (!store) throw new InternalError('postgres log: no store attached');
    for (;;) {
      // The writer applies its own batches; a pass still running when it took over stops here.
      if (this.#role === 'writer') return;
      const from = store.appliedLogSeq;
      const { rows } = await this.#pool.query('SELECT seq, batch, sig FROM cp_log WHERE seq > $1 ORDER BY seq LIMIT $2', [from, BATCH_ROWS]);
      for (const row of rows) {
        await store.applyReplicated(row['batch'] as string, (row['sig'] as string | null) ?? null, Number(row['seq']));
        this.counters.applied++;
      }
      if (rows.length < BATCH_ROWS) return;
    }
  }

  #kick(): void {
    // Only a standby follows by itself: a promotion catches up once, then the writer applies its own.
    if (this.#closed || this.#role !== 'standby') return;
    this.catchUp().catch((e: unknown) => this.#o.log({ event: 'replica_apply_failed', error: e instanceof Error ? e.message : String(e) }));
  }

  async #leaseTick(): Promise<void> {
    if (this.#leaseBusy || this.#closed) return;
    this.#leaseBusy = true;
    try {
      // A promotion in progress renews too: catching up must not let the lease run out under it.
      if (this.#role === 'standby') await this.#tryAcquire();
      else await this.#renew();
    } catch (e) {
      this.#o.log({ event: 'lease_error', error: e instanceof Error ? e.message : String(e) });
    } finally {
      this.#leaseBusy = false;
    }
  }

  /** Milliseconds this instance counts on a lease it asked for at `sentAt`: the lease less a margin. */
  #counted(sentAt: number): number {
    const ms = this.#o.leaseSeconds * 1000;
    return sentAt + ms - Math.min(1000, ms / 5);
  }

  async #renew(): Promise<void> {
    const sentAt = performance.now();
    let renewed = false;
    try {
      const r = await this.#pool.query(
        "UPDATE cp_lease SET expires_at = now() + make_interval(secs => $3), url = $4 WHERE name = 'writer' AND holder = $1 AND token = $2 AND expires_at > now() RETURNING token",
        [this.#o.instanceId, this.#token, this.#o.leaseSeconds, this.#o.advertiseUrl()],
      );
      renewed = r.rowCount === 1;
    } catch (e) {
      // The database unreachable: keep writing only while the lease counted from the last renewal lasts.
      this.#o.log({ event: 'lease_renew_failed', error: e instanceof Error ? e.message : String(e) });
      if (performance.now() >= this.#deadline) this.#demote('lease_expired');
      return;
    }
    if (!renewed) this.#demote('lease_taken');
    else if (this.#role !== 'standby') this.#deadline = this.#counted(sentAt);
  }

  async #tryAcquire(): Promise<void> {
    const sentAt = performance.now();
    const r = await this.#pool.query(
      `UPDATE cp_lease SET holder = $1, token = token + 1, expires_at = now() + make_interval(secs => $2), url = $3
       WHERE name = 'writer' AND expires_at <= now() RETURNING token`,
      [this.#o.instanceId, this.#o.leaseSeconds, this.#o.advertiseUrl()],
    );
    if (r.rowCount !== 1) {
      const cur = await this.#pool.query("SELECT url FROM cp_lease WHERE name = 'writer' AND expires_at > now()");
      this.#writerUrl = writerUrl(cur.rows[0]?.['url']);
      return;
    }
    this.#token = Number(r.rows[0]!['token']);
    this.#deadline = this.#counted(sentAt);
    this.#role = 'promoting';
    this.#writerUrl = this.#o.advertiseUrl();
    // Not awaited here: the lease keeps being renewed while the replica catches up.
    this.#promotion = this.#promote();
  }

  async #promote(): Promise<void> {
    const token = this.#token;
    try {
      // Nobody else can append now: the replica takes the whole log before this instance writes.
      await this.catchUp();
      if (this.#role !== 'promoting' || this.#token !== token) return;
      await this.#hooks?.promoted();
    } catch (e) {
      this.#o.log({ event: 'promotion_failed', error: e instanceof Error ? e.message : String(e) });
      if (this.#role === 'promoting' && this.#token === token) {
        await this.#release();
        this.#role = 'standby';
        this.#token = undefined;
        this.#writerUrl = null;
      }
      return;
    }
    if (this.#role !== 'promoting' || this.#token !== token) return;
    this.#role = 'writer';
    this.counters.promotions++;
    this.#o.log({ event: 'lease_acquired', token, instance: this.#o.instanceId });
    this.#hooks?.writing?.();
  }

  #demote(reason: string): void {
    if (this.#role === 'standby') return;
    this.#role = 'standby';
    this.#token = undefined;
    this.#writerUrl = null;
    this.counters.demotions++;
    this.#o.log({ event: 'lease_lost', reason, instance: this.#o.instanceId });
    this.#hooks?.demoted(reason);
  }

  /** Gives the lease up (a clean stop), so a standby need not wait for it to expire. */
  async #release(token = this.#token): Promise<void> {
    if (token === undefined) return;
    await this.#pool
      .query("UPDATE cp_lease SET expires_at = now() WHERE name = 'writer' AND holder = $1 AND token = $2", [this.#o.instanceId, token])
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#leaseTimer) clearTimeout(this.#leaseTimer);
    if (this.#pollTimer) clearTimeout(this.#pollTimer);
    await this.#catchingUp?.catch(() => undefined);
    const wasWriter = this.#role !== 'standby';
    if (wasWriter) {
      this.#role = 'standby';
      await this.#release();
    }
    await this.#listener.end().catch(() => undefined);
    await this.#pool.end().catch(() => undefined);
  }
}

/**
 * `vault-control-plane migrate`: applies the control plane's migrations not yet recorded and
 * returns the versions applied now (empty when current).
 */
export async function migrateControlPlane(url: string): Promise<number[]> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => undefined);
  try {
    return await applyMigrations(pool as unknown as SqlPool, CONTROL_PLANE_SCHEMA);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/**
 * The connection string: VAULT_DATABASE_URL, else the first line of the file named by
 * `--database-url-file` or VAULT_DATABASE_URL_FILE (a secret: it may hold the password). Null: LMDB.
 */
export function databaseUrlFrom(file: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  const direct = env['VAULT_DATABASE_URL'];
  if (direct) return direct;
  const path = file ?? env['VAULT_DATABASE_URL_FILE'];
  if (!path) return null;
  const url = readSecretFile(path).split(/\r?\n/)[0]!.trim();
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error(`${path} does not start with a postgres:// connection string`);
  return url;
}
