/**
 * The event log over real sockets: every change of state has its event, written with its receipt
 * (the outbox), served in order by GET /events and GET /events/stream with the same filters.
 * The receipt log is the independent witness: every event names a receipt of the chain and every
 * receipt has its events.
 */
import {
  EVENT_TYPES,
  eventId,
  fromHex,
  generateEd25519KeyPair,
  PROJECTED_RECEIPT_KINDS,
  signEd25519,
  toHex,
  VaultEventSchema,
  type ReceiptRecord,
  type Rule,
  type VaultEvent,
} from '@vault/sdk';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatEventLine } from '../../src/cli/events-tail.js';
import { ReceiptSigner } from '../../src/control-plane/secrets.js';
import { IntentStore } from '../../src/control-plane/store.js';
import { Writer } from '../../src/control-plane/writer.js';
import { raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

const here = dirname(fileURLToPath(import.meta.url));

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const threshold: Rule = {
  rule: 'approval_threshold',
  above: '1000',
  required_weight: 2,
  approvers: [
    { id: 'alice', weight: 1 },
    { id: 'bob', weight: 1 },
    { id: 'carol', weight: 1 },
  ],
};

async function allEvents(hh: Harness, query = ''): Promise<VaultEvent[]> {
  const out: VaultEvent[] = [];
  let after = '';
  for (;;) {
    const r = await raw(hh, 'GET', `/events?limit=1000${after ? `&after=${after}` : ''}${query}`);
    expect(r.status, r.text).toBe(200);
    out.push(...(r.body.events as VaultEvent[]));
    if (!r.body.has_more) return out;
    after = r.body.next;
  }
}

async function receipts(hh: Harness): Promise<ReceiptRecord[]> {
  const r = await raw(hh, 'GET', '/ledger/recent?limit=1000');
  return (r.body.receipts as ReceiptRecord[]).reverse();
}

/** Each receipt has at least one event and each event names a receipt of the chain, in chain order. */
function expectOutbox(events: VaultEvent[], chain: ReceiptRecord[]): void {
  const byHash = new Map(chain.map((r) => [r.hash, r]));
  for (const e of events) {
    expect(byHash.has(e.receipt as string), `event ${e.id} ${e.type} names no receipt`).toBe(true);
    expect(e.at).toBe(byHash.get(e.receipt as string)!.at);
  }
  const withEvents = new Set(events.map((e) => e.receipt));
  for (const r of chain) expect(withEvents.has(r.hash), `receipt ${r.seq} ${r.kind} has no event`).toBe(true);
  // Events follow the chain's order.
  const order = events.map((e) => byHash.get(e.receipt as string)!.seq);
  expect([...order].sort((a, b) => a - b)).toEqual(order);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
}

/** A raw SSE reader over fetch: the frames as they arrive. */
async function openStream(hh: Harness, query = '', headers: Record<string, string> = {}) {
  const ac = new AbortController();
  const res = await fetch(`${hh.url}/events/stream${query}`, { headers: { authorization: `Bearer ${hh.client.getToken()}`, ...headers }, signal: ac.signal });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  let ended = false;
  const events: VaultEvent[] = [];
  const frames: string[] = [];
  const pump = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += dec.decode(value, { stream: true });
        let i: number;
        while ((i = text.indexOf('\n\n')) >= 0) {
          const frame = text.slice(0, i);
          text = text.slice(i + 2);
          const data = frame.split('\n').find((l) => l.startsWith('data: '));
          const id = frame.split('\n').find((l) => l.startsWith('id: '));
          if (data) {
            const e = VaultEventSchema.parse(JSON.parse(data.slice(6)));
            expect(id).toBe(`id: ${e.id}`);
            events.push(e);
          }
          frames.push(frame);
        }
      }
    } catch {
      // aborted or cut off
    }
    ended = true;
  })();
  return {
    res,
    events,
    frames,
    get ended() {
      return ended;
    },
    async until(pred: () => boolean, ms = 20_000) {
      const t0 = Date.now();
      while (!pred()) {
        if (Date.now() - t0 > ms) throw new Error(`timeout; got ${events.length} events, ended=${ended}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      ac.abort();
      await pump;
    },
  };
}

describe('the outbox', () => {
  it('every receipt kind the control plane can write has a projection', () => {
    const src = join(here, '../../src/control-plane');
    const kinds = new Set<string>();
    for (const f of readdirSync(src).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts') && !n.endsWith('.bench.ts'))) {
      for (const m of readFileSync(join(src, f), 'utf8').matchAll(/\b(?:receipt|draftReceipt)\(\s*'([^']+)'/g)) kinds.add(m[1]!);
    }
    expect(kinds.size).toBeGreaterThanOrEqual(12);
    for (const k of kinds) expect(PROJECTED_RECEIPT_KINDS, k).toContain(k);
  });

  it('fails closed: a receipt kind with no projection is refused before it is chained, and nothing is written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-events-'));
    const store = new IntentStore(join(dir, 'store'), { sync: false });
    try {
      const writer = new Writer(store, new ReceiptSigner(new Uint8Array(32).fill(7)), () => 1_767_225_600, () => undefined);
      const head = writer.head;
      expect(() => writer.receipt('intent.mystery', { intentId: 'x' }, 'x')).toThrow(/no event projection/);
      expect(() => writer.draftReceipt('admin.mystery', {})).toThrow(/no event projection/);
      expect(writer.head).toBe(head);
      expect(writer.receiptCount).toBe(0);
      // A known kind goes through with its event, in the same commit.
      await writer.appendReceipt(writer.draftReceipt('state.reloaded', { state_digest: 'ab'.repeat(32) }));
      expect(store.lastReceipt()?.kind).toBe('state.reloaded');
      expect(store.eventsAfter(0, 10).map((e) => [e.seq, e.type, e.receipt])).toEqual([[1, 'state.reloaded', store.lastReceipt()?.hash]]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('listeners hear each commit after it is durable, in log order; a throwing listener cannot stop a commit', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }] });
    const cp = h.running.cp;
    const heard: VaultEvent[] = [];
    const off = cp.onEvents((events) => {
      // Announced only once readable from the log: the store already holds each one.
      for (const e of events) expect(cp.eventsAfter(e.seq - 1, 1)[0]).toEqual(e);
      heard.push(...events);
    });
    cp.onEvents(() => {
      throw new Error('a broken listener');
    });
    await Promise.all(Array.from({ length: 20 }, (_, i) => h!.client.createIntent({ wallet: 'ops', destination: h!.dest(), amount: String(10 + i) })));
    off();
    expect(heard.map((e) => e.seq)).toEqual(heard.map((_, i) => i + 1));
    expect(heard).toEqual(cp.eventsAfter(0, 100));
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '99' })).status).toBe('allowed');
  });
});

describe('a full lifecycle emits each event type in order', () => {
  it('create, approvals, execute to confirmed, awaiting signatures, pair, revoke, reload', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, threshold] });
    const live = await openStream(h);
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    await h.client.approveSigned(intentId, h.approve(intentId, 'alice'));
    await h.client.approveSigned(intentId, h.approve(intentId, 'bob'));
    expect((await h.client.execute(intentId)).status).toBe('confirmed');
    // Short of quorum: every signer is down.
    const short = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '7' });
    h.signer.mode.down = true;
    const awaiting = await h.client.execute(short.intentId).catch((e: unknown) => e);
    h.signer.mode.down = false;
    // Pair a device, revoke it, reload the state.
    const p = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    const key = generateEd25519KeyPair();
    const claimed = (await h.client.pairClaim({ code: p.code, public_key: key.publicKeyHex, signature: toHex(signEd25519(fromHex(p.challenge, 'c', 32), key.secretKey)), label: 'phone' })) as { device: { id: string } };
    await h.client.revokeDevice(claimed.device.id);
    await h.client.reload();
    // An operator account and an API key, made and taken away.
    const admin = h.client.getToken()!;
    const call = async (path: string, body: unknown) => {
      const r = await fetch(`${h!.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(r.status, path).toBe(200);
      return (await r.json()) as Record<string, unknown>;
    };
    await call('/operators', { name: 'olga', role: 'auditor', passphrase: 'olga passphrase 1' });
    await call('/operators/olga/disable', {});
    const keyId = (await call('/api-keys', { bound_to: 'agent:bot', wallets: ['ops'], expires_at: h.clock.now + 60, label: 'bot' }))['id'] as string;
    await call(`/api-keys/${keyId}/revoke`, {});

    const events = await allEvents(h);
    for (const e of events) expect(VaultEventSchema.safeParse(e).success).toBe(true);
    const mine = events.filter((e) => e.subject.intent === intentId);
    expect(mine.map((e) => e.type)).toEqual([
      'intent.created',
      'approval.recorded',
      'approval.recorded',
      'intent.status_changed',
      'intent.signing',
      'intent.signer_outcome',
      'intent.signer_outcome',
      'intent.signer_outcome',
      'intent.submitting',
      'intent.status_changed',
      'intent.confirmed',
      'intent.status_changed',
    ]);
    expect(mine[0]!.data).toMatchObject({ status: 'pending_approvals', decision: { required_weight: 2 } });
    expect(mine[1]).toMatchObject({ subject: { intent: intentId, wallet: 'ops', device: 'alice' }, data: { approver_id: 'alice', verdict: 'approve', status: 'pending_approvals' } });
    expect(mine[2]!.data).toMatchObject({ approver_id: 'bob', status: 'allowed' });
    expect(mine[3]!.data).toMatchObject({ from: 'pending_approvals', to: 'allowed' });
    // Two answers carry the quorum; the third member was not waited for.
    expect(mine.slice(5, 8).map((e) => e.data['ok']).sort()).toEqual([false, true, true]);
    expect(mine.slice(5, 8).find((e) => !e.data['ok'])?.data['detail']).toMatch(/^not awaited/);
    expect(mine[9]!.data).toMatchObject({ from: 'allowed', to: 'submitted' });
    expect(mine[10]!.data['txHash']).toBe(mine[8]!.data['txHash']);
    expect(mine[11]!.data).toMatchObject({ from: 'submitted', to: 'confirmed' });
    for (const e of mine) expect(e.subject.wallet).toBe('ops');

    const shortTypes = events.filter((e) => e.subject.intent === short.intentId).map((e) => e.type);
    expect(shortTypes[0]).toBe('intent.created');
    expect((awaiting as { status?: string }).status).toBe('awaiting_signatures');
    expect(shortTypes).toEqual(['intent.created', 'intent.signing', 'intent.signer_outcome', 'intent.signer_outcome', 'intent.signer_outcome', 'intent.awaiting_signatures']);
    expect(events.filter((e) => e.subject.intent === short.intentId && e.type === 'intent.signer_outcome').map((e) => e.data['ok'])).toEqual([false, false, false]);
    const rest = events.filter((e) => e.subject.intent === undefined);
    expect(rest.map((e) => [e.type, e.subject])).toEqual([
      ['device.paired', { device: claimed.device.id }],
      ['device.revoked', { device: claimed.device.id }],
      ['state.reloaded', { state: expect.stringMatching(/^[0-9a-f]{64}$/) }],
      ['operator.created', { operator: 'olga' }],
      ['operator.disabled', { operator: 'olga' }],
      ['apikey.created', { apikey: keyId }],
      ['apikey.revoked', { apikey: keyId }],
    ]);
    expect(rest[3]!.data).toEqual({ name: 'olga', role: 'auditor', created_at: h.clock.now });
    expect(rest[5]!.data).toEqual({ id: keyId, bound_to: 'agent:bot', wallets: ['ops'], expires_at: h.clock.now + 60, label: 'bot', created_at: h.clock.now });
    // Every event names who did it: here the first admin.
    for (const e of events) expect(e.actor, e.type).toBe('operator:operator');
    expect(rest[0]!.data).toMatchObject({ id: claimed.device.id, role: 'approver', public_key: key.publicKeyHex });

    // The chain is the witness; the live stream saw exactly the log.
    expectOutbox(events, await receipts(h));
    await live.until(() => live.events.length === events.length);
    expect(live.events).toEqual(events);
    await live.close();
    // Every type this run could reach was emitted (cancel, expiry and failures have their own tests).
    const reached = new Set(events.map((e) => e.type));
    // Change sets need an admin policy: integration/change-sets.test.ts reads their events.
    const elsewhere = ['intent.cancelled', 'intent.expired', 'intent.failed', 'approval.unsigned_recorded', 'webhook.created', 'webhook.deleted', 'change.proposed', 'change.verdict_recorded', 'change.applied'];
    for (const t of Object.keys(EVENT_TYPES).filter((t) => !elsewhere.includes(t))) expect(reached, t).toContain(t);
  });
});

describe('failure and retry', () => {
  it('the ledger rejects: intent.failed with its stage and code, then the retry confirms; the chain is the witness', async () => {
    h = await setup();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    h.ledger.faults.submitReject = { code: 'insufficient_balance', message: 'not enough', retriable: true };
    expect((await raw(h, 'POST', `/intent/${intentId}/execute`)).status).toBe(500);
    h.ledger.resetFaults();
    expect((await h.client.execute(intentId)).status).toBe('confirmed');
    const events = await allEvents(h, `&intent=${intentId}`);
    const types = events.map((e) => e.type);
    const failed = types.indexOf('intent.failed');
    expect(failed).toBeGreaterThan(0);
    expect(events[failed]!.data).toMatchObject({ stage: 'submit', code: 'insufficient_balance' });
    expect(events[failed + 1]!.data).toMatchObject({ from: 'submitted', to: 'failed' });
    expect(types.slice(failed + 2)).toContain('intent.confirmed');
    expect(events.filter((e) => e.type === 'intent.status_changed').map((e) => `${e.data['from']}>${e.data['to']}`)).toEqual([
      'allowed>submitted',
      'submitted>failed',
      'failed>submitted',
      'submitted>confirmed',
    ]);
    expectOutbox(await allEvents(h), await receipts(h));
  });
});

describe('GET /events', () => {
  it('pages in order with next and has_more; filters by types, wallet and intent', async () => {
    h = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: String(100 + i) })).intentId);
    await h.client.approveUnsigned(ids[0]!);
    const all = await allEvents(h);
    expect(all).toHaveLength(8);
    // limit 3: three pages, cursors chain, nothing lost or repeated
    const pages: VaultEvent[][] = [];
    let after = '';
    for (;;) {
      const r = await raw(h, 'GET', `/events?limit=3${after ? `&after=${after}` : ''}`);
      pages.push(r.body.events);
      expect(r.body.next).toBe(r.body.events.at(-1)?.id ?? after);
      if (!r.body.has_more) break;
      after = r.body.next;
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
    expect(pages.flat()).toEqual(all);
    // the default page is 100; after the last event, nothing and no more
    const end = await raw(h, 'GET', `/events?after=${all.at(-1)!.id}`);
    expect(end.body).toEqual({ events: [], next: all.at(-1)!.id, has_more: false });
    // filters
    expect((await allEvents(h, '&types=approval.unsigned_recorded')).map((e) => e.subject.intent)).toEqual([ids[0]]);
    expect((await allEvents(h, `&intent=${ids[3]}`)).map((e) => e.type)).toEqual(['intent.created']);
    expect(await allEvents(h, '&wallet=ops')).toEqual(all);
    expect(await allEvents(h, '&wallet=nobody')).toEqual([]);
    expect((await allEvents(h, '&types=intent.created,approval.unsigned_recorded')).length).toBe(8);
    // a filter that matches nothing in a page's span answers with has_more and a cursor past it
    const sparse = await raw(h, 'GET', `/events?limit=1&types=approval.unsigned_recorded&after=${eventId(0)}`);
    expect(sparse.body.events).toHaveLength(1);
  });

  it('refuses bad cursors, types, ids and limits with a 400 naming the field; no session is a 401', async () => {
    h = await setup();
    const cases: [string, string][] = [
      ['/events?after=42', 'after'],
      ['/events?after=evt_1', 'after'],
      ['/events?types=intent.nope', 'types'],
      ['/events?types=' + Array(40).fill('intent.created').join(','), 'types'],
      ['/events?intent=not-an-intent', 'intent'],
      ['/events?wallet=' + 'w'.repeat(200), 'wallet'],
      ['/events?limit=0', 'limit'],
      ['/events?limit=5000', 'limit'],
      ['/events/stream?types=Intent.Created', 'types'],
    ];
    for (const [path, field] of cases) {
      const r = await raw(h, 'GET', path);
      expect(r.status, path).toBe(400);
      expect(JSON.stringify(r.body), path).toContain(field);
    }
    const bad = await raw(h, 'GET', '/events/stream', { headers: { 'last-event-id': 'evt_x' } });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Last-Event-ID');
    for (const path of ['/events', '/events/stream']) {
      expect((await raw(h, 'GET', path, { token: null })).status).toBe(401);
      expect((await raw(h, 'GET', path, { token: 'forged-token-0123456789' })).status).toBe(401);
    }
  });
});

describe('GET /events/stream', () => {
  it('replays then goes live with no gap and no duplicate at the switch, under a concurrent burst', async () => {
    h = await setup({ controlPlane: { storeSync: false } });
    for (let i = 0; i < 40; i++) await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: String(1 + i) });
    // The stream opens while a burst is being committed: some of the burst comes by replay, some live.
    const burst = Promise.all(Array.from({ length: 200 }, (_, i) => h!.client.createIntent({ wallet: 'ops', destination: h!.dest(), amount: String(1000 + i) })));
    const s = await openStream(h);
    await burst;
    await s.until(() => s.events.length === 240);
    await new Promise((r) => setTimeout(r, 100));
    expect(s.events.map((e) => e.seq)).toEqual(Array.from({ length: 240 }, (_, i) => i + 1));
    expect(s.events).toEqual(await allEvents(h));
    await s.close();
  });

  it('Last-Event-ID resumes after that event (and wins over after=); filters apply to replay and live', async () => {
    h = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: String(1 + i) })).intentId);
    const s = await openStream(h, `?after=${eventId(0)}`, { 'last-event-id': eventId(2) });
    await s.until(() => s.events.length === 2);
    expect(s.events.map((e) => e.seq)).toEqual([3, 4]);
    const f = await openStream(h, `?types=intent.created&intent=${ids[3]}`);
    await f.until(() => f.events.length === 1);
    ids.push((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '77' })).intentId);
    await h.client.approveUnsigned(ids[3]!);
    await s.until(() => s.events.length === 4);
    expect(s.events.map((e) => e.type)).toEqual(['intent.created', 'intent.created', 'intent.created', 'approval.unsigned_recorded']);
    expect(f.events.map((e) => e.subject.intent)).toEqual([ids[3]]);
    await s.close();
    await f.close();
  });

  it('sends heartbeat comments at the configured interval', async () => {
    h = await setup({ controlPlane: { eventHeartbeatSeconds: 0.05 } });
    const s = await openStream(h);
    await s.until(() => s.frames.filter((f) => f === ': heartbeat').length >= 3, 5000);
    expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(s.frames[0]).toMatch(/^retry: \d+/);
    await s.close();
  });

  it('attack: a consumer that stops reading is cut off once its unsent buffer passes the bound, not buffered without bound', async () => {
    h = await setup({ controlPlane: { storeSync: false, eventStreamBufferBytes: 32 * 1024 } });
    const u = new URL(h.url);
    // The stalled reader sets a 4 KiB receive buffer (Node cannot), so the kernel holds only the
    // sender's few MB before the server's own buffers fill.
    const reader = spawn('python3', [join(here, 'fixtures/stalled-reader.py'), u.hostname, u.port, '/events/stream', h.client.getToken()!], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    reader.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      while (!out.includes('head')) await new Promise((r) => setTimeout(r, 10));
      expect(out).toContain('200 OK');
      // Events keep coming (made in-process for speed; the consumer is on a real socket). Bounded.
      const cp = h.running.cp;
      const cut = () => h!.logs.some((l) => l.includes('"event_stream_closed"') && l.includes('slow_consumer'));
      for (let i = 0; i < 30_000 && !cut(); i += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, j) => cp.createIntent({ wallet: 'ops', destination: h!.dest(), amount: String(1 + i + j) })));
        await new Promise((r) => setTimeout(r, 2));
      }
      expect(cut()).toBe(true);
      // The reader, reading again, finds the connection closed by the server.
      reader.stdin.write('\n');
      await new Promise((r) => reader.once('exit', r));
      expect(out).toContain('closed');
      // The service is unharmed and a well-behaved stream still works.
      const s = await openStream(h, `?after=${eventId(cp.store.lastEventSeq - 1)}`);
      await s.until(() => s.events.length === 1);
      await s.close();
    } finally {
      reader.kill('SIGKILL');
    }
  });

  it('attack: a stream outlives the session that opened it (a locked session ends its stream)', async () => {
    h = await setup({ controlPlane: { eventHeartbeatSeconds: 0.05 } });
    const s = await openStream(h);
    await s.until(() => s.frames.some((f) => f === ': heartbeat'));
    await h.client.lock();
    await s.until(() => s.ended, 5000);
    expect(h.logs.some((l) => l.includes('session_ended'))).toBe(true);
  });

  it('attack: opening streams without end is refused past the cap (503), and a closed stream gives its place back', async () => {
    h = await setup({ controlPlane: { eventStreamsMax: 3 } });
    const open = [await openStream(h), await openStream(h), await openStream(h)];
    const refused = await raw(h, 'GET', '/events/stream');
    expect(refused.status).toBe(503);
    expect(refused.body.error.data.reason).toBe('busy');
    await open[0]!.close();
    const t0 = Date.now();
    let again = await openStream(h);
    while (again.res.status !== 200 && Date.now() - t0 < 5000) {
      await again.close();
      await new Promise((r) => setTimeout(r, 20));
      again = await openStream(h);
    }
    expect(again.res.status).toBe(200);
    for (const s of [...open.slice(1), again]) await s.close();
  });
});

describe('vault events tail lines', () => {
  it('attack: a device label with terminal escapes and newlines is printed inert, on one line', () => {
    const line = formatEventLine({
      id: eventId(7),
      seq: 7,
      type: 'device.paired',
      at: 1_767_225_600,
      subject: { device: 'dev_1' },
      receipt: 'ab'.repeat(32),
      data: { id: 'dev_1', role: 'approver', label: 'phone\u001b[2J\u001b]0;pwned\u0007\nevt_0000000000000099 fake', public_key: 'cd'.repeat(32) },
    });
    expect(line).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toMatch(/^evt_0000000000000007 2026-01-01T00:00:00.000Z device.paired device=dev_1 role=approver label=phone /);
  });
});
