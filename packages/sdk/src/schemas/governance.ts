/**
 * @module schemas/governance
 * Change sets (issue #23): every change to wallets, policies, approvers, device roles, signer
 * endpoints, the asset registry, webhooks or the admin policy itself is a diff against a numbered
 * governance version, applied once an admin quorum signed it. The admin policy says who the admins
 * are (ed25519 keys with weights), the weight a change needs and how long it waits once approved.
 * Nothing here carries a secret: a webhook's secret and a signer's token are made or named where
 * the change applies.
 */
import { z } from 'zod';
import { addressText, boundedString, DigestSchema, hexBytes, integer, labelString, UnixSecondsSchema } from './common.js';
import { AssetSpecSchema } from './intent.js';
import { PolicySetSchema } from './policy.js';
import { WalletDescriptorSchema } from './wallet.js';
// One passkey record for a trust file's approver, whether written by hand or by a change set.
import { ApproverPasskeySchema } from '../webauthn.js';

/** Most admins an admin policy lists. */
export const MAX_ADMINS = 32;
/** Most operations in one change set. */
export const MAX_CHANGE_OPS = 256;
/** Most approvals (and rejections) judged with one change set: two per admin is already one too many. */
export const MAX_CHANGE_APPROVALS = 2 * MAX_ADMINS;
/** Longest delay an admin policy may impose (30 days): a longer one is a lock-out, not a review window. */
export const MAX_ADMIN_DELAY_SECONDS = 30 * 24 * 60 * 60;
/** Largest admin weight (as approver weights). */
export const MAX_ADMIN_WEIGHT = 1_000_000;

export const AdminKeySchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'admin id: 1..128 of A-Z a-z 0-9 . _ : -'),
  public_key: hexBytes(32).describe('ed25519 public key of the admin, lowercase hex'),
  weight: integer().min(1).max(MAX_ADMIN_WEIGHT),
});
export type AdminKey = z.infer<typeof AdminKeySchema>;

/** Admins, threshold and delay: what a set_admin_policy op carries (the version is not its to choose). */
export const AdminQuorumSchema = z
  .strictObject({
    admins: z.array(AdminKeySchema).min(1, 'at least one admin').max(MAX_ADMINS, `at most ${MAX_ADMINS} admins`),
    threshold: integer().min(1).describe('Total admin weight a change set needs.'),
    delay_seconds: integer()
      .min(0)
      .max(MAX_ADMIN_DELAY_SECONDS)
      .describe('Seconds a change set waits once its approvals reach the threshold (counted from the signed time of the approval that reached it), so any admin can still veto it.'),
  })
  .superRefine((q, ctx) => {
    const ids = new Set<string>();
    const keys = new Set<string>();
    q.admins.forEach((a, i) => {
      if (ids.has(a.id)) ctx.addIssue({ code: 'custom', path: ['admins', i, 'id'], message: `admin ${a.id} is listed twice` });
      if (keys.has(a.public_key)) ctx.addIssue({ code: 'custom', path: ['admins', i, 'public_key'], message: 'the same key is listed under two admin ids' });
      ids.add(a.id);
      keys.add(a.public_key);
    });
    const total = q.admins.reduce((n, a) => n + a.weight, 0);
    if (q.threshold > total) ctx.addIssue({ code: 'custom', path: ['threshold'], message: `threshold ${q.threshold} is higher than the total admin weight ${total}` });
  });
export type AdminQuorum = z.infer<typeof AdminQuorumSchema>;

/** The admin policy in force and the governance version it is at (0 at bootstrap, +1 per change set applied). */
export const AdminPolicySchema = z.strictObject({
  admins: AdminQuorumSchema.shape.admins,
  threshold: AdminQuorumSchema.shape.threshold,
  delay_seconds: AdminQuorumSchema.shape.delay_seconds,
  version: integer().min(0).describe('Governance version: a change set based on another version is stale.'),
}).superRefine((p, ctx) => {
  const q = AdminQuorumSchema.safeParse({ admins: p.admins, threshold: p.threshold, delay_seconds: p.delay_seconds });
  if (!q.success) for (const issue of q.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
});
export type AdminPolicy = z.infer<typeof AdminPolicySchema>;

const base64url = (max: number) => z.string().max(max).regex(/^[A-Za-z0-9_-]*$/, 'expected base64url without padding');


const wallet = boundedString(128);

export const ChangeOpSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('set_policy'), policy: PolicySetSchema }).describe("Replaces a wallet's policy (the policy names its wallet); signers pin its digest."),
  z
    .strictObject({
      op: z.literal('set_approver'),
      wallet: wallet.optional().describe('The wallet whose approvals this concerns (absent: every wallet).'),
      id: boundedString(128),
      public_key: hexBytes(32),
      weight: integer().min(1).max(1_000_000),
      passkey: ApproverPasskeySchema.optional(),
    })
    .describe('Adds an approver or changes its key, weight or passkey.'),
  z.strictObject({ op: z.literal('remove_approver'), wallet: wallet.optional(), id: boundedString(128) }).describe('Removes an approver: its approvals stop counting.'),
  z
    .strictObject({ op: z.literal('set_wallet'), descriptor: WalletDescriptorSchema, policy: PolicySetSchema })
    .describe('Adds or replaces a wallet descriptor, with the policy it runs under.'),
  z.strictObject({ op: z.literal('set_device_role'), device: boundedString(128), role: z.enum(['approver', 'initiator', 'viewer']) }),
  z
    .strictObject({
      op: z.literal('set_signer_endpoint'),
      signer: addressText(256).describe('The signer address (a member of a wallet).'),
      url: z.url({ protocol: /^https?$/, error: 'url must be an http(s) URL' }).max(2048),
      token_env: z.string().regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'token_env must be an environment variable name').describe('Names where the token is; a token never travels in a change set.'),
      label: labelString(128).optional(),
    })
    .describe("Adds or moves a signer endpoint."),
  z.strictObject({ op: z.literal('set_asset'), asset: AssetSpecSchema }),
  z
    .strictObject({
      op: z.literal('set_webhook'),
      url: z.url({ protocol: /^https?$/, error: 'url must be an http(s) URL' }).max(2048),
      types: z.array(z.string().max(64)).max(64).default([]),
      description: labelString(256).default(''),
    })
    .describe('Adds a webhook endpoint. Its secret is generated and sealed by the control plane when the change applies, never carried here.'),
  z
    .strictObject({ op: z.literal('remove_webhook'), id: z.string().regex(/^wh_[0-9a-f]{24}$/, 'expected wh_ and 24 hex digits') })
    .describe('Removes a webhook endpoint (by its id, GET /webhooks): no further delivery, its delivery records purged.'),
  z.strictObject({ op: z.literal('set_admin_policy'), quorum: AdminQuorumSchema }).describe('Replaces the admins, threshold and delay from the next version on.'),
]);
export type ChangeOp = z.infer<typeof ChangeOpSchema>;
export type ChangeOpKind = ChangeOp['op'];

export const ChangeSetSchema = z
  .strictObject({
    base_version: integer().min(0).describe('The governance version this diff is against.'),
    ops: z.array(ChangeOpSchema).min(1, 'a change set changes something').max(MAX_CHANGE_OPS, `at most ${MAX_CHANGE_OPS} ops`),
    proposed_by: boundedString(128),
    created_at: UnixSecondsSchema,
    note: labelString(1024).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.ops.filter((o) => o.op === 'set_admin_policy').length > 1) ctx.addIssue({ code: 'custom', path: ['ops'], message: 'at most one set_admin_policy op' });
  });
export type ChangeSet = z.infer<typeof ChangeSetSchema>;

/** An admin's signed verdict on one change set (by its digest). */
export const ChangeApprovalSchema = z.strictObject({
  admin_id: AdminKeySchema.shape.id,
  change: DigestSchema.describe('changeSetDigest of the change set'),
  verdict: z.enum(['approve', 'reject']),
  at: UnixSecondsSchema,
  signature: z.strictObject({
    curve: z.literal('ed25519', { error: 'curve must be ed25519' }),
    sig: hexBytes(64),
  }),
});
export type ChangeApproval = z.infer<typeof ChangeApprovalSchema>;

/** POST /governance/changes (signer): an applied change set with the approvals that carried it. */
export const GovernancePushSchema = z.strictObject({
  change: ChangeSetSchema,
  approvals: z.array(z.unknown()).max(MAX_CHANGE_APPROVALS, `at most ${MAX_CHANGE_APPROVALS} approvals`),
});
export type GovernancePush = z.infer<typeof GovernancePushSchema>;

/** POST /governance/changes reply (signer): 200 applied, 409 stale/replayed/future base, 403 anything else refused. */
export const GovernanceOutcomeSchema = z.discriminatedUnion('ok', [
  z.strictObject({ ok: z.literal(true), version: integer().min(1), digest: DigestSchema, ready_at: UnixSecondsSchema, receipt_head: DigestSchema }),
  z.strictObject({ ok: z.literal(false), reason: z.string().max(64), message: z.string().max(4096), version: integer().min(0).nullable(), receipt_head: DigestSchema }),
]);
export type GovernanceOutcome = z.infer<typeof GovernanceOutcomeSchema>;

/** GET /governance reply (signer). */
export const GovernanceStatusSchema = z.strictObject({
  version: integer().min(0).nullable(),
  governance: AdminPolicySchema.nullable(),
  applied: z.array(z.strictObject({ version: integer().min(1), digest: DigestSchema, ready_at: UnixSecondsSchema, at: UnixSecondsSchema })),
});
export type GovernanceStatus = z.infer<typeof GovernanceStatusSchema>;
