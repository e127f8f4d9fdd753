/**
 * The signer over a real loopback socket: token auth, the Host check, body limits and validation,
 * and the typed SDK client against the real routes.
 */
import { createSignerClient, SignResponseSchema, SignerRefusalSchema, ReceiptRecordSchema, SIGNER_TOKEN_HEADER } from '@vault/sdk';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type Listening } from '../../src/http/index.js';
import { createSignerApp } from '../../src/signer/app.js';
import { makeWorld, type World } from './helpers.js';

const TOKEN = 'test-token-0123456789abcdef-0123456789';
let w: World;
let server: Listening;

beforeAll(async () => {
  w = await makeWorld();
  server = await listen(createSignerApp({ ...w.deps, token: TOKEN }));
});
afterAll(async () => {
  await server.close();
  w.cleanup();
});

function raw(method: string, path: string, options: { headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: unknown }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { host: `127.0.0.1:${url.port}`, ...options.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

const authed = { [SIGNER_TOKEN_HEADER]: TOKEN };
const json = { 'content-type': 'application/json' };

describe('signer HTTP edge', () => {
  it('GET /health needs no token and reports the receipt head', async () => {
    const r = await raw('GET', '/health');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, service: 'vault-signer', receipt_head: w.state.head, chains: ['memory:devnet'] });
  });

  it.each(['/keys', '/receipts'])('GET %s without the token, or with a wrong one, is 401', async (path) => {
    expect((await raw('GET', path)).status).toBe(401);
    expect((await raw('GET', path, { headers: { [SIGNER_TOKEN_HEADER]: `${TOKEN.slice(0, -1)}x` } })).status).toBe(401);
    expect((await raw('GET', path, { headers: { [SIGNER_TOKEN_HEADER]: TOKEN.slice(0, 8) } })).status).toBe(401);
    const r = await raw('GET', path, { headers: { [SIGNER_TOKEN_HEADER]: `${TOKEN}0` } });
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ error: { code: 4100 } });
  });

  it('POST /sign without the token is 401 and leaves no receipt', async () => {
    const before = w.state.length;
    const r = await raw('POST', '/sign', { headers: json, body: JSON.stringify(await w.request()) });
    expect(r.status).toBe(401);
    expect(w.state.length).toBe(before);
  });

  it('refuses a Host header that is not a loopback name (DNS rebinding)', async () => {
    const r = await raw('GET', '/health', { headers: { host: 'attacker.example:7333' } });
    expect(r.status).toBe(403);
    const s = await raw('POST', '/sign', { headers: { ...authed, ...json, host: 'vault.attacker.example' }, body: '{}' });
    expect(s.status).toBe(403);
  });

  it('a malformed body is 400 naming the field', async () => {
    const req = (await w.request()) as unknown as { intent: { request: { amount: unknown } } };
    req.intent.request.amount = '12.5';
    const r = await raw('POST', '/sign', { headers: { ...authed, ...json }, body: JSON.stringify(req) });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { code: 4000, data: { path: 'intent.request.amount' } } });
    expect((r.body as { error: { message: string } }).error.message).toContain('intent.request.amount');
    const missing = await raw('POST', '/sign', { headers: { ...authed, ...json }, body: JSON.stringify({ ...(await w.request()), signer_address: undefined }) });
    expect(missing.body).toMatchObject({ error: { code: 4000, data: { path: 'signer_address' } } });
  });

  it('invalid JSON, a wrong content type and an oversized body are 400s', async () => {
    const bad = await raw('POST', '/sign', { headers: { ...authed, ...json }, body: '{"intent":' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('not valid JSON');
    const type = await raw('POST', '/sign', { headers: { ...authed, 'content-type': 'text/plain' }, body: '{}' });
    expect(type.status).toBe(400);
    const big = await raw('POST', '/sign', { headers: { ...authed, ...json }, body: JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 10) }) });
    expect(big.status).toBe(400);
    expect(JSON.stringify(big.body)).toContain('larger than');
  });

  it('the SDK signer client signs, gets refusals as values, lists keys and receipts', async () => {
    const client = createSignerClient({ baseUrl: server.url, token: TOKEN });
    const req = await w.request();
    const ok = await client.sign(req);
    expect(ok.ok).toBe(true);
    if (ok.ok) expect(SignResponseSchema.parse(ok.response).receipt_head).toBe(w.state.head);
    const tampered = structuredClone(req);
    tampered.intent.request.amount = '6000000';
    const refused = await client.sign(tampered);
    expect(refused).toMatchObject({ ok: false, refusal: { refused: { reason: 'intent_tampered' } } });
    if (!refused.ok) SignerRefusalSchema.parse(refused.refusal);

    const keys = (await client.keys()) as { backend: string; keys: { public_key: string; addresses: Record<string, string>; unlocked: boolean }[] };
    expect(keys.backend).toBe('software');
    expect(keys.keys).toHaveLength(1);
    expect(keys.keys[0]!.addresses['memory:devnet']).toBe(w.signerAddress);
    expect(JSON.stringify(keys)).not.toMatch(/secret|ciphertext/);

    const receipts = (await client.receipts()) as { receipts: unknown[]; receipt_head: string; total: number };
    expect(receipts.receipt_head).toBe(w.state.head);
    expect(receipts.receipts.length).toBe(Math.min(20, receipts.total));
    const two = (await client.receipts(2)) as { receipts: unknown[] };
    expect(two.receipts).toHaveLength(2);
    expect(ReceiptRecordSchema.parse(two.receipts[0]).kind).toBe('sign.refused');
    expect((await raw('GET', '/receipts?limit=0', { headers: authed })).body).toMatchObject({ error: { code: 4000, data: { path: 'limit' } } });
    expect((await raw('GET', '/receipts?limit=abc', { headers: authed })).status).toBe(400);
  });

  it('unknown routes are 404 wire errors', async () => {
    const r = await raw('GET', '/nope', { headers: authed });
    expect(r.status).toBe(404);
  });
});
