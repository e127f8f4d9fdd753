/**
 * Who may call what (access.ts), cell by cell, and the device API: a paired device signs in with
 * its own key, sees what its role and the policies give it, and acts only as itself.
 */
import { deviceSessionMessage, generateEd25519KeyPair, signApproval, signEd25519, type Rule } from '@vault/sdk';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACCESS, accessTableMarkdown, allowed, ROLES, type RouteKey } from '../../src/control-plane/access.js';
import { DEVICE_CHALLENGE_TTL_SECONDS } from '../../src/control-plane/device-auth.js';
import { PASSPHRASE, raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Dev = { id: string; role: 'viewer' | 'approver' | 'initiator'; secretKey: Uint8Array; publicKeyHex: string };
const device = (id: string, role: Dev['role']): Dev => ({ id, role, ...generateEd25519KeyPair() });

/** alice is counted by the policy; bob is an approver no rule names; vera views; ian initiates. */
const ALICE = device('alice', 'approver');
const BOB = device('bob', 'approver');
const VERA = device('vera', 'viewer');
const IAN = device('ian', 'initiator');
const DEVICES = [ALICE, BOB, VERA, IAN];
const RULES: Rule[] = [{ rule: 'approval_threshold', above: '100', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] }];

async function harness(): Promise<Harness> {
  return setup({
    rules: RULES,
    approverIds: ['alice'],
    state: { devices: DEVICES.map((d) => ({ id: d.id, role: d.role, label: d.id, public_key: d.publicKeyHex, paired_at: 1_767_225_600, revoked_at: null })) },
  });
}

/** A signed approval by `d` (its own key), dated now. */
const approveAs = (h: Harness, d: Dev, intent: string, verdict: 'approve' | 'reject' = 'approve') =>
  signApproval({ approver_id: d.id, intent, verdict, at: h.clock.now, strong_auth: false }, d.secretKey);

async function streamStatus(h: Harness, path: string, token: string): Promise<{ status: number; body: any; text: string }> {
  const ac = new AbortController();
  const res = await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
  const text = res.status === 200 ? '' : await res.text();
  ac.abort();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

async function post(h: Harness, path: string, body: unknown, token: string | null = null) {
  return raw(h, 'POST', path, { token, body: JSON.stringify(body) });
}

/** Challenge, signature, session: the device API's sign-in. */
async function signIn(h: Harness, d: Dev, key: Uint8Array = d.secretKey): Promise<{ status: number; token?: string; body: any }> {
  const c = await post(h, '/device/challenge', { device_id: d.id });
  if (c.status !== 200) return { status: c.status, body: c.body };
  const signature = Buffer.from(signEd25519(deviceSessionMessage({ device: d.id, challenge: c.body.challenge }), key)).toString('hex');
  const s = await post(h, '/device/session', { device_id: d.id, challenge: c.body.challenge, signature });
  return { status: s.status, body: s.body, ...(s.status === 200 ? { token: s.body.token as string } : {}) };
}

describe('device sign-in', () => {
  it("opens a session with the device's own key, carrying its id and role", async () => {
    h = await harness();
    const s = await signIn(h, VERA);
    expect(s.status).toBe(200);
    expect(s.body.device).toEqual({ id: 'vera', role: 'viewer' });
    expect((await raw(h, 'GET', '/wallets', { token: s.token! })).status).toBe(200);
  });

  it("attack: a device signs in with another device's key", async () => {
    h = await harness();
    const s = await signIn(h, ALICE, BOB.secretKey);
    expect(s.status).toBe(401);
    expect(s.body.error.data).toMatchObject({ reason: 'bad_signature' });
  });

  it('attack: a challenge is replayed, used for another device, or used after it expired', async () => {
    h = await harness();
    const c = await post(h, '/device/challenge', { device_id: 'vera' });
    const sign = (d: Dev) => Buffer.from(signEd25519(deviceSessionMessage({ device: d.id, challenge: c.body.challenge }), d.secretKey)).toString('hex');
    // Issued for vera, presented by ian (with ian's own valid signature): refused, and burned.
    expect((await post(h, '/device/session', { device_id: 'ian', challenge: c.body.challenge, signature: sign(IAN) })).status).toBe(401);
    expect((await post(h, '/device/session', { device_id: 'vera', challenge: c.body.challenge, signature: sign(VERA) })).status).toBe(401);
    const c2 = await post(h, '/device/challenge', { device_id: 'vera' });
    const sig2 = Buffer.from(signEd25519(deviceSessionMessage({ device: 'vera', challenge: c2.body.challenge }), VERA.secretKey)).toString('hex');
    expect((await post(h, '/device/session', { device_id: 'vera', challenge: c2.body.challenge, signature: sig2 })).status).toBe(200);
    expect((await post(h, '/device/session', { device_id: 'vera', challenge: c2.body.challenge, signature: sig2 })).status).toBe(401);
    const c3 = await post(h, '/device/challenge', { device_id: 'vera' });
    h.clock.now += DEVICE_CHALLENGE_TTL_SECONDS;
    const sig3 = Buffer.from(signEd25519(deviceSessionMessage({ device: 'vera', challenge: c3.body.challenge }), VERA.secretKey)).toString('hex');
    expect((await post(h, '/device/session', { device_id: 'vera', challenge: c3.body.challenge, signature: sig3 })).body.error.data).toMatchObject({ reason: 'challenge' });
  });

  it('attack: a signature made for anything else (the raw challenge) is not a device session', async () => {
    h = await harness();
    const c = await post(h, '/device/challenge', { device_id: 'vera' });
    const signature = Buffer.from(signEd25519(Buffer.from(c.body.challenge, 'hex'), VERA.secretKey)).toString('hex');
    expect((await post(h, '/device/session', { device_id: 'vera', challenge: c.body.challenge, signature })).status).toBe(401);
  });

  it("attack: a revoked device's live session keeps working", async () => {
    h = await harness();
    const s = await signIn(h, VERA);
    expect((await raw(h, 'GET', '/wallets', { token: s.token! })).status).toBe(200);
    expect((await post(h, '/devices/vera/revoke', {}, h.client.getToken())).status).toBe(200);
    expect((await raw(h, 'GET', '/wallets', { token: s.token! })).status).toBe(401);
    expect((await signIn(h, VERA)).status).toBe(401);
    expect((await post(h, '/device/challenge', { device_id: 'nobody' })).status).toBe(401);
  });
});

describe('the access table, cell by cell', () => {
  let t: Harness;
  /** An API key bound to agent:bot in wallet ops, made by the admin through the API. */
  let apiKey: string;
  beforeAll(async () => {
    t = await harness();
    const admin = t.client.getToken();
    expect((await post(t, '/operators', { name: 'olga', role: 'operator', passphrase: 'olga passphrase 1' }, admin)).status).toBe(200);
    expect((await post(t, '/operators', { name: 'audrey', role: 'auditor', passphrase: 'audrey passphrase' }, admin)).status).toBe(200);
    apiKey = (await post(t, '/api-keys', { bound_to: 'agent:bot', wallets: ['ops'], expires_at: t.clock.now + 86_400 }, admin)).body.key;
  });
  /** A fresh credential of `role`: a session (passphrase or device key) or the API key. */
  const credential = async (role: string): Promise<string> => {
    if (role === 'admin') return (await t.client.unlock(PASSPHRASE)).token;
    if (role === 'operator') return (await post(t, '/session/unlock', { name: 'olga', passphrase: 'olga passphrase 1' })).body.token;
    if (role === 'auditor') return (await post(t, '/session/unlock', { name: 'audrey', passphrase: 'audrey passphrase' })).body.token;
    if (role === 'apikey') return apiKey;
    return (await signIn(t, DEVICES.find((d) => `device:${d.role}` === role)!)).token!;
  };
  afterAll(() => t.close());
  const MISSING_INTENT = `int_${'0'.repeat(64)}`;
  const concrete = (route: RouteKey) => {
    const [method, template] = route.split(' ') as [string, string];
    const path = template
      .replace('{wallet}', 'ops')
      .replace('/wallets/{id}', '/wallets/ops')
      .replace('/devices/{id}', '/devices/nobody')
      .replace('{name}', 'nobody')
      .replace('/api-keys/{id}', `/api-keys/${'0'.repeat(16)}`)
      .replace('/webhooks/{id}', `/webhooks/wh_${'0'.repeat(24)}`)
      .replace('{delivery}', 'evt_0000000000000001')
      .replace('{id}', MISSING_INTENT);
    return { method, path };
  };
  const bodies: Partial<Record<RouteKey, unknown>> = {
    'POST /intent': { wallet: 'ops', destination: 'not-an-address', amount: '1' },
    'POST /intent/{id}/approve-signed': {},
    'POST /pair/create': { role: 'viewer', label: 'x' },
  };

  for (const route of Object.keys(ACCESS) as RouteKey[]) {
    for (const role of ROLES) {
      it(`${route} as ${role}: ${allowed(route, role) ? 'allowed' : 'forbidden'}`, async () => {
        const token = await credential(role);
        const { method, path } = concrete(route);
        const body = method === 'POST' ? JSON.stringify(bodies[route] ?? {}) : undefined;
        // The event stream never ends: look at its status and headers only.
        const r = path.endsWith('/events/stream') ? await streamStatus(t, path, token) : await raw(t, method, path, { token, ...(body !== undefined ? { body } : {}) });
        const isForbidden = r.status === 403 && r.body?.error?.data?.reason === 'forbidden';
        expect(isForbidden, `${route} as ${role}: ${r.status} ${r.text.slice(0, 200)}`).toBe(!allowed(route, role));
        if (allowed(route, role)) expect(r.status, r.text.slice(0, 200)).not.toBe(401);
      });
    }
  }

});

describe('devices act as themselves', () => {
  it('an initiator creates intents as device:<id>, reads its own and no one else’s', async () => {
    h = await harness();
    const ian = (await signIn(h, IAN)).token!;
    const mine = await post(h, '/intent', { wallet: 'ops', destination: h.dest(), amount: '5' }, ian);
    expect(mine.status).toBe(200);
    expect((await raw(h, 'GET', `/intent/${mine.body.intentId}`, { token: ian })).body.intent.initiator).toBe('device:ian');
    expect((await raw(h, 'GET', '/ledger/recent?limit=1', { token: h.client.getToken() })).body.receipts[0]).toMatchObject({ kind: 'intent.created', actor: 'device:ian' });
    const operators = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '6' });
    expect((await raw(h, 'GET', `/intent/${operators.intentId}`, { token: ian })).status).toBe(403);
    const list = await raw(h, 'GET', '/device/intents', { token: ian });
    expect(list.body.intents.map((i: { intentId: string }) => i.intentId)).toEqual([mine.body.intentId]);
  });

  it('attack: a device session creates an intent as another initiator', async () => {
    h = await harness();
    const ian = (await signIn(h, IAN)).token!;
    for (const initiator of ['device:alice', 'agent:bot', 'operator']) {
      const r = await post(h, '/intent', { wallet: 'ops', destination: h.dest(), amount: '5', initiator }, ian);
      expect(r.status, initiator).toBe(403);
      expect(r.body.error.data.reason).toBe('forbidden');
    }
  });

  it('an approver sees its queue with what it needs, approves as itself, and leaves the queue', async () => {
    h = await harness();
    const pending = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '500' });
    expect(pending.status).toBe('pending_approvals');
    await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5' }); // allowed: not in the queue
    const alice = (await signIn(h, ALICE)).token!;
    const queue = await raw(h, 'GET', '/device/intents', { token: alice });
    expect(queue.body.intents.map((i: { intentId: string }) => i.intentId)).toEqual([pending.intentId]);
    expect(queue.body.intents[0]).toMatchObject({ status: 'pending_approvals', intent: { amount: '500' }, decision: { decision: 'require_approvals' } });
    const r = await post(h, `/intent/${pending.intentId}/approve-signed`, approveAs(h, ALICE, pending.intentId), alice);
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('allowed');
    expect((await raw(h, 'GET', '/device/intents', { token: alice })).body.intents).toEqual([]);
    // The receipt and its events name the device that acted.
    const receipts = (await raw(h, 'GET', '/ledger/recent?limit=1', { token: h.client.getToken() })).body.receipts;
    expect(receipts[0]).toMatchObject({ kind: 'intent.approval', actor: 'device:alice' });
    const events = (await raw(h, 'GET', `/events?intent=${pending.intentId}`, { token: h.client.getToken() })).body.events;
    expect(events.map((e: { type: string; actor: string }) => `${e.type}:${e.actor}`)).toEqual(['intent.created:operator:operator', 'approval.recorded:device:alice', 'intent.status_changed:device:alice']);
  });

  it("attack: a device posts an approval under another approver's id", async () => {
    h = await harness();
    const pending = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '500' });
    const bob = (await signIn(h, BOB)).token!;
    // bob relays alice's genuinely signed approval: the session says bob, so it is not bob's to post.
    const r = await post(h, `/intent/${pending.intentId}/approve-signed`, approveAs(h, ALICE, pending.intentId), bob);
    expect(r.status).toBe(403);
    expect(r.body.error.data.reason).toBe('forbidden');
  });

  it('an approval no rule counts is refused with the reason, not recorded with weight 0', async () => {
    h = await harness();
    const pending = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '500' });
    const approval = approveAs(h, BOB, pending.intentId, 'reject');
    const r = await post(h, `/intent/${pending.intentId}/approve-signed`, approval, h.client.getToken());
    expect(r.status).toBe(403);
    expect(r.body.error.data).toMatchObject({ reason: 'not_counted', approver_id: 'bob', wallet: 'ops' });
    // Nothing was written: still pending, no approval recorded (a reject would have closed it).
    expect(await h.client.intent(pending.intentId)).toMatchObject({ status: 'pending_approvals', approvals: [] });
    // And bob's own queue is empty, and he cannot read the wallet's intents.
    const bobToken = (await signIn(h, BOB)).token!;
    expect((await raw(h, 'GET', '/device/intents', { token: bobToken })).body.intents).toEqual([]);
    expect((await raw(h, 'GET', `/intent/${pending.intentId}`, { token: bobToken })).status).toBe(403);
  });

  it('pairing tells the truth: the claim names the wallets whose policies count the device', async () => {
    h = await harness();
    const pair = async () => {
      const p = await h!.client.pairCreate({ role: 'approver', label: 'phone' });
      const k = generateEd25519KeyPair();
      const signature = Buffer.from(signEd25519(Buffer.from(p.challenge, 'hex'), k.secretKey)).toString('hex');
      return (await post(h!, '/pair/claim', { code: p.code, public_key: k.publicKeyHex, signature, label: 'phone' })).body;
    };
    const first = await pair();
    expect(first).toMatchObject({ paired: true, counted_by: [] });
    expect(first.note).toContain(`no wallet's policy counts ${first.device.id}`);
  });
});

/** Reads an SSE stream's events until `until(event)` holds; returns them with the stream still open. */
async function readEvents(h: Harness, token: string, until: (e: { type: string; subject: Record<string, string> }) => boolean) {
  const ac = new AbortController();
  const res = await fetch(`${h.url}/device/events/stream`, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: { type: string; subject: Record<string, string> }[] = [];
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const data = buf.slice(0, i).split('\n').find((l) => l.startsWith('data: '));
      buf = buf.slice(i + 2);
      if (!data) continue;
      const e = JSON.parse(data.slice(6));
      events.push(e);
      if (until(e)) {
        ac.abort();
        return events;
      }
    }
  }
  return events;
}

describe('GET /device/events/stream', () => {
  it("attack: a device reads events of intents it may not see (another wallet's approver, another initiator, another device's pairing)", async () => {
    h = await harness();
    const pending = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '500' });
    const ian = (await signIn(h, IAN)).token!;
    const own = await post(h, '/intent', { wallet: 'ops', destination: h.dest(), amount: '5' }, ian);
    // A fresh approver no rule counts: its own pairing is the one event it may see.
    const p = await h.client.pairCreate({ role: 'approver', label: 'new phone' });
    const k = generateEd25519KeyPair();
    const claimed = await post(h, '/pair/claim', { code: p.code, public_key: k.publicKeyHex, signature: Buffer.from(signEd25519(Buffer.from(p.challenge, 'hex'), k.secretKey)).toString('hex'), label: 'new phone' });
    const fresh: Dev = { id: claimed.body.device.id, role: 'approver', secretKey: k.secretKey, publicKeyHex: k.publicKeyHex };
    const last = await post(h, '/intent', { wallet: 'ops', destination: h.dest(), amount: '6' }, ian);
    const isLast = (e: { subject: Record<string, string> }) => e.subject['intent'] === last.body.intentId;
    const intentsOf = (events: { subject: Record<string, string> }[]) => [...new Set(events.map((e) => e.subject['intent'] ?? `device:${e.subject['device']}`))];

    const alice = await readEvents(h, (await signIn(h, ALICE)).token!, isLast);
    expect(intentsOf(alice)).toEqual([pending.intentId, own.body.intentId, last.body.intentId]);
    const ians = await readEvents(h, ian, isLast);
    expect(intentsOf(ians)).toEqual([own.body.intentId, last.body.intentId]);
    const vera = await readEvents(h, (await signIn(h, VERA)).token!, isLast);
    expect(intentsOf(vera)).toEqual([pending.intentId, own.body.intentId, `device:${fresh.id}`, last.body.intentId]);
    const mine = await readEvents(h, (await signIn(h, fresh)).token!, (e) => e.type === 'device.paired');
    expect(mine.map((e) => [e.type, e.subject['device']])).toEqual([['device.paired', fresh.id]]);
    // The server's filter over the whole log, not only what the stream had sent by then.
    const log = h.running.cp.store.eventsPage(0, 1000).events;
    expect(log.filter((e) => h!.running.cp.deviceMaySee({ kind: 'device', id: fresh.id, role: 'approver' }, e)).map((e) => e.type)).toEqual(['device.paired']);
    expect(log.filter((e) => h!.running.cp.deviceMaySee({ kind: 'device', id: 'bob', role: 'approver' }, e))).toEqual([]);
  });

  it('is for devices: the operator is sent to GET /events/stream', async () => {
    h = await harness();
    const r = await raw(h, 'GET', '/device/events/stream');
    expect(r.status).toBe(403);
    expect(r.body.error.data.reason).toBe('forbidden');
  });
});

describe('the README', () => {
  it('shows the access table the server enforces', () => {
    const readme = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../README.md'), 'utf8');
    expect(readme).toContain(accessTableMarkdown());
  });
});
