/**
 * @module schemas/sign
 * The signer's wire shapes: SignRequest, SignResponse, SignerRefusal, and ObserveRequest /
 * ObserveResponse (POST /observe: first sight of an intent, nothing signed).
 */
import { z } from 'zod';
import { REFUSAL_REASONS } from '../errors.js';
import { SignedApprovalSchema } from './approval.js';
import { boundedString, CurveSchema, DigestSchema, IntentIdSchema, UnixSecondsSchema } from './common.js';
import { IntentRequestSchema } from './intent.js';
import { PolicySetSchema } from './policy.js';
import { FindingSchema, ProtectInputsSchema } from './protect.js';
import { ChainParamsSchema, WalletDescriptorSchema } from './wallet.js';

/**
 * SignRequest.intent: the intent as the control plane stored it. The signer recomputes
 * `intentId(request)` and refuses with intent_tampered when it differs from `id`.
 */
export const SignRequestIntentSchema = z.strictObject({
  id: IntentIdSchema,
  created_at: UnixSecondsSchema,
  request: IntentRequestSchema,
});
export type SignRequestIntent = z.infer<typeof SignRequestIntentSchema>;

/**
 * POST /observe: the intent, its wallet and its policy, as a SignRequest carries them, and nothing
 * to sign. The signer checks them as it would for /sign (content address, pinned wallet and
 * policy), records when it first saw the intent (its timelock clock), and signs nothing: there is
 * no payload, signer address or approval in it to act on.
 */
export const ObserveRequestSchema = z.strictObject({
  intent: SignRequestIntentSchema,
  wallet: WalletDescriptorSchema,
  policy: PolicySetSchema,
  policy_digest: DigestSchema,
});
export type ObserveRequest = z.infer<typeof ObserveRequestSchema>;

/** The answer to POST /observe. */
export const ObserveResponseSchema = z.strictObject({
  intentId: IntentIdSchema,
  /** When this signer first saw the intent (this call, or an earlier request). */
  first_seen_at: UnixSecondsSchema,
  /** What this signer counts a timelock from: the later of the claimed created_at and first_seen_at. */
  timelock_from: UnixSecondsSchema,
  receipt_head: DigestSchema,
});
export type ObserveResponse = z.infer<typeof ObserveResponseSchema>;

export const SignRequestSchema = z.strictObject({
  ...ObserveRequestSchema.shape,
  approvals: z.array(SignedApprovalSchema).max(256),
  params: ChainParamsSchema,
  protect: ProtectInputsSchema,
  expected_payload_digest: z.string().regex(/^(0x)?[0-9a-f]{64}$/, 'expected_payload_digest must be a 32-byte lowercase hex digest'),
  signer_address: boundedString(256),
});
export type SignRequest = z.infer<typeof SignRequestSchema>;

/** A public key on the wire: curve and lowercase hex (ed25519 32 bytes, secp256k1 33 compressed). */
export const PublicKeyRefSchema = z.looseObject({
  curve: CurveSchema,
  hex: z.string().regex(/^[0-9a-f]+$/, 'hex must be lowercase hex'),
});
export type PublicKeyRef = z.infer<typeof PublicKeyRefSchema>;

/**
 * A signature on the wire. `encoding` says how the driver framed it (e.g. `xrpl-der`,
 * `stellar-decorated`, `eip712-rsv`); drivers may add fields (e.g. a Stellar hint).
 */
export const SignatureRefSchema = z.looseObject({
  encoding: boundedString(64),
  hex: z.string().regex(/^[0-9a-f]+$/, 'hex must be lowercase hex'),
});
export type SignatureRef = z.infer<typeof SignatureRefSchema>;

/** One signer's contribution to a multisig payload: SignResponse.signature. */
export const ContributionSchema = z.strictObject({
  signer_address: boundedString(256),
  public_key: PublicKeyRefSchema,
  signature: SignatureRefSchema,
});
export type Contribution = z.infer<typeof ContributionSchema>;

export const SignResponseSchema = z.strictObject({
  signature: ContributionSchema,
  /**
   * Where the signing key lives. The spec names `software` and `yubihsm`; `pkcs11` (any other
   * PKCS#11 token: a cloud HSM, SoftHSM2) is this project's one extension of that enum.
   */
  backend: z.enum(['software', 'yubihsm', 'pkcs11']),
  receipt_head: DigestSchema,
  warnings: z.array(FindingSchema),
  summary: z.string(),
});
export type SignResponse = z.infer<typeof SignResponseSchema>;

export const SignerRefusalSchema = z.strictObject({
  refused: z.strictObject({ reason: z.enum(REFUSAL_REASONS) }),
  message: z.string(),
});
export type SignerRefusal = z.infer<typeof SignerRefusalSchema>;
