import { INTENT_STATUSES, InternalError, STATUS_BY_DECISION, type IntentStatus } from '@vault/sdk';
import { describe, expect, it } from 'vitest';
import { assertTransition, canTransition, isOpen, transition } from './status.js';
import type { IntentRecord } from './store.js';

/**
 * The lifecycle written out by hand from interface.md "States and transitions" and DESIGN.md §5,
 * independently of the table in status.ts: each line a change the control plane may make.
 */
const LEGAL: readonly string[] = [
  // creation: the status the policy evaluation yields
  'new>allowed',
  'new>pending_approvals',
  'new>timelocked',
  'new>denied',
  // open statuses: re-evaluation on read, approval and execute; a reject verdict denies
  'allowed>pending_approvals',
  'allowed>timelocked',
  'allowed>denied',
  'pending_approvals>allowed',
  'pending_approvals>timelocked',
  'pending_approvals>denied',
  'timelocked>allowed',
  'timelocked>pending_approvals',
  'timelocked>denied',
  // execute: only an allowed intent is submitted; the ledger's answer settles it
  'allowed>submitted',
  'submitted>confirmed',
  'submitted>failed',
  // a failed intent may be executed again (fresh chain params), or denied on re-evaluation
  'failed>submitted',
  'failed>denied',
  // cancel (operator or creating initiator) and expiry: only before submission
  'allowed>cancelled',
  'allowed>expired',
  'pending_approvals>cancelled',
  'pending_approvals>expired',
  'timelocked>cancelled',
  'timelocked>expired',
  'failed>cancelled',
  'failed>expired',
];

const FROM: readonly (IntentStatus | null)[] = [null, ...INTENT_STATUSES];

function record(status: IntentStatus): IntentRecord {
  return {
    intentId: `int_${'a'.repeat(64)}`,
    n: 1,
    status,
    decision: { decision: 'allow', reasons: [], required_weight: 0, current_weight: 0, not_before: 0 } as IntentRecord['decision'],
    intent: {} as IntentRecord['intent'],
    created_at: 100,
    updated_at: 100,
    approvals: [],
    unsigned_approvals: [],
    execution: null,
    receipt_head: '0'.repeat(64),
  };
}

describe('intent status transitions', () => {
  it('allows exactly the listed changes and refuses every other (from, to) pair', () => {
    let checked = 0;
    for (const from of FROM) {
      for (const to of INTENT_STATUSES) {
        if (from === to) continue;
        const legal = LEGAL.includes(`${from ?? 'new'}>${to}`);
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(legal);
        if (legal) expect(() => assertTransition(from, to)).not.toThrow();
        else expect(() => assertTransition(from, to), `${from} -> ${to}`).toThrow(InternalError);
        if (from !== null) {
          if (legal) expect(transition(record(from), to, 200).status).toBe(to);
          else expect(() => transition(record(from), to, 200), `${from} -> ${to}`).toThrow(/illegal status change/);
        }
        checked += 1;
      }
    }
    // 10 origins (new and the 9 statuses) times 9 targets, less the 9 that keep their status.
    expect(checked).toBe(10 * 9 - 9);
  });

  it('keeping a status is not a change: a record is written again with a new decision, attempt or outcome', () => {
    for (const s of INTENT_STATUSES) {
      expect(canTransition(s, s)).toBe(true);
      const next = transition(record(s), s, 300, { attempts: 2 });
      expect(next).toMatchObject({ status: s, updated_at: 300, attempts: 2 });
    }
  });

  it('confirmed, denied, cancelled and expired are final: nothing moves them', () => {
    for (const from of ['confirmed', 'denied', 'cancelled', 'expired'] as const) {
      for (const to of INTENT_STATUSES) if (to !== from) expect(canTransition(from, to)).toBe(false);
    }
  });

  it('every status a policy decision yields is a legal first status, and only those', () => {
    const yielded = new Set(Object.values(STATUS_BY_DECISION));
    for (const s of INTENT_STATUSES) expect(canTransition(null, s)).toBe(yielded.has(s));
  });

  it('the refusal says what was refused and carries it as data', () => {
    try {
      transition(record('confirmed'), 'allowed', 1);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InternalError);
      expect((e as InternalError).shortMessage).toBe(`illegal status change confirmed -> allowed for int_${'a'.repeat(64)}`);
      expect((e as InternalError).data).toEqual({ reason: 'illegal_transition', from: 'confirmed', to: 'allowed' });
    }
  });

  it('transition leaves the record it was given as it was', () => {
    const before = record('allowed');
    const copy = structuredClone(before);
    const next = transition(before, 'submitted', 500, { attempt: null });
    expect(before).toEqual(copy);
    expect(next).not.toBe(before);
    expect(next).toMatchObject({ status: 'submitted', updated_at: 500, attempt: null });
  });

  it('a submitted intent can be neither cancelled nor expired: its transaction may be on the ledger', () => {
    expect(canTransition('submitted', 'cancelled')).toBe(false);
    expect(canTransition('submitted', 'expired')).toBe(false);
  });

  it('approvals are open in allowed, pending_approvals and timelocked only', () => {
    expect(INTENT_STATUSES.filter(isOpen)).toEqual(['allowed', 'pending_approvals', 'timelocked']);
  });
});
