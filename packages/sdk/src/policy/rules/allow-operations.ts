import type { RuleModule } from '../types.js';

/** allow_operations: deny operations not in `ops`. With no such rule only transfer is allowed. */
export const allowOperations: RuleModule<'allow_operations'> = {
  kind: 'allow_operations',
  evaluate(rule, input, label) {
    const op = input.intent.operation.op;
    return rule.ops.includes(op)
      ? { effect: 'pass' }
      : { effect: 'deny', reason: `${label}: operation ${op} is not among the allowed [${rule.ops.join(', ')}]` };
  },
};
