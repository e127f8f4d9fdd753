/**
 * @module control-plane/secrets
 * The operator passphrase (only its scrypt hash is stored) and the receipt key (an ed25519 seed
 * in a 0600 file). Receipts are the SDK's own createReceipt, signed through a prepared key.
 */
import { createReceipt, ed25519PublicKey, ed25519Signer, signReceipt, toHex, type ReceiptInput, type ReceiptRecord, timingSafeEqual } from '@vault/sdk';
import { randomBytes, scrypt as scryptCb } from 'node:crypto';
import { z } from 'zod';

/** scrypt parameters stored with the hash (so they can be raised later without breaking old files). */
export const PassphraseFileSchema = z.strictObject({
  kdf: z.literal('scrypt'),
  N: z.int().min(2).max(2 ** 22),
  r: z.int().min(1).max(32),
  p: z.int().min(1).max(16),
  salt: z.string().regex(/^[0-9a-f]{32,128}$/),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});
export type PassphraseFile = z.infer<typeof PassphraseFileSchema>;

export const DEFAULT_SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;

function scrypt(passphrase: string, salt: Buffer, p: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(passphrase.normalize('NFC'), salt, 32, { N: p.N, r: p.r, p: p.p, maxmem: 256 * p.N * p.r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassphrase(passphrase: string, params: { N: number; r: number; p: number } = DEFAULT_SCRYPT): Promise<PassphraseFile> {
  const salt = randomBytes(16);
  const key = await scrypt(passphrase, salt, params);
  return { kdf: 'scrypt', N: params.N, r: params.r, p: params.p, salt: salt.toString('hex'), hash: key.toString('hex') };
}

/** Constant-time check of a passphrase against its stored hash. */
export async function verifyPassphrase(passphrase: string, stored: PassphraseFile): Promise<boolean> {
  if (typeof passphrase !== 'string' || passphrase.length === 0 || passphrase.length > 1024) return false;
  const key = await scrypt(passphrase, Buffer.from(stored.salt, 'hex'), stored);
  return timingSafeEqual(key, Buffer.from(stored.hash, 'hex'));
}

/** The control plane's receipt key, prepared once; records are the SDK's createReceipt and signReceipt. */
export class ReceiptSigner {
  readonly #sign: (hash: Uint8Array) => Uint8Array;
  readonly publicKeyHex: string;

  constructor(seed: Uint8Array) {
    if (seed.length !== 32) throw new Error('receipt key must be 32 bytes');
    this.#sign = ed25519Signer(seed);
    this.publicKeyHex = toHex(ed25519PublicKey(seed));
  }

  /** The record following `previous`, unsigned: the store signs the last record of each commit (seal). */
  next(previous: { seq: number; hash: string } | null, input: ReceiptInput): ReceiptRecord {
    return createReceipt(previous, input, null);
  }

  /** The receipt key's signature over a shared log entry's 32-byte digest (store.ts logEntryDigest). */
  signLogEntry(digest: Uint8Array): Uint8Array {
    if (digest.length !== 32) throw new Error('a log entry digest is 32 bytes');
    return this.#sign(digest);
  }

  /** The record with its checkpoint signature. */
  seal(record: ReceiptRecord): ReceiptRecord {
    return signReceipt(record, this.#sign);
  }
}

export function newReceiptSeed(): string {
  return randomBytes(32).toString('hex');
}

