/**
 * @module schemas/control-plane
 * Control-plane response shapes: the error body, the session, intents, execution, receipts.
 */
import { z } from 'zod';
import { DecisionSchema, IntentStatusSchema, SignedApprovalSchema } from './approval.js';
import { ACTOR_RE, INITIATOR_GRAMMAR, INITIATOR_RE } from '../identity.js';
import { DigestSchema, integer, IntentIdSchema, UnixSecondsSchema } from './common.js';
import { IntentRequestSchema } from './intent.js';
import { FindingSchema, SignerOutcomeSchema } from './protect.js';

/** The error body. Read loosely (a server may add fields such as a request id); servers send exactly these. */
export const ErrorBodySchema = z.looseObject({
  error: z.looseObject({
    code: integer(),
    message: z.string(),
    data: z.record(z.string(), z.unknown()).nullable(),
  }),
});

export const SessionUnlockResultSchema = z.strictObject({
  token: z.string().min(1),
  expires_at: UnixSecondsSchema,
  accounts: z.array(z.string()),
});
export type SessionUnlockResult = z.infer<typeof SessionUnlockResultSchema>;

export const CreateIntentResultSchema = z.looseObject({
  intentId: IntentIdSchema,
  status: IntentStatusSchema,
  decision: DecisionSchema,
  receipt_head: DigestSchema,
});
export type CreateIntentResult = z.infer<typeof CreateIntentResultSchema>;

export const ExecuteOutcomeSchema = z.looseObject({
  intentId: IntentIdSchema,
  status: z.enum(['confirmed', 'awaiting_signatures', 'denied']),
  /** Absent when nothing was submitted (denied, awaiting_signatures). */
  txHash: z.string().optional(),
  chain: z.string(),
  operation: z.string(),
  summary: z.string(),
  weight: integer().min(0),
  quorum: integer().min(0),
  signers: z.array(SignerOutcomeSchema),
  submit: z.record(z.string(), z.unknown()).optional(),
  receiptHead: DigestSchema,
  mptIssuanceId: z.string().regex(/^[0-9A-Fa-f]{48}$/, 'mptIssuanceId is 48 hex digits').optional(),
  findings: z.array(FindingSchema),
});
export type ExecuteOutcome = z.infer<typeof ExecuteOutcomeSchema>;

/** GET /intent/{id}: the intent with its decision, approvals and execution. */
export const StoredIntentSchema = z.looseObject({
  intentId: IntentIdSchema,
  status: IntentStatusSchema,
  decision: DecisionSchema,
  intent: IntentRequestSchema,
  created_at: UnixSecondsSchema,
  /** When the intent expires unless executed first (created_at + the wallet's time to live). */
  expires_at: UnixSecondsSchema.optional(),
  approvals: z.array(SignedApprovalSchema),
  execution: ExecuteOutcomeSchema.partial().nullable(),
});
export type StoredIntent = z.infer<typeof StoredIntentSchema>;

export const ApproveResultSchema = z.looseObject({
  intentId: IntentIdSchema,
  status: IntentStatusSchema,
  decision: DecisionSchema,
  rejectedBy: z.string().optional(),
});
export type ApproveResult = z.infer<typeof ApproveResultSchema>;

/**
 * POST /intent/{id}/cancel body. Empty (or `by: "operator"`): the operator cancels, on the
 * strength of the session. Any other `by` is the initiator that created the intent, proving it
 * with a cancel statement signed by its own key (cancel.ts): `at` and `signature` then required.
 */
export const CancelRequestSchema = z.strictObject({
  by: z.string().max(128).regex(INITIATOR_RE, `by must be ${INITIATOR_GRAMMAR}`).optional(),
  intentId: IntentIdSchema.optional().describe('The intent the statement cancels; when given, it must be the intent of the path.'),
  at: UnixSecondsSchema.optional(),
  signature: z
    .strictObject({
      curve: z.literal('ed25519', { error: 'curve must be ed25519' }),
      sig: z.string().regex(/^[0-9a-f]{128}$/, 'sig must be 64 bytes as 128 lowercase hex digits'),
    })
    .optional(),
});
export type CancelRequest = z.infer<typeof CancelRequestSchema>;

/** POST /intent/{id}/cancel reply. */
export const CancelResultSchema = z.looseObject({
  intentId: IntentIdSchema,
  status: z.literal('cancelled'),
  by: z.string(),
  cancelled_at: UnixSecondsSchema,
  receipt_head: DigestSchema,
  /** Each signer service and whether it acknowledged the cancellation now (one that did not learns it before it is next asked to sign). */
  signers: z.array(z.looseObject({ signer: z.string(), ok: z.boolean(), detail: z.string() })),
});
export type CancelResult = z.infer<typeof CancelResultSchema>;

export const ProtectResultSchema = z.looseObject({
  intentId: IntentIdSchema,
  blocked: z.boolean(),
  findings: z.array(FindingSchema),
});
export type ProtectResult = z.infer<typeof ProtectResultSchema>;

export const ReconcileResultSchema = z.looseObject({
  clean: z.boolean(),
  checked: z.array(z.unknown()),
  drift: z.array(z.unknown()),
});
export type ReconcileResult = z.infer<typeof ReconcileResultSchema>;

/**
 * One receipt record (DESIGN.md §6). `sig` is required on the last record of every commit (a
 * checkpoint) and may be absent on the records before it in the same commit: the hash chain ties
 * each of them to the next signed record (see receipts.ts).
 */
export const ReceiptRecordSchema = z.strictObject({
  seq: integer().min(0),
  at: UnixSecondsSchema,
  kind: z.string().min(1).max(64),
  intentId: IntentIdSchema.optional(),
  /** Who did it (ACTOR_RE); absent on records written before actors existed. Hashed when present. */
  actor: z.string().max(140).regex(ACTOR_RE, 'actor must be operator:<name>, device:<id>, apikey:<id> or system').optional(),
  /** The writer's fencing token (control plane on PostgreSQL); absent on a single-writer store. Hashed when present. */
  fence: integer().min(1).optional(),
  body_digest: DigestSchema,
  prev: DigestSchema,
  hash: DigestSchema,
  sig: z.string().regex(/^[0-9a-f]{128}$/, 'sig must be 128 lowercase hex digits').optional(),
});
export type ReceiptRecord = z.infer<typeof ReceiptRecordSchema>;

export const LedgerVerifyResultSchema = z.looseObject({
  verified: z.boolean(),
  receipts: integer().min(0),
  head: DigestSchema,
  signerPublicKey: z.string(),
});
export type LedgerVerifyResult = z.infer<typeof LedgerVerifyResultSchema>;
