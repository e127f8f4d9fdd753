/**
 * GET /metrics and GET /ready on the signer, over a real socket: refusals counted by reason,
 * signatures counted, the exposition strictly parseable, readiness that follows the journal.
 */
import { SIGNER_TOKEN_HEADER } from '@vault/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listen, type Listening } from '../../src/http/index.js';
import { createSignerApp } from '../../src/signer/app.js';
import { parseExposition, sampleValue } from '../exposition.js';
import { makeWorld, serveWorld, type World } from './helpers.js';

const TOKEN = 'test-token-0123456789abcdef-0123456789';
let w: World;
let served: Awaited<ReturnType<typeof serveWorld>>;

beforeEach(async () => {
  w = await makeWorld();
  served = await serveWorld(w, TOKEN);
});
afterEach(async () => {
  await served.server.close();
  w.cleanup();
});

async function get(url: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { headers });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('signer GET /metrics', () => {
  it('counts signatures, and refusals by their reason', async () => {
    const before = parseExposition((await get(served.server.url, '/metrics')).text);
    const ok = await served.client.sign(await w.request());
    expect(ok.ok).toBe(true);
    const bad = await w.request();
    const tampered = { ...bad, expected_payload_digest: '00'.repeat(32) };
    const refused = await served.client.sign(tampered);
    expect(refused.ok).toBe(false);
    const reason = refused.ok ? '' : refused.refusal.refused.reason;
    const m = await get(served.server.url, '/metrics');
    expect(m.status).toBe(200);
    expect(m.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    const after = parseExposition(m.text);
    expect(sampleValue(after, 'vault_signer_signatures_total') - sampleValue(before, 'vault_signer_signatures_total')).toBe(1);
    expect(sampleValue(after, 'vault_signer_refusals_total', { reason }) - sampleValue(before, 'vault_signer_refusals_total', { reason })).toBe(1);
    // A refusal is a 403 answer on the /sign template.
    expect(sampleValue(after, 'vault_http_requests_total', { method: 'POST', route: '/sign', status: '4xx' })).toBe(1);
    expect(sampleValue(after, 'vault_http_requests_total', { method: 'POST', route: '/sign', status: '2xx' })).toBe(1);
    expect(sampleValue(after, 'vault_receipts')).toBe(w.state.length);
  });

  it('needs no signer token, but wants VAULT_METRICS_TOKEN when one is set (constant-time compare)', async () => {
    const metricsToken = 'metrics-token-0123456789abcdef';
    let server: Listening | undefined;
    try {
      server = await listen(createSignerApp({ ...w.deps, token: TOKEN, metricsToken }));
      // The signer token is not the metrics token.
      const attempts: Record<string, string>[] = [{}, { [SIGNER_TOKEN_HEADER]: TOKEN }, { authorization: `Bearer ${TOKEN}` }];
      for (const headers of attempts) {
        const r = await get(server.url, '/metrics', headers);
        expect(r.status).toBe(401);
        expect(r.text).not.toContain('vault_');
      }
      expect((await get(server.url, '/metrics', { authorization: `Bearer ${metricsToken}` })).status).toBe(200);
    } finally {
      await server?.close();
    }
  });

  it('attack: a flood of distinct paths does not grow the metric series', async () => {
    // Warm the series the flood and the scrape itself legitimately touch.
    await get(served.server.url, '/warm-up');
    await get(served.server.url, '/metrics');
    const count = (t: string) => [...parseExposition(t).values()].reduce((n, f) => n + f.samples.length, 0);
    const before = count((await get(served.server.url, '/metrics')).text);
    for (let i = 0; i < 300; i++) await get(served.server.url, `/k${i}/${'x'.repeat(i % 50)}`);
    const text = (await get(served.server.url, '/metrics')).text;
    expect(count(text)).toBe(before);
    expect(text).not.toContain('/k1');
  });
});

describe('signer GET /ready', () => {
  it('is 200 while keys are unlocked and the journal takes writes, 503 naming the check once not', async () => {
    const ok = await get(served.server.url, '/ready');
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toEqual({ ready: true, service: 'vault-signer', checks: [{ name: 'keys', ok: true }, { name: 'state', ok: true }, { name: 'chains', ok: true }] });
    w.state.close();
    const down = await get(served.server.url, '/ready');
    expect(down.status).toBe(503);
    expect(JSON.parse(down.text).checks.filter((k: { ok: boolean }) => !k.ok)).toEqual([{ name: 'state', ok: false, detail: 'closed' }]);
    w.reopen();
    expect((await get(served.server.url, '/ready')).status).toBe(200);
  });

  it('is 503 when no key is unlocked', async () => {
    const locked = { name: 'software' as const, list: () => w.keys.list().map((k) => ({ ...k, unlocked: false })), signingKey: () => null };
    const s = await serveWorld(w, TOKEN, { keys: locked });
    try {
      const r = await get(s.server.url, '/ready');
      expect(r.status).toBe(503);
      expect(JSON.parse(r.text).checks[0]).toEqual({ name: 'keys', ok: false, detail: 'no key is unlocked' });
    } finally {
      await s.server.close();
    }
  });
});
