/**
 * @module lifetime
 * How long an intent and its approvals stand. An intent not executed within its wallet's time to
 * live is expired, and an approval older than the wallet's approval age stops counting: a
 * signature given days ago is not consent to a transfer made today. The control plane and the
 * signer decide both with these functions, each from the facts it trusts: the control plane from
 * its own record, the signer from the earliest time it can vouch for (`earliestKnownAt`), so a
 * control plane that claims a later creation cannot rewind an expiry.
 */
import { z } from 'zod';

/** An intent's time to live when its wallet sets none: 7 days. */
export const DEFAULT_INTENT_TTL_SECONDS = 7 * 86_400;

/**
 * How old an approval may be and still count when its wallet sets nothing: 3 days. Shorter than
 * the time to live on purpose: an intent held back for most of a week (a timelock, a missing
 * approver) is approved again close to when it leaves.
 */
export const DEFAULT_APPROVAL_MAX_AGE_SECONDS = 3 * 86_400;

/** Bounds of both settings: at least a minute, at most a year. */
export const LIFETIME_MIN_SECONDS = 60;
export const LIFETIME_MAX_SECONDS = 365 * 86_400;

const Seconds = z.int().min(LIFETIME_MIN_SECONDS, `at least ${LIFETIME_MIN_SECONDS} seconds`).max(LIFETIME_MAX_SECONDS, `at most ${LIFETIME_MAX_SECONDS} seconds (a year)`);

/** A wallet's lifetime settings (control-plane state, signer trust file); absent members take the defaults. */
export const IntentLifetimeSchema = z.strictObject({
  ttl_seconds: Seconds.optional().describe(`Time to live of an intent: created_at + this is its expires_at. Default ${DEFAULT_INTENT_TTL_SECONDS} (7 days).`),
  approval_max_age_seconds: Seconds.optional().describe(`An approval dated this long ago or more stops counting. Default ${DEFAULT_APPROVAL_MAX_AGE_SECONDS} (3 days).`),
});
export type IntentLifetimeInput = z.infer<typeof IntentLifetimeSchema>;

/** A wallet's lifetime settings with the defaults filled in. */
export interface IntentLifetime {
  ttl_seconds: number;
  approval_max_age_seconds: number;
}

/**
 * The settings with the defaults filled in.
 *
 * @example
 * intentLifetime(undefined) // { ttl_seconds: 604800, approval_max_age_seconds: 259200 }
 */
export function intentLifetime(input: IntentLifetimeInput | undefined): IntentLifetime {
  return {
    ttl_seconds: input?.ttl_seconds ?? DEFAULT_INTENT_TTL_SECONDS,
    approval_max_age_seconds: input?.approval_max_age_seconds ?? DEFAULT_APPROVAL_MAX_AGE_SECONDS,
  };
}

/**
 * When an intent created at `createdAt` expires.
 *
 * @example
 * intentExpiresAt(1767225600, 604800) // 1767830400
 */
export function intentExpiresAt(createdAt: number, ttlSeconds: number): number {
  return createdAt + ttlSeconds;
}

/**
 * Is an intent that expires at `expiresAt` expired at `now`? From `expiresAt` on, inclusive. The
 * one answer both services give.
 *
 * @example
 * isExpired(1767830400, 1767830399) // false
 * isExpired(1767830400, 1767830400) // true
 */
export function isExpired(expiresAt: number, now: number): boolean {
  return now >= expiresAt;
}

/**
 * The earliest time a service can vouch the intent already existed, from facts a control plane
 * cannot move later: its claimed created_at (a claim can only make the intent older), when this
 * service first saw the intent (its own clock), and the dates of the approvals it verified (each
 * signed by its approver, who saw the intent by then). The signer counts the time to live from
 * here, so rewinding created_at moves no expiry later than these facts allow.
 *
 * @example
 * earliestKnownAt({ claimed: 1767800000, firstSeen: 1767225600, approvals: [{ at: 1767300000 }] }) // 1767225600
 */
export function earliestKnownAt(facts: { claimed: number; firstSeen?: number | undefined; approvals?: readonly { at: number }[] }): number {
  let t = facts.claimed;
  if (facts.firstSeen !== undefined && facts.firstSeen < t) t = facts.firstSeen;
  for (const a of facts.approvals ?? []) if (a.at < t) t = a.at;
  return t;
}
