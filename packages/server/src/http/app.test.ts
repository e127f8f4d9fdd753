import { IntentRequestSchema, NotFoundError, RefusedError } from '@vault/sdk';
import { describe, expect, it } from 'vitest';
import { createServiceApp, errorResponse, hostOf, isLoopbackHost, isWireError, readJson, DEFAULT_BODY_LIMIT } from './app.js';

const H = { host: '127.0.0.1:7331' };

describe('hostOf / isLoopbackHost', () => {
  it.each([
    ['127.0.0.1:7331', '127.0.0.1', true],
    ['LOCALHOST', 'localhost', true],
    ['[::1]:80', '[::1]', true],
    ['::1', '::1', true],
    ['fe80::1', 'fe80::1', false],
    ['evil.example', 'evil.example', false],
    ['127.0.0.1.nip.io', '127.0.0.1.nip.io', false],
    ['[::1', '[::1', false],
  ])('%s', (header, host, loop) => {
    expect(hostOf(header)).toBe(host);
    expect(isLoopbackHost(header)).toBe(loop);
  });
  it('refuses a missing or empty Host', () => {
    expect(isLoopbackHost(undefined)).toBe(false);
    expect(isLoopbackHost('')).toBe(false);
  });
});

describe('createServiceApp', () => {
  const app = createServiceApp({ extraHosts: ['vault.internal'] });
  app.get('/ok', (c) => c.json({ ok: true }));
  app.get('/boom', () => {
    throw new Error('secret detail');
  });
  app.get('/refused', () => {
    throw Object.assign(new RefusedError('no'), { httpStatus: 500 });
  });
  app.post('/json', async (c) => c.json(await readJson(c, IntentRequestSchema, 'intent', 200)));

  it('answers loopback and extra hosts; refuses others with 403 -32602', async () => {
    expect((await app.request('/ok', { headers: H })).status).toBe(200);
    expect((await app.request('/ok', { headers: { host: 'vault.internal:8080' } })).status).toBe(200);
    const r = await app.request('/ok', { headers: { host: 'evil.example' } });
    expect(r.status).toBe(403);
    expect((await r.json()) as any).toMatchObject({ error: { code: -32602, data: { reason: 'host' } } });
  });
  it('extra hosts may come from a function (read per request, so a reload applies)', async () => {
    let hosts = ['a.internal'];
    const dyn = createServiceApp({ extraHosts: () => hosts });
    dyn.get('/ok', (c) => c.text('ok'));
    expect((await dyn.request('/ok', { headers: { host: 'a.internal' } })).status).toBe(200);
    hosts = [];
    expect((await dyn.request('/ok', { headers: { host: 'a.internal' } })).status).toBe(403);
  });
  it('an unknown route is 4040; a fault is -32603 without its message; an own httpStatus is kept', async () => {
    const nf = await app.request('/nope', { headers: H });
    expect(nf.status).toBe(404);
    expect(((await nf.json()) as any).error.code).toBe(4040);
    const boom = await app.request('/boom', { headers: H });
    expect(boom.status).toBe(500);
    const text = await boom.text();
    expect(text).not.toContain('secret detail');
    expect(JSON.parse(text).error).toEqual({ code: -32603, message: 'internal error', data: null });
    expect((await app.request('/refused', { headers: H })).status).toBe(500);
  });
  it('readJson: content type, declared and streamed size, invalid JSON, schema failures name the field', async () => {
    const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
      app.request('/json', { method: 'POST', body, headers: { ...H, ...headers } });
    const ok = await post(JSON.stringify({ wallet: 'w', destination: 'd', amount: '1' }));
    expect(ok.status).toBe(200);
    const wrongType = await post('{}', { 'content-type': 'text/plain' });
    expect(((await wrongType.json()) as any).error.message).toMatch(/application\/json/);
    const big = await post(JSON.stringify({ memo: 'x'.repeat(300) }));
    expect(((await big.json()) as any).error.message).toMatch(/larger than 200 bytes/);
    const declared = await post('{}', { 'content-type': 'application/json', 'content-length': '999999' });
    expect(declared.status).toBe(400);
    const bad = await post('{"wallet":');
    expect(((await bad.json()) as any).error.message).toMatch(/not valid JSON/);
    const field = await post(JSON.stringify({ wallet: 'w', destination: 'd', amount: 'x' }));
    expect(((await field.json()) as any).error.data.path).toBe('amount');
    const empty = await app.request('/json', { method: 'POST', headers: { ...H, 'content-type': 'application/json' } });
    expect(empty.status).toBe(400);
  });
  it('isWireError and the default limit', () => {
    expect(isWireError(new NotFoundError('x', 'y'))).toBe(true);
    expect(isWireError(new Error('x'))).toBe(false);
    expect(DEFAULT_BODY_LIMIT).toBe(256 * 1024);
    expect(typeof errorResponse).toBe('function');
  });
});
