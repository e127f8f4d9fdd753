/**
 * @module sql
 * Versioned SQL migrations over any `pg`-like pool, for the services that keep state in
 * PostgreSQL (the control plane, the paid search API). Pure of I/O of its own: the caller hands
 * in the pool. Each migration runs in one transaction with its record, under an advisory lock so
 * two processes starting together do not race; a database that has migrations this release does
 * not know is refused (a newer release migrated it).
 */

/** What the migration runner needs of a `pg` Pool, Client or PoolClient. */
export interface SqlQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}

/** What `applyMigrations` needs of a `pg` Pool: one connection for the migration transaction. */
export interface SqlPool extends SqlQueryable {
  connect(): Promise<SqlQueryable & { release(): void }>;
  end(): Promise<void>;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface MigrationSet {
  /** Who the schema belongs to, for messages (`control plane`, `agent-search`). */
  product: string;
  /** The table that records applied versions (`<prefix>_schema_migrations`). */
  table: string;
  /** The advisory lock key of the migration step (any constant, one per product). */
  lockKey: number;
  /** Append only: an applied migration is never edited. */
  migrations: readonly Migration[];
}

const TABLE_RE = /^[a-z][a-z0-9_]{0,62}$/;

function checkSet(set: MigrationSet): void {
  if (!TABLE_RE.test(set.table)) throw new Error(`migrations: table name ${JSON.stringify(set.table)} is not a plain lower-case identifier`);
  const seen = new Set<number>();
  for (const m of set.migrations) {
    if (!Number.isSafeInteger(m.version) || m.version < 1 || seen.has(m.version)) throw new Error(`migrations: ${set.product} version ${m.version} is not a unique positive integer`);
    seen.add(m.version);
  }
}

/**
 * Applies the migrations not yet recorded, in version order, each in the same transaction as
 * its record. Returns the versions applied now (empty when the schema was current).
 *
 * @example
 * const applied = await applyMigrations(pool, { product: 'control plane', table: 'cp_schema_migrations', lockKey: 0x63700001, migrations })
 */
export async function applyMigrations(pool: SqlPool, set: MigrationSet, now: () => number = () => Math.floor(Date.now() / 1000)): Promise<number[]> {
  checkSet(set);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [set.lockKey]);
    await client.query(`CREATE TABLE IF NOT EXISTS ${set.table} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
    const done = new Set((await client.query(`SELECT version FROM ${set.table}`)).rows.map((r) => Number(r['version'])));
    const unknown = unknownVersions(done, set);
    if (unknown.length > 0) throw new Error(`the database has ${set.product} migrations this release does not know (${unknown.join(', ')}); upgrade`);
    const applied: number[] = [];
    for (const m of [...set.migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query(`INSERT INTO ${set.table} (version, name, applied_at) VALUES ($1, $2, $3)`, [m.version, m.name, now()]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/**
 * The versions of `set` not yet applied (empty: the schema is current). Throws when the database
 * has versions this release does not know. For a service that must not migrate at start-up.
 */
export async function pendingMigrations(db: SqlQueryable, set: MigrationSet): Promise<number[]> {
  checkSet(set);
  const exists = await db.query('SELECT to_regclass($1) AS t', [set.table]);
  const done = new Set<number>();
  if (exists.rows[0]?.['t'] !== null && exists.rows[0]?.['t'] !== undefined) {
    for (const r of (await db.query(`SELECT version FROM ${set.table}`)).rows) done.add(Number(r['version']));
  }
  const unknown = unknownVersions(done, set);
  if (unknown.length > 0) throw new Error(`the database has ${set.product} migrations this release does not know (${unknown.join(', ')}); upgrade`);
  return set.migrations.map((m) => m.version).filter((v) => !done.has(v)).sort((a, b) => a - b);
}

function unknownVersions(done: ReadonlySet<number>, set: MigrationSet): number[] {
  const known = new Set(set.migrations.map((m) => m.version));
  return [...done].filter((v) => !known.has(v)).sort((a, b) => a - b);
}
