/**
 * @module ed25519
 * The ONE ed25519 verification both services call, so they can never disagree on a signature:
 * strict RFC 8032 (canonical encodings, no ZIP-215 leniency).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { toHex } from './encoding.js';

/** Strict RFC 8032 verification. Returns false for any malformed input; never throws. */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** Signs `message` with a 32-byte ed25519 secret key (deterministic, RFC 8032). */
export function signEd25519(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return ed25519.sign(message, secretKey);
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
