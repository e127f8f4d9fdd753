/**
 * @module schemas/approval
 * SignedApproval and Decision.
 */
import { z } from 'zod';
import { base64url, boundedString, integer, IntentIdSchema, UnixSecondsSchema } from './common.js';

/** Largest decoded sizes of the WebAuthn fields, in bytes (browsers send a few hundred; certificates a few KiB). */
export const WEBAUTHN_LIMITS = {
  credential_id: 1023, // WebAuthn's own cap (credentialIdLength is at most 1023)
  authenticator_data: 1024,
  client_data_json: 4096,
  signature: 72, // DER of two 33-byte integers
  attestation_object: 8 * 1024, // fits the control plane's 16 KiB body limit as base64url
} as const;

/**
 * The passkey assertion over an approval (issue #24; webauthn.ts verifies it). Not covered by the
 * ed25519 signature: it proves the statement that signature covers, `strong_auth` included.
 */
export const PasskeyAssertionSchema = z.strictObject({
  credential_id: base64url(WEBAUTHN_LIMITS.credential_id),
  authenticator_data: base64url(WEBAUTHN_LIMITS.authenticator_data),
  client_data_json: base64url(WEBAUTHN_LIMITS.client_data_json),
  signature: base64url(WEBAUTHN_LIMITS.signature),
});

/**
 * The registration response a device sends with POST /pair/claim (wire.md): parseRegistration
 * (webauthn.ts) reads it against the pairing challenge.
 */
export const PasskeyRegistrationSchema = z.strictObject({
  attestation_object: base64url(WEBAUTHN_LIMITS.attestation_object),
  client_data_json: base64url(WEBAUTHN_LIMITS.client_data_json),
});

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
  webauthn: PasskeyAssertionSchema.optional(),
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
