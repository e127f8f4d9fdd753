import { evaluatePolicy, policyWindows, spendInWindow, spendInWindowByState, type HistoryEntry, type IntentStatus, type PolicySet } from '@vault/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HistoryBuckets } from './history-buckets.js';

const NOW = 1_767_225_600;

function entry(i: number, e: { age: number; amount: number; status: IntentStatus; agent: boolean; symbol: boolean; op: 'transfer' | 'issue' }): HistoryEntry {
  const out: HistoryEntry = {
    intentId: `int_${i.toString(16).padStart(64, '0')}`,
    created_at: NOW - e.age,
    amount: String(e.amount),
    status: e.status,
    initiator: e.agent ? 'agent:a' : 'operator',
    op: e.op,
  };
  if (e.symbol) out.asset_symbol = 'USD';
  return out;
}

const arbEntry = fc.record({
  // Across minute and hour edges, a little into the future (a clock ahead), around the 30-day edge, and past every window.
  age: fc.oneof(fc.integer({ min: -90, max: 3 * 3600 + 120 }), fc.constantFrom(0, 59, 60, 61, 3599, 3600, 3601, 7199, 7200, 7201, 2_588_400, 2_591_999, 2_592_000, 2_592_001, 2_595_600)),
  amount: fc.integer({ min: 1, max: 5000 }),
  status: fc.constantFrom<IntentStatus>('allowed', 'pending_approvals', 'timelocked', 'denied', 'failed', 'confirmed', 'submitted'),
  agent: fc.boolean(),
  symbol: fc.boolean(),
  op: fc.constantFrom<'transfer' | 'issue'>('transfer', 'issue'),
});

describe('HistoryBuckets.windowed', () => {
  it('gives spendInWindow the same total as the raw history for every window of the policy, executed and pending apart, with and without an excluded entry (property)', () => {
    // 30 days: far edges with only a few hours of data walk the hour map instead of the indices.
    const windows = [60, 61, 3600, 7200, 2_592_000, null] as const;
    fc.assert(
      fc.property(fc.array(arbEntry, { maxLength: 60 }), fc.nat(), fc.integer({ min: -3, max: 3 }), (raw, pick, shift) => {
        const now = NOW + shift;
        const entries = raw.map((e, i) => entry(i, e));
        const b = new HistoryBuckets();
        for (const e of entries) b.add(e);
        const exclude = entries.length > 0 ? entries[pick % entries.length] : undefined;
        const rawWithout = exclude ? entries.filter((e) => e.intentId !== exclude.intentId) : entries;
        const agg = b.windowed(now, windows, exclude);
        const aggAll = b.windowed(now, windows);
        for (const w of windows) {
          for (const match of [(e: HistoryEntry) => e.initiator === 'agent:a', (e: HistoryEntry) => e.asset_symbol === 'USD', () => true]) {
            const opts = { now, windowSeconds: w, excludeId: undefined, match };
            expect(spendInWindow(agg, opts)).toBe(spendInWindow(rawWithout, opts));
            expect(spendInWindow(aggAll, opts)).toBe(spendInWindow(entries, opts));
            // What a velocity-cap refusal reports: executed and pending, each the same as the raw history's.
            expect(spendInWindowByState(agg, opts)).toEqual(spendInWindowByState(rawWithout, opts));
            expect(spendInWindowByState(aggAll, opts)).toEqual(spendInWindowByState(entries, opts));
          }
        }
        // One entry per group (initiator, asset, op, executed or pending) and stretch at most.
        expect(aggAll.length).toBeLessThanOrEqual(2 * 2 * 2 * 2 * windows.length);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('same decision as the raw history for a policy with a cap and a budget, after removals (status changes)', () => {
    const policy: PolicySet = {
      wallet: 'w',
      version: 1,
      rules: [
        { rule: 'always_allow' },
        { rule: 'daily_velocity_cap', limit: '20000', window_seconds: 3600 },
        { rule: 'agent_budget_ceiling', budget: '9000', window_seconds: 600 },
      ],
    };
    fc.assert(
      fc.property(fc.array(arbEntry, { maxLength: 40 }), fc.array(fc.tuple(fc.nat(39), fc.constantFrom<IntentStatus>('failed', 'confirmed', 'denied'))), fc.integer({ min: 1, max: 9000 }), (raw, changes, amount) => {
        const entries = raw.map((e, i) => entry(i, e));
        const b = new HistoryBuckets();
        for (const e of entries) b.add(e);
        for (const [i, status] of changes) {
          const before = entries[i];
          if (!before) continue;
          const after = { ...before, status };
          b.add(before, -1n);
          b.add(after);
          entries[i] = after;
        }
        const intent = { wallet: 'w', destination: 'd', amount: String(amount), initiator: 'agent:a' };
        const ctx = { now: NOW, created_at: NOW, intentId: 'int_new' };
        expect(evaluatePolicy(policy, intent, { ...ctx, history: b.windowed(NOW, policyWindows(policy)) }).decision).toBe(
          evaluatePolicy(policy, intent, { ...ctx, history: entries }).decision,
        );
      }),
      { numRuns: 200, seed: 3 },
    );
  });

  it('a busy day (one signature every second for 24 h) is a handful of entries, not 86,400', () => {
    const b = new HistoryBuckets();
    for (let s = 0; s < 86_400; s++) b.add({ intentId: `i${s}`, created_at: NOW - s, amount: '1', status: 'confirmed', initiator: 'operator', op: 'transfer' });
    const out = b.windowed(NOW, [3600, 86_400]);
    expect(out).toHaveLength(2);
    const total = (w: number) => spendInWindow(out, { now: NOW, windowSeconds: w, excludeId: undefined, match: () => true });
    expect(total(3600)).toBe(3600n);
    expect(total(86_400)).toBe(86_400n);
    // A ten-second window reads the per-second sums at its edge.
    expect(spendInWindow(b.windowed(NOW, [10]), { now: NOW, windowSeconds: 10, excludeId: undefined, match: () => true })).toBe(10n);
  });

  it('prune drops amounts before the floor; nothing counted twice after it', () => {
    const b = new HistoryBuckets();
    for (let s = 0; s < 200; s++) b.add({ intentId: `i${s}`, created_at: NOW - s, amount: '2', status: 'allowed', initiator: 'operator', op: 'transfer' });
    b.prune(NOW - 99);
    expect(b.since).toBe(NOW - 99);
    const lifetime = () => spendInWindow(b.windowed(NOW, [null]), { now: NOW, windowSeconds: null, excludeId: undefined, match: () => true });
    expect(lifetime()).toBe(200n);
    // Older than what is kept: ignored, not counted.
    b.add({ intentId: 'old', created_at: NOW - 150, amount: '5', status: 'allowed', initiator: 'operator', op: 'transfer' });
    expect(lifetime()).toBe(200n);
    expect(b.windowed(NOW, [])).toEqual([]);
  });
});
