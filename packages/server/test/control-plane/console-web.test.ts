/**
 * Issue #24's server side: the front ends served under /app/ (control-plane/web.ts) and one intent's
 * receipts (GET /intent/{id}/receipts), on a real control plane over a real socket.
 */
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IntentStore } from '../../src/control-plane/store.js';
import { WEB_HEADERS } from '../../src/control-plane/web.js';

const WEB_CSP = WEB_HEADERS['content-security-policy'];
import { raw, setup, type Harness } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A built web root: dist/web/console and dist/web/app, and a secret file beside the root. */
function webRoot(): string {
  const top = mkdtempSync(join(tmpdir(), 'vault-web-'));
  const root = join(top, 'web');
  mkdirSync(join(root, 'console'), { recursive: true });
  mkdirSync(join(root, 'app'), { recursive: true });
  writeFileSync(join(root, 'console/index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(root, 'console/main.js'), 'export {};');
  writeFileSync(join(root, 'app/index.html'), '<!doctype html><title>app</title>');
  writeFileSync(join(top, 'secret.txt'), 'not for the browser');
  writeFileSync(join(root, 'console/.hidden.js'), 'hidden');
  symlinkSync(join(top, 'secret.txt'), join(root, 'console/link.js'));
  return root;
}

/** A GET with the path sent exactly as written (fetch would resolve `..` before sending). */
function rawGet(base: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the front ends under /app/', () => {
  it('serves the console and the app with the strict CSP, and redirects to the trailing slash', async () => {
    h = await setup({ unlock: false, controlPlane: { webRoot: webRoot() } });
    const page = await rawGet(h.url, '/app/console/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>console</title>');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(WEB_CSP);
    expect(WEB_CSP).toContain("default-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    const js = await rawGet(h.url, '/app/console/main.js');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await rawGet(h.url, '/app/')).body).toContain('<title>app</title>');
    const bare = await rawGet(h.url, '/app/console');
    expect(bare.status).toBe(308);
    expect(bare.headers['location']).toBe('/app/console/');
    expect((await rawGet(h.url, '/app/console/missing.js')).status).toBe(404);
  });

  it('attack: a path traversal out of the app folder', async () => {
    h = await setup({ unlock: false, controlPlane: { webRoot: webRoot() } });
    for (const path of [
      '/app/../secret.txt',
      '/app/console/../../secret.txt',
      '/app/%2e%2e/secret.txt',
      '/app/console/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/app/console/..%5c..%5csecret.txt',
      '/app/console/%00index.html',
      '/app/console/link.js',
      '/app/console/.hidden.js',
      '/app/console/%E0%A4%A',
      `/app/${'a/'.repeat(400)}x.js`,
    ]) {
      const r = await rawGet(h.url, path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toContain('not for the browser');
    }
  });

  it('is a 404 when no front end was built, and keeps the loopback Host check', async () => {
    h = await setup({ unlock: false, controlPlane: { webRoot: null } });
    expect((await rawGet(h.url, '/app/console/')).status).toBe(404);
    const u = new URL(h.url);
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: '/app/console/', headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(rebound).toBe(403);
  });
});

describe('GET /intents?wallet=&status=', () => {
  it('filters on the server by wallet and by status; an unknown status or a bad wallet is a 400 naming it', async () => {
    h = await setup({ rules: [{ rule: 'approval_threshold', above: '10', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] }] });
    const small = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5' });
    const big = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '50' });
    const ids = (path: string) => raw(h!, 'GET', path).then((r) => (r.body as { intentId: string }[]).map((i) => i.intentId));
    expect(await ids('/intents?status=allowed')).toEqual([small.intentId]);
    expect(await ids('/intents?status=pending_approvals')).toEqual([big.intentId]);
    expect(await ids('/intents?wallet=ops')).toEqual([big.intentId, small.intentId]);
    expect(await ids('/intents?wallet=ops&status=allowed&limit=1')).toEqual([small.intentId]);
    expect(await ids('/intents?wallet=elsewhere')).toEqual([]);
    const badStatus = await raw(h, 'GET', '/intents?status=approved');
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.message).toMatch(/^invalid status/);
    const badWallet = await raw(h, 'GET', `/intents?wallet=${'w'.repeat(200)}`);
    expect(badWallet.status).toBe(400);
    expect(badWallet.body.error.message).toMatch(/^invalid wallet/);
  });
});

describe('GET /intent/{id}/receipts', () => {
  it("lists the receipts of that intent only, oldest first, each one of the chain's", async () => {
    h = await setup({ rules: [{ rule: 'approval_threshold', above: '0', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] }] });
    const a = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5' });
    const b = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '6' });
    await h.client.approveSigned(a.intentId, h.approve(a.intentId, 'alice'));
    const r = await raw(h, 'GET', `/intent/${a.intentId}/receipts`);
    expect(r.status).toBe(200);
    const receipts = r.body.receipts as { seq: number; intentId: string; kind: string; hash: string }[];
    expect(receipts.length).toBeGreaterThanOrEqual(2);
    expect(receipts.every((x) => x.intentId === a.intentId)).toBe(true);
    expect(receipts.map((x) => x.seq)).toEqual([...receipts.map((x) => x.seq)].sort((x, y) => x - y));
    const chain = (await raw(h, 'GET', '/ledger/recent?limit=1000')).body.receipts as { seq: number; hash: string }[];
    for (const x of receipts) expect(chain.find((c) => c.seq === x.seq)?.hash).toBe(x.hash);
    const other = (await raw(h, 'GET', `/intent/${b.intentId}/receipts`)).body.receipts as { intentId: string }[];
    expect(other.length).toBeGreaterThanOrEqual(1);
    expect(other.every((x) => x.intentId === b.intentId)).toBe(true);
    expect((await raw(h, 'GET', `/intent/${a.intentId}/receipts?limit=1`)).body.receipts).toHaveLength(1);
  });

  it('refuses a malformed id or limit (400), an unknown intent (404) and no session (401)', async () => {
    h = await setup();
    const a = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5' });
    const bad = await raw(h, 'GET', '/intent/int_nothex/receipts');
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.path).toBe('');
    expect(bad.body.error.message).toContain('id');
    expect((await raw(h, 'GET', `/intent/${a.intentId}/receipts?limit=0`)).status).toBe(400);
    expect((await raw(h, 'GET', `/intent/int_${'0'.repeat(64)}/receipts`)).status).toBe(404);
    expect((await raw(h, 'GET', `/intent/${a.intentId}/receipts`, { token: null })).status).toBe(401);
  });

  it('a store written before the index existed gets it built when it is opened', async () => {
    h = await setup();
    const a = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5' });
    const before = (await raw(h, 'GET', `/intent/${a.intentId}/receipts`)).body.receipts;
    const store = h.running.cp.store;
    // As an older store: no index, no marker.
    await store.intentReceipts.clearAsync();
    await store.meta.remove('intent_receipts');
    expect(store.receiptsOf(a.intentId, 100)).toEqual([]);
    await h.restart();
    expect((await raw(h, 'GET', `/intent/${a.intentId}/receipts`)).body.receipts).toEqual(before);
    expect(h.running.cp.store).not.toBe(store);
    expect(h.running.cp.store).toBeInstanceOf(IntentStore);
  });
});
