import { assetMatcher, OUTFLOW_OPS, spendInWindow } from '../amounts.js';
import type { RuleModule } from '../types.js';

export const DEFAULT_VELOCITY_WINDOW = 86400;

/**
 * daily_velocity_cap: deny when this amount plus the wallet's outflows of the same asset in the
 * rolling window (not denied or failed) exceed `limit`. Reaching the limit exactly is allowed.
 */
export const dailyVelocityCap: RuleModule<'daily_velocity_cap'> = {
  kind: 'daily_velocity_cap',
  evaluate(rule, input, label) {
    if (!OUTFLOW_OPS.has(input.intent.operation.op)) return { effect: 'pass' };
    const match = assetMatcher(rule.asset, input.intent);
    if (rule.asset !== undefined && !match(input.intent)) return { effect: 'pass' };
    const window = rule.window_seconds ?? DEFAULT_VELOCITY_WINDOW;
    const spent = spendInWindow(input.history, {
      now: input.now,
      windowSeconds: window,
      excludeId: input.intentId,
      match,
    });
    const limit = BigInt(rule.limit);
    const total = spent + input.amount;
    return total > limit
      ? {
          effect: 'deny',
          reason: `${label}: ${spent} already spent in the last ${window}s + ${input.amount} = ${total} exceeds limit ${limit}`,
        }
      : { effect: 'pass' };
  },
};
