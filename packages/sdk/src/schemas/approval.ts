/**
 * @module schemas/approval
 * SignedApproval and Decision.
 */
import { z } from 'zod';
import { boundedString, integer, IntentIdSchema, UnixSecondsSchema } from './common.js';

export const SignedApprovalSchema = z.strictObject({
  approver_id: boundedString(128),
  intent: IntentIdSchema,
  verdict: z.enum(['approve', 'reject']),
  at: UnixSecondsSchema,
  strong_auth: z.boolean(),
  signature: z.strictObject({
    curve: z.literal('ed25519', { error: 'curve must be ed25519' }),
    sig: z.string().regex(/^[0-9a-f]{128}$/, 'sig must be 64 bytes as 128 lowercase hex digits'),
  }),
});
export type SignedApproval = z.infer<typeof SignedApprovalSchema>;
export type ApprovalVerdict = SignedApproval['verdict'];

export const DecisionSchema = z.strictObject({
  decision: z.enum(['allow', 'deny', 'require_approvals', 'delay']),
  reasons: z.array(z.string()),
  required_weight: integer().min(0),
  current_weight: integer().min(0),
  not_before: UnixSecondsSchema,
});
export type Decision = z.infer<typeof DecisionSchema>;
export type DecisionKind = Decision['decision'];

export const INTENT_STATUSES = [
  'allowed',
  'pending_approvals',
  'timelocked',
  'denied',
  'submitted',
  'confirmed',
  'failed',
  // Final: cancelled by the operator or the initiator before anything could land; not executed
  // within the wallet's time to live (lifetime.ts).
  'cancelled',
  'expired',
] as const;
export const IntentStatusSchema = z.enum(INTENT_STATUSES);
export type IntentStatus = z.infer<typeof IntentStatusSchema>;

/** DESIGN.md §4: how a Decision maps to the intent status it yields. */
export const STATUS_BY_DECISION: Readonly<Record<DecisionKind, IntentStatus>> = {
  allow: 'allowed',
  deny: 'denied',
  require_approvals: 'pending_approvals',
  delay: 'timelocked',
};
