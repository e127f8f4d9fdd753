/**
 * Change sets at the signer, over a real loopback socket: the signer takes on a new pinned policy,
 * approver or wallet only from a change set its OWN admin quorum signed (trust file `governance`),
 * applies it live (no restart), journals it, and never goes back to an older version, through a
 * push or a restart on the old trust file. Everything else a control plane pushes is refused.
 */
import { changeSetDigest, createSignerClient, policyDigest, signChangeApproval, SIGNER_TOKEN_HEADER, type AdminPolicy, type ChangeSet, type PolicySet, type SignerClient, type SignRequest } from '@vault/sdk';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Listening } from '../../src/http/index.js';
import { main } from '../../src/signer/cli.js';
import { replayGovernance } from '../../src/signer/governance.js';
import { sealKey } from '../../src/signer/keystore.js';
import { startSigner } from '../../src/signer/serve.js';
import { loadTrust, parseTrust, type Trust } from '../../src/signer/trust.js';
import { approver, basePolicy, makeWorld, PASSPHRASE, serveWorld, TEST_KDF, type World } from './helpers.js';

const TOKEN = 'governance-test-token-0123456789abcdef';
const admins = [approver('admin1', 11), approver('admin2', 12), approver('admin3', 13)];
const mallory = approver('mallory', 66);
const governance = (over: Partial<AdminPolicy> = {}): AdminPolicy => ({ admins: admins.map((a) => ({ id: a.id, public_key: a.publicKeyHex, weight: 1 })), threshold: 2, delay_seconds: 0, version: 0, ...over });

let w: World;
let server: Listening;
let signer: SignerClient;
let trustPath: string;

async function serve(trust: Trust): Promise<void> {
  ({ server, client: signer } = await serveWorld(w, TOKEN, { trust }));
}

beforeEach(async () => {
  w = await makeWorld();
  trustPath = join(w.stateDir, '..', 'trust.json');
  writeFileSync(trustPath, JSON.stringify({ ...w.trustFile, governance: governance() }), { mode: 0o600 });
  await serve(loadTrust(trustPath));
});
afterEach(async () => {
  await server.close();
  w.cleanup();
});

/** basePolicy with the approval threshold raised from weight 2 to 3. */
const raised = (): PolicySet => {
  const p = basePolicy(w.wallet.wallet);
  return { ...p, version: 2, rules: p.rules.map((r) => (r.rule === 'approval_threshold' ? { ...r, required_weight: 3 } : r)) };
};
const change = (over: Partial<ChangeSet> = {}): ChangeSet => ({ base_version: 0, ops: [{ op: 'set_policy', policy: raised() }], proposed_by: 'admin1', created_at: w.clock.now - 60, ...over });
const approve = (who: { id: string; secret: Uint8Array }, c: ChangeSet, verdict: 'approve' | 'reject' = 'approve', at = w.clock.now - 30) =>
  signChangeApproval({ admin_id: who.id, change: changeSetDigest(c), verdict, at }, who.secret);

async function push(c: unknown, approvals: unknown[]): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/governance/changes`, { method: 'POST', headers: { 'content-type': 'application/json', [SIGNER_TOKEN_HEADER]: TOKEN }, body: JSON.stringify({ change: c, approvals }) });
  return { status: res.status, body: await res.json().catch(() => null) };
}
async function version(): Promise<number | null> {
  const res = await fetch(`${server.url}/governance`, { headers: { [SIGNER_TOKEN_HEADER]: TOKEN } });
  return ((await res.json()) as { version: number | null }).version;
}

let amount = 5_000_000;
async function fresh(approvers: string[], policy?: PolicySet, at?: number): Promise<SignRequest> {
  amount += 1;
  const req = await w.request({ amount: String(amount) }, { approvers, ...(at !== undefined ? { sign: (id: string, who: string) => w.approve(id, who, 'approve', at) } : {}) });
  return policy ? { ...req, policy, policy_digest: policyDigest(policy) } : req;
}
async function outcome(req: SignRequest): Promise<string> {
  const r = await signer.sign(req);
  return r.ok ? 'signed' : `${r.refusal.refused.reason}: ${r.refusal.message}`;
}

/** The change the admins signed, applied: the signer is at version 1 with the raised policy. */
async function applyRaise(): Promise<ChangeSet> {
  const c = change();
  const r = await push(c, [approve(admins[0]!, c), approve(admins[2]!, c)]);
  expect(r).toMatchObject({ status: 200, body: { ok: true, version: 1, digest: changeSetDigest(c), ready_at: w.clock.now - 30 } });
  return c;
}

describe('change sets at the signer', () => {
  it('a 2-of-3 admin quorum raises the threshold; applied live, journaled; approvals from before no longer count', async () => {
    const before = await fresh(['alice', 'bob']);
    expect(await outcome(before)).toBe('signed');
    const c = await applyRaise();
    expect(await version()).toBe(1);
    expect(w.state.recent(1)[0]?.kind).toBe('governance.applied');
    expect(w.state.governedChanges()).toMatchObject([{ digest: changeSetDigest(c), version: 1, approvals: [{ admin_id: 'admin1' }, { admin_id: 'admin3' }] }]);
    // The old policy is no longer the pinned one; the new one needs weight 3.
    expect(await outcome(await fresh(['alice', 'bob']))).toMatch(/^policy_mismatch/);
    expect(await outcome(await fresh(['alice', 'bob'], raised()))).toMatch(/^policy_denied: .*weight/i);
    // Three approvals, but signed before the change took effect (ready_at): they do not count.
    expect(await outcome(await fresh(['alice', 'bob', 'carol'], raised(), w.clock.now - 40))).toMatch(/^policy_denied/);
    w.clock.now += 60;
    expect(await outcome(await fresh(['alice', 'bob', 'carol'], raised()))).toBe('signed');
  });

  it('attack: an unsigned change set', async () => {
    const r = await push(change(), []);
    expect(r).toMatchObject({ status: 403, body: { ok: false, reason: 'under_quorum', version: 0 } });
    expect(await version()).toBe(0);
    expect(w.state.recent(1)[0]?.kind).toBe('governance.refused');
    expect(await outcome(await fresh(['alice', 'bob']))).toBe('signed');
  });

  it('attack: a change set under quorum', async () => {
    const c = change();
    expect(await push(c, [approve(admins[1]!, c)])).toMatchObject({ status: 403, body: { reason: 'under_quorum' } });
    expect(await version()).toBe(0);
  });

  it('attack: a stale base version', async () => {
    await applyRaise();
    // Based on version 0, signed by a quorum: stale once version 1 applied.
    const c = change({ ops: [{ op: 'remove_approver', id: 'carol' }] });
    const r = await push(c, [approve(admins[0]!, c), approve(admins[1]!, c)]);
    expect(r).toMatchObject({ status: 409, body: { reason: 'stale_base', version: 1 } });
    expect(r.body.message).toMatch(/version 0.*version is 1/);
  });

  it('attack: a replayed change set', async () => {
    const c = await applyRaise();
    expect(await push(c, [approve(admins[0]!, c), approve(admins[2]!, c)])).toMatchObject({ status: 409, body: { reason: 'replayed', version: 1 } });
    expect(w.state.governedChanges()).toHaveLength(1);
  });

  it('attack: a rollback to an older version, through a push or a restart on the old trust file', async () => {
    await applyRaise();
    // Through a push: the admins' own earlier policy, as a change set against version 0.
    const back = change({ ops: [{ op: 'set_policy', policy: basePolicy(w.wallet.wallet) }] });
    expect(await push(back, [approve(admins[0]!, back), approve(admins[1]!, back)])).toMatchObject({ status: 409, body: { reason: 'stale_base' } });
    // Through a restart on the trust file as it was (version 0): the journal is replayed.
    await server.close();
    w.reopen();
    const restarted = replayGovernance(loadTrust(trustPath), w.state);
    expect(restarted.governance?.version).toBe(1);
    expect(restarted.wallet(w.wallet.wallet)?.policyDigest).toBe(policyDigest(raised()));
    await serve(restarted);
    expect(await version()).toBe(1);
    expect(await outcome(await fresh(['alice', 'bob', 'carol']))).toMatch(/^policy_mismatch/);
    // Nor can the operator's bootstrap command be run again to start over.
    await expect(main(['admins', '--trust', trustPath, '--admins', trustPath])).rejects.toThrow(/already has admins/);
  });

  it('a signer process restarted on its old trust file (version 0) serves version 1 from its journal', async () => {
    await applyRaise();
    await server.close();
    w.state.close();
    // The receipt key sealed where a real signer keeps it, then the real start-up path (serve.ts).
    writeFileSync(join(w.stateDir, 'receipt-key.json'), JSON.stringify(await sealKey(w.receiptKey, { curve: 'ed25519', passphrase: PASSPHRASE, purpose: 'receipts', kdf: TEST_KDF })), { mode: 0o600 });
    const token = 'restarted-signer-token-0123456789';
    const started = await startSigner({ keystore: w.keystoreDir, trust: trustPath, stateDir: w.stateDir, port: 0, passphrase: PASSPHRASE, kdf: TEST_KDF, token });
    try {
      expect(JSON.parse(readFileSync(trustPath, 'utf8')).governance.version).toBe(0);
      expect(await createSignerClient({ baseUrl: started.url, token }).governance()).toMatchObject({ version: 1, governance: { version: 1 } });
    } finally {
      await started.stop();
    }
    w.reopen();
    await serve(replayGovernance(loadTrust(trustPath), w.state));
  });

  it('attack: a change set written into the journal by hand, then a restart', async () => {
    // Someone who can write the signer's journal but not its trust file appends a `governed` event
    // to a line (events are not what the receipt hashes) granting mallory the admin policy and an
    // approver, "approved" by mallory alone.
    expect(await outcome(await fresh(['alice', 'bob']))).toBe('signed');
    await server.close();
    w.state.close();
    const c = change({ ops: [{ op: 'set_approver', id: 'mallory', public_key: mallory.publicKeyHex, weight: 1 }, { op: 'set_admin_policy', quorum: { admins: [{ id: 'mallory', public_key: mallory.publicKeyHex, weight: 1 }], threshold: 1, delay_seconds: 0 } }] });
    const approval = signChangeApproval({ admin_id: 'mallory', change: changeSetDigest(c), verdict: 'approve', at: w.clock.now - 30 }, mallory.secret);
    const event = { t: 'governed', digest: changeSetDigest(c), version: 1, ready_at: w.clock.now - 30, change: c, approvals: [approval], governance: { admins: [{ id: 'mallory', public_key: mallory.publicKeyHex, weight: 1 }], threshold: 1, delay_seconds: 0, version: 1 }, at: w.clock.now };
    const journal = join(w.stateDir, 'journal.jsonl');
    const lines = readFileSync(journal, 'utf8').trimEnd().split('\n');
    const last = JSON.parse(lines[lines.length - 1]!);
    lines[lines.length - 1] = JSON.stringify({ ...last, events: [...last.events, event] });
    writeFileSync(journal, `${lines.join('\n')}\n`);
    w.reopen();
    expect(w.state.governedChanges()).toHaveLength(1);
    expect(() => replayGovernance(loadTrust(trustPath), w.state)).toThrow(/journal: change set version 1 .*does not verify.*unknown_admin/);
    await serve(loadTrust(trustPath));
  });

  it('attack: a forged admin signature', async () => {
    const c = change();
    const forged = { ...approve(admins[1]!, c), signature: approve(mallory, c).signature };
    expect(await push(c, [approve(admins[0]!, c), forged])).toMatchObject({ status: 403, body: { reason: 'bad_signature' } });
    expect(await version()).toBe(0);
  });

  it('attack: a compromised control plane pushes a change the admins did not sign', async () => {
    // It adds its own approver and lowers the threshold, signing as the admins with its own key,
    // then as an admin the signer does not know.
    const lowered = { ...basePolicy(w.wallet.wallet), version: 9, rules: basePolicy(w.wallet.wallet).rules.map((r) => (r.rule === 'approval_threshold' ? { ...r, required_weight: 1, approvers: [{ id: 'mallory', weight: 1 }] } : r)) };
    const c = change({ ops: [{ op: 'set_approver', id: 'mallory', public_key: mallory.publicKeyHex, weight: 1 }, { op: 'set_policy', policy: lowered }], proposed_by: 'control-plane' });
    const asAdmins = [admins[0]!, admins[1]!].map((a) => signChangeApproval({ admin_id: a.id, change: changeSetDigest(c), verdict: 'approve', at: w.clock.now - 30 }, mallory.secret));
    expect(await push(c, asAdmins)).toMatchObject({ status: 403, body: { reason: 'bad_signature' } });
    expect(await push(c, [approve(mallory, c), approve({ id: 'admin9', secret: mallory.secret }, c)])).toMatchObject({ status: 403, body: { reason: 'unknown_admin' } });
    // An admin's approval of another change set, relabelled for this one.
    const other = change({ note: 'innocent' });
    const moved = { ...approve(admins[0]!, other), change: changeSetDigest(c) };
    expect(await push(c, [moved, { ...approve(admins[1]!, other), change: changeSetDigest(c) }])).toMatchObject({ status: 403, body: { reason: 'bad_signature' } });
    expect(await version()).toBe(0);
    // Mallory's approval never counts; the lowered policy is never pinned.
    const req = await fresh(['alice'], lowered);
    expect(await outcome(req)).toMatch(/^policy_mismatch/);
  });

  it('any valid admin rejection vetoes, and the delay runs from the approval that reached quorum', async () => {
    await server.close();
    const slow = parseTrust({ ...w.trustFile, governance: governance({ delay_seconds: 3600 }) });
    await serve(slow);
    const c = change();
    expect(await push(c, [approve(admins[0]!, c), approve(admins[1]!, c), approve(admins[2]!, c, 'reject')])).toMatchObject({ status: 403, body: { reason: 'vetoed' } });
    const approvals = [approve(admins[0]!, c), approve(admins[1]!, c)];
    expect(await push(c, approvals)).toMatchObject({ status: 403, body: { reason: 'delay_not_elapsed' } });
    w.clock.now += 3600;
    expect(await push(c, approvals)).toMatchObject({ status: 200, body: { version: 1, ready_at: w.clock.now - 3600 - 30 + 3600 } });
  });

  it('the admin policy itself changes by change set: the new admins decide the next version', async () => {
    const c = change({ ops: [{ op: 'set_admin_policy', quorum: { admins: [{ id: 'admin1', public_key: admins[0]!.publicKeyHex, weight: 1 }], threshold: 1, delay_seconds: 0 } }] });
    expect(await push(c, [approve(admins[0]!, c), approve(admins[1]!, c)])).toMatchObject({ status: 200 });
    const next = change({ base_version: 1, ops: [{ op: 'set_policy', policy: raised() }] });
    expect(await push(next, [approve(admins[1]!, next)])).toMatchObject({ status: 403, body: { reason: 'unknown_admin' } });
    expect(await push(next, [approve(admins[0]!, next)])).toMatchObject({ status: 200, body: { version: 2 } });
  });

  it('a signer without admins takes no change set; malformed pushes are 400 naming the field', async () => {
    await server.close();
    await serve(parseTrust(w.trustFile));
    const c = change();
    expect(await push(c, [approve(admins[0]!, c), approve(admins[1]!, c)])).toMatchObject({ status: 403, body: { reason: 'no_governance', version: null } });
    const bad = await push({ ...c, ops: [{ op: 'set_webhook', url: 'https://h.example/', secret: 'x' }] }, []);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/change\.ops/);
    const unauth = await fetch(`${server.url}/governance/changes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauth.status).toBe(401);
  });

  it('`vault-signer admins` sets the admin quorum once, at version 0', async () => {
    const plain = join(w.stateDir, '..', 'plain-trust.json');
    writeFileSync(plain, JSON.stringify(w.trustFile), { mode: 0o600 });
    const adminsFile = join(w.stateDir, '..', 'admins.json');
    const { version: _v, ...quorum } = governance();
    writeFileSync(adminsFile, JSON.stringify(quorum));
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
    try {
      expect(await main(['admins', '--trust', plain, '--admins', adminsFile])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(JSON.parse(out.join(''))).toMatchObject({ version: 0, admins: ['admin1', 'admin2', 'admin3'], threshold: 2 });
    expect(JSON.parse(readFileSync(plain, 'utf8')).governance).toEqual(governance());
    await expect(main(['admins', '--trust', plain, '--admins', adminsFile])).rejects.toThrow(/already has admins/);
    writeFileSync(adminsFile, JSON.stringify({ ...quorum, threshold: 4 }));
    const other = join(w.stateDir, '..', 'other-trust.json');
    writeFileSync(other, JSON.stringify(w.trustFile), { mode: 0o600 });
    await expect(main(['admins', '--trust', other, '--admins', adminsFile])).rejects.toThrow(/threshold/);
  });
});
