/**
 * @module fate
 * What became of a payload this driver built, decided from closed-ledger state that Horizon has
 * ingested. A Stellar transaction hash covers the transaction and the network passphrase but not
 * the signatures, so the payload's digest is the very hash the ledger records whoever signed it.
 *
 * The answer is used by a signer to decide whether it may sign a second payload for the same
 * intent, so `dead` must be proof that this payload can never have an effect. Whenever Horizon
 * cannot give that proof (an error, an unexpected shape, pruned history) this module throws a
 * TransportError instead of guessing.
 */
import { RefusedError, TransportError, type PayloadFate } from '@vault/sdk';
import type { Transaction } from '@stellar/stellar-base';
import type { HorizonClient } from './horizon.js';
import { primaryCode, resultCodesOfXdr } from './result-codes.js';
import type { StellarPayload } from './payload.js';

export interface FateContext {
  chain: string;
  horizon: HorizonClient;
  networkPassphrase: string;
}

/** The facts of Horizon's root resource that the fate depends on. */
interface RootFacts {
  /** Close time (Unix seconds) of the latest ledger Horizon has ingested. */
  closedAt: number;
  /** Oldest ledger whose transactions Horizon still serves. */
  elderLedger: number;
}

function transport(ctx: FateContext, message: string, data: Record<string, unknown> = {}, cause?: unknown): TransportError {
  return new TransportError(`Horizon ${ctx.chain}: ${message}`, { ...(cause !== undefined ? { cause } : {}), data: { chain: ctx.chain, ...data } });
}

function record(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/**
 * Horizon keeps full history from the network's first ledgers; one that retains less (history
 * retention) starts later. Ledger 1 is the genesis ledger and carries no transaction, so an elder
 * ledger of 2 or less means every transaction ever applied can be looked up.
 */
const FULL_HISTORY_ELDER = 2;

async function readRoot(ctx: FateContext): Promise<RootFacts> {
  const reply = await ctx.horizon.get('/');
  if (reply.status !== 200) throw transport(ctx, `GET / answered ${reply.status}`, { status: reply.status });
  const root = record(reply.body);
  const passphrase = root['network_passphrase'];
  if (typeof passphrase === 'string' && passphrase !== ctx.networkPassphrase) {
    throw new RefusedError(`Horizon for ${ctx.chain} serves "${passphrase}", not the configured "${ctx.networkPassphrase}"`, {
      data: { reason: 'network_mismatch', chain: ctx.chain },
    });
  }
  const closedText = root['history_latest_ledger_closed_at'];
  const closedMs = typeof closedText === 'string' ? Date.parse(closedText) : Number.NaN;
  const elder = root['history_elder_ledger'];
  if (!Number.isFinite(closedMs)) throw transport(ctx, 'GET / has no usable history_latest_ledger_closed_at: the latest closed ledger time is unknown');
  if (typeof elder !== 'number' || !Number.isInteger(elder) || elder < 0) throw transport(ctx, 'GET / has no usable history_elder_ledger');
  return { closedAt: Math.floor(closedMs / 1000), elderLedger: elder };
}

/** The account's current sequence and the ledger that last changed it (null when Horizon omits it). */
async function readSequence(ctx: FateContext, address: string): Promise<{ sequence: bigint; sequenceLedger: number | null } | null> {
  const reply = await ctx.horizon.get(`/accounts/${encodeURIComponent(address)}`);
  if (reply.status === 404) return null;
  if (reply.status !== 200) throw transport(ctx, `GET /accounts/${address} answered ${reply.status}`, { status: reply.status });
  const a = record(reply.body);
  const seq = a['sequence'];
  if (typeof seq !== 'string' || !/^[0-9]{1,19}$/.test(seq)) throw transport(ctx, `GET /accounts/${address} has no int64 sequence`);
  const ledger = a['sequence_ledger'];
  return { sequence: BigInt(seq), sequenceLedger: typeof ledger === 'number' && Number.isInteger(ledger) ? ledger : null };
}

/** The transaction Horizon recorded under `hash`, or null on 404. */
async function lookup(ctx: FateContext, hash: string): Promise<Record<string, unknown> | null> {
  const reply = await ctx.horizon.get(`/transactions/${hash}`);
  if (reply.status === 404) return null;
  if (reply.status !== 200) throw transport(ctx, `GET /transactions/${hash} answered ${reply.status}`, { status: reply.status });
  const rec = record(reply.body);
  if (typeof rec['successful'] !== 'boolean') throw transport(ctx, `GET /transactions/${hash} has no boolean "successful"`);
  // Anyone may wrap a signed transaction in a fee bump; Horizon then answers the inner hash with the
  // fee-bump record, whose `hash` is the outer one and `inner_transaction.hash` ours.
  if (!carries(rec, hash)) throw transport(ctx, `GET /transactions/${hash} answered for another hash`);
  return rec;
}

/** Whether a transaction record is `hash` itself or a fee bump around it. */
function carries(rec: Record<string, unknown>, hash: string): boolean {
  const inner = record(rec['inner_transaction'])['hash'];
  return (typeof rec['hash'] === 'string' && rec['hash'].toLowerCase() === hash) || (typeof inner === 'string' && inner.toLowerCase() === hash);
}

const LEDGER_PAGE = 200;
const LEDGER_PAGES = 10;

/**
 * The transaction in ledger `ledger` that used `source`'s sequence `seq` (failed ones included:
 * they use it too), or null when the ledger has none. Pages through the ledger's transactions.
 */
async function userOfSequence(ctx: FateContext, ledger: number, source: string, seq: bigint): Promise<Record<string, unknown> | null> {
  let cursor = '';
  for (let page = 0; page < LEDGER_PAGES; page++) {
    const path = `/ledgers/${ledger}/transactions?include_failed=true&order=asc&limit=${LEDGER_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const reply = await ctx.horizon.get(path);
    if (reply.status !== 200) throw transport(ctx, `GET /ledgers/${ledger}/transactions answered ${reply.status}`, { status: reply.status });
    const records = record(record(reply.body)['_embedded'])['records'];
    if (!Array.isArray(records)) throw transport(ctx, `GET /ledgers/${ledger}/transactions has no _embedded.records`);
    for (const raw of records) {
      const r = record(raw);
      if (r['source_account'] === source && r['source_account_sequence'] === seq.toString()) return r;
    }
    if (records.length < LEDGER_PAGE) return null;
    const last = record(records[records.length - 1])['paging_token'];
    if (typeof last !== 'string' || last === '') throw transport(ctx, `GET /ledgers/${ledger}/transactions has a record without paging_token`);
    cursor = last;
  }
  throw transport(ctx, `ledger ${ledger} has more than ${LEDGER_PAGE * LEDGER_PAGES} transactions; not searched further`);
}

function fromRecord(rec: Record<string, unknown>): PayloadFate {
  const ledger = typeof rec['ledger'] === 'number' ? rec['ledger'] : '?';
  if (rec['successful'] === true) {
    // The transaction hash is the payload's digest (it excludes the signatures): found by it.
    return { fate: 'applied', code: 'applied', message: `applied in ledger ${ledger}`, ...(typeof rec['hash'] === 'string' ? { txHash: rec['hash'] } : {}) };
  }
  // Included but failed: stellar-core charged the fee and consumed the sequence number, and rolled
  // every operation back (a transaction's operations apply all or nothing). The payment never
  // happened and this exact transaction can never apply again (its sequence is gone and a hash is
  // recorded once), so signing a replacement cannot pay twice.
  const codes = resultCodesOfXdr(String(rec['result_xdr'] ?? ''));
  const code = codes ? primaryCode(codes) : 'tx_failed';
  return { fate: 'dead', code, message: `included in ledger ${ledger} but failed (${code}): fee charged, no effect, sequence consumed` };
}

/**
 * The fate of `payload` (already opened and checked against its digest).
 *
 * Order matters. Horizon serves one ingested ledger state that only moves forward, so each read
 * sees at least the ledgers the previous one saw:
 *  1. the root: the latest closed ledger's close time T (and how far back history goes);
 *  2. the wallet's account: its sequence N, in a state at least as new as T's ledger;
 *  3. only if N >= the payload's sequence S, the transaction by hash.
 *
 * - No account: looked up by hash; not found is `expired` past max_time with full history, else
 *   `live` (or a throw when history is pruned).
 * - N < S: the payload was not applied (applying it, even failing, sets the sequence to S; and an
 *   account merged and recreated starts above any sequence it used before, since stellar-core
 *   refuses a merge whose sequence reaches the current ledger's starting sequence). If
 *   T > max_time it never can be (close times only grow and stellar-core refuses a transaction
 *   whose max_time is before the ledger's close time): `dead`/`expired`. Otherwise `live`.
 * - N >= S: sequence S is used. Found by hash: `applied` (or `dead` when it failed, see above).
 *   Not found: another transaction used S, so this one can never apply: `dead`/`sequence_consumed`,
 *   with full history; with pruned history only once the transaction that used S is found in
 *   the ledger that set the account's sequence; otherwise throw.
 */
export async function payloadFateOf(ctx: FateContext, payload: StellarPayload, tx: Transaction, digest: string): Promise<PayloadFate> {
  const root = await readRoot(ctx);
  const account = await readSequence(ctx, payload.source);
  const seq = BigInt(payload.sequence);
  const maxTime = BigInt(tx.timeBounds?.maxTime ?? '0');
  const expired = maxTime !== 0n && BigInt(root.closedAt) > maxTime;

  if (account === null) {
    // Merged (or never created): the account's sequence no longer says whether this payload ran
    // before the merge, so only the transaction itself can.
    const found = await lookup(ctx, digest);
    if (found) return fromRecord(found);
    if (root.elderLedger > FULL_HISTORY_ELDER) {
      throw transport(ctx, `account ${payload.source} is gone and Horizon's history starts at ledger ${root.elderLedger}: cannot tell whether the payload ran`, {
        reason: 'history_gap',
      });
    }
    if (expired) return { fate: 'dead', code: 'expired', message: `never applied, and the ledger closed at ${root.closedAt}, past max_time ${maxTime}` };
    return { fate: 'live', code: 'account_missing', message: `account ${payload.source} does not exist on the ledger; not provably dead before max_time ${maxTime}` };
  }

  if (account.sequence < seq) {
    if (expired) {
      return { fate: 'dead', code: 'expired', message: `not applied, and the ledger closed at ${root.closedAt}, past max_time ${maxTime}` };
    }
    return { fate: 'live', code: 'pending', message: `sequence ${seq} is not used yet (account at ${account.sequence}); valid until ${maxTime === 0n ? 'no time bound' : maxTime}` };
  }

  const found = await lookup(ctx, digest);
  if (found) return fromRecord(found);

  // Sequence S was used by a transaction Horizon does not know under our hash. With full history
  // that 404 is proof that another transaction used it.
  if (root.elderLedger > FULL_HISTORY_ELDER) {
    // Pruned history: the 404 may only mean ours was pruned. Proof then needs the transaction that
    // did use S, which we can find only when S is the current sequence (the ledger that set it is
    // `sequence_ledger`) and that ledger is still held. Sequence numbers are used once, so a
    // different transaction there on sequence S means ours never ran.
    const gap = (why: string) =>
      transport(ctx, `sequence ${seq} of ${payload.source} is used and Horizon's history starts at ledger ${root.elderLedger}: ${why}`, { reason: 'history_gap' });
    if (account.sequence !== seq || account.sequenceLedger === null || account.sequenceLedger < root.elderLedger) {
      throw gap('the transaction that used it may have been pruned');
    }
    const user = await userOfSequence(ctx, account.sequenceLedger, payload.source, seq);
    if (!user) throw gap(`ledger ${account.sequenceLedger} has no transaction on that sequence (changed by an operation, not proof)`);
    if (carries(user, digest)) return fromRecord(user);
    return {
      fate: 'dead',
      code: 'sequence_consumed',
      message: `sequence ${seq} was used by transaction ${String(user['hash'])} in ledger ${account.sequenceLedger}; this payload can never apply`,
    };
  }
  return { fate: 'dead', code: 'sequence_consumed', message: `sequence ${seq} was used by another transaction (account at ${account.sequence}); this payload can never apply` };
}
