/**
 * @module control-plane/intents
 * Intents: creation (content-addressed, replay-safe, with the expiry its wallet's time to live
 * gives), the policy evaluation every status rests on, re-evaluation on read (timelocks release,
 * revoked and stale approvals stop counting, an intent past its expiry expires) and the list.
 */
import { destinationAccount, evaluatePolicy, intentExpiresAt, intentId, isExpired, normalizeDestination, normalizeIntent, STATUS_BY_DECISION, type Decision, type IntentRequest, type IntentStatus, type SignedApproval } from '@vault/sdk';
import { countedApprovals } from './approvals.js';
import { canonicalJson } from './state.js';
import type { Core } from './core.js';
import { lookback } from './history.js';
import type { Lifecycle } from './lifecycle.js';
import type { Protections } from './protect.js';
import { EXPIRABLE_STATUSES, isOpen, transition } from './status.js';
import type { IntentRecord } from './store.js';

export const INTENT_LIST_MAX = 100;

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

  evaluate(record: Pick<IntentRecord, 'intentId' | 'approvals' | 'intent' | 'created_at'> & Partial<IntentRecord>, existing: IntentRecord | null): Decision {
    const policy = this.#core.policy(record.intent.wallet);
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
    const due = EXPIRABLE_STATUSES.has(r.status) && this.pastExpiry(r);
    // Busy (an execute or approval in progress): answer with what is stored rather than wait.
    if ((!isOpen(r.status) && !due) || this.#core.intentLocks.held(id)) return r;
    return this.#core.intentLocks.run(id, async () => {
      const cur = await this.#lifecycle.expireIfDue(this.#core.writer.get(id));
      if (!isOpen(cur.status)) return cur;
      const decision = this.evaluate(cur, cur);
      const status = STATUS_BY_DECISION[decision.decision];
      if (status === cur.status && canonicalJson(decision) === canonicalJson(cur.decision)) return cur;
      return this.writeDecision(cur, status, decision);
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

  listIntents(limit = INTENT_LIST_MAX): Record<string, unknown>[] {
    return this.#core.store.recent(Math.min(Math.max(1, limit), INTENT_LIST_MAX)).map((r) => ({
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
