/**
 * Timelocks across the two services: the signer counts a timelock from the later of the intent's
 * created_at and its own first sight, so the control plane has each signer observe (POST /observe)
 * an intent a timelock holds back when it creates it. The real control plane and the real signer
 * app on loopback sockets, sharing one clock (rig.ts).
 *
 * Policy: above 1 000 000 a one-hour timelock; no approvals needed.
 */
import type { PolicySet } from '@vault/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { OPERATOR, setupRig, type Rig } from './rig.js';

const HOUR = 3600;

function policy(wallet: string): PolicySet {
  return { wallet, version: 1, rules: [{ rule: 'timelock_above', above: '1000000', seconds: HOUR }, { rule: 'always_allow' }] };
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const signerA = (out: { signers: { signer: string; ok: boolean; detail: string }[] }) => out.signers.find((x) => x.signer === 'signer-A');

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('the signer observes a timelocked intent at its creation', () => {
  it('observed at creation: the signer signs at not_before; first seen at execute: it holds the intent a second timelock', async () => {
    rig = await setupRig(policy);
    const r = rig;
    const created = r.w.clock.now;
    const held = await r.cp.createIntent({ wallet: r.w.wallet.wallet, destination: r.w.destination, amount: '2000000' });
    expect(held.status).toBe('timelocked');
    await until(() => r.w.state.firstSeen(held.intentId) !== undefined);
    expect(r.w.state.firstSeen(held.intentId)).toBe(created);
    // Observing signed nothing.
    expect(r.w.state.records().map((x) => x.kind)).toEqual(['intent.observed']);
    expect(r.w.signedDigests).toEqual([]);

    // A second intent created while the signer is down: it first sees it at execute.
    await r.down();
    const missed = await r.cp.createIntent({ wallet: r.w.wallet.wallet, destination: r.w.destination, amount: '2000001' });
    await r.up();

    r.w.clock.now = created + HOUR;
    await r.cp.unlock(OPERATOR); // the session idled out meanwhile
    const due = await r.cp.execute(held.intentId);
    expect(due.status).toBe('awaiting_signatures'); // 2-of-3, one signer here
    expect(signerA(due)).toMatchObject({ ok: true, detail: expect.stringMatching(/^signed/) });

    // The execute stops at the signer's refusal: it counts from its first sight, now.
    await expect(r.cp.execute(missed.intentId)).rejects.toMatchObject({ data: { stage: 'signers', reason: 'policy_denied' }, message: expect.stringContaining(`this signer counts from ${created + HOUR}`) });
    expect(r.w.state.firstSeen(missed.intentId)).toBe(created + HOUR);
    expect(r.w.state.verify().verified).toBe(true);
  });

  it('an intent no timelock holds is not shown to the signer before execute', async () => {
    rig = await setupRig(policy);
    const r = rig;
    const free = await r.cp.createIntent({ wallet: r.w.wallet.wallet, destination: r.w.destination, amount: '1000' });
    expect(free.status).toBe('allowed');
    const out = await r.cp.execute(free.intentId);
    expect(signerA(out)).toMatchObject({ ok: true });
    expect(r.w.state.records().map((x) => x.kind)).toEqual(['sign.signed']);
  });
});
