import { describe, expect, it } from 'vitest';
import { eventId, eventSeq, VaultEventSchema } from './event.js';

describe('events', () => {
  it('event ids sort in log order as strings and round-trip to their position', () => {
    const seqs = [0, 9, 10, 99, 100, 123456789, Number.MAX_SAFE_INTEGER];
    const ids = seqs.map(eventId);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.map(eventSeq)).toEqual(seqs);
  });

  it('refuses positions and ids that are not one', () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => eventId(bad)).toThrow(RangeError);
    for (const bad of ['evt_1', 'evt_00000000000000001', 'EVT_0000000000000001', ' evt_0000000000000001']) expect(() => eventSeq(bad)).toThrow(RangeError);
  });

  it('an event names its subject', () => {
    const base = { id: eventId(3), seq: 3, type: 'intent.created', at: 1_700_000_000, receipt: 'a'.repeat(64), data: {} };
    expect(VaultEventSchema.safeParse({ ...base, subject: { intent: 'i1', wallet: 'ops' } }).success).toBe(true);
    const r = VaultEventSchema.safeParse({ ...base, subject: {} });
    expect(r.success).toBe(false);
    expect(VaultEventSchema.safeParse({ ...base, type: 'Intent.Created', subject: { wallet: 'ops' } }).success).toBe(false);
  });
});
