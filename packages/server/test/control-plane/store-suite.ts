/**
 * The intent store's contract (store.ts), as one suite every implementation runs: LMDB alone
 * (store-lmdb.test.ts) and the LMDB replica of a PostgreSQL log (store-postgres.test.ts). The same
 * assertions for both, so the two cannot drift: reads after a write, group commit and its signed
 * checkpoint, the event outbox, close and reopen, and a failed group that writes nothing.
 *
 * An implementation hands in `open(seal)`, a fresh, empty store ready for writes, and says how it
 * can be reopened (`reopenModes`: LMDB on its directory; PostgreSQL on its old replica and on an
 * empty one rebuilt from the log). When it has a record of its own beside the map (`committed`, the
 * database's tables), the suite checks that record too rather than trusting the map alone.
 */
import { eventId, verifyReceiptChain, type Decision, type EventDraft, type IntentStatus, type ReceiptRecord } from '@vault/sdk';
import { describe, expect, it } from 'vitest';
import { ReceiptSigner } from '../../src/control-plane/secrets.js';
import type { IntentRecord, IntentStore } from '../../src/control-plane/store.js';

export interface OpenedStore {
  store: IntentStore;
  /** Closes this store and opens it again on the same data, as `mode` says (one of the suite's `reopenModes`). */
  reopen(mode: string): Promise<OpenedStore>;
  close(): Promise<void>;
  /**
   * The receipt seqs and event seqs the implementation's own record holds, read without the map
   * (PostgreSQL: cp_receipts, cp_events). Absent: the map is the record.
   */
  committed?(): Promise<{ receipts: number[]; events: number[] }>;
}

export interface StoreSuiteOptions {
  /** A fresh, empty store that takes writes; `seal` signs each group's last receipt. */
  open(seal: ((r: ReceiptRecord) => ReceiptRecord) & { publicKeyHex: string; signLogEntry: (digest: Uint8Array) => Uint8Array }): Promise<OpenedStore>;
  /** The ways this store can be reopened, each run as its own test. */
  reopenModes: readonly string[];
}

export const T0 = 1_767_225_600;
const decision: Decision = { current_weight: 0, decision: 'allow', not_before: T0, reasons: [], required_weight: 0 };

export function intentId(n: number): string {
  return `int_${n.toString(16).padStart(64, '0')}`;
}

export interface Fixture {
  n: number;
  wallet?: string;
  status?: IntentStatus;
  created_at?: number;
  expires_at?: number;
}

export function record(f: Fixture, receipt: ReceiptRecord | null): IntentRecord {
  return {
    intentId: intentId(f.n),
    n: f.n,
    status: f.status ?? 'allowed',
    decision,
    intent: { amount: String(f.n + 1), asset_decimals: 6, destination: `mem1dest${f.n % 3}`, initiator: 'operator', operation: { op: 'transfer' }, wallet: f.wallet ?? 'ops' },
    created_at: f.created_at ?? T0 + f.n,
    ...(f.expires_at !== undefined ? { expires_at: f.expires_at } : {}),
    updated_at: f.created_at ?? T0 + f.n,
    approvals: [],
    unsigned_approvals: [],
    execution: null,
    receipt_head: receipt?.hash ?? '0'.repeat(64),
  };
}

function draft(kind: string, id: string, wallet: string, receipt: ReceiptRecord): EventDraft {
  return { type: kind, at: receipt.at, subject: { intent: id, wallet }, receipt: receipt.hash, data: { seq: receipt.seq } } as EventDraft;
}

/**
 * A chain writer over one store: each call makes the next receipt (carrying the store's fence, as
 * the control plane's writer does) and queues the write without awaiting it.
 */
export class Chain {
  head: ReceiptRecord | null = null;
  constructor(
    readonly signer: ReceiptSigner,
    public store: IntentStore,
  ) {}

  receipt(kind: string, id: string | undefined, body: unknown, at = T0): ReceiptRecord {
    const fence = this.store.fence;
    const r = this.signer.next(this.head, { at, kind, ...(id !== undefined ? { intentId: id } : {}), body, ...(fence !== undefined ? { fence } : {}) });
    this.head = r;
    return r;
  }

  /** Creates intent `f` (a receipt and an `intent.created` event). */
  create(f: Fixture, known?: [string, string]): Promise<void> {
    const id = intentId(f.n);
    const r = this.receipt('intent.created', id, { n: f.n }, f.created_at ?? T0 + f.n);
    return this.store.write(record(f, r), r, { isNew: true, ...(known ? { known } : {}) }, [draft('intent.created', id, f.wallet ?? 'ops', r)]);
  }

  /** Moves an existing intent to `status` (a receipt and an `intent.status_changed` event). */
  update(rec: IntentRecord, status: IntentStatus, extra: Partial<IntentRecord> = {}): Promise<void> {
    const r = this.receipt(`intent.${status}`, rec.intentId, { status });
    return this.store.write({ ...rec, ...extra, status, updated_at: rec.updated_at + 1 }, r, {}, [draft('intent.status_changed', rec.intentId, rec.intent.wallet, r)]);
  }
}

let seedByte = 10;
export function newSigner(): ReceiptSigner {
  return new ReceiptSigner(new Uint8Array(32).fill(seedByte++ % 250));
}

async function withStore(opts: StoreSuiteOptions, fn: (s: OpenedStore, chain: Chain, signer: ReceiptSigner) => Promise<OpenedStore | void>): Promise<void> {
  const signer = newSigner();
  let s = await opts.open(Object.assign((r: ReceiptRecord) => signer.seal(r), { publicKeyHex: signer.publicKeyHex, signLogEntry: (d: Uint8Array) => signer.signLogEntry(d) }));
  try {
    const after = await fn(s, new Chain(signer, s.store), signer);
    if (after) s = after;
  } finally {
    await s.close();
  }
}

/** Everything a reader sees of a store, to compare before and after a reopen. */
export function snapshot(store: IntentStore): unknown {
  return {
    size: store.size,
    meta: store.getMeta(),
    receipts: [...store.allReceipts()],
    recent: store.recent(100),
    ops: store.recentForWallet('ops', 100).map((r) => r.intentId),
    treasury: store.recentForWallet('treasury', 100).map((r) => r.intentId),
    history: store.historySince('ops', 0),
    known: store.knownFor('ops'),
    inflight: store.inflightIds().sort(),
    due: store.dueForExpiry(T0 + 10_000, 100),
    cancelled: store.cancelledSince(0, 100),
    lastEventSeq: store.lastEventSeq,
    events: store.eventsAfter(0, 1000),
  };
}

export function storeSuite(name: string, opts: StoreSuiteOptions): void {
  describe(`IntentStore contract: ${name}`, () => {
    it('a write is read back by every index: get, recent, per wallet, history, known, in flight, expiry, cancelled, receipts', async () => {
      await withStore(opts, async ({ store }, chain) => {
        expect(store.size).toBe(0);
        expect(store.getMeta()).toEqual({ receipts: 0, head: '0'.repeat(64) });
        await Promise.all([
          chain.create({ n: 0, wallet: 'ops', created_at: T0 + 10, expires_at: T0 + 100 }, ['ops', 'mem1dest0']),
          chain.create({ n: 1, wallet: 'treasury', created_at: T0 + 20, expires_at: T0 + 50 }, ['treasury', 'mem1dest1']),
          chain.create({ n: 2, wallet: 'ops', created_at: T0 + 30, expires_at: T0 + 300 }, ['ops', 'mem1dest2']),
          chain.create({ n: 3, wallet: 'ops', created_at: T0 + 40, expires_at: T0 + 400 }),
        ]);
        const [r0, r1, r2, r3] = [0, 1, 2, 3].map((n) => store.get(intentId(n))!);
        expect(r0?.intent.wallet).toBe('ops');
        expect(store.get(intentId(99))).toBeUndefined();
        // Later changes: one submitted (in flight), one cancelled, one confirmed (final).
        await Promise.all([chain.update(r1!, 'submitted'), chain.update(r2!, 'cancelled', { cancelled: { by: 'operator', at: T0 + 35 } }), chain.update(r3!, 'confirmed')]);

        expect(store.size).toBe(4);
        expect(store.recent(10).map((r) => r.n)).toEqual([3, 2, 1, 0]);
        expect(store.recent(2).map((r) => r.n)).toEqual([3, 2]);
        expect(store.recent(0)).toEqual([]);
        expect(store.recent(10, (r) => r.intent.wallet === 'ops').map((r) => r.n)).toEqual([3, 2, 0]);
        // A filter that matches rarely looks at no more than scanMax records.
        expect(store.recent(10, (r) => r.n === 0, 2)).toEqual([]);
        expect(store.get(intentId(2))?.status).toBe('cancelled');
        expect(store.recentForWallet('ops', 10).map((r) => r.n)).toEqual([3, 2, 0]);
        expect(store.recentForWallet('ops', 1).map((r) => r.n)).toEqual([3]);
        expect(store.recentForWallet('nobody', 10)).toEqual([]);
        expect(store.historySince('ops', T0 + 30).map((e) => [e.intentId, e.status])).toEqual([
          [intentId(2), 'cancelled'],
          [intentId(3), 'confirmed'],
        ]);
        expect(store.historySince('treasury', 0)).toEqual([{ intentId: intentId(1), created_at: T0 + 20, amount: '2', status: 'submitted', initiator: 'operator', op: 'transfer' }]);
        expect(store.knownFor('ops')).toEqual(['mem1dest0', 'mem1dest2']);
        expect(store.isKnown('treasury', 'mem1dest1')).toBe(true);
        expect(store.isKnown('treasury', 'mem1dest0')).toBe(false);
        expect(store.inflightIds()).toEqual([intentId(1)]);
        // Only what can still expire: allowed r0 (due at +100); r1 submitted, r2 cancelled, r3 confirmed are out.
        expect(store.dueForExpiry(T0 + 99, 10)).toEqual([]);
        expect(store.dueForExpiry(T0 + 100, 10)).toEqual([intentId(0)]);
        expect(store.dueForExpiry(T0 + 10_000, 10)).toEqual([intentId(0)]);
        expect(store.cancelledSince(T0 + 300, 10)).toEqual([{ intentId: intentId(2), expires_at: T0 + 300 }]);
        expect(store.cancelledSince(T0 + 301, 10)).toEqual([]);
        expect(store.receiptsOf(intentId(2), 10).map((r) => r.kind)).toEqual(['intent.created', 'intent.cancelled']);
        expect(store.receiptsOf(intentId(2), 1).map((r) => r.kind)).toEqual(['intent.created']);
        expect(store.receiptsOf(intentId(99), 10)).toEqual([]);
        // Leaving `submitted` takes the intent out of the in-flight index.
        await chain.update(store.get(intentId(1))!, 'confirmed');
        expect(store.inflightIds()).toEqual([]);
        expect(store.getMeta()).toEqual({ receipts: 8, head: chain.head!.hash });
        expect(store.lastReceipt()?.hash).toBe(chain.head!.hash);
        expect(store.recentReceipts(2).map((r) => r.seq)).toEqual([7, 6]);
        // A receipt of its own (not tied to an intent write) joins the same chain.
        const alone = chain.receipt('wallet.changed', undefined, { wallet: 'ops' });
        await store.appendReceipt(alone);
        expect(store.getMeta()).toEqual({ receipts: 9, head: alone.hash });
        expect(store.fault).toBeNull();
      });
    });

    it('group commit: a burst queued in one turn commits all, the chain verifies and ends on a signed checkpoint', async () => {
      await withStore(opts, async (s, chain, signer) => {
        const { store } = s;
        const writes: Promise<void>[] = [];
        // Three bursts, each queued in one event-loop turn; the later ones while a commit may be in flight.
        for (let burst = 0; burst < 3; burst++) {
          for (let i = 0; i < 40; i++) writes.push(chain.create({ n: burst * 40 + i }));
          await new Promise((r) => setImmediate(r));
        }
        await Promise.all(writes);
        const receipts = [...store.allReceipts()];
        expect(receipts).toHaveLength(120);
        const signed = receipts.filter((r) => r.sig !== undefined);
        // Grouped: far fewer signatures than records, and the newest record is a checkpoint.
        expect(signed.length).toBeGreaterThanOrEqual(1);
        expect(signed.length).toBeLessThan(120);
        expect(receipts.at(-1)?.sig).toMatch(/^[0-9a-f]{128}$/);
        expect(store.getMeta()).toEqual({ receipts: 120, head: chain.head!.hash });
        expect(verifyReceiptChain(receipts, signer.publicKeyHex, { head: chain.head!.hash, length: 120 })).toEqual({ verified: true, receipts: 120, head: chain.head!.hash });
        expect(store.recent(3).map((r) => r.n)).toEqual([119, 118, 117]);
        expect(store.size).toBe(120);
        expect(store.lastEventSeq).toBe(120);
        const committed = await s.committed?.();
        if (committed) expect(committed).toEqual({ receipts: receipts.map((r) => r.seq), events: receipts.map((r) => r.seq + 1) });
      });
    });

    it('events take consecutive seqs in commit order; eventsAfter/eventsPage are bounded; listeners hear each commit after it is durable', async () => {
      await withStore(opts, async (s, chain) => {
        const { store } = s;
        expect(store.lastEventSeq).toBe(0);
        expect(store.eventsAfter(0, 10)).toEqual([]);
        const heard: { seqs: number[]; durable: boolean }[] = [];
        const off = store.onEvents((events) => {
          // Durable first: when a listener hears an event, the record it describes reads back.
          heard.push({ seqs: events.map((e) => e.seq), durable: events.every((e) => store.get(e.subject.intent!) !== undefined && store.lastEventSeq >= e.seq) });
        });
        let thrown = 0;
        // A listener that throws is dropped; it stops neither the commit nor the other listeners.
        store.onEvents(() => {
          thrown++;
          throw new Error('listener bug');
        });
        await Promise.all([0, 1, 2].map((n) => chain.create({ n, wallet: n === 1 ? 'treasury' : 'ops' })));
        await Promise.all([3, 4].map((n) => chain.create({ n })));
        expect(thrown).toBe(1);
        expect(heard.flatMap((h) => h.seqs)).toEqual([1, 2, 3, 4, 5]);
        expect(heard.every((h) => h.durable)).toBe(true);
        const all = store.eventsAfter(0, 100);
        expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(all.map((e) => e.id)).toEqual([1, 2, 3, 4, 5].map(eventId));
        expect(all.map((e) => e.subject.intent)).toEqual([0, 1, 2, 3, 4].map(intentId));
        expect(all.every((e) => e.receipt === store.receiptsOf(e.subject.intent!, 1)[0]!.hash)).toBe(true);
        expect(store.lastEventSeq).toBe(5);
        // Bounds: after the last, a limit of 0, a limit, a filter, and a scan cap.
        expect(store.eventsAfter(5, 10)).toEqual([]);
        expect(store.eventsAfter(99, 10)).toEqual([]);
        expect(store.eventsAfter(0, 0)).toEqual([]);
        expect(store.eventsAfter(1, 2).map((e) => e.seq)).toEqual([2, 3]);
        expect(store.eventsAfter(0, 10, { wallet: 'treasury' }).map((e) => e.seq)).toEqual([2]);
        expect(store.eventsAfter(0, 10, { types: ['intent.status_changed'] })).toEqual([]);
        expect(store.eventsPage(0, 10, { wallet: 'treasury' }, 1)).toEqual({ events: [], next: 1 });
        expect(store.eventsPage(1, 10, { wallet: 'treasury' }, 1)).toEqual({ events: [all[1]], next: 2 });
        expect(store.eventsPage(2, 10, { wallet: 'treasury' })).toEqual({ events: [], next: 5 });
        expect(store.eventsPage(5, 10)).toEqual({ events: [], next: 5 });
        off();
        await chain.create({ n: 5 });
        expect(heard.flatMap((h) => h.seqs)).toEqual([1, 2, 3, 4, 5]);
        expect(store.eventsAfter(5, 10).map((e) => e.seq)).toEqual([6]);
        expect(thrown).toBe(1);
        const committed = await s.committed?.();
        if (committed) expect(committed.events).toEqual([1, 2, 3, 4, 5, 6]);
      });
    });

    for (const mode of opts.reopenModes) {
      it(`close and reopen (${mode}) keeps every record, index, receipt and event, and writes go on on the same chain`, async () => {
        await withStore(opts, async (s, chain, signer) => {
          const queued: Promise<void>[] = [];
          for (let n = 0; n < 12; n++) queued.push(chain.create({ n, wallet: n % 4 === 0 ? 'treasury' : 'ops', expires_at: T0 + 1000 + n }, ['ops', `mem1dest${n % 3}`]));
          await Promise.all(queued);
          await chain.update(s.store.get(intentId(3))!, 'submitted');
          await chain.update(s.store.get(intentId(5))!, 'cancelled', { cancelled: { by: 'operator', at: T0 + 50 } });
          const before = snapshot(s.store);
          let again = await s.reopen(mode);
          expect(snapshot(again.store)).toEqual(before);
          expect(again.store.fault).toBeNull();
          // New writes go on from the same place: the next n, the next event seq, the next receipt.
          chain.store = again.store;
          expect(again.store.nextN()).toBe(12);
          await chain.create({ n: 12 });
          expect(again.store.eventsAfter(14, 10).map((e) => e.seq)).toEqual([15]);
          expect(again.store.getMeta()).toEqual({ receipts: 15, head: chain.head!.hash });
          // A write still queued when close() is called is committed before it returns.
          const late = chain.create({ n: 13 });
          again = await again.reopen(mode);
          await late;
          const store = again.store;
          expect(store.get(intentId(13))?.n).toBe(13);
          expect(store.size).toBe(14);
          expect(store.inflightIds()).toEqual([intentId(3)]);
          expect(store.eventsAfter(0, 100).map((e) => e.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
          const receipts = [...store.allReceipts()];
          expect(receipts.at(-1)?.sig).toMatch(/^[0-9a-f]{128}$/);
          expect(verifyReceiptChain(receipts, signer.publicKeyHex, { head: chain.head!.hash, length: 16 })).toEqual({ verified: true, receipts: 16, head: chain.head!.hash });
          const committed = await again.committed?.();
          if (committed) expect(committed).toEqual({ receipts: Array.from({ length: 16 }, (_, i) => i), events: Array.from({ length: 16 }, (_, i) => i + 1) });
          return again;
        });
      });
    }

    it('a group that cannot be written is written not at all, and every later write is refused (fault)', async () => {
      await withStore(opts, async (s, chain, signer) => {
        const { store } = s;
        await chain.create({ n: 0 });
        const good = chain.head!;
        // Queued in one turn: a good write, one no encoder takes (a bigint past 64 bits), another good one.
        const a = chain.create({ n: 1 });
        const r = chain.receipt('intent.created', intentId(2), { n: 2 });
        const bad = { ...record({ n: 2 }, r), execution: { weight: 2n ** 70n } } as unknown as IntentRecord;
        const b = store.write(bad, r, { isNew: true }, [draft('intent.created', intentId(2), 'ops', r)]);
        const c = chain.create({ n: 3 });
        const results = await Promise.allSettled([a, b, c]);
        expect(results.map((x) => x.status)).toEqual(['rejected', 'rejected', 'rejected']);
        expect([...store.allReceipts()].map((x) => x.seq)).toEqual([0]);
        expect(store.get(intentId(1))).toBeUndefined();
        expect(store.getMeta()).toEqual({ receipts: 1, head: good.hash });
        expect(store.lastEventSeq).toBe(1);
        expect(store.eventsAfter(0, 10).map((e) => e.seq)).toEqual([1]);
        expect(store.inflightIds()).toEqual([]);
        expect(verifyReceiptChain([...store.allReceipts()], signer.publicKeyHex).verified).toBe(true);
        expect(store.fault).toMatch(/earlier commit failed/);
        // Nothing after a failed group: a later record would chain onto receipts that are not stored.
        await expect(chain.create({ n: 4 })).rejects.toThrow(/earlier commit failed/);
        await expect(store.appendReceipt(chain.receipt('wallet.changed', undefined, {}))).rejects.toThrow(/earlier commit failed/);
        expect([...store.allReceipts()].map((x) => x.seq)).toEqual([0]);
        const committed = await s.committed?.();
        if (committed) expect(committed).toEqual({ receipts: [0], events: [1] });
      });
    });

    it('a record that throws while it is written fails its group, and writes queued behind it are refused, not committed out of chain', async () => {
      await withStore(opts, async (s, chain) => {
        const { store } = s;
        const r = chain.receipt('intent.created', intentId(0), { n: 0 });
        // An injected fault: the record throws when the store reads its intent.
        const throwing = record({ n: 0 }, r);
        Object.defineProperty(throwing, 'intent', {
          enumerable: true,
          get() {
            throw new Error('injected: record unreadable');
          },
        });
        const first = store.write(throwing, r, { isNew: true });
        // It may fail before the turn below ends (a store that reads the record at once): handled now, inspected after.
        first.catch(() => undefined);
        // Queued after the group above was taken for commit: it would form the next group.
        await new Promise((res) => setImmediate(res));
        const second = chain.create({ n: 1 });
        const results = await Promise.allSettled([first, second]);
        expect(results.map((x) => x.status)).toEqual(['rejected', 'rejected']);
        expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/injected: record unreadable/);
        expect([...store.allReceipts()]).toEqual([]);
        expect(store.get(intentId(0))).toBeUndefined();
        expect(store.size).toBe(0);
        expect(store.lastEventSeq).toBe(0);
        expect(store.fault).toMatch(/earlier commit failed/);
        const committed = await s.committed?.();
        if (committed) expect(committed).toEqual({ receipts: [], events: [] });
      });
    });
  });
}
