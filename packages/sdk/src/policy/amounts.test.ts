import { describe, expect, it } from 'vitest';
import { INTENT_STATUSES } from '../schemas/approval.js';
import { countsTowardCaps, OUTFLOW_OPS, spendInWindow } from './amounts.js';
import type { HistoryEntry } from './types.js';

const OPS = ['transfer', 'issue', 'authorize_holder', 'clawback', 'mpt_create', 'account_flags', 'contract_call'] as const;

describe('countsTowardCaps: the one counting rule', () => {
  it('counts exactly the outflows that were neither denied, failed, cancelled nor expired', () => {
    const counted: string[] = [];
    for (const status of INTENT_STATUSES) for (const op of OPS) if (countsTowardCaps({ status, op })) counted.push(`${status}:${op}`);
    const expected = ['allowed', 'pending_approvals', 'timelocked', 'submitted', 'confirmed'].flatMap((s) => ['transfer', 'issue', 'contract_call'].map((op) => `${s}:${op}`));
    expect(counted.sort()).toEqual(expected.sort());
    expect([...OUTFLOW_OPS].sort()).toEqual(['contract_call', 'issue', 'transfer']);
  });

  it('spendInWindow sums what countsTowardCaps admits, and nothing else', () => {
    let n = 0;
    const history: HistoryEntry[] = INTENT_STATUSES.flatMap((status) =>
      OPS.map((op) => ({ intentId: `int_${(n++).toString(16).padStart(64, '0')}`, created_at: 1000, amount: String(2 ** (n % 40)), status, initiator: 'operator', op })),
    );
    const expected = history.filter(countsTowardCaps).reduce((a, e) => a + BigInt(e.amount), 0n);
    expect(expected).toBeGreaterThan(0n);
    expect(spendInWindow(history, { now: 1000, windowSeconds: null, excludeId: undefined, match: () => true })).toBe(expected);
  });
});
