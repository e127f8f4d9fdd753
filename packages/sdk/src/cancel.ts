/**
 * @module cancel
 * Signed cancellations. The operator cancels with their session; any other initiator proves it is
 * the one that created the intent by signing a cancel statement with its own key:
 * ed25519 over `"vault-cancel-v1\n" + JCS({at, by, intentId})`. The domain keeps a cancel
 * signature from passing for an approval or a statement (and the reverse); `by` and `intentId`
 * bind it to one principal and one intent; `at` bounds how long it can be replayed.
 */
import { canonicalize } from './canonical.js';
import { signEd25519, verifyEd25519 } from './ed25519.js';
import { fromHex, toHex, utf8Bytes } from './encoding.js';
import { ValidationError } from './errors.js';
import type { CancelRequest } from './schemas/control-plane.js';

export const CANCEL_DOMAIN = 'vault-cancel-v1\n';

/** How far a cancel statement's `at` may lie from the judging service's clock, either way. */
export const CANCEL_CLOCK_SKEW_SECONDS = 300;

/** What a cancel statement says: `by` (an initiator, e.g. `device:<id>`) cancels `intentId` at `at`. */
export interface CancelStatement {
  intentId: string;
  by: string;
  at: number;
}

/** A cancel statement with its signature: the body of POST /intent/{id}/cancel for a non-operator. */
export type SignedCancel = CancelStatement & { signature: { curve: 'ed25519'; sig: string } };

/** The exact bytes a cancel signature covers. */
export function cancelMessage(statement: CancelStatement): Uint8Array {
  return utf8Bytes(CANCEL_DOMAIN + canonicalize({ at: statement.at, by: statement.by, intentId: statement.intentId }));
}

/**
 * Signs a cancel statement with the 32-byte ed25519 secret key of the device that created the intent.
 *
 * @example
 * const body = signCancel({ intentId, by: 'device:alice-phone', at: Math.floor(Date.now() / 1000) }, deviceSecret)
 * await cp.cancel(intentId, body)
 */
export function signCancel(statement: CancelStatement, secretKey: Uint8Array | string): SignedCancel {
  const key = typeof secretKey === 'string' ? fromHex(secretKey, 'secretKey', 32) : secretKey;
  if (key.length !== 32) throw new ValidationError('secretKey', [{ path: '', message: `expected 32 bytes, got ${key.length}` }]);
  return { intentId: statement.intentId, by: statement.by, at: statement.at, signature: { curve: 'ed25519', sig: toHex(signEd25519(cancelMessage(statement), key)) } };
}

export type CancelProblem = 'wrong_intent' | 'stale' | 'future' | 'bad_signature';

/**
 * Checks a signed cancel against the key of the principal it names (`publicKey`), the intent it is
 * sent for and the judging service's clock. Never throws: a problem is a value.
 *
 * @example
 * const check = verifyCancel(body, device.public_key, { intentId, now })
 * if (!check.ok) refuse(check.reason, check.message)
 */
export function verifyCancel(
  signed: Required<Pick<CancelRequest, 'by' | 'at' | 'signature'>> & { intentId?: string | undefined },
  publicKey: Uint8Array | string,
  ctx: { intentId: string; now: number; skewSeconds?: number },
): { ok: true } | { ok: false; reason: CancelProblem; message: string } {
  if (signed.intentId !== undefined && signed.intentId !== ctx.intentId) return { ok: false, reason: 'wrong_intent', message: `the cancel statement is for ${signed.intentId}, not ${ctx.intentId}` };
  const skew = ctx.skewSeconds ?? CANCEL_CLOCK_SKEW_SECONDS;
  if (signed.at < ctx.now - skew) return { ok: false, reason: 'stale', message: `the cancel statement is dated ${signed.at}, more than ${skew}s before now (${ctx.now})` };
  if (signed.at > ctx.now + skew) return { ok: false, reason: 'future', message: `the cancel statement is dated ${signed.at}, more than ${skew}s after now (${ctx.now})` };
  let ok = false;
  try {
    const key = typeof publicKey === 'string' ? fromHex(publicKey, 'publicKey', 32) : publicKey;
    ok = verifyEd25519(fromHex(signed.signature.sig, 'signature.sig', 64), cancelMessage({ intentId: ctx.intentId, by: signed.by, at: signed.at }), key);
  } catch {
    ok = false;
  }
  return ok ? { ok: true } : { ok: false, reason: 'bad_signature', message: `the signature does not verify with the key of ${signed.by}` };
}
