import type { RuleModule } from '../types.js';

/** timelock_above: above `above`, delay until created_at + `seconds`. */
export const timelockAbove: RuleModule<'timelock_above'> = {
  kind: 'timelock_above',
  evaluate(rule, input, label) {
    const above = BigInt(rule.above);
    if (input.amount <= above) return { effect: 'pass' };
    const notBefore = input.created_at + rule.seconds;
    if (input.now >= notBefore) return { effect: 'pass' };
    return {
      effect: 'delay',
      reason: `${label}: amount ${input.amount} is above ${above}; timelocked ${rule.seconds}s until ${notBefore} (${new Date(notBefore * 1000).toISOString()})`,
      not_before: notBefore,
    };
  },
};
