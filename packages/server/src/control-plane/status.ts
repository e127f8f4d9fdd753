/**
 * @module control-plane/status
 * The intent lifecycle as data (interface.md "States and transitions", DESIGN.md §4-5): which
 * status may follow which. Every status the control plane writes is checked against this table,
 * once where the next record is built (`transition`) and once more where it is committed, so a
 * change the table does not list is a fault that reaches no disk, whichever path made it.
 */
import { InternalError, type IntentStatus } from '@vault/sdk';
import type { IntentRecord } from './store.js';

/** The statuses in which approvals are taken and the policy is evaluated again on read. */
export const OPEN_STATUSES: ReadonlySet<IntentStatus> = new Set(['allowed', 'pending_approvals', 'timelocked']);

/**
 * Status -> the statuses it may change to; `new` is an intent being created. Keeping a status
 * (writing a record again with a new decision, attempt or outcome) is not a change and is always
 * allowed.
 */
export const TRANSITIONS: Readonly<Record<IntentStatus | 'new', readonly IntentStatus[]>> = {
  // Whatever the policy yields (STATUS_BY_DECISION).
  new: ['allowed', 'pending_approvals', 'timelocked', 'denied'],
  // Open: re-evaluated on read, on approval and on execute (approvals arrive or stop counting, a
  // timelock releases, a cap fills); a rejection or a deny closes it. Only allowed is submitted.
  // Cancelled (operator or initiator) or expired (its time to live passed) before it was submitted.
  allowed: ['pending_approvals', 'timelocked', 'denied', 'submitted', 'cancelled', 'expired'],
  pending_approvals: ['allowed', 'timelocked', 'denied', 'cancelled', 'expired'],
  timelocked: ['allowed', 'pending_approvals', 'denied', 'cancelled', 'expired'],
  // The ledger has the transaction (or may have it): only the ledger's answer moves it on.
  submitted: ['confirmed', 'failed'],
  // Executed again with fresh chain parameters once the policy allows it; a deny closes it; so do
  // a cancel (once no payload of it can still land) and its time to live passing.
  failed: ['submitted', 'denied', 'cancelled', 'expired'],
  // Final.
  confirmed: [],
  denied: [],
  cancelled: [],
  expired: [],
};

const LEGAL = new Set(Object.entries(TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => `${from}>${to}`)));

/** Whether an intent in status `from` (null: not created yet) may be written with status `to`. */
export function canTransition(from: IntentStatus | null, to: IntentStatus): boolean {
  return from === to || LEGAL.has(`${from ?? 'new'}>${to}`);
}

/** Throws an InternalError (a fault: nothing is written) unless `canTransition(from, to)`. */
export function assertTransition(from: IntentStatus | null, to: IntentStatus, intentId?: string): void {
  if (!canTransition(from, to)) {
    throw new InternalError(`illegal status change ${from ?? '(new)'} -> ${to}${intentId ? ` for ${intentId}` : ''}`, {
      data: { reason: 'illegal_transition', from, to },
    });
  }
}

/**
 * The record in status `to` with `fields` changed and `updated_at` set: the one way the control
 * plane builds a record whose status may change. Throws (assertTransition) on an illegal change.
 *
 * @example
 * const next = transition(record, 'submitted', now, { submission, attempt: null })
 */
export function transition(record: IntentRecord, to: IntentStatus, at: number, fields: Partial<Omit<IntentRecord, 'status' | 'updated_at'>> = {}): IntentRecord {
  assertTransition(record.status, to, record.intentId);
  return { ...record, ...fields, status: to, updated_at: at };
}

/** Statuses an intent leaves by expiring (and may be cancelled from): not submitted, not final. */
export const EXPIRABLE_STATUSES: ReadonlySet<IntentStatus> = new Set(['allowed', 'pending_approvals', 'timelocked', 'failed']);

/** Approvals are taken, and the policy re-run on read, only while the intent is open. */
export function isOpen(status: IntentStatus): boolean {
  return OPEN_STATUSES.has(status);
}
