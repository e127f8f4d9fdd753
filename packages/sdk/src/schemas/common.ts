/**
 * @module schemas/common
 * Primitive wire types shared by the resource schemas.
 */
import { z } from 'zod';

/** Integer minor units as a decimal string: no sign, no leading zeros, at most 78 digits (2^256). */
export const AmountSchema = z
  .string()
  .max(78, 'amount has more than 78 digits')
  .regex(/^(0|[1-9][0-9]*)$/, 'amount must be an integer decimal string in minor units');
export type Amount = z.infer<typeof AmountSchema>;

/** Integer Unix seconds, UTC. */
export const UnixSecondsSchema = z.int().min(0, 'time must be Unix seconds >= 0');

/** Lowercase hex of exactly `bytes` bytes. */
export function hexBytes(bytes: number) {
  return z
    .string()
    .regex(new RegExp(`^[0-9a-f]{${bytes * 2}}$`), `expected ${bytes} bytes as ${bytes * 2} lowercase hex digits`);
}

/** SHA-256 digest as 64 lowercase hex digits. */
export const DigestSchema = hexBytes(32);

/** Intent ids: `int_` followed by 64 lowercase hex digits. */
export const INTENT_ID_RE = /^int_[0-9a-f]{64}$/;
export const IntentIdSchema = z.string().regex(INTENT_ID_RE, 'intent id must be int_ followed by 64 lowercase hex digits');

/** A bounded identifier (wallet ids, approver ids, labels). */
export function boundedString(max: number, min = 1) {
  return z.string().min(min, `must be at least ${min} character(s)`).max(max, `must be at most ${max} characters`);
}

/** An unpaired UTF-16 surrogate: not I-JSON, so such a string can never be hashed or receipted. */
const LONE_SURROGATE = /\p{Cs}/u;
/** C0 and C1 controls, DEL, and the bidirectional controls (an override can make one label read as another). */
const CONTROL = /[\p{Cc}\p{Bidi_Control}]/u;

/**
 * Free text a person reads (device labels): bounded, well-formed UTF-16 (no lone surrogate) and
 * no control characters. Refused here, at the edge, so it never reaches state or a receipt.
 */
export function labelString(max: number, min = 0) {
  return z
    .string()
    .min(min, `must be at least ${min} character(s)`)
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !LONE_SURROGATE.test(s), 'must not contain a lone surrogate (an unpaired UTF-16 half)')
    .refine((s) => !CONTROL.test(s), 'must not contain control characters');
}

export const CurveSchema = z.enum(['ed25519', 'secp256k1']);
export type Curve = z.infer<typeof CurveSchema>;
