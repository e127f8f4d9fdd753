/**
 * No bypass of change sets under governance (issue #23): with a `governance` section in state.json
 * the control plane refuses a hand edit of a governed section at reload and at start-up (naming
 * it), answers 409 on the direct webhook routes, pairs a device as a viewer until a change set
 * gives it its role, and carries a set_approver op's passkey so it counts as strong here as at the
 * signer. The control plane on a real socket, the real signer app with the same admin quorum.
 */
import { fromHex, generateEd25519KeyPair, signApproval, signEd25519, toHex, ValidationError, type SignedApproval } from '@vault/sdk';
import { createSoftwarePasskey } from '@vault/sdk/testing';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { governedDigests, GOVERNED_SECTIONS, parseState } from '../../src/control-plane/state.js';
import { expectError } from '../control-plane/helpers.js';
import { adminQuorum, applyChange, call } from './governance.js';
import { approvalPolicy, setupRig, type Rig } from './rig.js';

const { admins, governance } = adminQuorum(31);

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const statePath = (r: Rig) => join(r.stateDir, 'state.json');
const readState = (r: Rig) => JSON.parse(readFileSync(statePath(r), 'utf8'));
/** Edits state.json by hand, as someone with the file (not the admin quorum) would. */
function editState(r: Rig, edit: (s: any) => void): void {
  const s = readState(r);
  edit(s);
  writeFileSync(statePath(r), JSON.stringify(s, null, 2));
}

/** One hand edit per governed section: each an attack a change set exists to stop. */
const EDITS: Record<(typeof GOVERNED_SECTIONS)[number], (s: any, r: Rig) => void> = {
  wallets: (s) => {
    s.wallets[0].control.quorum = 1;
  },
  policies: (s) => {
    s.policies[0].rules = [{ rule: 'always_allow' }];
  },
  devices: (s) => {
    s.devices.push({ id: 'mallory', role: 'approver', label: 'mallory', public_key: generateEd25519KeyPair().publicKeyHex, paired_at: 1, revoked_at: null });
  },
  signers: (s, r) => {
    s.signers[r.w.signerAddress].url = 'http://127.0.0.1:9/evil';
  },
  assets: (s) => {
    s.assets.assets.push({ chain: 'memory:devnet', symbol: 'FAKE', decimals: 6 });
  },
  webhooks: (s) => {
    s.webhooks.allow_private = true;
  },
  governance: (s) => {
    s.governance.policy.threshold = 1;
  },
};

describe('governance: no bypass of change sets', () => {
  it('attack: state.json edited by hand and reloaded under governance', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    // Governance first set up: the digests of its sections are recorded in state.json at start-up.
    const sealed = readState(r);
    expect(sealed.governance.digests).toEqual(governedDigests(parseState(readFileSync(statePath(r), 'utf8'))));
    const original = readFileSync(statePath(r), 'utf8');
    for (const section of GOVERNED_SECTIONS) {
      editState(r, (s) => EDITS[section](s, r));
      const e = await expectError(r.cp.reload());
      expect(e, section).toBeInstanceOf(ValidationError);
      expect(e.status, section).toBe(400);
      expect(e.shortMessage, section).toMatch(new RegExp(`^invalid state\\.${section}: ${section} differs from what the applied change sets produced`));
      expect(e.data, section).toMatchObject({ reason: 'governed_section_edited', sections: [section] });
      writeFileSync(statePath(r), original);
    }
    // Nothing took effect: the running state is as the control plane wrote it.
    expect((await r.cp.policy(r.w.wallet.wallet)).rules).toHaveLength(3);
    // Two sections at once: both named.
    editState(r, (s) => {
      EDITS.policies(s, r);
      EDITS.devices(s, r);
    });
    expect((await expectError(r.cp.reload())).data).toMatchObject({ sections: ['policies', 'devices'] });
    // Removing the digests, or the governance section itself, is no way round.
    editState(r, (s) => delete s.governance.digests);
    expect((await expectError(r.cp.reload())).data).toMatchObject({ path: 'governance.digests', sections: ['governance'] });
    writeFileSync(statePath(r), original);
    editState(r, (s) => delete s.governance);
    expect((await expectError(r.cp.reload())).data).toMatchObject({ path: 'governance', sections: ['governance'] });
    // Sections not governed stay hand-editable.
    writeFileSync(statePath(r), original);
    const dest = r.w.destination;
    editState(r, (s) => {
      s.known_destinations = [dest];
      s.burned = ['rBurned'];
    });
    expect(await r.cp.reload()).toMatchObject({ reloaded: true });
  });

  it('attack: a hand edit is refused at start-up too; a change set re-records the digests it leaves', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const before = readState(r).governance.digests;
    // What a change set changes is recorded: a reload and a restart take the file it wrote.
    await applyChange(r, admins, [{ op: 'set_asset', asset: { chain: 'memory:devnet', symbol: 'USD', decimals: 6, issuer: 'rIssuer' } }]);
    const after = readState(r).governance.digests;
    expect(after.assets).not.toBe(before.assets);
    expect(after.governance).not.toBe(before.governance);
    expect(after.wallets).toBe(before.wallets);
    expect(await r.cp.reload()).toMatchObject({ reloaded: true });
    await r.restartControlPlane();
    // A hand edit, then a restart: the control plane does not start on it; nor with the digests removed.
    const written = readFileSync(statePath(r), 'utf8');
    editState(r, (s) => EDITS.signers(s, r));
    await expect(r.restartControlPlane()).rejects.toThrow(/invalid state\.signers: signers differs/);
    writeFileSync(statePath(r), written);
    editState(r, (s) => {
      EDITS.policies(s, r);
      delete s.governance.digests;
    });
    await expect(r.restartControlPlane()).rejects.toThrow(/invalid state\.governance\.digests: missing/);
  });

  it('attack: the governance section deleted by hand, then a restart', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    await applyChange(r, admins, [{ op: 'set_asset', asset: { chain: 'memory:devnet', symbol: 'USD', decimals: 6, issuer: 'rIssuer' } }]);
    await r.restartControlPlane();
    const written = readFileSync(statePath(r), 'utf8');
    // Without its governance section the file would be taken as one never governed: every
    // direct route open again and hand edits reloaded, as before issue #23.
    editState(r, (s) => {
      delete s.governance;
      EDITS.devices(s, r);
    });
    await expect(r.restartControlPlane()).rejects.toThrow(/invalid state\.governance: the governance section was removed/);
    // Nor as a fresh one: the admin policy re-added at version 0 without its digests.
    editState(r, (s) => {
      s.governance = { policy: governance };
    });
    await expect(r.restartControlPlane()).rejects.toThrow(/invalid state\.governance\.digests: missing/);
    writeFileSync(statePath(r), written);
    await r.restartControlPlane();
    expect((await call(r, 'GET', '/changes')).body.version).toBe(1);
  });

  it('governance first set up by a reload records the digests; from then on a hand edit is refused', async () => {
    const r = (rig = await setupRig(approvalPolicy));
    // No governance: hand edits are reloaded as always.
    editState(r, (s) => EDITS.assets(s, r));
    expect(await r.cp.reload()).toMatchObject({ reloaded: true });
    expect(readState(r).governance).toBeUndefined();
    editState(r, (s) => {
      s.governance = { policy: governance };
    });
    expect(await r.cp.reload()).toMatchObject({ reloaded: true });
    const sealed = readState(r);
    expect(sealed.governance.digests).toEqual(governedDigests(parseState(readFileSync(statePath(r), 'utf8'))));
    editState(r, (s) => EDITS.wallets(s, r));
    expect((await expectError(r.cp.reload())).data).toMatchObject({ reason: 'governed_section_edited', sections: ['wallets'] });
  });

  it('attack: a webhook created directly under governance', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const direct = await call(r, 'POST', '/webhooks', { url: 'https://93.184.215.14/hook' });
    expect(direct.status).toBe(409);
    expect(direct.body.error).toMatchObject({ data: { reason: 'governed', version: 0 } });
    expect(direct.body.error.message).toMatch(/POST \/webhooks is closed under governance: propose a change set with a set_webhook op \(POST \/changes\)/);
    expect(readState(r).webhooks.endpoints).toEqual([]);
    // One added by change set cannot be removed directly either.
    const applied = await applyChange(r, admins, [{ op: 'set_webhook', url: 'https://93.184.215.14/hook' }]);
    const id = applied.webhook_secrets[0].id as string;
    const removed = await call(r, 'DELETE', `/webhooks/${id}`);
    expect(removed.status).toBe(409);
    expect(removed.body.error.data).toMatchObject({ reason: 'governed', version: 1 });
    expect((await call(r, 'GET', '/webhooks')).body.webhooks.map((x: { id: string }) => x.id)).toEqual([id]);
    // The admin quorum removes it: out of the state, with its webhook.deleted receipt after change.applied.
    await applyChange(r, admins, [{ op: 'remove_webhook', id }]);
    expect((await call(r, 'GET', '/webhooks')).body.webhooks).toEqual([]);
    const events = (await call(r, 'GET', '/events?types=webhook.created,webhook.deleted,change.applied')).body.events.map((e: { type: string }) => e.type);
    expect(events).toEqual(['change.applied', 'webhook.created', 'change.applied', 'webhook.deleted']);
    // An unknown endpoint is refused when proposed, naming the op.
    const unknown = await call(r, 'POST', '/changes', { base_version: 2, ops: [{ op: 'remove_webhook', id }] });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toMatch(/change\.ops\.0.*unknown webhook/);
  });

  it('attack: a device paired under governance approves without a change set', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const wallet = r.w.wallet.wallet;
    const key = generateEd25519KeyPair();
    const code = await r.cp.pairCreate({ role: 'approver', label: 'phone' });
    const challenge = fromHex(code.challenge, 'challenge', 32);
    const claimed = (await r.cp.pairClaim({ code: code.code, public_key: key.publicKeyHex, signature: toHex(signEd25519(challenge, key.secretKey)), label: 'phone' })) as any;
    expect(claimed).toMatchObject({ paired: true, device: { role: 'viewer' }, counted_by: [], requested_role: 'approver' });
    expect(claimed.note).toMatch(/paired as a viewer: under governance its role \(approver\) is given by a change set .*set_device_role/);
    const id = claimed.device.id as string;
    // Its approval does not count: it is no approver.
    const { intentId } = await r.cp.createIntent({ wallet, destination: r.w.destination, amount: '3000001' });
    const mine = (at: number): SignedApproval => signApproval({ approver_id: id, intent: intentId, verdict: 'approve', at, strong_auth: false }, key.secretKey);
    const refused = await expectError(r.cp.approveSigned(intentId, mine(r.w.clock.now - 5)));
    expect(refused.status).toBe(400);
    expect(refused.shortMessage).toMatch(/approver_id/);
    // A reload of the file the pairing wrote is fine (the control plane recorded it).
    expect(await r.cp.reload()).toMatchObject({ reloaded: true });
    // The admin quorum gives it the role and a place in the policy: now it approves.
    const p = approvalPolicy(wallet);
    const policy = { ...p, version: 2, rules: p.rules.map((x) => (x.rule === 'approval_threshold' ? { ...x, approvers: [...x.approvers, { id, weight: 1 }] } : x)) };
    await applyChange(r, admins, [
      { op: 'set_device_role', device: id, role: 'approver' },
      { op: 'set_policy', policy },
    ]);
    r.w.clock.now += 60;
    expect((await r.cp.approveSigned(intentId, mine(r.w.clock.now - 5))).status).toBe('allowed');
    // Revocation stays direct (it only removes power), and is recorded so a reload still passes.
    expect(await r.cp.revokeDevice(id)).toMatchObject({ revoked: true });
    expect(await r.cp.reload()).toMatchObject({ reloaded: true });
  });

  it("a set_approver op's passkey is counted as strong at the control plane, with the op's origins", async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const wallet = r.w.wallet.wallet;
    const origin = 'https://approve.example';
    const passkey = createSoftwarePasskey({ rp_id: 'approve.example', origin });
    const dave = generateEd25519KeyPair();
    const p = approvalPolicy(wallet);
    const policy = { ...p, version: 2, rules: p.rules.map((x) => (x.rule === 'approval_threshold' ? { ...x, approvers: [...x.approvers, { id: 'dave', weight: 1 }] } : x)) };
    const registered = { credential_id: passkey.credential_id, public_key: passkey.public_key, backup_eligible: false, rp_id: 'approve.example' };
    await applyChange(r, admins, [
      { op: 'set_approver', id: 'dave', public_key: dave.publicKeyHex, weight: 1, passkey: { ...registered, origins: [origin] } },
      { op: 'set_policy', policy },
    ]);
    const device = ((await r.cp.devices()) as { devices: any[] }).devices.find((d) => d.id === 'dave');
    expect(device).toMatchObject({ role: 'approver', passkey: registered, passkey_origins: [origin] });
    r.w.clock.now += 60;
    const { intentId } = await r.cp.createIntent({ wallet, destination: r.w.destination, amount: '3000001' });
    const approval = signApproval({ approver_id: 'dave', intent: intentId, verdict: 'approve', at: r.w.clock.now - 5, strong_auth: true }, dave.secretKey);
    // From an origin the op did not name (the control plane's own default): not strong, here as at the signer.
    const elsewhere = await expectError(r.cp.approveSigned(intentId, passkey.attach(approval, { origin: `http://localhost:${new URL(r.cp.baseUrl).port}` })));
    expect((elsewhere as ValidationError).data).toMatchObject({ reason: 'strong_auth_unproven', webauthn: 'wrong_origin' });
    // From the op's origin: strong, recorded, and the signer (same passkey from the same op) signs.
    const proven = passkey.attach(approval);
    expect((await r.cp.approveSigned(intentId, proven)).status).toBe('allowed');
    expect(((await r.cp.intent(intentId)) as { approvals: SignedApproval[] }).approvals).toEqual([proven]);
    const out = (await r.cp.execute(intentId)) as { signers: { signer: string; ok: boolean }[] };
    expect(out.signers.find((x) => x.signer === 'signer-A')).toMatchObject({ ok: true });
    // A later set_approver without a passkey drops it, as the signer's trust file does.
    await applyChange(r, admins, [{ op: 'set_approver', id: 'dave', public_key: dave.publicKeyHex, weight: 1 }]);
    const again = ((await r.cp.devices()) as { devices: any[] }).devices.find((d) => d.id === 'dave');
    expect(again.passkey).toBeUndefined();
    expect(again.passkey_origins).toBeUndefined();
  });
});
