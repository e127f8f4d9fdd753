import { approvers } from '../amounts.js';
import type { RuleModule } from '../types.js';

/**
 * approval_threshold: above `above`, require `required_weight` from distinct valid approve
 * verdicts of the listed approvers. An amount equal to `above` needs no approvals.
 */
export const approvalThreshold: RuleModule<'approval_threshold'> = {
  kind: 'approval_threshold',
  evaluate(rule, input, label) {
    const above = BigInt(rule.above);
    if (input.amount <= above) return { effect: 'pass' };
    const approved = approvers(input.approvals);
    const weight = rule.approvers.reduce((sum, a) => (approved.has(a.id) ? sum + a.weight : sum), 0);
    if (weight >= rule.required_weight) return { effect: 'pass', approvals: { required: rule.required_weight, current: weight } };
    return {
      effect: 'require_approvals',
      reason: `${label}: amount ${input.amount} is above ${above}; approval weight ${weight} of ${rule.required_weight} required`,
      required_weight: rule.required_weight,
      current_weight: weight,
    };
  },
};
