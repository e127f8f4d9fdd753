/**
 * A device session speaks for the device as state.json has it now, not as it was at sign-in: a
 * change set that removes an approver or changes a device's role ends the device's open sessions,
 * as POST /devices/{id}/revoke does. The control plane on a real socket, the real signer app with
 * the same admin quorum.
 */
import { deviceSessionMessage, generateEd25519KeyPair, signEd25519, toHex } from '@vault/sdk';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminQuorum, applyChange, call } from './governance.js';
import { approvalPolicy, setupRig, type Rig } from './rig.js';

const { admins, governance } = adminQuorum(31);

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A device session token, proved with the device's own key (POST /device/challenge, /device/session). */
async function signIn(r: Rig, id: string, secretKey: Uint8Array): Promise<string> {
  const c = await call(r, 'POST', '/device/challenge', { device_id: id }, null);
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  const signature = toHex(signEd25519(deviceSessionMessage({ device: id, challenge: c.body.challenge }), secretKey));
  const s = await call(r, 'POST', '/device/session', { device_id: id, challenge: c.body.challenge, signature }, null);
  expect(s.status, JSON.stringify(s.body)).toBe(200);
  return s.body.token as string;
}

describe('device sessions', () => {
  it("attack: a device signing in over and over evicts the operators' sessions", async () => {
    const r = (rig = await setupRig(approvalPolicy));
    const admin = r.cp.getToken();
    expect((await call(r, 'GET', '/intents')).status).toBe(200);
    const alice = r.w.approvers.find((a) => a.id === 'alice')!;
    // More sign-ins than the store holds sessions: each is cheap for whoever holds a device key.
    for (let i = 0; i < 70; i++) await signIn(r, 'alice', alice.secret);
    expect((await call(r, 'GET', '/intents', undefined, admin)).status).toBe(200);
    // Its own latest sessions still work; its oldest made room for them.
    const latest = await signIn(r, 'alice', alice.secret);
    expect((await call(r, 'GET', '/device/intents', undefined, latest)).status).toBe(200);
  });
});

describe('operator sessions', () => {
  it('attack: an account demoted or disabled in state.json keeps its admin session after the reload', async () => {
    const r = (rig = await setupRig(approvalPolicy));
    for (const name of ['olga', 'otto']) expect((await call(r, 'POST', '/operators', { name, role: 'admin', passphrase: `${name} passphrase` })).status).toBe(200);
    const unlock = async (name: string) => (await call(r, 'POST', '/session/unlock', { name, passphrase: `${name} passphrase` }, null)).body.token as string;
    const olga = await unlock('olga');
    const otto = await unlock('otto');
    expect((await call(r, 'GET', '/api-keys', undefined, olga)).status).toBe(200);
    // By hand, as state.json's operators section allows: olga becomes an auditor, otto is disabled.
    const path = join(r.stateDir, 'state.json');
    const state = JSON.parse(readFileSync(path, 'utf8'));
    for (const o of state.operators) {
      if (o.name === 'olga') o.role = 'auditor';
      if (o.name === 'otto') o.disabled_at = r.w.clock.now;
    }
    writeFileSync(path, JSON.stringify(state, null, 2));
    expect((await call(r, 'POST', '/admin/reload')).status).toBe(200);
    expect((await call(r, 'POST', '/operators', { name: 'eve', role: 'admin', passphrase: 'eve passphrase' }, olga)).status).toBe(401);
    expect((await call(r, 'GET', '/intents', undefined, otto)).status).toBe(401);
    // Unlocked again, olga is what the file says: an auditor, who reads but manages nothing.
    const auditor = await unlock('olga');
    expect((await call(r, 'GET', '/api-keys', undefined, auditor)).status).toBe(200);
    expect((await call(r, 'POST', '/operators', { name: 'eve', role: 'admin', passphrase: 'eve passphrase' }, auditor)).status).toBe(403);
    // The legacy passphrase's session is not an account's: it carries on.
    expect((await call(r, 'GET', '/intents')).status).toBe(200);
  });
});

describe('device challenges', () => {
  it("attack: a flood of challenges for one device evicts another device's open challenge", async () => {
    const r = (rig = await setupRig(approvalPolicy));
    const alice = r.w.approvers.find((a) => a.id === 'alice')!;
    const c = await call(r, 'POST', '/device/challenge', { device_id: 'alice' }, null);
    expect(c.status).toBe(200);
    // Asking costs nothing (no signature): whoever knows a device id can ask again and again.
    for (let i = 0; i < 1100; i++) expect((await call(r, 'POST', '/device/challenge', { device_id: 'bob' }, null)).status).toBe(200);
    const signature = toHex(signEd25519(deviceSessionMessage({ device: 'alice', challenge: c.body.challenge }), alice.secret));
    const s = await call(r, 'POST', '/device/session', { device_id: 'alice', challenge: c.body.challenge, signature }, null);
    expect(s.status, JSON.stringify(s.body)).toBe(200);
  });
});

describe('device sessions under change sets', () => {
  it('attack: an initiator demoted by a change set keeps creating intents with its open session', async () => {
    const key = generateEd25519KeyPair();
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance, devices: [{ id: 'ian', role: 'initiator', label: 'ian', public_key: key.publicKeyHex, paired_at: 1, revoked_at: null }] }));
    const wallet = r.w.wallet.wallet;
    const token = await signIn(r, 'ian', key.secretKey);
    const before = await call(r, 'POST', '/intent', { wallet, destination: r.w.destination, amount: '1000' }, token);
    expect(before.status, JSON.stringify(before.body)).toBe(200);

    await applyChange(r, admins, [{ op: 'set_device_role', device: 'ian', role: 'viewer' }]);
    // The session was opened as an initiator; the device is a viewer now: it must sign in again.
    const after = await call(r, 'POST', '/intent', { wallet, destination: r.w.destination, amount: '1001' }, token);
    expect(after.status).toBe(401);
    expect((await call(r, 'GET', '/intents', undefined, token)).status).toBe(401);
    // Signed in again, it is what the change set made it: a viewer, who reads but does not create.
    const fresh = await signIn(r, 'ian', key.secretKey);
    expect((await call(r, 'GET', '/intents', undefined, fresh)).status).toBe(200);
    expect((await call(r, 'POST', '/intent', { wallet, destination: r.w.destination, amount: '1002' }, fresh)).status).toBe(403);
  });

  it('attack: an approver removed by a change set keeps reading with its open session', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const carol = r.w.approvers.find((a) => a.id === 'carol')!;
    const token = await signIn(r, 'carol', carol.secret);
    expect((await call(r, 'GET', '/device/intents', undefined, token)).status).toBe(200);

    await applyChange(r, admins, [{ op: 'remove_approver', id: 'carol' }]);
    // Revoked by the quorum as by POST /devices/{id}/revoke: its session ends, and it gets no new one.
    expect((await call(r, 'GET', '/device/intents', undefined, token)).status).toBe(401);
    expect((await call(r, 'POST', '/device/challenge', { device_id: 'carol' }, null)).status).toBe(401);
  });

  it("attack: an approver's old key keeps its session after a change set replaces the key", async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const carol = r.w.approvers.find((a) => a.id === 'carol')!;
    const stolen = await signIn(r, 'carol', carol.secret);
    const replacement = generateEd25519KeyPair();
    await applyChange(r, admins, [{ op: 'set_approver', id: 'carol', public_key: replacement.publicKeyHex, weight: 1 }]);
    // The session was proved with the key the quorum just replaced.
    expect((await call(r, 'GET', '/device/intents', undefined, stolen)).status).toBe(401);
    // The new key signs in; a stale token presented after that does not end the new session.
    const fresh = await signIn(r, 'carol', replacement.secretKey);
    expect((await call(r, 'GET', '/device/intents', undefined, stolen)).status).toBe(401);
    expect((await call(r, 'GET', '/device/intents', undefined, fresh)).status).toBe(200);
  });
});
