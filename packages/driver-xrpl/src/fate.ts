/**
 * @module fate
 * What became of a multisig payload, looked up by the payload itself (Account + Sequence), never
 * by a transaction hash (the hash covers the Signers, so it depends on which members signed).
 *
 * Only validated ledger state is proof. The account's Sequence in the last validated ledger says
 * whether sequence `s` was consumed; when it was, `account_tx` (validated ledgers) names the
 * transaction that consumed it, and its signing hash, recomputed from the ledger's own copy after
 * checking that copy re-encodes to the recorded hash, tells this payload from a rival. Anything the
 * ledger cannot show (a history gap, a Ticket, an RPC fault, a reply that does not re-encode) is a
 * TransportError: the caller must not guess.
 */
import { TransportError, type PayloadFate } from '@vault/sdk';
import { encode } from 'ripple-binary-codec';
import { hashes } from 'xrpl';
import { signingHash, type TxJson } from './build.js';
import { parseTxResult, resultClass, type ParsedTx } from './results.js';

/** A transaction read back from a validated ledger, checked and reduced to what fate needs. */
export interface LedgerTx {
  hash: string;
  ledgerIndex: number | null;
  result: string | null;
  validated: boolean;
  account: string;
  /** Sequence (0 for a transaction that used a Ticket). */
  sequence: number;
  /** Signing hash of its unsigned multisig form (Signers, TxnSignature dropped, SigningPubKey ""). */
  digest: string;
}

/**
 * The transaction of a `tx` reply or an `account_tx` entry (API v1 `tx`, v2 `tx_json`) as the
 * binary codec needs it: server-added lowercase fields are ignored by the codec, and API v2's
 * `DeliverMax` goes back to the `Amount` field it stands for.
 */
export function serializableTx(parsed: ParsedTx): TxJson {
  const tx: TxJson = {};
  for (const [k, v] of Object.entries(parsed.tx)) if (k !== 'DeliverMax' && k[0] !== k[0]?.toLowerCase()) tx[k] = v;
  const deliverMax = parsed.tx['DeliverMax'];
  if (deliverMax !== undefined) {
    if (tx['Amount'] !== undefined && JSON.stringify(tx['Amount']) !== JSON.stringify(deliverMax)) {
      throw new TransportError('XRPL transaction reply has DeliverMax and Amount that disagree', { data: { hash: parsed.hash } });
    }
    tx['Amount'] = deliverMax;
  }
  return tx;
}

/**
 * A ledger transaction, checked: it must re-encode to the hash the server recorded for it (else the
 * reply is not trusted: a JSON shape the driver misreads must never make a landed payload look like
 * a rival), and its multisig signing hash is computed the way the driver computes a payload digest.
 */
export function ledgerTxOf(entry: Record<string, unknown>): LedgerTx {
  const parsed = parseTxResult(entry);
  const tx = serializableTx(parsed);
  let hash: string;
  let digest: string;
  try {
    hash = hashes.hashSignedTx(encode(tx));
    const { Signers: _signers, TxnSignature: _signature, ...unsigned } = tx;
    digest = signingHash({ ...unsigned, SigningPubKey: '' });
  } catch (cause) {
    throw new TransportError(`XRPL transaction ${parsed.hash || '(no hash)'} does not re-encode: ${(cause as Error).message}`, { cause, data: { hash: parsed.hash } });
  }
  if (hash !== parsed.hash.toUpperCase()) {
    throw new TransportError(`XRPL transaction reply does not re-encode to its hash (${parsed.hash || 'none'}; computed ${hash})`, { data: { hash: parsed.hash } });
  }
  return {
    hash,
    ledgerIndex: parsed.ledgerIndex,
    result: parsed.result,
    validated: parsed.validated,
    account: String(tx['Account'] ?? ''),
    sequence: Number(tx['Sequence'] ?? 0),
    digest,
  };
}

/**
 * The fate of payload `digest` given the validated transaction that used its Sequence.
 *
 * A `tec` result of this very payload is `dead` (code = the tec token): the ledger applied it
 * without its effect (no funds moved; only the fee was claimed and the sequence consumed), so it
 * can never apply again and a replacement cannot double-spend it.
 */
export function fateOfUsed(digest: string, used: LedgerTx, sequence: number): PayloadFate {
  if (used.digest.toLowerCase() !== digest.toLowerCase()) {
    return { fate: 'dead', code: 'sequence_consumed', message: `sequence ${sequence} was used by ${used.hash} in ledger ${used.ledgerIndex ?? '?'}` };
  }
  if (used.result === 'tesSUCCESS') return { fate: 'applied', code: 'applied', message: `applied as ${used.hash} in ledger ${used.ledgerIndex ?? '?'}`, txHash: used.hash };
  if (used.result !== null && resultClass(used.result) === 'tec') {
    return { fate: 'dead', code: used.result, message: `validated as ${used.hash} with ${used.result}: fee claimed and sequence ${sequence} consumed, no other effect` };
  }
  throw new TransportError(`XRPL transaction ${used.hash} is in a validated ledger with result ${used.result ?? 'none'}`, { data: { hash: used.hash } });
}
