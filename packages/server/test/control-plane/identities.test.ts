/**
 * Identities (issue #23): named operator accounts with their own passphrases and roles, API keys
 * for applications and agents, and the actor every receipt and event names. Real sockets, real
 * scrypt, the real state file.
 */
import { createControlPlaneClient, generateEd25519KeyPair, signEd25519 } from '@vault/sdk';
import { memoryWallet } from '@vault/sdk/testing';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseApiKey, SCRYPT_CONCURRENCY } from '../../src/control-plane/identities.js';
import { PASSPHRASE, raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const OLGA = 'olga passphrase 0001';
const AUDREY = 'audrey passphrase 02';

const post = (h: Harness, path: string, body: unknown, token: string | null) => raw(h, 'POST', path, { token, body: JSON.stringify(body) });
const admin = (h: Harness) => h.client.getToken()!;

async function unlock(h: Harness, name: string | undefined, passphrase: string) {
  return post(h, '/session/unlock', name === undefined ? { passphrase } : { name, passphrase }, null);
}

/** olga (operator) and audrey (auditor), created by the first admin through the API. */
async function withAccounts(opts: Parameters<typeof setup>[0] = {}): Promise<Harness> {
  const t = await setup(opts);
  expect((await post(t, '/operators', { name: 'olga', role: 'operator', passphrase: OLGA }, admin(t))).status).toBe(200);
  expect((await post(t, '/operators', { name: 'audrey', role: 'auditor', passphrase: AUDREY }, admin(t))).status).toBe(200);
  return t;
}

async function tokenOf(h: Harness, name: string, passphrase: string): Promise<string> {
  const r = await unlock(h, name, passphrase);
  expect(r.status, r.text).toBe(200);
  return r.body.token as string;
}

async function createKey(h: Harness, body: Record<string, unknown>): Promise<{ id: string; key: string; body: any }> {
  const r = await post(h, '/api-keys', { expires_at: h.clock.now + 3600, ...body }, admin(h));
  expect(r.status, r.text).toBe(200);
  return { id: r.body.id, key: r.body.key, body: r.body };
}

/** A second wallet on the same ledger, added the way an operator does: state.json, then reload. */
async function addWallet(h: Harness, wallet: string): Promise<void> {
  const mw = memoryWallet({ ledger: h.ledger, wallet, members: 3, quorum: 2 });
  const path = join(h.dir, 'state.json');
  const state = JSON.parse(readFileSync(path, 'utf8'));
  state.wallets.push(mw.wallet);
  state.policies.push({ wallet, version: 1, rules: [{ rule: 'always_allow' }] });
  writeFileSync(path, JSON.stringify(state));
  expect((await post(h, '/admin/reload', {}, admin(h))).status).toBe(200);
}

const intentBody = (h: Harness, extra: Record<string, unknown> = {}) => ({ wallet: 'ops', destination: h.dest(), amount: '5', ...extra });

/** The receipts newest first, as /ledger/recent serves them. */
async function recent(h: Harness, limit = 10): Promise<{ kind: string; actor?: string; intentId?: string }[]> {
  return (await raw(h, 'GET', `/ledger/recent?limit=${limit}`, { token: admin(h) })).body.receipts;
}

describe('operator accounts', () => {
  it('each account unlocks with its own passphrase and acts in its role; no name is the legacy first admin', async () => {
    h = await withAccounts();
    const olga = await tokenOf(h, 'olga', OLGA);
    const audrey = await tokenOf(h, 'audrey', AUDREY);
    expect((await post(h, '/intent', intentBody(h), olga)).status).toBe(200);
    expect((await raw(h, 'GET', '/ledger/verify', { token: audrey })).body.verified).toBe(true);
    expect((await post(h, '/intent', intentBody(h), audrey)).status).toBe(403);
    // The legacy passphrase, with no name or as `operator`, is the first admin.
    for (const name of [undefined, 'operator']) {
      const t = (await unlock(h, name, PASSPHRASE)).body.token;
      expect((await raw(h, 'GET', '/operators', { token: t })).status).toBe(200);
    }
    // The SDK client names the account too.
    const viaClient = createControlPlaneClient({ baseUrl: h.url });
    await viaClient.unlock(OLGA, { name: 'olga' });
    expect((await viaClient.createIntent(intentBody(h))).status).toBe('allowed');
    const list = (await raw(h, 'GET', '/operators', { token: audrey })).body.operators;
    expect(list.map((o: { name: string; role: string }) => `${o.name}:${o.role}`)).toEqual(['operator:admin', 'olga:operator', 'audrey:auditor']);
    expect(JSON.stringify(list)).not.toContain('salt');
    // The passphrase is kept as its scrypt hash only.
    const file = readFileSync(join(h.dir, 'state.json'), 'utf8');
    expect(file).not.toContain(OLGA);
    expect(JSON.parse(file).operators[0].passphrase).toMatchObject({ kdf: 'scrypt' });
  });

  it('attack: a wrong passphrase for one account does not unlock another', async () => {
    h = await withAccounts();
    const refused = [
      await unlock(h, 'audrey', OLGA), // olga's passphrase, audrey's name
      await unlock(h, 'olga', PASSPHRASE), // the legacy admin's passphrase, olga's name
      await unlock(h, undefined, OLGA), // olga's passphrase, no name: the legacy account
      await unlock(h, 'nobody', OLGA), // a name no account has
    ];
    for (const r of refused) {
      expect(r.status).toBe(401);
      // One answer for all: the reply does not tell which names exist.
      expect(r.body.error).toEqual({ code: 4100, message: 'wrong passphrase', data: { reason: 'passphrase' } });
    }
  });

  it('attack: a flood of guesses on one account does not lock out another', async () => {
    // Each guess costs a real scrypt; olga's queue holds 8 waiting, so the flood overflows it (503).
    h = await withAccounts({ scrypt: { N: 2 ** 14, r: 8, p: 1 }, unlockQueueMax: 8 });
    const olgaQueue = h.running.cp.identities.queueOf('olga');
    const flood = Array.from({ length: 12 }, (_, i) => unlock(h!, 'olga', `guess ${i}`));
    await vi.waitFor(() => expect(olgaQueue.waiting).toBe(8), { timeout: 10_000, interval: 5 });
    // While olga's queue is full, audrey unlocks, then the legacy admin: neither waits in olga's line.
    const aud = await unlock(h, 'audrey', AUDREY);
    const legacy = await unlock(h, undefined, PASSPHRASE);
    const olgaWaitingMeanwhile = olgaQueue.waiting;
    const replies = await Promise.all(flood);
    expect(aud.status, aud.text).toBe(200);
    expect(legacy.status, legacy.text).toBe(200);
    // Two unlocks went through while guesses against olga were still queued: not behind them.
    expect(olgaWaitingMeanwhile).toBeGreaterThan(0);
    const reasons = replies.map((r) => `${r.status}:${r.body.error.data.reason}`);
    // 1 checked + 8 waiting: the rest overflowed (fewer if a check finished while they arrived).
    expect(reasons.filter((x) => x === '503:busy').length).toBeGreaterThan(0);
    expect(reasons.every((x) => x === '503:busy' || x === '401:passphrase')).toBe(true);
    // And olga herself still gets in once her queue drains.
    expect((await unlock(h, 'olga', OLGA)).status).toBe(200);
  });

  it('attack: a flood spread over every account and made-up names runs at most SCRYPT_CONCURRENCY scrypts at once', async () => {
    h = await withAccounts({ scrypt: { N: 2 ** 14, r: 8, p: 1 } });
    const ids = h.running.cp.identities;
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, ids.checksRunning)), 2);
    const names = [undefined, 'olga', 'audrey', 'nobody', 'ghost'];
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => unlock(h!, names[i % names.length], `guess ${i}`)));
    clearInterval(sampler);
    expect(replies.every((r) => r.status === 401)).toBe(true);
    expect(most).toBe(SCRYPT_CONCURRENCY);
    expect(ids.checksRunning).toBe(0);
  });

  it('a disabled account no longer unlocks and its live sessions end; the legacy admin cannot be disabled here', async () => {
    h = await withAccounts();
    const olga = await tokenOf(h, 'olga', OLGA);
    const r = await post(h, '/operators/olga/disable', {}, admin(h));
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ name: 'olga', disabled: true });
    expect((await raw(h, 'GET', '/wallets', { token: olga })).status).toBe(401);
    const again = await unlock(h, 'olga', OLGA);
    expect(again.status).toBe(401);
    expect(again.body.error.data.reason).toBe('passphrase');
    expect((await post(h, '/operators/operator/disable', {}, admin(h))).status).toBe(400);
    expect((await post(h, '/operators/nobody/disable', {}, admin(h))).status).toBe(404);
    // Survives a restart (it is in state.json).
    await h.restart();
    expect((await unlock(h, 'olga', OLGA)).status).toBe(401);
  });

  it('refuses a duplicate or reserved name, a bad role or name, a short passphrase, each naming the field', async () => {
    h = await withAccounts();
    const cases: [unknown, string][] = [
      [{ name: 'olga', role: 'operator', passphrase: 'another one 123' }, 'name'],
      [{ name: 'operator', role: 'admin', passphrase: 'another one 123' }, 'name'],
      [{ name: 'Olga', role: 'operator', passphrase: 'another one 123' }, 'name'],
      [{ name: 'x', role: 'root', passphrase: 'another one 123' }, 'role'],
      [{ name: 'x', role: 'auditor', passphrase: 'short' }, 'passphrase'],
    ];
    for (const [body, field] of cases) {
      const r = await post(h, '/operators', body, admin(h));
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.data.path).toBe(field);
    }
  });

  it('attack: an auditor tries to execute (or approve, cancel, create, manage)', async () => {
    h = await withAccounts();
    const audrey = await tokenOf(h, 'audrey', AUDREY);
    const intent = await h.client.createIntent(intentBody(h));
    for (const [path, body] of [
      [`/intent/${intent.intentId}/execute`, {}],
      [`/intent/${intent.intentId}/approve`, {}],
      [`/intent/${intent.intentId}/cancel`, {}],
      ['/intent', intentBody(h)],
      ['/operators', { name: 'evil', role: 'admin', passphrase: 'evil passphrase' }],
      ['/api-keys', { bound_to: 'agent:evil', expires_at: h.clock.now + 60 }],
    ] as const) {
      const r = await post(h, path, body, audrey);
      expect(r.status, path).toBe(403);
      expect(r.body.error.data.reason).toBe('forbidden');
    }
    expect((await h.client.intent(intent.intentId)).status).toBe('allowed');
    // Reads are open to it: receipts, events, the chain check.
    for (const path of ['/ledger/recent', '/events', '/ledger/verify', `/intent/${intent.intentId}`, '/api-keys']) {
      expect((await raw(h, 'GET', path, { token: audrey })).status, path).toBe(200);
    }
  });

  it('an operator (role) may not manage accounts, keys or webhooks', async () => {
    h = await withAccounts();
    const olga = await tokenOf(h, 'olga', OLGA);
    for (const [path, body] of [
      ['/operators', { name: 'mallory', role: 'admin', passphrase: 'mallory passphrase' }],
      ['/operators/audrey/disable', {}],
      ['/api-keys', { bound_to: 'agent:bot', expires_at: h.clock.now + 60 }],
      ['/webhooks', { url: 'https://hooks.example/x' }],
    ] as const) {
      expect((await post(h, path, body, olga)).status, path).toBe(403);
    }
  });
});

describe('API keys', () => {
  it('a key creates intents as its binding, in its wallets, with no session; it is shown once and stored as a digest', async () => {
    h = await setup();
    const { id, key, body } = await createKey(h, { bound_to: 'agent:bot', wallets: ['ops'], label: 'trading bot' });
    expect(parseApiKey(key)).toEqual({ id, secret: expect.any(String) });
    expect(Buffer.from(parseApiKey(key)!.secret, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(body).toMatchObject({ bound_to: 'agent:bot', wallets: ['ops'], revoked: false, expired: false });
    const secret = parseApiKey(key)!.secret;
    const file = readFileSync(join(h.dir, 'state.json'), 'utf8');
    expect(file).not.toContain(secret);
    expect(file).toContain(JSON.parse(file).api_keys[0].digest);
    const listed = (await raw(h, 'GET', '/api-keys', { token: admin(h) })).body.api_keys;
    expect(listed).toEqual([expect.objectContaining({ id, bound_to: 'agent:bot' })]);
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(JSON.stringify(listed)).not.toContain('digest');

    const created = await post(h, '/intent', intentBody(h), key);
    expect(created.status, created.text).toBe(200);
    const same = await post(h, '/intent', intentBody(h, { initiator: 'agent:bot' }), key);
    expect(same.status, same.text).toBe(200);
    const read = await raw(h, 'GET', `/intent/${created.body.intentId}`, { token: key });
    expect(read.status).toBe(200);
    expect(read.body.intent.initiator).toBe('agent:bot');
    // Its receipt and events name the key as the actor.
    const r = (await recent(h)).find((x) => x.intentId === created.body.intentId && x.kind === 'intent.created');
    expect(r?.actor).toBe(`apikey:${id}`);
    const events = (await raw(h, 'GET', `/events?intent=${created.body.intentId}`, { token: admin(h) })).body.events;
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e.actor).toBe(`apikey:${id}`);
    // It reads only intents of its own binding.
    const operators = await h.client.createIntent(intentBody(h));
    expect((await raw(h, 'GET', `/intent/${operators.intentId}`, { token: key })).status).toBe(403);
  });

  it('an app: binding initiates as app:<id>', async () => {
    h = await setup();
    const { key } = await createKey(h, { bound_to: 'app:billing' });
    const created = await post(h, '/intent', intentBody(h), key);
    expect(created.status, created.text).toBe(200);
    expect((await h.client.intent(created.body.intentId)).intent.initiator).toBe('app:billing');
  });

  it('attack: an API key used on a wallet outside its scope', async () => {
    h = await setup();
    await addWallet(h, 'treasury');
    const { key } = await createKey(h, { bound_to: 'agent:bot', wallets: ['ops'] });
    const r = await post(h, '/intent', intentBody(h, { wallet: 'treasury' }), key);
    expect(r.status).toBe(403);
    expect(r.body.error.data.reason).toBe('forbidden');
    // The operator's intent in treasury is not readable through the key either.
    const theirs = await h.client.createIntent(intentBody(h, { wallet: 'treasury', initiator: 'agent:bot' }));
    expect((await raw(h, 'GET', `/intent/${theirs.intentId}`, { token: key })).status).toBe(403);
    // A key with no wallet list may use any wallet.
    const { key: wide } = await createKey(h, { bound_to: 'agent:bot' });
    expect((await post(h, '/intent', intentBody(h, { wallet: 'treasury' }), wide)).status).toBe(200);
    // A scope naming an unknown wallet is refused at creation.
    const bad = await post(h, '/api-keys', { bound_to: 'agent:bot', wallets: ['ops', 'nowhere'], expires_at: h.clock.now + 60 }, admin(h));
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.path).toBe('wallets.1');
  });

  it('attack: an API key used after it expired', async () => {
    h = await setup();
    const { key } = await createKey(h, { bound_to: 'agent:bot', expires_at: h.clock.now + 60 });
    expect((await post(h, '/intent', intentBody(h), key)).status).toBe(200);
    h.clock.now += 60;
    const r = await post(h, '/intent', intentBody(h), key);
    expect(r.status).toBe(401);
    expect(r.body.error.data.reason).toBe('expired');
    // An expiry in the past, or beyond the longest lifetime, is refused at creation.
    for (const expires_at of [h.clock.now, h.clock.now + 367 * 86_400]) {
      const c = await post(h, '/api-keys', { bound_to: 'agent:bot', expires_at }, admin(h));
      expect(c.status).toBe(400);
      expect(c.body.error.data.path).toBe('expires_at');
    }
  });

  it('attack: an API key used after it was revoked', async () => {
    h = await setup();
    const { id, key } = await createKey(h, { bound_to: 'agent:bot' });
    expect((await post(h, '/intent', intentBody(h), key)).status).toBe(200);
    const rv = await post(h, `/api-keys/${id}/revoke`, {}, admin(h));
    expect(rv.status, rv.text).toBe(200);
    expect(rv.body).toMatchObject({ id, revoked: true });
    const r = await post(h, '/intent', intentBody(h), key);
    expect(r.status).toBe(401);
    expect(r.body.error.data.reason).toBe('revoked');
    await h.restart();
    expect((await post(h, '/intent', intentBody(h), key)).status).toBe(401);
    const kinds = (await recent(h, 5)).map((x) => `${x.kind}:${x.actor}`);
    expect(kinds).toContain('apikey.revoked:operator:operator');
  });

  it('attack: an API key calls a non-initiator route', async () => {
    h = await setup();
    const { key } = await createKey(h, { bound_to: 'agent:bot' });
    const intent = (await post(h, '/intent', intentBody(h), key)).body.intentId as string;
    const cases: [string, string, unknown?][] = [
      ['POST', `/intent/${intent}/execute`, {}],
      ['POST', `/intent/${intent}/approve`, {}],
      ['POST', `/intent/${intent}/cancel`, {}],
      ['POST', '/api-keys', { bound_to: 'agent:bot', expires_at: h.clock.now + 60 }],
      ['POST', '/operators', { name: 'bot', role: 'admin', passphrase: 'bot passphrase 1' }],
      ['POST', '/session/lock', {}],
      ['GET', '/intents'],
      ['GET', '/events'],
      ['GET', '/wallets'],
      ['GET', '/ledger/recent'],
    ];
    for (const [method, path, body] of cases) {
      const r = await raw(h, method, path, { token: key, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error.data.reason).toBe('forbidden');
    }
    expect((await h.client.intent(intent)).status).toBe('allowed');
  });

  it('attack: an API key names another initiator', async () => {
    h = await setup();
    const { key } = await createKey(h, { bound_to: 'agent:bot' });
    for (const initiator of ['operator', 'agent:other', 'device:alice', 'app:bot', 'Agent:bot']) {
      const r = await post(h, '/intent', intentBody(h, { initiator }), key);
      expect(r.status, initiator).toBe(403);
      expect(r.body.error.data.reason).toBe('forbidden');
    }
  });

  it('attack: a forged key (a real id with another secret, an unknown id, a malformed key) is refused alike', async () => {
    h = await setup();
    const { id } = await createKey(h, { bound_to: 'agent:bot' });
    const forged = [`vk_${id}_${Buffer.alloc(32, 1).toString('base64url')}`, `vk_${'0'.repeat(16)}_${Buffer.alloc(32, 1).toString('base64url')}`, `vk_${id}_short`, 'vk_'];
    for (const key of forged) {
      const r = await post(h, '/intent', intentBody(h), key);
      expect(r.status, key).toBe(401);
      expect(r.body.error.data.reason).toBe('invalid');
    }
  });

  it('refuses a binding outside agent:<name> / app:<id>, naming bound_to; and a label with control characters', async () => {
    h = await setup();
    const label = await post(h, '/api-keys', { bound_to: 'agent:bot', expires_at: h.clock.now + 60, label: 'evil\u202etxt' }, admin(h));
    expect(label.status).toBe(400);
    expect(label.body.error.data.path).toBe('label');
    for (const bound_to of ['operator', 'device:alice', 'agent:', 'agent:Bot', 'app:a b']) {
      const r = await post(h, '/api-keys', { bound_to, expires_at: h.clock.now + 60 }, admin(h));
      expect(r.status, bound_to).toBe(400);
      expect(r.body.error.data.path).toBe('bound_to');
    }
  });
});

describe('the actor of every receipt and event', () => {
  it('names the named operator, the legacy admin, the system (expiry), and the admin who opened a pairing', async () => {
    h = await withAccounts({ controlPlane: {} });
    const olga = await tokenOf(h, 'olga', OLGA);
    const mine = await post(h, '/intent', intentBody(h), olga);
    const legacy = await h.client.createIntent(intentBody(h));
    const receipts = await recent(h, 20);
    expect(receipts.find((r) => r.intentId === mine.body.intentId)?.actor).toBe('operator:olga');
    expect(receipts.find((r) => r.intentId === legacy.intentId)?.actor).toBe('operator:operator');
    expect(receipts.filter((r) => r.kind === 'operator.created').map((r) => r.actor)).toEqual(['operator:operator', 'operator:operator']);
    // The admin opens a pairing code; the device's claim (no session) is the admin's act.
    const p = await h.client.pairCreate({ role: 'viewer', label: 'tablet' });
    const k = generateEd25519KeyPair();
    const signature = Buffer.from(signEd25519(Buffer.from(p.challenge, 'hex'), k.secretKey)).toString('hex');
    expect((await post(h, '/pair/claim', { code: p.code, public_key: k.publicKeyHex, signature, label: 'tablet' }, null)).status).toBe(200);
    expect((await recent(h, 1))[0]).toMatchObject({ kind: 'device.paired', actor: 'operator:operator' });
    // Expiry is the clock's doing, whoever's read noticed it (sessions end too: unlock again).
    h.clock.now += 8 * 86_400;
    const olgaAgain = await tokenOf(h, 'olga', OLGA);
    await h.client.unlock(PASSPHRASE);
    expect((await raw(h, 'GET', `/intent/${mine.body.intentId}`, { token: olgaAgain })).body.status).toBe('expired');
    const expired = (await recent(h, 5)).find((r) => r.kind === 'intent.expired' && r.intentId === mine.body.intentId);
    expect(expired?.actor).toBe('system');
    const evts = (await raw(h, 'GET', `/events?intent=${mine.body.intentId}`, { token: olgaAgain })).body.events;
    expect(evts.map((e: { type: string; actor: string }) => `${e.type}:${e.actor}`)).toEqual(['intent.created:operator:olga', 'intent.expired:system', 'intent.status_changed:system']);
    // Every event in the log carries an actor.
    const all = (await raw(h, 'GET', '/events?limit=1000', { token: admin(h) })).body.events;
    for (const e of all) expect(e.actor, e.type).toMatch(/^(system|operator:[a-z0-9._-]+|device:.+|apikey:[0-9a-f]{16})$/);
    expect((await raw(h, 'GET', '/ledger/verify', { token: admin(h) })).body.verified).toBe(true);
  });
});
