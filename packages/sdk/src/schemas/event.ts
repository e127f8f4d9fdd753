/**
 * @module schemas/event
 * Events: one for every change of state in the control plane, written in the same durable commit
 * as the change (an outbox), served as a replayable log (`GET /events`), a live stream
 * (`GET /events/stream`) and signed webhooks. An event is a projection of the receipt it belongs
 * to: the receipt is the proof, the event is the notification.
 */
import { z } from 'zod';
import { ACTOR_RE } from '../identity.js';
import { boundedString, DigestSchema, integer, UnixSecondsSchema } from './common.js';

/**
 * An event id: `evt_` and the event's position in the log as 16 decimal digits, so ids sort in
 * log order as strings and one id names one event forever (webhook retries reuse it).
 */
export const EventIdSchema = z.string().regex(/^evt_[0-9]{16}$/, 'expected evt_ and 16 digits');

/** `evt_0000000000000042` for position 42. */
export function eventId(seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`event seq must be a safe integer >= 0, got ${seq}`);
  return `evt_${String(seq).padStart(16, '0')}`;
}

/** The position an event id names (the cursor of `GET /events?after=`). */
export function eventSeq(id: string): number {
  const parsed = EventIdSchema.safeParse(id);
  if (!parsed.success) throw new RangeError(`not an event id: ${JSON.stringify(id).slice(0, 40)}`);
  return Number(id.slice(4));
}

/** Dotted lowercase: `intent.created`, `device.revoked`. */
export const EventTypeSchema = z.string().max(64).regex(/^[a-z][a-z_]*(\.[a-z][a-z_]*)+$/, 'expected a dotted lowercase event type');

/**
 * What an event is about. At least one member is set. `state` (the digest of a configuration) is
 * the subject of `state.reloaded`, which concerns no single intent, wallet or device.
 */
export const EventSubjectSchema = z
  .strictObject({
    intent: boundedString(128).optional(),
    wallet: boundedString(128).optional(),
    device: boundedString(128).optional(),
    state: DigestSchema.optional(),
    webhook: boundedString(128).optional(),
    /** A named operator account (`operator.created`, `operator.disabled`). */
    operator: boundedString(64).optional(),
    /** An API key, by its id (`apikey.created`, `apikey.revoked`). */
    apikey: boundedString(64).optional(),
    /** A change set's id (`chg_…`). */
    change: boundedString(128).optional(),
  })
  .refine(
    (s) => s.intent !== undefined || s.wallet !== undefined || s.device !== undefined || s.state !== undefined || s.webhook !== undefined || s.operator !== undefined || s.apikey !== undefined || s.change !== undefined,
    'subject names no intent, wallet, device, state, webhook, operator, apikey or change',
  );

export const VaultEventSchema = z.strictObject({
  id: EventIdSchema,
  seq: integer().min(0),
  type: EventTypeSchema,
  /** When the change was committed (the receipt's time). */
  at: UnixSecondsSchema,
  subject: EventSubjectSchema,
  /**
   * Who did it: the receipt's actor (`operator:<name>`, `device:<id>`, `apikey:<id>`, `system`).
   * Absent only on events of receipts written before actors existed.
   */
  actor: z.string().max(140).regex(ACTOR_RE, 'actor must be operator:<name>, device:<id>, apikey:<id> or system').optional(),
  /** The hash of the receipt this event projects; null only for events no receipt records. */
  receipt: DigestSchema.nullable(),
  /** The type's own fields (JSON). */
  data: z.record(z.string(), z.unknown()),
});
export type VaultEvent = z.infer<typeof VaultEventSchema>;

/** `GET /events`: one page of the log in order, and the cursor to read on from. */
export const EventPageSchema = z.strictObject({
  events: z.array(VaultEventSchema),
  /** Pass as `after` for the next page (the last event looked at, or `after` when none was). */
  next: EventIdSchema,
  /** Whether more of the log lies past `next` (an empty page with has_more: a filter matched nothing in the span looked at). */
  has_more: z.boolean(),
});
export type EventPage = z.infer<typeof EventPageSchema>;
