/**
 * @module encoding
 * Byte, hex and hashing helpers shared by every module. Hashes are SHA-256, lowercase hex.
 */
import { createHash } from 'node:crypto';
import { ValidationError } from './errors.js';

const HEX_RE = /^(?:[0-9a-f]{2})*$/;
const utf8 = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8Bytes(text: string): Uint8Array {
  return utf8.encode(text);
}

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Bytes of a lowercase hex string of the expected byte length. Throws a ValidationError naming
 * `field` on anything else (odd length, uppercase, non-hex, wrong length) — never a crash.
 */
export function fromHex(hex: unknown, field: string, expectedBytes?: number): Uint8Array {
  if (typeof hex !== 'string') {
    throw new ValidationError(field, [{ path: '', message: 'expected a hex string' }]);
  }
  if (!HEX_RE.test(hex)) {
    throw new ValidationError(field, [
      { path: '', message: 'expected lowercase hex with an even number of digits' },
    ]);
  }
  if (expectedBytes !== undefined && hex.length !== expectedBytes * 2) {
    throw new ValidationError(field, [
      { path: '', message: `expected ${expectedBytes} bytes (${expectedBytes * 2} hex digits), got ${hex.length / 2}` },
    ]);
  }
  // Validated above, so Buffer's decoder (which would stop at a bad digit) reads every byte.
  const out = new Uint8Array(hex.length / 2);
  Buffer.from(out.buffer, out.byteOffset, out.byteLength).write(hex, 0, 'hex');
  return out;
}

/** SHA-256 of bytes or of a string's UTF-8 bytes, as lowercase hex. */
export function sha256Hex(input: Uint8Array | string): string {
  return createHash('sha256').update(input).digest('hex');
}

/**
 * Constant-time equality of two byte strings or two strings. The length difference is not
 * hidden (lengths are public for every value this toolkit compares: tokens, digests, hashes).
 */
export function timingSafeEqual(a: Uint8Array | string, b: Uint8Array | string): boolean {
  const x = typeof a === 'string' ? utf8Bytes(a) : a;
  const y = typeof b === 'string' ? utf8Bytes(b) : b;
  if (x.length !== y.length) return false;
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= (x[i] as number) ^ (y[i] as number);
  return diff === 0;
}
