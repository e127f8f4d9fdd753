/**
 * @module signer/state
 * The signer's durable memory: one append-only journal (`journal.jsonl`) whose every line is a
 * signed receipt plus the state events it commits (first sight of an intent, a signature, a
 * payload proven dead). A line is written and fdatasync'd before /sign replies, so a crash
 * (even kill -9) leaves either the whole line or a torn tail, which the next start cuts off;
 * the receipt chain is then re-verified from genesis. One line, one fsync: receipts and the state
 * they describe can never disagree.
 */
import {
  ContributionSchema,
  ReceiptChain,
  ReceiptRecordSchema,
  InternalError,
  type Contribution,
  type HistoryEntry,
  type ReceiptInput,
  type ReceiptRecord,
} from '@vault/sdk';
import { closeSync, existsSync, fdatasync, fdatasyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { HistoryBuckets } from '../history-buckets.js';
import { z } from 'zod';

const HistoryEntrySchema = z.strictObject({
  intentId: z.string(),
  created_at: z.int(),
  amount: z.string(),
  status: z.enum(['allowed', 'pending_approvals', 'timelocked', 'denied', 'submitted', 'confirmed', 'failed']),
  initiator: z.string(),
  op: z.enum(['transfer', 'issue', 'authorize_holder', 'clawback', 'mpt_create', 'account_flags', 'contract_call']),
  asset_symbol: z.string().optional(),
  asset_issuer: z.string().optional(),
});

export const StateEventSchema = z.discriminatedUnion('t', [
  /** The first time this signer saw a well-formed request for the intent (timelocks count from here). */
  z.strictObject({ t: z.literal('seen'), intentId: z.string(), at: z.int() }),
  z.strictObject({
    t: z.literal('signed'),
    intentId: z.string(),
    wallet: z.string(),
    chain: z.string(),
    at: z.int(),
    digest: z.string(),
    payload: z.unknown(),
    summary: z.string(),
    signer_address: z.string(),
    contribution: ContributionSchema,
    history: HistoryEntrySchema,
  }),
  /** A payload of the intent the ledger says can never land (checked before a different one is signed). */
  z.strictObject({ t: z.literal('dead'), intentId: z.string(), digest: z.string(), at: z.int(), code: z.string() }),
]);
export type StateEvent = z.infer<typeof StateEventSchema>;
export type SignedEvent = Extract<StateEvent, { t: 'signed' }>;

const JournalLineSchema = z.strictObject({ receipt: ReceiptRecordSchema, events: z.array(StateEventSchema) });

/** A payload signed for an intent, and whether the ledger has since proven it dead. */
export interface SignedPayload {
  digest: string;
  payload: unknown;
  summary: string;
  chain: string;
  dead: boolean;
  /** Contributions given for it, one per signer address. */
  contributions: Map<string, Contribution>;
}

export class SignerState {
  readonly #chain: ReceiptChain;
  readonly #fd: number;
  readonly #lockPath: string;
  readonly #seen = new Map<string, number>();
  readonly #signed = new Map<string, SignedPayload[]>();
  /** wallet -> intentId -> entry (each signed intent counts once, at its first signature) */
  readonly #history = new Map<string, Map<string, HistoryEntry>>();
  /** wallet -> the same entries aggregated per second (what caps and budgets read). */
  readonly #buckets = new Map<string, HistoryBuckets>();
  #closed = false;
  /** Lines written / lines known to be on disk (group commit: one fdatasync covers every line before it). */
  #written = 0;
  #synced = 0;
  #flushing: Promise<void> | null = null;
  #failed: Error | null = null;
  /** Bytes cut from a torn tail at open (a crash mid-append). */
  readonly repairedBytes: number;

  private constructor(chain: ReceiptChain, fd: number, lockPath: string, repairedBytes: number) {
    this.#chain = chain;
    this.#fd = fd;
    this.#lockPath = lockPath;
    this.repairedBytes = repairedBytes;
  }

  /**
   * Opens (creating) the journal in `dir`, cuts a torn tail, verifies the whole receipt chain
   * with the receipt key and replays the state events. Refuses a journal that does not verify,
   * and a directory another live signer process holds.
   */
  static open(dir: string, receiptKey: Uint8Array): SignerState {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (process.platform !== 'win32') chmodSync(dir, 0o700);
    const lockPath = join(dir, 'signer.lock');
    acquireLock(lockPath);
    try {
      const path = join(dir, 'journal.jsonl');
      const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
      const end = text.lastIndexOf('\n') + 1;
      const lines = text.slice(0, end).split('\n').filter((l) => l.length > 0);
      const parsed = lines.map((line, i) => {
        let raw: unknown;
        try {
          raw = JSON.parse(line);
        } catch (cause) {
          throw new InternalError(`journal line ${i + 1} is not JSON: the journal is corrupt`, { cause });
        }
        const r = JournalLineSchema.safeParse(raw);
        if (!r.success) throw new InternalError(`journal line ${i + 1} is malformed: ${r.error.issues[0]?.message ?? ''}`);
        return r.data;
      });
      let chain: ReceiptChain;
      try {
        chain = new ReceiptChain(receiptKey, parsed.map((p) => p.receipt));
      } catch (cause) {
        const why = cause instanceof Error ? cause.message : String(cause);
        throw new InternalError(`the receipt chain in the journal does not verify with this receipt key: ${why}`, { cause });
      }
      const fd = openSync(path, 'a+', 0o600);
      const repaired = text.length - end;
      if (repaired > 0) {
        ftruncateSync(fd, Buffer.byteLength(text.slice(0, end), 'utf8'));
        fdatasyncSync(fd);
      }
      const state = new SignerState(chain, fd, lockPath, repaired);
      for (const p of parsed) for (const e of p.events) state.#apply(e);
      return state;
    } catch (e) {
      releaseLock(lockPath);
      throw e;
    }
  }

  #apply(e: StateEvent): void {
    switch (e.t) {
      case 'seen':
        if (!this.#seen.has(e.intentId)) this.#seen.set(e.intentId, e.at);
        break;
      case 'signed': {
        const list = this.#signed.get(e.intentId) ?? [];
        let p = list.find((x) => x.digest === e.digest);
        if (!p) {
          p = { digest: e.digest, payload: e.payload, summary: e.summary, chain: e.chain, dead: false, contributions: new Map() };
          list.push(p);
          this.#signed.set(e.intentId, list);
        }
        p.contributions.set(e.signer_address, e.contribution);
        const byWallet = this.#history.get(e.wallet) ?? new Map<string, HistoryEntry>();
        if (!byWallet.has(e.intentId)) {
          const entry = e.history as HistoryEntry;
          byWallet.set(e.intentId, entry);
          const buckets = this.#buckets.get(e.wallet) ?? new HistoryBuckets();
          buckets.add(entry);
          this.#buckets.set(e.wallet, buckets);
        }
        this.#history.set(e.wallet, byWallet);
        break;
      }
      case 'dead': {
        const p = this.#signed.get(e.intentId)?.find((x) => x.digest === e.digest);
        if (p) p.dead = true;
        break;
      }
    }
  }

  /**
   * Appends one receipt with the events it commits and applies them in memory. The line is
   * written at once (so the order of lines is the order of commits) but is only durable once
   * `durable(ticket)` resolves: callers must await that before replying. Callers serialise commits
   * (the signer holds one lock around verify-and-commit) and wait for durability outside it, so
   * one fdatasync covers every request that committed meanwhile (group commit).
   */
  commit(input: ReceiptInput, events: readonly StateEvent[] = []): ReceiptRecord {
    if (this.#closed) throw new InternalError('signer state is closed');
    if (this.#failed) throw new InternalError('signer state failed to reach the disk; restart the signer', { cause: this.#failed });
    for (const e of events) StateEventSchema.parse(e);
    const receipt = this.#chain.append(input);
    const line = `${JSON.stringify({ receipt, events })}\n`;
    const bytes = Buffer.from(line, 'utf8');
    let off = 0;
    while (off < bytes.length) off += writeSync(this.#fd, bytes, off, bytes.length - off);
    this.#written += 1;
    for (const e of events) this.#apply(e);
    return receipt;
  }

  /** The ticket of the last line written: pass it to durable(). */
  get ticket(): number {
    return this.#written;
  }

  /** Resolves once every line up to `ticket` (default: all written so far) is fdatasync'd. */
  async durable(ticket = this.#written): Promise<void> {
    while (this.#synced < ticket) {
      if (this.#failed) throw new InternalError('signer state failed to reach the disk', { cause: this.#failed });
      if (!this.#flushing) {
        const target = this.#written;
        this.#flushing = new Promise<void>((resolve, reject) => {
          fdatasync(this.#fd, (err) => {
            this.#flushing = null;
            if (err) {
              this.#failed = err;
              reject(new InternalError('fdatasync of the journal failed', { cause: err }));
            } else {
              this.#synced = Math.max(this.#synced, target);
              resolve();
            }
          });
        });
      }
      await this.#flushing;
    }
  }

  /** commit() and wait until it is on disk. */
  async commitDurably(input: ReceiptInput, events: readonly StateEvent[] = []): Promise<ReceiptRecord> {
    const r = this.commit(input, events);
    await this.durable(this.#written);
    return r;
  }

  /** When this signer first saw the intent, if it has. */
  firstSeen(intentId: string): number | undefined {
    return this.#seen.get(intentId);
  }

  /** Payloads signed for an intent, oldest first. */
  signedFor(intentId: string): readonly SignedPayload[] {
    return this.#signed.get(intentId) ?? [];
  }

  /**
   * What this signer has signed for a wallet, as policy history (velocity caps, agent budgets):
   * per-second aggregates of the intents signed at or after `since` (the SDK's policyLookback
   * bounds it), without the intent `exclude` itself (it is being signed again).
   */
  history(wallet: string, since = 0, exclude?: string): HistoryEntry[] {
    const excluded = exclude === undefined ? undefined : this.#history.get(wallet)?.get(exclude);
    return this.#buckets.get(wallet)?.entries(since, excluded) ?? [];
  }

  get head(): string {
    return this.#chain.head;
  }

  get length(): number {
    return this.#chain.length;
  }

  get receiptPublicKey(): string {
    return this.#chain.publicKeyHex;
  }

  /** Newest first. */
  recent(limit: number): ReceiptRecord[] {
    return this.#chain.recent(limit);
  }

  /** The SDK's verifier over the whole chain. */
  verify() {
    return this.#chain.verify();
  }

  /** Every record, oldest first. */
  records(): readonly ReceiptRecord[] {
    return this.#chain.records();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      fdatasyncSync(this.#fd);
    } catch {
      // best effort; nothing unsynced was acknowledged
    }
    closeSync(this.#fd);
    releaseLock(this.#lockPath);
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One signer process per state directory: a second would fork the receipt chain. */
function acquireLock(path: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(pid) && pid > 0 && pidAlive(pid)) {
        throw new InternalError(`state directory is in use by signer process ${pid} (${path})`);
      }
      // Stale lock from a process that died (kill -9): take it over.
      unlinkSync(path);
    }
  }
  throw new InternalError(`cannot lock ${path}`);
}

function releaseLock(path: string): void {
  try {
    if (Number.parseInt(readFileSync(path, 'utf8'), 10) === process.pid) unlinkSync(path);
  } catch {
    // already gone
  }
}

