/**
 * @module control-plane/store
 * Durable storage of intents and receipts in LMDB (a memory-mapped B-tree): start-up opens the
 * map without loading it, reads are synchronous page lookups, and writes queued in one event turn
 * commit as one transaction. `overlappingSync: false` makes every commit fsync before its promise
 * resolves, so a reply sent after `await` is on disk; LMDB's copy-on-write pages mean a kill -9
 * leaves the last committed transaction, never a half-written one.
 */
import {
  InternalError,
  type Decision,
  type ExecuteOutcome,
  type HistoryEntry,
  type IntentStatus,
  type NormalizedIntent,
  type ReceiptRecord,
  type SignedApproval,
} from '@vault/sdk';
import { open, type Database, type RootDatabase } from 'lmdb';
import { mkdirSync } from 'node:fs';

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
  updated_at: number;
  approvals: SignedApproval[];
  /** Deprecated unsigned approvals: recorded for the audit trail, never counted. */
  unsigned_approvals: { at: number; via: string }[];
  execution: Partial<ExecuteOutcome> | null;
  /** Receipt head returned when the intent was created (a replay returns it unchanged). */
  receipt_head: string;
  rejectedBy?: string;
  submission?: Submission | null;
  /**
   * The chain parameters and payload of an execution that stopped short of quorum. Signers that
   * signed it will not sign another payload for the intent while it can still land, so the next
   * execute reuses it as long as the ledger says it is live.
   */
  attempt?: { params: unknown; built: { payload: unknown; digest: string; summary: string } } | null;
  /** Number of failed execution attempts (a failed intent may be retried). */
  attempts?: number;
}

export interface StoreMeta {
  receipts: number;
  head: string;
}

/** Key of the per-wallet history index: [wallet, created_at, n]. */
type HistoryKey = [string, number, number];

export class IntentStore {
  readonly root: RootDatabase;
  readonly intents: Database<IntentRecord, string>;
  readonly order: Database<string, number>;
  readonly history: Database<HistoryEntry, HistoryKey>;
  readonly receipts: Database<ReceiptRecord, number>;
  readonly meta: Database<unknown, string>;
  readonly known: Database<number, [string, string]>;
  readonly inflight: Database<number, string>;
  #nextN: number;

  constructor(path: string, options: { sync?: boolean } = {}) {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    this.root = open({
      path,
      // Commit = fsync before the promise resolves (see the module note).
      overlappingSync: false,
      noSync: options.sync === false,
      mapSize: 64 * 1024 * 1024 * 1024,
    });
    this.intents = this.root.openDB<IntentRecord, string>({ name: 'intents' });
    this.order = this.root.openDB<string, number>({ name: 'order' });
    this.history = this.root.openDB<HistoryEntry, HistoryKey>({ name: 'history' });
    this.receipts = this.root.openDB<ReceiptRecord, number>({ name: 'receipts' });
    this.meta = this.root.openDB<unknown, string>({ name: 'meta' });
    this.known = this.root.openDB<number, [string, string]>({ name: 'known' });
    this.inflight = this.root.openDB<number, string>({ name: 'inflight' });
    let last = -1;
    for (const { key } of this.order.getRange({ reverse: true, limit: 1 })) last = key;
    this.#nextN = last + 1;
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

  /** Newest first. */
  recent(limit: number): IntentRecord[] {
    const out: IntentRecord[] = [];
    for (const { value } of this.order.getRange({ reverse: true, limit })) {
      const r = this.intents.get(value);
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

  *allReceipts(): Generator<ReceiptRecord> {
    for (const { value } of this.receipts.getRange({})) yield value;
  }

  /** Ids of intents left in `submitted` (to resume confirmation after a restart). */
  inflightIds(): string[] {
    return [...this.inflight.getKeys({})] as string[];
  }

  /**
   * Writes an intent (and the receipt it produced) atomically. Resolves once committed to disk.
   */
  async write(record: IntentRecord, receipt: ReceiptRecord | null, extra: { isNew?: boolean; known?: [string, string] } = {}): Promise<void> {
    const entry = historyEntry(record);
    const ok = await this.root.transaction(() => {
      this.intents.put(record.intentId, record);
      if (extra.isNew) this.order.put(record.n, record.intentId);
      this.history.put([record.intent.wallet, record.created_at, record.n], entry);
      if (receipt) {
        this.receipts.put(receipt.seq, receipt);
        this.meta.put('receipts', { receipts: receipt.seq + 1, head: receipt.hash } satisfies StoreMeta);
      }
      if (record.status === 'submitted') this.inflight.put(record.intentId, record.n);
      else this.inflight.remove(record.intentId);
      if (extra.known) this.known.put(extra.known, 1);
      return true;
    });
    if (ok !== true) throw new InternalError('store: commit failed');
  }

  /** Appends a receipt that is not tied to an intent write. */
  async appendReceipt(receipt: ReceiptRecord): Promise<void> {
    await this.root.transaction(() => {
      this.receipts.put(receipt.seq, receipt);
      this.meta.put('receipts', { receipts: receipt.seq + 1, head: receipt.hash } satisfies StoreMeta);
    });
  }

  async close(): Promise<void> {
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
