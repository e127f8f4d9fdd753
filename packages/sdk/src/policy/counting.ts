/**
 * @module policy/counting
 * Which rules of a policy count an approver's approval: an `approval_threshold` that lists its id
 * (with its weight), and `require_human_approver_for_agent_initiated`, which counts any approver's
 * strong approval. The control plane tells a pairing device which wallets count it, and refuses an
 * approval that no rule counts instead of recording it with weight 0.
 */
import type { PolicySet } from '../schemas/policy.js';

export interface CountingRule {
  /** The rule's index in the policy and its kind. */
  index: number;
  rule: string;
  /** The weight an approve verdict adds (approval_threshold), or null for a rule that counts approvers. */
  weight: number | null;
}

/**
 * The rules of `policy` that count an approval by `approverId`; empty when none does.
 *
 * @example
 * rulesCountingApprover(policy, 'dev_0123456789abcdef') // [{ index: 2, rule: 'approval_threshold', weight: 1 }]
 */
export function rulesCountingApprover(policy: PolicySet, approverId: string): CountingRule[] {
  const out: CountingRule[] = [];
  policy.rules.forEach((r, index) => {
    if (r.rule === 'approval_threshold') {
      const listed = r.approvers.find((a) => a.id === approverId);
      if (listed) out.push({ index, rule: r.rule, weight: listed.weight });
    } else if (r.rule === 'require_human_approver_for_agent_initiated') {
      out.push({ index, rule: r.rule, weight: null });
    }
  });
  return out;
}
