/**
 * @module events
 * The one projection from a receipt to the events it yields (the outbox of the control plane):
 * receipt kind and body in, event types, subjects and data out. Pure, so the control plane writes
 * events with it in the same commit as the receipt, and an auditor holding the receipt bodies can
 * re-derive every event and check the log against the chain.
 *
 * Fail closed: a receipt kind with no projection throws, so a change that would be written without
 * its event is refused before it is chained.
 */
import { InternalError } from './errors.js';
import type { IntentStatus } from './schemas/approval.js';
import type { VaultEvent } from './schemas/event.js';

/** An event before it has a place in the log (`id` and `seq` are given at commit). */
export type EventDraft = Omit<VaultEvent, 'id' | 'seq'>;

/** What the projection knows beside the receipt: the intent's wallet and its status before the change. */
export interface ProjectionContext {
  wallet?: string;
  /** The intent's status before this receipt's change (null for a new intent). */
  from?: IntentStatus | null;
}

/** The receipt as the projection reads it: its kind, time, hash, intent, actor and the body that was hashed. */
export interface ProjectedReceipt {
  kind: string;
  at: number;
  hash: string;
  intentId?: string;
  /** Who did it; every event of the receipt carries it (absent only on receipts from before actors). */
  actor?: string;
  body: unknown;
}

/** Every event type the control plane emits, with what it says. The README table is this list. */
export const EVENT_TYPES = {
  'intent.created': 'an intent was created, with its decision and first status',
  'intent.status_changed': 'an intent changed status (from, to), whatever caused it',
  'approval.recorded': 'a signed approval or rejection was recorded (approver, verdict)',
  'approval.unsigned_recorded': 'a deprecated unsigned approval was recorded (never counted)',
  'intent.signing': 'execute: the payload was committed and put to the signers',
  'intent.signer_outcome': "execute: one member's line (ok, detail): its signer's answer, or that the quorum was reached without it",
  'intent.awaiting_signatures': 'execute: the signers answered short of quorum',
  'intent.submitting': 'execute: the assembled transaction is being handed to the ledger',
  'intent.confirmed': 'the ledger confirmed the transaction',
  'intent.failed': 'the ledger rejected the transaction or it died',
  'intent.cancelled': 'the intent was cancelled (by whom)',
  'intent.expired': 'the intent passed its time to live unexecuted',
  'device.paired': 'a device was paired',
  'device.revoked': 'a device was revoked',
  'state.reloaded': 'the configuration (state file) was reloaded',
  'webhook.created': 'a webhook endpoint was added (its origin and event types; never its URL path or secret)',
  'webhook.deleted': 'a webhook endpoint was removed',
  'operator.created': 'a named operator account was created (its name and role; never its passphrase hash)',
  'operator.disabled': 'an operator account was disabled (its sessions end)',
  'apikey.created': 'an API key was created (id, binding, wallets, expiry, label; never its secret or digest)',
  'apikey.revoked': 'an API key was revoked',
  'change.proposed': 'a change set was proposed (its id, base version and op kinds)',
  'change.verdict_recorded': "an admin's signed approval or rejection of a change set was recorded",
  'change.applied': 'a change set reached its admin quorum and delay and applied (the new governance version)',
} as const;
export type EventType = keyof typeof EVENT_TYPES;

type Body = Record<string, unknown>;
type Project = (r: ProjectedReceipt, b: Body, ctx: ProjectionContext) => EventDraft[];

function intentSubject(r: ProjectedReceipt, b: Body, ctx: ProjectionContext): VaultEvent['subject'] {
  const intent = typeof b['intentId'] === 'string' ? b['intentId'] : r.intentId;
  if (intent === undefined) throw new InternalError(`receipt ${r.kind} names no intent`);
  return { intent, ...(ctx.wallet !== undefined ? { wallet: ctx.wallet } : {}) };
}

function draft(r: ProjectedReceipt, type: EventType, subject: VaultEvent['subject'], data: Record<string, unknown>): EventDraft {
  return { type, at: r.at, subject, ...(r.actor !== undefined ? { actor: r.actor } : {}), receipt: r.hash, data };
}

/** `intent.status_changed` when the change moved the intent from a known status to another. */
function statusChange(r: ProjectedReceipt, b: Body, ctx: ProjectionContext, to: unknown, from: unknown = ctx.from): EventDraft[] {
  if (typeof from !== 'string' || typeof to !== 'string' || from === to) return [];
  return [draft(r, 'intent.status_changed', intentSubject(r, b, ctx), { from, to, ...(b['decision'] !== undefined ? { decision: b['decision'] } : {}) })];
}

/** One event per signer line the stage recorded. */
function signerOutcomes(r: ProjectedReceipt, b: Body, ctx: ProjectionContext): EventDraft[] {
  const signers = b['signers'];
  if (!Array.isArray(signers)) return [];
  return signers.map((s) => draft(r, 'intent.signer_outcome', intentSubject(r, b, ctx), { ...(s as Body) }));
}

function pick(b: Body, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (b[k] !== undefined) out[k] = b[k];
  return out;
}

const PROJECTIONS: Record<string, Project> = {
  'intent.created': (r, b, ctx) => [draft(r, 'intent.created', intentSubject(r, b, ctx), pick(b, ['status', 'decision']))],
  'intent.status': (r, b, ctx) => statusChange(r, b, ctx, b['to'], b['from']),
  'intent.approval': (r, b, ctx) => {
    const a = (b['approval'] ?? {}) as Body;
    const device = typeof a['approver_id'] === 'string' ? a['approver_id'] : undefined;
    return [
      draft(r, 'approval.recorded', { ...intentSubject(r, b, ctx), ...(device !== undefined ? { device } : {}) }, { ...pick(a, ['approver_id', 'verdict', 'at', 'strong_auth']), status: b['status'] }),
      ...statusChange(r, b, ctx, b['status']),
    ];
  },
  'intent.approve_unsigned': (r, b, ctx) => [draft(r, 'approval.unsigned_recorded', intentSubject(r, b, ctx), pick(b, ['at']))],
  'intent.signing': (r, b, ctx) => [draft(r, 'intent.signing', intentSubject(r, b, ctx), pick(b, ['digest']))],
  'intent.awaiting_signatures': (r, b, ctx) => [
    ...signerOutcomes(r, b, ctx),
    draft(r, 'intent.awaiting_signatures', intentSubject(r, b, ctx), pick(b, ['weight', 'quorum'])),
  ],
  'intent.submitting': (r, b, ctx) => [
    ...signerOutcomes(r, b, ctx),
    draft(r, 'intent.submitting', intentSubject(r, b, ctx), pick(b, ['txHash', 'digest', 'weight', 'quorum', 'recovered'])),
    ...statusChange(r, b, ctx, 'submitted'),
  ],
  'intent.confirmed': (r, b, ctx) => [draft(r, 'intent.confirmed', intentSubject(r, b, ctx), pick(b, ['txHash', 'code', 'ledger'])), ...statusChange(r, b, ctx, 'confirmed')],
  'intent.failed': (r, b, ctx) => [draft(r, 'intent.failed', intentSubject(r, b, ctx), pick(b, ['stage', 'code', 'txHash'])), ...statusChange(r, b, ctx, 'failed')],
  'intent.cancelled': (r, b, ctx) => [draft(r, 'intent.cancelled', intentSubject(r, b, ctx), pick(b, ['by', 'at'])), ...statusChange(r, b, ctx, 'cancelled')],
  'intent.expired': (r, b, ctx) => [draft(r, 'intent.expired', intentSubject(r, b, ctx), pick(b, ['expires_at'])), ...statusChange(r, b, ctx, 'expired')],
  'device.paired': (r, b) => {
    const d = (b['device'] ?? {}) as Body;
    if (typeof d['id'] !== 'string') throw new InternalError('receipt device.paired names no device');
    return [draft(r, 'device.paired', { device: d['id'] }, pick(d, ['id', 'role', 'label', 'public_key', 'paired_at']))];
  },
  'device.revoked': (r, b) => {
    if (typeof b['id'] !== 'string') throw new InternalError('receipt device.revoked names no device');
    return [draft(r, 'device.revoked', { device: b['id'] }, { id: b['id'], revoked_at: b['at'] })];
  },
  'state.reloaded': (r, b) => {
    if (typeof b['state_digest'] !== 'string') throw new InternalError('receipt state.reloaded has no state_digest');
    return [draft(r, 'state.reloaded', { state: b['state_digest'] }, { state_digest: b['state_digest'] })];
  },
  // PostgreSQL: the writer shares state.json through the log with this receipt beside it, so a
  // replica adopts only a text the receipt key committed to. Replication, not news: no event.
  'state.shared': (_r, b) => {
    if (typeof b['state_digest'] !== 'string') throw new InternalError('receipt state.shared has no state_digest');
    return [];
  },
  'webhook.created': (r, b) => {
    if (typeof b['id'] !== 'string') throw new InternalError('receipt webhook.created names no endpoint');
    return [draft(r, 'webhook.created', { webhook: b['id'] }, pick(b, ['id', 'origin', 'types']))];
  },
  'webhook.deleted': (r, b) => {
    if (typeof b['id'] !== 'string') throw new InternalError('receipt webhook.deleted names no endpoint');
    return [draft(r, 'webhook.deleted', { webhook: b['id'] }, { id: b['id'] })];
  },
  'operator.created': (r, b) => {
    if (typeof b['name'] !== 'string') throw new InternalError('receipt operator.created names no operator');
    return [draft(r, 'operator.created', { operator: b['name'] }, pick(b, ['name', 'role', 'created_at']))];
  },
  'operator.disabled': (r, b) => {
    if (typeof b['name'] !== 'string') throw new InternalError('receipt operator.disabled names no operator');
    return [draft(r, 'operator.disabled', { operator: b['name'] }, pick(b, ['name', 'disabled_at']))];
  },
  'apikey.created': (r, b) => {
    if (typeof b['id'] !== 'string') throw new InternalError('receipt apikey.created names no key');
    return [draft(r, 'apikey.created', { apikey: b['id'] }, pick(b, ['id', 'bound_to', 'wallets', 'expires_at', 'label', 'created_at']))];
  },
  'apikey.revoked': (r, b) => {
    if (typeof b['id'] !== 'string') throw new InternalError('receipt apikey.revoked names no key');
    return [draft(r, 'apikey.revoked', { apikey: b['id'] }, pick(b, ['id', 'revoked_at']))];
  },
  'change.proposed': (r, b) => [draft(r, 'change.proposed', changeSubject(r, b), pick(b, ['id', 'digest', 'base_version', 'ops', 'proposed_by']))],
  'change.verdict': (r, b) => [draft(r, 'change.verdict_recorded', changeSubject(r, b), pick(b, ['id', 'admin_id', 'verdict', 'at', 'weight', 'threshold']))],
  'change.applied': (r, b) => [draft(r, 'change.applied', changeSubject(r, b), pick(b, ['id', 'digest', 'version', 'ready_at', 'ops']))],
};

function changeSubject(r: ProjectedReceipt, b: Body): VaultEvent['subject'] {
  if (typeof b['id'] !== 'string') throw new InternalError(`receipt ${r.kind} names no change set`);
  return { change: b['id'] };
}

/** The receipt kinds that have a projection (every kind the control plane may write). */
export const PROJECTED_RECEIPT_KINDS: readonly string[] = Object.freeze(Object.keys(PROJECTIONS));

/** Throws unless `kind` has a projection: call before a receipt of that kind is chained. */
export function assertProjectable(kind: string): void {
  if (!Object.hasOwn(PROJECTIONS, kind)) throw new InternalError(`no event projection for receipt kind ${JSON.stringify(kind).slice(0, 70)}`, { data: { reason: 'unprojected_receipt' } });
}

/**
 * The events a receipt yields, in order: the stage's own event first (signer lines before the
 * stage they belong to), then `intent.status_changed` when the status moved.
 *
 * @example
 * const drafts = projectReceipt({ kind: 'intent.created', at, hash, intentId, body }, { wallet: 'ops', from: null })
 * // [{ type: 'intent.created', subject: { intent, wallet: 'ops' }, data: { status, decision }, ... }]
 */
export function projectReceipt(receipt: ProjectedReceipt, ctx: ProjectionContext = {}): EventDraft[] {
  assertProjectable(receipt.kind);
  const b = receipt.body;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new InternalError(`receipt ${receipt.kind}: body is not an object`);
  return PROJECTIONS[receipt.kind]!(receipt, b as Body, ctx);
}

/** What `GET /events` and the stream filter on: types, wallet, intent (all must match). */
export interface EventFilter {
  types?: readonly string[];
  wallet?: string;
  intent?: string;
}

/** Whether `event` passes `filter` (an absent member matches everything). */
export function matchesEventFilter(event: Pick<VaultEvent, 'type' | 'subject'>, filter: EventFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.types && filter.types.length > 0 && !filter.types.includes(event.type)) return false;
  if (filter.wallet !== undefined && event.subject.wallet !== filter.wallet) return false;
  if (filter.intent !== undefined && event.subject.intent !== filter.intent) return false;
  return true;
}
