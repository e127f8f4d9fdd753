import { parseInitiator, sameIdentity } from '../../identity.js';
import { assetMatcher, OUTFLOW_OPS, spendInWindow } from '../amounts.js';
import type { RuleModule } from '../types.js';

/**
 * agent_budget_ceiling: an agent's outflows of the asset (this one included) may not exceed
 * `budget` within `window_seconds` (null or absent: lifetime). `agent`, when set, names the one
 * initiator the rule applies to (e.g. "agent:trader"); otherwise it applies to each agent alone,
 * an application (`app:<id>`, a key-holding program like an agent) included.
 */
export const agentBudgetCeiling: RuleModule<'agent_budget_ceiling'> = {
  kind: 'agent_budget_ceiling',
  evaluate(rule, input, label) {
    const initiator = input.intent.initiator;
    const agent = parseInitiator(initiator);
    if (agent?.kind !== 'agent' && agent?.kind !== 'app') return { effect: 'pass' };
    if (rule.agent !== undefined) {
      const named = parseInitiator(rule.agent);
      if (named === null || !sameIdentity(named, agent)) return { effect: 'pass' };
    }
    if (!OUTFLOW_OPS.has(input.intent.operation.op)) return { effect: 'pass' };
    const assetOk = assetMatcher(rule.asset, input.intent);
    if (rule.asset !== undefined && !assetOk(input.intent)) return { effect: 'pass' };
    const window = rule.window_seconds ?? null;
    const spent = spendInWindow(input.history, {
      now: input.now,
      windowSeconds: window,
      excludeId: input.intentId,
      match: (e) => e.initiator === initiator && assetOk(e),
    });
    const budget = BigInt(rule.budget);
    const total = spent + input.amount;
    if (total <= budget) return { effect: 'pass' };
    const span = window === null ? 'lifetime' : `last ${window}s`;
    return {
      effect: 'deny',
      reason: `${label}: ${initiator} spent ${spent} (${span}) + ${input.amount} = ${total} exceeds budget ${budget}`,
    };
  },
};
