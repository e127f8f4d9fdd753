import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { ed25519Signer } from './ed25519.js';
import { toHex } from './encoding.js';
import { createReceipt, GENESIS_PREV, ReceiptChain, receiptHash, signReceipt, verifyReceiptChain } from './receipts.js';
import type { ReceiptRecord } from './schemas/control-plane.js';

const key = new Uint8Array(32).fill(7);
const pub = toHex(ed25519.getPublicKey(key));
const otherKey = new Uint8Array(32).fill(8);
const id = `int_${'c3'.repeat(32)}`;

function chainOf(n: number): ReceiptRecord[] {
  const out: ReceiptRecord[] = [];
  for (let i = 0; i < n; i++) {
    out.push(createReceipt(out.at(-1) ?? null, { at: 1767225600 + i, kind: i % 2 ? 'intent.executed' : 'intent.created', intentId: id, body: { i } }, key));
  }
  return out;
}

describe('receipt chain', () => {
  it('links records from the genesis hash and verifies end to end', () => {
    const records = chainOf(5);
    expect(records[0]?.prev).toBe(GENESIS_PREV);
    expect(records[1]?.prev).toBe(records[0]?.hash);
    expect(records.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(verifyReceiptChain(records, pub)).toEqual({ verified: true, receipts: 5, head: records[4]?.hash });
    expect(verifyReceiptChain([], pub)).toEqual({ verified: true, receipts: 0, head: GENESIS_PREV });
  });

  it('hash covers exactly the record without hash and sig', () => {
    const [r] = chainOf(1);
    const { hash, sig: _sig, ...rest } = r as ReceiptRecord;
    expect(receiptHash(rest)).toBe(hash);
  });

  it('a record written before actors existed keeps its hash and verifies (golden record from 0.x)', () => {
    // Written by the receipts module before `actor` existed; it must verify unchanged forever.
    const old = {
      seq: 0,
      at: 1767225600,
      kind: 'intent.created',
      body_digest: 'e9f74e715a1806aa651489dcf176e77013b3c851dbc114cc9c24f2fe9d411d65',
      prev: GENESIS_PREV,
      intentId: id,
      hash: 'bcd9b382e595365b5e5b59b160075bba05648184ab4437e43f6072644e200d45',
      sig: 'c419450c427d3e1f23c6ae457245ee45321de7dcc45f0542f76d9779b2c622b21d559094c705257000b62856e4adf5729e30074ba10d7ae21b3c62c7692e0a01',
    };
    expect(createReceipt(null, { at: 1767225600, kind: 'intent.created', intentId: id, body: { i: 0 } }, key)).toEqual(old);
    expect(verifyReceiptChain([old], pub)).toMatchObject({ verified: true });
  });

  it('the actor is hashed: a record names who did it, and changing or dropping it breaks the hash', () => {
    const r = createReceipt(null, { at: 1767225600, kind: 'intent.created', intentId: id, actor: 'operator:olga', body: { i: 0 } }, key);
    expect(r.actor).toBe('operator:olga');
    expect(verifyReceiptChain([r], pub)).toMatchObject({ verified: true });
    expect(verifyReceiptChain([{ ...r, actor: 'operator:other' }], pub)).toMatchObject({ verified: false, problem: 'hash_mismatch' });
    const { actor: _a, ...dropped } = r;
    expect(verifyReceiptChain([dropped], pub)).toMatchObject({ verified: false, problem: 'hash_mismatch' });
    // Mixed chains (old records, then records with actors) verify end to end.
    const next = createReceipt(r, { at: 1767225601, kind: 'intent.status', actor: 'system', body: {} }, key);
    const old = createReceipt(next, { at: 1767225602, kind: 'intent.status', body: {} }, key);
    expect(verifyReceiptChain([r, next, old], pub)).toMatchObject({ verified: true, receipts: 3 });
  });

  it.each([['operator'], ['operator:'], ['admin:x'], ['apikey:'], ['system '], ['operator:Olga'], ['']])('refuses the actor %j', (actor) => {
    expect(() => createReceipt(null, { at: 1767225600, kind: 'intent.created', actor, body: {} }, key)).toThrow(/actor/);
  });

  it('detects and locates a changed record', () => {
    const records = chainOf(5);
    records[2] = { ...(records[2] as ReceiptRecord), kind: 'intent.denied' };
    expect(verifyReceiptChain(records, pub)).toMatchObject({ verified: false, problem: 'hash_mismatch', index: 2, seq: 2 });
  });

  it('detects a changed body digest', () => {
    const records = chainOf(3);
    records[1] = { ...(records[1] as ReceiptRecord), body_digest: 'f'.repeat(64) };
    expect(verifyReceiptChain(records, pub)).toMatchObject({ verified: false, problem: 'hash_mismatch', index: 1 });
  });

  it('detects and locates a dropped record', () => {
    const records = chainOf(5);
    records.splice(3, 1);
    expect(verifyReceiptChain(records, pub)).toMatchObject({ verified: false, problem: 'seq_gap', index: 3, seq: 4 });
  });

  it('detects a dropped record whose successor was renumbered', () => {
    const records = chainOf(5);
    records.splice(3, 1);
    records[3] = { ...(records[3] as ReceiptRecord), seq: 3 };
    expect(verifyReceiptChain(records, pub)).toMatchObject({ verified: false, problem: 'broken_link', index: 3 });
  });

  it('detects reordered records', () => {
    const records = chainOf(4);
    [records[1], records[2]] = [records[2] as ReceiptRecord, records[1] as ReceiptRecord];
    expect(verifyReceiptChain(records, pub)).toMatchObject({ verified: false, problem: 'seq_gap', index: 1 });
  });

  it('detects a record re-signed with another key, even with a consistent hash', () => {
    const records = chainOf(3);
    const forged = createReceipt(records[0] as ReceiptRecord, { at: 1767225601, kind: 'intent.executed', intentId: id, body: { forged: true } }, otherKey);
    records[1] = forged;
    expect(verifyReceiptChain(records, pub)).toMatchObject({ verified: false, problem: 'bad_signature', index: 1 });
  });

  it('detects a truncated tail only against the anchored head or length', () => {
    const records = chainOf(4);
    const head = records[3]?.hash as string;
    const truncated = records.slice(0, 3);
    expect(verifyReceiptChain(truncated, pub).verified).toBe(true);
    expect(verifyReceiptChain(truncated, pub, { head })).toMatchObject({ verified: false, problem: 'head_mismatch', index: 3 });
    expect(verifyReceiptChain(truncated, pub, { length: 4 })).toMatchObject({ verified: false, problem: 'length_mismatch' });
  });

  it('reports a malformed record', () => {
    expect(verifyReceiptChain([{ seq: 0 }], pub)).toMatchObject({ verified: false, problem: 'malformed', index: 0 });
  });

  it('verifies a window of a longer chain from a known link', () => {
    const records = chainOf(6);
    const window = records.slice(3);
    expect(verifyReceiptChain(window, pub, { startPrev: records[2]?.hash as string, startSeq: 3 }).verified).toBe(true);
  });

  it('refuses non-integer times', () => {
    expect(() => createReceipt(null, { at: 1.5, kind: 'x', body: {} }, key)).toThrow(/at/);
  });
});

/** A chain committed in groups: only the last record of each group is signed (a checkpoint). */
function checkpointed(groups: number[]): ReceiptRecord[] {
  const out: ReceiptRecord[] = [];
  for (const size of groups) {
    for (let j = 0; j < size; j++) {
      const r = createReceipt(out.at(-1) ?? null, { at: 1767225600 + out.length, kind: 'intent.created', intentId: id, body: { n: out.length } }, null);
      out.push(j === size - 1 ? signReceipt(r, key) : r);
    }
  }
  return out;
}

describe('checkpoint signatures (group commit)', () => {
  it('an unsigned record has the same hash as its signed twin, and signReceipt adds only sig', () => {
    const unsigned = createReceipt(null, { at: 1, kind: 'k', body: { a: 1 } }, null);
    const signed = createReceipt(null, { at: 1, kind: 'k', body: { a: 1 } }, key);
    expect(unsigned).not.toHaveProperty('sig');
    expect(unsigned.hash).toBe(signed.hash);
    expect(signReceipt(unsigned, key)).toEqual(signed);
  });

  it('verifies a chain whose commits end on signed records', () => {
    const records = checkpointed([3, 1, 4]);
    expect(records.filter((r) => r.sig !== undefined).map((r) => r.seq)).toEqual([2, 3, 7]);
    expect(verifyReceiptChain(records, pub)).toEqual({ verified: true, receipts: 8, head: records[7]?.hash });
  });

  it('unsigned_head: a chain that ends on an unsigned record is refused (appended records nobody signed)', () => {
    const records = checkpointed([2, 2]);
    const appended = createReceipt(records.at(-1) as ReceiptRecord, { at: 1767225700, kind: 'intent.created', intentId: id, body: { forged: true } }, null);
    expect(verifyReceiptChain([...records, appended], pub)).toMatchObject({ verified: false, problem: 'unsigned_head', index: 4, seq: 4 });
  });

  it('unsigned_head: truncating inside a commit leaves an unsigned end and is refused', () => {
    const records = checkpointed([4]);
    expect(verifyReceiptChain(records.slice(0, 3), pub)).toMatchObject({ verified: false, problem: 'unsigned_head', index: 2 });
    // A page read out of a longer chain may stop mid-commit: openEnd checks what it can.
    expect(verifyReceiptChain(records.slice(0, 3), pub, { openEnd: true }).verified).toBe(true);
  });

  it('a changed unsigned record breaks the link to the signed checkpoint after it', () => {
    const records = checkpointed([4]);
    const forged = createReceipt(records[0] as ReceiptRecord, { at: 1767225601, kind: 'intent.created', intentId: id, body: { forged: true } }, null);
    expect(verifyReceiptChain([records[0], forged, records[2], records[3]], pub)).toMatchObject({ verified: false, problem: 'broken_link', index: 2 });
    const edited = { ...(records[1] as ReceiptRecord), at: 1 };
    expect(verifyReceiptChain([records[0], edited, records[2], records[3]], pub)).toMatchObject({ verified: false, problem: 'hash_mismatch', index: 1 });
  });

  it('a whole forged unsigned tail cannot end signed without the key', () => {
    const records = checkpointed([2, 3]);
    const forgedTail: ReceiptRecord[] = [];
    for (let i = 0; i < 3; i++) forgedTail.push(createReceipt(forgedTail.at(-1) ?? (records[1] as ReceiptRecord), { at: 1767225800 + i, kind: 'intent.created', intentId: id, body: { i } }, null));
    forgedTail[2] = signReceipt(forgedTail[2] as ReceiptRecord, otherKey);
    expect(verifyReceiptChain([...records.slice(0, 2), ...forgedTail], pub)).toMatchObject({ verified: false, problem: 'bad_signature', index: 4 });
  });

  it('fence: a fencing token is hashed with the record and must be a positive integer', () => {
    const plain = createReceipt(null, { at: 1767225600, kind: 'intent.created', intentId: id, body: {} }, key);
    const fenced = createReceipt(null, { at: 1767225600, kind: 'intent.created', intentId: id, fence: 3, body: {} }, key);
    expect(fenced.fence).toBe(3);
    expect(fenced.hash).not.toBe(plain.hash);
    expect(verifyReceiptChain([{ ...fenced, fence: 4 }], pub)).toMatchObject({ verified: false, problem: 'hash_mismatch' });
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => createReceipt(null, { at: 1, kind: 'k', fence: bad, body: {} }, key)).toThrow(/fence/);
    }
  });

  it('fence_regressed: a writer that lost its lease cannot append after its successor unnoticed', () => {
    const fenced = (prev: ReceiptRecord | null, fence: number | undefined): ReceiptRecord =>
      createReceipt(prev, { at: 1767225600, kind: 'intent.created', intentId: id, ...(fence === undefined ? {} : { fence }), body: { fence } }, key);
    const a = fenced(null, undefined);
    const b = fenced(a, 1);
    const c = fenced(b, 2);
    const d = fenced(c, 2);
    expect(verifyReceiptChain([a, b, c, d], pub).verified).toBe(true);
    // The old writer (token 1) appends after the new one (token 2) wrote.
    const stale = fenced(d, 1);
    expect(verifyReceiptChain([a, b, c, d, stale], pub)).toMatchObject({ verified: false, problem: 'fence_regressed', index: 4, seq: 4 });
    // Dropping the token once the chain is fenced is the same regression.
    expect(verifyReceiptChain([a, b, fenced(b, undefined)], pub)).toMatchObject({ verified: false, problem: 'fence_regressed', index: 2 });
  });

  it('stripping signatures from checkpoints before the head changes nothing a verifier relies on', () => {
    const records = checkpointed([2, 2, 2]).map((r, i, all) => (i === all.length - 1 ? r : (({ sig: _s, ...rest }) => rest)(r)));
    expect(verifyReceiptChain(records, pub).verified).toBe(true);
  });
});

describe('ReceiptChain', () => {
  it('appends, reports head, recent newest first, and verifies', () => {
    const chain = new ReceiptChain(key);
    expect(chain.head).toBe(GENESIS_PREV);
    const a = chain.append({ at: 1, kind: 'boot', body: null });
    const b = chain.append({ at: 2, kind: 'intent.created', intentId: id, body: { x: 1 } });
    expect(chain.head).toBe(b.hash);
    expect(chain.length).toBe(2);
    expect(chain.recent(1)).toEqual([b]);
    expect(chain.recent(10)).toEqual([b, a]);
    expect(chain.verify().verified).toBe(true);
    expect(chain.publicKeyHex).toBe(pub);
    const reopened = new ReceiptChain(key, chain.records());
    expect(reopened.head).toBe(b.hash);
  });

  it('appends unsigned records and seals the newest as the checkpoint of a commit', () => {
    const chain = new ReceiptChain(key);
    expect(chain.seal()).toBeNull();
    const a = chain.append({ at: 1, kind: 'k', body: 1 }, { sign: false });
    const b = chain.append({ at: 2, kind: 'k', body: 2 }, { sign: false });
    expect(a.sig).toBeUndefined();
    expect(chain.verify()).toMatchObject({ verified: false, problem: 'unsigned_head' });
    const sealed = chain.seal();
    expect(sealed).toEqual(signReceipt(b, key));
    expect(chain.seal()).toBe(sealed);
    expect(chain.records().map((r) => r.sig !== undefined)).toEqual([false, true]);
    expect(chain.verify()).toEqual({ verified: true, receipts: 2, head: b.hash });
    expect(new ReceiptChain(key, chain.records()).head).toBe(b.hash);
  });

  it('keeps its own copy of the key, so the caller can wipe its buffer', () => {
    const mine = Uint8Array.from(key);
    const chain = new ReceiptChain(mine);
    mine.fill(0);
    chain.append({ at: 1, kind: 'boot', body: null });
    expect(chain.verify().verified).toBe(true);
  });

  it('refuses to reopen a tampered chain', () => {
    const records = chainOf(2);
    records[1] = { ...(records[1] as ReceiptRecord), at: 5 };
    expect(() => new ReceiptChain(key, records)).toThrow(/changed/);
  });
});

describe('receipt signing functions', () => {
  it('a signing function (HSM, prepared key) makes the same records as the raw key', () => {
    const a = createReceipt(null, { at: 1, kind: 'k', body: { a: 1 } }, key);
    const b = createReceipt(null, { at: 1, kind: 'k', body: { a: 1 } }, ed25519Signer(key));
    expect(b).toEqual(a);
    expect(() => createReceipt(null, { at: 1, kind: 'k', body: 1 }, () => new Uint8Array(10))).toThrow(/64 bytes/);
    expect(() => createReceipt(null, { at: 1, kind: '', body: 1 }, key)).toThrow(/kind/);
  });
});
