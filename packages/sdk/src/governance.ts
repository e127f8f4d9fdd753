/**
 * @module governance
 * Change sets approved by an admin quorum (schemas/governance): their digest, signed admin
 * verdicts, and the ONE check the control plane and every signer run before a change set applies
 * (`checkChangeSet`). Pure: the caller gives the governance it holds, the change set, the
 * approvals and its own clock, and gets a value back with the reason when the answer is no.
 */
import { APPROVAL_CLOCK_SKEW_SECONDS } from './approvals.js';
import { canonicalize } from './canonical.js';
import { signEd25519, verifyEd25519 } from './ed25519.js';
import { fromHex, sha256Hex, toHex, utf8Bytes } from './encoding.js';
import { ValidationError } from './errors.js';
import {
  AdminPolicySchema,
  ChangeApprovalSchema,
  ChangeSetSchema,
  MAX_CHANGE_APPROVALS,
  type AdminPolicy,
  type ChangeApproval,
  type ChangeSet,
} from './schemas/governance.js';
import { parseWith, toValidationIssues } from './schemas/index.js';
import type { SignedApproval } from './schemas/approval.js';

/** Domain tag of changeSetDigest: a change set's digest is never another object's. */
export const CHANGE_SET_DOMAIN = 'vault-change-set-v1\n';
/** Domain tag of the message an admin signs. */
export const CHANGE_APPROVAL_DOMAIN = 'vault-change-approval-v1\n';

/**
 * `sha256("vault-change-set-v1\n" + JCS(changeSet))`, lowercase hex. The base version is inside,
 * so approvals of a change set never count for the same ops against another version.
 *
 * @example
 * const digest = changeSetDigest({ base_version: 0, ops, proposed_by: 'alice', created_at: 1767225600 })
 */
export function changeSetDigest(changeSet: ChangeSet | unknown): string {
  return sha256Hex(CHANGE_SET_DOMAIN + canonicalize(parseWith(ChangeSetSchema, changeSet, 'change')));
}

/** A change set's id as the control plane lists it: `chg_` and the first 32 hex digits of its digest. */
export function changeSetId(digest: string): string {
  return `chg_${digest.slice(0, 32)}`;
}

/** The fields of a change approval its signature covers. */
export type ChangeApprovalStatement = Pick<ChangeApproval, 'admin_id' | 'change' | 'verdict' | 'at'>;

/** The exact bytes an admin signs: UTF-8 of `"vault-change-approval-v1\n" + JCS({admin_id, at, change, verdict})`. */
export function changeApprovalMessage(statement: ChangeApprovalStatement): Uint8Array {
  const { admin_id, at, change, verdict } = statement;
  return utf8Bytes(CHANGE_APPROVAL_DOMAIN + canonicalize({ admin_id, at, change, verdict }));
}

/**
 * Signs an admin's verdict on a change set with the admin's 32-byte ed25519 secret key.
 *
 * @example
 * const approval = signChangeApproval({ admin_id: 'a1', change: digest, verdict: 'approve', at: now }, secretKey)
 */
export function signChangeApproval(statement: ChangeApprovalStatement, secretKey: Uint8Array | string): ChangeApproval {
  const key = typeof secretKey === 'string' ? fromHex(secretKey, 'secretKey', 32) : secretKey;
  if (key.length !== 32) throw new ValidationError('secretKey', [{ path: '', message: `expected 32 bytes, got ${key.length}` }]);
  const unsigned = { admin_id: statement.admin_id, change: statement.change, verdict: statement.verdict, at: statement.at };
  const sig = toHex(signEd25519(changeApprovalMessage(unsigned), key));
  return parseWith(ChangeApprovalSchema, { ...unsigned, signature: { curve: 'ed25519', sig } }, 'approval');
}

/** Why one approval of a change set does not count. */
export type ChangeApprovalProblem = 'malformed' | 'wrong_change' | 'unknown_admin' | 'bad_signature' | 'duplicate' | 'future' | 'stale';

/** Why a change set does not apply (now). */
export type ChangeSetRefusal =
  | 'malformed'
  | 'no_governance'
  | 'stale_base'
  | 'replayed'
  | 'future_base'
  | 'too_many_approvals'
  | 'bad_signature'
  | 'unknown_admin'
  | 'duplicate'
  | 'wrong_change'
  | 'future'
  | 'stale'
  | 'vetoed'
  | 'under_quorum'
  | 'delay_not_elapsed';

/** Every refusal reason, in the order checkChangeSet checks (a contract: tested). */
export const CHANGE_SET_REFUSALS: readonly ChangeSetRefusal[] = [
  'malformed',
  'no_governance',
  'replayed',
  'stale_base',
  'future_base',
  'too_many_approvals',
  'wrong_change',
  'unknown_admin',
  'bad_signature',
  'future',
  'stale',
  'duplicate',
  'vetoed',
  'under_quorum',
  'delay_not_elapsed',
] as const;

export interface ChangeApprovalIssue {
  index: number;
  admin_id: string | null;
  reason: ChangeApprovalProblem;
  message: string;
}

export type ChangeSetCheck =
  | {
      ok: true;
      change: ChangeSet;
      digest: string;
      /** The version the governance is at once this change set applies (base_version + 1). */
      version: number;
      /** Approving admin weight. */
      weight: number;
      threshold: number;
      /** Signed time of the approval that reached the threshold, plus the delay: approvals of intents dated before it stop counting. */
      ready_at: number;
      /** The approvals that count, sorted by time (what a service journals and pushes on). */
      approvals: ChangeApproval[];
    }
  | {
      ok: false;
      reason: ChangeSetRefusal;
      message: string;
      digest: string | null;
      weight: number;
      threshold: number;
      /** When the change may apply, for delay_not_elapsed. */
      ready_at: number | null;
      problems: ChangeApprovalIssue[];
      /** The valid approvals and rejections seen (under_quorum and delay_not_elapsed keep them). */
      approvals: ChangeApproval[];
    };

/** What checkChangeSet judges against: the admin policy a service holds, with its version. */
export type Governance = AdminPolicy;

/**
 * Judges a change set and its admin verdicts against the governance this service holds, at its
 * own clock. Refusals, in order: malformed change set; no governance; `replayed` (based on an
 * older version and already applied here: `appliedDigests`) or `stale_base` (an older base) or
 * `future_base` (a version this service never saw); more than MAX_CHANGE_APPROVALS verdicts;
 * any verdict that is malformed, for another change, from an unknown admin, with a bad
 * signature, dated after now (+ skew) or before the change set was created (- skew), or a second
 * one from the same admin; then any valid rejection vetoes; under the threshold; and the delay.
 * A bad verdict fails the whole set (fail closed: a service never picks which signatures to
 * believe). `ready_at` is the signed time of the approval that reached the threshold plus the
 * delay, so two services agree on it without sharing a clock.
 *
 * @example
 * const check = checkChangeSet(governance, change, approvals, now)
 * if (!check.ok) refuse(check.reason, check.message)
 */
export function checkChangeSet(
  governance: Governance | null | undefined,
  changeSet: unknown,
  approvals: readonly unknown[],
  now: number,
  opts: { appliedDigests?: ReadonlySet<string>; skewSeconds?: number } = {},
): ChangeSetCheck {
  const threshold = governance?.threshold ?? 0;
  const no = (reason: ChangeSetRefusal, message: string, extra: Partial<Extract<ChangeSetCheck, { ok: false }>> = {}): ChangeSetCheck => ({
    ok: false,
    reason,
    message,
    digest: null,
    weight: 0,
    threshold,
    ready_at: null,
    problems: [],
    approvals: [],
    ...extra,
  });
  const parsed = ChangeSetSchema.safeParse(changeSet);
  if (!parsed.success) {
    const issue = toValidationIssues(parsed.error)[0] ?? { path: '', message: 'invalid' };
    return no('malformed', `change.${issue.path}: ${issue.message}`);
  }
  const change = parsed.data;
  const digest = sha256Hex(CHANGE_SET_DOMAIN + canonicalize(change));
  if (!governance) return no('no_governance', 'no admin policy is configured here: nothing can be changed by change set', { digest });
  const gov = AdminPolicySchema.safeParse(governance);
  if (!gov.success) return no('no_governance', 'the admin policy held here is malformed', { digest });
  if (change.base_version < governance.version) {
    if (opts.appliedDigests?.has(digest)) return no('replayed', `change set ${digest} was already applied here (as version ${change.base_version + 1}; now at ${governance.version})`, { digest });
    return no('stale_base', `change set is based on version ${change.base_version}; the current version is ${governance.version}`, { digest });
  }
  if (change.base_version > governance.version) return no('future_base', `change set is based on version ${change.base_version}; this service is at version ${governance.version}`, { digest });
  if (approvals.length > MAX_CHANGE_APPROVALS) return no('too_many_approvals', `at most ${MAX_CHANGE_APPROVALS} approvals, got ${approvals.length}`, { digest });

  const admins = new Map(governance.admins.map((a) => [a.id, a]));
  const skew = opts.skewSeconds ?? APPROVAL_CLOCK_SKEW_SECONDS;
  const problems: ChangeApprovalIssue[] = [];
  const valid: ChangeApproval[] = [];
  const seen = new Set<string>();
  approvals.forEach((raw, index) => {
    const claimed = typeof raw === 'object' && raw !== null && typeof (raw as { admin_id?: unknown }).admin_id === 'string' ? (raw as { admin_id: string }).admin_id : null;
    const problem = (reason: ChangeApprovalProblem, message: string) => problems.push({ index, admin_id: claimed, reason, message });
    const p = ChangeApprovalSchema.safeParse(raw);
    if (!p.success) {
      const issue = toValidationIssues(p.error)[0] ?? { path: '', message: 'invalid' };
      return problem('malformed', `approvals.${index}.${issue.path}: ${issue.message}`);
    }
    const a = p.data;
    if (a.change !== digest) return problem('wrong_change', `approval ${index} is for change ${a.change}, not ${digest}`);
    const admin = admins.get(a.admin_id);
    if (!admin) return problem('unknown_admin', `${a.admin_id} is not an admin of version ${governance.version}`);
    if (!verifyEd25519(fromHex(a.signature.sig, 'signature.sig', 64), changeApprovalMessage(a), fromHex(admin.public_key, 'public_key', 32))) {
      return problem('bad_signature', `signature of admin ${a.admin_id} does not verify`);
    }
    if (a.at > now + skew) return problem('future', `approval of ${a.admin_id} is dated ${a.at}, after now (${now}, ${skew}s skew allowed)`);
    if (a.at < change.created_at - skew) return problem('stale', `approval of ${a.admin_id} is dated ${a.at}, before the change set was created (${change.created_at})`);
    if (seen.has(a.admin_id)) return problem('duplicate', `admin ${a.admin_id} gave more than one verdict`);
    seen.add(a.admin_id);
    valid.push(a);
  });
  valid.sort((x, y) => x.at - y.at || (x.admin_id < y.admin_id ? -1 : x.admin_id > y.admin_id ? 1 : 0));
  const approving = valid.filter((a) => a.verdict === 'approve');
  const weight = approving.reduce((n, a) => n + (admins.get(a.admin_id)?.weight ?? 0), 0);
  const first = problems[0];
  if (first) return no(first.reason, first.message, { digest, problems, weight, approvals: valid });
  const veto = valid.find((a) => a.verdict === 'reject');
  if (veto) return no('vetoed', `admin ${veto.admin_id} rejected change set ${digest} at ${veto.at}`, { digest, weight, approvals: valid });
  let reached: number | null = null;
  let sum = 0;
  for (const a of approving) {
    sum += admins.get(a.admin_id)?.weight ?? 0;
    if (sum >= governance.threshold) {
      reached = a.at;
      break;
    }
  }
  if (reached === null) return no('under_quorum', `approving admin weight ${weight} is under the threshold ${governance.threshold}`, { digest, weight, approvals: valid });
  const readyAt = reached + governance.delay_seconds;
  if (now < readyAt) return no('delay_not_elapsed', `change set ${digest} may apply at ${readyAt} (quorum at ${reached}, delay ${governance.delay_seconds}s); now ${now}`, { digest, weight, approvals: valid, ready_at: readyAt });
  return { ok: true, change, digest, version: change.base_version + 1, weight, threshold: governance.threshold, ready_at: readyAt, approvals: valid };
}

/**
 * The governance once a change set judged ok has applied: the next version, and the admin policy
 * its set_admin_policy op names (or the same admins).
 *
 * @example
 * const next = governanceAfter(governance, check.change)
 */
export function governanceAfter(governance: Governance, change: ChangeSet): Governance {
  const set = change.ops.find((o) => o.op === 'set_admin_policy');
  const quorum = set ? set.quorum : { admins: governance.admins, threshold: governance.threshold, delay_seconds: governance.delay_seconds };
  return parseWith(AdminPolicySchema, { ...quorum, version: change.base_version + 1 }, 'governance');
}

/**
 * The wallets whose policy a change set changes (set_policy, set_wallet; an approver op naming a
 * wallet): approvals of their intents dated before the change's ready_at stop counting.
 */
export function walletsChangedBy(change: ChangeSet): Set<string> {
  const out = new Set<string>();
  for (const o of change.ops) {
    if (o.op === 'set_policy') out.add(o.policy.wallet);
    else if (o.op === 'set_wallet') out.add(o.descriptor.wallet);
    else if ((o.op === 'set_approver' || o.op === 'remove_approver') && o.wallet !== undefined) out.add(o.wallet);
  }
  return out;
}

/**
 * Splits an intent's approvals into those that count under the wallet's current policy and those
 * dated before it took effect (`policySince`, the ready_at of the change set that last changed
 * it): consent given under one policy is not consent under another. Both services call this.
 *
 * @example
 * const { kept } = approvalsUnderPolicy(request.approvals, trusted.policySince)
 */
export function approvalsUnderPolicy<A extends Pick<SignedApproval, 'at'>>(approvals: readonly A[], policySince: number | undefined): { kept: A[]; superseded: A[] } {
  if (policySince === undefined) return { kept: [...approvals], superseded: [] };
  const kept: A[] = [];
  const superseded: A[] = [];
  for (const a of approvals) (a.at < policySince ? superseded : kept).push(a);
  return { kept, superseded };
}
