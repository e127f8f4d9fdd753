/**
 * GET /metrics and GET /ready on the control plane, over a real socket: the exposition parses
 * strictly (text format 0.0.4), counters move with real requests and executions, label values are
 * route templates only, and the series count does not grow with the paths callers invent.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createControlPlaneApp } from '../../src/control-plane/app.js';
import { ACCESS, PUBLIC_ROUTES } from '../../src/control-plane/access.js';
import { listen, type Listening } from '../../src/http/listen.js';
import { MetricsRegistry, OTHER } from '../../src/http/metrics.js';
import { parseExposition, sampleValue, type Family } from '../exposition.js';
import { raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

let h: Harness;
beforeAll(async () => {
  h = await setup();
});
afterAll(async () => {
  await h?.close();
});

async function scrape(url = h.url, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/metrics`, { headers });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), text, families: res.status === 200 ? parseExposition(text) : new Map<string, Family>() };
}

describe('GET /metrics', () => {
  it('is the 0.0.4 text exposition, strictly parseable, with the families the issue asks for', async () => {
    const m = await scrape();
    expect(m.status).toBe(200);
    expect(m.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    const types = Object.fromEntries([...m.families.values()].map((f) => [f.name, f.type]));
    expect(types).toMatchObject({
      vault_http_requests_total: 'counter',
      vault_http_request_duration_seconds: 'histogram',
      vault_intents: 'gauge',
      vault_execute_outcomes_total: 'counter',
      vault_signer_answers_total: 'counter',
      vault_store_writer: 'gauge',
      vault_metrics_overflow_total: 'counter',
    });
    // LMDB: one process holds the store; no lease exists to report.
    expect(sampleValue(m.families, 'vault_store_writer', { backend: 'lmdb' })).toBe(1);
  });

  it('counts requests by route template and status class, and their latency', async () => {
    const before = (await scrape()).families;
    const key = { method: 'GET', route: '/wallets', status: '2xx' };
    for (let i = 0; i < 3; i++) expect((await raw(h, 'GET', '/wallets')).status).toBe(200);
    expect((await raw(h, 'GET', '/wallets', { token: null })).status).toBe(401);
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1' });
    expect((await raw(h, 'GET', `/intent/${intentId}`)).status).toBe(200);
    const after = (await scrape()).families;
    expect(sampleValue(after, 'vault_http_requests_total', key) - sampleValue(before, 'vault_http_requests_total', key)).toBe(3);
    expect(sampleValue(after, 'vault_http_requests_total', { ...key, status: '4xx' }) - sampleValue(before, 'vault_http_requests_total', { ...key, status: '4xx' })).toBe(1);
    expect(sampleValue(after, 'vault_http_requests_total', { method: 'GET', route: '/intent/{id}', status: '2xx' })).toBeGreaterThanOrEqual(1);
    const count = (f: typeof after) => sampleValue(f, 'vault_http_request_duration_seconds_count', { method: 'GET', route: '/wallets' });
    expect(count(after) - count(before)).toBe(4);
    // The id itself is never a label value.
    expect([...after.values()].flatMap((f) => f.samples).some((s) => Object.values(s.labels).some((v) => v.includes(intentId)))).toBe(false);
  });

  it('counts intents by status and execute outcomes', async () => {
    const before = (await scrape()).families;
    const { intentId, status } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1' });
    expect(status).toBe('allowed');
    const mid = (await scrape()).families;
    expect(sampleValue(mid, 'vault_intents', { status: 'allowed' })).toBe(sampleValue(before, 'vault_intents', { status: 'allowed' }) + 1);
    const done = await h.client.execute(intentId);
    expect(done.status).toBe('confirmed');
    // A cancelled intent is refused at the policy stage.
    const other = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1' });
    expect((await raw(h, 'POST', `/intent/${other.intentId}/cancel`)).status).toBe(200);
    const refused = await raw(h, 'POST', `/intent/${other.intentId}/execute`);
    expect(refused.body.error.data).toMatchObject({ stage: 'policy' });
    const after = (await scrape()).families;
    expect(sampleValue(after, 'vault_execute_outcomes_total', { outcome: 'confirmed', stage: '' }) - sampleValue(before, 'vault_execute_outcomes_total', { outcome: 'confirmed', stage: '' })).toBe(1);
    expect(sampleValue(after, 'vault_execute_outcomes_total', { outcome: 'refused', stage: 'policy' }) - sampleValue(before, 'vault_execute_outcomes_total', { outcome: 'refused', stage: 'policy' })).toBe(1);
    expect(sampleValue(after, 'vault_intents', { status: 'confirmed' })).toBe(sampleValue(before, 'vault_intents', { status: 'confirmed' }) + 1);
    expect(sampleValue(after, 'vault_intents', { status: 'cancelled' })).toBe(sampleValue(before, 'vault_intents', { status: 'cancelled' }) + 1);
    expect(sampleValue(after, 'vault_intents', { status: 'allowed' })).toBe(sampleValue(before, 'vault_intents', { status: 'allowed' }));
    // Each signer's line: two signed, the third not waited for once they carried the quorum.
    const answers = (f: Map<string, Family>, answer: string) => (f.get('vault_signer_answers_total')?.samples ?? []).filter((x) => x.labels['answer'] === answer).reduce((n, x) => n + x.value, 0);
    expect(answers(after, 'signed') - answers(before, 'signed')).toBe(2);
    expect(answers(after, 'not_awaited') - answers(before, 'not_awaited')).toBe(1);
    expect(after.get('vault_signer_answers_total')?.samples.every((x) => /^member-\d$/.test(x.labels['signer'] ?? ''))).toBe(true);
    // Refused (an error answer carries the lines) and unavailable, each counted per signer.
    h.signer.mode.refuse = 'policy_denied';
    const refusedAll = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1' });
    expect((await raw(h, 'POST', `/intent/${refusedAll.intentId}/execute`)).body.error.data).toMatchObject({ stage: 'signers', reason: 'policy_denied' });
    h.signer.mode.refuse = null;
    h.signer.mode.down = true;
    const unheard = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1' });
    expect((await h.client.execute(unheard.intentId)).status).toBe('awaiting_signatures');
    h.signer.mode.down = false;
    const last = (await scrape()).families;
    expect(answers(last, 'refused') - answers(after, 'refused')).toBe(3);
    expect(answers(last, 'unavailable') - answers(after, 'unavailable')).toBe(3);
    // The gauge, kept from events, equals a count read straight from the store.
    const direct = new Map<string, number>();
    for (const { value } of h.running.cp.store.intents.getRange({})) direct.set(value.status, (direct.get(value.status) ?? 0) + 1);
    const gauge = last.get('vault_intents')!.samples.filter((x) => x.value !== 0).map((x) => [x.labels['status'], x.value]);
    expect(Object.fromEntries(gauge)).toEqual(Object.fromEntries(direct));
  });

  it('counts a large store in slices, and an intent created mid-count is counted once', async () => {
    const t = await setup();
    try {
      await t.client.createIntent({ wallet: 'ops', destination: t.dest(), amount: '1' });
      const [first] = [...t.running.cp.store.intents.getRange({ limit: 1 })];
      const template = first!.value;
      // Records written straight into the store (no events): what a count must find by scanning.
      await t.running.cp.store.root.transaction(() => {
        for (let i = 0; i < 4500; i++) t.running.cp.store.intents.put(`int_${'f'.repeat(56)}${i.toString(16).padStart(8, '0')}`, { ...template, intentId: `int_${i}`, status: 'denied' });
      });
      const direct = () => {
        const m = new Map<string, number>();
        for (const { value } of t.running.cp.store.intents.getRange({})) m.set(value.status, (m.get(value.status) ?? 0) + 1);
        return m;
      };
      const app = createControlPlaneApp(t.running.cp);
      const scrapeApp = async () => parseExposition(await (await app.request('/metrics', { headers: { host: '127.0.0.1' } })).text());
      // An intent created while the count runs (it yields every 2000 intents): counted once, whether
      // its event lands before the snapshot (in the scan) or after (from the event).
      const creating = t.client.createIntent({ wallet: 'ops', destination: t.dest(), amount: '1' });
      expect((await scrapeApp()).get('vault_intents')!.samples).toEqual([]);
      expect((await creating).status).toBe('allowed');
      let f = await scrapeApp();
      for (let i = 0; i < 200 && f.get('vault_intents')!.samples.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
        f = await scrapeApp();
      }
      const gauge = Object.fromEntries(f.get('vault_intents')!.samples.filter((x) => x.value !== 0).map((x) => [x.labels['status'], x.value]));
      expect(gauge).toEqual(Object.fromEntries(direct()));
    } finally {
      await t.close();
    }
  });

  it('attack: a flood of distinct paths does not grow the metric series', async () => {
    // Warm the series the flood can legitimately touch (an unknown route, GET and POST; a known template's 4xx).
    await raw(h, 'GET', '/warm-up');
    await raw(h, 'GET', `/intent/int_${'0'.repeat(64)}`);
    await raw(h, 'POST', '/policy/warm-up');
    const before = (await scrape()).families;
    const series = (f: typeof before) => [...f.values()].reduce((n, x) => n + x.samples.length, 0);
    const marker = 'zz' + Math.random().toString(36).slice(2);
    for (let i = 0; i < 300; i++) {
      await raw(h, 'GET', `/${marker}-${i}/x?y=${i}`);
      await raw(h, 'GET', `/intent/int_${i.toString(16).padStart(64, '0')}`);
      await raw(h, 'POST', `/policy/${marker}${i}`);
    }
    const m = await scrape();
    expect(series(m.families)).toBe(series(before));
    expect(m.text).not.toContain(marker);
    expect(sampleValue(m.families, 'vault_http_requests_total', { method: 'GET', route: OTHER, status: '4xx' })).toBeGreaterThanOrEqual(300);
  });

  it('with VAULT_METRICS_TOKEN wants it as a bearer token; a wrong or missing one gets no exposition', async () => {
    const token = 'metrics-token-0123456789abcdef';
    let server: Listening | undefined;
    try {
      server = await listen(createControlPlaneApp(h.running.cp, { metricsToken: token }));
      const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token-0123456789abcdef' }, { authorization: `Bearer ${token}x` }, { authorization: token }];
      for (const headers of attempts) {
        const r = await scrape(server.url, headers);
        expect(r.status, JSON.stringify(headers)).toBe(401);
        expect(r.text).not.toContain('vault_');
      }
      const ok = await scrape(server.url, { authorization: `Bearer ${token}` });
      expect(ok.status).toBe(200);
      expect(ok.families.has('vault_http_requests_total')).toBe(true);
      // A token too short to be a secret is refused at start, naming it.
      expect(() => createControlPlaneApp(h.running.cp, { metricsToken: 'short' })).toThrow(/VAULT_METRICS_TOKEN|metrics token/);
    } finally {
      await server?.close();
    }
  });
});

describe('VAULT_METRICS_TOKEN', () => {
  it('startControlPlane (what `vault-control-plane serve` runs) reads it from the environment', async () => {
    const token = 'metrics-token-from-env-0123456789';
    const saved = process.env['VAULT_METRICS_TOKEN'];
    process.env['VAULT_METRICS_TOKEN'] = token;
    let t: Harness | undefined;
    try {
      t = await setup({ unlock: false });
      expect((await scrape(t.url)).status).toBe(401);
      expect((await scrape(t.url, { authorization: `Bearer ${token}` })).status).toBe(200);
      // /ready stays open: a load balancer's probe carries no token.
      expect((await raw(t, 'GET', '/ready', { token: null })).status).toBe(200);
    } finally {
      if (saved === undefined) delete process.env['VAULT_METRICS_TOKEN'];
      else process.env['VAULT_METRICS_TOKEN'] = saved;
      await t?.close();
    }
  });
});

describe('MetricsRegistry', () => {
  it('caps the series of a metric: beyond it, label sets count under other and the overflow is counted', () => {
    const m = new MetricsRegistry();
    const c = m.counter('t_total', 'test', ['k'], { maxSeries: 3 });
    for (let i = 0; i < 50; i++) c.inc({ k: `v${i}` });
    expect(m.seriesCount('t_total')).toBe(4);
    const f = parseExposition(m.render());
    expect(sampleValue(f, 't_total', { k: OTHER })).toBe(47);
    expect(sampleValue(f, 'vault_metrics_overflow_total', { metric: 't_total' })).toBe(47);
  });

  it('escapes label values and help text as the format requires', () => {
    const m = new MetricsRegistry();
    m.counter('t_total', 'a \\ b\nc', ['k']).inc({ k: 'q"\\\n' });
    const text = m.render();
    expect(text).toContain('# HELP t_total a \\\\ b\\nc\n');
    expect(text).toContain('t_total{k="q\\"\\\\\\n"} 1\n');
    expect(sampleValue(parseExposition(text), 't_total', { k: 'q"\\\n' })).toBe(1);
  });

  it('refuses what would make a malformed exposition', () => {
    const m = new MetricsRegistry();
    expect(() => m.counter('bad-name', 'x')).toThrow(RangeError);
    expect(() => m.counter('ok_total', 'x', ['le'])).toThrow(RangeError);
    expect(() => m.histogram('h', 'x', [], [1, 1])).toThrow(RangeError);
    m.counter('dup_total', 'x');
    expect(() => m.gauge('dup_total', 'x')).toThrow(RangeError);
    expect(() => m.counter('c_total', 'x').inc({}, -1)).toThrow(RangeError);
  });
});

describe('GET /ready', () => {
  it('every route is either in the access table or deliberately public', () => {
    const app = createControlPlaneApp(h.running.cp);
    const registered = new Set(app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`));
    const listed = new Set<string>([...Object.keys(ACCESS), ...PUBLIC_ROUTES]);
    expect([...registered].filter((r) => !listed.has(r))).toEqual([]);
    expect([...listed].filter((r) => !registered.has(r))).toEqual([]);
    expect(Object.keys(ACCESS).filter((r) => (PUBLIC_ROUTES as readonly string[]).includes(r))).toEqual([]);
  });

  it('is in the OpenAPI document with /metrics, both without a session', async () => {
    const doc = (await raw(h, 'GET', '/openapi.json', { token: null })).body;
    expect(doc.paths['/ready'].get.security).toEqual([]);
    expect(doc.paths['/ready'].get.responses['503']).toBeDefined();
    expect(doc.paths['/metrics'].get.responses['200'].content['text/plain; version=0.0.4']).toBeDefined();
  });

  it('says 200 with its checks while the service can work, and 503 naming why once it cannot', async () => {
    const t = await setup({ unlock: false });
    try {
      const ok = await raw(t, 'GET', '/ready', { token: null });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ ready: true, service: 'vault-control-plane', checks: [{ name: 'store', ok: true }, { name: 'receipts', ok: true }, { name: 'open', ok: true }] });
      // Closing the service (store included) while its socket still answers.
      const app = createControlPlaneApp(t.running.cp);
      await t.running.cp.close();
      const res = await app.request('/ready', { headers: { host: '127.0.0.1' } });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { ready: boolean; checks: { name: string; ok: boolean; detail?: string }[] };
      expect(body.ready).toBe(false);
      expect(body.checks.filter((k) => !k.ok).map((k) => [k.name, k.detail])).toEqual([
        ['store', 'closed'],
        ['open', 'shutting down'],
      ]);
    } finally {
      await t.close();
    }
  });
});
