/**
 * @module policy/types
 * Inputs and per-rule outcomes of the policy engine.
 */
import type { CountedApproval } from '../approvals.js';
import type { NormalizedIntent, OperationKind } from '../schemas/intent.js';
import type { IntentStatus } from '../schemas/approval.js';
import type { RuleKind, RuleOf } from '../schemas/policy.js';

/** One earlier intent of the same wallet, as velocity caps and agent budgets count it. */
export interface HistoryEntry {
  intentId: string;
  /** Integer Unix seconds. */
  created_at: number;
  amount: string;
  status: IntentStatus;
  initiator: string;
  op: OperationKind;
  asset_symbol?: string | undefined;
  asset_issuer?: string | undefined;
}

/**
 * Everything evaluatePolicy depends on besides the policy and the intent. The engine is a pure
 * function of these: the control plane passes its clock and store, the signer its own clock and
 * its own record of what it signed, and both get the same answer for the same inputs.
 */
export interface PolicyContext {
  /** Integer Unix seconds, UTC: the evaluating service's own clock. */
  now: number;
  /** When the intent was created (timelocks count from here). Defaults to `now`. */
  created_at?: number;
  /** The id of the intent being evaluated, so its own history entry is never counted twice. */
  intentId?: string;
  /** The wallet's other intents (velocity caps, agent budgets). */
  history?: readonly HistoryEntry[];
  /**
   * Approvals whose signatures were already verified, as they count: verifyApprovals' `counted`
   * (strong_auth proven by a passkey, device_bound for a passkey that is not synced).
   */
  approvals?: readonly CountedApproval[];
  compliance_cleared?: boolean;
  attestation_valid?: boolean;
  /**
   * The account the destination's funds reach (the driver's AddressCheck.account: an XRPL
   * X-address's classic address), when it differs from the destination. Destination lists match
   * it too. `destinationAccount` computes it.
   */
  destination_account?: string;
}

/** A fully defaulted context, as the rules see it. */
export interface RuleInput {
  intent: NormalizedIntent;
  amount: bigint;
  now: number;
  created_at: number;
  intentId: string | undefined;
  history: readonly HistoryEntry[];
  approvals: readonly CountedApproval[];
  compliance_cleared: boolean;
  attestation_valid: boolean;
  /** The destination's account (defaults to the destination). */
  destination_account: string;
}

export type RuleOutcome =
  /** `approvals`: an approval rule that was triggered and is met reports its weights. */
  | { effect: 'pass'; approvals?: { required: number; current: number } }
  | { effect: 'deny'; reason: string }
  | { effect: 'require_approvals'; reason: string; required_weight: number; current_weight: number }
  | { effect: 'delay'; reason: string; not_before: number };

/** One module per rule kind. `label` is the rule's name and index, e.g. `hard_ceiling[2]`. */
export interface RuleModule<K extends RuleKind> {
  readonly kind: K;
  evaluate(rule: RuleOf<K>, input: RuleInput, label: string): RuleOutcome;
  /**
   * Time rules only: the earliest instant >= t at which this rule lets the intent execute, or
   * null when it never will. The engine combines these with timelocks to find not_before.
   */
  earliestAt?(rule: RuleOf<K>, t: number): number | null;
}
