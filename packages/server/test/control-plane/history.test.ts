/**
 * Velocity caps and agent budgets: the aggregated in-memory history gives exactly the SDK
 * engine's answer on the raw history (property test), and caps hold over HTTP.
 */
import { evaluatePolicy, type IntentStatus, type PolicySet } from '@vault/sdk';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HistoryCache, lookback } from '../../src/control-plane/history.js';
import { IntentStore, type IntentRecord } from '../../src/control-plane/store.js';
import { setup, type Harness } from './helpers.js';

// Real sockets, fsync and scrypt on a shared 2-core machine: allow for slow moments.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const NOW = 1_767_225_600;
const policy: PolicySet = {
  wallet: 'w',
  version: 1,
  rules: [
    { rule: 'always_allow' },
    { rule: 'daily_velocity_cap', limit: '5000', window_seconds: 600 },
    { rule: 'agent_budget_ceiling', budget: '3000', window_seconds: null },
  ],
};

function record(i: number, e: { age: number; amount: number; status: IntentStatus; agent: boolean; symbol: boolean }): IntentRecord {
  return {
    intentId: `int_${i.toString(16).padStart(64, '0')}`,
    n: i,
    status: e.status,
    decision: { decision: 'allow', reasons: [], required_weight: 0, current_weight: 0, not_before: 0 },
    intent: { wallet: 'w', destination: 'd', amount: String(e.amount), asset_decimals: 6, initiator: e.agent ? 'agent:a' : 'operator', operation: { op: 'transfer' }, ...(e.symbol ? { asset_symbol: 'USD' } : {}) },
    created_at: NOW - e.age,
    updated_at: NOW,
    approvals: [],
    unsigned_approvals: [],
    execution: null,
    receipt_head: '0'.repeat(64),
  };
}

describe('HistoryCache', () => {
  it('lookback: the longest window a policy needs; null for a lifetime budget', () => {
    expect(lookback({ wallet: 'w', version: 1, rules: [{ rule: 'always_allow' }] })).toBe(0);
    expect(lookback({ wallet: 'w', version: 1, rules: [{ rule: 'daily_velocity_cap', limit: '1' }] })).toBe(86400);
    expect(lookback(policy)).toBeNull();
  });

  it('aggregated history gives the same decision as the raw history (property)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-hist-'));
    const store = new IntentStore(dir, { sync: false });
    let base = 0;
    try {
      const entry = fc.record({
        age: fc.integer({ min: -5, max: 1200 }),
        amount: fc.integer({ min: 1, max: 2000 }),
        status: fc.constantFrom<IntentStatus>('allowed', 'denied', 'failed', 'confirmed', 'pending_approvals'),
        agent: fc.boolean(),
        symbol: fc.boolean(),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(entry, { maxLength: 30 }), entry, fc.array(fc.tuple(fc.nat(29), fc.constantFrom<IntentStatus>('failed', 'confirmed', 'denied'))), async (entries, probe, changes) => {
          const wallet = `w${base}`;
          const p = { ...policy, wallet };
          const cache = new HistoryCache(store);
          const records = entries.map((e, i) => ({ ...record(base + i, e), intent: { ...record(base + i, e).intent, wallet } }));
          base += entries.length + 1;
          for (const r of records) await store.write(r, null, { isNew: true });
          cache.forPolicy(p, wallet, NOW); // load now, then follow updates in memory
          for (const [idx, status] of changes) {
            const before = records[idx];
            if (!before) continue;
            const after = { ...before, status };
            cache.update(before, after);
            await store.write(after, null);
            records[idx] = after;
          }
          const target = { ...record(base, probe), intent: { ...record(base, probe).intent, wallet } };
          const raw = store.historySince(wallet, 0);
          const ctx = { now: NOW, created_at: target.created_at, intentId: target.intentId };
          const expected = evaluatePolicy(p, target.intent, { ...ctx, history: raw });
          const got = evaluatePolicy(p, target.intent, { ...ctx, history: cache.forPolicy(p, wallet, NOW) });
          expect(got.decision).toBe(expected.decision);
          // re-evaluating an existing intent excludes itself
          const existing = records[0];
          if (existing) {
            const c2 = { now: NOW, created_at: existing.created_at, intentId: existing.intentId };
            expect(evaluatePolicy(p, existing.intent, { ...c2, history: cache.forPolicy(p, wallet, NOW, existing) }).decision).toBe(
              evaluatePolicy(p, existing.intent, { ...c2, history: raw }).decision,
            );
          }
        }),
        { numRuns: 60, seed: 11 },
      );
      const c = new HistoryCache(store);
      c.forPolicy({ wallet: 'w0', version: 1, rules: [{ rule: 'daily_velocity_cap', limit: '1', window_seconds: 60 }] }, 'w0', NOW);
      c.prune(NOW + 10_000, 60);
      c.clear();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('caps over HTTP', () => {
  it('a daily velocity cap counts earlier intents, not denied or failed ones, and rolls off after the window', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, { rule: 'daily_velocity_cap', limit: '1000' }] });
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '600' })).status).toBe('allowed');
    const over = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '500' });
    expect(over.status).toBe('denied');
    expect(over.decision.reasons.join(' ')).toMatch(/daily_velocity_cap\[1\]: in the last 86400s 0 executed \+ 600 pending/);
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '400' })).status).toBe('allowed');
    h.clock.now += 86400;
    await h.client.unlock('correct horse battery staple');
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1000' })).status).toBe('allowed');
  });

  it('a velocity-cap denial says what it counts: executed and pending (allowed, not yet executed) apart, also after a restart', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, { rule: 'daily_velocity_cap', limit: '1000' }] });
    const sent = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '300' });
    expect((await h.client.execute(sent.intentId)).status).toBe('confirmed');
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '600' })).status).toBe('allowed');
    const want = 'daily_velocity_cap[1]: in the last 86400s 300 executed + 600 pending (intents not yet executed) + 101 = 1001 exceeds limit 1000';
    const over = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '101' });
    expect(over.status).toBe('denied');
    expect(over.decision.reasons).toContain(want);
    expect(over.decision.reasons.join(' ')).not.toContain('already spent');
    // The history reloaded from the store tells them apart the same way.
    await h.restart();
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '101', memo: 'again' })).decision.reasons).toContain(want);
  });

  it('an agent budget (lifetime) holds across a restart (history reloaded from the store)', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, { rule: 'agent_budget_ceiling', budget: '100' }] });
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '70', initiator: 'agent:bot' })).status).toBe('allowed');
    await h.restart();
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '40', initiator: 'agent:bot' })).status).toBe('denied');
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '30', initiator: 'agent:bot' })).status).toBe('allowed');
  });
});
