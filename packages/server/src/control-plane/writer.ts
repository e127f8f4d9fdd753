/**
 * @module control-plane/writer
 * The control plane's one writer of intent records and receipts. It holds the head of the receipt
 * chain, hands each write to the store (group-committed, durable before it resolves), keeps the
 * cap history in step, and stops every write once one has failed or the log did not match its
 * anchor at start-up: later receipts may already chain onto a lost one in memory, so writing on
 * would fork the chain.
 *
 * Events (the outbox): every receipt it chains keeps its body beside it until commit, when the
 * SDK's projectReceipt turns it into the receipt's events, written by the store in the same
 * transaction. A receipt kind with no projection is refused before it is chained. Every receipt
 * names the actor of the request that wrote it (actor.ts).
 */
import { assertProjectable, InternalError, NotFoundError, projectReceipt, verifyReceiptChain, type EventDraft, type EventFilter, type IntentStatus, type ReceiptRecord, type VaultEvent } from '@vault/sdk';
import { currentActor } from './actor.js';
import { HistoryCache } from './history.js';
import { NotWriterError } from './postgres/log.js';
import type { ReceiptSigner } from './secrets.js';
import { assertTransition } from './status.js';
import { STATE_SHARED_KIND, stateSharedBody, type IntentRecord, type IntentStore } from './store.js';

export class Writer {
  readonly #store: IntentStore;
  readonly #signer: ReceiptSigner;
  readonly #now: () => number;
  readonly #log: (event: Record<string, unknown>) => void;
  #head: { seq: number; hash: string } | null;
  /** Records whose writes are queued but not yet committed (the store does not show them yet). */
  readonly #pending = new Map<string, IntentRecord>();
  /** The bodies of receipts chained or drafted here and not yet committed (events are projected from them). */
  readonly #bodies = new WeakMap<ReceiptRecord, { kind: string; body: unknown }>();
  #broken = false;
  /** What velocity caps and agent budgets count, in step with every write. */
  readonly history: HistoryCache;
  #anchorOk = true;

  constructor(store: IntentStore, signer: ReceiptSigner, now: () => number, log: (event: Record<string, unknown>) => void) {
    this.#store = store;
    this.#signer = signer;
    this.#now = now;
    this.#log = log;
    this.history = new HistoryCache(store, () => this.#pending.values());
    this.#head = null;
    this.#load();
  }

  /** Takes the head from the store's last receipt and checks it against the anchor. */
  #load(): void {
    const last = this.#store.lastReceipt();
    this.#head = last ? { seq: last.seq, hash: last.hash } : null;
    // The head and length anchored beside the log must match its last record: a truncated or
    // rewritten tail is reported at once (and /ledger/verify fails until an operator looks).
    const meta = this.#store.getMeta();
    this.#anchorOk = meta.head === this.head && meta.receipts === this.receiptCount;
    if (!this.#anchorOk) {
      // Writing on would re-anchor a damaged log and hide the damage: serve reads, refuse writes.
      this.#log({ event: 'receipt_anchor_mismatch', head: this.head, receipts: this.receiptCount });
      this.#broken = true;
    }
  }

  /** Whether the receipt log's tail matched its anchored head and length (at start-up, or the last takeover). */
  get anchorOk(): boolean {
    return this.#anchorOk;
  }

  /**
   * After this instance took the writer's lease and its replica applied the whole shared log:
   * the head, the cap history and the stopped flag are taken afresh from what is committed
   * (whatever this instance had in flight before was refused by the fence).
   */
  resync(): void {
    this.#pending.clear();
    this.#broken = false;
    this.#load();
    this.history.clear();
  }

  get head(): string {
    return this.#head?.hash ?? '0'.repeat(64);
  }

  get receiptCount(): number {
    return this.#head ? this.#head.seq + 1 : 0;
  }

  /** The intent as last written (a write in flight included). */
  get(id: string): IntentRecord {
    const r = this.#pending.get(id) ?? this.#store.get(id);
    if (!r) throw new NotFoundError('intent', id);
    return r;
  }

  /**
   * The intent a write is about to change. On a standby the write is refused first (503
   * not_writer, naming the writer): its replica may not have the intent yet, and a 404 there would
   * tell the client the intent does not exist.
   */
  getForWrite(id: string): IntentRecord {
    this.#store.assertWriter();
    return this.get(id);
  }

  /** The intent as last written, or undefined. */
  find(id: string): IntentRecord | undefined {
    return this.#pending.get(id) ?? this.#store.get(id);
  }

  /** The next receipt, chained at once: commit it with its record before anything else is chained. */
  receipt(kind: string, body: unknown, intentId?: string): ReceiptRecord {
    this.#store.assertWriter();
    assertProjectable(kind);
    const fence = this.#store.fence;
    const r = this.#signer.next(this.#head, { at: this.#now(), kind, body, actor: currentActor(), ...(intentId ? { intentId } : {}), ...(fence !== undefined ? { fence } : {}) });
    this.#head = { seq: r.seq, hash: r.hash };
    this.#bodies.set(r, { kind, body });
    return r;
  }

  /** The events `receipt` yields (fails closed: a receipt not made here has no body to project). */
  #events(receipt: ReceiptRecord, ctx: { wallet?: string; from?: IntentStatus | null }): EventDraft[] {
    const b = this.#bodies.get(receipt);
    if (!b || b.kind !== receipt.kind) throw new InternalError(`receipt ${receipt.seq} has no body to project events from`);
    return projectReceipt(
      { kind: receipt.kind, at: receipt.at, hash: receipt.hash, ...(receipt.intentId !== undefined ? { intentId: receipt.intentId } : {}), ...(receipt.actor !== undefined ? { actor: receipt.actor } : {}), body: b.body },
      ctx,
    );
  }

  /** Up to `limit` committed events after `afterSeq` that pass `filter`, in log order. */
  eventsAfter(afterSeq: number, limit: number, filter?: EventFilter): VaultEvent[] {
    return this.#store.eventsAfter(afterSeq, limit, filter);
  }

  /** Calls `listener` with each commit's events once they are durable; returns the unsubscribe function. */
  onEvents(listener: (events: readonly VaultEvent[]) => void): () => void {
    return this.#store.onEvents(listener);
  }

  /** Writes a record with its receipt (group-committed by the store); if the commit fails, every later write is refused. */
  async commit(before: IntentRecord | null, record: IntentRecord, receipt: ReceiptRecord | null, extra: { isNew?: boolean; known?: [string, string] } = {}): Promise<void> {
    this.assertWritable();
    let events: EventDraft[] = [];
    try {
      // The backstop of the lifecycle table (callers build the record with transition()).
      assertTransition(before?.status ?? null, record.status, record.intentId);
      if (receipt) events = this.#events(receipt, { wallet: record.intent.wallet, from: before?.status ?? null });
    } catch (e) {
      // The receipt was chained in memory (no await since): take it off, so the chain on disk
      // and in memory stay one.
      if (receipt && this.#head?.hash === receipt.hash) this.#head = receipt.seq === 0 ? null : { seq: receipt.seq - 1, hash: receipt.prev };
      throw e;
    }
    this.#pending.set(record.intentId, record);
    this.history.update(before, record);
    try {
      await this.#store.write(record, receipt, extra, events);
    } catch (e) {
      // Later receipts may already chain onto this one in memory: stop writing rather than fork
      // the chain. A restart reloads the head from what is on disk.
      this.#broken = true;
      this.#log({ event: 'store_failed', error: e instanceof Error ? e.name : 'unknown' });
      // Fenced (the lease was taken): nothing was written, and the caller should retry at the writer.
      if (e instanceof NotWriterError) throw e;
      throw new InternalError('store: write failed', { cause: e });
    } finally {
      if (this.#pending.get(record.intentId) === record) this.#pending.delete(record.intentId);
    }
  }

  assertWritable(): void {
    // A standby (or a writer whose lease ran out) says so: 503 not_writer, before any side effect.
    this.#store.assertWriter();
    if (this.#broken) throw new InternalError('store: writes are stopped (an earlier write failed, or the receipt log does not match its anchor); see /health');
  }

  /**
   * The next receipt, built (and so validated: canonical JSON refuses what it cannot hash) without
   * taking its place in the chain. Append it before anything else is chained: no await between.
   */
  draftReceipt(kind: string, body: unknown): ReceiptRecord {
    this.assertWritable();
    assertProjectable(kind);
    const fence = this.#store.fence;
    const r = this.#signer.next(this.#head, { at: this.#now(), kind, body, actor: currentActor(), ...(fence !== undefined ? { fence } : {}) });
    this.#bodies.set(r, { kind, body });
    return r;
  }

  /** Chains a drafted receipt and waits until it is on disk. */
  async appendReceipt(r: ReceiptRecord): Promise<void> {
    this.assertWritable();
    if (r.seq !== this.receiptCount || r.prev !== this.head) throw new InternalError('receipt drafted on a stale head');
    const events = this.#events(r, {});
    this.#head = { seq: r.seq, hash: r.hash };
    try {
      await this.#store.appendReceipt(r, events);
    } catch (e) {
      this.#broken = true;
      if (e instanceof NotWriterError) throw e;
      throw new InternalError('store: write failed', { cause: e });
    }
  }

  /**
   * Shares a state.json text through the shared log (PostgreSQL) with a `state.shared` receipt
   * committing to it, chained now: replicas adopt the text only beside that signed receipt.
   */
  async shareState(text: string): Promise<void> {
    this.assertWritable();
    const r = this.receipt(STATE_SHARED_KIND, stateSharedBody(text));
    const events = this.#events(r, {});
    try {
      await this.#store.shareState(text, r, events);
    } catch (e) {
      // As appendReceipt: the receipt is chained in memory; writing on could fork the chain.
      this.#broken = true;
      throw new InternalError('store: write failed', { cause: e });
    }
  }

  verifyLedger(): { verified: boolean; receipts: number; head: string; signerPublicKey: string; problem?: string; message?: string } {
    const records = [...this.#store.allReceipts()];
    const meta = this.#store.getMeta();
    const check = verifyReceiptChain(records, this.#signer.publicKeyHex, { head: meta.head, length: meta.receipts });
    return check.verified
      ? { verified: true, receipts: check.receipts, head: check.head, signerPublicKey: this.#signer.publicKeyHex }
      : { verified: false, receipts: check.receipts, head: check.head, signerPublicKey: this.#signer.publicKeyHex, problem: check.problem, message: check.message };
  }
}
