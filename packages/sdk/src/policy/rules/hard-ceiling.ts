import type { RuleModule } from '../types.js';

/** hard_ceiling: deny any amount above `max`. */
export const hardCeiling: RuleModule<'hard_ceiling'> = {
  kind: 'hard_ceiling',
  evaluate(rule, input, label) {
    const max = BigInt(rule.max);
    return input.amount > max
      ? { effect: 'deny', reason: `${label}: amount ${input.amount} exceeds the hard ceiling ${max}` }
      : { effect: 'pass' };
  },
};
