/**
 * Issue #20 on the control plane: the attacks of findings 2, 4, 6 and 7 over HTTP, each named
 * after the attack, and the property behind finding 4: any one field of any request body
 * replaced with an arbitrary or hostile JSON value is a 400 naming the field, a documented
 * refusal, or a success, never a 500.
 */
import { APPROVAL_CLOCK_SKEW_SECONDS, canonicalize, generateEd25519KeyPair, signApproval, signEd25519, fromHex, toHex, type Rule } from '@vault/sdk';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createControlPlaneApp } from '../../src/control-plane/app.js';
import { EVERY_OPERATION, judge, pathsOf, replaced, replacement, serveForProbe, type Path } from '../malformed.js';
import { PASSPHRASE, setup, type Harness } from './helpers.js';

// Real fsync and scrypt on a shared 2-core machine: allow for slow moments.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const threshold: Rule = {
  rule: 'approval_threshold',
  above: '0',
  required_weight: 2,
  approvers: [
    { id: 'alice', weight: 1 },
    { id: 'bob', weight: 1 },
    { id: 'carol', weight: 1 },
  ],
};

let h: Harness;
let probe: Awaited<ReturnType<typeof serveForProbe>>;
beforeAll(async () => {
  h = await setup({ rules: [{ rule: 'always_allow' }, threshold] });
  probe = await serveForProbe(createControlPlaneApp(h.running.cp));
});
afterAll(async () => {
  await probe.close();
  await h.close();
});

async function post(path: string, body: string, token: string | null | undefined = h.client.getToken()): Promise<{ status: number; body: any }> {
  return probe.post(path, body, token ? { authorization: `Bearer ${token}` } : {});
}

const intentBody = (extra: Record<string, unknown> = {}) => ({ wallet: 'ops', destination: h.dest(), amount: '1000', ...extra });

async function created(extra: Record<string, unknown> = {}): Promise<string> {
  const r = await post('/intent', JSON.stringify(intentBody(extra)));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.intentId as string;
}

describe('attack: a device approves its own intent (finding 2)', () => {
  it.each(['Device:alice', 'device:alice ', 'device: alice', 'DEVICE:ALICE', 'device:ALICE', 'device:\u200balice', 'alice'])(
    'an intent initiated as %j is refused at creation with a 400 naming initiator',
    async (initiator) => {
      const r = await post('/intent', JSON.stringify(intentBody({ initiator })));
      expect(r.status).toBe(400);
      expect(r.body.error.data.path).toBe('initiator');
    },
  );

  it('device alice cannot approve what device:alice initiated; bob can', async () => {
    const id = await created({ initiator: 'device:alice' });
    const self = await post(`/intent/${id}/approve-signed`, JSON.stringify(h.approve(id, 'alice')));
    expect(self.status).toBe(400);
    expect(self.body.error.data).toMatchObject({ reason: 'self_approval', path: 'approver_id' });
    expect((await post(`/intent/${id}/approve-signed`, JSON.stringify(h.approve(id, 'bob')))).status).toBe(200);
  });
});

describe('attack: approvals with no freshness (finding 6)', () => {
  const stmt = (id: string, at: number) => signApproval({ approver_id: 'bob', intent: id, verdict: 'approve', at, strong_auth: false }, h.approvers['bob']!.secretKey);

  it('an approval dated at 1 is refused as stale, naming at', async () => {
    const id = await created();
    const r = await post(`/intent/${id}/approve-signed`, JSON.stringify(stmt(id, 1)));
    expect(r.status).toBe(400);
    expect(r.body.error.data).toMatchObject({ reason: 'stale', path: 'at' });
  });

  it('an approval dated ten years ahead is refused as future, naming at', async () => {
    const id = await created();
    const r = await post(`/intent/${id}/approve-signed`, JSON.stringify(stmt(id, h.clock.now + 10 * 365 * 86400)));
    expect(r.status).toBe(400);
    expect(r.body.error.data).toMatchObject({ reason: 'future', path: 'at' });
  });

  it('stored approvals are judged by the same window: one dated at 1, in a record written before the window existed, does not count', async () => {
    const id = await created();
    expect((await post(`/intent/${id}/approve-signed`, JSON.stringify(stmt(id, h.clock.now)))).status).toBe(200);
    const cur = h.running.cp.getIntent(id);
    const carol = signApproval({ approver_id: 'carol', intent: id, verdict: 'approve', at: 1, strong_auth: false }, h.approvers['carol']!.secretKey);
    await h.running.cp.store.write({ ...cur, approvals: [...cur.approvals, carol] }, null);
    // bob's counts, carol's stale one does not: 1 of 2, still pending (it would be allowed at 2)
    const stored = await h.client.intent(id);
    expect(stored.approvals).toHaveLength(2);
    expect(stored.status).toBe('pending_approvals');
    expect(stored.decision).toMatchObject({ decision: 'require_approvals', current_weight: 1, required_weight: 2 });
  });

  it('within the skew either way it counts', async () => {
    const id = await created();
    const early = await post(`/intent/${id}/approve-signed`, JSON.stringify(stmt(id, h.clock.now - APPROVAL_CLOCK_SKEW_SECONDS)));
    expect(early.status, JSON.stringify(early.body)).toBe(200);
    expect(early.body.decision.current_weight).toBe(1);
    const late = await post(`/intent/${id}/approve-signed`, JSON.stringify(stmt(id, h.clock.now + APPROVAL_CLOCK_SKEW_SECONDS)));
    expect(late.status).toBe(200);
  });
});

describe('attack: destinations not checked at creation (finding 7)', () => {
  it.each([['abc'], ['\u0000'], ['\u202e'], [`mem1${'\u202e'}${'ab'.repeat(19)}`], [`MEM1${'ab'.repeat(20)}`], [`mem1${'AB'.repeat(20)}`]])(
    'destination %j is refused with a 400 naming destination, and nothing is stored',
    async (destination) => {
      const before = h.running.cp.listIntents().length;
      const r = await post('/intent', JSON.stringify(intentBody({ destination })));
      expect(r.status).toBe(400);
      expect(r.body.error.data.path).toBe('destination');
      expect(h.running.cp.listIntents().length).toBe(before);
    },
  );

  it('mpt_create and account_flags keep working with the wallet\'s own address as destination', async () => {
    for (const operation of [{ op: 'mpt_create', asset_scale: 2, flags: 0x20 }, { op: 'account_flags', set: 8 }]) {
      const r = await post('/intent', JSON.stringify({ wallet: 'ops', destination: h.address, amount: '0', operation }));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
  });
});

describe('attack: HTTP 500 on malformed input (finding 4)', () => {
  it.each([['"abc"', 'abc'], ['"1.5"', '1.5'], ['"1e3"', '1e3'], ['NUL', '\u0000'], ['U+202E', '\u202e'], ['a 300 KB string', 'x'.repeat(300 * 1024)]])('mpt_create maximum_amount %s is a 400 naming operation.maximum_amount', async (_what, maximum_amount) => {
    const r = await post('/intent', JSON.stringify(intentBody({ operation: { op: 'mpt_create', asset_scale: 0, flags: 0, maximum_amount } })));
    expect(r.status).toBe(400);
    expect(r.body.error.data.path).toBe('operation.maximum_amount');
  });

  it.each([['asset_decimals', '"asset_decimals":-0'], ['operation.asset_scale', '"operation":{"op":"mpt_create","asset_scale":-0,"flags":0}']])(
    'an integer given as -0 is refused naming %s',
    async (field, member) => {
      const text = JSON.stringify(intentBody()).replace(/}$/, `,${member}}`);
      const r = await post('/intent', text);
      expect(r.status).toBe(400);
      expect(r.body.error.data.path).toBe(field);
    },
  );

  it('a lone surrogate in the memo is a 400 naming memo', async () => {
    const r = await post('/intent', JSON.stringify(intentBody({ memo: 'a\ud800b' })));
    expect(r.status).toBe(400);
    expect(r.body.error.data.path).toBe('memo');
  });
});

describe('property: no request body of the control plane answers 500, whatever one field holds', () => {
  const OPERATIONS = EVERY_OPERATION;

  /** A full IntentRequest with every optional field, for one operation. */
  const fullIntent = (operation: Record<string, unknown>) => ({
    wallet: 'ops',
    destination: h.dest(),
    amount: '1000',
    asset_symbol: 'MEM',
    asset_issuer: h.dest(),
    asset_decimals: 6,
    memo: 'rent',
    initiator: 'agent:bot',
    tags: [['invoice', '42']],
    operation,
  });

  async function run(route: () => Promise<{ path: string; body: unknown; token?: string | null }>, allowed: readonly number[], numRuns: number): Promise<void> {
    const sample = await route();
    const paths = pathsOf(sample.body);
    expect(paths.length).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), replacement, async (path: Path, r) => {
        const target = await route();
        const res = await post(target.path, replaced(target.body, path, r), target.token === undefined ? h.client.getToken() : target.token);
        judge(res, path, r, allowed);
      }),
      { numRuns },
    );
  }

  it.each(OPERATIONS.map((o) => [o.op, o] as const))('POST /intent with %s', async (_op, operation) => {
    await run(async () => ({ path: '/intent', body: fullIntent(operation) }), [200, 404], 60);
  });

  it('POST /intent/{id}/approve-signed', async () => {
    const id = await created();
    await run(async () => ({ path: `/intent/${id}/approve-signed`, body: h.approve(id, 'alice') }), [200, 403, 404], 150);
  });

  it('POST /pair/create, POST /pair/claim, POST /session/unlock, POST /snapshot', async () => {
    await run(async () => ({ path: '/pair/create', body: { role: 'approver', label: 'phone' } }), [200, 403], 60);
    const claim = async () => {
      const open = await post('/pair/create', JSON.stringify({ role: 'viewer', label: 'tablet' }));
      const device = generateEd25519KeyPair();
      // a code that no longer opens (the limit of open codes reached) still makes a well-formed body
      const code = open.status === 200 ? (open.body.code as string) : 'EXPIRED-CODE';
      const challenge = open.status === 200 ? (open.body.challenge as string) : '00'.repeat(32);
      const signature = toHex(signEd25519(fromHex(challenge, 'challenge', 32), device.secretKey));
      return { path: '/pair/claim', body: { code, public_key: device.publicKeyHex, signature, label: 'tablet' }, token: null };
    };
    await run(claim, [200, 403, 429], 60);
    await run(async () => ({ path: '/session/unlock', body: { passphrase: PASSPHRASE }, token: null }), [200, 401, 429], 40);
    await run(async () => ({ path: '/snapshot', body: { wallet: 'ops' } }), [200, 404], 40);
  });

  it('left a receipt chain that still verifies', async () => {
    expect(h.running.cp.verifyLedger().verified).toBe(true);
    expect(canonicalize(h.running.cp.state.wallets)).toBe(canonicalize([h.wallet]));
  });
});
