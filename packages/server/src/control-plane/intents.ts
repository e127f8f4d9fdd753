/**
 * @module control-plane/intents
 * Intents: creation (content-addressed, replay-safe, with the expiry its wallet's time to live
 * gives), the policy evaluation every status rests on, re-evaluation on read (timelocks release,
 * revoked and stale approvals stop counting, an intent past its expiry expires) and the list.
 */
import { destinationAccount, evaluatePolicy, policyDigest, preparePolicy, type PolicySet, intentExpiresAt, intentId, isExpired, normalizeDestination, normalizeIntent, STATUS_BY_DECISION, type Decision, type IntentRequest, type IntentStatus, type SignedApproval, ValidationError } from '@vault/sdk';
import { SYSTEM_ACTOR, withActor } from './actor.js';
import { countedApprovals } from './approvals.js';
import { canonicalJson } from './state.js';
import type { Core } from './core.js';
import { lookback } from './history.js';
import type { Lifecycle } from './lifecycle.js';
import type { Protections } from './protect.js';
import { EXPIRABLE_STATUSES, isOpen, transition } from './status.js';
import type { IntentRecord } from './store.js';

export const INTENT_LIST_MAX = 100;
/** How many of a wallet's newest intents a policy simulation evaluates at most. */
export const SIMULATE_INTENTS_MAX = 200;

/** One intent whose decision the proposed policy changes. */
export interface SimulatedChange {
  intentId: string;
  status: IntentStatus;
  created_at: number;
  amount: string;
  destination: string;
  initiator: string;
  operation: string;
  current: Decision;
  proposed: Decision;
}

export interface PolicySimulation {
  wallet: string;
  current: { version: number; digest: string };
  proposed: { version: number; digest: string };
  /** The clock both evaluations ran at. */
  at: number;
  evaluated: number;
  /** Intents whose decision, release time or awaited weight would differ, newest first. */
  changed: SimulatedChange[];
}

/**
 * Whether two decisions lead to the same thing: the same kind, release time and, while approvals
 * are awaited, the same weight needed. The reasons' wording, and the weight an intent that is
 * allowed anyway would have needed, do not count.
 */
function sameOutcome(a: Decision, b: Decision): boolean {
  return a.decision === b.decision && a.not_before === b.not_before && (a.decision !== 'require_approvals' || a.required_weight === b.required_weight);
}

/** GET /intents with a filter looks at no more than this many of the newest intents. */
export const INTENT_SCAN_MAX = 10_000;

/** GET /intents?wallet=&status= */
export interface IntentListFilter {
  wallet?: string;
  status?: IntentStatus;
}

export class Intents {
  readonly #core: Core;
  readonly #protections: Protections;
  readonly #lifecycle: Lifecycle;
  /** Called with each new intent a timelock holds back (the signers observe it). */
  readonly #onTimelocked: (record: IntentRecord) => void;
  readonly #creating = new Map<string, Promise<IntentRecord>>();

  constructor(core: Core, protections: Protections, lifecycle: Lifecycle, onTimelocked: (record: IntentRecord) => void) {
    this.#core = core;
    this.#protections = protections;
    this.#lifecycle = lifecycle;
    this.#onTimelocked = onTimelocked;
  }

  /**
   * The one policy evaluation: creation, re-evaluation on read and on execute, and the simulation
   * of a proposed policy (`policy` given, validated by preparePolicy) all call it.
   */
  evaluate(record: Pick<IntentRecord, 'intentId' | 'approvals' | 'intent' | 'created_at'> & Partial<IntentRecord>, existing: IntentRecord | null, policy: Readonly<PolicySet> = this.#core.policy(record.intent.wallet)): Decision {
    const now = this.#core.now();
    const statements = this.#protections.statements(policy, record.intent);
    return evaluatePolicy(policy, record.intent, {
      now,
      created_at: record.created_at,
      intentId: record.intentId,
      history: this.#core.writer.history.forPolicy(policy, record.intent.wallet, now, existing ?? undefined),
      approvals: countedApprovals(this.#core, record, now, this.#core.lifetime(record.intent.wallet).approval_max_age_seconds),
      compliance_cleared: statements.compliance_cleared,
      attestation_valid: statements.attestation_valid,
      destination_account: this.#destinationAccount(record.intent),
    });
  }

  /** The account a (tagged) destination pays, as the wallet's driver reads it (policy lists match it). */
  #destinationAccount(intent: IntentRecord['intent']): string {
    const wallet = this.#core.wallet(intent.wallet);
    return destinationAccount(this.#core.driverFor(wallet), wallet.chain, intent.destination);
  }

  /** The record expired if its time to live has passed (Lifecycle.expireIfDue). Call under the intent's lock. */
  expireIfDue(cur: IntentRecord): Promise<IntentRecord> {
    return this.#lifecycle.expireIfDue(cur);
  }

  /** Whether the intent is past its expires_at (expired or not yet marked so). */
  pastExpiry(r: IntentRecord): boolean {
    return isExpired(this.#lifecycle.expiresAt(r), this.#core.now());
  }

  /**
   * Open statuses are re-evaluated on read and on execute (timelocks release, revoked and stale
   * approvals stop counting); an intent past its expiry expires.
   */
  async refresh(id: string): Promise<IntentRecord> {
    const r = this.#core.writer.get(id);
    // A standby may not write the expiry or a new decision (503 not_writer): the read answers from
    // the replica, and the writer's own reads and sweep make the change that then replicates here.
    if (this.#core.standby) return r;
    const due = EXPIRABLE_STATUSES.has(r.status) && this.pastExpiry(r);
    // Busy (an execute or approval in progress): answer with what is stored rather than wait.
    if ((!isOpen(r.status) && !due) || this.#core.intentLocks.held(id)) return r;
    return this.#core.intentLocks.run(id, async () => {
      const cur = await this.#lifecycle.expireIfDue(this.#core.writer.get(id));
      if (!isOpen(cur.status)) return cur;
      const decision = this.evaluate(cur, cur);
      const status = STATUS_BY_DECISION[decision.decision];
      if (status === cur.status && canonicalJson(decision) === canonicalJson(cur.decision)) return cur;
      // A re-evaluation on read (a timelock elapsed, a cap window moved) is the system's, not the reader's.
      return withActor(SYSTEM_ACTOR, () => this.writeDecision(cur, status, decision));
    });
  }

  /** Commits a re-evaluated decision with the status `to` (an `intent.status` receipt when the status changes). */
  async writeDecision(cur: IntentRecord, to: IntentStatus, decision: Decision): Promise<IntentRecord> {
    const next = transition(cur, to, this.#core.now(), { decision });
    const receipt = to === cur.status ? null : this.#core.writer.receipt('intent.status', { intentId: cur.intentId, from: cur.status, to, decision }, cur.intentId);
    await this.#core.writer.commit(cur, next, receipt);
    return next;
  }

  /** POST /intent: content-addressed; a replay returns the stored original unchanged. */
  async createIntent(request: IntentRequest): Promise<IntentRecord> {
    const normalized = normalizeIntent(request);
    // The destination in its one form for the wallet's chain before the id is computed: one
    // address, one intent (the signer normalises the same way before it recomputes the id).
    const wallet = this.#core.wallet(normalized.wallet);
    const intent = normalizeDestination(normalized, this.#core.driverFor(wallet), wallet.chain);
    // The SDK's intentId: it takes the normalised intent as it is (no second validation pass).
    const id = intentId(intent);
    const existing = this.#core.writer.find(id);
    if (existing) return existing;
    const inflight = this.#creating.get(id);
    if (inflight) return inflight;
    const work = (async () => {
      const now = this.#core.now();
      const base = { intentId: id, intent, created_at: now, expires_at: intentExpiresAt(now, this.#core.lifetime(wallet.wallet).ttl_seconds), approvals: [] as SignedApproval[] };
      const decision = this.evaluate(base, null);
      const status = STATUS_BY_DECISION[decision.decision];
      // The intent's content is already committed to by its id: the receipt body need not repeat it.
      // Members in RFC 8785 order (canonicalize's fast path).
      const receipt = this.#core.writer.receipt('intent.created', { decision, intentId: id, status }, id);
      const record: IntentRecord = {
        ...base,
        n: this.#core.store.nextN(),
        status,
        decision,
        updated_at: now,
        unsigned_approvals: [],
        execution: null,
        receipt_head: receipt.hash,
      };
      await this.#core.writer.commit(null, record, receipt, { isNew: true });
      if (record.n % 4096 === 0) this.#pruneHistory(now);
      if (decision.not_before > now && (status === 'timelocked' || status === 'pending_approvals')) this.#onTimelocked(record);
      return record;
    })();
    this.#creating.set(id, work);
    try {
      return await work;
    } finally {
      this.#creating.delete(id);
    }
  }

  /** Keeps the in-memory cap history bounded: buckets older than any policy's window are dropped. */
  #pruneHistory(now: number): void {
    let keep = 0;
    for (const p of this.#core.state.policies) {
      const b = lookback(p);
      if (b === null) return;
      keep = Math.max(keep, b);
    }
    this.#core.writer.history.prune(now, keep + 60);
  }

  /**
   * POST /policy/{wallet}/simulate: the wallet's newest intents (at most SIMULATE_INTENTS_MAX)
   * evaluated under the policy in force and under `proposed`, by `evaluate` with the same clock,
   * history and approvals, so a difference is the policy's alone. Writes nothing.
   */
  simulatePolicy(walletId: string, proposed: unknown, limit = SIMULATE_INTENTS_MAX): PolicySimulation {
    const current = this.#core.policy(walletId);
    let next: Readonly<PolicySet>;
    try {
      next = preparePolicy(proposed);
    } catch (e) {
      // The body's field is `policy`: its issues are named from there.
      if (e instanceof ValidationError) throw new ValidationError('simulate', e.issues.map((i) => ({ path: i.path === '' ? 'policy' : `policy.${i.path}`, message: i.message })), { cause: e });
      throw e;
    }
    if (next.wallet !== walletId) throw new ValidationError('simulate', [{ path: 'policy.wallet', message: `the policy is for ${next.wallet}, not ${walletId}` }]);
    const changed: SimulatedChange[] = [];
    const records = this.#core.store.recentForWallet(walletId, Math.min(Math.max(1, limit), SIMULATE_INTENTS_MAX));
    for (const r of records) {
      const a = this.evaluate(r, r, current);
      const b = this.evaluate(r, r, next);
      if (sameOutcome(a, b)) continue;
      changed.push({ intentId: r.intentId, status: r.status, created_at: r.created_at, amount: r.intent.amount, destination: r.intent.destination, initiator: r.intent.initiator, operation: r.intent.operation.op, current: a, proposed: b });
    }
    return { wallet: walletId, current: { version: current.version, digest: policyDigest(current) }, proposed: { version: next.version, digest: policyDigest(next) }, at: this.#core.now(), evaluated: records.length, changed };
  }

  /** GET /intents: newest first, optionally only one wallet's and/or one status (the newest INTENT_SCAN_MAX looked at). */
  listIntents(limit = INTENT_LIST_MAX, filter: IntentListFilter = {}): Record<string, unknown>[] {
    const { wallet, status } = filter;
    const match = wallet === undefined && status === undefined ? undefined : (r: IntentRecord) => (wallet === undefined || r.intent.wallet === wallet) && (status === undefined || r.status === status);
    return this.#core.store.recent(Math.min(Math.max(1, limit), INTENT_LIST_MAX), match, INTENT_SCAN_MAX).map((r) => ({
      intentId: r.intentId,
      status: r.status,
      wallet: r.intent.wallet,
      destination: r.intent.destination,
      amount: r.intent.amount,
      asset_symbol: r.intent.asset_symbol ?? null,
      operation: r.intent.operation.op,
      initiator: r.intent.initiator,
      decision: r.decision.decision,
      created_at: r.created_at,
      expires_at: this.#lifecycle.expiresAt(r),
    }));
  }
}
