/**
 * Issue #23 end to end on the three devnets: the local vault's own set-up (three devnets, three
 * signer processes, the control plane) with a 2-of-3 admin quorum in every signer's trust file
 * (`vault-signer admins`) and in the control plane's state. One change set adds a second approver
 * and raises each wallet's approval threshold from 1 to 2; two admins approve it; it applies and
 * reaches the signer processes with no restart (same PIDs, new version); an approval made before it
 * no longer counts; each intent confirms on its ledger with two fresh approvals.
 */
import { changeSetDigest, createSignerClient, generateEd25519KeyPair, signApproval, signChangeApproval } from '@vault/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSoftwarePasskey } from '@vault/sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUp, stopAll } from '../vault.mjs';

const now = () => Math.floor(Date.now() / 1000);
const admins = ['ann', 'ben', 'cat'].map((id) => ({ id, ...generateEd25519KeyPair() }));
const second = { id: 'dev_second', ...generateEd25519KeyPair() };
// The second approver's passkey comes with its set_approver op (origins and all): both the control
// plane and the signers take it from there, so both count its approvals as strong.
const secondOrigin = 'https://second.example';
second.passkey = createSoftwarePasskey({ rp_id: 'second.example', origin: secondOrigin });

let dir;
let v;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vault-change-sets-'));
  v = await setUp({ dir, port: '0', kdfLog2: '10', admins: { admins: admins.map((a) => ({ id: a.id, public_key: a.publicKeyHex, weight: 1 })), threshold: 2, delay_seconds: 0 } });
}, 300_000);

afterAll(async () => {
  await stopAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function call(method, path, body) {
  const res = await fetch(`${v.cpUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${v.cp.getToken()}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

// Strong: each approver's passkey signs over this very approval (the device's, registered at pairing).
const approval = (intent, who, at) => who.passkey.attach(signApproval({ approver_id: who.id, intent, verdict: 'approve', at, strong_auth: true }, who.secretKey));
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('change sets on the three devnets', () => {
  it('a 2-of-3 admin quorum raises the approval threshold; the signers enforce it without a restart', async () => {
    const device = { id: v.deviceId, secretKey: v.device.secretKey, passkey: v.passkey };
    const intents = {
      xrpl: { wallet: 'ops-xrpl', destination: v.examples.xrpl, amount: '60000000' },
      stellar: { wallet: 'ops-stellar', destination: v.examples.stellar, amount: '100000000', asset_decimals: 7 },
      evm: { wallet: 'ops-evm', destination: v.examples.evm, amount: '2500000000000000000', asset_decimals: 18 },
    };
    // Before the change: an intent on each ledger, approved by the device (threshold 1).
    const before = now() - 2;
    const ids = {};
    for (const [chain, request] of Object.entries(intents)) {
      ids[chain] = (await v.cp.createIntent(request)).intentId;
      // The Stellar wallet's policy has no approval rule yet (its intent is allowed as it is).
      if (chain !== 'stellar') expect((await v.cp.approveSigned(ids[chain], approval(ids[chain], device, before))).status, chain).toBe('allowed');
    }

    // The change set: a second approver, and each wallet's policy needing weight 2 of the two.
    const approvers = [{ id: v.deviceId, weight: 1 }, { id: second.id, weight: 1 }];
    const secondPasskey = { credential_id: second.passkey.credential_id, public_key: second.passkey.public_key, backup_eligible: false, rp_id: 'second.example', origins: [secondOrigin] };
    const ops = [{ op: 'set_approver', id: second.id, public_key: second.publicKeyHex, weight: 1, passkey: secondPasskey }];
    for (const { wallet } of Object.values(intents)) {
      const policy = await v.cp.policy(wallet);
      const rules = policy.rules.filter((r) => r.rule !== 'approval_threshold');
      const above = policy.rules.find((r) => r.rule === 'approval_threshold')?.above ?? '0';
      ops.push({ op: 'set_policy', policy: { wallet, version: policy.version + 1, rules: [...rules, { rule: 'approval_threshold', above, required_weight: 2, approvers }] } });
    }
    const proposed = await call('POST', '/changes', { base_version: 0, ops });
    expect(proposed.status).toBe(201);
    const change = proposed.body.change;
    const verdict = (a) => signChangeApproval({ admin_id: a.id, change: changeSetDigest(change), verdict: 'approve', at: now() }, a.secretKey);
    expect((await call('POST', `/changes/${proposed.body.id}/approve`, verdict(admins[0]))).body.status).toBe('pending');
    const applied = await call('POST', `/changes/${proposed.body.id}/approve`, verdict(admins[2]));
    expect(applied.body).toMatchObject({ status: 'applied', version: 1 });
    expect(applied.body.signers).toHaveLength(3);
    for (const s of applied.body.signers) expect(s, JSON.stringify(s)).toMatchObject({ ok: true });

    // The control plane keeps the op's passkey on the approver's device record, with its origins.
    const devices = (await call('GET', '/devices')).body.devices;
    expect(devices.find((d) => d.id === second.id)).toMatchObject({ role: 'approver', passkey: { credential_id: second.passkey.credential_id }, passkey_origins: [secondOrigin] });

    // The signer processes took it on live: same PIDs, version 1.
    for (const s of v.signers) {
      expect(alive(s.pid), `signer ${s.name} still running`).toBe(true);
      expect((await createSignerClient({ baseUrl: s.url, token: s.env.VAULT_SIGNER_TOKEN }).governance()).version).toBe(1);
    }

    for (const [chain, id] of Object.entries(ids)) {
      // The device's approval was given under the old policy: it no longer counts (Stellar: the new
      // policy needs approvals it never had).
      expect((await call('GET', `/intent/${id}`)).body.status, chain).toBe('pending_approvals');
      expect((await call('POST', `/intent/${id}/execute`)).status, chain).toBe(403);
      // Two fresh approvals: allowed, and the signers sign under the new policy.
      await v.cp.approveSigned(id, approval(id, device, now()));
      expect((await v.cp.approveSigned(id, approval(id, second, now()))).status, chain).toBe('allowed');
      const out = await v.cp.execute(id);
      expect(out.status, `${chain}: ${JSON.stringify(out)}`).toBe('confirmed');
    }
  }, 300_000);
});
