/**
 * Change sets end to end on one machine (issue #23): the control plane on a real loopback socket
 * and the real signer app (its own trust file with the same admin quorum, journal and key). A 2-of-3
 * admin quorum raises the wallet's approval threshold from 1 to 2 through POST /changes and
 * /changes/{id}/approve; the change applies atomically, reaches the signer live (no restart), an
 * approval given before no longer counts on either side, and two fresh ones get the signature.
 */
import { changeSetDigest, changeSetId, policyDigest, signChangeApproval, type ChangeSet, type PolicySet } from '@vault/sdk';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminMain } from '../../src/control-plane/admin-cli.js';
import { MAX_PROPOSED_CHANGE_BYTES } from '../../src/control-plane/governance.js';
import { CHANGE_BODY_LIMIT } from '../../src/control-plane/app.js';
import { encodeSealed, MAX_STORED_CHANGES, parseState, type StoredChange } from '../../src/control-plane/state.js';
import { adminQuorum, call } from './governance.js';
import { approvalPolicy, OPERATOR, setupRig, type Rig } from './rig.js';

const { admins, governance } = adminQuorum(21);

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const raised = (wallet: string): PolicySet => {
  const p = approvalPolicy(wallet);
  return { ...p, version: 2, rules: p.rules.map((x) => (x.rule === 'approval_threshold' ? { ...x, required_weight: 2 } : x)) };
};
const adminVerdict = (r: Rig, who: (typeof admins)[number], change: ChangeSet, verdict: 'approve' | 'reject' = 'approve') =>
  signChangeApproval({ admin_id: who.id, change: changeSetDigest(change), verdict, at: r.w.clock.now - 30 }, who.secret);

const signerLine = (out: { signers: { signer: string; ok: boolean; detail: string }[] }) => out.signers.find((x) => x.signer === 'signer-A');

describe('change sets: control plane and signer', () => {
  it('a 2-of-3 admin quorum raises the threshold; the signer follows live; old approvals stop counting', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const wallet = r.w.wallet.wallet;
    // An intent approved by alice under threshold 1: allowed.
    const { intentId: before } = await r.cp.createIntent({ wallet, destination: r.w.destination, amount: '3000001' });
    expect((await r.cp.approveSigned(before, r.w.approve(before, 'alice'))).status).toBe('allowed');

    const proposed = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'set_policy', policy: raised(wallet) }] });
    expect(proposed).toMatchObject({ status: 201, body: { status: 'pending', base_version: 0, change: { proposed_by: 'operator:operator', created_at: r.w.clock.now } } });
    const change = proposed.body.change as ChangeSet;
    const id = proposed.body.id as string;
    expect(id).toBe(`chg_${changeSetDigest(change).slice(0, 32)}`);

    const first = await call(r, 'POST', `/changes/${id}/approve`, adminVerdict(r, admins[0]!, change));
    expect(first).toMatchObject({ status: 200, body: { status: 'pending', waiting: { reason: 'under_quorum', weight: 1, threshold: 2 } } });
    expect((await r.signer.governance()).version).toBe(0);
    const second = await call(r, 'POST', `/changes/${id}/approve`, adminVerdict(r, admins[2]!, change));
    expect(second).toMatchObject({ status: 200, body: { status: 'applied', version: 1, signers: [{ signer: 'signer-A', ok: true }] } });
    // The signer took it on live: same process, new version, the new policy pinned.
    expect(await r.signer.governance()).toMatchObject({ version: 1, applied: [{ version: 1, digest: changeSetDigest(change) }] });
    expect(await r.cp.policy(wallet)).toMatchObject({ version: 2 });
    const events = await call(r, 'GET', '/events?types=change.applied');
    expect(events.body.events).toMatchObject([{ type: 'change.applied', subject: { change: id }, data: { version: 1 } }]);

    // alice's approval was given under the old policy: it no longer counts.
    r.w.clock.now += 60;
    expect((await call(r, 'GET', `/intent/${before}`)).body.status).toBe('pending_approvals');
    // Sent straight to the signer anyway (a compromised control plane), approvals from before the
    // change do not count there either.
    const old = await r.w.request({ amount: '3000009' }, { approvers: ['alice', 'bob'], sign: (iid, who) => r.w.approve(iid, who, 'approve', r.w.clock.now - 100) });
    const refused = await r.signer.sign({ ...old, policy: raised(wallet), policy_digest: policyDigest(raised(wallet)) });
    expect(refused.ok ? 'signed' : refused.refusal.refused.reason).toBe('policy_denied');

    // Two fresh approvals: allowed, and the signer signs under the new policy.
    await r.cp.approveSigned(before, r.w.approve(before, 'bob'));
    expect((await r.cp.approveSigned(before, r.w.approve(before, 'carol'))).status).toBe('allowed');
    const out = await r.cp.execute(before);
    expect(signerLine(out as never)).toMatchObject({ ok: true });
  });

  it('a stale base is 409 naming both versions; a signer that missed a change gets it before it is next asked to sign', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const wallet = r.w.wallet.wallet;
    await r.down();
    const proposed = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'set_policy', policy: raised(wallet) }] });
    const change = proposed.body.change as ChangeSet;
    await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[0]!, change));
    const applied = await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[1]!, change));
    expect(applied).toMatchObject({ status: 200, body: { status: 'applied', signers: [{ signer: 'signer-A', ok: false }] } });
    const stale = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'remove_approver', id: 'carol' }] });
    expect(stale).toMatchObject({ status: 409, body: { base_version: 0, current_version: 1 } });
    expect(stale.body.error).toMatch(/version 0.*current version is 1/);

    await r.up();
    expect((await r.signer.governance()).version).toBe(0);
    r.w.clock.now += 60;
    const { intentId } = await r.cp.createIntent({ wallet, destination: r.w.destination, amount: '3000002' });
    await r.cp.approveSigned(intentId, r.w.approve(intentId, 'alice'));
    await r.cp.approveSigned(intentId, r.w.approve(intentId, 'bob'));
    const out = await r.cp.execute(intentId);
    expect(signerLine(out as never)).toMatchObject({ ok: true });
    expect((await r.signer.governance()).version).toBe(1);
  });

  it('a valid admin rejection vetoes; a forged admin approval is 400 naming approval', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const proposed = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'remove_approver', id: 'carol' }] });
    const change = proposed.body.change as ChangeSet;
    const forged = { ...adminVerdict(r, admins[0]!, change), signature: adminVerdict(r, admins[1]!, change).signature };
    const bad = await call(r, 'POST', `/changes/${proposed.body.id}/approve`, forged);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/approval.*bad_signature/);
    await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[0]!, change));
    const veto = await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[1]!, change, 'reject'));
    expect(veto).toMatchObject({ status: 200, body: { status: 'vetoed' } });
    expect((await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[2]!, change))).status).toBe(403);
    expect((await call(r, 'GET', '/devices')).body.devices.find((d: { id: string }) => d.id === 'carol').revoked).toBe(false);
  });

  it('the delay runs from the approval that reached quorum, then /apply; a pending change set goes stale; a webhook to a private address is refused', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance: { ...governance, delay_seconds: 3600 } }));
    const wallet = r.w.wallet.wallet;
    const webhook = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'set_webhook', url: 'http://127.0.0.1:9/hook' }] });
    expect(webhook.status).toBe(400);
    expect(JSON.stringify(webhook.body)).toMatch(/ops\.0\.url.*SSRF/);
    const other = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'remove_approver', id: 'carol' }] });
    const proposed = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'set_policy', policy: raised(wallet) }] });
    const change = proposed.body.change as ChangeSet;
    await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[0]!, change));
    const quorum = await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[1]!, change));
    expect(quorum.body).toMatchObject({ status: 'pending', waiting: { reason: 'delay_not_elapsed', ready_at: r.w.clock.now - 30 + 3600 } });
    expect((await call(r, 'POST', `/changes/${proposed.body.id}/apply`)).status).toBe(403);
    r.w.clock.now += 3600;
    // An hour later the operator's session has idled out: a new one.
    await r.cp.unlock(OPERATOR);
    const applied = await call(r, 'POST', `/changes/${proposed.body.id}/apply`);
    expect(applied).toMatchObject({ status: 200, body: { status: 'applied', version: 1, signers: [{ ok: true }] } });
    expect((await r.signer.governance()).version).toBe(1);
    // The other change set was based on version 0: stale now, and its approvals can never count.
    expect((await call(r, 'GET', `/changes/${other.body.id}`)).body.status).toBe('stale');
    const late = await call(r, 'POST', `/changes/${other.body.id}/approve`, adminVerdict(r, admins[0]!, other.body.change));
    expect(late).toMatchObject({ status: 403 });
    expect(JSON.stringify(late.body)).toMatch(/stale/);
  });

  it('set_webhook: the control plane makes and seals the secret when the change applies, shown once in that answer', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const proposed = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'set_webhook', url: 'https://93.184.215.14/hook', types: ['change.*'], description: 'audit' }] });
    expect(proposed.status).toBe(201);
    expect(JSON.stringify(proposed.body)).not.toMatch(/secret/);
    const change = proposed.body.change as ChangeSet;
    await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[0]!, change));
    const applied = await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[1]!, change));
    expect(applied.body).toMatchObject({ status: 'applied', webhook_secrets: [{ id: expect.stringMatching(/^wh_/), secret: expect.stringMatching(/^whsec_/) }] });
    const listed = (await call(r, 'GET', '/webhooks')).body.webhooks;
    expect(listed).toMatchObject([{ id: applied.body.webhook_secrets[0].id, types: ['change.*'], description: 'audit' }]);
    expect(JSON.stringify(listed)).not.toContain(applied.body.webhook_secrets[0].secret);
    // Never shown again.
    expect(JSON.stringify((await call(r, 'GET', `/changes/${proposed.body.id}`)).body)).not.toContain(applied.body.webhook_secrets[0].secret);
    const events = (await call(r, 'GET', '/events?types=webhook.created,change.applied')).body.events.map((e: { type: string }) => e.type);
    expect(events).toEqual(['change.applied', 'webhook.created']);
  });

  it('admins approve from the command line: `admin keygen` and `change approve`', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-admin-cli-'));
    try {
      const run = async (...argv: string[]) => {
        let text = '';
        const code = await adminMain(argv, (t) => (text += t), { VAULT_SESSION_TOKEN: rig?.cp.getToken() ?? '' }, () => rig?.w.clock.now ?? 0);
        return { code, out: JSON.parse(text) };
      };
      const keys = [];
      for (const id of ['ann', 'ben', 'cat']) keys.push((await run('admin', 'keygen', '--id', id, '--out', join(dir, `${id}.key`))).out as { id: string; public_key: string; weight: number });
      expect(statSync(join(dir, 'ann.key')).mode & 0o777).toBe(0o600);
      await expect(run('admin', 'keygen', '--id', 'ann', '--out', join(dir, 'ann.key'))).rejects.toThrow(/never overwritten/);
      const r = (rig = await setupRig(approvalPolicy, undefined, { governance: { admins: keys.map(({ id, public_key, weight }) => ({ id, public_key, weight })), threshold: 2, delay_seconds: 0, version: 0 } }));
      const proposed = await call(r, 'POST', '/changes', { base_version: 0, ops: [{ op: 'set_policy', policy: raised(r.w.wallet.wallet) }] });
      const first = await run('change', 'approve', proposed.body.id, '--key', join(dir, 'ann.key'), '--url', r.cp.baseUrl);
      expect(first).toMatchObject({ code: 0, out: { verdict: 'approve', ops: ['set_policy'], base_version: 0, result: { status: 'pending' } } });
      const second = await run('change', 'approve', proposed.body.id, '--key', join(dir, 'cat.key'), '--url', r.cp.baseUrl);
      expect(second).toMatchObject({ code: 0, out: { result: { status: 'applied', version: 1 } } });
      expect((await r.signer.governance()).version).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('attack: a change set the control plane takes but no signer can, once applied', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    const wallet = r.w.wallet.wallet;
    // Under the control plane's body limit, but with the admins' approvals the push to a signer
    // would be over the signer's: once applied, no signer could be brought to the version again.
    const address = (i: number) => `r${String(i).padStart(8, '0')}${'x'.repeat(230)}`;
    const blocked = (n: number) => ({ ...raised(wallet), rules: [...raised(wallet).rules, { rule: 'destination_blocklist', addresses: Array.from({ length: n }, (_, i) => address(i)) }] });
    const body = (n: number) => ({ base_version: 0, ops: [{ op: 'set_policy', policy: blocked(n) }] });
    const most = (limit: number) => {
      let n = 1;
      while (JSON.stringify(body(n * 2)).length < limit) n *= 2;
      while (JSON.stringify(body(n + 1)).length < limit) n += 1;
      return n;
    };
    const tooLarge = await call(r, 'POST', '/changes', body(most(CHANGE_BODY_LIMIT - 512)));
    expect(tooLarge.status).toBe(400);
    expect(JSON.stringify(tooLarge.body)).toMatch(/invalid change: .*bytes as JSON; at most/);
    expect((await call(r, 'GET', '/changes')).body.changes).toEqual([]);
    // The largest one taken still reaches the signer with its approvals.
    const proposed = await call(r, 'POST', '/changes', body(most(MAX_PROPOSED_CHANGE_BYTES - 1024)));
    expect(proposed.status).toBe(201);
    const change = proposed.body.change as ChangeSet;
    await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[0]!, change));
    const applied = await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[1]!, change));
    expect(applied).toMatchObject({ status: 200, body: { status: 'applied', signers: [{ signer: 'signer-A', ok: true }] } });
    expect((await r.signer.governance()).version).toBe(1);
  });

  it('attack: change sets proposed until the store is full freeze governance for good', async () => {
    const r = (rig = await setupRig(approvalPolicy, undefined, { governance }));
    // What MAX_STORED_CHANGES proposals by a hostile admin session leave (written directly: thousands
    // of POSTs would only be slower): every slot held by a pending change set nobody will approve.
    const junk = (i: number): StoredChange => {
      const change: ChangeSet = { base_version: 0, ops: [{ op: 'set_device_role', device: 'alice', role: 'viewer' }], proposed_by: 'apikey:mallory', created_at: r.w.clock.now, note: `junk ${i}` };
      const digest = changeSetDigest(change);
      return { id: changeSetId(digest), digest, change, approvals: [], status: 'pending', proposed_at: r.w.clock.now };
    };
    const path = join(r.stateDir, 'state.json');
    const state = parseState(readFileSync(path, 'utf8'));
    const flood = Array.from({ length: MAX_STORED_CHANGES }, (_, i) => junk(i));
    writeFileSync(path, encodeSealed({ ...state, governance: { ...state.governance!, changes: flood } }).text);
    await r.restartControlPlane();
    const legit = { base_version: 0, ops: [{ op: 'set_policy', policy: raised(r.w.wallet.wallet) }] };
    expect(await call(r, 'POST', '/changes', legit)).toMatchObject({ status: 403, body: { error: { data: { reason: 'too_many_changes' } } } });
    // One admin rejection is enough to make room: a vetoed change set can never apply.
    const victim = flood[0]!;
    expect(await call(r, 'POST', `/changes/${victim.id}/approve`, adminVerdict(r, admins[2]!, victim.change, 'reject'))).toMatchObject({ status: 200, body: { status: 'vetoed' } });
    const proposed = await call(r, 'POST', '/changes', legit);
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(201);
    expect((await call(r, 'GET', `/changes/${victim.id}`)).status).toBe(404);
    const change = proposed.body.change as ChangeSet;
    await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[0]!, change));
    expect(await call(r, 'POST', `/changes/${proposed.body.id}/approve`, adminVerdict(r, admins[1]!, change))).toMatchObject({ status: 200, body: { status: 'applied', version: 1 } });
    // The flood is stale now (based on version 0): the next proposal drops it, the applied change stays.
    const next = await call(r, 'POST', '/changes', { base_version: 1, ops: [{ op: 'set_device_role', device: 'bob', role: 'approver' }] });
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    const listed = (await call(r, 'GET', '/changes')).body.changes as { id: string; status: string }[];
    expect(listed.map((c) => c.status)).toEqual(['applied', 'pending']);
  });

  it('attack: a compromised control plane shows `change approve` another change set under the id the admin names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-admin-cli-'));
    // The control plane answers GET /changes/{id} with a change set of its own (one that adds its
    // approver) under the id of the change the admin reviewed; it records what is posted back.
    const reviewed: ChangeSet = { base_version: 0, ops: [{ op: 'set_device_role', device: 'dev_1', role: 'viewer' }], proposed_by: 'operator:ann', created_at: 1767225600 };
    const swapped: ChangeSet = { ...reviewed, ops: [{ op: 'set_approver', id: 'mallory', public_key: admins[0]!.publicKeyHex, weight: 1 }] };
    const posted: string[] = [];
    const server = createServer((req, res) => {
      if (req.method === 'POST') posted.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.method === 'GET' ? { id: changeSetId(changeSetDigest(reviewed)), change: swapped } : { status: 'pending' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      let text = '';
      await adminMain(['admin', 'keygen', '--id', 'ann', '--out', join(dir, 'ann.key')], () => undefined);
      const approving = adminMain(['change', 'approve', changeSetId(changeSetDigest(reviewed)), '--key', join(dir, 'ann.key'), '--url', url], (t) => (text += t), { VAULT_SESSION_TOKEN: 'session' }, () => 1767225660);
      await expect(approving).rejects.toThrow(/is not change chg_[0-9a-f]{32}/);
      expect(posted).toEqual([]);
      expect(text).toBe('');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
