/**
 * Webhooks over real sockets: the control plane on loopback, receivers on loopback, events from a
 * file-backed feed (fixtures/file-feed.ts). Receivers check signatures with the `standardwebhooks`
 * package, an implementation we did not write.
 */
import { verifyWebhook, type VaultEvent } from '@vault/sdk';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { initStateDir, startControlPlane, type RunningControlPlane } from '../../src/control-plane/run.js';
import { emptyState, type StateFile } from '../../src/control-plane/state.js';
import type { WebhooksConfig } from '../../src/control-plane/webhooks/config.js';
import type { Resolver } from '../../src/control-plane/webhooks/send.js';
import { FileFeed } from './fixtures/file-feed.js';
import { FAST_SCRYPT, PASSPHRASE } from './helpers.js';

interface Hit {
  headers: IncomingHttpHeaders;
  body: string;
  /** Order of arrival. */
  n: number;
}

interface Receiver {
  url: string;
  hits: Hit[];
  /** Status to answer each request with (default 200). */
  answer: (h: Hit) => number | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };
  inflight: number;
  maxInflight: number;
  close(): Promise<void>;
}

const servers: Server[] = [];

async function receiver(answer: Receiver['answer'] = () => 200): Promise<Receiver> {
  const r: Receiver = { url: '', hits: [], answer, inflight: 0, maxInflight: 0, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.inflight += 1;
      r.maxInflight = Math.max(r.maxInflight, r.inflight);
      const hit: Hit = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), n: r.hits.length };
      r.hits.push(hit);
      const a = r.answer(hit);
      const spec = typeof a === 'number' ? { status: a } : a;
      setTimeout(() => {
        r.inflight -= 1;
        res.writeHead(spec.status, spec.headers ?? {});
        res.end(spec.body ?? '');
      }, spec.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}

interface Ctx {
  dir: string;
  feed: FileFeed;
  clock: { now: number };
  logs: string[];
  running: RunningControlPlane;
  token: string;
  start(): Promise<void>;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }>;
  /** Advances the clock by `step` seconds and looks again, until `cond` holds. */
  until(cond: () => boolean, step?: number, what?: string): Promise<void>;
}

const contexts: Ctx[] = [];

async function setup(opts: { webhooks?: Partial<WebhooksConfig>; resolve?: Resolver; retry?: { baseSeconds?: number; capSeconds?: number } } = {}): Promise<Ctx> {
  const dir = mkdtempSync(join(tmpdir(), 'vault-wh-'));
  // The real time: standardwebhooks checks webhook-timestamp against the system clock (5 min).
  const clock = { now: Math.floor(Date.now() / 1000) };
  const base = emptyState();
  const state: StateFile = { ...base, webhooks: { ...base.webhooks, ...opts.webhooks } };
  await initStateDir({ stateDir: dir, passphrase: PASSPHRASE, scrypt: FAST_SCRYPT, state });
  const feedPath = join(dir, 'events.jsonl');
  let unlockedAt = 0;
  const unlock = async () => {
    const r = await fetch(`${ctx.running.url}/session/unlock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ passphrase: PASSPHRASE }) });
    ctx.token = ((await r.json()) as { token: string }).token;
    unlockedAt = clock.now;
  };
  const ctx: Ctx = {
    dir,
    feed: new FileFeed(feedPath, () => clock.now),
    clock,
    logs: [],
    running: undefined as unknown as RunningControlPlane,
    token: '',
    async start() {
      // A fresh feed over the same file: what a restart of the real log reads back.
      ctx.feed = new FileFeed(feedPath, () => clock.now);
      ctx.running = await startControlPlane({
        stateDir: dir,
        now: () => clock.now,
        log: (l) => ctx.logs.push(l),
        accessLog: true,
        events: ctx.feed,
        ...(opts.resolve ? { webhookResolver: opts.resolve } : {}),
        ...(opts.retry ? { webhookRetry: opts.retry } : {}),
      });
      await unlock();
    },
    async api(method, path, body) {
      // Tests move the clock by hours: a session that expired meanwhile is opened again.
      if (ctx.clock.now - unlockedAt > 600) await unlock();
      const res = await fetch(`${ctx.running.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ctx.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed, text };
    },
    async until(cond, step = 0, what = 'condition') {
      const deadline = Date.now() + 15_000;
      while (!cond()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        clock.now += step;
        ctx.running.cp.webhooks.kick();
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
  await ctx.start();
  contexts.push(ctx);
  return ctx;
}

afterEach(async () => {
  for (const c of contexts.splice(0)) {
    await c.running.close().catch(() => undefined);
    rmSync(c.dir, { recursive: true, force: true });
  }
  for (const s of servers.splice(0)) s.closeAllConnections?.(), s.close();
});

const ALLOW_LOOPBACK = { allow_private: true };

async function create(ctx: Ctx, url: string, extra: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const r = await ctx.api('POST', '/webhooks', { url, ...extra });
  expect(r.status, r.text).toBe(200);
  return r.body as { id: string; secret: string };
}

function verifiedWithStandardWebhooks(secret: string, hit: Hit): unknown {
  const h: Record<string, string> = {};
  for (const k of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) h[k] = String(hit.headers[k]);
  return new Webhook(secret).verify(hit.body, h);
}

describe('webhook endpoints', () => {
  it('creates an endpoint: the secret is shown once, never listed or logged, sealed at rest', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    const rx = await receiver();
    const created = await create(ctx, rx.url, { types: ['intent.*'], description: 'ops pager' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    expect(created.id).toMatch(/^wh_[0-9a-f]{24}$/);

    const list = await ctx.api('GET', '/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.webhooks).toEqual([{ id: created.id, url: rx.url, types: ['intent.*'], description: 'ops pager', created_at: ctx.clock.now, pending: 0, dead_letters: 0 }]);
    const key = created.secret.slice(6);
    expect(list.text).not.toContain(key);
    expect(list.text).not.toContain('secret');

    // At rest: state.json holds it sealed; the key file is 0600.
    const stateText = readFileSync(join(ctx.dir, 'state.json'), 'utf8');
    expect(stateText).not.toContain(key);
    expect(JSON.parse(stateText).webhooks.endpoints[0].secret).toMatch(/^v1\./);
    expect(statSync(join(ctx.dir, 'webhooks.key')).mode & 0o777).toBe(0o600);
    // The change has its receipt.
    const ledger = await ctx.api('GET', '/ledger/recent?limit=5');
    expect(ledger.body.receipts[0].kind).toBe('webhook.created');

    // Deliveries are signed with it, and it survives a restart (unsealed with the key file).
    await ctx.running.close();
    await ctx.start();
    ctx.feed.append({ type: 'intent.created', subject: { intent: 'int_a', wallet: 'ops' } });
    await ctx.until(() => rx.hits.length === 1, 0, 'delivery');
    expect(() => verifiedWithStandardWebhooks(created.secret, rx.hits[0]!)).not.toThrow();
    expect(ctx.logs.join('\n')).not.toContain(key);
    expect(ctx.logs.join('\n')).not.toContain(rx.url);
  });

  it('deletes an endpoint: no further deliveries, its records gone, 404 after', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    const rx = await receiver();
    const { id } = await create(ctx, rx.url);
    ctx.feed.append({ type: 'wallet.updated', subject: { wallet: 'ops' } });
    await ctx.until(() => rx.hits.length === 1, 0, 'delivery');
    expect((await ctx.api('DELETE', `/webhooks/${id}`)).body).toEqual({ id, deleted: true });
    ctx.feed.append({ type: 'wallet.updated', subject: { wallet: 'ops' } });
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.hits).toHaveLength(1);
    expect((await ctx.api('GET', '/webhooks')).body.webhooks).toEqual([]);
    expect((await ctx.api('GET', `/webhooks/${id}/deliveries`)).status).toBe(404);
    expect((await ctx.api('DELETE', `/webhooks/${id}`)).status).toBe(404);
  });

  it('refuses bad input with a 400 naming the field, unknown ids with 404, and needs a session', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    const rx = await receiver();
    const bad: [unknown, string][] = [
      [{ url: 'ftp://example.com/x' }, 'url'],
      [{ url: 'file:///etc/passwd' }, 'url'],
      [{ url: 'http://user:pw@example.com/' }, 'url'],
      [{ url: 'http://example.com/#frag' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: `http://example.com/${'a'.repeat(2100)}` }, 'url'],
      [{ url: rx.url, types: ['Intent.Created'] }, 'types.0'],
      [{ url: rx.url, types: 'intent.created' }, 'types'],
      [{ url: rx.url, secret: 'whsec_mine' }, ''],
      [{}, 'url'],
    ];
    for (const [body, path] of bad) {
      const r = await ctx.api('POST', '/webhooks', body);
      expect([JSON.stringify(body).slice(0, 60), r.status]).toEqual([JSON.stringify(body).slice(0, 60), 400]);
      expect(JSON.stringify(r.body.error.data)).toContain(path);
    }
    expect((await ctx.api('GET', '/webhooks')).body.webhooks).toEqual([]);
    const { id } = await create(ctx, rx.url);
    expect((await ctx.api('GET', '/webhooks/wh_nope/deliveries')).status).toBe(400);
    expect((await ctx.api('GET', `/webhooks/wh_${'0'.repeat(24)}/deliveries`)).status).toBe(404);
    expect((await ctx.api('GET', `/webhooks/${id}/deliveries?state=lost`)).status).toBe(400);
    expect((await ctx.api('GET', `/webhooks/${id}/deliveries?limit=0`)).status).toBe(400);
    expect((await ctx.api('POST', `/webhooks/${id}/deliveries/evt_1/resend`)).status).toBe(400);
    expect((await ctx.api('POST', `/webhooks/${id}/deliveries/evt_0000000000000099/resend`)).status).toBe(404);
    const anon = await fetch(`${ctx.running.url}/webhooks`);
    expect(anon.status).toBe(401);
  });
});

describe('webhook delivery', () => {
  it('a receiver that fails N times then succeeds gets every event, in order per subject, each signed (standardwebhooks)', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    const N = 3;
    const failures = new Map<string, number>();
    // Each event fails N times before it is accepted.
    const rx = await receiver((h) => {
      const id = String(h.headers['webhook-id']);
      const seen = failures.get(id) ?? 0;
      failures.set(id, seen + 1);
      return seen < N ? 503 : 204;
    });
    const { id: hook, secret } = await create(ctx, rx.url);
    const subjects = [{ intent: 'int_a', wallet: 'w1' }, { intent: 'int_b', wallet: 'w2' }, { device: 'dev_1' }];
    const sent: VaultEvent[] = [];
    for (let i = 0; i < 9; i++) sent.push(ctx.feed.append({ type: 'intent.status_changed', subject: subjects[i % 3]!, data: { i } }));
    // Back-off is 5 s doubling with jitter: moving the clock 7 s a step reaches every retry.
    await ctx.until(() => new Set(rx.hits.filter((h) => failures.get(String(h.headers['webhook-id']))! > N).map((h) => h.headers['webhook-id'])).size === 9, 7, 'all events accepted');

    const accepted = new Map<string, Hit>();
    for (const h of rx.hits) {
      // Every attempt carries a valid signature, checked by an implementation we did not write.
      const payload = verifiedWithStandardWebhooks(secret, h) as { id: string };
      expect(payload.id).toBe(h.headers['webhook-id']);
      expect(verifyWebhook({ secret, headers: h.headers, body: h.body, now: ctx.clock.now, tolerance: 600 }).valid).toBe(true);
    }
    for (const h of rx.hits) {
      const id = String(h.headers['webhook-id']);
      const attemptsBefore = rx.hits.filter((x) => x.n <= h.n && x.headers['webhook-id'] === id).length;
      if (attemptsBefore === N + 1) accepted.set(id, h);
    }
    expect([...accepted.keys()].sort()).toEqual(sent.map((e) => e.id).sort());
    // Retries reuse the id and the exact body.
    for (const e of sent) {
      const attempts = rx.hits.filter((h) => h.headers['webhook-id'] === e.id);
      expect(attempts).toHaveLength(N + 1);
      expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
      expect(JSON.parse(attempts[0]!.body)).toEqual(e);
    }
    // In order per subject: no attempt of a later event of a subject before the earlier one was accepted.
    for (const s of subjects) {
      const events = sent.filter((e) => JSON.stringify(e.subject) === JSON.stringify(s));
      for (let k = 1; k < events.length; k++) {
        const firstOfLater = rx.hits.find((h) => h.headers['webhook-id'] === events[k]!.id)!;
        expect(firstOfLater.n).toBeGreaterThan(accepted.get(events[k - 1]!.id)!.n);
      }
    }
    await ctx.until(() => ctx.running.cp.webhooks.dispatcher.counts(hook).pending === 0, 0, 'outcomes recorded');
    // The deliveries view shows each attempt with its status and the schedule.
    const d = await ctx.api('GET', `/webhooks/${hook}/deliveries`);
    expect(d.body.deliveries).toHaveLength(9);
    for (const x of d.body.deliveries) {
      expect(x).toMatchObject({ state: 'delivered', attempt_count: N + 1, next_attempt_at: null });
      expect(x.attempts.map((a: { status: number }) => a.status)).toEqual([503, 503, 503, 204]);
    }
  });

  it('a later event for the same wallet waits while an earlier one is retried; other subjects go on', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    let failing = true;
    const rx = await receiver((h) => (failing && JSON.parse(h.body).data.first ? 500 : 200));
    await create(ctx, rx.url);
    const first = ctx.feed.append({ type: 'intent.created', subject: { intent: 'int_1', wallet: 'ops' }, data: { first: true } });
    const sameWallet = ctx.feed.append({ type: 'wallet.updated', subject: { wallet: 'ops' } });
    const other = ctx.feed.append({ type: 'device.revoked', subject: { device: 'dev_9' } });
    await ctx.until(() => rx.hits.some((h) => h.headers['webhook-id'] === other.id) && rx.hits.length >= 2, 0, 'the other subject');
    await new Promise((r) => setTimeout(r, 50));
    expect(rx.hits.map((h) => h.headers['webhook-id'])).not.toContain(sameWallet.id);
    failing = false;
    await ctx.until(() => rx.hits.some((h) => h.headers['webhook-id'] === sameWallet.id), 7, 'the held event');
    const order = rx.hits.map((h) => h.headers['webhook-id']);
    expect(order.lastIndexOf(first.id)).toBeLessThan(order.indexOf(sameWallet.id));
  });

  it('filters by event type (exact and family)', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    const rx = await receiver();
    await create(ctx, rx.url, { types: ['device.revoked', 'intent.*'] });
    ctx.feed.append({ type: 'device.paired', subject: { device: 'd1' } });
    const a = ctx.feed.append({ type: 'device.revoked', subject: { device: 'd1' } });
    const b = ctx.feed.append({ type: 'intent.confirmed', subject: { intent: 'i1' } });
    ctx.feed.append({ type: 'config.changed', subject: { wallet: 'ops' } });
    const c = ctx.feed.append({ type: 'intent.created', subject: { intent: 'i2' } });
    await ctx.until(() => rx.hits.length >= 3, 0, 'deliveries');
    await new Promise((r) => setTimeout(r, 50));
    expect(rx.hits.map((h) => h.headers['webhook-id']).sort()).toEqual([a.id, b.id, c.id]);
  });

  it('starts after the events that existed when the endpoint was created', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    const rx = await receiver();
    ctx.feed.append({ type: 'intent.created', subject: { intent: 'old' } });
    await create(ctx, rx.url);
    const fresh = ctx.feed.append({ type: 'intent.created', subject: { intent: 'new' } });
    await ctx.until(() => rx.hits.length >= 1, 0, 'delivery');
    await new Promise((r) => setTimeout(r, 50));
    expect(rx.hits.map((h) => h.headers['webhook-id'])).toEqual([fresh.id]);
  });

  it('dead-letters after the retry horizon; resend sends it again with the same webhook-id', async () => {
    const ctx = await setup({ webhooks: { ...ALLOW_LOOPBACK, retry_horizon_seconds: 3600 } });
    let up = false;
    const rx = await receiver(() => (up ? 200 : 500));
    const { id: hook, secret } = await create(ctx, rx.url);
    const e = ctx.feed.append({ type: 'intent.failed', subject: { intent: 'int_x' } });
    const t0 = ctx.clock.now;
    // Steps of 10 minutes: the back-off (capped at 1 h) reaches the horizon in a few steps.
    await ctx.until(() => ctx.logs.some((l) => l.includes('webhook_dead_letter')), 600, 'dead letter');
    const dead = await ctx.api('GET', `/webhooks/${hook}/deliveries?state=dead`);
    expect(dead.status, dead.text).toBe(200);
    expect(dead.body.deliveries).toHaveLength(1);
    const d = dead.body.deliveries[0];
    expect(d).toMatchObject({ id: e.id, state: 'dead', next_attempt_at: null });
    // The last attempt was at or after the horizon, none after it was declared dead.
    expect(d.attempts.at(-1).at).toBeGreaterThanOrEqual(t0 + 3600);
    expect(d.attempts.every((a: { status: number; error: string }) => a.status === 500 && a.error === 'http_status')).toBe(true);
    const hitsAtDeath = rx.hits.length;
    expect(hitsAtDeath).toBe(d.attempt_count);
    ctx.clock.now += 86_400;
    ctx.running.cp.webhooks.kick();
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.hits).toHaveLength(hitsAtDeath);
    expect((await ctx.api('GET', '/webhooks')).body.webhooks[0]).toMatchObject({ pending: 0, dead_letters: 1 });

    // A dead letter does not hold back later events of its subject.
    const later = ctx.feed.append({ type: 'intent.failed', subject: { intent: 'int_x' } });
    up = true;
    await ctx.until(() => rx.hits.some((h) => h.headers['webhook-id'] === later.id), 0, 'later event');

    const resent = await ctx.api('POST', `/webhooks/${hook}/deliveries/${e.id}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ id: e.id, state: 'pending', resend: true });
    await ctx.until(() => rx.hits.filter((h) => h.headers['webhook-id'] === e.id).length === hitsAtDeath + 1, 0, 'resend');
    const last = rx.hits.at(-1)!;
    expect(last.headers['webhook-id']).toBe(e.id);
    expect(verifyWebhook({ secret, headers: last.headers, body: last.body, now: ctx.clock.now }).valid).toBe(true);
    await ctx.until(() => ctx.running.cp.webhooks.dispatcher.counts(hook).pending === 0, 0, 'resend recorded');
    const again = (await ctx.api('GET', `/webhooks/${hook}/deliveries`)).body.deliveries.find((x: { id: string }) => x.id === e.id);
    expect(again).toMatchObject({ state: 'delivered', resend: true, attempt_count: hitsAtDeath + 1 });
    expect((await ctx.api('GET', '/webhooks')).body.webhooks[0]).toMatchObject({ dead_letters: 0 });
  });

  it('a restart resumes delivery with the same webhook-ids', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    let up = false;
    const rx = await receiver(() => (up ? 200 : 503));
    const { id: hook, secret } = await create(ctx, rx.url);
    const sent: VaultEvent[] = [];
    for (let i = 0; i < 5; i++) sent.push(ctx.feed.append({ type: 'intent.created', subject: { intent: `int_${i}` } }));
    // Each first attempt answered and recorded (an attempt cut off by the shutdown would simply be sent again).
    await ctx.until(() => sent.every((e) => (ctx.running.cp.webhooks.dispatcher.find(hook, e.seq)?.attempt_count ?? 0) >= 1), 0, 'first attempts');
    const before = new Set(rx.hits.map((h) => String(h.headers['webhook-id'])));
    await ctx.running.close();
    // Appended while the control plane is down: read from the log after the restart.
    const whileDown = ctx.feed.append({ type: 'intent.created', subject: { intent: 'int_down' } });
    up = true;
    const mark = rx.hits.length;
    await ctx.start();
    const accepted = () => new Set(rx.hits.slice(mark).map((h) => String(h.headers['webhook-id'])));
    await ctx.until(() => accepted().size === 6, 7, 'resumed deliveries');
    expect([...before].sort()).toEqual(sent.map((e) => e.id).sort());
    expect([...accepted()].sort()).toEqual([...sent, whileDown].map((e) => e.id).sort());
    for (const h of rx.hits) expect(() => verifiedWithStandardWebhooks(secret, h)).not.toThrow();
    await ctx.until(() => ctx.running.cp.webhooks.dispatcher.counts(hook).pending === 0, 0, 'all recorded');
    const d = (await ctx.api('GET', `/webhooks/${hook}/deliveries`)).body.deliveries;
    expect(d.map((x: { id: string }) => x.id).sort()).toEqual([...sent, whileDown].map((e) => e.id).sort());
    // The ones attempted before the restart keep their history: the failed attempt, then the success.
    for (const x of d.filter((y: { id: string }) => y.id !== whileDown.id)) expect(x.attempts.map((a: { status: number }) => a.status)).toEqual([503, 200]);
  });

  it('bounds concurrency, cuts off a slow receiver at the timeout, and keeps only an excerpt of a response', async () => {
    const ctx = await setup({ webhooks: { ...ALLOW_LOOPBACK, max_concurrency: 2, attempt_timeout_seconds: 1 } });
    const rx = await receiver((h) => {
      const i = JSON.parse(h.body).data.i as number;
      if (i === 0) return { status: 200, delayMs: 3000 };
      return { status: 500, body: 'x'.repeat(100_000), delayMs: 100 };
    });
    const { id } = await create(ctx, rx.url);
    for (let i = 0; i < 6; i++) ctx.feed.append({ type: 'intent.created', subject: { intent: `int_${i}` }, data: { i } });
    await ctx.until(() => rx.hits.length >= 6, 0, 'first attempts');
    expect(rx.maxInflight).toBeLessThanOrEqual(2);
    await ctx.until(() => ctx.running.cp.webhooks.dispatcher.find(id, 0)!.attempt_count >= 1, 0, 'the slow attempt recorded');
    const d = (await ctx.api('GET', `/webhooks/${id}/deliveries`)).body.deliveries as { id: string; attempts: { status: number | null; error: string; excerpt: string | null }[] }[];
    const slow = d.find((x) => x.id === 'evt_0000000000000000')!;
    expect(slow.attempts[0]).toMatchObject({ status: null, error: 'timeout' });
    const big = d.find((x) => x.id === 'evt_0000000000000001')!;
    expect(big.attempts[0]!.status).toBe(500);
    expect(big.attempts[0]!.excerpt!.length).toBeLessThanOrEqual(256);
  });

  it('a log that refuses a read or answers out of order skips nothing: delivery waits, and resumes with the next append', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    const rx = await receiver();
    const { id } = await create(ctx, rx.url);
    const first = ctx.feed.append({ type: 'intent.created', subject: { intent: 'a' } });
    await ctx.until(() => rx.hits.length === 1, 0, 'first delivery');
    // The log misbehaves: a refused read, then a page that goes backwards.
    const realAfter = ctx.feed.after.bind(ctx.feed);
    let mode: 'throw' | 'backwards' | 'ok' = 'throw';
    ctx.feed.after = (seq: number, limit: number) => {
      if (mode === 'throw') throw new RangeError('log unavailable');
      if (mode === 'backwards') return realAfter(seq - 1, limit);
      return realAfter(seq, limit);
    };
    const second = ctx.feed.append({ type: 'intent.created', subject: { intent: 'b' } });
    await ctx.until(() => ctx.logs.some((l) => l.includes('webhook_feed_failed')), 0, 'the refused read');
    expect(rx.hits).toHaveLength(1);
    mode = 'ok';
    const third = ctx.feed.append({ type: 'intent.created', subject: { intent: 'c' } });
    await ctx.until(() => rx.hits.length === 3, 0, 'the rest');
    expect(rx.hits.map((h) => h.headers['webhook-id'])).toEqual([first.id, second.id, third.id]);
    // A page that goes backwards stops this endpoint's reading (logged) rather than guessing.
    mode = 'backwards';
    ctx.feed.append({ type: 'intent.created', subject: { intent: 'd' } });
    await ctx.until(() => ctx.logs.some((l) => l.includes('webhook_feed_out_of_order')), 0, 'the out-of-order page');
    await new Promise((r) => setTimeout(r, 50));
    expect(rx.hits).toHaveLength(3);
    expect(ctx.running.cp.webhooks.dispatcher.counts(id).pending).toBe(0);
  });

  it('a sealed secret that does not open refuses the start (nothing is sent unsigned)', async () => {
    const ctx = await setup({ webhooks: ALLOW_LOOPBACK });
    const rx = await receiver();
    await create(ctx, rx.url);
    await ctx.running.close();
    rmSync(join(ctx.dir, 'webhooks.key'));
    await expect(ctx.start()).rejects.toThrow(/webhooks\.endpoints\.0\.secret/);
    ctx.running = { close: async () => undefined } as RunningControlPlane;
  });
});

describe('webhook SSRF', () => {
  function resolverOf(map: Record<string, string[][]>): Resolver & { calls: string[] } {
    const calls: string[] = [];
    const fn = (async (host: string) => {
      calls.push(host);
      const answers = map[host];
      if (!answers || answers.length === 0) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      const now = answers.length > 1 ? answers.shift()! : answers[0]!;
      return now.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    }) as Resolver & { calls: string[] };
    fn.calls = calls;
    return fn;
  }

  it('attack: a webhook URL that resolves to loopback', async () => {
    const ctx = await setup();
    const rx = await receiver();
    const port = new URL(rx.url).port;
    // By name (the system resolver) and by literal, in several spellings.
    for (const url of [`http://localhost:${port}/hook`, rx.url, `http://[::1]:${port}/`, `http://127.1:${port}/`, `http://2130706433:${port}/`, `http://0x7f000001:${port}/`, `http://0.0.0.0:${port}/`]) {
      const r = await ctx.api('POST', '/webhooks', { url });
      expect([url, r.status]).toEqual([url, 400]);
      expect(r.body.error.data.issues[0].path).toBe('url');
    }
    expect(rx.hits).toHaveLength(0);
  });

  it('attack: private, link-local, CGNAT and unique-local targets are refused without an explicit allow', async () => {
    const ctx = await setup();
    for (const url of ['http://10.0.0.5/', 'http://172.20.1.1/', 'http://192.168.0.10/', 'http://169.254.169.254/latest/meta-data/', 'http://100.64.1.1/', 'http://[fd00::5]/', 'http://[fe80::1]/', 'http://[::ffff:a9fe:a9fe]/']) {
      const r = await ctx.api('POST', '/webhooks', { url });
      expect([url, r.status]).toEqual([url, 400]);
      expect(r.body.error.data.reason).toBe('address_refused');
    }
  });

  it('attack: DNS rebinding between creation and delivery', async () => {
    const rx = await receiver();
    const port = new URL(rx.url).port;
    // Public when the endpoint is created, loopback from then on.
    const resolve = resolverOf({ 'hooks.example.com': [['93.184.216.34'], ['127.0.0.1']] });
    const ctx = await setup({ resolve });
    const { id } = await create(ctx, `http://hooks.example.com:${port}/hook`);
    ctx.feed.append({ type: 'intent.created', subject: { intent: 'i' } });
    await ctx.until(() => ctx.running.cp.webhooks.dispatcher.deliveries(id, 1)[0]?.attempt_count === 1, 0, 'an attempt');
    const d = (await ctx.api('GET', `/webhooks/${id}/deliveries`)).body.deliveries[0];
    expect(d.attempts[0]).toMatchObject({ status: null, error: 'address_refused:loopback' });
    expect(d.state).toBe('pending');
    // Resolved once per attempt, and the request never reached the loopback receiver.
    expect(resolve.calls).toEqual(['hooks.example.com', 'hooks.example.com']);
    await ctx.until(() => ctx.running.cp.webhooks.dispatcher.deliveries(id, 1)[0]!.attempt_count >= 3, 7, 'more attempts');
    await ctx.running.cp.webhooks.dispatcher.settled();
    expect(rx.hits).toHaveLength(0);
    // One resolution per attempt (plus creation's): what is checked is what is connected to.
    expect(resolve.calls).toHaveLength(ctx.running.cp.webhooks.dispatcher.deliveries(id, 1)[0]!.attempt_count + 1);
  });

  it('attack: a name with one public and one loopback address is refused whole', async () => {
    const rx = await receiver();
    const port = new URL(rx.url).port;
    const ctx = await setup({ resolve: resolverOf({ 'mixed.example.com': [['93.184.216.34', '127.0.0.1']] }) });
    const r = await ctx.api('POST', '/webhooks', { url: `http://mixed.example.com:${port}/` });
    expect(r.status).toBe(400);
    expect(r.body.error.data).toMatchObject({ reason: 'address_refused', class: 'loopback' });
  });

  it('attack: IPv4-mapped IPv6 loopback', async () => {
    const rx = await receiver();
    const port = new URL(rx.url).port;
    const resolve = resolverOf({ 'v6.example.com': [['2606:4700::1'], ['::ffff:7f00:1']] });
    const ctx = await setup({ resolve });
    for (const url of [`http://[::ffff:127.0.0.1]:${port}/`, `http://[::ffff:7f00:1]:${port}/`, `http://[0:0:0:0:0:ffff:7f00:1]:${port}/`, `http://[::127.0.0.1]:${port}/`, `http://[64:ff9b::7f00:1]:${port}/`]) {
      const r = await ctx.api('POST', '/webhooks', { url });
      expect([url, r.status]).toEqual([url, 400]);
    }
    // A name that turns into the mapped form at delivery time is refused there.
    const { id } = await create(ctx, `http://v6.example.com:${port}/`);
    ctx.feed.append({ type: 'intent.created', subject: { intent: 'i' } });
    await ctx.until(() => ctx.running.cp.webhooks.dispatcher.deliveries(id, 1)[0]?.attempt_count === 1, 0, 'an attempt');
    expect(ctx.running.cp.webhooks.dispatcher.deliveries(id, 1)[0]!.attempts[0]).toMatchObject({ error: 'address_refused:loopback' });
    expect(rx.hits).toHaveLength(0);
  });

  it('attack: redirect to an internal address', async () => {
    const internal = await receiver();
    const outer = await receiver(() => ({ status: 307, headers: { location: internal.url } }));
    // The operator allowed exactly one receiver's address; the internal one is on it too, so only
    // "redirects are not followed" keeps it from being reached.
    const ctx = await setup({ webhooks: { allow_networks: ['127.0.0.1/32'] } });
    const { id } = await create(ctx, outer.url);
    ctx.feed.append({ type: 'intent.created', subject: { intent: 'i' } });
    await ctx.until(() => (ctx.running.cp.webhooks.dispatcher.deliveries(id, 1)[0]?.attempt_count ?? 0) >= 2, 7, 'attempts');
    const d = ctx.running.cp.webhooks.dispatcher.deliveries(id, 1)[0]!;
    expect(d.attempts[0]).toMatchObject({ status: 307, error: 'redirect_not_followed' });
    expect(d.state).toBe('pending');
    expect(outer.hits.length).toBeGreaterThanOrEqual(2);
    expect(internal.hits).toHaveLength(0);
  });

  it('attack: an allow for one network does not open loopback', async () => {
    const rx = await receiver();
    const ctx = await setup({ webhooks: { allow_networks: ['10.0.0.0/8'] } });
    const r = await ctx.api('POST', '/webhooks', { url: rx.url });
    expect(r.status).toBe(400);
    expect(r.body.error.data.class).toBe('loopback');
  });
});
