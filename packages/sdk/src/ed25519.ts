/**
 * @module ed25519
 * The ONE ed25519 implementation both services call, so they can never disagree on a signature.
 *
 * Verification is strict RFC 8032 exactly as @noble/curves defines it with `zip215: false`:
 * canonical encodings of A and R, S < L, small-order public keys refused, the cofactored equation.
 * For speed, node:crypto (OpenSSL, cofactorless, ~0.1 ms) answers first; a "valid" from it is
 * only returned after the checks OpenSSL does not make (canonical A, small-order A, S < L), and a
 * "not valid" is handed to @noble/curves (~3 ms), which decides. Cofactorless validity implies
 * cofactored validity, so the answer is always @noble/curves' strict answer, only faster for the
 * signatures that are valid. Signing is RFC 8032 deterministic through node:crypto, which gives
 * the same bytes as @noble/curves.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { toHex } from './encoding.js';

/** The group order L = 2^252 + 27742317777372353535851937790883648493. */
const L = (1n << 252n) + 27742317777372353535851937790883648493n;
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number);
  return n;
}

/** A decoded public key is checked once: canonical, on the curve, not of small order. */
const keyCache = new Map<string, KeyObject | null>();
const KEY_CACHE_MAX = 4096;

function strictPublicKey(publicKey: Uint8Array): KeyObject | null {
  const id = toHex(publicKey);
  const cached = keyCache.get(id);
  if (cached !== undefined) return cached;
  let key: KeyObject | null = null;
  try {
    const point = ed25519.Point.fromBytes(publicKey, false); // canonical y < p, on the curve
    if (!point.isSmallOrder()) key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
  } catch {
    key = null;
  }
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.delete(keyCache.keys().next().value as string);
  keyCache.set(id, key);
  return key;
}

/**
 * The checks made before any curve arithmetic, the same for both verifications: lengths, S < L,
 * and a strict public key. The node:crypto key for it, or null when the signature cannot be valid.
 */
function strictKey(signature: Uint8Array, publicKey: Uint8Array): KeyObject | null {
  if (signature.length !== 64 || publicKey.length !== 32) return null;
  if (littleEndian(signature.subarray(32)) >= L) return null;
  return strictPublicKey(publicKey);
}

/** @noble/curves' strict answer, for the signatures OpenSSL's cofactorless check did not accept. */
function referenceVerify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** Strict RFC 8032 verification (see the module note). Returns false for any malformed input; never throws. */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  const key = strictKey(signature, publicKey);
  if (key === null) return false;
  try {
    if (nodeVerify(null, message, key, signature)) return true;
  } catch {
    // fall through to the reference check
  }
  return referenceVerify(signature, message, publicKey);
}

/**
 * The same strict verification as `verifyEd25519`, with OpenSSL's check run on libuv's thread
 * pool: a service verifying several signatures per request keeps its event loop free and uses
 * the machine's other cores. Same answers; resolves false for malformed input, never rejects.
 *
 * @example
 * const ok = await verifyEd25519Async(sig, message, publicKey)
 */
export async function verifyEd25519Async(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): Promise<boolean> {
  const key = strictKey(signature, publicKey);
  if (key === null) return false;
  const fast = await new Promise<boolean>((resolve) => {
    try {
      nodeVerify(null, message, key, signature, (err, ok) => resolve(!err && ok === true));
    } catch {
      resolve(false);
    }
  });
  return fast || referenceVerify(signature, message, publicKey);
}

function privateKeyObject(secretKey: Uint8Array): KeyObject {
  if (secretKey.length !== 32) throw new RangeError('an ed25519 secret key is 32 bytes');
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, secretKey]), format: 'der', type: 'pkcs8' });
}

/** Signs `message` with a 32-byte ed25519 secret key (deterministic, RFC 8032). */
export function signEd25519(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return new Uint8Array(nodeSign(null, message, privateKeyObject(secretKey)));
}

/**
 * A signing function bound to one secret key, prepared once (for a service signing every
 * receipt). The key is held inside a node:crypto KeyObject, not in a JS buffer.
 *
 * @example
 * const sign = ed25519Signer(receiptSecretKey)
 * const sig = sign(message)
 */
export function ed25519Signer(secretKey: Uint8Array): (message: Uint8Array) => Uint8Array {
  const key = privateKeyObject(secretKey);
  return (message) => new Uint8Array(nodeSign(null, message, key));
}

/** The 32-byte public key of a 32-byte ed25519 secret key. */
export function ed25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(secretKey);
}

/** A fresh ed25519 key pair from the platform CSPRNG, public key as lowercase hex. */
export function generateEd25519KeyPair(): { secretKey: Uint8Array; publicKey: Uint8Array; publicKeyHex: string } {
  const secretKey = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(secretKey);
  return { secretKey, publicKey, publicKeyHex: toHex(publicKey) };
}
