/**
 * @module policy/engine
 * `evaluatePolicy(policy, intent, context) -> Decision`: a pure function of its inputs, called
 * by the control plane and re-run by the signer with its own clock and history.
 *
 * Combination (DESIGN.md §4): any deny -> deny; else unmet approvals -> require_approvals; else a
 * future not_before -> delay; else allow. A policy with no rules denies; without an
 * allow_operations rule only `transfer` is allowed; a reject verdict from a verified approver
 * denies. Every reason names its rule (`kind[index]`) and the numbers.
 */
import { normalizeIntent } from '../digest.js';
import { UnknownRuleError, ValidationError } from '../errors.js';
import type { Decision } from '../schemas/approval.js';
import type { IntentRequest, NormalizedIntent } from '../schemas/intent.js';
import { parseWith } from '../schemas/index.js';
import { PolicySetSchema, RULE_KINDS, type PolicySet, type Rule, type RuleKind } from '../schemas/policy.js';
import { DEFAULT_VELOCITY_WINDOW, RULES } from './rules/index.js';
import { isValidated, sealValidated } from '../validated.js';
import type { PolicyContext, RuleInput, RuleModule, RuleOutcome } from './types.js';

/**
 * Operating windows repeat weekly, so if every window and timelock can agree on an instant, they
 * do within this horizon after the last timelock; the search never looks further.
 */
const TIME_SEARCH_HORIZON = 8 * 86400;

/**
 * Validates a PolicySet. An unknown rule tag is an UnknownRuleError naming `rules.<i>.rule`;
 * any other problem a ValidationError naming the field (an approver listed twice in one
 * approval_threshold names `rules.<i>.approvers.<j>.id`).
 */
export function parsePolicy(policy: unknown): PolicySet {
  const rules = (policy as { rules?: unknown } | null)?.rules;
  if (Array.isArray(rules)) {
    rules.forEach((r: unknown, i) => {
      const tag = (r as { rule?: unknown } | null)?.rule;
      if (!(RULE_KINDS as readonly unknown[]).includes(tag)) throw new UnknownRuleError(i, tag);
    });
  }
  return parseWith(PolicySetSchema, policy, 'policy');
}

/**
 * Validates a policy once and freezes it: `evaluatePolicy` and `policyDigest` take the result
 * without parsing it again. For services that evaluate one policy for many intents.
 *
 * @example
 * const prepared = preparePolicy(policy)
 * for (const intent of intents) evaluatePolicy(prepared, intent, { now })
 */
export function preparePolicy(policy: PolicySet | unknown): Readonly<PolicySet> {
  if (isValidated(policy)) return policy as PolicySet;
  return sealValidated(parsePolicy(policy));
}

/**
 * Every distinct history window a policy's rules read, in seconds (`null` for a lifetime budget),
 * ascending with `null` last; empty when no rule reads history. An entry counts for a window `w`
 * at `now` when `created_at > now - w`, so a service can hand evaluatePolicy one aggregate per
 * stretch between consecutive window edges and get the same totals (the reference services do).
 *
 * @example
 * policyWindows({ wallet: 'w', version: 1, rules: [{ rule: 'daily_velocity_cap', limit: '5' }] }) // [86400]
 */
export function policyWindows(policy: PolicySet): (number | null)[] {
  const finite = new Set<number>();
  let lifetime = false;
  for (const r of policy.rules) {
    if (r.rule === 'daily_velocity_cap') finite.add(r.window_seconds ?? DEFAULT_VELOCITY_WINDOW);
    if (r.rule === 'agent_budget_ceiling') {
      if (r.window_seconds == null) lifetime = true;
      else finite.add(r.window_seconds);
    }
  }
  const out: (number | null)[] = [...finite].sort((a, b) => a - b);
  if (lifetime) out.push(null);
  return out;
}

/**
 * How far back a policy's history rules look, in seconds: the longest velocity-cap or
 * agent-budget window, `null` for a lifetime budget (everything counts), 0 when no rule reads
 * history. Services use it to bound the history they hand to evaluatePolicy: entries created
 * before `now - lookback` cannot change the decision.
 *
 * @example
 * policyLookback({ wallet: 'w', version: 1, rules: [{ rule: 'daily_velocity_cap', limit: '5' }] }) // 86400
 */
export function policyLookback(policy: PolicySet): number | null {
  const windows = policyWindows(policy);
  if (windows.includes(null)) return null;
  return windows.length === 0 ? 0 : (windows[windows.length - 1] as number);
}

function checkTime(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ValidationError('context', [{ path: field, message: 'must be integer Unix seconds >= 0' }]);
  }
  return value;
}

function evaluateRule(rule: Rule, input: RuleInput, label: string): RuleOutcome {
  const module = RULES[rule.rule] as RuleModule<RuleKind> | undefined;
  if (!module) throw new UnknownRuleError(Number(label.slice(label.indexOf('[') + 1, -1)), rule.rule);
  return module.evaluate(rule as never, input, label);
}

/**
 * Evaluates a policy for an intent.
 *
 * @example
 * const decision = evaluatePolicy(policy, { wallet: 'w1', destination: 'rB…', amount: '2500' }, { now: 1767225600 })
 * decision.decision // 'require_approvals'
 * decision.reasons  // ['approval_threshold[1]: amount 2500 is above 1000; approval weight 0 of 2 required']
 */
export function evaluatePolicy(policy: PolicySet | unknown, intent: IntentRequest | NormalizedIntent, context: PolicyContext): Decision {
  const p = isValidated(policy) ? (policy as PolicySet) : parsePolicy(policy);
  const normalized = normalizeIntent(intent);
  const now = checkTime(context.now, 'now');
  const createdAt = checkTime(context.created_at ?? now, 'created_at');
  const input: RuleInput = {
    intent: normalized,
    amount: BigInt(normalized.amount),
    now,
    created_at: createdAt,
    intentId: context.intentId,
    history: context.history ?? [],
    approvals: context.approvals ?? [],
    compliance_cleared: context.compliance_cleared ?? false,
    attestation_valid: context.attestation_valid ?? false,
    destination_account: context.destination_account ?? normalized.destination,
  };

  const denies: string[] = [];
  const pending: Extract<RuleOutcome, { effect: 'require_approvals' }>[] = [];
  /** Every triggered approval rule's weights, met or not. */
  const weights: { required: number; current: number }[] = [];
  const delays: string[] = [];
  let notBefore = now;

  // Members in RFC 8785 order: receipts hash decisions, and canonicalize then takes its fast path.
  const result = (decision: Decision['decision'], reasons: string[], required = 0, current = 0, nb = notBefore): Decision => ({
    current_weight: current,
    decision,
    not_before: nb,
    reasons,
    required_weight: required,
  });

  if (p.wallet !== normalized.wallet) {
    return result('deny', [`policy: policy is for wallet ${p.wallet}, intent is for wallet ${normalized.wallet}`], 0, 0, 0);
  }
  if (p.rules.length === 0) {
    return result('deny', [`policy: policy v${p.version} of ${p.wallet} has no rules; denied by default`], 0, 0, 0);
  }

  p.rules.forEach((rule, i) => {
    const outcome = evaluateRule(rule, input, `${rule.rule}[${i}]`);
    switch (outcome.effect) {
      case 'deny':
        denies.push(outcome.reason);
        break;
      case 'require_approvals':
        pending.push(outcome);
        weights.push({ required: outcome.required_weight, current: outcome.current_weight });
        break;
      case 'delay':
        delays.push(outcome.reason);
        notBefore = Math.max(notBefore, outcome.not_before);
        break;
      case 'pass':
        if (outcome.approvals) weights.push(outcome.approvals);
        break;
    }
  });

  if (!p.rules.some((r) => r.rule === 'allow_operations') && normalized.operation.op !== 'transfer') {
    denies.push(`policy: operation ${normalized.operation.op} needs an allow_operations rule (only transfer is allowed by default)`);
  }
  for (const a of input.approvals) {
    if (a.verdict === 'reject') denies.push(`approvals: rejected by ${a.approver_id} at ${a.at}`);
  }

  // Time rules: find the first instant at or after every timelock at which every window is open.
  const timed = p.rules
    .map((rule, i) => ({ rule, i, module: RULES[rule.rule] as RuleModule<RuleKind> }))
    .filter((x) => x.module.earliestAt !== undefined);
  // A window that pushes not_before past what the rules' own reasons say (a timelock ending while
  // it is closed) gets a reason of its own, so the final not_before is always explained.
  const pushed = new Map<number, { label: string; from: number; to: number }>();
  let settled = timed.length === 0;
  const horizon = notBefore + TIME_SEARCH_HORIZON;
  // Each pass moves not_before to some window's opening; within the horizon there are at most
  // eight openings per window, so this bound is never what ends a search that can succeed.
  const maxPasses = (timed.length + 1) * 16;
  for (let pass = 0; pass < maxPasses && !settled && notBefore <= horizon; pass++) {
    settled = true;
    for (const { rule, i, module } of timed) {
      const t = module.earliestAt?.(rule as never, notBefore) ?? null;
      if (t === null) {
        denies.push(`${rule.rule}[${i}]: never opens at or after ${notBefore}`);
        settled = true;
        break;
      }
      if (t > notBefore) {
        pushed.set(i, { label: `${rule.rule}[${i}]`, from: notBefore, to: t });
        notBefore = t;
        settled = false;
      }
    }
  }
  if (!settled) {
    denies.push(`policy: the operating windows have no common opening within ${TIME_SEARCH_HORIZON / 86400} days after ${horizon - TIME_SEARCH_HORIZON}`);
  } else {
    for (const [, m] of [...pushed].sort(([a], [b]) => a - b)) {
      delays.push(`${m.label}: closed at ${m.from}, when the other time rules would allow execution; opens at ${m.to} (${new Date(m.to * 1000).toISOString()})`);
    }
  }

  if (denies.length > 0) {
    return result('deny', [...denies, ...pending.map((o) => o.reason), ...delays], 0, 0, 0);
  }
  // The Decision carries one weight pair: the approval rule furthest from being met, or, when all
  // are met, the one that needed the most.
  const binding = weights.reduce<{ required: number; current: number } | null>((a, b) => {
    if (a === null) return b;
    const gapA = Math.max(0, a.required - a.current);
    const gapB = Math.max(0, b.required - b.current);
    if (gapB !== gapA) return gapB > gapA ? b : a;
    return b.required > a.required ? b : a;
  }, null) ?? { required: 0, current: 0 };
  if (pending.length > 0) {
    return result('require_approvals', [...pending.map((o) => o.reason), ...delays], binding.required, binding.current);
  }
  if (notBefore > now) {
    return result('delay', delays, binding.required, binding.current);
  }
  return result('allow', [`policy: allowed by ${p.rules.length} rule(s) of policy v${p.version}`], binding.required, binding.current);
}
