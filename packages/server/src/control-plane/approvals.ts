/**
 * @module control-plane/approvals
 * Signed approvals: which stored approvals count, POST /intent/{id}/approve-signed (checked as
 * the signer will check it, then the policy re-run) and the deprecated unsigned approve (recorded,
 * never counted).
 */
import {
  RefusedError,
  rulesCountingApprover,
  STATUS_BY_DECISION,
  ValidationError,
  verifyApprovals,
  approvalsUnderPolicy,
  type ApprovalProblem,
  type ApprovalSetResult,
  type ApproverKey,
  type CountedApproval,
  type Decision,
  type IntentStatus,
  type SignedApproval,
} from '@vault/sdk';
import type { Core } from './core.js';
import type { Intents } from './intents.js';
import type { StateFile, WebAuthnSettings } from './state.js';
import { isOpen, transition } from './status.js';
import type { IntentRecord } from './store.js';

/**
 * The approver devices of the state file, keyed by id, a revoked one marked so, each with its
 * passkey (registered at pairing, or carried by a set_approver change set) and the origins its
 * assertions may come from (the change set's, else state.json's `webauthn`).
 */
export function approverKeys(state: StateFile, webauthn: WebAuthnSettings): Map<string, ApproverKey> {
  const m = new Map<string, ApproverKey>();
  for (const d of state.devices) {
    if (d.role !== 'approver') continue;
    m.set(d.id, { publicKey: d.public_key, revoked: d.revoked_at !== null, ...(d.passkey ? { passkey: { ...d.passkey, origins: d.passkey_origins ?? webauthn.origins } } : {}) });
  }
  return m;
}

/**
 * The stored approvals, judged as new ones are (approveSigned), and as the signer will judge them
 * (known, unrevoked approver; not the initiator; dated within the intent's window and younger
 * than the wallet's approval age, `maxAgeSeconds`; strong only with a verifying passkey assertion).
 * `valid` is what is forwarded to the signers, `counted` what the policy counts.
 */
export function judgedApprovals(core: Core, record: Pick<IntentRecord, 'intentId' | 'approvals' | 'intent' | 'created_at'>, now: number, maxAgeSeconds: number): ApprovalSetResult {
  // Approvals dated before a change set last changed the wallet's policy do not count (the signer drops them too).
  const under = approvalsUnderPolicy(record.approvals, core.state.governance?.policy_since[record.intent.wallet]).kept;
  return verifyApprovals(under, {
    intentId: record.intentId,
    approvers: approverKeys(core.state, core.webauthn()),
    initiator: record.intent.initiator,
    window: { createdAt: record.created_at, now, maxAgeSeconds },
  });
}

/** The stored approvals as the policy counts them (judgedApprovals' `counted`). */
export function countedApprovals(core: Core, record: Pick<IntentRecord, 'intentId' | 'approvals' | 'intent' | 'created_at'>, now: number, maxAgeSeconds: number): CountedApproval[] {
  return judgedApprovals(core, record, now, maxAgeSeconds).counted;
}

export class Approvals {
  readonly #core: Core;
  readonly #intents: Intents;

  constructor(core: Core, intents: Intents) {
    this.#core = core;
    this.#intents = intents;
  }

  /** POST /intent/{id}/approve-signed. */
  async approveSigned(id: string, approval: SignedApproval): Promise<{ intentId: string; status: IntentStatus; decision: Decision; rejectedBy?: string }> {
    this.#core.writer.getForWrite(id);
    return this.#core.intentLocks.run(id, async () => {
      const cur = await this.#intents.expireIfDue(this.#core.writer.get(id));
      if (!isOpen(cur.status)) {
        throw new RefusedError(`approvals are closed: intent is ${cur.status}`, { data: { reason: 'approvals_closed', status: cur.status } });
      }
      const check = verifyApprovals([approval], {
        intentId: id,
        approvers: approverKeys(this.#core.state, this.#core.webauthn()),
        initiator: cur.intent.initiator,
        window: { createdAt: cur.created_at, now: this.#core.now(), maxAgeSeconds: this.#core.lifetime(cur.intent.wallet).approval_max_age_seconds },
      });
      const problem = check.problems[0];
      if (problem) {
        // The field each problem names (400 `approval.<path>`); the rest name approver_id.
        const paths: Partial<Record<ApprovalProblem, string>> = { wrong_intent: 'intent', bad_signature: 'signature.sig', malformed: '', stale: 'at', future: 'at', expired: 'at' };
        const path = paths[problem.reason] ?? 'approver_id';
        throw new ValidationError('approval', [{ path, message: problem.message }], { data: { reason: problem.reason } });
      }
      // A strong_auth the device cannot prove would be recorded as a claim the signers then count
      // as weak: refuse it, so the device learns now (it may resend with strong_auth false).
      const weak = check.weakened[0];
      if (weak) {
        throw new ValidationError('approval', [{ path: 'webauthn', message: weak.message }], { data: { reason: 'strong_auth_unproven', webauthn: weak.reason } });
      }
      // A verified approval that no rule of the wallet's policy counts would be recorded with
      // weight 0 and change nothing (a reject from it would even close the intent): refuse it and
      // say why, so the device's owner learns to ask for a policy change.
      if (rulesCountingApprover(this.#core.policy(cur.intent.wallet), approval.approver_id).length === 0) {
        throw new RefusedError(`approver ${approval.approver_id} is counted by no rule of wallet ${cur.intent.wallet}'s policy: its approval would change nothing`, {
          data: { reason: 'not_counted', approver_id: approval.approver_id, wallet: cur.intent.wallet },
        });
      }
      const approvals = [...cur.approvals.filter((a) => a.approver_id !== approval.approver_id), approval];
      const decision = this.#intents.evaluate({ ...cur, approvals }, cur);
      const rejected = approval.verdict === 'reject';
      const status: IntentStatus = rejected ? 'denied' : STATUS_BY_DECISION[decision.decision];
      const next = transition(cur, status, this.#core.now(), { approvals, decision, ...(rejected ? { rejectedBy: approval.approver_id } : {}) });
      const receipt = this.#core.writer.receipt('intent.approval', { intentId: id, approval, status, decision }, id);
      await this.#core.writer.commit(cur, next, receipt);
      this.#core.log({ event: 'approval', verdict: approval.verdict, status });
      return { intentId: id, status, decision, ...(rejected ? { rejectedBy: approval.approver_id } : {}) };
    });
  }

  /** POST /intent/{id}/approve (deprecated): recorded for the audit trail, never counted. */
  async approveUnsigned(id: string): Promise<Record<string, unknown>> {
    this.#core.writer.getForWrite(id);
    return this.#core.intentLocks.run(id, async () => {
      const cur = this.#core.writer.get(id);
      const next: IntentRecord = { ...cur, unsigned_approvals: [...cur.unsigned_approvals, { at: this.#core.now(), via: 'session' }].slice(-64), updated_at: this.#core.now() };
      const receipt = this.#core.writer.receipt('intent.approve_unsigned', { intentId: id, at: this.#core.now() }, id);
      await this.#core.writer.commit(cur, next, receipt);
      return {
        intentId: id,
        status: next.status,
        decision: next.decision,
        counted: false,
        deprecated: 'unsigned approvals are recorded but never counted; use POST /intent/{id}/approve-signed',
      };
    });
  }
}
