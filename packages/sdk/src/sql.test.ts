/**
 * The migration runner (sql.ts) against a fake pool that knows exactly the statements the runner
 * may send and fails closed on any other, keeps a transaction's writes apart until COMMIT, and
 * records every query. The real-database coverage is in the server's store-postgres and
 * migrate-cli tests.
 */
import { describe, expect, it } from 'vitest';
import { applyMigrations, pendingMigrations, type Migration, type MigrationSet, type SqlPool } from './sql.js';

type Row = Record<string, unknown>;

/** One database with one migrations table, and the DDL of the migrations under test as its only other SQL. */
class FakeDatabase {
  /** Committed: whether the table exists, and the versions it records. */
  table: string | null = null;
  versions = new Map<number, { name: string; applied_at: number }>();
  /** DDL this database accepts (one migration's sql each); `fail` names one that errors. */
  readonly ddl = new Set<string>();
  fail: string | null = null;
  readonly queries: string[] = [];
  connects = 0;
  releases = 0;

  pool(): SqlPool {
    return {
      query: (text, values) => this.#run(null, text, values),
      connect: async () => {
        this.connects++;
        const tx: Tx = { open: false, table: null, versions: null, locked: false };
        return { query: (text, values) => this.#run(tx, text, values), release: () => void this.releases++ };
      },
      end: async () => undefined,
    };
  }

  async #run(tx: Tx | null, text: string, values: unknown[] = []): Promise<{ rows: Row[]; rowCount: number }> {
    this.queries.push(text);
    const ok = (rows: Row[] = []) => ({ rows, rowCount: rows.length });
    const table = tx?.open ? tx.table : this.table;
    const versions = tx?.open ? tx.versions! : this.versions;
    if (text === 'BEGIN' && tx && !tx.open) {
      Object.assign(tx, { open: true, table: this.table, versions: new Map(this.versions) });
      return ok();
    }
    if (text === 'COMMIT' && tx?.open) {
      this.table = tx.table;
      this.versions = tx.versions!;
      tx.open = false;
      return ok();
    }
    if (text === 'ROLLBACK' && tx?.open) {
      tx.open = false;
      return ok();
    }
    if (text === 'SELECT pg_advisory_xact_lock($1)' && tx?.open && typeof values[0] === 'number') {
      tx.locked = true;
      return ok();
    }
    if (text === 'SELECT to_regclass($1) AS t') return ok([{ t: values[0] === table ? values[0] : null }]);
    const create = /^CREATE TABLE IF NOT EXISTS ([a-z_0-9]+) \(version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL\)$/.exec(text);
    if (create && tx?.locked) {
      tx.table = create[1]!;
      return ok();
    }
    const select = /^SELECT version FROM ([a-z_0-9]+)$/.exec(text);
    if (select && select[1] === table) return ok([...versions.keys()].map((v) => ({ version: v })));
    const insert = /^INSERT INTO ([a-z_0-9]+) \(version, name, applied_at\) VALUES \(\$1, \$2, \$3\)$/.exec(text);
    if (insert && insert[1] === table && tx?.locked) {
      const [version, name, at] = values as [number, string, number];
      if (versions.has(version)) throw new Error(`duplicate key value violates unique constraint (version ${version})`);
      versions.set(version, { name, applied_at: at });
      return ok();
    }
    if (this.ddl.has(text) && tx?.locked) {
      if (text === this.fail) throw new Error(`syntax error in ${text}`);
      return ok();
    }
    throw new Error(`fake database: unexpected SQL ${JSON.stringify(text)}${tx?.open ? '' : ' (outside a transaction)'}`);
  }
}

interface Tx {
  open: boolean;
  table: string | null;
  versions: Map<number, { name: string; applied_at: number }> | null;
  locked: boolean;
}

function set(migrations: Migration[], table = 'demo_schema_migrations'): MigrationSet {
  return { product: 'demo', table, lockKey: 0x64656d6f, migrations };
}

function database(migrations: Migration[]): FakeDatabase {
  const db = new FakeDatabase();
  for (const m of migrations) db.ddl.add(m.sql);
  return db;
}

const m1: Migration = { version: 1, name: 'one', sql: 'CREATE TABLE one ()' };
const m2: Migration = { version: 2, name: 'two', sql: 'CREATE TABLE two ()' };
const m3: Migration = { version: 3, name: 'three', sql: 'CREATE TABLE three ()' };

describe('applyMigrations', () => {
  it('applies what is missing in version order, in one transaction under the advisory lock, then nothing', async () => {
    const db = database([m1, m2, m3]);
    // Declared out of order: applied by version.
    expect(await applyMigrations(db.pool(), set([m3, m1, m2]), () => 42)).toEqual([1, 2, 3]);
    expect(db.queries).toEqual([
      'BEGIN',
      'SELECT pg_advisory_xact_lock($1)',
      'CREATE TABLE IF NOT EXISTS demo_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)',
      'SELECT version FROM demo_schema_migrations',
      m1.sql,
      'INSERT INTO demo_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
      m2.sql,
      'INSERT INTO demo_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
      m3.sql,
      'INSERT INTO demo_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
      'COMMIT',
    ]);
    expect([...db.versions]).toEqual([
      [1, { name: 'one', applied_at: 42 }],
      [2, { name: 'two', applied_at: 42 }],
      [3, { name: 'three', applied_at: 42 }],
    ]);
    expect([db.connects, db.releases]).toEqual([1, 1]);
    db.queries.length = 0;
    expect(await applyMigrations(db.pool(), set([m1, m2, m3]))).toEqual([]);
    expect(db.queries).not.toContain(m1.sql);
    expect(db.queries.at(-1)).toBe('COMMIT');
    expect([db.connects, db.releases]).toEqual([2, 2]);
  });

  it('applies only the versions not yet recorded (a release that adds one)', async () => {
    const db = database([m1, m2, m3]);
    await applyMigrations(db.pool(), set([m1]));
    db.queries.length = 0;
    expect(await applyMigrations(db.pool(), set([m1, m2, m3]))).toEqual([2, 3]);
    expect(db.queries.filter((q) => db.ddl.has(q))).toEqual([m2.sql, m3.sql]);
  });

  it('a migration that fails rolls back the whole run: none of its versions is recorded, the client is released', async () => {
    const db = database([m1, m2, m3]);
    db.fail = m2.sql;
    await expect(applyMigrations(db.pool(), set([m1, m2, m3]))).rejects.toThrow(/syntax error/);
    expect(db.queries.at(-1)).toBe('ROLLBACK');
    expect(db.queries).not.toContain(m3.sql);
    expect(db.table).toBeNull();
    expect(db.versions.size).toBe(0);
    expect([db.connects, db.releases]).toEqual([1, 1]);
  });

  it('refuses a database that records a version this release does not know ("upgrade"), applying nothing', async () => {
    const db = database([m1, m2]);
    await applyMigrations(db.pool(), set([m1, m2]));
    db.queries.length = 0;
    await expect(applyMigrations(db.pool(), set([m1]))).rejects.toThrow('the database has demo migrations this release does not know (2); upgrade');
    expect(db.queries.at(-1)).toBe('ROLLBACK');
    expect(db.queries).not.toContain(m1.sql);
    expect([...db.versions.keys()]).toEqual([1, 2]);
  });

  it('refuses a table name that is not a plain lower-case identifier before it sends any SQL', async () => {
    for (const table of ['', 'Migrations', 'x; DROP TABLE cp_log', 'schema.table', '1migrations', `a${'b'.repeat(63)}`, 'naïve']) {
      const db = database([m1]);
      await expect(applyMigrations(db.pool(), set([m1], table))).rejects.toThrow(/is not a plain lower-case identifier/);
      await expect(pendingMigrations(db.pool(), set([m1], table))).rejects.toThrow(/is not a plain lower-case identifier/);
      expect([db.connects, db.queries]).toEqual([0, []]);
    }
  });

  it('refuses duplicate, zero, negative and non-integer versions before it sends any SQL', async () => {
    const cases: Migration[][] = [[m1, { ...m2, version: 1 }], [{ ...m1, version: 0 }], [{ ...m1, version: -1 }], [{ ...m1, version: 1.5 }], [{ ...m1, version: Number.NaN }], [{ ...m1, version: 2 ** 53 }]];
    for (const migrations of cases) {
      const db = database(migrations);
      await expect(applyMigrations(db.pool(), set(migrations))).rejects.toThrow(/is not a unique positive integer/);
      await expect(pendingMigrations(db.pool(), set(migrations))).rejects.toThrow(/is not a unique positive integer/);
      expect([db.connects, db.queries]).toEqual([0, []]);
    }
  });
});

describe('pendingMigrations', () => {
  it('lists every version of a database never migrated, in order, without creating anything', async () => {
    const db = database([m1, m2, m3]);
    expect(await pendingMigrations(db.pool(), set([m3, m1, m2]))).toEqual([1, 2, 3]);
    expect(db.queries).toEqual(['SELECT to_regclass($1) AS t']);
    expect(db.table).toBeNull();
  });

  it('lists what is missing, empty once current, and refuses a database ahead of this release', async () => {
    const db = database([m1, m2, m3]);
    await applyMigrations(db.pool(), set([m1]));
    expect(await pendingMigrations(db.pool(), set([m1, m2, m3]))).toEqual([2, 3]);
    await applyMigrations(db.pool(), set([m1, m2, m3]));
    expect(await pendingMigrations(db.pool(), set([m1, m2, m3]))).toEqual([]);
    await expect(pendingMigrations(db.pool(), set([m1, m3]))).rejects.toThrow('the database has demo migrations this release does not know (2); upgrade');
  });
});
