/**
 * @module schemas/policy
 * Rule and PolicySet, with the per-rule fields of DESIGN.md §4. Rules accept extra properties
 * (interface.md); the fields the engine reads are typed and checked.
 */
import { z } from 'zod';
import { AGENT_INITIATOR_RE } from '../identity.js';
import { AmountSchema, boundedString, hexBytes, integer } from './common.js';
import { OPERATION_KINDS } from './intent.js';

const HHMM = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'time must be "HH:MM" (00:00..23:59), UTC');
const WindowSeconds = integer().min(1, 'window_seconds must be at least 1').max(366 * 86400);
const AddressList = z.array(boundedString(256)).max(10000, 'at most 10000 addresses');

export const RULE_KINDS = [
  'always_allow',
  'require_compliance_clearance',
  'destination_allowlist',
  'destination_blocklist',
  'daily_velocity_cap',
  'approval_threshold',
  'timelock_above',
  'hard_ceiling',
  'require_attestation',
  'require_human_approver_for_agent_initiated',
  'agent_budget_ceiling',
  'operating_window_utc',
  'require_tag',
  'allow_operations',
] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

export const RuleSchemas = {
  always_allow: z.looseObject({ rule: z.literal('always_allow') }),
  require_compliance_clearance: z.looseObject({
    rule: z.literal('require_compliance_clearance'),
    // Optional so policies written before clearances were signed still load; a rule naming no
    // clearer is never met (verifyStatements), on the control plane and on the signer alike.
    clearers: z.array(hexBytes(32)).max(64).optional(),
  }),
  destination_allowlist: z.looseObject({ rule: z.literal('destination_allowlist'), addresses: AddressList }),
  destination_blocklist: z.looseObject({ rule: z.literal('destination_blocklist'), addresses: AddressList }),
  daily_velocity_cap: z.looseObject({
    rule: z.literal('daily_velocity_cap'),
    limit: AmountSchema,
    asset: boundedString(256).optional(),
    window_seconds: WindowSeconds.optional(),
  }),
  approval_threshold: z.looseObject({
    rule: z.literal('approval_threshold'),
    above: AmountSchema,
    required_weight: integer().min(1, 'required_weight must be at least 1').max(1_000_000),
    approvers: z
      .array(z.strictObject({ id: boundedString(128), weight: integer().min(1).max(1_000_000) }))
      .min(1, 'approval_threshold needs at least one approver')
      .max(256)
      // One approver listed twice would count one approval twice: refuse the ambiguous policy.
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((a, j) => {
          if (seen.has(a.id)) ctx.addIssue({ code: 'custom', path: [j, 'id'], message: `approver ${JSON.stringify(a.id)} is listed more than once` });
          seen.add(a.id);
        });
      }),
  }),
  timelock_above: z.looseObject({
    rule: z.literal('timelock_above'),
    above: AmountSchema,
    seconds: integer().min(1, 'seconds must be at least 1').max(365 * 86400),
  }),
  hard_ceiling: z.looseObject({ rule: z.literal('hard_ceiling'), max: AmountSchema }),
  require_attestation: z.looseObject({
    rule: z.literal('require_attestation'),
    attesters: z.array(hexBytes(32)).min(1, 'require_attestation needs at least one attester key').max(64),
  }),
  require_human_approver_for_agent_initiated: z.looseObject({
    rule: z.literal('require_human_approver_for_agent_initiated'),
    min_strong: integer().min(1).max(256).optional(),
    /** Above this amount, a strong approval counts only from a device-bound (not synced) passkey. */
    device_bound_above: AmountSchema.optional(),
  }),
  agent_budget_ceiling: z.looseObject({
    rule: z.literal('agent_budget_ceiling'),
    budget: AmountSchema,
    /** One agent, as its initiator (`agent:<name>`); a policy naming it any other way is refused. */
    agent: z.string().regex(AGENT_INITIATOR_RE, 'agent must be "agent:<name>" (name: 1..120 of a-z 0-9 . _ -)').optional(),
    asset: boundedString(256).optional(),
    window_seconds: WindowSeconds.nullable().optional(),
  }),
  operating_window_utc: z.looseObject({
    rule: z.literal('operating_window_utc'),
    start: HHMM,
    end: HHMM,
    days: z
      .array(integer().min(0, 'days are 0 (Sunday) .. 6').max(6, 'days are 0 (Sunday) .. 6'))
      .min(1, 'days, when given, must name at least one day')
      .max(7)
      .optional(),
  }),
  require_tag: z.looseObject({
    rule: z.literal('require_tag'),
    key: boundedString(128),
    value: z.string().max(256).optional(),
  }),
  allow_operations: z.looseObject({
    rule: z.literal('allow_operations'),
    ops: z.array(z.enum(OPERATION_KINDS)).max(OPERATION_KINDS.length * 2),
  }),
} as const satisfies Record<RuleKind, z.ZodType>;

export const RuleSchema = z.discriminatedUnion('rule', [
  RuleSchemas.always_allow,
  RuleSchemas.require_compliance_clearance,
  RuleSchemas.destination_allowlist,
  RuleSchemas.destination_blocklist,
  RuleSchemas.daily_velocity_cap,
  RuleSchemas.approval_threshold,
  RuleSchemas.timelock_above,
  RuleSchemas.hard_ceiling,
  RuleSchemas.require_attestation,
  RuleSchemas.require_human_approver_for_agent_initiated,
  RuleSchemas.agent_budget_ceiling,
  RuleSchemas.operating_window_utc,
  RuleSchemas.require_tag,
  RuleSchemas.allow_operations,
]);
export type Rule = z.infer<typeof RuleSchema>;
export type RuleOf<K extends RuleKind> = Extract<Rule, { rule: K }>;

export const PolicySetSchema = z.strictObject({
  wallet: boundedString(128),
  version: integer().min(0),
  rules: z.array(RuleSchema).max(256, 'at most 256 rules'),
});
export type PolicySet = z.infer<typeof PolicySetSchema>;
