/**
 * @module receipts
 * The hash-chained, signed receipt log both services keep (DESIGN.md §6):
 * `{seq, at, kind, intentId?, actor?, fence?, body_digest, prev, hash, sig?}` with
 * `hash = sha256(JCS(record without hash and sig))`, `prev` the previous hash (64 zeros first),
 * and `sig` the service's ed25519 receipt key over the 32 hash bytes.
 *
 * Checkpoints: a service that commits several records at once (group commit) signs the last
 * record of each commit and may leave the ones before it unsigned. Nothing is weaker for it:
 * a signature over record j's hash covers every record before j through `prev`, so changing,
 * dropping or reordering an unsigned record breaks the link to the next signed one. What must
 * hold is that every chain a verifier accepts ends on a signed record; verifyReceiptChain
 * refuses one that does not (`unsigned_head`). DESIGN.md §6 asks for a signature on every
 * record; at one ed25519 signature per record a durable write costs ~60-100 µs of CPU more than
 * it needs to (see packages/server/README.md, "Receipts").
 */
import { canonicalize } from './canonical.js';
import { ed25519PublicKey, ed25519Signer, verifyEd25519 } from './ed25519.js';
import { fromHex, sha256Hex, timingSafeEqual, toHex } from './encoding.js';
import { ValidationError } from './errors.js';
import { ACTOR_RE } from './identity.js';
import { ReceiptRecordSchema, type ReceiptRecord } from './schemas/control-plane.js';

export const GENESIS_PREV = '0'.repeat(64);

export interface ReceiptInput {
  at: number;
  kind: string;
  intentId?: string;
  /**
   * Who did it (`operator:<name>`, `device:<id>`, `apikey:<id>`, `system`; ACTOR_RE). Hashed with
   * the record. Records written before actors existed have none and hash exactly as they did.
   */
  actor?: string;
  /**
   * The fencing token of the writer's lease (a control plane on PostgreSQL, several instances, one
   * writer at a time). Hashed with the record; it never goes down along a chain, so a writer that
   * lost its lease cannot append after its successor unnoticed. Absent on a single-writer store.
   */
  fence?: number;
  /** Any JSON value; only its digest enters the chain. */
  body: unknown;
}

/** `sha256(JCS(record without hash and sig))`. */
export function receiptHash(record: Omit<ReceiptRecord, 'hash' | 'sig'>): string {
  const { seq, at, kind, intentId, actor, fence, body_digest, prev } = record;
  // Listed in RFC 8785 order, so canonicalize serialises it on its fast path. An absent actor or
  // fence is omitted (as an absent intentId is), so an older record hashes as it always did.
  return sha256Hex(canonicalize({ actor, at, body_digest, fence, intentId, kind, prev, seq }));
}

/** Signs the 32 hash bytes of a receipt: a 32-byte ed25519 secret key, or a signing function (HSM, prepared key). */
export type ReceiptSigningKey = Uint8Array | ((hash: Uint8Array) => Uint8Array);

/**
 * Creates the record that follows `previous` (null for the first; only its `seq` and `hash` are
 * read), signed with the service's ed25519 receipt key or signing function. With `signer` null
 * the record is left unsigned, for a service that signs the last record of a commit with
 * signReceipt (a checkpoint; see the module note).
 *
 * @example
 * const r1 = createReceipt(null, { at: now, kind: 'intent.created', intentId: id, body: decision }, receiptKey)
 * const r2 = createReceipt(r1, { at: now, kind: 'intent.executed', intentId: id, body: outcome }, receiptKey)
 */
export function createReceipt(
  previous: Pick<ReceiptRecord, 'seq' | 'hash'> | null,
  input: ReceiptInput,
  signer: ReceiptSigningKey | null,
): ReceiptRecord {
  if (!Number.isInteger(input.at) || input.at < 0) {
    throw new ValidationError('receipt', [{ path: 'at', message: 'must be integer Unix seconds' }]);
  }
  const unsigned: Omit<ReceiptRecord, 'hash' | 'sig'> = {
    seq: previous === null ? 0 : previous.seq + 1,
    at: input.at,
    kind: input.kind,
    body_digest: sha256Hex(canonicalize(input.body)),
    prev: previous === null ? GENESIS_PREV : previous.hash,
  };
  if (input.intentId !== undefined) unsigned.intentId = input.intentId;
  if (input.actor !== undefined) {
    if (typeof input.actor !== 'string' || !ACTOR_RE.test(input.actor)) throw new ValidationError('receipt', [{ path: 'actor', message: 'must be operator:<name>, device:<id>, apikey:<id> or system' }]);
    unsigned.actor = input.actor;
  }
  if (input.fence !== undefined) {
    if (!Number.isSafeInteger(input.fence) || input.fence < 1) throw new ValidationError('receipt', [{ path: 'fence', message: 'must be a positive integer' }]);
    unsigned.fence = input.fence;
  }
  if (typeof input.kind !== 'string' || input.kind.length === 0 || input.kind.length > 64) {
    throw new ValidationError('receipt', [{ path: 'kind', message: 'must be 1-64 characters' }]);
  }
  const record = { ...unsigned, hash: receiptHash(unsigned) };
  return signer === null ? record : signReceipt(record, signer);
}

/** The record with `sig` set: the receipt key's ed25519 signature over its 32 hash bytes. */
export function signReceipt(record: ReceiptRecord, signer: ReceiptSigningKey): ReceiptRecord {
  const sign = typeof signer === 'function' ? signer : ed25519Signer(signer);
  const sig = toHex(sign(fromHex(record.hash, 'hash', 32)));
  if (sig.length !== 128) throw new ValidationError('receipt', [{ path: 'sig', message: 'the signer must return 64 bytes' }]);
  return { ...record, sig };
}

export type ReceiptProblem =
  | 'malformed'
  | 'seq_gap'
  | 'broken_link'
  | 'hash_mismatch'
  | 'bad_signature'
  | 'unsigned_head'
  | 'fence_regressed'
  | 'length_mismatch'
  | 'head_mismatch';

export type ReceiptChainCheck =
  | { verified: true; receipts: number; head: string }
  | { verified: false; receipts: number; head: string; problem: ReceiptProblem; index: number; seq: number | null; message: string };

/**
 * Recomputes a whole chain: every hash, link, sequence number and signature. A changed record
 * fails its hash; a dropped or reordered one breaks `seq` and `prev`; a record re-signed with
 * another key fails its signature. Every signature present is checked, and the last record must
 * carry one (`unsigned_head`): it vouches for the unsigned records before it. A truncated tail
 * is caught only against an anchored head or length (`expect`), which the services keep outside
 * the log. The first failure is located.
 *
 * Fencing tokens never go down: once a record carries `fence`, every later one carries one at
 * least as high (`fence_regressed`), so a writer that kept writing after losing its lease shows.
 *
 * `expect.openEnd: true` checks a slice that may stop inside a commit (a page of /ledger/recent
 * read oldest first): its last record may then be unsigned, and only the full chain proves it.
 *
 * @example
 * const check = verifyReceiptChain(records, receiptPublicKeyHex, { head: anchoredHead })
 * if (!check.verified) console.log(check.problem, 'at index', check.index)
 */
export function verifyReceiptChain(
  records: readonly unknown[],
  publicKey: Uint8Array | string,
  expect: { head?: string; length?: number; startPrev?: string; startSeq?: number; openEnd?: boolean } = {},
): ReceiptChainCheck {
  const key = typeof publicKey === 'string' ? fromHex(publicKey, 'publicKey', 32) : publicKey;
  let prev = expect.startPrev ?? GENESIS_PREV;
  let seq = expect.startSeq ?? 0;
  let fence = 0;
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
    if (r.sig !== undefined && !verifyEd25519(fromHex(r.sig, 'sig', 64), fromHex(r.hash, 'hash', 32), key)) {
      return fail('bad_signature', i, r.seq, `receipt seq ${r.seq} is not signed by the receipt key`);
    }
    if (r.sig === undefined && i === records.length - 1 && expect.openEnd !== true) {
      return fail('unsigned_head', i, r.seq, `receipt seq ${r.seq} ends the chain without a signature: nothing vouches for it or the unsigned records before it`);
    }
    if (r.fence !== undefined ? r.fence < fence : fence > 0) {
      return fail('fence_regressed', i, r.seq, `receipt seq ${r.seq} has fencing token ${r.fence ?? 'none'} after ${fence}: written by a writer that had lost its lease`);
    }
    fence = r.fence ?? 0;
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

  /**
   * Appends the next record, signed; with `{ sign: false }` unsigned, for a service that signs
   * only the last record of each commit: call seal() before that commit reaches the disk.
   */
  append(input: ReceiptInput, options: { sign?: boolean } = {}): ReceiptRecord {
    const record = createReceipt(this.#records.at(-1) ?? null, input, options.sign === false ? null : this.#sign);
    this.#records.push(record);
    return record;
  }

  /** Signs the newest record if it is unsigned (the checkpoint of a commit) and returns it; null while empty. */
  seal(): ReceiptRecord | null {
    const last = this.#records.at(-1);
    if (last === undefined) return null;
    if (last.sig !== undefined) return last;
    const sealed = signReceipt(last, this.#sign);
    this.#records[this.#records.length - 1] = sealed;
    return sealed;
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
