/**
 * Security regression tests, each named after the attack it defends against.
 */
import { generateEd25519KeyPair, signEd25519, fromHex, toHex } from '@vault/sdk';
import fc from 'fast-check';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freshAddress as freshAddressFor, PASSPHRASE, raw, setup, type Harness } from './helpers.js';

// Real sockets, fsync and scrypt on a shared 2-core machine: allow for slow moments.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function withHost(url: string, path: string, host: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((res, rej) => {
    const req = request({ hostname: u.hostname, port: u.port, path, method: 'GET', headers: { host } }, (r) => {
      let body = '';
      r.on('data', (d) => (body += d));
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
    });
    req.on('error', rej);
    req.end();
  });
}

describe('attack: DNS rebinding (a web page reaching the loopback service under its own name)', () => {
  it('refuses a request whose Host header is not a loopback name, before any route runs', async () => {
    h = await setup({ unlock: false });
    const evil = await withHost(h.url, '/health', 'evil.example:7331');
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body).error).toMatchObject({ code: -32602, data: { reason: 'host' } });
    expect((await withHost(h.url, '/session/unlock', 'attacker.test')).status).toBe(403);
    expect((await withHost(h.url, '/health', `127.0.0.1:${new URL(h.url).port}`)).status).toBe(200);
    expect((await withHost(h.url, '/health', 'localhost')).status).toBe(200);
    expect((await withHost(h.url, '/health', '[::1]:7331')).status).toBe(200);
    expect((await withHost(h.url, '/health', '127.0.0.1.evil.example')).status).toBe(403);
  });
});

describe('attack: stolen or forgotten session token', () => {
  it('session expiry (idle): 15 minutes without use ends the session', async () => {
    h = await setup();
    h.clock.now += 14 * 60;
    expect((await raw(h, 'GET', '/wallets')).status).toBe(200); // use slides the idle window
    h.clock.now += 14 * 60;
    expect((await raw(h, 'GET', '/wallets')).status).toBe(200);
    h.clock.now += 15 * 60;
    const r = await raw(h, 'GET', '/wallets');
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({ code: 4100, data: { reason: 'expired_idle' } });
  });

  it('session expiry (absolute): 8 hours at most, however active', async () => {
    h = await setup();
    for (let t = 0; t < 8 * 60; t += 10) {
      h.clock.now += 10 * 60;
      const r = await raw(h, 'GET', '/wallets');
      if (t + 10 < 8 * 60) expect(r.status).toBe(200);
      else expect(r.body.error.data.reason).toBe('expired_absolute');
    }
  });

  it('lock revokes the token at once', async () => {
    h = await setup();
    const token = h.client.getToken() as string;
    expect((await raw(h, 'POST', '/session/lock', { token })).status).toBe(200);
    const r = await raw(h, 'GET', '/wallets', { token });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe(4100);
  });

  it('a forged token (right shape, random bytes) is refused', async () => {
    h = await setup();
    const forged = Buffer.alloc(32, 7).toString('base64url');
    expect((await raw(h, 'GET', '/wallets', { token: forged })).status).toBe(401);
    expect((await raw(h, 'GET', '/wallets', { token: null, headers: { authorization: 'Basic abc' } })).status).toBe(401);
  });
});

describe('attack: timing side channel on secrets', () => {
  it('constant-time compare used: passphrase hash, session lookup by digest, signer token', () => {
    const src = (p: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../src', p), 'utf8');
    expect(src('control-plane/secrets.ts')).toMatch(/timingSafeEqual\(key, Buffer\.from\(stored\.hash, 'hex'\)\)/);
    // Sessions are found by the SHA-256 of the token: no comparison ever touches the token itself.
    expect(src('control-plane/sessions.ts')).toMatch(/this\.#sessions\.get\(key\)/);
    expect(src('control-plane/sessions.ts')).not.toMatch(/token ===(?! null)|=== token/);
    expect(src('http/auth.ts')).toMatch(/timingSafeEqual\(a, b\)/);
  });
});

describe('attack: oversized bodies (memory exhaustion)', () => {
  it('body size limit: a declared or streamed body over the limit is 400 before it is parsed', async () => {
    h = await setup();
    const big = JSON.stringify({ wallet: 'ops', destination: 'x', amount: '1', memo: 'a'.repeat(400 * 1024) });
    const r = await raw(h, 'POST', '/intent', { body: big });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/larger than/);
    const u = await raw(h, 'POST', '/session/unlock', { token: null, body: JSON.stringify({ passphrase: 'p'.repeat(20_000) }) });
    expect(u.status).toBe(400);
    // streamed without a Content-Length
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 40; i++) c.enqueue(new TextEncoder().encode('x'.repeat(10_000)));
        c.close();
      },
    });
    const res = await fetch(`${h.url}/intent`, { method: 'POST', body: stream, duplex: 'half', headers: { 'content-type': 'application/json', authorization: `Bearer ${h.client.getToken()}` } } as RequestInit);
    expect(res.status).toBe(400);
  });
});

describe('attack: secrets leaking through logs and error messages', () => {
  it('no secret or token in logs or error messages (passphrase, session token, signer token, pairing code)', async () => {
    h = await setup();
    const token = h.client.getToken() as string;
    const wrong = 'wrong-passphrase-1234';
    const e1 = await raw(h, 'POST', '/session/unlock', { token: null, body: JSON.stringify({ passphrase: wrong }) });
    const e2 = await raw(h, 'GET', '/intent/not-an-id');
    const p = await h.client.pairCreate({ role: 'viewer', label: 'x' });
    await fetch(h.client.pairQrUrl(p.code));
    const e3 = await raw(h, 'POST', '/pair/claim', { token: null, body: JSON.stringify({ code: p.code, public_key: '00'.repeat(32), signature: '00'.repeat(64), label: 'x' }) });
    h.signer.mode.down = true;
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1' });
    const out = await h.client.execute(intentId);
    h.signer.mode.down = false;
    h.signer.mode.refuse = 'key';
    const { intentId: id2 } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '2' });
    const e4 = await raw(h, 'POST', `/intent/${id2}/execute`);
    const everything = [h.logs.join('\n'), e1.text, e2.text, e3.text, e4.text, JSON.stringify(out)].join('\n');
    expect(h.logs.length).toBeGreaterThan(5);
    for (const secret of [PASSPHRASE, wrong, token, h.signerToken, p.code, p.challenge]) expect(everything).not.toContain(secret);
    // the signers did receive the token (it is only kept out of logs and replies)
    expect(h.signer.calls.some((c) => c.token === h!.signerToken)).toBe(true);
  });
});

describe('attack: pairing code replay and stale codes', () => {
  it('pairing code reuse is refused; so is an expired code; 3 bad signatures burn a code', async () => {
    h = await setup();
    const claim = async (code: string, challenge: string, key = generateEd25519KeyPair()) =>
      raw(h!, 'POST', '/pair/claim', {
        token: null,
        body: JSON.stringify({ code, public_key: key.publicKeyHex, signature: toHex(signEd25519(fromHex(challenge, 'c', 32), key.secretKey)), label: 'd' }),
      });
    const p = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    expect((await claim(p.code, p.challenge)).status).toBe(200);
    const reuse = await claim(p.code, p.challenge);
    expect(reuse.status).toBe(403);
    expect(reuse.body.error.data.reason).toBe('pairing_code');
    expect((await fetch(h.client.pairQrUrl(p.code))).status).toBe(403);

    const q = await h.client.pairCreate({ role: 'viewer', label: 'tablet' });
    h.clock.now += 5 * 60;
    await h.client.unlock(PASSPHRASE);
    expect((await claim(q.code, q.challenge)).status).toBe(403);

    const r = await h.client.pairCreate({ role: 'initiator', label: 'laptop' });
    const other = '11'.repeat(32);
    for (let i = 0; i < 3; i++) expect((await claim(r.code, other)).status).toBe(400);
    expect((await claim(r.code, r.challenge)).status).toBe(403);
  });
});

describe('attack: malformed input (crash or 500 by fuzzing)', () => {
  const validIntent = { wallet: 'ops', destination: 'mem1' + 'ab'.repeat(20), amount: '10', asset_decimals: 6, memo: 'm', tags: [['k', 'v']], operation: { op: 'transfer' } };
  const arbitrary = fc.oneof(fc.jsonValue(), fc.string(), fc.integer(), fc.constant(null), fc.array(fc.string()), fc.dictionary(fc.string(), fc.jsonValue()));

  it('every malformed body is 400 with the failing field, never a 500 or a crash', async () => {
    h = await setup();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '3' });
    const endpoints = ['/intent', `/intent/${intentId}/approve-signed`, '/session/unlock', '/pair/create', '/pair/claim', '/snapshot'];
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...endpoints),
        fc.oneof(
          arbitrary.map((v) => JSON.stringify(v) ?? 'null'),
          fc.string(),
          fc.record({ key: fc.constantFrom(...Object.keys(validIntent), 'extra'), value: arbitrary }).map(({ key, value }) => JSON.stringify({ ...validIntent, [key]: value })),
        ),
        async (path, body) => {
          const r = await raw(h!, 'POST', path, { body, token: path === '/pair/claim' || path === '/session/unlock' ? null : undefined });
          seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
          expect(r.status).not.toBe(500);
          expect([200, 400, 401, 403, 404]).toContain(r.status);
          if (r.status === 400) {
            expect(r.body.error.code).toBe(4000);
            expect(typeof r.body.error.data.path).toBe('string');
            expect(r.body.error.message).toMatch(/^invalid /);
          }
        },
      ),
      { numRuns: 400, seed: 7 },
    );
    expect(seen.get(400)).toBeGreaterThan(100);
    const health = await h.client.health();
    expect(health['ok']).toBe(true);
  }, 60_000);

  it('fuzzed paths and query strings never produce a 500', async () => {
    h = await setup();
    const templates = ['/intent/%s', '/intent/%s/protect', '/intent/%s/execute', '/intent/%s/approve', '/policy/%s', '/wallets/%s/reconcile', '/devices/%s/revoke', '/pair/qr/%s', '/ledger/recent?limit=%s', '/intents?limit=%s'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...templates), fc.string({ maxLength: 80 }), fc.constantFrom('GET', 'POST'), async (t, value, method) => {
        const path = t.replace('%s', encodeURIComponent(value));
        const r = await raw(h!, method, path);
        expect(r.status).toBeLessThan(500);
      }),
      { numRuns: 300, seed: 3 },
    );
  }, 60_000);

  it('names the failing field for an intent (operation.asset_scale, amount, tags.0)', async () => {
    h = await setup();
    const cases: [unknown, string][] = [
      [{ ...validIntent, operation: { op: 'mpt_create', asset_scale: 20, flags: 0 } }, 'operation.asset_scale'],
      [{ ...validIntent, amount: '-1' }, 'amount'],
      [{ ...validIntent, tags: [['only-one']] }, 'tags.0'],
      [{ ...validIntent, wallet: undefined }, 'wallet'],
    ];
    for (const [body, path] of cases) {
      const r = await raw(h, 'POST', '/intent', { body: JSON.stringify(body) });
      expect(r.status).toBe(400);
      expect(r.body.error.data.path.startsWith(path)).toBe(true);
    }
    const noType = await raw(h, 'POST', '/intent', { body: JSON.stringify(validIntent), headers: { 'content-type': 'text/plain' } });
    expect(noType.status).toBe(400);
  });
});

describe('attack: a destination tag walks a payment around a blocked account', () => {
  it('the policy sees the account behind the address the driver reads, at creation', async () => {
    const blocked = freshAddressFor();
    const tagged = freshAddressFor();
    // A driver that reads `tagged` as `blocked` plus a tag, as the XRPL driver reads a tagged X-address.
    h = await setup({
      rules: [{ rule: 'destination_blocklist', addresses: [blocked] }, { rule: 'always_allow' }],
      wrapDriver: (d) => ({
        ...d,
        validateAddress: (input) => {
          const c = d.validateAddress(input);
          return c.valid && input.address === tagged ? { ...c, account: blocked } : c;
        },
      }),
    });
    const r = await h.client.createIntent({ wallet: 'ops', destination: tagged, amount: '5' });
    expect(r.status).toBe('denied');
    expect(r.decision.reasons[0]).toBe(`destination_blocklist[0]: destination ${tagged} (account ${blocked}) is blocked`);
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5' })).status).toBe('allowed');
  });
});
