import { createReceipt, verifyReceiptChain, type ReceiptRecord } from '@vault/sdk';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SignerState } from './state.js';

const KEY = new Uint8Array(32).fill(7);
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'signer-state-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));


describe('SignerState', () => {
  it('commits receipts with their events durably, and replays them on reopen', async () => {
    const s = SignerState.open(dir, KEY);
    const id = `int_${'b'.repeat(64)}`;
    s.commit({ at: 10, kind: 'sign.refused', intentId: id, body: {} }, [{ t: 'seen', intentId: id, at: 10 }]);
    s.commit({ at: 20, kind: 'sign.refused', intentId: id, body: {} }, [{ t: 'seen', intentId: id, at: 20 }]);
    expect(s.firstSeen(id)).toBe(10);
    // Committed but not yet written: not shown (its group's checkpoint is not signed yet).
    expect(s.length).toBe(0);
    expect(s.recent(5)).toEqual([]);
    await s.durable();
    expect(s.length).toBe(2);
    expect(s.verify().verified).toBe(true);
    const head = s.head;
    expect(s.recent(1)[0]?.hash).toBe(head);
    s.close();
    expect(statSync(join(dir, 'journal.jsonl')).mode & 0o777).toBe(0o600);
    const again = SignerState.open(dir, KEY);
    expect(again.head).toBe(head);
    expect(again.length).toBe(2);
    expect(again.firstSeen(id)).toBe(10);
    expect(again.recent(1)[0]?.at).toBe(20);
    expect(verifyReceiptChain(again.records(), again.receiptPublicKey).verified).toBe(true);
    again.close();
  });

  it('cuts a torn tail left by a crash mid-append, and keeps appending after it', () => {
    const s = SignerState.open(dir, KEY);
    s.commit({ at: 1, kind: 'k', body: 1 });
    s.close();
    appendFileSync(join(dir, 'journal.jsonl'), '{"receipt":{"seq":1,"at":');
    const again = SignerState.open(dir, KEY);
    expect(again.repairedBytes).toBeGreaterThan(0);
    again.commit({ at: 2, kind: 'k', body: 2 });
    again.close();
    const third = SignerState.open(dir, KEY);
    expect(third.length).toBe(2);
    expect(third.verify().verified).toBe(true);
    third.close();
  });

  it('group commit: lines committed together are written as one group whose last receipt is signed', async () => {
    const s = SignerState.open(dir, KEY);
    for (let i = 0; i < 3; i++) s.commit({ at: i, kind: 'k', body: i });
    await s.durable();
    s.commit({ at: 9, kind: 'k', body: 9 });
    await s.durable();
    const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { receipt: ReceiptRecord });
    expect(lines.map((l) => l.receipt.sig !== undefined)).toEqual([false, false, true, true]);
    expect(s.verify()).toMatchObject({ verified: true, receipts: 4 });
    s.close();
  });

  it('cuts complete lines after the last checkpoint (a group whose flush never finished was never acknowledged)', async () => {
    const s = SignerState.open(dir, KEY);
    s.commit({ at: 1, kind: 'k', body: 1 });
    await s.durable();
    const head = s.recent(1)[0] as ReceiptRecord;
    s.close();
    // A crash after writing two lines of a group but before its checkpoint line.
    const a = createReceipt(head, { at: 2, kind: 'k', body: 2 }, null);
    const b = createReceipt(a, { at: 3, kind: 'k', body: 3 }, null);
    appendFileSync(join(dir, 'journal.jsonl'), `${JSON.stringify({ receipt: a, events: [] })}\n${JSON.stringify({ receipt: b, events: [] })}\n`);
    const again = SignerState.open(dir, KEY);
    expect(again.length).toBe(1);
    expect(again.head).toBe(head.hash);
    expect(again.repairedBytes).toBeGreaterThan(0);
    again.commit({ at: 4, kind: 'k', body: 4 });
    again.close();
    const third = SignerState.open(dir, KEY);
    expect(third.length).toBe(2);
    expect(third.verify().verified).toBe(true);
    third.close();
  });

  it('refuses to start on a journal that was edited, or that is not JSON', () => {
    const s = SignerState.open(dir, KEY);
    s.commit({ at: 1, kind: 'k', body: 1 });
    s.commit({ at: 2, kind: 'k', body: 2 });
    s.close();
    const path = join(dir, 'journal.jsonl');
    const original = readFileSync(path, 'utf8');
    writeFileSync(path, original.replace('"at":1', '"at":5'));
    expect(() => SignerState.open(dir, KEY)).toThrow(/does not verify/);
    writeFileSync(path, `not json\n${original}`);
    expect(() => SignerState.open(dir, KEY)).toThrow(/not JSON/);
    writeFileSync(path, `{"receipt":{}}\n`);
    expect(() => SignerState.open(dir, KEY)).toThrow(/malformed/);
  });

  it('one process per state directory: a live holder blocks, a dead one is taken over', () => {
    const s = SignerState.open(dir, KEY);
    expect(() => SignerState.open(dir, KEY)).toThrow(/in use by signer process/);
    s.close();
    writeFileSync(join(dir, 'signer.lock'), '999999999\n');
    const t = SignerState.open(dir, KEY);
    t.close();
    expect(() => t.commit({ at: 1, kind: 'k', body: 1 })).toThrow(/closed/);
  });

  it('historyFor(wallet, now, windows, exclude): the signed intents aggregated per stretch between window edges, each intent counted once, without the excluded one, also after a replay', () => {
    const s = SignerState.open(dir, KEY);
    const sign = (n: number, at: number, amount: string) => {
      const intentId = `int_${n.toString(16).padStart(64, '0')}`;
      const contribution = { signer_address: 'mem1x', public_key: { curve: 'ed25519' as const, hex: 'aa'.repeat(32) }, signature: { encoding: 'ed25519' as const, hex: 'bb'.repeat(64) } };
      const history = { intentId, created_at: at, amount, status: 'allowed' as const, initiator: 'operator', op: 'transfer' as const };
      s.commit({ at, kind: 'sign.signed', intentId, body: {} }, [
        { t: 'signed', intentId, wallet: 'w', chain: 'memory:devnet', at, digest: 'd'.repeat(64), payload: {}, summary: 's', signer_address: 'mem1x', contribution, history },
      ]);
      return intentId;
    };
    sign(1, 10, '1');
    const twice = sign(2, 40, '2');
    sign(3, 30, '4'); // a clock step back still counts
    sign(4, 40, '8'); // same second as #2: one bucket of 10
    sign(2, 40, '2'); // #2 signed again (another signer address or a repeat): counted once
    // At now = 41 a window w counts what was signed after 41 - w: one aggregate per stretch between edges.
    const view = (st: SignerState, windows: (number | null)[], exclude?: string) =>
      st
        .historyFor('w', 41, windows, exclude)
        .map((e) => `${e.created_at}:${e.amount}`)
        .sort();
    expect(view(s, [null])).toEqual(['41:15']);
    expect(view(s, [11, 12, null])).toEqual(['29:1', '30:4', '31:10']);
    expect(view(s, [12])).toEqual(['30:14']);
    expect(view(s, [11])).toEqual(['31:10']);
    expect(view(s, [11], twice)).toEqual(['31:8']);
    expect(view(s, [1])).toEqual([]);
    expect(view(s, [])).toEqual([]);
    expect(s.historyFor('other', 41, [null])).toEqual([]);
    s.close();
    const again = SignerState.open(dir, KEY);
    expect(view(again, [11, 12, null])).toEqual(['29:1', '30:4', '31:10']);
    again.close();
  });
});
