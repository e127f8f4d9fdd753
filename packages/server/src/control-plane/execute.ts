/**
 * @module control-plane/execute
 * POST /intent/{id}/execute, stage by stage: the policy (re-evaluated: timelocks release, revoked
 * approvals stop counting, a failed intent is retried), 1. chain parameters and 2. protections
 * (read concurrently), 3. prepare, the attempt committed, 4. signers, 5. assemble, 6. submit, then
 * confirm and settle.
 * Idempotent: a confirmed intent answers its stored outcome, a submitted one resumes confirmation
 * and never submits a second transaction; concurrent calls of one intent run one at a time, and so
 * do fresh attempts of one wallet's intents (they would race for its sequence).
 */
import {
  ChainParamsSchema,
  ContributionMemo,
  parseWith,
  RefusedError,
  STATUS_BY_DECISION,
  ValidationError,
  VaultError,
  walletMembers,
  type AssembleResult,
  type BuiltPayload,
  type ChainDriver,
  type ChainParams,
  type Contribution,
  type ExecuteOutcome,
  type GuardReport,
  type PayloadFate,
  type ProtectInputs,
  type WalletDescriptor,
} from '@vault/sdk';
import { judgedApprovals } from './approvals.js';
import type { Core } from './core.js';
import { ExecuteRefusedError } from './errors.js';
import type { Intents } from './intents.js';
import type { Protections } from './protect.js';
import { signRequest, type SignerAnswer, type Signers } from './signers.js';
import { canonicalJson } from './state.js';
import { assertTransition, transition } from './status.js';
import type { IntentRecord, Submission } from './store.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What stages 1 to 3 establish for one attempt. */
interface Prepared {
  params: ChainParams;
  protect: ProtectInputs;
  report: GuardReport;
  built: BuiltPayload;
  /** Signature checks made as each signer answered, for stage 5's assemble. */
  memo: ContributionMemo;
}

export class Execution {
  readonly #core: Core;
  readonly #intents: Intents;
  readonly #protections: Protections;
  readonly #signers: Signers;

  constructor(core: Core, intents: Intents, protections: Protections, signers: Signers) {
    this.#core = core;
    this.#intents = intents;
    this.#protections = protections;
    this.#signers = signers;
  }

  /** POST /intent/{id}/execute. Idempotent; concurrent calls of one intent, and attempts of one wallet's intents, run one at a time. */
  async execute(id: string): Promise<ExecuteOutcome> {
    this.#core.writer.getForWrite(id);
    return this.#core.intentLocks.run(id, () => this.#execute(id));
  }

  #outcome(record: IntentRecord, wallet: WalletDescriptor | null, fields: Partial<ExecuteOutcome>): ExecuteOutcome {
    const quorum = wallet ? walletMembers(wallet).quorum : 0;
    return {
      intentId: record.intentId,
      status: 'denied',
      chain: wallet?.chain ?? '',
      operation: record.intent.operation.op,
      summary: '',
      weight: 0,
      quorum,
      signers: [],
      receiptHead: this.#core.writer.head,
      findings: [],
      ...fields,
    } as ExecuteOutcome;
  }

  async #execute(id: string): Promise<ExecuteOutcome> {
    let record = this.#core.writer.get(id);
    if (record.status === 'confirmed' && record.execution) return record.execution as ExecuteOutcome;
    if (record.status === 'denied') {
      return this.#outcome(record, this.#core.state.wallets.find((w) => w.wallet === record.intent.wallet) ?? null, {
        status: 'denied',
        summary: `denied: ${record.decision.reasons.join('; ') || 'rejected'}`,
      });
    }
    const wallet = this.#core.wallet(record.intent.wallet);
    if (record.status === 'submitted' && record.submission) return this.#resume(record, wallet);
    // From here on one wallet's executes run one at a time: two at once would read the same
    // sequence (Safe nonce), and the ledger would take only one of their payloads.
    return this.#core.walletLocks.run(wallet.wallet, () => this.#attempt(id));
  }

  /**
   * A fresh attempt at intent `id` (not submitted), under its wallet's lock: the policy, then
   * stages 1 to 6. The record and the wallet are read here, as they are once the lock is held.
   */
  async #attempt(id: string): Promise<ExecuteOutcome> {
    let record = this.#core.writer.get(id);
    const wallet = this.#core.wallet(record.intent.wallet);
    // Past its time to live it expires here (final) instead of being executed.
    record = await this.#intents.expireIfDue(record);
    if (record.status === 'cancelled' || record.status === 'expired') {
      const why = record.status === 'cancelled' ? `cancelled by ${record.cancelled?.by ?? 'operator'}` : `expired at ${record.expires_at ?? '(its time to live)'}`;
      throw new RefusedError(`intent is ${why}: it is never executed`, { data: { stage: 'policy', reason: record.status } });
    }
    // Past it but not marked expired (a payload signed for it may still land): no new attempt either.
    if (this.#intents.pastExpiry(record)) {
      throw new RefusedError('intent is past its expiry; a payload signed for it may still land, so it is marked expired once that payload is dead', {
        data: { stage: 'policy', reason: 'expired' },
      });
    }

    const admitted = await this.#policy(record, wallet);
    if ('outcome' in admitted) return admitted.outcome;
    record = admitted.record;
    const driver = this.#core.driverFor(wallet);
    // Stages 1 and 2 both only read (the ledger, the state): one round trip's wait instead of two.
    // Settled in stage order, so a failure of both reports stage 1's as before.
    const [p1, p2] = await Promise.allSettled([this.#params(record, wallet, driver), this.#protect(record, wallet, driver)]);
    if (p1.status === 'rejected') throw p1.reason;
    // Funds already moved: settled whatever the guards say now.
    if ('applied' in p1.value) return this.#settleApplied(record, wallet, driver, p1.value.applied);
    if (p2.status === 'rejected') throw p2.reason;
    const { params } = p1.value;
    const { protect, report } = p2.value;
    const built = this.#prepare(record, wallet, driver, params);
    const stages: Prepared = { params, protect, report, built, memo: new ContributionMemo() };
    record = await this.#commitAttempt(record, stages);
    const { results, early } = await this.#askSigners(record, wallet, driver, stages);
    const assembled = early ? { assembled: early } : await this.#assemble(record, wallet, driver, stages, results);
    if ('outcome' in assembled) return assembled.outcome;
    return this.#submit(record, wallet, driver, stages, results, assembled.assembled);
  }

  /**
   * The policy, re-evaluated: timelocks release, revoked approvals stop counting, a failed intent
   * is retried. Answers a denial as an outcome, refuses while approvals or a timelock hold the
   * intent, else gives the record allowed (or still failed) with the decision.
   */
  async #policy(record: IntentRecord, wallet: WalletDescriptor): Promise<{ record: IntentRecord } | { outcome: ExecuteOutcome }> {
    const decision = this.#intents.evaluate(record, record);
    const status = STATUS_BY_DECISION[decision.decision];
    if (status === 'denied') {
      const next = await this.#intents.writeDecision(record, 'denied', decision);
      return { outcome: this.#outcome(next, wallet, { status: 'denied', summary: `denied: ${decision.reasons.join('; ')}` }) };
    }
    if (status !== 'allowed') {
      if (status !== record.status || canonicalJson(decision) !== canonicalJson(record.decision)) {
        // A failed intent stays failed until it can be executed again.
        await this.#intents.writeDecision(record, record.status === 'failed' ? record.status : status, decision);
      }
      throw new RefusedError(
        status === 'pending_approvals'
          ? `intent needs approvals: weight ${decision.current_weight} of ${decision.required_weight}`
          : `intent is timelocked until ${decision.not_before}`,
        { data: { stage: 'policy', reason: status, required_weight: decision.required_weight, current_weight: decision.current_weight, not_before: decision.not_before } },
      );
    }
    if (record.status !== 'allowed' && record.status !== 'failed') {
      return { record: await this.#intents.writeDecision(record, 'allowed', decision) };
    }
    return { record: { ...record, decision } };
  }

  /**
   * 1. chain parameters: those of the attempt on record (put to the signers by an earlier execute
   * that stopped short of quorum, or was killed before `submitted`) while its payload can still
   * land: a signer that signed it refuses any other payload until it is dead. Fresh ones once it
   * is dead. An attempt already applied gets neither: the intent is settled from the ledger.
   */
  async #params(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver): Promise<{ params: ChainParams } | { applied: PayloadFate }> {
    try {
      const prior = record.attempt;
      if (prior) {
        const fate = await driver.payloadFate({ chain: wallet.chain, built: prior.built });
        if (fate.fate === 'live') return { params: parseWith(ChainParamsSchema, prior.params, 'attempt.params') };
        if (fate.fate === 'applied') return { applied: fate };
      }
      return { params: await driver.fetchParams({ wallet }) };
    } catch (e) {
      throw this.#stageFault('params', e);
    }
  }

  /**
   * The attempt on record is on the ledger, but nothing here records submitting it: its blob
   * reached the ledger and the record of that did not survive (a restored backup of the state
   * directory, a store that lost its last commit). Building a payload now would pay twice, so the
   * intent is settled from the ledger instead: `submitted` (receipt marked `recovered`) then
   * `confirmed`, through the transaction the driver names. The signers' answers were in the lost
   * record: none are listed, and the weight is 0 (the ledger, not this record, checked the quorum).
   */
  async #settleApplied(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver, fate: PayloadFate): Promise<ExecuteOutcome> {
    const attempt = record.attempt as NonNullable<IntentRecord['attempt']>;
    const id = record.intentId;
    if (!fate.txHash) {
      throw new ExecuteRefusedError('params', 'applied', `the attempt's payload is already on the ledger (${fate.message ?? fate.code}), but the driver does not name its transaction: the intent cannot be settled here, and no second payload is built`);
    }
    let c;
    try {
      c = await driver.confirm({ chain: wallet.chain, txHash: fate.txHash, built: attempt.built });
    } catch (e) {
      throw this.#stageFault('confirm', e);
    }
    if (c.status !== 'confirmed') {
      throw new ExecuteRefusedError('confirm', c.status === 'failed' ? c.code : 'pending', `the attempt's payload is applied as ${fate.txHash}, but confirm answered ${c.status}; execute again`, { data: { txHash: fate.txHash } });
    }
    this.#core.log({ event: 'execute_recovered', chain: wallet.chain });
    const submission: Submission = {
      params: attempt.params,
      built: attempt.built,
      blob: '',
      txHash: c.txHash,
      submitted_at: this.#core.now(),
      signers: [],
      findings: [],
      weight: 0,
      quorum: walletMembers(wallet).quorum,
    };
    const submitted = transition(record, 'submitted', this.#core.now(), { submission, attempt: null });
    await this.#core.writer.commit(record, submitted, this.#core.writer.receipt('intent.submitting', { intentId: id, txHash: c.txHash, digest: attempt.built.digest, signers: [], recovered: true }, id));
    return this.#settle(submitted, wallet, c);
  }

  /** 2. protections: the inputs read from the ledger and the state, and the guards on them. */
  async #protect(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver): Promise<{ protect: ProtectInputs; report: GuardReport }> {
    let protect: ProtectInputs;
    try {
      protect = await this.#protections.protectInputs(record, wallet, driver);
    } catch (e) {
      throw this.#stageFault('protections', e);
    }
    const report = this.#protections.guards(record, wallet, driver, protect);
    if (report.blocked) {
      const blocking = report.findings.filter((f) => f.severity === 'block');
      throw new ExecuteRefusedError('protections', 'blocked', blocking.map((f) => `${f.guard}: ${f.detail}`).join('; '), { data: { findings: report.findings } });
    }
    return { protect, report };
  }

  /** 3. prepare: the payload the signers will rebuild and sign. */
  #prepare(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver, params: ChainParams): BuiltPayload {
    try {
      return driver.buildPayload({ intent: record.intent, wallet, params });
    } catch (e) {
      throw this.#stageFault('prepare', e);
    }
  }

  /**
   * The attempt is durable BEFORE any signer sees its payload: whatever a signer signs, a
   * restarted control plane finds on disk and puts to the signers again (they re-sign an identical
   * payload), instead of building a second one they must refuse while the first is live (XRPL: a
   * new LastLedgerSequence; Stellar: a new max_time).
   */
  async #commitAttempt(record: IntentRecord, { params, built }: Prepared): Promise<IntentRecord> {
    const attempt = { params, built: { payload: built.payload, digest: built.digest, summary: built.summary } };
    if (record.attempt && canonicalJson(record.attempt) === canonicalJson(attempt)) return record;
    const next: IntentRecord = { ...record, attempt, updated_at: this.#core.now() };
    await this.#core.writer.commit(record, next, this.#core.writer.receipt('intent.signing', { intentId: record.intentId, digest: built.digest }, record.intentId));
    return next;
  }

  /**
   * 4. signers: every member is asked, with the approvals that count. Each answer is assembled with
   * those before it as it arrives (each signature verified once, its result kept in the memo), and
   * execute goes on as soon as they reach the quorum: that assemble is stage 5's. Short of it,
   * every answer is awaited and stage 5 reports what is missing.
   */
  async #askSigners(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver, { params, protect, built, memo }: Prepared): Promise<{ results: SignerAnswer[]; early?: Extract<AssembleResult, { ok: true }> }> {
    const approvals = judgedApprovals(this.#core, record, this.#core.now(), this.#core.lifetime(wallet.wallet).approval_max_age_seconds).valid;
    const request = signRequest(record, wallet, this.#core.policy(wallet.wallet), { approvals, params, protect, expected_payload_digest: built.digest });
    const contributions: Contribution[] = [];
    let early: Extract<AssembleResult, { ok: true }> | undefined;
    const results = await this.#signers.askSigners(wallet, request, ({ contribution }) => {
      if (!contribution) return false;
      contributions.push(contribution);
      // A fault here is stage 5's to report: it assembles every answer again.
      const r = driver.assemble({ built, contributions, wallet, memo });
      if (r.ok) early = r;
      return r.ok;
    });
    // The contributions assembled are exactly those answered when the quorum was reached.
    return early ? { results, early } : { results };
  }

  /**
   * 5. assemble the signers' contributions. Short of quorum: a signer's refusal is the answer, else
   * the outcome is awaiting_signatures (recorded with each signer's line).
   */
  async #assemble(
    record: IntentRecord,
    wallet: WalletDescriptor,
    driver: ChainDriver,
    { built, report, memo }: Prepared,
    results: SignerAnswer[],
  ): Promise<{ assembled: Extract<AssembleResult, { ok: true }> } | { outcome: ExecuteOutcome }> {
    const id = record.intentId;
    const signers = results.map((r) => r.outcome);
    const contributions = results.flatMap((r) => (r.contribution ? [r.contribution] : []));
    // 5. assemble
    let assembled;
    try {
      assembled = driver.assemble({ built, contributions, wallet, memo });
    } catch (e) {
      throw this.#stageFault('assemble', e);
    }
    if (!assembled.ok) {
      const refusal = results.find((r) => r.refusal);
      if (refusal?.refusal) {
        throw new ExecuteRefusedError('signers', refusal.refusal.reason, `signer ${refusal.outcome.address} refused: ${refusal.refusal.message}`, {
          data: { signer: refusal.outcome.address, signers, weight: assembled.weight, quorum: assembled.quorum },
        });
      }
      const outcome = this.#outcome(record, wallet, {
        status: 'awaiting_signatures',
        summary: built.summary,
        weight: assembled.weight,
        quorum: assembled.quorum,
        signers,
        findings: report.findings,
      });
      const next: IntentRecord = { ...record, execution: outcome, updated_at: this.#core.now() };
      const receipt = this.#core.writer.receipt('intent.awaiting_signatures', { intentId: id, weight: assembled.weight, quorum: assembled.quorum, signers }, id);
      await this.#core.writer.commit(record, next, receipt);
      return { outcome: { ...outcome, receiptHead: receipt.hash } };
    }
    return { assembled };
  }

  /**
   * 6. submit: `submitted` (with the blob) is committed while the ledger takes the blob, and is
   * durable before anything else happens to the intent (confirm, `failed`, the answer). A crash
   * between the two leaves the attempt on record with its payload on the ledger or about to be:
   * the next execute settles it from the ledger (`applied`), puts the identical payload to the
   * signers and re-sends it (`live`), or builds afresh once the ledger proves it can never land
   * (`dead`). So a crash can still never yield a second transaction, and the commit costs no wait.
   */
  async #submit(
    record: IntentRecord,
    wallet: WalletDescriptor,
    driver: ChainDriver,
    { params, built, report }: Prepared,
    results: SignerAnswer[],
    assembled: Extract<AssembleResult, { ok: true }>,
  ): Promise<ExecuteOutcome> {
    const id = record.intentId;
    const submission: Submission = {
      params,
      built: { payload: built.payload, digest: built.digest, summary: built.summary },
      blob: assembled.blob,
      txHash: assembled.txHash,
      submitted_at: this.#core.now(),
      signers: results.map((r) => r.outcome),
      findings: report.findings,
      weight: assembled.weight,
      quorum: assembled.quorum,
    };
    const submitted = transition(record, 'submitted', this.#core.now(), { submission, attempt: null });
    // A standby or a demoted writer stops here, before the ledger sees anything; a lease lost while
    // the commit runs is a crash in that window (see above).
    this.#core.writer.assertWritable();
    // The signers' lines ride on this receipt: each signer's outcome is an event of the stage.
    const durable = this.#core.writer.commit(record, submitted, this.#core.writer.receipt('intent.submitting', { intentId: id, txHash: assembled.txHash, digest: built.digest, signers: submission.signers }, id));
    // Awaited on every path below, so this rejection is never left unheard.
    durable.catch(() => undefined);
    return this.#submitAndConfirm(submitted, wallet, driver, true, durable);
  }

  #stageFault(stage: 'params' | 'protections' | 'prepare' | 'assemble' | 'submit' | 'confirm', e: unknown): ExecuteRefusedError {
    const reason = e instanceof ValidationError ? 'invalid' : e instanceof VaultError && e.code === -32603 ? 'ledger_unreachable' : 'refused';
    const msg = e instanceof VaultError ? e.shortMessage : 'fault';
    this.#core.log({ event: 'execute_fault', stage, reason, error: e instanceof Error ? e.name : 'unknown' });
    return new ExecuteRefusedError(stage, reason, msg, { cause: e });
  }

  async #resume(record: IntentRecord, wallet: WalletDescriptor): Promise<ExecuteOutcome> {
    const driver = this.#core.driverFor(wallet);
    const sub = record.submission as Submission;
    // Already on the ledger (or provably dead)? Then never submit again.
    let first;
    try {
      first = await driver.confirm({ chain: wallet.chain, txHash: sub.txHash, built: sub.built });
    } catch (e) {
      throw this.#stageFault('confirm', e);
    }
    if (first.status === 'pending') return this.#submitAndConfirm(record, wallet, driver, true);
    return this.#settle(record, wallet, first);
  }

  /** Submits (when asked) and confirms `record`; `durable`: the commit of `submitted` still under way (see #submit). */
  async #submitAndConfirm(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver, submit: boolean, durable: Promise<void> = Promise.resolve()): Promise<ExecuteOutcome> {
    const sub = record.submission as Submission;
    let submitResult: Record<string, unknown> = {};
    if (submit) {
      // The identical blob (same transaction hash): a ledger applies it at most once.
      let res;
      try {
        res = await driver.submit({ chain: wallet.chain, blob: sub.blob });
      } catch (e) {
        // Unknown whether the ledger saw it: stay `submitted` (once durable); the next execute resumes.
        await durable;
        throw this.#stageFault('submit', e);
      }
      await durable;
      const { confirmed: final, ...answer } = res.status === 'submitted' ? res : { ...res, confirmed: undefined };
      submitResult = { ...answer };
      // The ledger's answer is already final (Stellar): settled without a confirm round trip.
      if (final?.status === 'confirmed' && final.txHash === sub.txHash) return this.#settle(record, wallet, final, submitResult);
      if (res.status === 'rejected' && res.code !== 'already_applied') {
        const check = await driver.confirm({ chain: wallet.chain, txHash: sub.txHash, built: sub.built }).catch(() => null);
        if (check?.status === 'confirmed') return this.#settle(record, wallet, check, submitResult);
        const failed = transition(record, 'failed', this.#core.now(), { attempts: (record.attempts ?? 0) + 1, submission: null, attempt: { params: sub.params, built: sub.built }, execution: { intentId: record.intentId, txHash: sub.txHash, submit: submitResult } as Partial<ExecuteOutcome> });
        await this.#core.writer.commit(record, failed, this.#core.writer.receipt('intent.failed', { intentId: record.intentId, stage: 'submit', code: res.code }, record.intentId));
        throw new ExecuteRefusedError('submit', res.code, `the ledger rejected the transaction: ${res.message}`, { data: { txHash: sub.txHash, retriable: res.retriable } });
      }
    }
    const attempts = this.#core.opts.confirmAttempts ?? 40;
    const delay = this.#core.opts.confirmDelayMs ?? 250;
    for (let i = 0; i < attempts; i++) {
      let c;
      try {
        c = await driver.confirm({ chain: wallet.chain, txHash: sub.txHash, built: sub.built });
      } catch (e) {
        throw this.#stageFault('confirm', e);
      }
      if (c.status !== 'pending') return this.#settle(record, wallet, c, submitResult);
      if (this.#core.closed) break;
      await sleep(delay);
    }
    throw new ExecuteRefusedError('confirm', 'pending', `transaction ${sub.txHash} is not confirmed yet; execute again to resume`, { data: { txHash: sub.txHash } });
  }

  async #settle(
    record: IntentRecord,
    wallet: WalletDescriptor,
    c: Exclude<Awaited<ReturnType<ChainDriver['confirm']>>, { status: 'pending' }>,
    submitResult: Record<string, unknown> = {},
  ): Promise<ExecuteOutcome> {
    const sub = record.submission as Submission;
    if (c.status === 'failed') {
      if (!c.dead) throw new ExecuteRefusedError('confirm', c.code, c.message, { data: { txHash: sub.txHash } });
      const failed = transition(record, 'failed', this.#core.now(), { attempts: (record.attempts ?? 0) + 1, submission: null, attempt: { params: sub.params, built: sub.built }, execution: { intentId: record.intentId, txHash: sub.txHash, submit: { ...submitResult, confirm: c } } as Partial<ExecuteOutcome> });
      await this.#core.writer.commit(record, failed, this.#core.writer.receipt('intent.failed', { intentId: record.intentId, stage: 'confirm', code: c.code, txHash: sub.txHash }, record.intentId));
      throw new ExecuteRefusedError('confirm', c.code, `the transaction failed on the ledger: ${c.message}`, { data: { txHash: sub.txHash } });
    }
    const mpt = c.outcome?.['mptIssuanceId'];
    assertTransition(record.status, 'confirmed', record.intentId); // before the receipt is chained
    const receipt = this.#core.writer.receipt('intent.confirmed', { intentId: record.intentId, txHash: c.txHash, code: c.code, ledger: c.ledger ?? null }, record.intentId);
    const outcome = this.#outcome(record, wallet, {
      status: 'confirmed',
      txHash: c.txHash,
      summary: sub.built.summary,
      weight: sub.weight,
      quorum: sub.quorum,
      signers: sub.signers,
      submit: { ...submitResult, code: c.code, ...(c.ledger !== undefined ? { ledger: c.ledger } : {}), ...(c.outcome ? { outcome: c.outcome } : {}) },
      receiptHead: receipt.hash,
      findings: sub.findings,
      ...(mpt ? { mptIssuanceId: mpt } : {}),
    });
    const next = transition(record, 'confirmed', this.#core.now(), { execution: outcome });
    await this.#core.writer.commit(record, next, receipt, { known: [wallet.wallet, record.intent.destination] });
    this.#core.log({ event: 'confirmed', chain: wallet.chain });
    return outcome;
  }

  resumeInflight(): void {
    const ids = this.#core.store.inflightIds();
    if (ids.length === 0) return;
    this.#core.log({ event: 'resume', intents: ids.length });
    void (async () => {
      for (const id of ids) {
        if (this.#core.closed) return;
        await this.execute(id).catch((e: unknown) => this.#core.log({ event: 'resume_failed', reason: e instanceof VaultError ? e.shortMessage : 'fault' }));
      }
    })();
  }
}
