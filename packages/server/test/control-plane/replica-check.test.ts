/**
 * What a replica of the shared log (store.ts applyReplicated) accepts: an entry signed by the
 * receipt key for its position, and, when it carries a state.json, the `state.shared` receipt that
 * commits to that text. The PostgreSQL attack tests (postgres-attacks.test.ts) stop at the entry
 * signature; these check the rules behind it, as a writer with a bug (or a replayed entry) would meet them.
 */
import { toHex } from '@vault/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReceiptSigner } from '../../src/control-plane/secrets.js';
import { IntentStore, logEntryDigest, STATE_SHARED_KIND, stateSharedBody, type CommitBatch } from '../../src/control-plane/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const signer = new ReceiptSigner(new Uint8Array(32).fill(7));

function replica(): IntentStore {
  const path = mkdtempSync(join(tmpdir(), 'vault-replica-'));
  dirs.push(path);
  return new IntentStore(path, { sync: false, receiptPublicKey: signer.publicKeyHex });
}

/** A batch sharing `text` with a state.shared receipt committing to `committed`, signed as entry `seq`. */
function entry(seq: number, text: string | undefined, committed: string | null, key = signer): { text: string; sig: string } {
  const writes: CommitBatch['writes'] = [];
  let meta: CommitBatch['meta'] = null;
  if (committed !== null) {
    const r = signer.seal(signer.next(null, { at: 1_767_225_600, kind: STATE_SHARED_KIND, body: stateSharedBody(committed), fence: 1 }));
    writes.push({ record: null, receipt: r, extra: {} });
    meta = { receipts: 1, head: r.hash };
  }
  const batch: CommitBatch = { writes, events: [], meta, ...(text !== undefined ? { state: text } : {}) };
  const json = JSON.stringify(batch);
  return { text: json, sig: toHex(key.signLogEntry(logEntryDigest(seq, json))) };
}

describe('a replica of the shared log', () => {
  it('applies a signed entry whose state.json is the one its state.shared receipt commits to', async () => {
    const store = replica();
    const e = entry(1, '{"a":1}\n', '{"a":1}\n');
    await store.applyReplicated(e.text, e.sig, 1);
    expect(store.sharedState).toBe('{"a":1}\n');
    expect(store.appliedLogSeq).toBe(1);
    await store.close();
  });

  it('attack: an entry signed with another key, for another position, or not at all is refused', async () => {
    const store = replica();
    const other = entry(1, '{"a":1}\n', '{"a":1}\n', new ReceiptSigner(new Uint8Array(32).fill(8)));
    await expect(store.applyReplicated(other.text, other.sig, 1)).rejects.toThrow(/log entry 1 refused: not signed/);
    const elsewhere = entry(2, '{"a":1}\n', '{"a":1}\n');
    await expect(store.applyReplicated(elsewhere.text, elsewhere.sig, 1)).rejects.toThrow(/not signed/);
    const good = entry(1, '{"a":1}\n', '{"a":1}\n');
    await expect(store.applyReplicated(good.text, null, 1)).rejects.toThrow(/not signed/);
    await expect(store.applyReplicated(`${good.text} `, good.sig, 1)).rejects.toThrow(/not signed/);
    expect(store.appliedLogSeq).toBe(0);
    await store.close();
  });

  it('attack: a state.json without its state.shared receipt, another text, or the receipt without a text is refused', async () => {
    const store = replica();
    for (const [e, why] of [
      [entry(1, '{"a":1}\n', null), /without a state.shared receipt/],
      [entry(1, '{"a":2}\n', '{"a":1}\n'), /not the one its state.shared receipt commits to/],
      [entry(1, undefined, '{"a":1}\n'), /comes without the state.json/],
    ] as const) {
      await expect(store.applyReplicated(e.text, e.sig, 1)).rejects.toThrow(why);
    }
    expect(store.sharedState).toBeUndefined();
    expect(store.appliedLogSeq).toBe(0);
    await store.close();
  });
});
