/**
 * `pnpm bench`: webhook events delivered per second to a local receiver (its own process, answering
 * 204 at once), durable (every outcome written to LMDB with fsync), beside a floor: the same bodies
 * POSTed to the same receiver over node:http keep-alive at the same concurrency, with no signing,
 * no ordering and no store. Two shapes: every event about a different intent (up to
 * `max_concurrency` in flight), and every event about one wallet (one at a time, in order). Bounded:
 * BENCH_WEBHOOK_EVENTS events (default 2000) per shape, at most 60 s each. Printed as a table.
 */
import { eventId, signWebhook, type VaultEvent } from '@vault/sdk';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bench, describe } from 'vitest';
import { initStateDir, startControlPlane } from '../run.js';
import { emptyState } from '../state.js';
import type { EventFeed } from './feed.js';

const EVENTS = Number(process.env['BENCH_WEBHOOK_EVENTS'] ?? 2000);
const LIMIT_MS = 60_000;
const CONCURRENCY = 16;
const PASS = 'bench passphrase 0123';

/** An in-memory log: what is measured is delivery, not the log. */
class MemoryFeed implements EventFeed {
  readonly events: VaultEvent[] = [];
  readonly #listeners = new Set<() => void>();
  head(): number {
    return this.events.length - 1;
  }
  after(seq: number, limit: number): VaultEvent[] {
    return this.events.slice(seq + 1, seq + 1 + limit);
  }
  onAppend(l: () => void): () => void {
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }
  append(subject: VaultEvent['subject']): void {
    const seq = this.events.length;
    this.events.push({ id: eventId(seq), seq, type: 'intent.status_changed', at: 1_767_225_600, subject, receipt: 'ab'.repeat(32), data: { status: 'confirmed', amount: '12.5', wallet: 'ops' } });
  }
  notify(): void {
    for (const l of this.#listeners) l();
  }
}

/** A receiver in its own process: 204 to every POST; GET /count answers how many it had. */
async function startReceiver(): Promise<{ url: string; count(): Promise<number>; stop(): void }> {
  const code = `
    const http = require('node:http'); let n = 0;
    const s = http.createServer((req, res) => { if (req.method === 'GET') { res.end(String(n)); return; } req.resume(); req.on('end', () => { n++; res.writeHead(204); res.end(); }); });
    s.keepAliveTimeout = 30000;
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  const p = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => p.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  const url = `http://127.0.0.1:${port}`;
  return { url: `${url}/hook`, count: async () => Number(await (await fetch(`${url}/count`)).text()), stop: () => p.kill() };
}

function fmt(n: number, d = 2): string {
  return Number.isFinite(n) ? n.toFixed(d) : '-';
}

const rows: Record<string, string>[] = [];
const rx = await startReceiver();

async function deliver(shape: 'distinct intents' | 'one wallet'): Promise<{ rate: number; delivered: number; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'vault-bench-wh-'));
  const base = emptyState();
  await initStateDir({ stateDir: dir, passphrase: PASS, scrypt: { N: 1024, r: 8, p: 1 }, state: { ...base, webhooks: { ...base.webhooks, allow_private: true, max_concurrency: CONCURRENCY } } });
  const feed = new MemoryFeed();
  const running = await startControlPlane({ stateDir: dir, events: feed });
  const unlock = await fetch(`${running.url}/session/unlock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ passphrase: PASS }) });
  const { token } = (await unlock.json()) as { token: string };
  const created = await fetch(`${running.url}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ url: rx.url }) });
  const { id } = (await created.json()) as { id: string };
  for (let i = 0; i < EVENTS; i++) feed.append(shape === 'one wallet' ? { wallet: 'ops' } : { intent: `int_${i}`, wallet: `w${i}` });
  const t0 = performance.now();
  feed.notify();
  const d = running.cp.webhooks.dispatcher;
  let delivered = 0;
  while (performance.now() - t0 < LIMIT_MS) {
    await d.settled();
    delivered = EVENTS - d.counts(id).pending;
    // Every event read and recorded delivered (the cursor reads in batches: wait for the last).
    if (delivered === EVENTS && d.deliveries(id, 1, 'pending').length === 0 && d.find(id, EVENTS - 1)?.state === 'delivered') break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = performance.now() - t0;
  const failed = d.deliveries(id, 1000, 'pending').filter((r) => r.attempt_count > 0).length;
  await running.close();
  rmSync(dir, { recursive: true, force: true });
  rows.push({ measure: `webhooks, ${shape} (durable, signed)`, 'events/s': fmt((delivered / ms) * 1000, 0), events: String(delivered), ms: fmt(ms, 0), note: `${failed} retried; ${shape === 'one wallet' ? 'one in flight (in order per subject)' : `up to ${CONCURRENCY} in flight`}` });
  return { rate: (delivered / ms) * 1000, delivered, ms };
}

/** The floor: the same bodies, the same receiver, the same concurrency, nothing else. */
async function floor(): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  const body = JSON.stringify({ id: eventId(1), seq: 1, type: 'intent.status_changed', at: 1_767_225_600, subject: { intent: 'int_1', wallet: 'w1' }, receipt: 'ab'.repeat(32), data: { status: 'confirmed', amount: '12.5', wallet: 'ops' } });
  const headers = { 'content-type': 'application/json', 'webhook-id': eventId(1), 'webhook-timestamp': '1767225600', 'webhook-signature': signWebhook({ secret, id: eventId(1), timestamp: 1_767_225_600, body }) };
  const u = new URL(rx.url);
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) {
        next += 1;
        await post();
      }
    }),
  );
  const ms = performance.now() - t0;
  agent.destroy();
  rows.push({ measure: 'floor: node:http keep-alive POSTs, same bodies and concurrency', 'events/s': fmt((EVENTS / ms) * 1000, 0), events: String(EVENTS), ms: fmt(ms, 0), note: 'no signing, ordering or store' });
  return (EVENTS / ms) * 1000;
}

const fl = await floor();
const distinct = await deliver('distinct intents');
const serial = await deliver('one wallet');
rows[1]!['note'] += `; ${fmt(distinct.rate / fl)} of the floor`;
rows[2]!['note'] += `; ${fmt(serial.rate / fl)} of the floor`;
rx.stop();

console.log('\nwebhook delivery bench figures');
console.table(rows);

describe('webhook signing', () => {
  const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
  const body = JSON.stringify({ id: eventId(1), data: { x: 'y'.repeat(500) } });
  bench('signWebhook (600-byte body)', () => {
    signWebhook({ secret, id: eventId(1), timestamp: 1_767_225_600, body });
  }, { time: 500 });
});
