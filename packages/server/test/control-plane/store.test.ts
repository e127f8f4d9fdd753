/**
 * The intent store's group commit and checkpoint signatures (store.ts): writes queued together
 * commit as one transaction, the last receipt of each group is signed, and a group that cannot be
 * written is written not at all.
 */
import { verifyReceiptChain, type Decision, type ReceiptRecord } from '@vault/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReceiptSigner } from '../../src/control-plane/secrets.js';
import { IntentStore, type IntentRecord } from '../../src/control-plane/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(signer: ReceiptSigner): { store: IntentStore; path: string } {
  const path = mkdtempSync(join(tmpdir(), 'vault-store-'));
  dirs.push(path);
  return { store: new IntentStore(path, { sync: false, sealReceipt: (r) => signer.seal(r) }), path };
}

const decision: Decision = { current_weight: 0, decision: 'allow', not_before: 1_767_225_600, reasons: [], required_weight: 0 };

function record(n: number, receipt: ReceiptRecord, amount = String(n + 1)): IntentRecord {
  const id = `int_${n.toString(16).padStart(64, '0')}`;
  return {
    intentId: id,
    n,
    status: 'allowed',
    decision,
    intent: { amount, asset_decimals: 6, destination: 'mem1dest', initiator: 'operator', operation: { op: 'transfer' }, wallet: 'ops' },
    created_at: 1_767_225_600,
    updated_at: 1_767_225_600,
    approvals: [],
    unsigned_approvals: [],
    execution: null,
    receipt_head: receipt.hash,
  };
}

describe('IntentStore group commit', () => {
  it('commits a burst in groups, signs the last receipt of each, and the chain on disk verifies and ends signed', async () => {
    const signer = new ReceiptSigner(new Uint8Array(32).fill(3));
    const { store } = open(signer);
    let head: ReceiptRecord | null = null;
    const writes: Promise<void>[] = [];
    // Three bursts: each is queued in one event turn, the later ones while a commit may be in flight.
    for (let burst = 0; burst < 3; burst++) {
      for (let i = 0; i < 40; i++) {
        const n = burst * 40 + i;
        const r: ReceiptRecord = signer.next(head, { at: 1_767_225_600, kind: 'intent.created', intentId: `int_${n.toString(16).padStart(64, '0')}`, body: { n } });
        head = r;
        writes.push(store.write(record(n, r), r, { isNew: true }));
      }
      await new Promise((res) => setImmediate(res));
    }
    await Promise.all(writes);
    const receipts = [...store.allReceipts()];
    expect(receipts).toHaveLength(120);
    const signed = receipts.filter((r) => r.sig !== undefined);
    // Grouped: far fewer signatures than records, and the newest record is a checkpoint.
    expect(signed.length).toBeGreaterThanOrEqual(1);
    expect(signed.length).toBeLessThan(120);
    expect(receipts.at(-1)?.sig).toMatch(/^[0-9a-f]{128}$/);
    expect(store.getMeta()).toEqual({ receipts: 120, head: head?.hash });
    expect(verifyReceiptChain(receipts, signer.publicKeyHex, { head: head?.hash, length: 120 })).toEqual({ verified: true, receipts: 120, head: head?.hash });
    expect(store.recent(3).map((r) => r.n)).toEqual([119, 118, 117]);
    await store.close();
  });

  it('a group that cannot be written is written not at all: every write in it fails, nothing reaches disk', async () => {
    const signer = new ReceiptSigner(new Uint8Array(32).fill(4));
    const { store } = open(signer);
    const a = signer.next(null, { at: 1, kind: 'intent.created', body: { n: 0 } });
    await store.write(record(0, a), a, { isNew: true });
    // Queued in one turn: a good write, one the encoder refuses (a bigint past 64 bits), another good one.
    const b = signer.next(a, { at: 2, kind: 'intent.created', body: { n: 1 } });
    const c = signer.next(b, { at: 3, kind: 'intent.created', body: { n: 2 } });
    const d = signer.next(c, { at: 4, kind: 'intent.created', body: { n: 3 } });
    const bad = { ...record(2, c), execution: { weight: 2n ** 70n } } as unknown as IntentRecord;
    const results = await Promise.allSettled([store.write(record(1, b), b, { isNew: true }), store.write(bad, c, { isNew: true }), store.write(record(3, d), d, { isNew: true })]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect([...store.allReceipts()].map((r) => r.seq)).toEqual([0]);
    expect(store.get(record(1, b).intentId)).toBeUndefined();
    expect(store.getMeta()).toEqual({ receipts: 1, head: a.hash });
    expect(verifyReceiptChain([...store.allReceipts()], signer.publicKeyHex).verified).toBe(true);
    // Nothing is written after a failed group: a later record would chain onto receipts that are not on disk.
    const e = signer.next(d, { at: 5, kind: 'intent.created', body: { n: 4 } });
    await expect(store.write(record(4, e), e, { isNew: true })).rejects.toThrow(/earlier commit failed/);
    expect([...store.allReceipts()].map((r) => r.seq)).toEqual([0]);
    await store.close();
  });

  it('writes already queued behind a failing group are refused too, not committed out of chain', async () => {
    const signer = new ReceiptSigner(new Uint8Array(32).fill(6));
    const { store } = open(signer);
    const a = signer.next(null, { at: 1, kind: 'intent.created', body: { n: 0 } });
    const bad = { ...record(0, a), execution: { weight: 2n ** 70n } } as unknown as IntentRecord;
    const first = store.write(bad, a, { isNew: true });
    // Queued after the group above has been taken for commit: it would form the next group.
    await new Promise((res) => setImmediate(res));
    const b = signer.next(a, { at: 2, kind: 'intent.created', body: { n: 1 } });
    const second = store.write(record(1, b), b, { isNew: true });
    const results = await Promise.allSettled([first, second]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect([...store.allReceipts()]).toEqual([]);
    await store.close();
  });

  it('close() waits for queued writes', async () => {
    const signer = new ReceiptSigner(new Uint8Array(32).fill(5));
    const { store, path } = open(signer);
    const r = signer.next(null, { at: 1, kind: 'intent.created', body: {} });
    const done = store.write(record(0, r), r, { isNew: true });
    await store.close();
    await done;
    const again = new IntentStore(path, { sync: false });
    expect(again.get(record(0, r).intentId)?.n).toBe(0);
    expect(again.lastReceipt()?.sig).toMatch(/^[0-9a-f]{128}$/);
    await again.close();
  });
});
