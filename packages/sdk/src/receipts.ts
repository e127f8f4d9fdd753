/**
 * @module receipts
 * The hash-chained, signed receipt log both services keep (DESIGN.md §6):
 * `{seq, at, kind, intentId?, body_digest, prev, hash, sig}` with
 * `hash = sha256(JCS(record without hash and sig))`, `prev` the previous hash (64 zeros first),
 * and `sig` the service's ed25519 receipt key over the 32 hash bytes.
 */
import { canonicalize } from './canonical.js';
import { ed25519PublicKey, ed25519Signer, verifyEd25519 } from './ed25519.js';
import { fromHex, sha256Hex, timingSafeEqual, toHex } from './encoding.js';
import { ValidationError } from './errors.js';
import { ReceiptRecordSchema, type ReceiptRecord } from './schemas/control-plane.js';

export const GENESIS_PREV = '0'.repeat(64);

export interface ReceiptInput {
  at: number;
  kind: string;
  intentId?: string;
  /** Any JSON value; only its digest enters the chain. */
  body: unknown;
}

/** `sha256(JCS(record without hash and sig))`. */
export function receiptHash(record: Omit<ReceiptRecord, 'hash' | 'sig'>): string {
  const { seq, at, kind, intentId, body_digest, prev } = record;
  return sha256Hex(canonicalize({ seq, at, kind, intentId, body_digest, prev }));
}

/** Signs the 32 hash bytes of a receipt: a 32-byte ed25519 secret key, or a signing function (HSM, prepared key). */
export type ReceiptSigningKey = Uint8Array | ((hash: Uint8Array) => Uint8Array);

/**
 * Creates the record that follows `previous` (null for the first; only its `seq` and `hash` are
 * read), signed with the service's ed25519 receipt key or signing function.
 *
 * @example
 * const r1 = createReceipt(null, { at: now, kind: 'intent.created', intentId: id, body: decision }, receiptKey)
 * const r2 = createReceipt(r1, { at: now, kind: 'intent.executed', intentId: id, body: outcome }, receiptKey)
 */
export function createReceipt(
  previous: Pick<ReceiptRecord, 'seq' | 'hash'> | null,
  input: ReceiptInput,
  signer: ReceiptSigningKey,
): ReceiptRecord {
  if (!Number.isInteger(input.at) || input.at < 0) {
    throw new ValidationError('receipt', [{ path: 'at', message: 'must be integer Unix seconds' }]);
  }
  const unsigned = {
    seq: previous === null ? 0 : previous.seq + 1,
    at: input.at,
    kind: input.kind,
    ...(input.intentId === undefined ? {} : { intentId: input.intentId }),
    body_digest: sha256Hex(canonicalize(input.body)),
    prev: previous === null ? GENESIS_PREV : previous.hash,
  };
  if (typeof input.kind !== 'string' || input.kind.length === 0 || input.kind.length > 64) {
    throw new ValidationError('receipt', [{ path: 'kind', message: 'must be 1-64 characters' }]);
  }
  const hash = receiptHash(unsigned);
  const sign = typeof signer === 'function' ? signer : ed25519Signer(signer);
  const sig = toHex(sign(fromHex(hash, 'hash', 32)));
  if (sig.length !== 128) throw new ValidationError('receipt', [{ path: 'sig', message: 'the signer must return 64 bytes' }]);
  return { ...unsigned, hash, sig };
}

export type ReceiptProblem =
  | 'malformed'
  | 'seq_gap'
  | 'broken_link'
  | 'hash_mismatch'
  | 'bad_signature'
  | 'length_mismatch'
  | 'head_mismatch';

export type ReceiptChainCheck =
  | { verified: true; receipts: number; head: string }
  | { verified: false; receipts: number; head: string; problem: ReceiptProblem; index: number; seq: number | null; message: string };

/**
 * Recomputes a whole chain: every hash, link, sequence number and signature. A changed record
 * fails its hash; a dropped or reordered one breaks `seq` and `prev`; a record re-signed with
 * another key fails its signature. A truncated tail is caught only against an anchored head or
 * length (`expect`), which the services keep outside the log. The first failure is located.
 *
 * @example
 * const check = verifyReceiptChain(records, receiptPublicKeyHex, { head: anchoredHead })
 * if (!check.verified) console.log(check.problem, 'at index', check.index)
 */
export function verifyReceiptChain(
  records: readonly unknown[],
  publicKey: Uint8Array | string,
  expect: { head?: string; length?: number; startPrev?: string; startSeq?: number } = {},
): ReceiptChainCheck {
  const key = typeof publicKey === 'string' ? fromHex(publicKey, 'publicKey', 32) : publicKey;
  let prev = expect.startPrev ?? GENESIS_PREV;
  let seq = expect.startSeq ?? 0;
  const fail = (problem: ReceiptProblem, index: number, rseq: number | null, message: string): ReceiptChainCheck => ({
    verified: false,
    receipts: records.length,
    head: prev,
    problem,
    index,
    seq: rseq,
    message,
  });
  for (let i = 0; i < records.length; i++) {
    const parsed = ReceiptRecordSchema.safeParse(records[i]);
    if (!parsed.success) return fail('malformed', i, null, `receipt ${i} is malformed: ${parsed.error.issues[0]?.message ?? ''}`);
    const r = parsed.data;
    if (r.seq !== seq) return fail('seq_gap', i, r.seq, `receipt ${i} has seq ${r.seq}, expected ${seq}`);
    if (!timingSafeEqual(r.prev, prev)) return fail('broken_link', i, r.seq, `receipt seq ${r.seq} does not link to the previous hash`);
    const hash = receiptHash(r);
    if (!timingSafeEqual(hash, r.hash)) return fail('hash_mismatch', i, r.seq, `receipt seq ${r.seq} was changed: its hash does not match its content`);
    if (!verifyEd25519(fromHex(r.sig, 'sig', 64), fromHex(r.hash, 'hash', 32), key)) {
      return fail('bad_signature', i, r.seq, `receipt seq ${r.seq} is not signed by the receipt key`);
    }
    prev = r.hash;
    seq += 1;
  }
  if (expect.length !== undefined && expect.length !== records.length) {
    return fail('length_mismatch', records.length, null, `chain has ${records.length} receipts, expected ${expect.length}`);
  }
  if (expect.head !== undefined && !timingSafeEqual(expect.head, prev)) {
    return fail('head_mismatch', records.length, null, `chain head ${prev} is not the anchored head ${expect.head}`);
  }
  return { verified: true, receipts: records.length, head: prev };
}

/**
 * An append-only chain in memory: a convenience for services and tests that keep the records
 * elsewhere durably. `head` is GENESIS_PREV while empty.
 */
export class ReceiptChain {
  readonly #sign: (hash: Uint8Array) => Uint8Array;
  readonly #records: ReceiptRecord[] = [];
  readonly publicKeyHex: string;

  constructor(secretKey: Uint8Array, records: readonly ReceiptRecord[] = []) {
    // The key goes into a KeyObject: callers may (and should) wipe their buffer afterwards.
    this.#sign = ed25519Signer(secretKey);
    this.publicKeyHex = toHex(ed25519PublicKey(secretKey));
    const check = verifyReceiptChain(records, this.publicKeyHex);
    if (!check.verified) {
      throw new ValidationError('receipts', [{ path: String(check.index), message: check.message }]);
    }
    this.#records.push(...records);
  }

  append(input: ReceiptInput): ReceiptRecord {
    const record = createReceipt(this.#records.at(-1) ?? null, input, this.#sign);
    this.#records.push(record);
    return record;
  }

  get head(): string {
    return this.#records.at(-1)?.hash ?? GENESIS_PREV;
  }

  get length(): number {
    return this.#records.length;
  }

  /** The newest `limit` records, newest first. */
  recent(limit: number): ReceiptRecord[] {
    return this.#records.slice(-Math.max(0, limit)).reverse();
  }

  records(): readonly ReceiptRecord[] {
    return this.#records;
  }

  verify(): ReceiptChainCheck {
    return verifyReceiptChain(this.#records, this.publicKeyHex, { head: this.head, length: this.length });
  }
}
