import { assetMatcher, OUTFLOW_OPS, spendInWindowByState } from '../amounts.js';
import type { RuleModule } from '../types.js';

export const DEFAULT_VELOCITY_WINDOW = 86400;

/**
 * daily_velocity_cap: deny when this amount plus the wallet's outflows of the same asset in the
 * rolling window (not denied, failed, cancelled or expired) exceed `limit`. Reaching the limit exactly is allowed.
 * Intents not yet executed count (they are committed: counting them only once executed would let
 * several allowed intents together pass the cap); the refusal says how much of the count is
 * executed and how much is pending, so "already spent" never names money still in the wallet.
 */
export const dailyVelocityCap: RuleModule<'daily_velocity_cap'> = {
  kind: 'daily_velocity_cap',
  evaluate(rule, input, label) {
    if (!OUTFLOW_OPS.has(input.intent.operation.op)) return { effect: 'pass' };
    const match = assetMatcher(rule.asset, input.intent);
    if (rule.asset !== undefined && !match(input.intent)) return { effect: 'pass' };
    const window = rule.window_seconds ?? DEFAULT_VELOCITY_WINDOW;
    const { executed, pending } = spendInWindowByState(input.history, {
      now: input.now,
      windowSeconds: window,
      excludeId: input.intentId,
      match,
    });
    const limit = BigInt(rule.limit);
    const total = executed + pending + input.amount;
    return total > limit
      ? {
          effect: 'deny',
          reason:
            `${label}: in the last ${window}s ${executed} executed + ${pending} pending (intents not yet executed) ` +
            `+ ${input.amount} = ${total} exceeds limit ${limit}`,
        }
      : { effect: 'pass' };
  },
};
