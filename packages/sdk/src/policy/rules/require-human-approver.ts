import { parseInitiator } from '../../identity.js';
import { approvers } from '../amounts.js';
import type { RuleModule } from '../types.js';

export const AGENT_PREFIX = 'agent:';

/**
 * An intent is agent-initiated when its initiator parses as `agent:<name>` or `app:<id>`
 * (identity.ts): both are software holding an API key, no person at a device. An application is
 * held to the agent rules rather than let past them by its spelling (fail closed).
 */
export function isAgentInitiated(initiator: string): boolean {
  const kind = parseInitiator(initiator)?.kind;
  return kind === 'agent' || kind === 'app';
}

/**
 * require_human_approver_for_agent_initiated: an `agent:*` or `app:*` intent needs `min_strong`
 * (default 1) distinct approve verdicts made with strong_auth.
 */
export const requireHumanApproverForAgentInitiated: RuleModule<'require_human_approver_for_agent_initiated'> = {
  kind: 'require_human_approver_for_agent_initiated',
  evaluate(rule, input, label) {
    if (!isAgentInitiated(input.intent.initiator)) return { effect: 'pass' };
    const needed = rule.min_strong ?? 1;
    const strong = approvers(input.approvals, true).size;
    if (strong >= needed) return { effect: 'pass', approvals: { required: needed, current: strong } };
    return {
      effect: 'require_approvals',
      reason: `${label}: initiated by ${input.intent.initiator}; ${strong} of ${needed} strong-auth human approval(s)`,
      required_weight: needed,
      current_weight: strong,
    };
  },
};
