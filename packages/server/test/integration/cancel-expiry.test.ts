/**
 * Cancelled and expired intents are refused by the signers too, in a way a compromised control
 * plane cannot undo (issue #22). The control plane on a real loopback socket and the real signer
 * app (its own trust file, journal and key) on another; a request sent straight to the signer is
 * what a compromised control plane would send.
 *
 * Policy: above 1 000 000 one approval of weight 1 is enough. Lifetime (control plane and signer
 * alike): intents live an hour, approvals count for two.
 */
import { restrictionDigest, type SignRequest } from '@vault/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { liftRestrictions } from '../../src/signer/restrictions.js';
import { approvalPolicy, setupRig, type Rig } from './rig.js';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const policy = approvalPolicy;

const TTL = 3600;
const APPROVAL_AGE = 7200;

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const setup = () => setupRig(policy, undefined, { lifetime: { ttl_seconds: TTL, approval_max_age_seconds: APPROVAL_AGE }, sessionSeconds: 86_400 });

async function refusal(r: Rig, req: SignRequest): Promise<{ reason: string; message: string }> {
  const res = await r.signer.sign(req);
  if (!res.ok) return { reason: res.refusal.refused.reason, message: res.refusal.message };
  throw new Error('expected a refusal, got a signature');
}

/** An intent through the control plane, approved by alice; the SignRequest a control plane would build for it. */
async function approvedIntent(r: Rig, amount: string): Promise<{ id: string; request: (createdAt?: number) => Promise<SignRequest> }> {
  const { intentId } = await r.cp.createIntent({ wallet: r.w.wallet.wallet, destination: r.w.destination, amount });
  await r.cp.approveSigned(intentId, r.w.approve(intentId, 'alice'));
  const stored = await r.cp.intent(intentId);
  return {
    id: intentId,
    request: (createdAt = stored.created_at) => r.w.request({ amount }, { approvers: ['alice'], createdAt }),
  };
}

const signerA = (out: { signers: { signer: string }[] }) => out.signers.find((x) => x.signer === 'signer-A');

describe('signers refuse cancelled intents', () => {
  it('attack: a control plane re-executes a cancelled intent', async () => {
    rig = await setup();
    const { id, request } = await approvedIntent(rig, '3000001');
    const req = await request();
    expect(req.intent.id).toBe(id);
    expect(rig.w.state.restrictionsInForce()).toHaveLength(0);

    const out = await rig.cp.cancel(id);
    expect(out.signers).toEqual([{ signer: 'signer-A', ok: true, detail: expect.stringMatching(/^restrictions [0-9a-f]{64} acknowledged$/) }]);
    expect((await rig.signer.restrictions()).restrictions.map((x) => x.restriction)).toEqual([{ restriction: 'cancel_intent', intent_id: id }]);

    // The control plane, compromised after the cancel, asks for the intent anyway: refused.
    expect(await refusal(rig, req)).toMatchObject({ reason: 'policy_denied', message: expect.stringMatching(/was cancelled/) });
    // Its own record rewritten (created_at, approvals, params fresh) changes nothing: the id is the content.
    expect((await refusal(rig, await request(rig.w.clock.now))).reason).toBe('policy_denied');
    // It cannot push the cancellation away: the route only adds. The signer's operator cannot lift
    // it either: no selector names a cancellation.
    await rig.signer.restrict([]);
    expect(await liftRestrictions(rig.w.state, { approvers: ['alice', 'bob', 'carol'], wallets: [rig.w.wallet.wallet] }, rig.w.clock.now)).toEqual([]);
    // Kept across a restart of the signer (journaled).
    rig.w.reopen();
    expect(rig.w.state.restrictions.intents.has(id)).toBe(true);
    expect((await refusal(rig, req)).reason).toBe('policy_denied');
    // Other intents still sign.
    const other = await approvedIntent(rig, '3000002');
    expect((await rig.signer.sign(await other.request())).ok).toBe(true);
  });

  it('attack: a cancelled intent is refused by a signer that was down at the cancel', async () => {
    rig = await setup();
    const { id, request } = await approvedIntent(rig, '3000003');
    await rig.down();
    const out = await rig.cp.cancel(id);
    expect(out.signers[0]).toMatchObject({ ok: false, detail: expect.stringMatching(/pushed again before it is next asked to sign/) });
    // The control plane restarts meanwhile: the cancellation comes from its store, not memory.
    await rig.restartControlPlane();
    await rig.up();
    expect((await rig.signer.restrictions()).count).toBe(0);
    // Before the signer is next asked to sign anything, it is given the cancellation.
    const other = await approvedIntent(rig, '3000004');
    expect(signerA(await rig.cp.execute(other.id))).toMatchObject({ ok: true });
    const kinds = rig.w.state.records().map((x) => x.kind);
    expect(kinds.indexOf('restrictions.added')).toBeGreaterThan(-1);
    expect(kinds.lastIndexOf('sign.signed')).toBeGreaterThan(kinds.indexOf('restrictions.added'));
    expect((await refusal(rig, await request())).message).toMatch(/was cancelled/);
  });

  it('a cancellation the signer never saw the intent for starts its clock: the intent expires there too', async () => {
    rig = await setup();
    const { id } = await approvedIntent(rig, '3000005');
    expect(rig.w.state.firstSeen(id)).toBeUndefined();
    await rig.cp.cancel(id);
    expect(rig.w.state.firstSeen(id)).toBe(rig.w.clock.now);
  });

  it('cancellations do not count toward the cap on approver and wallet restrictions', async () => {
    rig = await setup();
    const ids = Array.from({ length: 3 }, (_, i) => `int_${String(i).padStart(64, '0')}`);
    const res = await rig.signer.restrict(ids.map((intent_id) => ({ restriction: 'cancel_intent' as const, intent_id })));
    expect(res).toMatchObject({ added: 3, count: 3, received: restrictionDigest(ids.map((intent_id) => ({ restriction: 'cancel_intent' as const, intent_id }))) });
    expect(rig.w.state.cappedRestrictionCount).toBe(0);
    expect(rig.w.state.restrictionCount).toBe(3);
  });
});

describe('signers refuse expired intents', () => {
  it('attack: a control plane signs an expired intent with a rewound expiry', async () => {
    rig = await setup();
    const { id, request } = await approvedIntent(rig, '3000006');
    // Executed once: the signer sees the intent (and signs; one signer is short of quorum here).
    expect(signerA(await rig.cp.execute(id))).toMatchObject({ ok: true });
    const seen = rig.w.state.firstSeen(id) as number;
    expect(seen).toBe(rig.w.clock.now);

    rig.w.clock.now += TTL;
    // While the payload it signed may still land, the control plane does not call it expired, nor
    // starts another attempt...
    expect((await rig.cp.intent(id)).status).toBe('allowed');
    const signs = rig.w.state.records().filter((x) => x.kind.startsWith('sign.')).length;
    expect((await rig.cp.execute(id).catch((e: { data: unknown }) => e.data)) as unknown).toMatchObject({ stage: 'policy', reason: 'expired' });
    expect(rig.w.state.records().filter((x) => x.kind.startsWith('sign.')).length).toBe(signs);
    // ...once the ledger is past it, it does, and asks no one to sign.
    rig.w.ledger.close(100);
    expect((await rig.cp.intent(id)).status).toBe('expired');
    expect((await rig.cp.execute(id).catch((e: { data: unknown }) => e.data)) as unknown).toMatchObject({ reason: 'expired' });
    // A compromised one claims the intent was created a moment ago, with a fresh approval: the
    // signer counts the time to live from its own first sight, and refuses.
    const rewound = await request(rig.w.clock.now - 10);
    expect(rewound.intent.created_at).toBe(rig.w.clock.now - 10);
    const r = await refusal(rig, rewound);
    expect(r.reason).toBe('policy_denied');
    expect(r.message).toMatch(new RegExp(`expired at ${seen + TTL} \\(known to this signer since ${seen}`));
    // A second before that, the same request is signed (the payload it signed before, again).
    rig.w.clock.now -= 1;
    expect((await rig.signer.sign(await request(rig.w.clock.now - 10))).ok).toBe(true);
  });

  it('attack: a signer that never saw the intent dates it from the approvals it verified', async () => {
    rig = await setup();
    const { id } = await approvedIntent(rig, '3000007');
    const approvedAt = rig.w.clock.now - 5;
    rig.w.clock.now += TTL;
    expect(rig.w.state.firstSeen(id)).toBeUndefined();
    // Created "now", with alice's approval signed an hour ago: she saw the intent by then.
    const req = await rig.w.request({ amount: '3000007' }, { approvers: [], createdAt: rig.w.clock.now - 10 });
    req.approvals = [rig.w.approve(id, 'alice', 'approve', approvedAt)];
    // The approval window alone refuses an approval dated before the claimed creation...
    expect((await refusal(rig, req)).reason).toBe('approvals');
    // ...so the claim must be no later than the approval, and the intent is expired from there.
    req.intent.created_at = approvedAt;
    expect(await refusal(rig, req)).toMatchObject({ reason: 'policy_denied', message: expect.stringMatching(/expired/) });
  });

  it('the signer refuses an approval older than the wallet\'s approval age', async () => {
    rig = await setup();
    const req = await rig.direct(['alice']);
    req.approvals = [rig.w.approve(req.intent.id, 'alice', 'approve', rig.w.clock.now - APPROVAL_AGE)];
    req.intent.created_at = rig.w.clock.now - APPROVAL_AGE - 10;
    const r = await refusal(rig, req);
    expect(r.reason).toBe('approvals');
    expect(r.message).toMatch(/approvals stop counting at 7200s/);
    req.approvals = [rig.w.approve(req.intent.id, 'alice', 'approve', rig.w.clock.now - APPROVAL_AGE + 1)];
    // Fresh enough, but the intent itself is older than its time to live.
    expect((await refusal(rig, req)).message).toMatch(/expired/);
    req.intent.created_at = rig.w.clock.now - 10;
    req.approvals = [rig.w.approve(req.intent.id, 'alice', 'approve', rig.w.clock.now - 5)];
    expect((await rig.signer.sign(req)).ok).toBe(true);
  });
});
