/**
 * Cancel and expiry over real sockets (issue #22): who may cancel, when an intent can no longer be
 * cancelled, what a cancelled or expired intent can no longer do, expiry on read and by the sweep,
 * approvals that stop counting with age, and caps that stop counting intents that will never
 * leave. The memory ledger is the independent witness; the test signer holds what is pushed to it.
 */
import { DEFAULT_INTENT_TTL_SECONDS, generateEd25519KeyPair, restrictionKey, signApproval, signCancel, StoredIntentSchema, type ChainDriver, type Rule, type VaultEvent } from '@vault/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXPIRY_SWEEP_BATCH } from '../../src/control-plane/service.js';
import type { Device } from '../../src/control-plane/state.js';
import { expectError, raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const threshold = (above = '1000', required_weight = 2): Rule => ({
  rule: 'approval_threshold',
  above,
  required_weight,
  approvers: [
    { id: 'alice', weight: 1 },
    { id: 'bob', weight: 1 },
    { id: 'carol', weight: 1 },
  ],
});


/** Initiator devices with their keys: dana and erin create intents; frank is revoked. */
const dana = generateEd25519KeyPair();
const erin = generateEd25519KeyPair();
const frank = generateEd25519KeyPair();
const initiators = (now: number): Device[] => [
  { id: 'dana', role: 'initiator', label: 'dana', public_key: dana.publicKeyHex, paired_at: now, revoked_at: null },
  { id: 'erin', role: 'initiator', label: 'erin', public_key: erin.publicKeyHex, paired_at: now, revoked_at: null },
  { id: 'frank', role: 'initiator', label: 'frank', public_key: frank.publicKeyHex, paired_at: now, revoked_at: now + 1 },
];

function withInitiators(rules: Rule[] = [{ rule: 'always_allow' }, threshold()]): Promise<Harness> {
  return setup({ rules, extraDevices: initiators(1_767_225_600) });
}

const receipts = async (hh: Harness) => (await hh.client.ledgerRecent(1000)) as unknown as { receipts: { kind: string; intentId?: string }[] };
const kindsFor = async (hh: Harness, id: string) => (await receipts(hh)).receipts.filter((r) => r.intentId === id).map((r) => r.kind).reverse();

describe('cancel', () => {
  it('cancel by the operator: cancelled and final, with its receipt; the signers hold the cancellation', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, threshold()] });
    const { intentId, status } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    expect(status).toBe('pending_approvals');
    const out = await h.client.cancel(intentId);
    expect(out).toMatchObject({ intentId, status: 'cancelled', by: 'operator', cancelled_at: h.clock.now, signers: [{ ok: true }] });
    const stored = StoredIntentSchema.parse(await h.client.intent(intentId));
    expect(stored).toMatchObject({ status: 'cancelled', cancelled: { by: 'operator', at: h.clock.now } });
    expect(await kindsFor(h, intentId)).toEqual(['intent.created', 'intent.cancelled']);
    const recent = (await h.client.ledgerRecent(1)) as { receipts: { kind: string; hash: string }[] };
    expect(recent.receipts[0]).toMatchObject({ kind: 'intent.cancelled', hash: out.receipt_head });
    expect(h.signer.restrictions.has(restrictionKey({ restriction: 'cancel_intent', intent_id: intentId }))).toBe(true);
    // The event log says so, from the same commit: who cancelled, and the status change.
    const events = (await h.client.events().replay({ filter: { intent: intentId } }).next()).value!.events as VaultEvent[];
    expect(events.map((e) => e.type)).toEqual(['intent.created', 'intent.cancelled', 'intent.status_changed']);
    expect(events[1]).toMatchObject({ data: { by: 'operator' }, receipt: out.receipt_head });
    expect(events[2]?.data).toMatchObject({ from: 'pending_approvals', to: 'cancelled' });
    // Final: a second cancel answers the same cancellation and writes nothing.
    const again = await h.client.cancel(intentId);
    expect(again).toMatchObject({ status: 'cancelled', by: 'operator', cancelled_at: out.cancelled_at });
    expect(await kindsFor(h, intentId)).toEqual(['intent.created', 'intent.cancelled']);
    // A replay of the same request is the same (cancelled) intent, not a fresh one.
    const replay = await h.client.createIntent({ wallet: 'ops', destination: stored.intent.destination, amount: '5000' });
    expect(replay).toMatchObject({ intentId, status: 'cancelled' });
    expect((await h.client.ledgerVerify()).verified).toBe(true);
  });

  it('cancel by the initiator device that created the intent, with its signed statement', async () => {
    h = await withInitiators();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000', initiator: 'device:dana' });
    const statement = signCancel({ intentId, by: 'device:dana', at: h.clock.now }, dana.secretKey);
    const out = await h.client.cancel(intentId, statement);
    expect(out).toMatchObject({ status: 'cancelled', by: 'device:dana' });
    expect((await h.client.intent(intentId)) as unknown).toMatchObject({ status: 'cancelled', cancelled: { by: 'device:dana' } });
  });

  it('attack: a device cancels an intent another initiator created', async () => {
    h = await withInitiators();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000', initiator: 'device:dana' });
    // erin signs a perfectly valid statement with her own key: she is not dana.
    const e = await expectError(h.client.cancel(intentId, signCancel({ intentId, by: 'device:erin', at: h.clock.now }, erin.secretKey)));
    expect(e.code).toBe(-32602);
    expect(e.data).toMatchObject({ reason: 'not_initiator' });
    expect(e.shortMessage).toMatch(/device:erin did not create this intent \(device:dana did\)/);
    // erin claims to be dana, signing with her own key: the signature is checked with dana's key.
    const forged = await expectError(h.client.cancel(intentId, signCancel({ intentId, by: 'device:dana', at: h.clock.now }, erin.secretKey)));
    expect(forged.data).toMatchObject({ reason: 'bad_signature' });
    // An intent the operator created is the operator's to cancel; no device may.
    const op = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5001' });
    const e2 = await expectError(h.client.cancel(op.intentId, signCancel({ intentId: op.intentId, by: 'device:dana', at: h.clock.now }, dana.secretKey)));
    expect(e2.data).toMatchObject({ reason: 'not_initiator' });
    // Nothing was written by any refusal.
    expect((await h.client.intent(intentId)).status).toBe('pending_approvals');
    expect(await kindsFor(h, intentId)).toEqual(['intent.created']);
    expect(h.signer.restrictions.size).toBe(0);
  });

  it('a cancel that cannot prove who sends it is refused, naming why', async () => {
    h = await withInitiators();
    const mk = async (initiator: string, amount: string) => (await h!.client.createIntent({ wallet: 'ops', destination: h!.dest(), amount, initiator })).intentId;
    const byDana = await mk('device:dana', '5000');
    const now = h.clock.now;
    // Statement dated outside the clock skew, or for another intent.
    const stale = await expectError(h.client.cancel(byDana, signCancel({ intentId: byDana, by: 'device:dana', at: now - 301 }, dana.secretKey)));
    expect(stale.data).toMatchObject({ reason: 'stale' });
    const other = await mk('device:dana', '5002');
    const replayed = await expectError(h.client.cancel(byDana, signCancel({ intentId: other, by: 'device:dana', at: now }, dana.secretKey)));
    expect(replayed.code).toBe(4000);
    expect(replayed.data).toMatchObject({ path: 'intentId' });
    const { intentId: _drop, ...bare } = signCancel({ intentId: other, by: 'device:dana', at: now }, dana.secretKey);
    expect((await expectError(h.client.cancel(byDana, bare))).data).toMatchObject({ reason: 'bad_signature' });
    // A device without its statement: 400 naming the field.
    const missing = await raw(h, 'POST', `/intent/${byDana}/cancel`, { body: JSON.stringify({ by: 'device:dana' }) });
    expect(missing.status).toBe(400);
    expect(missing.body.error.data).toMatchObject({ path: 'at' });
    // The operator cancels with the session alone: a signature is refused, not ignored.
    const opSig = await raw(h, 'POST', `/intent/${byDana}/cancel`, { body: JSON.stringify({ by: 'operator', signature: { curve: 'ed25519', sig: '00'.repeat(64) } }) });
    expect(opSig.status).toBe(400);
    expect(opSig.body.error.data).toMatchObject({ path: 'signature' });
    // Malformed bodies: 400, never a 500.
    for (const body of ['{"by":"Device:dana"}', '{"by":"device:dana","at":-1}', '{"nope":1}', '[]', '{']) {
      expect((await raw(h, 'POST', `/intent/${byDana}/cancel`, { body })).status).toBe(400);
    }
    // An agent holds no key this control plane knows.
    const byAgent = await mk('agent:bot', '5003');
    const agent = await raw(h, 'POST', `/intent/${byAgent}/cancel`, { body: JSON.stringify({ by: 'agent:bot', at: now, signature: { curve: 'ed25519', sig: '00'.repeat(64) } }) });
    expect(agent.status).toBe(403);
    expect(agent.body.error.data).toMatchObject({ reason: 'unauthenticated_initiator' });
    // A revoked device, and one never paired.
    const byFrank = await mk('device:frank', '5004');
    expect((await expectError(h.client.cancel(byFrank, signCancel({ intentId: byFrank, by: 'device:frank', at: now }, frank.secretKey)))).data).toMatchObject({ reason: 'device_revoked' });
    const byGhost = await mk('device:ghost', '5005');
    expect((await expectError(h.client.cancel(byGhost, signCancel({ intentId: byGhost, by: 'device:ghost', at: now }, frank.secretKey)))).data).toMatchObject({ reason: 'unknown_device' });
    // Without a session: 401. An unknown intent: 404.
    expect((await raw(h, 'POST', `/intent/${byDana}/cancel`, { token: null })).status).toBe(401);
    expect((await raw(h, 'POST', `/intent/int_${'0'.repeat(64)}/cancel`)).status).toBe(404);
    for (const id of [byDana, byAgent, byFrank, byGhost]) expect((await h.client.intent(id)).status).toBe('pending_approvals');
    // The operator may cancel any of them.
    expect((await h.client.cancel(byAgent)).by).toBe('operator');
  });

  it('refused after submit: a confirmed or submitted intent cannot be cancelled', async () => {
    // The ledger accepts the transaction but never confirms it: the intent stays submitted.
    let pending = false;
    h = await setup({
      confirmAttempts: 1,
      wrapDriver: (d) => ({ ...d, confirm: async (input) => (pending ? { status: 'pending', txHash: input.txHash } : d.confirm(input)) }) as ChainDriver as typeof d,
    });
    const done = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '2500' });
    expect((await h.client.execute(done.intentId)).status).toBe('confirmed');
    const e = await expectError(h.client.cancel(done.intentId));
    expect(e.code).toBe(-32602);
    expect(e.data).toMatchObject({ reason: 'not_cancellable', status: 'confirmed' });

    pending = true;
    const sub = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '2600' });
    await expectError(h.client.execute(sub.intentId));
    expect((await h.client.intent(sub.intentId)).status).toBe('submitted');
    const e2 = await expectError(h.client.cancel(sub.intentId));
    expect(e2.data).toMatchObject({ reason: 'not_cancellable', status: 'submitted' });
    expect(e2.shortMessage).toMatch(/only an intent not yet submitted can be cancelled/);
    expect(await kindsFor(h, sub.intentId)).not.toContain('intent.cancelled');
  });

  it('attack: an intent whose signed payload may still land is not cancelled as if nothing happened', async () => {
    // Two of three members have no signer here: execute gets one signature and stops short of
    // quorum, with the payload it put to the signers on record and live on the ledger.
    h = await setup({ unsignedMembers: 2 });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '2500' });
    expect((await h.client.execute(intentId)).status).toBe('awaiting_signatures');
    const e = await expectError(h.client.cancel(intentId));
    expect(e.data).toMatchObject({ reason: 'payload_may_land', status: 'allowed' });
    expect(e.shortMessage).toMatch(/is live on the ledger/);
    // The ledger moves past the payload's last ledger: it can never land, and the cancel goes through.
    h.ledger.close(100);
    expect((await h.client.cancel(intentId)).status).toBe('cancelled');
    // A ledger that cannot answer is no proof: refused (fail closed).
    const { intentId: second } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '2700' });
    expect((await h.client.execute(second)).status).toBe('awaiting_signatures');
    h.ledger.faults.historyError = true;
    expect((await expectError(h.client.cancel(second))).data).toMatchObject({ reason: 'payload_may_land' });
  });

  it('a failed intent is cancelled only once the payload it sent can no longer land', async () => {
    h = await setup();
    // More than the wallet holds: the ledger rejects it (insufficient balance), which a later deposit could cure.
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '900000000000000000' });
    const x = await expectError(h.client.execute(intentId));
    expect(x.data).toMatchObject({ stage: 'submit' });
    expect((await h.client.intent(intentId)).status).toBe('failed');
    const e = await expectError(h.client.cancel(intentId));
    expect(e.data).toMatchObject({ reason: 'payload_may_land', status: 'failed' });
    h.ledger.close(100);
    expect(await h.client.cancel(intentId)).toMatchObject({ status: 'cancelled' });
    expect(await kindsFor(h, intentId)).toEqual(['intent.created', 'intent.signing', 'intent.submitting', 'intent.failed', 'intent.cancelled']);
  });

  it('a cancelled intent cannot be approved or executed', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, threshold()] });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    await h.client.approveSigned(intentId, h.approve(intentId, 'alice'));
    await h.client.cancel(intentId);
    const a = await expectError(h.client.approveSigned(intentId, h.approve(intentId, 'bob')));
    expect(a.data).toMatchObject({ reason: 'approvals_closed', status: 'cancelled' });
    const x = await expectError(h.client.execute(intentId));
    expect(x.code).toBe(-32602);
    expect(x.data).toMatchObject({ stage: 'policy', reason: 'cancelled' });
    expect(h.signer.calls).toHaveLength(0);
    expect(h.ledger.txs()).toHaveLength(0);
    expect((await h.client.intent(intentId)).status).toBe('cancelled');
  });
});

/** Sessions that outlast the clock jumps below (the default idles out after 15 minutes). */
const LONG_SESSION = { sessionIdleSeconds: 30 * 86400, sessionAbsoluteSeconds: 30 * 86400 };

describe('expiry', () => {
  it('every intent shows expires_at: created_at + 7 days by default, its wallet\'s ttl when the state sets one', async () => {
    h = await setup();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    const stored = StoredIntentSchema.parse(await h.client.intent(intentId));
    expect(stored.expires_at).toBe(stored.created_at + DEFAULT_INTENT_TTL_SECONDS);
    expect((await h.client.intents())[0]).toMatchObject({ intentId, expires_at: stored.expires_at });
    await h.close();
    h = await setup({ ...LONG_SESSION, state: { lifetimes: { ops: { ttl_seconds: 3600 } } } });
    const b = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    expect((await h.client.intent(b.intentId)).expires_at).toBe(h.clock.now + 3600);
  });

  it('a lifetime the state cannot hold is refused at load, naming the field', async () => {
    await expect(setup({ state: { lifetimes: { ops: { ttl_seconds: 10 } } } })).rejects.toThrow(/lifetimes\.ops\.ttl_seconds/);
    await expect(setup({ state: { lifetimes: { nope: { ttl_seconds: 3600 } } } })).rejects.toThrow(/lifetimes names unknown wallet nope/);
  });

  it('expiry on read: an intent read at its expires_at is expired, final, with its receipt; it can no longer be approved, executed or cancelled', async () => {
    h = await setup({ ...LONG_SESSION, rules: [{ rule: 'always_allow' }, threshold()], state: { lifetimes: { ops: { ttl_seconds: 3600 } } } });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    await h.client.approveSigned(intentId, h.approve(intentId, 'alice'));
    h.clock.now += 3599;
    expect((await h.client.intent(intentId)).status).toBe('pending_approvals');
    h.clock.now += 1;
    const stored = await h.client.intent(intentId);
    expect(stored.status).toBe('expired');
    expect(await kindsFor(h, intentId)).toEqual(['intent.created', 'intent.approval', 'intent.expired']);
    expect((await expectError(h.client.approveSigned(intentId, h.approve(intentId, 'bob')))).data).toMatchObject({ reason: 'approvals_closed', status: 'expired' });
    expect((await expectError(h.client.execute(intentId))).data).toMatchObject({ stage: 'policy', reason: 'expired' });
    expect((await expectError(h.client.cancel(intentId))).data).toMatchObject({ reason: 'not_cancellable', status: 'expired' });
    expect(h.signer.calls).toHaveLength(0);
  });

  it('expiry on execute: an allowed intent past its expiry expires instead of executing', async () => {
    h = await setup({ ...LONG_SESSION, state: { lifetimes: { ops: { ttl_seconds: 600 } } } });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    h.clock.now += 600;
    expect((await expectError(h.client.execute(intentId))).data).toMatchObject({ stage: 'policy', reason: 'expired' });
    expect(h.ledger.txs()).toHaveLength(0);
    expect(h.signer.calls).toHaveLength(0);
    expect((await h.client.intents())[0]).toMatchObject({ intentId, status: 'expired' });
  });

  it('expiry by the sweep: the intent expires with its receipt without anyone asking', async () => {
    h = await setup({ ...LONG_SESSION, rules: [{ rule: 'always_allow' }, threshold()], state: { lifetimes: { ops: { ttl_seconds: 600 } } }, expirySweepMs: 20 });
    const due = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    h.clock.now += 300;
    const later = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5001' });
    h.clock.now += 300;
    // Nobody reads either intent: the receipt appears in the log on its own.
    let kinds: { kind: string; intentId?: string }[] = [];
    for (let i = 0; i < 200; i++) {
      kinds = (await receipts(h)).receipts;
      if (kinds.some((r) => r.kind === 'intent.expired')) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(kinds.filter((r) => r.kind === 'intent.expired').map((r) => r.intentId)).toEqual([due.intentId]);
    const list = await h.client.intents();
    expect(list.find((x) => x['intentId'] === due.intentId)).toMatchObject({ status: 'expired' });
    expect(list.find((x) => x['intentId'] === later.intentId)).toMatchObject({ status: 'pending_approvals' });
    // The sweep's change has its event like any other.
    const events = (await h.client.events().replay({ filter: { types: ['intent.expired'] } }).next()).value!.events as VaultEvent[];
    expect(events.map((e) => e.subject)).toEqual([{ intent: due.intentId, wallet: 'ops' }]);
  });

  it('the sweep is bounded: at most EXPIRY_SWEEP_BATCH intents a run, the rest on the next', async () => {
    h = await setup({ ...LONG_SESSION, state: { lifetimes: { ops: { ttl_seconds: 600 } } }, rules: [{ rule: 'always_allow' }, threshold()] });
    const n = EXPIRY_SWEEP_BATCH + 3;
    for (let i = 0; i < n; i++) await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: String(5000 + i) });
    h.clock.now += 600;
    expect(await h.running.cp.sweepExpired()).toBe(EXPIRY_SWEEP_BATCH);
    expect(await h.running.cp.sweepExpired()).toBe(3);
    expect(await h.running.cp.sweepExpired()).toBe(0);
    expect((await h.client.ledgerVerify()).verified).toBe(true);
  });

  it('the sweep stops with the server: a run in progress ends cleanly at close, and the rest expire after the restart', async () => {
    h = await setup({ ...LONG_SESSION, state: { lifetimes: { ops: { ttl_seconds: 600 } } }, rules: [{ rule: 'always_allow' }, threshold()] });
    const n = 40;
    for (let i = 0; i < n; i++) await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: String(7000 + i) });
    h.clock.now += 600;
    const run = h.running.cp.sweepExpired();
    await h.restart(); // close() stops the timer and waits for this run before the store closes
    const before = await run;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(n);
    expect(h.logs.filter((l) => l.includes('expiry_failed'))).toEqual([]);
    expect(await h.running.cp.sweepExpired()).toBe(n - before);
    const expired = (await receipts(h)).receipts.filter((r) => r.kind === 'intent.expired');
    expect(expired).toHaveLength(n);
    expect((await h.client.ledgerVerify()).verified).toBe(true);
  });

  it('the sweep leaves an intent whose signed payload may still land, tries it again later, and expires the rest meanwhile', async () => {
    h = await setup({ ...LONG_SESSION, unsignedMembers: 2, state: { lifetimes: { ops: { ttl_seconds: 600 } } } });
    const live = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '2500' });
    expect((await h.client.execute(live.intentId)).status).toBe('awaiting_signatures');
    const idle = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '2600' });
    h.clock.now += 600;
    expect(await h.running.cp.sweepExpired()).toBe(1);
    const list = await h.client.intents();
    expect(list.find((x) => x['intentId'] === idle.intentId)).toMatchObject({ status: 'expired' });
    expect(list.find((x) => x['intentId'] === live.intentId)).toMatchObject({ status: 'allowed' });
    // Its payload dies on the ledger; within the retry delay the sweep does not ask again, after it it does.
    h.ledger.close(100);
    expect(await h.running.cp.sweepExpired()).toBe(0);
    h.clock.now += 60;
    expect(await h.running.cp.sweepExpired()).toBe(1);
    expect((await h.client.intents()).find((x) => x['intentId'] === live.intentId)).toMatchObject({ status: 'expired' });
  });

  it('stale approvals stop counting: past the wallet\'s approval age the intent needs approving again', async () => {
    h = await setup({ ...LONG_SESSION, rules: [{ rule: 'always_allow' }, threshold()], state: { lifetimes: { ops: { approval_max_age_seconds: 3600 } } } });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    await h.client.approveSigned(intentId, h.approve(intentId, 'alice'));
    expect((await h.client.approveSigned(intentId, h.approve(intentId, 'bob'))).status).toBe('allowed');
    h.clock.now += 3599;
    expect((await h.client.intent(intentId)).status).toBe('allowed');
    h.clock.now += 1;
    const stale = await h.client.intent(intentId);
    expect(stale.status).toBe('pending_approvals');
    expect(stale.decision.current_weight).toBe(0);
    // An approval already that old is refused as it arrives, naming its date.
    const approver = h.approvers['carol'];
    const old = signApproval({ approver_id: 'carol', intent: intentId, verdict: 'approve', at: h.clock.now - 3600, strong_auth: false }, approver!.secretKey);
    const e = await expectError(h.client.approveSigned(intentId, old));
    expect(e.code).toBe(4000);
    expect(e.data).toMatchObject({ reason: 'expired' });
    // Fresh approvals count again.
    await h.client.approveSigned(intentId, h.approve(intentId, 'carol'));
    expect((await h.client.approveSigned(intentId, h.approve(intentId, 'alice'))).status).toBe('allowed');
    expect((await h.client.execute(intentId)).status).toBe('confirmed');
  });

  it('velocity caps and agent budgets stop counting cancelled and expired intents', async () => {
    const rules: Rule[] = [
      { rule: 'always_allow' },
      threshold('0', 1),
      { rule: 'daily_velocity_cap', limit: '1000' },
      { rule: 'agent_budget_ceiling', budget: '1000', agent: 'agent:bot', window_seconds: null },
    ];
    h = await setup({ ...LONG_SESSION, rules, state: { lifetimes: { ops: { ttl_seconds: 3600 } } } });
    const intent = (amount: string) => h!.client.createIntent({ wallet: 'ops', destination: h!.dest(), amount, initiator: 'agent:bot' });
    const a = await intent('600');
    expect(a.status).toBe('pending_approvals');
    // While a counts, 600 more is over both the cap and the budget.
    const over = await intent('600');
    expect(over.status).toBe('denied');
    expect(over.decision.reasons.join(' ')).toMatch(/daily_velocity_cap/);
    expect(over.decision.reasons.join(' ')).toMatch(/agent_budget_ceiling/);
    // Cancelled: a no longer counts.
    await h.client.cancel(a.intentId);
    const b = await intent('601');
    expect(b.status).toBe('pending_approvals');
    expect((await intent('602')).status).toBe('denied');
    // Expired: b no longer counts either (still inside the cap's day).
    h.clock.now += 3600;
    expect((await h.client.intent(b.intentId)).status).toBe('expired');
    const c = await intent('603');
    expect(c.status).toBe('pending_approvals');
    expect(c.decision.reasons.join(' ')).not.toMatch(/daily_velocity_cap|agent_budget_ceiling/);
  });
});
