/**
 * @module signer/state
 * The signer's durable memory: one append-only journal (`journal.jsonl`) whose every line is a
 * receipt plus the state events it commits (first sight of an intent, a signature, a payload
 * proven dead). Group commit: lines committed while a flush is in flight are written together,
 * the last one's receipt signed (a checkpoint: it vouches for the unsigned ones before it through
 * the hash chain; see the SDK's receipts module), then one fdatasync covers them all; /sign
 * replies only after that. A crash (even kill -9) leaves a journal that ends on a checkpoint,
 * or a tail that does not: a torn line or complete lines of a group whose checkpoint never
 * reached the disk. None of that tail was acknowledged, so the next start cuts it off and
 * re-verifies the receipt chain from genesis. Receipts and the state they describe are on the
 * same lines, so they can never disagree. Restrictions (revocations and freezes the control plane
 * pushed, lifts the operator made) are state events too: they survive restarts like signatures.
 */
import {
  AdminPolicySchema,
  ChangeApprovalSchema,
  ChangeSetSchema,
  ContributionSchema,
  indexRestrictions,
  restrictionDigest,
  restrictionKey,
  RestrictionSchema,
  type Restriction,
  type RestrictionIndex,
  GENESIS_PREV,
  ReceiptChain,
  verifyReceiptChain,
  ReceiptRecordSchema,
  InternalError,
  type Contribution,
  type HistoryEntry,
  type ReceiptInput,
  type ReceiptRecord,
} from '@vault/sdk';
import { closeSync, existsSync, fdatasync, fdatasyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { HistoryBuckets } from '../history-buckets.js';
import { acquireStateLock } from '../state-lock.js';
import { z } from 'zod';

const HistoryEntrySchema = z.strictObject({
  intentId: z.string(),
  created_at: z.int(),
  amount: z.string(),
  status: z.enum(['allowed', 'pending_approvals', 'timelocked', 'denied', 'submitted', 'confirmed', 'failed', 'cancelled', 'expired']),
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
    /** The intent's destination (journals written before it was recorded lack it). */
    destination: z.string().optional(),
  }),
  /** A payload of the intent the ledger says can never land (checked before a different one is signed). */
  z.strictObject({ t: z.literal('dead'), intentId: z.string(), digest: z.string(), at: z.int(), code: z.string() }),
  /** A restriction taken on (POST /restrictions): it removes power until the operator lifts it. */
  z.strictObject({ t: z.literal('restricted'), restriction: RestrictionSchema, at: z.int() }),
  /** A restriction the operator lifted on the signer host (`vault-signer lift`). */
  z.strictObject({ t: z.literal('lifted'), restriction: RestrictionSchema, at: z.int() }),
  /**
   * A change set the admin quorum approved, taken on (POST /governance/changes): with the
   * approvals that carried it and the governance it left, so a restart on an older trust file
   * replays it instead of going back.
   */
  z.strictObject({
    t: z.literal('governed'),
    digest: z.string(),
    version: z.int().min(1),
    ready_at: z.int(),
    change: ChangeSetSchema,
    approvals: z.array(ChangeApprovalSchema),
    governance: AdminPolicySchema,
    at: z.int(),
  }),
]);
export type StateEvent = z.infer<typeof StateEventSchema>;
export type SignedEvent = Extract<StateEvent, { t: 'signed' }>;
export type GovernedEvent = Extract<StateEvent, { t: 'governed' }>;

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
  readonly #release: () => void;
  readonly #seen = new Map<string, number>();
  readonly #signed = new Map<string, SignedPayload[]>();
  /** wallet -> intentId -> entry (each signed intent counts once, at its first signature) */
  readonly #history = new Map<string, Map<string, HistoryEntry>>();
  /** wallet -> destinations this signer has signed for (the address_poisoning guard's own knowledge). */
  readonly #destinations = new Map<string, Set<string>>();
  /** wallet -> the same entries aggregated per second (what caps and budgets read). */
  readonly #buckets = new Map<string, HistoryBuckets>();
  /** restrictionKey -> the restriction in force and when it was taken on. */
  readonly #restrictions = new Map<string, { since: number; restriction: Restriction }>();
  /** Worked out from #restrictions when first read after a change. */
  #restrictionIndex: RestrictionIndex | null = null;
  #restrictionDigest: string | null = null;
  /** Change sets taken on, in the order applied (versions strictly increasing). */
  readonly #governed: GovernedEvent[] = [];
  readonly #governedDigests = new Set<string>();
  #closed = false;
  /** Lines written / lines known to be on disk (group commit: one fdatasync covers every line before it). */
  #written = 0;
  #synced = 0;
  #flushing: Promise<void> | null = null;
  #failed: Error | null = null;
  /** Lines committed in memory and not yet written: the next flush writes them as one group. */
  #pending: { receipt: ReceiptRecord; events: readonly StateEvent[] }[] = [];
  /** Bytes cut from a torn tail at open (a crash mid-append). */
  readonly repairedBytes: number;

  private constructor(chain: ReceiptChain, fd: number, release: () => void, repairedBytes: number) {
    this.#chain = chain;
    this.#fd = fd;
    this.#release = release;
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
    // One signer process per state directory: a second would fork the receipt chain.
    const release = acquireStateLock(join(dir, 'signer.lock'), (pid) => new InternalError(`state directory ${dir} is in use by signer process ${pid}`));
    try {
      const path = join(dir, 'journal.jsonl');
      const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
      let end = text.lastIndexOf('\n') + 1;
      const lines = text.slice(0, end).split('\n').filter((l) => l.length > 0);
      let parsed = lines.map((line, i) => {
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
      // Complete lines after the last checkpoint belong to a group whose flush never finished:
      // never acknowledged, so cut like a torn line.
      let keep = parsed.length;
      while (keep > 0 && parsed[keep - 1]!.receipt.sig === undefined) keep -= 1;
      if (keep < parsed.length) {
        end = lines.slice(0, keep).reduce((n, l) => n + l.length + 1, 0);
        parsed = parsed.slice(0, keep);
      }
      let chain: ReceiptChain;
      try {
        chain = new ReceiptChain(receiptKey, parsed.map((p) => p.receipt));
      } catch (cause) {
        const why = cause instanceof Error ? cause.message : String(cause);
        throw new InternalError(`the receipt chain in the journal does not verify with this receipt key: ${why}`, { cause });
      }
      const fd = openSync(path, 'a+', 0o600);
      const repaired = Buffer.byteLength(text, 'utf8') - Buffer.byteLength(text.slice(0, end), 'utf8');
      if (repaired > 0) {
        ftruncateSync(fd, Buffer.byteLength(text.slice(0, end), 'utf8'));
        fdatasyncSync(fd);
      }
      const state = new SignerState(chain, fd, release, repaired);
      for (const p of parsed) for (const e of p.events) state.#apply(e);
      return state;
    } catch (e) {
      release();
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
        if (e.destination !== undefined) {
          const known = this.#destinations.get(e.wallet) ?? new Set<string>();
          known.add(e.destination);
          this.#destinations.set(e.wallet, known);
        }
        break;
      }
      case 'dead': {
        const p = this.#signed.get(e.intentId)?.find((x) => x.digest === e.digest);
        if (p) p.dead = true;
        break;
      }
      case 'restricted': {
        const key = restrictionKey(e.restriction);
        if (this.#restrictions.has(key)) break;
        this.#restrictions.set(key, { since: e.at, restriction: e.restriction });
        this.#restrictionIndex = null;
        this.#restrictionDigest = null;
        break;
      }
      case 'lifted':
        if (this.#restrictions.delete(restrictionKey(e.restriction))) {
          this.#restrictionIndex = null;
          this.#restrictionDigest = null;
        }
        break;
      case 'governed': {
        const last = this.#governed[this.#governed.length - 1];
        // Versions only move forward, in the journal as at the route.
        if (last !== undefined && e.version <= last.version) throw new InternalError(`journal: change set version ${e.version} after version ${last.version}`);
        this.#governed.push(e);
        this.#governedDigests.add(e.digest);
        break;
      }
    }
  }

  /** The change sets taken on, oldest first. */
  governedChanges(): readonly GovernedEvent[] {
    return this.#governed;
  }

  /** Digests of every change set taken on (a push of one again is a replay). */
  get governedDigests(): ReadonlySet<string> {
    return this.#governedDigests;
  }

  /**
   * Commits one receipt with the events it commits and applies them in memory. The line is only
   * durable once `durable(ticket)` resolves: callers must await that before replying. Callers
   * serialise commits (the signer holds one lock around verify-and-commit) and wait for
   * durability outside it, so one flush covers every request that committed meanwhile.
   */
  commit(input: ReceiptInput, events: readonly StateEvent[] = []): ReceiptRecord {
    if (this.#closed) throw new InternalError('signer state is closed');
    if (this.#failed) throw new InternalError('signer state failed to reach the disk; restart the signer', { cause: this.#failed });
    for (const e of events) StateEventSchema.parse(e);
    const receipt = this.#chain.append(input, { sign: false });
    this.#pending.push({ receipt, events });
    this.#written += 1;
    for (const e of events) this.#apply(e);
    return receipt;
  }

  /** The ticket of the last line committed: pass it to durable(). */
  get ticket(): number {
    return this.#written;
  }

  /** Resolves once every line up to `ticket` (default: all committed so far) is fdatasync'd. */
  async durable(ticket = this.#written): Promise<void> {
    while (this.#synced < ticket) {
      if (this.#failed) throw new InternalError('signer state failed to reach the disk', { cause: this.#failed });
      if (!this.#flushing) {
        const target = this.#written;
        try {
          this.#writePending();
        } catch (err) {
          this.#failed = err as Error;
          throw new InternalError('writing the journal failed', { cause: err });
        }
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

  /** Writes the pending group, its last receipt sealed (signed), in one append. */
  #writePending(): void {
    const group = this.#pending;
    if (group.length === 0) return;
    this.#pending = [];
    const sealed = this.#chain.seal();
    if (sealed === null || sealed.hash !== group[group.length - 1]!.receipt.hash) throw new InternalError('journal: the receipt chain does not end on the pending group');
    group[group.length - 1]!.receipt = sealed;
    let text = '';
    for (const line of group) text += `${JSON.stringify({ receipt: line.receipt, events: line.events })}\n`;
    const bytes = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < bytes.length) off += writeSync(this.#fd, bytes, off, bytes.length - off);
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

  /** The restrictions in force, indexed for the sign checks (the same object until they change). */
  get restrictions(): RestrictionIndex {
    return (this.#restrictionIndex ??= indexRestrictions([...this.#restrictions.values()].map((r) => r.restriction)));
  }

  /** Whether this restriction is in force. */
  restricted(restriction: Restriction): boolean {
    return this.#restrictions.has(restrictionKey(restriction));
  }

  /** The restrictions in force with when each was taken on, in restrictionKey order. */
  restrictionsInForce(): { since: number; restriction: Restriction }[] {
    return [...this.#restrictions.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  }

  /** How many restrictions are in force, and the restrictionDigest of them all. */
  get restrictionCount(): number {
    return this.#restrictions.size;
  }

  /** How many restrictions in force count toward MAX_RESTRICTIONS_IN_FORCE (all but cancel_intent). */
  get cappedRestrictionCount(): number {
    return this.#restrictions.size - this.restrictions.intents.size;
  }

  get restrictionDigest(): string {
    return (this.#restrictionDigest ??= restrictionDigest([...this.#restrictions.values()].map((r) => r.restriction)));
  }

  /** Destinations this signer has signed for on a wallet, in the order it first did. */
  destinationsFor(wallet: string): readonly string[] {
    const known = this.#destinations.get(wallet);
    return known === undefined ? [] : [...known];
  }

  /** Payloads signed for an intent, oldest first. */
  signedFor(intentId: string): readonly SignedPayload[] {
    return this.#signed.get(intentId) ?? [];
  }

  /**
   * What this signer has signed for a wallet, as policy history (velocity caps, agent budgets) at
   * `now` for a policy reading `windows` (the SDK's policyWindows): one aggregate per
   * asset/initiator/operation and stretch between window edges, without the intent `exclude`
   * itself (it is being signed again). A cap costs the same however many seconds saw a signature
   * (history-buckets.ts).
   */
  historyFor(wallet: string, now: number, windows: readonly (number | null)[], exclude?: string): HistoryEntry[] {
    const excluded = exclude === undefined ? undefined : this.#history.get(wallet)?.get(exclude);
    return this.#buckets.get(wallet)?.windowed(now, windows, excluded) ?? [];
  }

  /**
   * The head of the journal as written: records committed in memory but not yet written (their
   * group's checkpoint is not signed yet) are not shown by head, length, recent, records or verify,
   * so what the signer reports always ends on a signed record.
   */
  get head(): string {
    const n = this.length;
    return n === 0 ? GENESIS_PREV : (this.#chain.records()[n - 1] as ReceiptRecord).hash;
  }

  get length(): number {
    return this.#chain.length - this.#pending.length;
  }

  get receiptPublicKey(): string {
    return this.#chain.publicKeyHex;
  }

  /** Newest first. */
  recent(limit: number): ReceiptRecord[] {
    const n = this.length;
    return this.#chain.records().slice(Math.max(0, n - Math.max(0, limit)), n).reverse();
  }

  /** The SDK's verifier over every written record. */
  verify() {
    return verifyReceiptChain(this.records(), this.#chain.publicKeyHex, { head: this.head, length: this.length });
  }

  /** Every written record, oldest first. */
  records(): readonly ReceiptRecord[] {
    return this.#chain.records().slice(0, this.length);
  }

  /** Why this state takes no writes (closed, or a journal write failed), or null while it does: GET /ready reads it. */
  get fault(): string | null {
    if (this.#closed) return 'closed';
    return this.#failed ? 'a journal write failed; restart the signer' : null;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (!this.#failed) this.#writePending();
      fdatasyncSync(this.#fd);
    } catch {
      // best effort; nothing unsynced was acknowledged
    }
    closeSync(this.#fd);
    this.#release();
  }
}
