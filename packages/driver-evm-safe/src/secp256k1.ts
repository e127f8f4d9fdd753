/**
 * @module secp256k1
 * The two synchronous secp256k1 operations the driver needs and viem only offers asynchronously:
 * public-key recovery (ecrecover, which is what the Safe contract itself does) and the address of
 * a compressed or uncompressed public key. `ChainDriver.assemble` is synchronous, so these come
 * from @noble/curves directly (the audited library viem itself uses), never from hand-written
 * curve arithmetic.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { getAddress, keccak256, type Address } from 'viem';

type Point = ReturnType<typeof secp256k1.Point.fromBytes>;

function addressOfPoint(point: Point): Address {
  // Uncompressed encoding is 0x04 || x || y; the address hashes x || y.
  const uncompressed = point.toBytes(false);
  return getAddress(`0x${keccak256(uncompressed.subarray(1)).slice(-40)}`);
}

/**
 * The EVM address of a 33-byte compressed (or 65-byte uncompressed) secp256k1 public key, or
 * null when the bytes are not a point on the curve.
 */
export function publicKeyToEvmAddress(publicKey: Uint8Array): Address | null {
  if (publicKey.length !== 33 && publicKey.length !== 65) return null;
  try {
    return addressOfPoint(secp256k1.Point.fromBytes(publicKey));
  } catch {
    return null;
  }
}

/** The 33-byte compressed form of a 65-byte uncompressed public key (0x04 || x || y). */
export function compressPublicKey(uncompressed: Uint8Array): Uint8Array {
  if (uncompressed.length !== 65 || uncompressed[0] !== 4) throw new Error('expected a 65-byte uncompressed public key');
  return secp256k1.Point.fromBytes(uncompressed).toBytes(true);
}

const HALF_N = secp256k1.Point.CURVE().n >> 1n;

/**
 * ecrecover: the address that signed `digest` (32 bytes) with `r`, `s` and recovery bit
 * `recovery` (0 or 1), or null for an invalid signature. Rejects high-s signatures (EIP-2) so
 * each signer has exactly one valid encoding.
 */
export function recoverEvmAddress(digest: Uint8Array, r: bigint, s: bigint, recovery: number): Address | null {
  if (digest.length !== 32) return null;
  if (recovery !== 0 && recovery !== 1) return null;
  if (s > HALF_N) return null;
  try {
    const signature = new secp256k1.Signature(r, s, recovery);
    return addressOfPoint(signature.recoverPublicKey(digest));
  } catch {
    return null;
  }
}
