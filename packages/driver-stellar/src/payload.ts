/**
 * @module payload
 * The payload the driver builds and every signer rebuilds: an unsigned v1 TransactionEnvelope
 * (base64 XDR) plus the facts needed to check it. Its digest is the transaction hash, i.e.
 * sha256(networkId || ENVELOPE_TYPE_TX || tx), so it already binds the network passphrase.
 */
import { Transaction, xdr } from '@stellar/stellar-base';
import { SignerRefusedError, ValidationError } from '@vault/sdk';
import type { BuiltPayload } from '@vault/sdk';
import { STELLAR_TX_FORMAT, type ThresholdClass } from './constants.js';

export interface StellarPayload {
  format: typeof STELLAR_TX_FORMAT;
  chain: string;
  network_passphrase: string;
  /** The wallet (transaction and operation source), G… */
  source: string;
  /** The transaction's sequence number (account sequence + 1), int64 decimal string. */
  sequence: string;
  /** The vault operation this transaction carries out. */
  op: string;
  /** The threshold class the ledger checks the wallet's signatures against. */
  threshold: ThresholdClass;
  /**
   * The signature weight the transaction needs: the highest of the account's low threshold and
   * its operations' class thresholds, at least 1 (see build.ts `neededWeight`). Metadata outside
   * tx_xdr, not covered by the digest: it only decides when assemble stops collecting; the ledger
   * enforces the real thresholds. Absent in payloads built before it existed: the quorum decides.
   */
  needed_weight?: number;
  /** Unsigned TransactionEnvelope, base64 XDR. */
  tx_xdr: string;
}

/** Lowercase hex of a hash whatever container stellar-base returns (Buffer or Uint8Array). */
export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

const THRESHOLDS: readonly string[] = ['low', 'medium', 'high'];

function fail(path: string, message: string): never {
  throw new ValidationError('built', [{ path, message }]);
}

/** Shape check of a payload that arrived over the wire. */
export function parsePayload(value: unknown): StellarPayload {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('payload', 'payload must be an object');
  const p = value as Record<string, unknown>;
  const keys = ['format', 'chain', 'network_passphrase', 'source', 'sequence', 'op', 'threshold', 'needed_weight', 'tx_xdr'];
  for (const k of Object.keys(p)) if (!keys.includes(k)) fail(`payload.${k}`, 'unknown field');
  if (p['format'] !== STELLAR_TX_FORMAT) fail('payload.format', `format must be ${STELLAR_TX_FORMAT}`);
  for (const k of ['chain', 'network_passphrase', 'source', 'sequence', 'op', 'tx_xdr']) {
    if (typeof p[k] !== 'string' || p[k] === '') fail(`payload.${k}`, `${k} must be a non-empty string`);
  }
  if (!/^(0|[1-9][0-9]{0,18})$/.test(p['sequence'] as string)) fail('payload.sequence', 'sequence must be an int64 decimal string');
  if (!THRESHOLDS.includes(p['threshold'] as string)) fail('payload.threshold', 'threshold must be low, medium or high');
  const needed = p['needed_weight'];
  if (needed !== undefined && (typeof needed !== 'number' || !Number.isInteger(needed) || needed < 1 || needed > 0xffffffff)) {
    fail('payload.needed_weight', 'needed_weight must be an integer from 1 to 2^32-1');
  }
  return p as unknown as StellarPayload;
}

/**
 * Decodes the payload's transaction and proves the digest is its hash under the payload's
 * passphrase, that it carries no signatures, and that source and sequence are what it says.
 * `signer` makes a mismatch a signer refusal (digest_mismatch) instead of a validation error.
 */
export function openPayload(built: BuiltPayload, opts: { signer?: boolean } = {}): { payload: StellarPayload; tx: Transaction } {
  const payload = parsePayload(built.payload);
  let tx: Transaction;
  try {
    const env = xdr.TransactionEnvelope.fromXDR(payload.tx_xdr, 'base64');
    if (env.switch().name !== 'envelopeTypeTx') fail('payload.tx_xdr', 'tx_xdr must be a v1 transaction envelope');
    tx = new Transaction(env, payload.network_passphrase);
  } catch (cause) {
    if (cause instanceof ValidationError) throw cause;
    throw new ValidationError('built', [{ path: 'payload.tx_xdr', message: 'tx_xdr is not a TransactionEnvelope' }], { cause });
  }
  const digest = hex(tx.hash());
  if (digest !== built.digest) {
    const msg = 'the digest is not the hash of tx_xdr under network_passphrase';
    if (opts.signer) throw new SignerRefusedError('digest_mismatch', msg);
    fail('digest', msg);
  }
  if (tx.signatures.length !== 0) fail('payload.tx_xdr', 'tx_xdr must be unsigned');
  if (tx.source !== payload.source) fail('payload.source', 'source differs from the transaction source');
  if (tx.sequence !== payload.sequence) fail('payload.sequence', 'sequence differs from the transaction sequence');
  for (const op of tx.operations) {
    if (op.source !== undefined && op.source !== payload.source) fail('payload.tx_xdr', 'every operation must use the wallet as source');
  }
  return { payload, tx };
}
