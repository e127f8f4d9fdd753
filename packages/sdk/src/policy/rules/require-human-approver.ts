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
 * (default 1) distinct approve verdicts made with strong_auth (proven by a passkey, verifyApprovals). Above
 * `device_bound_above`, only approvals proven by a device-bound passkey (BE false at
 * registration: the key never leaves the authenticator) count: a synced passkey is as strong as
 * the cloud account it syncs through.
 */
export const requireHumanApproverForAgentInitiated: RuleModule<'require_human_approver_for_agent_initiated'> = {
  kind: 'require_human_approver_for_agent_initiated',
  evaluate(rule, input, label) {
    if (!isAgentInitiated(input.intent.initiator)) return { effect: 'pass' };
    const needed = rule.min_strong ?? 1;
    const deviceBound = rule.device_bound_above !== undefined && input.amount > BigInt(rule.device_bound_above);
    const strong = approvers(input.approvals, deviceBound ? 'device_bound' : true).size;
    if (strong >= needed) return { effect: 'pass', approvals: { required: needed, current: strong } };
    const kind = deviceBound ? `device-bound passkey approval(s) (amount ${input.amount} is above ${rule.device_bound_above})` : 'strong-auth human approval(s)';
    return {
      effect: 'require_approvals',
      reason: `${label}: initiated by ${input.intent.initiator}; ${strong} of ${needed} ${kind}`,
      required_weight: needed,
      current_weight: strong,
    };
  },
};
