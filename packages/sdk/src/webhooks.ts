/**
 * @module webhooks
 * Signed webhooks per the Standard Webhooks convention (standardwebhooks.com): the sender puts
 * `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">` on each delivery; the receiver recomputes the HMAC over the raw body with
 * the endpoint's `whsec_` secret. The control plane signs with `signWebhook` and receivers verify
 * with `verifyWebhook`: one implementation on both sides. Any Standard Webhooks library verifies
 * what this signs, and the other way round (tested against the `standardwebhooks` package).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { timingSafeEqual, utf8Bytes } from './encoding.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Default accepted distance between `webhook-timestamp` and the receiver's clock (5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;
/** Bytes of key in a secret `generateWebhookSecret` makes (the spec asks for 24 to 64). */
export const WEBHOOK_SECRET_BYTES = 32;

// Bounds on what a receiver parses from headers a stranger controls.
const MAX_ID_LENGTH = 256;
const MAX_SIGNATURE_HEADER = 4096;
const MAX_SIGNATURES = 16;
const MIN_KEY_BYTES = 16;
const MAX_KEY_BYTES = 128;
const BASE64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

/** Why a delivery did not verify. A wire contract for receivers that log or branch on it. */
export const WEBHOOK_INVALID_REASONS = ['missing_header', 'bad_header', 'timestamp_out_of_tolerance', 'no_matching_signature'] as const;
export type WebhookInvalidReason = (typeof WEBHOOK_INVALID_REASONS)[number];

export type WebhookVerification =
  | { valid: true; id: string; timestamp: number }
  | { valid: false; reason: WebhookInvalidReason; message: string };

/** Header bags as fetch (`Headers`), Node (`IncomingHttpHeaders`) and plain objects give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface SignWebhookParameters {
  /** `whsec_` + base64 key; several sign with each (rotation: the receiver accepts either). */
  secret: string | readonly string[];
  /** The `webhook-id`: the event id, the same on every retry. */
  id: string;
  /** The `webhook-timestamp`, integer Unix seconds. */
  timestamp: number;
  /** The exact bytes sent as the body. */
  body: string | Uint8Array;
}

export interface VerifyWebhookParameters {
  /** The endpoint's secret (`whsec_...`), or several while rotating. */
  secret: string | readonly string[];
  headers: WebhookHeaders;
  /** The raw body as received: re-serialised JSON does not verify. */
  body: string | Uint8Array;
  /** Integer Unix seconds (default: the system clock). */
  now?: number;
  /** Seconds either side of `now` a timestamp may be (default 300). */
  tolerance?: number;
}

/**
 * A new endpoint secret: `whsec_` + base64 of 32 random bytes.
 *
 * @example
 * const secret = generateWebhookSecret(); // 'whsec_q3J0...'
 */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret; throws a RangeError for a secret that is not one (a configuration fault). */
function secretKey(secret: string): Buffer {
  if (typeof secret !== 'string') throw new RangeError('webhook secret must be a string');
  const b64 = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  if (b64.length > 4 * Math.ceil(MAX_KEY_BYTES / 3) || !BASE64_RE.test(b64) || b64.length % 4 !== 0) {
    throw new RangeError('webhook secret must be whsec_ followed by base64');
  }
  const key = Buffer.from(b64, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) throw new RangeError(`webhook secret key must be ${MIN_KEY_BYTES}..${MAX_KEY_BYTES} bytes`);
  return key;
}

function secretList(secret: string | readonly string[]): string[] {
  const list = typeof secret === 'string' ? [secret] : [...secret];
  if (list.length === 0 || list.length > MAX_SIGNATURES) throw new RangeError(`give 1..${MAX_SIGNATURES} webhook secrets`);
  return list;
}

function checkId(id: unknown): id is string {
  // The id is signed as `id.timestamp.body`: printable ASCII, bounded.
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH && /^[\x21-\x7e]+$/.test(id);
}

function v1(key: Buffer, id: string, timestamp: string, body: string | Uint8Array): string {
  const mac = createHmac('sha256', key);
  mac.update(utf8Bytes(`${id}.${timestamp}.`));
  mac.update(typeof body === 'string' ? utf8Bytes(body) : body);
  return mac.digest('base64');
}

/**
 * The `webhook-signature` header value: `v1,<base64>` per secret, space-separated.
 *
 * @example
 * const sig = signWebhook({ secret, id: 'evt_0000000000000001', timestamp: 1767225600, body });
 * // 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='
 */
export function signWebhook(p: SignWebhookParameters): string {
  if (!checkId(p.id)) throw new RangeError('webhook id must be 1..256 printable ASCII characters');
  if (!Number.isSafeInteger(p.timestamp) || p.timestamp < 0) throw new RangeError('webhook timestamp must be integer Unix seconds');
  return secretList(p.secret)
    .map((s) => `v1,${v1(secretKey(s), p.id, String(p.timestamp), p.body)}`)
    .join(' ');
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const bag = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = bag[name];
  if (value === undefined) {
    for (const k of Object.keys(bag)) {
      if (k.toLowerCase() === name) {
        value = bag[k];
        break;
      }
    }
  }
  // A repeated header is ambiguous: refused rather than picking one.
  if (Array.isArray(value)) return value.length === 1 ? (value[0] as string) : undefined;
  return value as string | undefined;
}

function invalid(reason: WebhookInvalidReason, message: string): WebhookVerification {
  return { valid: false, reason, message };
}

/**
 * Verifies a delivery in one call: the three headers are present and bounded, the timestamp is
 * within `tolerance` of `now`, and one of the `v1` signatures is the HMAC of `id.timestamp.body`
 * under one of the secrets (compared in constant time). An invalid delivery is a value with its
 * reason; a secret that is not one throws (a configuration fault, not a bad delivery).
 *
 * @example
 * const r = verifyWebhook({ secret: process.env.VAULT_WEBHOOK_SECRET!, headers: req.headers, body: rawBody });
 * if (!r.valid) return res.status(400).end(r.reason);
 * // r.id is stable across retries: use it to drop duplicates.
 */
export function verifyWebhook(p: VerifyWebhookParameters): WebhookVerification {
  const keys = secretList(p.secret).map(secretKey);
  const tolerance = p.tolerance ?? WEBHOOK_TOLERANCE_SECONDS;
  if (!Number.isSafeInteger(tolerance) || tolerance < 0) throw new RangeError('tolerance must be integer seconds >= 0');
  const now = p.now ?? Math.floor(Date.now() / 1000);
  const id = header(p.headers, 'webhook-id');
  const ts = header(p.headers, 'webhook-timestamp');
  const sig = header(p.headers, 'webhook-signature');
  if (id === undefined || ts === undefined || sig === undefined) return invalid('missing_header', 'webhook-id, webhook-timestamp and webhook-signature are required');
  if (!checkId(id)) return invalid('bad_header', 'webhook-id must be 1..256 printable ASCII characters');
  if (!/^[0-9]{1,12}$/.test(ts)) return invalid('bad_header', 'webhook-timestamp must be integer Unix seconds');
  const timestamp = Number(ts);
  if (Math.abs(now - timestamp) > tolerance) return invalid('timestamp_out_of_tolerance', `webhook-timestamp is more than ${tolerance} s from now`);
  if (sig.length > MAX_SIGNATURE_HEADER) return invalid('bad_header', 'webhook-signature is too long');
  const candidates = sig
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .slice(0, MAX_SIGNATURES)
    .map((s) => s.slice(3));
  let match = false;
  for (const key of keys) {
    const expected = v1(key, id, ts, p.body);
    // Every candidate is compared (no early exit): the time taken does not say which matched.
    for (const c of candidates) match = timingSafeEqual(expected, c) || match;
  }
  return match ? { valid: true, id, timestamp } : invalid('no_matching_signature', 'no v1 signature matches the secret');
}
