import { describe, expect, it } from 'vitest';
import { DEFAULT_APPROVAL_MAX_AGE_SECONDS, DEFAULT_INTENT_TTL_SECONDS, earliestKnownAt, intentExpiresAt, intentLifetime, IntentLifetimeSchema, isExpired } from './lifetime.js';
import { approvalTimeProblem } from './approvals.js';

describe('intent lifetime', () => {
  it('defaults: an intent lives 7 days, an approval counts for 3', () => {
    expect(intentLifetime(undefined)).toEqual({ ttl_seconds: 7 * 86400, approval_max_age_seconds: 3 * 86400 });
    expect(intentLifetime({ ttl_seconds: 3600 })).toEqual({ ttl_seconds: 3600, approval_max_age_seconds: DEFAULT_APPROVAL_MAX_AGE_SECONDS });
    expect(DEFAULT_INTENT_TTL_SECONDS).toBe(604800);
  });

  it('is expired from expires_at on, inclusive, and not a second before', () => {
    const exp = intentExpiresAt(1_767_225_600, 3600);
    expect(exp).toBe(1_767_229_200);
    expect(isExpired(exp, exp - 1)).toBe(false);
    expect(isExpired(exp, exp)).toBe(true);
    expect(isExpired(exp, exp + 1)).toBe(true);
  });

  it('earliestKnownAt: a later claim never moves the start later than a fact the service holds', () => {
    expect(earliestKnownAt({ claimed: 2000 })).toBe(2000);
    expect(earliestKnownAt({ claimed: 2000, firstSeen: 1500 })).toBe(1500);
    expect(earliestKnownAt({ claimed: 2000, firstSeen: 1500, approvals: [{ at: 1900 }, { at: 1200 }] })).toBe(1200);
    // An earlier claim only makes the intent older (expires sooner): taken as it is.
    expect(earliestKnownAt({ claimed: 1000, firstSeen: 1500, approvals: [{ at: 1900 }] })).toBe(1000);
  });

  it('settings are bounded: a minute to a year, integers, nothing else', () => {
    expect(IntentLifetimeSchema.safeParse({ ttl_seconds: 59 }).success).toBe(false);
    expect(IntentLifetimeSchema.safeParse({ ttl_seconds: 366 * 86400 }).success).toBe(false);
    expect(IntentLifetimeSchema.safeParse({ ttl_seconds: 1.5 }).success).toBe(false);
    expect(IntentLifetimeSchema.safeParse({ ttl: 600 }).success).toBe(false);
    expect(IntentLifetimeSchema.safeParse({ ttl_seconds: 60, approval_max_age_seconds: 60 }).success).toBe(true);
  });

  it('an approval stops counting at its max age exactly, not a second earlier', () => {
    const window = { createdAt: 1000, now: 1000 + 600, maxAgeSeconds: 600 };
    expect(approvalTimeProblem(1001, window)).toBeNull();
    expect(approvalTimeProblem(1000, window)?.reason).toBe('expired');
    expect(approvalTimeProblem(1000, { createdAt: 1000, now: 1600 })).toBeNull();
  });
});
