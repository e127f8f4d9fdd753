/**
 * A control plane on PostgreSQL whose commit fails (here: another appender took the log entry it
 * was about to write) stops writing and gives the lease up, so a standby takes over at once rather
 * than every instance answering 503 for a writer that refuses everything until a restart.
 */
import { createControlPlaneClient, verifyReceiptChain, type ControlPlaneClient } from '@vault/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPostgres } from '../../../../scripts/postgres.mjs';
import { migrateControlPlane } from '../../src/control-plane/postgres/log.js';
import type { RunningControlPlane } from '../../src/control-plane/run.js';
import { anotherInstance, PASSPHRASE, setup, sqlRows, until, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let db: Awaited<ReturnType<typeof startPostgres>>;
let h: Harness;
let b: { running: RunningControlPlane; client: ControlPlaneClient } | undefined;
const lostA: string[] = [];

const sql = (text: string, values: unknown[] = []) => sqlRows(db.url, text, values);

beforeAll(async () => {
  db = await startPostgres();
  await migrateControlPlane(db.url);
  // A's lease is long: within the wait below only a lease given up, not one run out, lets B in.
  h = await setup({ controlPlane: { database: { url: db.url, instanceId: 'a', leaseSeconds: 30, pollMs: 100, onLeaseLost: (r) => lostA.push(r) } } });
  await until('a to hold the lease', () => h.running.cp.database?.role === 'writer');
  const running = await anotherInstance(h, 'b', { url: db.url });
  const client = createControlPlaneClient({ baseUrl: running.url });
  await client.unlock(PASSPHRASE);
  b = { running, client };
});

afterAll(async () => {
  await b?.running.close().catch(() => undefined);
  await h?.close();
  await db?.stop();
});

describe('control plane on PostgreSQL: a failed commit', () => {
  it('the writer steps down and gives the lease up; a standby takes over and the chain goes on under the next token', async () => {
    const intent = (amount: string) => ({ wallet: 'ops', destination: h.dest(), amount, asset_decimals: 6, operation: { op: 'transfer' } }) as never;
    const first = (await h.client.createIntent(intent('5'))) as { intentId: string };
    // Another appender takes the entry A is about to write (with A's own token: the lease fence lets it through).
    const next = h.running.cp.store.appliedLogSeq + 1;
    await sql("INSERT INTO cp_log (seq, fence, at, batch) VALUES ($1, 1, 0, '{\"writes\":[],\"events\":[],\"meta\":null}')", [next]);
    await expect(h.client.createIntent(intent('6'))).rejects.toThrow();
    expect(h.running.cp.database?.role).toBe('standby');
    expect(lostA).toEqual(['commit_failed']);
    expect(h.running.cp.leaseLost).toBe('commit_failed');
    // The entry in the way carries no receipt-key signature: every replica refuses it (attack tests in
    // postgres-attacks.test.ts). An operator removes it; then the standby takes over.
    await sql('DELETE FROM cp_log WHERE seq = $1', [next]);
    const writer = await until('b to take over', () => b!.running.cp.database?.role === 'writer', 10_000);
    expect(writer).toBe(true);
    const after = (await b!.client.createIntent(intent('7'))) as { intentId: string };
    expect(await b!.client.intent(first.intentId)).toBeTruthy();
    expect(await b!.client.intent(after.intentId)).toBeTruthy();
    const records = (await sql('SELECT record FROM cp_receipts ORDER BY seq')).map((r) => r['record'] as { fence?: number });
    expect(records[0]?.fence).toBe(1);
    expect(records.at(-1)?.fence).toBe(2);
    const receipts = [...b!.running.cp.store.allReceipts()];
    expect(receipts).toEqual(records);
    expect(verifyReceiptChain(receipts, b!.running.cp.receiptSigner.publicKeyHex).verified).toBe(true);
  });
});
