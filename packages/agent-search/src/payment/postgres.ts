/**
 * @module payment/postgres
 * The authorization store and the charge log in PostgreSQL (`X402_DATABASE_URL`), so several API
 * processes behind one load balancer share one record of which authorizations were used: a
 * duplicate payment sent to two processes at once runs the handler once, charges once.
 *
 * The claim is one statement, `INSERT … ON CONFLICT DO NOTHING RETURNING`: the primary key makes
 * the database pick exactly one winner among concurrent claims, whichever process they come from.
 * States and their meaning are the in-process store's (idempotency.ts). A claim left `in_progress`
 * by a process that died mid-request stays refused (fail closed: the caller signs a new
 * authorization) until the authorization has expired and the pruning forgets it.
 *
 * Tables are created by versioned migrations (MIGRATIONS), applied under an advisory lock so two
 * processes starting together do not race, and recorded in `x402_schema_migrations`.
 *
 * `pg` is loaded only when this module is used.
 */
import { applyMigrations, type Migration, type SqlPool, type SqlQueryable } from '@vault/sdk';
import type { ChargeLog, ChargeRecord } from './charge-log.js';
import type { AuthorizationStore, ClaimResult } from './idempotency.js';

export type { Migration, SqlPool, SqlQueryable };

/** The agent-search schema, in order. Append only: an applied migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'authorizations and charges',
    sql: `
      CREATE TABLE x402_authorizations (
        key text PRIMARY KEY CHECK (length(key) <= 512),
        state text NOT NULL CHECK (state IN ('in_progress', 'used')),
        expires_at bigint NOT NULL,
        claimed_at bigint NOT NULL
      );
      CREATE INDEX x402_authorizations_expiry ON x402_authorizations (expires_at);
      CREATE TABLE x402_charges (
        id bigserial PRIMARY KEY,
        time bigint NOT NULL,
        route text NOT NULL,
        mode text,
        price text NOT NULL,
        amount numeric(78, 0) NOT NULL CHECK (amount >= 0),
        asset text NOT NULL,
        network text NOT NULL,
        payer text NOT NULL,
        pay_to text NOT NULL,
        transaction text NOT NULL,
        nonce text NOT NULL,
        -- One charge per authorization, whatever any process believes.
        UNIQUE (network, asset, payer, nonce)
      );
    `,
  },
];

/** Advisory lock key of the migration step (any constant; "x402" in ASCII). */
const MIGRATION_LOCK = 0x78343032;

/**
 * Applies the migrations not yet recorded (the SDK's runner), each in the same transaction as its
 * record, in `x402_schema_migrations`. Returns the versions applied now (empty when current).
 */
export function migrate(pool: SqlPool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return applyMigrations(pool, { product: 'agent-search', table: 'x402_schema_migrations', lockKey: MIGRATION_LOCK, migrations });
}

export interface PostgresPaymentsOptions {
  /** Clock in Unix seconds (tests). */
  now?: () => number;
  /** Connections in the pool. Default 10. */
  poolMax?: number;
  /** Claims between two prunes of expired keys. Default 1000. */
  pruneEvery?: number;
  /** Keys are forgotten this long after their authorization expired (seconds). Default 3600. */
  pruneGraceSeconds?: number;
}

export interface PostgresPayments {
  store: AuthorizationStore;
  chargeLog: ChargeLog;
  pool: SqlPool;
  /** Forgets keys whose authorization expired more than the grace period ago; returns how many. */
  prune(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Connects, migrates, and returns the store and charge log over one pool.
 *
 * @example
 * const pg = await openPostgresPayments(process.env.X402_DATABASE_URL!)
 * createApp({ ..., payment: { terms, facilitator, store: pg.store, chargeLog: pg.chargeLog } })
 */
export async function openPostgresPayments(url: string, options: PostgresPaymentsOptions = {}): Promise<PostgresPayments> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: options.poolMax ?? 10, connectionTimeoutMillis: 10_000 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const pruneEvery = options.pruneEvery ?? 1000;
  const grace = options.pruneGraceSeconds ?? 3600;
  let claims = 0;

  const prune = async (): Promise<number> => (await pool.query('DELETE FROM x402_authorizations WHERE expires_at < $1', [now() - grace])).rowCount ?? 0;

  const store: AuthorizationStore = {
    async claim(key: string, expiresAt: number): Promise<ClaimResult> {
      if (++claims % pruneEvery === 0) void prune().catch(() => undefined);
      // The row may vanish between the insert and the read (its claim released): look again.
      for (let i = 0; i < 3; i++) {
        const won = await pool.query('INSERT INTO x402_authorizations (key, state, expires_at, claimed_at) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING RETURNING key', [key, 'in_progress', expiresAt, now()]);
        if (won.rowCount === 1) return 'claimed';
        const held = await pool.query('SELECT state FROM x402_authorizations WHERE key = $1', [key]);
        const state = (held.rows[0] as { state: 'in_progress' | 'used' } | undefined)?.state;
        if (state !== undefined) return state;
      }
      return 'in_progress';
    },
    async release(key: string): Promise<void> {
      await pool.query("DELETE FROM x402_authorizations WHERE key = $1 AND state = 'in_progress'", [key]);
    },
    async markUsed(key: string): Promise<void> {
      await pool.query("UPDATE x402_authorizations SET state = 'used' WHERE key = $1", [key]);
    },
  };

  const chargeLog: ChargeLog = {
    async record(e: ChargeRecord): Promise<void> {
      await pool.query(
        'INSERT INTO x402_charges (time, route, mode, price, amount, asset, network, payer, pay_to, transaction, nonce) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
        [e.time, e.route, e.mode ?? null, e.price, e.amount, e.asset, e.network, e.payer, e.payTo, e.transaction, e.nonce],
      );
    },
  };

  return { store, chargeLog, pool, prune, close: () => pool.end() };
}

/** The charge log's rows, oldest first, as ChargeRecords (reconciliation, tests). */
export async function readCharges(client: SqlQueryable, limit = 1000): Promise<ChargeRecord[]> {
  const r = await client.query('SELECT time, route, mode, price, amount::text AS amount, asset, network, payer, pay_to, transaction, nonce FROM x402_charges ORDER BY id LIMIT $1', [limit]);
  return (r.rows as Record<string, string | null>[]).map((x) => ({
    time: Number(x['time']),
    route: x['route'] as string,
    ...(x['mode'] !== null ? { mode: x['mode'] as string } : {}),
    price: x['price'] as string,
    amount: x['amount'] as string,
    asset: x['asset'] as string,
    network: x['network'] as string,
    payer: x['payer'] as string,
    payTo: x['pay_to'] as string,
    transaction: x['transaction'] as string,
    nonce: x['nonce'] as string,
  }));
}
