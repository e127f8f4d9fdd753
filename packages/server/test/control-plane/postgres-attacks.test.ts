/**
 * Attacks on the control plane on PostgreSQL by someone who can write the database but holds no
 * receipt key (a stolen connection string, a compromised database host): what they put in the
 * shared log must not reach what a standby enforces.
 */
import { createControlPlaneClient } from '@vault/sdk';
import { cpSync, rmSync } from 'node:fs';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPostgres } from '../../../../scripts/postgres.mjs';
import { migrateControlPlane } from '../../src/control-plane/postgres/log.js';
import { startControlPlane, type RunningControlPlane } from '../../src/control-plane/run.js';
import { PASSPHRASE, setup, until, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let db: Awaited<ReturnType<typeof startPostgres>>;
let h: Harness;
const extra: RunningControlPlane[] = [];
const dirs: string[] = [];
const logs: string[] = [];

/** A copy of the writer's state directory as it is now (keys, state.json), without its replica. */
function snapshot(name: string): string {
  const dir = `${h.dir}-${name}`;
  cpSync(h.dir, dir, { recursive: true, filter: (src) => !src.endsWith('serve.lock') && !src.includes('/replica') });
  dirs.push(dir);
  return dir;
}

async function standby(name: string, dir = snapshot(name)): Promise<RunningControlPlane> {
  const running = await startControlPlane({
    stateDir: dir,
    drivers: [h.driver],
    now: () => h.clock.now,
    expirySweepMs: 0,
    database: { url: db.url, instanceId: name, leaseSeconds: 2, pollMs: 100 },
    log: (l) => logs.push(`[${name}] ${l}`),
  });
  extra.push(running);
  return running;
}

async function sql<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  db = await startPostgres();
  await migrateControlPlane(db.url);
  h = await setup({ controlPlane: { database: { url: db.url, instanceId: 'w', leaseSeconds: 2, pollMs: 100 } } });
  await until('w to hold the lease', () => h.running.cp.database?.role === 'writer');
});

afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.error([...logs, ...h.logs.filter((l) => !l.includes('"method"'))].join('\n'));
  logs.length = 0;
});

afterAll(async () => {
  for (const r of extra) await r.close().catch(() => undefined);
  await h?.close().catch(() => undefined);
  await db?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('attacks through the database', () => {
  it('attack: a state.json appended to the log without a receipt is not adopted by a standby', async () => {
    const b = await standby('forge-state');
    await until('the standby to catch up', () => b.cp.store.appliedLogSeq === h.running.cp.store.appliedLogSeq);
    const at = b.cp.store.appliedLogSeq;
    // The attacker pairs an approver of their own and un-revokes nothing: a whole new state text.
    const state = JSON.parse(b.cp.store.sharedState ?? JSON.stringify(h.running.cp.state));
    const forged = { ...state, devices: [...state.devices, { id: 'mallory', role: 'approver', label: 'mallory', public_key: 'ab'.repeat(32), paired_at: h.clock.now, revoked_at: null }] };
    const text = `${JSON.stringify(forged, null, 2)}\n`;
    try {
      await sql(async (c) => {
        await c.query('INSERT INTO cp_log (seq, fence, at, batch) VALUES ($1, 1, 0, $2)', [at + 1, JSON.stringify({ writes: [], events: [], meta: null, state: text })]);
        await c.query("SELECT pg_notify('cp_log', $1)", [String(at + 1)]);
      });
      await until('the refusal to be logged', () => logs.some((l) => l.startsWith('[forge-state]') && l.includes('replica_apply_failed') && l.includes(`log entry ${at + 1} refused`)));
      expect(b.cp.store.appliedLogSeq).toBe(at);
      expect(b.cp.state.devices.map((d) => d.id)).not.toContain('mallory');
      // An instance started now stops at the entry rather than take its state.json.
      await expect(standby('forge-state-late')).rejects.toThrow(/log entry \d+ refused/);
    } finally {
      await sql((c) => c.query('DELETE FROM cp_log WHERE seq = $1', [at + 1]));
      await b.close();
    }
  });

  it('attack: a log entry without receipts (a known destination, a confirmed intent, a forged event) is refused by a standby', async () => {
    const b = await standby('forge-plain');
    const created = (await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '11', asset_decimals: 6, operation: { op: 'transfer' } } as never)) as { intentId: string };
    // Both: the replica's position is readable a moment before its event count moves.
    await until('the standby to catch up', () => b.cp.store.appliedLogSeq === h.running.cp.store.appliedLogSeq && b.cp.store.lastEventSeq === h.running.cp.store.lastEventSeq);
    const at = b.cp.store.appliedLogSeq;
    const record = b.cp.store.get(created.intentId)!;
    const attackerDest = h.dest();
    // No receipt to forge: only records, a known destination (it relaxes new-destination rules) and an event webhooks would sign and send.
    const lastEvent = b.cp.store.lastEventSeq;
    const batch = {
      writes: [{ record: { ...record, status: 'confirmed', updated_at: record.updated_at + 1 }, receipt: null, extra: { known: ['ops', attackerDest] } }],
      events: [{ id: `evt_${String(lastEvent + 1).padStart(12, '0')}`, seq: lastEvent + 1, type: 'intent.confirmed', at: h.clock.now, subject: { intent: created.intentId, wallet: 'ops' }, actor: 'system', receipt: 'ab'.repeat(32), data: { txHash: 'FORGED' } }],
      meta: null,
    };
    try {
      await sql(async (c) => {
        await c.query('INSERT INTO cp_log (seq, fence, at, batch) VALUES ($1, 1, 0, $2)', [at + 1, JSON.stringify(batch)]);
        await c.query("SELECT pg_notify('cp_log', $1)", [String(at + 1)]);
      });
      await until('the refusal to be logged', () => logs.some((l) => l.startsWith('[forge-plain]') && l.includes('replica_apply_failed') && l.includes(`log entry ${at + 1} refused`)));
      expect(b.cp.store.appliedLogSeq).toBe(at);
      expect(b.cp.store.isKnown('ops', attackerDest)).toBe(false);
      expect(b.cp.store.get(created.intentId)?.status).toBe(record.status);
      expect(b.cp.store.lastEventSeq).toBe(lastEvent);
    } finally {
      await sql((c) => c.query('DELETE FROM cp_log WHERE seq = $1', [at + 1]));
      await b.close();
    }
  });

  it('an instance name or advertised URL out of bounds is refused at start, naming the field', async () => {
    const dir = snapshot('bounds');
    const open = (database: Record<string, unknown>) => startControlPlane({ stateDir: dir, drivers: [h.driver], now: () => h.clock.now, expirySweepMs: 0, database: { url: db.url, leaseSeconds: 2, ...database } });
    await expect(open({ instanceId: 'x'.repeat(10_000) })).rejects.toThrow(/instanceId/);
    await expect(open({ instanceId: 'a\nb' })).rejects.toThrow(/instanceId/);
    await expect(open({ instanceId: 'ok', advertiseUrl: 'javascript:alert(1)' })).rejects.toThrow(/advertiseUrl/);
    await expect(open({ instanceId: 'ok', advertiseUrl: 'http://user:pw@writer.example' })).rejects.toThrow(/advertiseUrl/);
    await expect(open({ instanceId: 'ok', advertiseUrl: `https://writer.example/${'a'.repeat(3000)}` })).rejects.toThrow(/advertiseUrl/);
  });

  it('attack: a state change stripped from its log entry (a revocation hidden from standbys) is refused', async () => {
    const before = snapshot('strip');
    const at = h.running.cp.store.appliedLogSeq;
    await h.running.cp.revokeDevice('carol');
    const entry = at + 1;
    const original = await sql(async (c) => (await c.query('SELECT batch FROM cp_log WHERE seq = $1', [entry])).rows[0]?.batch as string | undefined);
    expect(original && JSON.parse(original).state).toBeDefined();
    const batch = JSON.parse(original!);
    delete batch.state;
    try {
      await sql((c) => c.query('UPDATE cp_log SET batch = $2 WHERE seq = $1', [entry, JSON.stringify(batch)]));
      await expect(standby('strip', before)).rejects.toThrow(new RegExp(`log entry ${entry} refused`));
    } finally {
      await sql((c) => c.query('UPDATE cp_log SET batch = $2 WHERE seq = $1', [entry, original]));
    }
    const b = await standby('strip-restored', before);
    expect(b.cp.state.devices.find((d) => d.id === 'carol')?.revoked_at).not.toBeNull();
    await b.close();
  });
  it('a standby reads an intent past its time to live as stored: no 503, no write', async () => {
    const b = await standby('reader');
    const created = (await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '12', asset_decimals: 6, operation: { op: 'transfer' } } as never)) as { intentId: string };
    await until('the standby to catch up', () => b.cp.store.appliedLogSeq === h.running.cp.store.appliedLogSeq);
    const seq = b.cp.store.appliedLogSeq;
    const stored = b.cp.store.get(created.intentId)!;
    const saved = h.clock.now;
    h.clock.now = saved + 8 * 24 * 3600;
    try {
      const client = createControlPlaneClient({ baseUrl: b.url });
      await client.unlock(PASSPHRASE);
      const read = (await client.intent(created.intentId)) as { status: string };
      expect(read.status).toBe(stored.status);
      expect(b.cp.store.appliedLogSeq).toBe(seq);
    } finally {
      h.clock.now = saved;
      await b.close();
    }
  });

  it('a reload shares its state.json in the same log entry as its state.reloaded receipt (no crash between)', async () => {
    const at = h.running.cp.store.appliedLogSeq;
    await h.running.cp.reload();
    const rows = await sql(async (c) => (await c.query('SELECT batch FROM cp_log WHERE seq > $1 ORDER BY seq', [at])).rows.map((r) => JSON.parse(r.batch as string) as { state?: string; writes: { receipt: { kind: string } | null }[] }));
    const reloaded = rows.filter((b) => b.writes.some((w) => w.receipt?.kind === 'state.reloaded'));
    expect(reloaded).toHaveLength(1);
    expect(reloaded[0]!.state).toBeDefined();
  });

  // Last: it stops the writer for good.
  it('attack: a writer address planted in the lease row is not handed to clients unless it is a plain http(s) URL', async () => {
    const b = await standby('planted');
    await until('b to learn where the writer is', () => b.cp.database?.writerUrl === h.url);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      // The database's holder keeps the lease live under a name of its own and points clients elsewhere.
      // The row is locked first, so neither the writer's release nor b's takeover comes in between.
      await c.query('BEGIN');
      await c.query("SELECT 1 FROM cp_lease WHERE name = 'writer' FOR UPDATE");
      const closing = h.running.close();
      await c.query("UPDATE cp_lease SET holder = 'ghost', token = token + 1, expires_at = now() + interval '1 hour' WHERE name = 'writer'");
      await c.query('COMMIT');
      await closing;
      for (const url of ['javascript:alert(1)', `https://evil.example/${'a'.repeat(100_000)}`, 'https://user:pw@evil.example']) {
        await c.query("UPDATE cp_lease SET url = $1 WHERE name = 'writer'", [url]);
        // b reads the lease at each of its ticks (four per lease).
        await new Promise((r) => setTimeout(r, 1200));
        expect(b.cp.database?.role).toBe('standby');
        expect(b.cp.database?.writerUrl).toBeNull();
        const text = await (await fetch(`${b.url}/ready?role=writer`)).text();
        expect(text).not.toContain('evil.example');
        expect(text).not.toContain('javascript');
      }
    } finally {
      await c.end();
      await b.close();
    }
  });
});
