/**
 * Revoking a device reaches the signers (issue #20, finding 1). The control plane on a real
 * loopback socket, driven by the SDK client, and the real signer app (its own trust file, journal
 * and key) on another; both over the same memory ledger. The wallet is 2-of-3 and only one member
 * has a signer here, so an execute ends awaiting signatures: what matters is what that signer was
 * asked, in what order, and what it signs for a request sent straight to it, as a compromised
 * control plane would send it.
 *
 * Policy: above 1 000 000 one approval of weight 1 is enough (alice, bob, carol weight 1 each), so
 * a request approved only by bob reaches the threshold until bob is revoked.
 */
import { type ControlPlaneClient, type SignRequest } from '@vault/sdk';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { RESTRICTION_ACK_SECONDS } from '../../src/control-plane/service.js';
import { liftRestrictions } from '../../src/signer/restrictions.js';
import { approvalPolicy, setupRig, type Rig } from './rig.js';

const policy = approvalPolicy;

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const setup = (front?: (signerApp: Hono) => Hono) => setupRig(policy, front);

async function signs(r: Rig, req: SignRequest): Promise<boolean> {
  const res = await r.signer.sign(req);
  return res.ok;
}

async function refusal(r: Rig, req: SignRequest): Promise<{ reason: string; message: string }> {
  const res = await r.signer.sign(req);
  if (res.ok) throw new Error('expected a refusal, got a signature');
  return { reason: res.refusal.refused.reason, message: res.refusal.message };
}

/** An intent through the control plane, approved by alice, executed: the signer is asked to sign it. */
let executed = 0;
async function executeApproved(r: Rig): Promise<Awaited<ReturnType<ControlPlaneClient['execute']>>> {
  executed += 1;
  const { intentId } = await r.cp.createIntent({ wallet: r.w.wallet.wallet, destination: r.w.destination, amount: String(3_000_000 + executed) });
  await r.cp.approveSigned(intentId, r.w.approve(intentId, 'alice'));
  return r.cp.execute(intentId);
}

/** This signer's line of an execute outcome (the other two members have no signer here). */
const signerA = (out: { signers: { signer: string }[] }) => out.signers.find((x) => x.signer === 'signer-A');
const kinds = (r: Rig) => r.w.state.records().map((x) => x.kind);

describe('revoking a device reaches the signers', () => {
  it("attack: a revoked device's approval no longer reaches quorum at the signer", async () => {
    rig = await setup();
    // Before: bob's approval alone is enough at the signer.
    expect(await signs(rig, await rig.direct(['bob']))).toBe(true);

    const revoked = (await rig.cp.revokeDevice('bob')) as { revoked: boolean; signers: { signer: string; ok: boolean; detail: string }[] };
    expect(revoked.revoked).toBe(true);
    expect(revoked.signers).toEqual([{ signer: 'signer-A', ok: true, detail: expect.stringMatching(/^restrictions [0-9a-f]{64} acknowledged$/) }]);
    expect((await rig.signer.restrictions()).restrictions.map((x) => x.restriction)).toEqual([
      { restriction: 'revoke_approver', approver_id: 'bob', public_key: rig.w.approvers[1]?.publicKeyHex },
    ]);

    // A fresh request straight to the signer, approved only by bob: refused.
    expect(await refusal(rig, await rig.direct(['bob']))).toMatchObject({ reason: 'approvals', message: expect.stringMatching(/bob.*revoked/) });
    // Beside a valid approval it still poisons the request rather than counting.
    expect((await refusal(rig, await rig.direct(['alice', 'bob']))).reason).toBe('approvals');
    // The others keep their power.
    expect(await signs(rig, await rig.direct(['carol']))).toBe(true);
  });

  it("attack: a revoked device's approval is refused by a signer that was down at revocation", async () => {
    rig = await setup();
    await rig.down();
    const revoked = (await rig.cp.revokeDevice('bob')) as { signers: { ok: boolean; detail: string }[] };
    expect(revoked.signers).toEqual([{ signer: 'signer-A', ok: false, detail: expect.stringMatching(/^restrictions not acknowledged: .*; pushed again before it is next asked to sign$/) }]);
    // The control plane restarts meanwhile: what it must push comes from its state, not memory.
    await rig.restartControlPlane();
    await rig.up();
    expect((await rig.signer.restrictions()).count).toBe(0);

    const signedBefore = kinds(rig).filter((k) => k === 'sign.signed').length;
    const out = await executeApproved(rig);
    expect(out.status).toBe('awaiting_signatures');
    expect(signerA(out)).toMatchObject({ ok: true, detail: expect.stringMatching(/^signed/) });
    // Pushed first, then asked to sign.
    const after = kinds(rig);
    const added = after.indexOf('restrictions.added');
    expect(added).toBeGreaterThan(-1);
    expect(after.lastIndexOf('sign.signed')).toBeGreaterThan(added);
    expect(after.filter((k) => k === 'sign.signed').length).toBe(signedBefore + 1);

    expect(await refusal(rig, await rig.direct(['bob']))).toMatchObject({ reason: 'approvals', message: expect.stringMatching(/bob.*revoked/) });
    // Pushed once: the next execute finds it acknowledged and adds nothing.
    await executeApproved(rig);
    expect(kinds(rig).filter((k) => k === 'restrictions.added')).toHaveLength(1);
  });

  it('attack: a signer that does not acknowledge the revocation is not asked to sign', async () => {
    let signCalls = 0;
    // A signer from before restrictions existed: /restrictions is not found, /sign works.
    rig = await setup((app) => {
      const front = new Hono();
      front.post('/restrictions', (c) => c.json({ error: { code: 4040, message: 'not found', data: null } }, 404));
      front.all('*', (c) => {
        if (c.req.path === '/sign') signCalls += 1;
        return app.fetch(c.req.raw);
      });
      return front;
    });
    // With nothing revoked there is nothing to push: it signs as before.
    expect(signerA(await executeApproved(rig))).toMatchObject({ ok: true });
    expect(signCalls).toBe(1);

    const revoked = (await rig.cp.revokeDevice('bob')) as { signers: { ok: boolean; detail: string }[] };
    expect(revoked.signers[0]).toMatchObject({ ok: false, detail: expect.stringMatching(/restrictions not acknowledged/) });
    const out = await executeApproved(rig);
    expect(signerA(out)).toMatchObject({ ok: false, detail: expect.stringMatching(/^unreachable: restrictions not acknowledged/) });
    expect(signCalls).toBe(1);
    expect(kinds(rig).filter((k) => k === 'sign.signed')).toHaveLength(1);
  });

  it('a repeated revoke pushes again, and a signer that acknowledged is not pushed to twice', async () => {
    rig = await setup();
    await rig.down();
    await rig.cp.revokeDevice('bob');
    await rig.up();
    const again = (await rig.cp.revokeDevice('bob')) as { revoked: boolean; signers: { ok: boolean }[] };
    expect(again).toMatchObject({ revoked: true, signers: [{ ok: true }] });
    expect((await rig.signer.restrictions()).count).toBe(1);
    await rig.cp.revokeDevice('carol');
    const shown = await rig.signer.restrictions();
    expect(shown.restrictions.map((x) => (x.restriction as { approver_id: string }).approver_id)).toEqual(['bob', 'carol']);
    expect(kinds(rig).filter((k) => k === 'restrictions.added')).toHaveLength(2);
  });

  it('a revocation lifted at a signer while the control plane still holds it comes back: after RESTRICTION_ACK_SECONDS, or after the signer failed a request', async () => {
    rig = await setup();
    await rig.cp.revokeDevice('bob');
    const count = async () => (await rig!.signer.restrictions()).count;
    expect(await count()).toBe(1);
    // The signer's operator lifts it (the library call behind `vault-signer lift`).
    expect(await liftRestrictions(rig.w.state, { approvers: ['bob'] }, rig.w.clock.now)).toHaveLength(1);
    expect(await count()).toBe(0);
    // Within the acknowledgement's lifetime the control plane does not push again...
    expect(signerA(await executeApproved(rig))).toMatchObject({ ok: true });
    expect(await count()).toBe(0);
    // ...after it, the next sign request pushes first.
    rig.w.clock.now += RESTRICTION_ACK_SECONDS;
    expect(signerA(await executeApproved(rig))).toMatchObject({ ok: true });
    expect(await count()).toBe(1);
    expect((await refusal(rig, await rig.direct(['bob']))).reason).toBe('approvals');

    // A failed request drops the acknowledgement: the signer may have come back on other state.
    await liftRestrictions(rig.w.state, { approvers: ['bob'] }, rig.w.clock.now);
    await rig.down();
    expect(signerA(await executeApproved(rig))).toMatchObject({ ok: false, detail: expect.stringMatching(/^unreachable/) });
    await rig.up();
    expect(signerA(await executeApproved(rig))).toMatchObject({ ok: true });
    expect(await count()).toBe(1);
  });
});
