/**
 * The intent lifecycle over real sockets (DESIGN §5): every status, every execute outcome, the
 * approval rules, idempotence and concurrency. The memory ledger is the independent witness.
 */
import { SessionError, SignerRefusedError, ValidationError, RefusedError, StoredIntentSchema, type BuiltPayload, type Rule } from '@vault/sdk';
import { createMemorySigner } from '@vault/sdk/testing';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NOT_AWAITED } from '../../src/control-plane/signers.js';
import { expectError, PASSPHRASE, raw, setup, until, type Harness } from './helpers.js';

// Real sockets, fsync and scrypt on a shared 2-core machine: allow for slow moments.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const threshold = (above = '1000'): Rule => ({
  rule: 'approval_threshold',
  above,
  required_weight: 2,
  approvers: [
    { id: 'alice', weight: 1 },
    { id: 'bob', weight: 1 },
    { id: 'carol', weight: 1 },
  ],
});


describe('intent lifecycle', () => {
  it('allowed -> execute -> confirmed, with txHash, receiptHead and the ledger holding the transaction', async () => {
    h = await setup();
    const dest = h.dest();
    const created = await h.client.createIntent({ wallet: 'ops', destination: dest, amount: '2500' });
    expect(created.status).toBe('allowed');
    expect(created.decision.decision).toBe('allow');
    const out = await h.client.execute(created.intentId);
    expect(out.status).toBe('confirmed');
    expect(out.txHash).toMatch(/^[0-9a-f]{64}$/);
    // Execute goes on once the answers reach the quorum (2 of 3): the third is not waited for.
    expect(out.signers.filter((s) => s.ok)).toHaveLength(2);
    expect(out.signers.filter((s) => !s.ok).map((s) => s.detail)).toEqual([NOT_AWAITED]);
    expect(out.weight).toBe(out.quorum);
    expect(h.ledger.tx(out.txHash as string)?.signers).toHaveLength(2);
    expect(h.ledger.tx(out.txHash as string)).not.toBeNull();
    expect(h.ledger.balance(dest)).toBe(2500n);
    const stored = await h.client.intent(created.intentId);
    expect(stored.status).toBe('confirmed');
    expect(StoredIntentSchema.parse(stored).execution?.txHash).toBe(out.txHash);
    // idempotent: the same outcome, nothing submitted twice
    const again = await h.client.execute(created.intentId);
    expect(again).toEqual(out);
    expect(h.ledger.txs()).toHaveLength(1);
    const verify = await h.client.ledgerVerify();
    expect(verify.verified).toBe(true);
    expect(verify.head).toBe(out.receiptHead);
  });

  it('a replayed creation returns the original unchanged (same id, decision, receipt head)', async () => {
    h = await setup();
    const dest = h.dest();
    const a = await h.client.createIntent({ wallet: 'ops', destination: dest, amount: '7', memo: 'x' });
    h.clock.now += 100;
    const b = await h.client.createIntent({ wallet: 'ops', destination: dest, amount: '7', memo: 'x', asset_decimals: 6, initiator: 'operator' });
    expect(b).toEqual(a);
    const [c, d] = await Promise.all([
      h.client.createIntent({ wallet: 'ops', destination: dest, amount: '8' }),
      h.client.createIntent({ wallet: 'ops', destination: dest, amount: '8' }),
    ]);
    expect(c).toEqual(d);
    expect((await h.client.intents()).length).toBe(2);
  });

  it('pending_approvals -> approve-signed recomputes current_weight -> allowed -> confirmed', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, threshold()] });
    const { intentId, status, decision } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    expect(status).toBe('pending_approvals');
    expect(decision.required_weight).toBe(2);
    expect(decision.current_weight).toBe(0);
    const e = await expectError(h.client.execute(intentId));
    expect(e).toBeInstanceOf(RefusedError);
    expect(e.data).toMatchObject({ stage: 'policy', reason: 'pending_approvals' });
    const one = await h.client.approveSigned(intentId, h.approve(intentId, 'alice'));
    expect(one.status).toBe('pending_approvals');
    expect(one.decision.current_weight).toBe(1);
    const two = await h.client.approveSigned(intentId, h.approve(intentId, 'bob'));
    expect(two.status).toBe('allowed');
    expect(two.decision.current_weight).toBe(2);
    const out = await h.client.execute(intentId);
    expect(out.status).toBe('confirmed');
    // the signers were sent both approvals and re-verified them
    const stored = await h.client.intent(intentId);
    expect(stored.approvals.map((a) => a.approver_id).sort()).toEqual(['alice', 'bob']);
  });

  it('a reject verdict makes the intent denied with rejectedBy; execute answers denied; denied is final', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, threshold()] });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    await h.client.approveSigned(intentId, h.approve(intentId, 'alice'));
    const r = await h.client.approveSigned(intentId, h.approve(intentId, 'carol', 'reject'));
    expect(r.status).toBe('denied');
    expect(r.rejectedBy).toBe('carol');
    const out = await h.client.execute(intentId);
    expect(out.status).toBe('denied');
    expect(h.ledger.txs()).toHaveLength(0);
    const e = await expectError(h.client.approveSigned(intentId, h.approve(intentId, 'bob')));
    expect(e).toBeInstanceOf(RefusedError);
    expect((await h.client.intent(intentId)).status).toBe('denied');
  });

  it('approve-signed: 400 for an unknown approver, a wrong intent, a bad signature, the initiator approving their own intent', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, threshold()] });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000', initiator: 'device:alice' });
    const { intentId: other } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5001' });

    const unknown = { ...h.approve(intentId, 'alice'), approver_id: 'mallory' };
    const r1 = await raw(h, 'POST', `/intent/${intentId}/approve-signed`, { body: JSON.stringify(unknown) });
    expect(r1.status).toBe(400);
    expect(r1.body.error).toMatchObject({ code: 4000, data: { path: 'approver_id', reason: 'unknown_approver' } });

    const wrong = h.approve(other, 'bob');
    const r2 = await raw(h, 'POST', `/intent/${intentId}/approve-signed`, { body: JSON.stringify(wrong) });
    expect(r2.status).toBe(400);
    expect(r2.body.error.data).toMatchObject({ path: 'intent', reason: 'wrong_intent' });

    const good = h.approve(intentId, 'bob');
    const bad = { ...good, signature: { curve: 'ed25519', sig: (good.signature.sig[0] === '0' ? '1' : '0') + good.signature.sig.slice(1) } };
    const r3 = await raw(h, 'POST', `/intent/${intentId}/approve-signed`, { body: JSON.stringify(bad) });
    expect(r3.status).toBe(400);
    expect(r3.body.error.data).toMatchObject({ path: 'signature.sig', reason: 'bad_signature' });

    const self = await expectError(h.client.approveSigned(intentId, h.approve(intentId, 'alice')));
    expect(self).toBeInstanceOf(ValidationError);
    expect(self.data).toMatchObject({ reason: 'self_approval' });
    expect((await h.client.intent(intentId)).approvals).toHaveLength(0);
  });

  it('timelocked becomes allowed on read once now >= not_before, and on execute', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, { rule: 'timelock_above', above: '100', seconds: 3600 }] });
    const a = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '500' });
    const b = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '501' });
    expect(a.status).toBe('timelocked');
    expect(a.decision.not_before).toBe(h.clock.now + 3600);
    const early = await expectError(h.client.execute(a.intentId));
    expect(early.data).toMatchObject({ stage: 'policy', reason: 'timelocked' });
    h.clock.now += 3600;
    await h.client.unlock(PASSPHRASE); // the old session idled out meanwhile
    expect((await h.client.intent(a.intentId)).status).toBe('allowed');
    expect((await h.client.execute(b.intentId)).status).toBe('confirmed');
  });

  it('a timelocked intent is observed by its signers at creation (their clocks start then) and put to none of them to sign; an allowed one is not observed', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, { rule: 'timelock_above', above: '100', seconds: 3600 }] });
    const held = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '500' });
    const free = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '50' });
    expect([held.status, free.status]).toEqual(['timelocked', 'allowed']);
    const observed = () => h!.signer.observed.filter((c) => c.intent === held.intentId);
    for (let i = 0; i < 200 && observed().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    // One signer service holds every member here: observed once, at creation, with its token.
    expect(observed()).toEqual([{ intent: held.intentId, token: h.signerToken, at: h.clock.now }]);
    expect(h.signer.calls).toHaveLength(0);
    expect(h.signer.observed.filter((c) => c.intent === free.intentId)).toHaveLength(0);
    expect(h.logs.some((l) => l.includes('"event":"observed"') && l.includes(held.intentId) && l.includes(`counts from ${h!.clock.now}`))).toBe(true);
    expect(h.logs.join('\n')).not.toContain(h.signerToken);
    // Nothing was signed: the intent is still timelocked, and executing it early is refused by policy.
    expect((await expectError(h.client.execute(held.intentId))).data).toMatchObject({ stage: 'policy', reason: 'timelocked' });
    expect(h.signer.calls).toHaveLength(0);
  });

  it('a signer that is down at creation does not hold creation up; the intent is created and logged as not observed', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, { rule: 'timelock_above', above: '100', seconds: 3600 }] });
    h.signer.mode.down = true;
    const held = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '500' });
    expect(held.status).toBe('timelocked');
    for (let i = 0; i < 200 && !h.logs.some((l) => l.includes('"event":"observed"')); i++) await new Promise((r) => setTimeout(r, 10));
    expect(h.logs.find((l) => l.includes('"event":"observed"'))).toMatch(/unreachable/);
    expect(h.signer.calls).toHaveLength(0);
  });

  it('a confirmed intent is never reopened: an intent stored confirmed without its outcome is refused at execute, and nothing is written', async () => {
    h = await setup();
    const cp = h.running.cp;
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '42' });
    // A record damaged on disk: confirmed, but without the outcome execute returns for it.
    await cp.store.write({ ...cp.getIntent(intentId), status: 'confirmed', execution: null }, null);
    const before = { head: cp.head, receipts: cp.receiptCount, record: cp.getIntent(intentId) };
    const e = await expectError(h.client.execute(intentId));
    expect(e.status).toBe(500);
    expect(cp.getIntent(intentId)).toEqual(before.record);
    expect({ head: cp.head, receipts: cp.receiptCount }).toEqual({ head: before.head, receipts: before.receipts });
    expect(cp.verifyLedger().verified).toBe(true);
    expect(h.ledger.txs()).toHaveLength(0);
    // The service keeps writing (the refusal chained nothing it must take back).
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '43' })).status).toBe('allowed');
    expect(cp.verifyLedger().verified).toBe(true);
  });

  it('denied by policy at creation (hard ceiling, no rules), and an unknown wallet is 404', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, { rule: 'hard_ceiling', max: '1000' }] });
    const r = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1001' });
    expect(r.status).toBe('denied');
    expect(r.decision.reasons.join(' ')).toMatch(/hard_ceiling/);
    expect((await h.client.execute(r.intentId)).status).toBe('denied');
    const e = await expectError(h.client.createIntent({ wallet: 'nope', destination: h.dest(), amount: '1' }));
    expect(e.code).toBe(4040);
    expect(e.status).toBe(404);
  });

  it('concurrent executes of one intent submit exactly once', async () => {
    h = await setup();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '42' });
    h.signer.mode.delayMs = 500;
    let settled = false;
    const running = Promise.all(Array.from({ length: 6 }, () => h!.client.execute(intentId))).finally(() => (settled = true));
    // a read during execution answers with the stored state; it does not wait for the lock
    while (h.signer.calls.filter((c) => c.intent === intentId).length === 0) await new Promise((r) => setTimeout(r, 5));
    expect((await h.client.intent(intentId)).status).toBe('allowed');
    expect(settled).toBe(false);
    const outs = await running;
    expect(new Set(outs.map((o) => o.txHash)).size).toBe(1);
    expect(outs.every((o) => o.status === 'confirmed')).toBe(true);
    expect(h.ledger.txs()).toHaveLength(1);
    // each signer was asked once
    expect(h.signer.calls.filter((c) => c.intent === intentId)).toHaveLength(3);
  });

  it("executes of one wallet's intents at once run one after the other: each confirms, none loses the sequence race", async () => {
    h = await setup();
    const ids = [];
    for (const amount of ['11', '12', '13']) ids.push((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount })).intentId);
    // Slow signers, so that the three would all read the wallet's sequence before any submits.
    h.signer.mode.delayMs = 150;
    const outs = await Promise.all(ids.map((id) => raw(h!, 'POST', `/intent/${id}/execute`)));
    expect(outs.map((o) => [o.status, o.body.status ?? o.body.error?.data?.reason])).toEqual(ids.map(() => [200, 'confirmed']));
    expect(h.ledger.txs()).toHaveLength(3);
    const sequences = h.ledger.txs().map((t) => t.payload.sequence);
    expect(new Set(sequences).size).toBe(3);
  });

  it('awaiting_signatures when signers are short of quorum, with each signer outcome; later executes complete', async () => {
    h = await setup({ unsignedMembers: 2 });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    const out = await h.client.execute(intentId);
    expect(out.status).toBe('awaiting_signatures');
    expect(out.weight).toBe(1);
    expect(out.quorum).toBe(2);
    expect(out.signers).toHaveLength(3);
    expect(out.signers.filter((s) => !s.ok).every((s) => /no signer endpoint/.test(s.detail))).toBe(true);
    expect(h.ledger.txs()).toHaveLength(0);
    expect((await h.client.intent(intentId)).execution?.status).toBe('awaiting_signatures');
  });

  /** What a restored backup (or a store that lost its last commit) leaves: the attempt's blob is on the ledger, nothing here records it. */
  async function attemptLandedBehindTheRecord(harness: Harness) {
    const { intentId } = await harness.client.createIntent({ wallet: 'ops', destination: harness.dest(), amount: '9' });
    expect((await harness.client.execute(intentId)).status).toBe('awaiting_signatures');
    const built = harness.running.cp.getIntent(intentId).attempt?.built as BuiltPayload;
    expect(built).toBeDefined();
    const signer = createMemorySigner({ chains: [harness.wallet.chain] });
    const contributions = await Promise.all([...harness.keys].slice(0, 2).map(([address, key]) => signer.signPayload({ built, key, signerAddress: address })));
    const assembled = harness.driver.assemble({ built, contributions, wallet: harness.wallet });
    if (!assembled.ok) throw new Error('the test could not assemble the attempt');
    expect(await harness.driver.submit({ chain: harness.wallet.chain, blob: assembled.blob })).toMatchObject({ status: 'submitted' });
    return { intentId, txHash: assembled.txHash, asked: harness.signer.calls.length };
  }

  it('attack: an attempt already on the ledger with no record of its submission is settled from the ledger, never signed again', async () => {
    h = await setup({ unsignedMembers: 2 });
    const { intentId, txHash, asked } = await attemptLandedBehindTheRecord(h);
    const out = await h.client.execute(intentId);
    expect(out).toMatchObject({ status: 'confirmed', txHash, signers: [], weight: 0, quorum: 2 });
    expect(h.ledger.txs()).toHaveLength(1);
    expect(h.signer.calls.length, 'no signer is asked for a second payload').toBe(asked);
    expect(h.logs.some((l) => l.includes('execute_recovered'))).toBe(true);
    const receipts = (await raw(h, 'GET', `/intent/${intentId}/receipts`)).body.receipts as { kind: string }[];
    expect(receipts.map((r) => r.kind)).toEqual(expect.arrayContaining(['intent.submitting', 'intent.confirmed']));
    const events = (await raw(h, 'GET', '/events?limit=1000')).body.events as { type: string; data: Record<string, unknown> }[];
    expect(events.find((e) => e.type === 'intent.submitting')?.data).toMatchObject({ txHash, recovered: true });
    expect(await h.client.execute(intentId)).toEqual(out);
    expect((await h.client.ledgerVerify()).verified).toBe(true);
  });

  it('attack: an applied attempt whose driver does not name its transaction is refused, never signed again', async () => {
    h = await setup({
      unsignedMembers: 2,
      wrapDriver: (d) => ({
        ...d,
        payloadFate: async (input) => {
          const { txHash: _unnamed, ...fate } = await d.payloadFate(input);
          return fate;
        },
      }),
    });
    const { intentId, asked } = await attemptLandedBehindTheRecord(h);
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.data).toMatchObject({ stage: 'params', reason: 'applied' });
    expect(r.body.error.message).toMatch(/no second payload is built/);
    expect(h.ledger.txs()).toHaveLength(1);
    expect(h.signer.calls.length).toBe(asked);
    expect((await h.client.intent(intentId)).status).not.toBe('confirmed');
  });

  it('an unreachable signer is an outcome, not a crash', async () => {
    h = await setup();
    h.signer.mode.down = true;
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    const out = await h.client.execute(intentId);
    expect(out.status).toBe('awaiting_signatures');
    expect(out.signers.every((s) => !s.ok && s.detail.startsWith('unreachable'))).toBe(true);
    expect(JSON.stringify(out)).not.toContain(h.signerToken);
  });

  it('a signer refusal is HTTP 500 naming stage signers, the reason and the signer', async () => {
    h = await setup();
    h.signer.mode.refuse = 'policy_denied';
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe(-32602);
    expect(r.body.error.data).toMatchObject({ stage: 'signers', reason: 'policy_denied' });
    expect(r.body.error.data.signer).toMatch(/^mem1/);
    const e = await expectError(h.client.execute(intentId));
    expect(e).toBeInstanceOf(SignerRefusedError);
  });

  it('a blocking guard is HTTP 500 at stage protections (burned destination), and /protect shows it', async () => {
    const burnedDest = 'mem1' + 'de'.repeat(20);
    h = await setup({ state: { burned: [burnedDest] } });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: burnedDest, amount: '9' });
    const p = await h.client.protect(intentId);
    expect(p.blocked).toBe(true);
    expect(p.findings.some((f) => f.guard === 'burned_key' && f.severity === 'block')).toBe(true);
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.data).toMatchObject({ stage: 'protections', reason: 'blocked' });
    expect(h.ledger.txs()).toHaveLength(0);
  });

  it('chain parameters unreachable: 500 at stage params', async () => {
    h = await setup();
    h.ledger.faults.fetchParamsError = true;
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.data).toMatchObject({ stage: 'params' });
  });

  it('chain parameters and protections are read at once; when both fail, stage params is the answer', async () => {
    // Each read waits until both have started: read one after the other, the first read fails.
    let started = 0;
    let release!: () => void;
    const both = new Promise<void>((r) => (release = r));
    const gate = async () => {
      if (++started === 2) release();
      await Promise.race([both, new Promise((_, reject) => setTimeout(() => reject(new Error('the other read never started')), 3000))]);
    };
    let failProtect = false;
    h = await setup({
      wrapDriver: (d) => ({
        ...d,
        fetchParams: async (input) => (await gate(), d.fetchParams(input)),
        fetchProtectInputs: async (input) => {
          await gate();
          if (failProtect) throw new Error('protect read failed');
          return d.fetchProtectInputs(input);
        },
      }),
    });
    const first = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    expect((await h.client.execute(first.intentId)).status).toBe('confirmed');

    started = 0;
    failProtect = true;
    h.ledger.faults.fetchParamsError = true;
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '8' });
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.data).toMatchObject({ stage: 'params' });
    expect((await h.client.intent(intentId)).attempt ?? null).toBeNull();
  });

  it('each answer is assembled with those before it as it arrives; execute goes on at the quorum with that assemble', async () => {
    const calls: { signers: string[]; memo: unknown; ok: boolean }[] = [];
    h = await setup({
      wrapDriver: (d) => ({
        ...d,
        assemble: (input) => {
          const r = d.assemble(input);
          calls.push({ signers: input.contributions.map((c) => c.signer_address), memo: input.memo, ok: r.ok });
          return r;
        },
      }),
    });
    calls.length = 0; // the test signer's own assembles, if any
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    const out = await h.client.execute(intentId);
    expect(out.status).toBe('confirmed');
    const mine = calls.filter((c) => c.memo !== undefined);
    // One answer, then two (the quorum): that assemble's blob is the one submitted, none after it.
    expect(mine.map((c) => [c.signers.length, c.ok])).toEqual([[1, false], [2, true]]);
    expect(mine[1]?.signers).toEqual(expect.arrayContaining(mine[0]?.signers ?? ['none']));
    expect(new Set(mine.map((c) => c.memo)).size).toBe(1);
    expect(out.signers.filter((s) => s.ok).map((s) => s.address).sort()).toEqual([...(mine[1]?.signers ?? [])].sort());
  });

  it('attack: a signer that never answers holds no execute; its line says it was not awaited', async () => {
    // Accepts the connection and the request, and never answers: a hung host, a dropped network.
    const held = new Set<Socket>();
    const hung = createServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    try {
      // A timeout longer than the test's: waiting for that signer would fail the test.
      h = await setup({ signerUrl: (i, url) => (i === 0 ? hungUrl : url), controlPlane: { signerTimeoutMs: 120_000 } });
      const hungMember = h.wallet.control.kind === 'native_multisig' ? h.wallet.control.signers[0]?.address : undefined;
      const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
      const out = await h.client.execute(intentId);
      expect(out.status).toBe('confirmed');
      expect(held.size, 'the hung signer was asked').toBeGreaterThan(0);
      expect(out.signers.find((s) => s.address === hungMember)).toMatchObject({ ok: false, detail: NOT_AWAITED });
      expect(out.signers.filter((s) => s.ok)).toHaveLength(2);
      expect(h.ledger.txs()).toHaveLength(1);
      expect(h.ledger.tx(out.txHash as string)?.signers).not.toContain(hungMember);
    } finally {
      for (const s of held) s.destroy();
      await new Promise((r) => hung.close(r));
    }
  });

  it("a signer answering after the quorum is logged as late; its signature is not used", async () => {
    // Member 1's signer answers 1 s late (a slow host): a proxy in front of the test signer.
    let target = '';
    const slow = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        setTimeout(() => {
          void fetch(`${target}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) })
            .then(async (r) => res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await r.arrayBuffer())))
            .catch(() => res.destroy());
        }, req.url?.startsWith('/sign') ? 1_000 : 0);
      });
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    try {
      h = await setup({ signerUrl: (i, url) => ((target = url), i === 0 ? slowUrl : url) });
      const slowMember = h.wallet.control.kind === 'native_multisig' ? h.wallet.control.signers[0]?.address : undefined;
      const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
      const out = await h.client.execute(intentId);
      expect(out.status).toBe('confirmed');
      expect(out.signers.find((s) => s.address === slowMember)).toMatchObject({ ok: false, detail: NOT_AWAITED });
      const late = await until('the late answer to be logged', () => h?.logs.find((l) => l.includes('"event":"signer_late"')), 5_000);
      expect(JSON.parse(late)).toMatchObject({ event: 'signer_late', intentId, ok: true });
      expect(h.ledger.tx(out.txHash as string)?.signers).not.toContain(slowMember);
      expect(h.ledger.txs()).toHaveLength(1);
    } finally {
      await new Promise((r) => slow.close(r));
    }
  });

  it("a submit answer that is already final settles without a confirm; one naming another transaction is not taken", async () => {
    let confirms = 0;
    let lie = false;
    h = await setup({
      wrapDriver: (d) => ({
        ...d,
        // As the Stellar driver answers Horizon's 200: the ledger's answer is confirm's.
        submit: async (input) => {
          const res = await d.submit(input);
          if (res.status !== 'submitted') return res;
          const status = await (h as Harness).ledger.rpc.txStatus(res.txHash);
          if (status.state !== 'applied') return res;
          const final = { status: 'confirmed' as const, txHash: lie ? 'ab'.repeat(32) : res.txHash, code: status.code, ledger: status.ledger };
          return { ...res, confirmed: final };
        },
        confirm: async (input) => {
          confirms++;
          return d.confirm(input);
        },
      }),
    });
    const first = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    confirms = 0;
    const out = await h.client.execute(first.intentId);
    expect(out.status).toBe('confirmed');
    expect(confirms, 'settled from the submit answer').toBe(0);
    expect(JSON.stringify(out.submit)).not.toContain('"confirmed"');
    lie = true;
    const second = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '8' });
    confirms = 0;
    const again = await h.client.execute(second.intentId);
    expect(again.status).toBe('confirmed');
    expect(again.txHash).not.toBe('ab'.repeat(32));
    expect(confirms, 'the control plane asked the ledger itself').toBeGreaterThanOrEqual(1);
    expect(h.ledger.txs()).toHaveLength(2);
  });

  it('prepare refuses what the driver cannot build: 500 at stage prepare', async () => {
    h = await setup();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9', asset_symbol: 'USD', asset_issuer: 'mem1' + 'ab'.repeat(20) });
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.data).toMatchObject({ stage: 'prepare' });
  });

  it('the ledger rejects: failed; a failed intent may be executed again with fresh params', async () => {
    h = await setup();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    h.ledger.faults.submitReject = { code: 'insufficient_balance', message: 'not enough', retriable: true };
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.data).toMatchObject({ stage: 'submit', reason: 'insufficient_balance' });
    expect((await h.client.intent(intentId)).status).toBe('failed');
    h.ledger.resetFaults();
    const out = await h.client.execute(intentId);
    expect(out.status).toBe('confirmed');
    expect(h.ledger.txs()).toHaveLength(1);
  });

  it('submit transport fault leaves it submitted; the next execute resumes the same transaction', async () => {
    h = await setup();
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    h.ledger.faults.submitError = true;
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.data).toMatchObject({ stage: 'submit' });
    expect((await h.client.intent(intentId)).status).toBe('submitted');
    h.ledger.resetFaults();
    const out = await h.client.execute(intentId);
    expect(out.status).toBe('confirmed');
    expect(h.ledger.txs()).toHaveLength(1);
    expect(h.signer.calls.filter((c) => c.intent === intentId)).toHaveLength(3); // not signed again
  });

  it('confirmation pending: stays submitted; resumed on restart; dropped transactions fail once provably dead', async () => {
    h = await setup({ confirmAttempts: 2 });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '9' });
    h.ledger.faults.confirmPending = 100;
    const r = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(r.status).toBe(500);
    expect(r.body.error.data).toMatchObject({ stage: 'confirm', reason: 'pending' });
    expect((await h.client.intent(intentId)).status).toBe('submitted');
    h.ledger.resetFaults();
    await h.restart();
    let status = '';
    for (let i = 0; i < 50 && status !== 'confirmed'; i++) {
      status = (await h.client.intent(intentId)).status;
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(status).toBe('confirmed');
    expect(h.ledger.txs()).toHaveLength(1);

    const second = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '10' });
    h.ledger.faults.dropSubmit = true;
    const r2 = await raw(h, 'POST', `/intent/${second.intentId}/execute`);
    expect(r2.body.error.data).toMatchObject({ stage: 'confirm', reason: 'pending' });
    h.ledger.resetFaults();
    h.ledger.close(30);
    const r3 = await raw(h, 'POST', `/intent/${second.intentId}/execute`);
    expect(r3.status).toBe(500);
    expect(r3.body.error.data).toMatchObject({ stage: 'confirm', reason: 'expired' });
    expect((await h.client.intent(second.intentId)).status).toBe('failed');
    expect((await h.client.execute(second.intentId)).status).toBe('confirmed');
  });

  it('mpt_create: the confirmed outcome carries mptIssuanceId', async () => {
    const issuance = 'ab'.repeat(24);
    h = await setup({
      rules: [{ rule: 'always_allow' }, { rule: 'allow_operations', ops: ['transfer', 'mpt_create'] }],
      // The memory ledger moves native funds only: this wrapper builds mpt_create as a transfer and
      // reports an issuance id on confirmation, as an XRPL driver would.
      wrapDriver: (d) => ({
        ...d,
        operations: [...d.operations, 'mpt_create'],
        buildPayload: (input) => d.buildPayload({ ...input, intent: { ...input.intent, operation: { op: 'transfer' } } }),
        confirm: async ({ chain, txHash: tx, built }) => {
          const c = await d.confirm({ chain, txHash: tx, built });
          return c.status === 'confirmed' ? { ...c, outcome: { mptIssuanceId: issuance } } : c;
        },
      }) as typeof d,
    });
    const { intentId, status } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1', operation: { op: 'mpt_create', asset_scale: 2, flags: 0x20 } });
    expect(status).toBe('allowed');
    const out = await h.client.execute(intentId);
    expect(out).toMatchObject({ status: 'confirmed', operation: 'mpt_create', mptIssuanceId: issuance });
  });

  it('revoking a device makes its approvals stop counting at once', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, threshold()] });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    await h.client.approveSigned(intentId, h.approve(intentId, 'alice'));
    expect((await h.client.approveSigned(intentId, h.approve(intentId, 'bob'))).status).toBe('allowed');
    await h.client.revokeDevice('bob');
    const now = await h.client.intent(intentId);
    expect(now.status).toBe('pending_approvals');
    expect(now.decision.current_weight).toBe(1);
    const e = await expectError(h.client.approveSigned(intentId, h.approve(intentId, 'bob')));
    expect(e.data).toMatchObject({ reason: 'revoked' });
    const devices = (await h.client.devices()) as { devices: { id: string; revoked: boolean }[] };
    expect(devices.devices.find((d) => d.id === 'bob')?.revoked).toBe(true);
  });

  it('the deprecated unsigned approval is recorded and never counted', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, threshold()] });
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5000' });
    const r = (await h.client.approveUnsigned(intentId)) as { counted: boolean; status: string };
    expect(r.counted).toBe(false);
    expect(r.status).toBe('pending_approvals');
    const stored = await h.client.intent(intentId);
    expect((stored as unknown as { unsigned_approvals: unknown[] }).unsigned_approvals).toHaveLength(1);
    expect(stored.decision.current_weight).toBe(0);
  });

  it('no session: 401 with code 4100', async () => {
    h = await setup({ unlock: false });
    const r = await raw(h, 'GET', '/wallets', { token: null });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe(4100);
    await expect(h.client.wallets()).rejects.toBeInstanceOf(SessionError);
  });
});
