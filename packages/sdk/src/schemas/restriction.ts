/**
 * @module schemas/restriction
 * Restrictions: the statements a signer accepts from the control plane at once, because each one
 * only removes power (an approver's approvals stop counting, a wallet or an intent stops being
 * signed for).
 * Nothing here can express the reverse: no unrevoke, no unfreeze, no uncancel, no weight, no new key. Lifting a
 * restriction adds power, so only the signer's operator can, on the signer host.
 */
import { z } from 'zod';
import { boundedString, DigestSchema, hexBytes, IntentIdSchema, UnixSecondsSchema } from './common.js';

/** Most restrictions in one POST /restrictions (a control plane holds at most 4096 devices). */
export const MAX_RESTRICTIONS_PER_SET = 4096;

export const RestrictionSchema = z.discriminatedUnion('restriction', [
  z
    .strictObject({
      restriction: z.literal('revoke_approver'),
      approver_id: boundedString(128),
      public_key: hexBytes(32).describe('The ed25519 key the control plane knew for it: approvals under this key stop counting too, whatever id they claim.'),
    })
    .describe("A device was revoked: this approver's approvals stop counting."),
  z
    .strictObject({
      restriction: z.literal('drop_approver'),
      approver_id: boundedString(128),
    })
    .describe("An approver left: this approver's approvals stop counting."),
  z
    .strictObject({
      restriction: z.literal('freeze_wallet'),
      wallet: boundedString(128),
    })
    .describe('The signer refuses every sign request for this wallet.'),
  z
    .strictObject({
      restriction: z.literal('cancel_intent'),
      intent_id: IntentIdSchema,
    })
    .describe('The intent was cancelled: the signer refuses every sign request for it.'),
]);
export type Restriction = z.infer<typeof RestrictionSchema>;

/** POST /restrictions body (signer). Restrictions the signer already holds are ignored; it never drops one it holds. */
export const RestrictionSetSchema = z.strictObject({
  restrictions: z.array(RestrictionSchema).max(MAX_RESTRICTIONS_PER_SET),
});
export type RestrictionSet = z.infer<typeof RestrictionSetSchema>;

/** POST /restrictions reply: every restriction received is in force and on disk. */
export const RestrictionsResultSchema = z.strictObject({
  received: DigestSchema.describe('restrictionDigest of the set received'),
  added: z.int().min(0).describe('how many of them were new to this signer'),
  count: z.int().min(0).describe('restrictions in force now'),
  digest: DigestSchema.describe('restrictionDigest of every restriction in force'),
  receipt_head: DigestSchema,
});
export type RestrictionsResult = z.infer<typeof RestrictionsResultSchema>;

/** GET /restrictions reply: what is in force, each with when this signer took it on. */
export const RestrictionsInForceSchema = z.strictObject({
  count: z.int().min(0),
  digest: DigestSchema,
  restrictions: z.array(z.strictObject({ since: UnixSecondsSchema, restriction: RestrictionSchema })),
});
export type RestrictionsInForce = z.infer<typeof RestrictionsInForceSchema>;
