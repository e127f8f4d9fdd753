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

/**
 * A JSON integer (a safe integer), refusing `-0`: JSON lets a client write `-0`, which parses to
 * a value that compares equal to 0 yet is another number. Every integer field of the wire
 * schemas is one of these, so the refusal names the field.
 */
export function integer() {
  return z.int().refine((n) => !Object.is(n, -0), 'must be an integer, not -0');
}

/** Integer Unix seconds, UTC. */
export const UnixSecondsSchema = integer().min(0, 'time must be Unix seconds >= 0');

/** Lowercase hex of exactly `bytes` bytes. */
export function hexBytes(bytes: number) {
  return z
    .string()
    .regex(new RegExp(`^[0-9a-f]{${bytes * 2}}$`), `expected ${bytes} bytes as ${bytes * 2} lowercase hex digits`);
}

/** base64url without padding of 1..`maxBytes` bytes (WebAuthn's binary fields on the wire). */
export function base64url(maxBytes: number) {
  return z
    .string()
    .max(Math.ceil((maxBytes * 4) / 3), `at most ${maxBytes} bytes`)
    .regex(/^[A-Za-z0-9_-]+$/, 'expected base64url without padding');
}

/** SHA-256 digest as 64 lowercase hex digits. */
export const DigestSchema = hexBytes(32);

/** Intent ids: `int_` followed by 64 lowercase hex digits. */
export const INTENT_ID_RE = /^int_[0-9a-f]{64}$/;
export const IntentIdSchema = z.string().regex(INTENT_ID_RE, 'intent id must be int_ followed by 64 lowercase hex digits');

/**
 * Code points an address never contains and a person cannot see or tell apart: controls (NUL..),
 * format characters (U+202E right-to-left override, zero-width space), lone surrogates, private
 * use, and separators (spaces).
 */
const INVISIBLE_RE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Z}]/u;

/**
 * A string naming an account or an asset (destination, asset issuer, asset symbol): bounded, and
 * free of characters that are invisible or control. Whether it is an address of the wallet's chain is the driver's call
 * (`normalizeAddresses`); this part needs no driver.
 */
export function addressText(max: number) {
  return boundedString(max).refine((s) => !INVISIBLE_RE.test(s), 'must not contain control, format, space or invisible characters');
}

/** A UTF-16 code unit of a surrogate pair standing alone: not a character, and not I-JSON. */
const LONE_SURROGATE_RE = /\p{Cs}/u;

/**
 * Free text of at most `max` characters that is well-formed Unicode. A lone surrogate parses
 * from JSON (`"\ud800"`) but cannot be canonicalised, hashed or stored as UTF-8: refused here,
 * naming the field, before anything reads it.
 */
export function boundedText(max: number, tooLong = `must be at most ${max} characters`) {
  return z
    .string()
    .max(max, tooLong)
    .refine((s) => !LONE_SURROGATE_RE.test(s), 'must be well-formed Unicode (contains a lone surrogate)');
}

/** A bounded identifier (wallet ids, approver ids, labels): well-formed, non-empty text. */
export function boundedString(max: number, min = 1) {
  return boundedText(max).min(min, `must be at least ${min} character(s)`);
}

/** C0 and C1 controls, DEL, and the bidirectional controls (an override can make one label read as another). */
const CONTROL = /[\p{Cc}\p{Bidi_Control}]/u;

/**
 * Free text a person reads (device labels): boundedText (no lone surrogate) with no control
 * characters either. Refused here, at the edge, so it never reaches state or a receipt.
 */
export function labelString(max: number, min = 0) {
  return boundedText(max)
    .min(min, `must be at least ${min} character(s)`)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters');
}

export const CurveSchema = z.enum(['ed25519', 'secp256k1']);
export type Curve = z.infer<typeof CurveSchema>;
