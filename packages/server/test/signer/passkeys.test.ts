/**
 * Passkeys at the signer (issue #24): an approval counts as strong only when its assertion verifies
 * against the passkey the trust file lists for its approver; otherwise it counts as weak (the
 * request is not refused for it, the policy just does not see a strong approval).
 */
import { parseRegistration, signApproval, type SignedApproval } from '@vault/sdk';
import { createSoftwarePasskey, type SoftwarePasskey } from '@vault/sdk/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyAndSign } from '../../src/signer/sign.js';
import { parseTrust } from '../../src/signer/trust.js';
import { basePolicy, makeWorld, type World } from './helpers.js';

const ORIGIN = 'http://localhost:8443';
let w: World | undefined;
afterEach(() => w?.cleanup());

/** The trust file entry's passkey, as an operator copies it from the control plane's device record. */
function trusted(passkey: SoftwarePasskey) {
  const challenge = new Uint8Array(32).fill(3);
  const r = parseRegistration(passkey.register(challenge), { challenge, rp_id: 'localhost', origins: [ORIGIN] });
  if (!r.ok) throw new Error(r.message);
  return { ...r.passkey, origins: [ORIGIN] };
}

async function world(deviceBoundAbove?: string) {
  w = await makeWorld({ policy: (id) => basePolicy(id, [{ rule: 'require_human_approver_for_agent_initiated', ...(deviceBoundAbove ? { device_bound_above: deviceBoundAbove } : {}) }]) });
  const alice = createSoftwarePasskey({ origin: ORIGIN });
  const synced = createSoftwarePasskey({ origin: ORIGIN, backup_eligible: true });
  const passkeys: Record<string, SoftwarePasskey> = { alice, bob: synced };
  w.trust = parseTrust({ ...w.trustFile, approvers: w.trustFile.approvers.map((a) => (passkeys[a.id] ? { ...a, passkey: trusted(passkeys[a.id]!) } : a)) });
  w.deps.trust = w.trust;
  const world = w;
  const strong = (id: string, who: string): SignedApproval => {
    const a = world.approvers.find((x) => x.id === who)!;
    return signApproval({ approver_id: who, intent: id, verdict: 'approve', at: world.clock.now - 5, strong_auth: true }, a.secret);
  };
  return { w: world, alice, synced, strong };
}

describe('passkeys at the signer', () => {
  it('signs an agent intent once a strong approval is proven by the approver\'s passkey', async () => {
    const { w, alice, strong } = await world();
    const req = await w.request({ initiator: 'agent:bot' }, { approvers: ['alice', 'carol'], sign: (id, who) => (who === 'alice' ? alice.attach(strong(id, who)) : strong(id, who)) });
    const outcome = await verifyAndSign(req, w.deps);
    expect(outcome.ok).toBe(true);
  });

  it('attack: strong_auth true without an assertion counts as weak at the signer', async () => {
    const { w, strong } = await world();
    const req = await w.request({ initiator: 'agent:bot' }, { approvers: ['alice', 'carol'], sign: strong });
    const outcome = await verifyAndSign(req, w.deps);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.refusal.message).toMatch(/0 of 1 strong-auth human approval/);
    expect(w.signedDigests).toEqual([]);
  });

  it("attack: an assertion by another approver's passkey counts as weak at the signer", async () => {
    const { w, synced, strong } = await world();
    // bob's passkey answers for alice's approval (a device that can sign for alice but holds no passkey of hers).
    const req = await w.request({ initiator: 'agent:bot' }, { approvers: ['alice', 'carol'], sign: (id, who) => (who === 'alice' ? synced.attach(strong(id, who)) : strong(id, who)) });
    const outcome = await verifyAndSign(req, w.deps);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.refusal.message).toMatch(/0 of 1 strong-auth/);
  });

  it('attack: a synced passkey where device-bound is required', async () => {
    const { w, alice, synced, strong } = await world('1000');
    const bySynced = await w.request({ initiator: 'agent:bot' }, { approvers: ['bob', 'carol'], sign: (id, who) => (who === 'bob' ? synced.attach(strong(id, who)) : strong(id, who)) });
    const refused = await verifyAndSign(bySynced, w.deps);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.refusal.message).toMatch(/0 of 1 device-bound passkey approval/);
    const byBound = await w.request({ initiator: 'agent:bot' }, { approvers: ['alice', 'carol'], sign: (id, who) => (who === 'alice' ? alice.attach(strong(id, who)) : strong(id, who)) });
    expect((await verifyAndSign(byBound, w.deps)).ok).toBe(true);
  });
});
