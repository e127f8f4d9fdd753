/**
 * @module control-plane/store
 * Durable storage of intents and receipts in LMDB (a memory-mapped B-tree): start-up opens the
 * map without loading it, reads are synchronous page lookups. `overlappingSync: false` makes every
 * commit fsync before its promise resolves, so a reply sent after `await` is on disk; LMDB's
 * copy-on-write pages mean a kill -9 leaves the last committed transaction, never a half-written one.
 *
 * Group commit: writes are queued in call order and committed together, one LMDB transaction per
 * group: the first write waits one event-loop turn (so the requests read in the same I/O phase
 * join it), and writes queued while a commit is in flight form the next group. Under load a group
 * holds tens of writes, and the store anchors the receipt head once per group and has the last
 * receipt of the group signed (`sealReceipt`): a checkpoint that vouches for the unsigned
 * receipts before it through the hash chain (the SDK's receipts module explains why that is as
 * strong). A group is one transaction, so the log on disk always ends on a signed record.
 *
 * Two implementations of one store: LMDB alone (the map is the store; `npm start` keeps it), and
 * PostgreSQL (postgres/log.ts): each group is first committed to a shared log in the database,
 * fenced by the writer's lease, and the map is this instance's replica of that log, rebuilt from
 * it when lost. Other instances apply the same batches in the same order (applyReplicated).
 */
import {
  canonicalize,
  eventId,
  fromHex,
  toHex,
  verifyEd25519,
  GENESIS_PREV,
  InternalError,
  verifyReceiptChain,
  matchesEventFilter,
  sha256Hex,
  type Decision,
  type EventDraft,
  type EventFilter,
  type ExecuteOutcome,
  type HistoryEntry,
  type IntentStatus,
  type NormalizedIntent,
  type ReceiptRecord,
  type SignedApproval,
  type VaultEvent,
} from '@vault/sdk';
import { open, type Database, type RootDatabase } from 'lmdb';
import { mkdirSync } from 'node:fs';
import { EXPIRABLE_STATUSES } from './status.js';

/** Internal record of an execution in progress: what was built and submitted, to resume it. */
export interface Submission {
  params: unknown;
  built: { payload: unknown; digest: string; summary: string };
  blob: string;
  txHash: string;
  /** Unix seconds when the blob was first handed to the ledger. */
  submitted_at: number;
  signers: ExecuteOutcome['signers'];
  findings: ExecuteOutcome['findings'];
  weight: number;
  quorum: number;
}

/** An intent as stored. GET /intent/{id} returns it without the internal fields `n` and `submission`. */
export interface IntentRecord {
  intentId: string;
  /** Insertion number: the order of creation (newest first listing). */
  n: number;
  status: IntentStatus;
  decision: Decision;
  intent: NormalizedIntent;
  created_at: number;
  /**
   * created_at + the wallet's time to live when it was created: not executed by then, the intent
   * is expired. Absent on records written before intents expired (read as created_at + the ttl).
   */
  expires_at?: number;
  updated_at: number;
  approvals: SignedApproval[];
  /** Deprecated unsigned approvals: recorded for the audit trail, never counted. */
  unsigned_approvals: { at: number; via: string }[];
  execution: Partial<ExecuteOutcome> | null;
  /** Receipt head returned when the intent was created (a replay returns it unchanged). */
  receipt_head: string;
  rejectedBy?: string;
  /** Who cancelled the intent (`operator`, `device:<id>`) and when; set with status `cancelled`. */
  cancelled?: { by: string; at: number };
  submission?: Submission | null;
  /**
   * The chain parameters and payload last put to the signers, committed before they were asked (so
   * it survives a kill before `submitted`). Signers that signed it will not sign another payload for
   * the intent while it can still land, so the next execute reuses it as long as the ledger says it
   * is live.
   */
  attempt?: { params: unknown; built: { payload: unknown; digest: string; summary: string } } | null;
  /** Number of failed execution attempts (a failed intent may be retried). */
  attempts?: number;
}

/** One queued write: an intent record (with its receipt, if it made one) or a receipt alone, and the receipt's events. */
interface QueuedWrite {
  record: IntentRecord | null;
  receipt: ReceiptRecord | null;
  state?: string;
  events: EventDraft[];
  extra: { isNew?: boolean; known?: [string, string] };
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** One group commit as data: what a shared log stores and what every replica applies, in order. */
export interface CommitBatch {
  writes: { record: IntentRecord | null; receipt: ReceiptRecord | null; extra: { isNew?: boolean; known?: [string, string] } }[];
  events: VaultEvent[];
  /** The receipt head and count after the batch, when it has receipts. */
  meta: StoreMeta | null;
  /** The whole state.json text, when the batch changed it (PostgreSQL: how standbys learn policy, devices, accounts). */
  state?: string;
}

/**
 * Where a store's commits are made durable and shared when it is not alone (the PostgreSQL store):
 * `append` persists a batch, refusing it unless this instance is the writer (fenced by its lease).
 * The LMDB map is then this instance's replica of it.
 */
export interface SharedLog {
  /**
   * Persists `batch` as entry `logSeq` of the log (the one after this replica's last): `text` is
   * its JSON, `sig` the receipt key's signature over logEntryDigest(logSeq, text).
   */
  append(entry: { batch: CommitBatch; text: string; sig: string }, logSeq: number): Promise<number>;
  /** The fencing token of the lease held now, or undefined when none is. */
  readonly fence: number | undefined;
  /** Throws (503, not_writer) unless this instance holds the writer's lease. */
  assertWriter(): void;
  /**
   * Told when a commit failed (in the log, the batch or this map): the store takes no more writes,
   * so the writer must give its lease up rather than hold it for a store that refuses everything.
   */
  commitFailed(error: unknown): void;
}

export interface IntentStoreOptions {
  /** false disables fsync (benchmarks and bulk loads only; never in production). */
  sync?: boolean;
  /** Signs the last receipt of each group commit (the checkpoint). Absent: receipts are stored as given. */
  sealReceipt?: (receipt: ReceiptRecord) => ReceiptRecord;
  /** The shared log the map replicates (PostgreSQL). Absent: the map is the store (LMDB alone). */
  shared?: SharedLog;
  /** Signs a log entry's 32-byte digest with the receipt key (required with `shared`: see logEntryDigest). */
  signLogEntry?: (digest: Uint8Array) => Uint8Array;
  /**
   * The receipt key's public half (hex): a replica checks every batch it applies against it (links,
   * hashes, the batch's closing signature, fences), so what the database hands it is not taken on trust.
   */
  receiptPublicKey?: string;
}

export interface StoreMeta {
  receipts: number;
  head: string;
}

/**
 * The receipt a writer on a shared log chains with every state.json text it shares: its body
 * commits to the text, so a replica adopts only what the receipt key signed for (see #checkReplicated).
 */
export const STATE_SHARED_KIND = 'state.shared';

/** The body of the `state.shared` receipt for a state.json text. */
export function stateSharedBody(text: string): { state_digest: string } {
  return { state_digest: sha256Hex(text) };
}

/**
 * What the writer signs for each entry of a shared log: its position and its exact JSON text, under
 * a prefix no receipt hash can have. A replica applies an entry only with a valid signature, so
 * records, known destinations and events (which no receipt covers) come from the writer too, and
 * an entry replayed at another position is refused.
 */
export function logEntryDigest(logSeq: number, text: string): Uint8Array {
  return fromHex(sha256Hex(`vault-cp-log-entry-v1\n${logSeq}\n${text}`), 'digest', 32);
}

/** Key of the per-wallet history index: [wallet, created_at, n]. */
type HistoryKey = [string, number, number];

/** Key of the expiry and cancellation indexes: [expires_at, n]. */
type ExpiryKey = [number, number];

export class IntentStore {
  // The raw LMDB handles, for this module, tests and benchmarks. @internal keeps them (and lmdb's
  // types) out of the published declarations.
  /** @internal */
  readonly root: RootDatabase;
  /** @internal */
  readonly intents: Database<IntentRecord, string>;
  /** @internal */
  readonly order: Database<string, number>;
  /** @internal */
  readonly history: Database<HistoryEntry, HistoryKey>;
  /** @internal */
  readonly receipts: Database<ReceiptRecord, number>;
  /** @internal */
  readonly meta: Database<unknown, string>;
  /** @internal */
  readonly known: Database<number, [string, string]>;
  /** @internal */
  readonly inflight: Database<number, string>;
  /** @internal The event log (the outbox), keyed by event seq. */
  readonly events: Database<VaultEvent, number>;
  /** @internal Intents that can still expire, by when: what the expiry sweep reads. */
  readonly expiry: Database<string, ExpiryKey>;
  /** @internal Cancelled intents, by when they would have expired: the cancellations signers must hold. */
  readonly cancelled: Database<string, ExpiryKey>;
  /** @internal Each intent's receipts: [intentId, seq] -> seq (GET /intent/{id}/receipts). */
  readonly intentReceipts: Database<number, [string, number]>;
  #nextN: number;
  /** The seq the next committed event takes (1 for the first: `after=evt_…0` reads from the start). */
  #nextEventSeq: number;
  readonly #eventListeners = new Set<(events: readonly VaultEvent[]) => void>();
  readonly #seal: ((receipt: ReceiptRecord) => ReceiptRecord) | undefined;
  #shared: SharedLog | undefined;
  #onState: ((text: string) => Promise<void>) | null = null;
  readonly #receiptKey: string | undefined;
  readonly #signEntry: ((digest: Uint8Array) => Uint8Array) | undefined;
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  #committing = false;
  /** The first failed commit: every later write is refused (the receipt chain must not skip it). */
  #failed: unknown = null;
  #closed = false;

  constructor(path: string, options: IntentStoreOptions = {}) {
    this.#seal = options.sealReceipt;
    this.#shared = options.shared;
    this.#receiptKey = options.receiptPublicKey;
    this.#signEntry = options.signLogEntry;
    mkdirSync(path, { recursive: true, mode: 0o700 });
    this.root = open({
      path,
      // Commit = fsync before the promise resolves (see the module note).
      overlappingSync: false,
      // Beside a shared log the map is a replica, rebuilt from the log: no fsync of its own.
      noSync: options.sync === false || options.shared !== undefined,
      mapSize: 64 * 1024 * 1024 * 1024,
    });
    this.intents = this.root.openDB<IntentRecord, string>({ name: 'intents' });
    this.order = this.root.openDB<string, number>({ name: 'order' });
    this.history = this.root.openDB<HistoryEntry, HistoryKey>({ name: 'history' });
    this.receipts = this.root.openDB<ReceiptRecord, number>({ name: 'receipts' });
    this.meta = this.root.openDB<unknown, string>({ name: 'meta' });
    this.known = this.root.openDB<number, [string, string]>({ name: 'known' });
    this.inflight = this.root.openDB<number, string>({ name: 'inflight' });
    this.events = this.root.openDB<VaultEvent, number>({ name: 'events' });
    this.expiry = this.root.openDB<string, ExpiryKey>({ name: 'expiry' });
    this.cancelled = this.root.openDB<string, ExpiryKey>({ name: 'cancelled' });
    this.intentReceipts = this.root.openDB<number, [string, number]>({ name: 'intent_receipts' });
    // A store written before the index existed gets it built once, from its receipts.
    if (this.meta.get('intent_receipts') !== 1) {
      this.root.transactionSync(() => {
        for (const { value } of this.receipts.getRange({})) if (value.intentId !== undefined) this.intentReceipts.put([value.intentId, value.seq], value.seq);
        this.meta.put('intent_receipts', 1);
      });
    }
    let last = -1;
    for (const { key } of this.order.getRange({ reverse: true, limit: 1 })) last = key;
    this.#nextN = last + 1;
    let lastEvent = 0;
    for (const { key } of this.events.getRange({ reverse: true, limit: 1 })) lastEvent = key;
    this.#nextEventSeq = lastEvent + 1;
  }

  /** The seq of the last committed event (0 when the log is empty). */
  get lastEventSeq(): number {
    return this.#nextEventSeq - 1;
  }

  /** Up to `limit` committed events after `afterSeq` that pass `filter`, in log order. */
  eventsAfter(afterSeq: number, limit: number, filter?: EventFilter): VaultEvent[] {
    return this.eventsPage(afterSeq, limit, filter).events;
  }

  /**
   * One page of the log: up to `limit` events after `afterSeq` that pass `filter`, looking at no
   * more than `scanMax` events (a filter that matches rarely must not walk the whole log in one
   * request). `next` is the cursor to read on from: the last event looked at.
   */
  eventsPage(afterSeq: number, limit: number, filter?: EventFilter, scanMax = Number.MAX_SAFE_INTEGER): { events: VaultEvent[]; next: number } {
    const events: VaultEvent[] = [];
    let next = afterSeq;
    let scanned = 0;
    // Only what is committed: a read may not see past the last seq this store announced.
    const end = this.#nextEventSeq;
    if (afterSeq + 1 >= end || limit <= 0) return { events, next };
    for (const { key, value } of this.events.getRange({ start: afterSeq + 1, end })) {
      next = key;
      if (matchesEventFilter(value, filter)) events.push(value);
      if (events.length >= limit || ++scanned >= scanMax) break;
    }
    return { events, next };
  }

  /**
   * Calls `listener` with the events of every commit, after it is durable, in log order. Returns
   * the function that removes it. A listener that throws is removed (it cannot stop a commit).
   */
  onEvents(listener: (events: readonly VaultEvent[]) => void): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  nextN(): number {
    return this.#nextN++;
  }

  get size(): number {
    return this.#nextN;
  }

  get(id: string): IntentRecord | undefined {
    return this.intents.get(id);
  }

  /**
   * Newest first: up to `limit` records that pass `match` (all when absent), looking at no more
   * than `scanMax` records (a filter that matches rarely must not walk the whole store in one request).
   */
  recent(limit: number, match?: (r: IntentRecord) => boolean, scanMax = Number.MAX_SAFE_INTEGER): IntentRecord[] {
    const out: IntentRecord[] = [];
    if (limit <= 0) return out;
    let scanned = 0;
    for (const { value } of this.order.getRange({ reverse: true, ...(match ? {} : { limit }) })) {
      if (++scanned > scanMax) break;
      const r = this.intents.get(value);
      if (r && (!match || match(r))) {
        out.push(r);
        if (out.length >= limit) break;
      }
    }
    return out;
  }

  /** The wallet's newest intents, newest first (the per-wallet history index, read backwards). */
  recentForWallet(wallet: string, limit: number): IntentRecord[] {
    const out: IntentRecord[] = [];
    for (const { value } of this.history.getRange({ start: [wallet, Number.MAX_SAFE_INTEGER, 0], end: [wallet, 0, 0], reverse: true, limit })) {
      const r = this.intents.get(value.intentId);
      if (r) out.push(r);
    }
    return out;
  }

  /** The wallet's history entries created at or after `since`. */
  historySince(wallet: string, since: number): HistoryEntry[] {
    const out: HistoryEntry[] = [];
    for (const { value } of this.history.getRange({ start: [wallet, since, 0], end: [wallet, Number.MAX_SAFE_INTEGER, 0] })) {
      out.push(value);
    }
    return out;
  }

  isKnown(wallet: string, destination: string): boolean {
    return this.known.get([wallet, destination]) !== undefined;
  }

  knownFor(wallet: string, limit = 10000): string[] {
    const out: string[] = [];
    for (const { key } of this.known.getRange({ start: [wallet, ''], end: [wallet, '\uffff'], limit })) out.push(key[1]);
    return out;
  }

  getMeta(): StoreMeta {
    return (this.meta.get('receipts') as StoreMeta | undefined) ?? { receipts: 0, head: '0'.repeat(64) };
  }

  lastReceipt(): ReceiptRecord | null {
    for (const { value } of this.receipts.getRange({ reverse: true, limit: 1 })) return value;
    return null;
  }

  recentReceipts(limit: number): ReceiptRecord[] {
    return [...this.receipts.getRange({ reverse: true, limit })].map((e) => e.value);
  }

  /** The receipts that name `intentId`, oldest first, at most `limit`. */
  receiptsOf(intentId: string, limit: number): ReceiptRecord[] {
    const out: ReceiptRecord[] = [];
    for (const { value } of this.intentReceipts.getRange({ start: [intentId, 0], end: [intentId, Number.MAX_SAFE_INTEGER], limit })) {
      const r = this.receipts.get(value);
      if (r) out.push(r);
    }
    return out;
  }

  *allReceipts(): Generator<ReceiptRecord> {
    for (const { value } of this.receipts.getRange({})) yield value;
  }

  /** Ids of intents left in `submitted` (to resume confirmation after a restart). */
  inflightIds(): string[] {
    return [...this.inflight.getKeys({})] as string[];
  }

  /** Ids of intents not submitted nor final whose expires_at is at or before `now`, soonest first, at most `limit`. */
  dueForExpiry(now: number, limit: number): string[] {
    const out: string[] = [];
    for (const { value } of this.expiry.getRange({ end: [now + 1, 0], limit })) out.push(value);
    return out;
  }

  /** Cancelled intents that would expire at or after `since`, newest expiry first, at most `limit`. */
  cancelledSince(since: number, limit: number): { intentId: string; expires_at: number }[] {
    const out: { intentId: string; expires_at: number }[] = [];
    for (const { key, value } of this.cancelled.getRange({ start: [Number.MAX_SAFE_INTEGER, 0], end: [since, 0], reverse: true, limit })) {
      out.push({ intentId: value, expires_at: key[0] });
    }
    return out;
  }

  /**
   * Writes an intent (and the receipt it produced) atomically. Resolves once its group is
   * committed to disk; rejects if that commit fails (every write of the group fails with it).
   */
  write(record: IntentRecord, receipt: ReceiptRecord | null, extra: { isNew?: boolean; known?: [string, string] } = {}, events: EventDraft[] = []): Promise<void> {
    return this.#enqueue(record, receipt, extra, events);
  }

  /** Appends a receipt that is not tied to an intent write (with its events). */
  appendReceipt(receipt: ReceiptRecord, events: EventDraft[] = []): Promise<void> {
    return this.#enqueue(null, receipt, {}, events);
  }

  /** Resolves once every write queued so far is committed (or has failed). */
  async drain(): Promise<void> {
    while (this.#queue.length > 0 || this.#committing || this.#scheduled) {
      await new Promise((r) => setImmediate(r));
    }
  }

  #enqueue(record: IntentRecord | null, receipt: ReceiptRecord | null, extra: QueuedWrite['extra'], events: EventDraft[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.#failed !== null) {
        reject(new InternalError('store: an earlier commit failed; no further writes', { cause: this.#failed }));
        return;
      }
      this.#queue.push({ record, receipt, events, extra, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#committing || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#commitGroup();
    });
  }

  async #commitGroup(): Promise<void> {
    const group = this.#queue;
    this.#queue = [];
    this.#committing = true;
    try {
      // Writes queued behind a failed group would chain onto receipts that never reached the disk.
      if (this.#failed !== null) throw new InternalError('store: an earlier commit failed; no further writes', { cause: this.#failed });
      // The checkpoint: the group's last receipt is signed before anything is written.
      let last = -1;
      for (let i = group.length - 1; i >= 0; i--) {
        if (group[i]!.receipt) {
          last = i;
          break;
        }
      }
      if (last >= 0 && this.#seal) group[last]!.receipt = this.#seal(group[last]!.receipt!);
      // The outbox: the group's events take their seqs now and are written in the same
      // transaction as their changes, so one never reaches the disk without the other.
      const events: VaultEvent[] = [];
      let seq = this.#nextEventSeq;
      for (const w of group) {
        for (const d of w.events) {
          events.push({ id: eventId(seq), seq, ...d });
          seq++;
        }
      }
      const head = last >= 0 ? group[last]!.receipt! : null;
      const batch: CommitBatch = {
        writes: group.flatMap((w) => (w.record || w.receipt ? [{ record: w.record, receipt: w.receipt, extra: w.extra }] : [])),
        events,
        meta: head ? { receipts: head.seq + 1, head: head.hash } : null,
      };
      for (const w of group) if (w.state !== undefined) batch.state = w.state;
      // A shared log (PostgreSQL) makes the batch durable first; this map is then its replica.
      let logSeq: number | null = null;
      if (this.#shared) {
        if (!this.#signEntry) throw new InternalError('store: a shared log needs the receipt key to sign its entries');
        const text = JSON.stringify(batch);
        const sig = toHex(this.#signEntry(logEntryDigest(this.appliedLogSeq + 1, text)));
        logSeq = await this.#shared.append({ batch, text, sig }, this.appliedLogSeq + 1);
      }
      await this.#apply(batch, logSeq);
      this.#nextEventSeq = seq;
      for (const w of group) w.resolve();
      if (events.length > 0) this.#announce(events);
    } catch (e) {
      this.#failed ??= e;
      for (const w of group) w.reject(e);
      // Another instance, or this one once its map has caught up with the log and is revived, writes on.
      this.#shared?.commitFailed(e);
    } finally {
      this.#committing = false;
      this.#schedule();
    }
  }

  /** Writes a batch into the map in one abortable transaction: if any put throws, none of it is written. */
  async #apply(batch: CommitBatch, logSeq: number | null): Promise<void> {
    const ok = await this.root.childTransaction(() => {
      for (const w of batch.writes) {
        if (w.record) this.#putRecord(w.record, w.extra);
        if (w.receipt) {
          this.receipts.put(w.receipt.seq, w.receipt);
          if (w.receipt.intentId !== undefined) this.intentReceipts.put([w.receipt.intentId, w.receipt.seq], w.receipt.seq);
        }
      }
      for (const e of batch.events) this.events.put(e.seq, e);
      if (batch.meta) this.meta.put('receipts', batch.meta);
      if (batch.state !== undefined) this.meta.put('state', batch.state);
      if (logSeq !== null) this.meta.put('log_seq', logSeq);
      return true;
    });
    if (ok !== true) throw new InternalError('store: commit failed');
    for (const w of batch.writes) if (w.record && w.extra.isNew && w.record.n >= this.#nextN) this.#nextN = w.record.n + 1;
  }

  /** The position in the shared log this map has applied up to (0: none; a store without a shared log stays 0). */
  get appliedLogSeq(): number {
    return (this.meta.get('log_seq') as number | undefined) ?? 0;
  }

  /**
   * Applies a batch another writer committed to the shared log (`logSeq`, in order, each once):
   * this map follows it, and the batch's events reach this store's listeners as they would have
   * reached the writer's. `text` is the entry as stored, `sig` its signature (logEntryDigest),
   * checked before the text is even parsed. @internal: the shared log calls it.
   */
  async applyReplicated(text: string, sig: string | null, logSeq: number): Promise<void> {
    if (logSeq !== this.appliedLogSeq + 1) throw new InternalError(`store: replica at log seq ${this.appliedLogSeq} cannot apply ${logSeq}`);
    if (this.#receiptKey === undefined) throw new InternalError(`store: log entry ${logSeq} refused: no receipt key to check it with`);
    if (typeof sig !== 'string' || !/^[0-9a-f]{128}$/.test(sig) || !verifyEd25519(fromHex(sig, 'sig', 64), logEntryDigest(logSeq, text), fromHex(this.#receiptKey, 'receipt key', 32))) {
      throw new InternalError(`store: log entry ${logSeq} refused: not signed by the receipt key`);
    }
    const batch = JSON.parse(text) as CommitBatch;
    this.#checkReplicated(batch, logSeq);
    await this.#apply(batch, logSeq);
    const lastEvent = batch.events.at(-1);
    if (lastEvent && lastEvent.seq >= this.#nextEventSeq) this.#nextEventSeq = lastEvent.seq + 1;
    if (batch.events.length > 0) this.#announce(batch.events);
    if (batch.state !== undefined && this.#onState) await this.#onState(batch.state);
  }

  /**
   * A batch from the log must continue this replica's chain: consecutive seqs linked to its head,
   * every hash recomputed, ending on a receipt signed by the receipt key, fences never going down,
   * and its anchored head what its receipts say. Anyone able to write the database but without the
   * receipt key can add or change nothing a replica accepts.
   */
  #checkReplicated(batch: CommitBatch, logSeq: number): void {
    const receipts = batch.writes.flatMap((w) => (w.receipt ? [w.receipt] : []));
    const fail = (why: string): never => {
      throw new InternalError(`store: log entry ${logSeq} refused: ${why}`);
    };
    // A state.json text rides with the signed receipt that commits to it, and that receipt with
    // its text: neither a state the database invented nor a shared one dropped (a revocation
    // hidden from standbys) passes. The chain check below proves the receipt is the writer's.
    const shared = receipts.filter((r) => r.kind === STATE_SHARED_KIND).at(-1);
    if (batch.state !== undefined || shared !== undefined) {
      if (shared === undefined) fail('it carries a state.json without a state.shared receipt');
      if (typeof batch.state !== 'string') fail('its state.shared receipt comes without the state.json');
      if (shared!.body_digest !== sha256Hex(canonicalize(stateSharedBody(batch.state!)))) fail('its state.json is not the one its state.shared receipt commits to');
    }
    if (receipts.length === 0) {
      if (batch.meta !== null) fail('it anchors a head without receipts');
      return;
    }
    if (this.#receiptKey === undefined) fail('no receipt key to check it with');
    const last = this.lastReceipt();
    const check = verifyReceiptChain(receipts, this.#receiptKey!, { startPrev: last?.hash ?? GENESIS_PREV, startSeq: last ? last.seq + 1 : 0 });
    if (!check.verified) fail(check.message);
    if (last?.fence !== undefined && (receipts[0]!.fence ?? 0) < last.fence) fail(`fencing token ${receipts[0]!.fence ?? 'none'} after ${last.fence}`);
    const head = receipts.at(-1)!;
    if (batch.meta === null || batch.meta.head !== head.hash || batch.meta.receipts !== head.seq + 1) fail('its anchored head is not its last receipt');
  }

  /**
   * Shares a new state.json text through the log with its `state.shared` receipt (Writer.shareState
   * chains it), in the next group commit, in call order with the writes around it. Resolves once
   * committed; a store without a shared log has nothing to share.
   */
  shareState(text: string, receipt: ReceiptRecord, events: EventDraft[] = []): Promise<void> {
    if (!this.#shared) return Promise.resolve();
    if (receipt.kind !== STATE_SHARED_KIND) throw new InternalError(`store: state.json is shared with a ${STATE_SHARED_KIND} receipt, not ${receipt.kind}`);
    return new Promise<void>((resolve, reject) => {
      if (this.#failed !== null) {
        reject(new InternalError('store: an earlier commit failed; no further writes', { cause: this.#failed }));
        return;
      }
      this.#queue.push({ record: null, receipt, state: text, events, extra: {}, resolve, reject });
      this.#schedule();
    });
  }

  /** The last state.json text the shared log carried, as this replica has it (undefined: none yet). */
  get sharedState(): string | undefined {
    return this.meta.get('state') as string | undefined;
  }

  /** Called with each state.json text a replicated batch carries, in log order (the control plane adopts it). */
  onSharedState(fn: (text: string) => Promise<void>): void {
    this.#onState = fn;
  }

  /**
   * After a takeover: forgets an earlier failed commit (the shared log, not this map, is the record;
   * the map has just caught up with it). Only a shared-log store may be revived.
   */
  revive(): void {
    if (!this.#shared) throw new InternalError('store: only a store on a shared log can be revived');
    this.#failed = null;
  }

  /** The fencing token receipts must carry (the writer's lease), or undefined for a store of one writer. */
  get fence(): number | undefined {
    return this.#shared?.fence;
  }

  /** Throws unless this store may write now (a shared log: this instance holds the writer's lease). */
  assertWriter(): void {
    this.#shared?.assertWriter();
  }

  #announce(events: readonly VaultEvent[]): void {
    for (const l of this.#eventListeners) {
      try {
        l(events);
      } catch {
        this.#eventListeners.delete(l);
      }
    }
  }

  #putRecord(record: IntentRecord, extra: QueuedWrite['extra']): void {
    this.intents.put(record.intentId, record);
    if (extra.isNew) this.order.put(record.n, record.intentId);
    this.history.put([record.intent.wallet, record.created_at, record.n], historyEntry(record));
    if (record.status === 'submitted') this.inflight.put(record.intentId, record.n);
    else if (!extra.isNew) this.inflight.remove(record.intentId);
    if (extra.known) this.known.put(extra.known, 1);
    if (record.expires_at !== undefined) {
      const key: ExpiryKey = [record.expires_at, record.n];
      if (EXPIRABLE_STATUSES.has(record.status)) this.expiry.put(key, record.intentId);
      else this.expiry.remove(key);
      if (record.status === 'cancelled') this.cancelled.put(key, record.intentId);
    }
  }

  /** Why this store takes no writes (a failed commit, or closed), or null while it does: GET /ready reads it. */
  get fault(): string | null {
    if (this.#closed) return 'closed';
    return this.#failed === null ? null : 'an earlier commit failed; no further writes until a restart';
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.drain();
    await this.root.close();
  }
}

export function historyEntry(r: IntentRecord): HistoryEntry {
  const e: HistoryEntry = {
    intentId: r.intentId,
    created_at: r.created_at,
    amount: r.intent.amount,
    status: r.status,
    initiator: r.intent.initiator,
    op: r.intent.operation.op,
  };
  if (r.intent.asset_symbol !== undefined) e.asset_symbol = r.intent.asset_symbol;
  if (r.intent.asset_issuer !== undefined) e.asset_issuer = r.intent.asset_issuer;
  return e;
}
