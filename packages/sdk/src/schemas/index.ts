/**
 * @module schemas
 * Runtime schemas for every wire resource, a parse helper whose errors name the failing field,
 * and JSON Schema generated from the same definitions.
 */
import { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { DecisionSchema, SignedApprovalSchema } from './approval.js';
import {
  ApproveResultSchema,
  CancelRequestSchema,
  CancelResultSchema,
  CreateIntentResultSchema,
  ErrorBodySchema,
  ExecuteOutcomeSchema,
  LedgerVerifyResultSchema,
  ProtectResultSchema,
  ReceiptRecordSchema,
  ReconcileResultSchema,
  SessionUnlockResultSchema,
  StoredIntentSchema,
} from './control-plane.js';
import { EventPageSchema, VaultEventSchema } from './event.js';
import { AdminPolicySchema, ChangeApprovalSchema, ChangeSetSchema, GovernancePushSchema } from './governance.js';
import { AssetSpecSchema, IntentRequestSchema, OperationSchema } from './intent.js';
import { PolicySetSchema, RuleSchema } from './policy.js';
import { FindingSchema, ProtectInputsSchema, SignerOutcomeSchema } from './protect.js';
import { RestrictionSetSchema, RestrictionsInForceSchema, RestrictionsResultSchema } from './restriction.js';
import { ObserveRequestSchema, ObserveResponseSchema, SignRequestSchema, SignResponseSchema, SignerRefusalSchema } from './sign.js';
import { SignedStatementSchema } from './statement.js';
import { SupplyReportSchema } from './supply-report.js';
import { ChainParamsSchema, SignerDescSchema, WalletDescriptorSchema } from './wallet.js';

export * from './approval.js';
export * from './common.js';
export * from './control-plane.js';
export * from './event.js';
export * from './governance.js';
export * from './intent.js';
export * from './policy.js';
export * from './protect.js';
export * from './restriction.js';
export * from './sign.js';
export * from './statement.js';
export * from './supply-report.js';
export * from './wallet.js';

/** Converts zod issues to ValidationIssues with dotted paths (`rules.3.addresses.0`). */
export function toValidationIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: describeIssue(issue),
  }));
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
    return `unknown ${String(issue.discriminator)}`;
  }
  if (issue.code === 'unrecognized_keys') return `unknown field(s): ${issue.keys.join(', ')}`;
  return issue.message;
}

/**
 * Parses `value` with `schema`; on failure throws a ValidationError whose message and `path`
 * name the first failing field, prefixed by `what` (e.g. `invalid intent.operation.asset_scale`).
 *
 * @example
 * const req = parseWith(IntentRequestSchema, body, 'intent')
 */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ValidationError(what, toValidationIssues(result.error));
}

/** Every wire resource by name: the single source for validation and for JSON Schema. */
export const WIRE_SCHEMAS = {
  IntentRequest: IntentRequestSchema,
  Operation: OperationSchema,
  AssetSpec: AssetSpecSchema,
  Decision: DecisionSchema,
  SignedApproval: SignedApprovalSchema,
  SignedStatement: SignedStatementSchema,
  Finding: FindingSchema,
  SignerOutcome: SignerOutcomeSchema,
  Rule: RuleSchema,
  PolicySet: PolicySetSchema,
  SignerDesc: SignerDescSchema,
  WalletDescriptor: WalletDescriptorSchema,
  ChainParams: ChainParamsSchema,
  ProtectInputs: ProtectInputsSchema,
  SignRequest: SignRequestSchema,
  ObserveRequest: ObserveRequestSchema,
  ObserveResponse: ObserveResponseSchema,
  SignResponse: SignResponseSchema,
  SignerRefusal: SignerRefusalSchema,
  RestrictionSet: RestrictionSetSchema,
  RestrictionsResult: RestrictionsResultSchema,
  RestrictionsInForce: RestrictionsInForceSchema,
  ErrorBody: ErrorBodySchema,
  SessionUnlockResult: SessionUnlockResultSchema,
  CreateIntentResult: CreateIntentResultSchema,
  ApproveResult: ApproveResultSchema,
  CancelRequest: CancelRequestSchema,
  CancelResult: CancelResultSchema,
  ProtectResult: ProtectResultSchema,
  StoredIntent: StoredIntentSchema,
  ExecuteOutcome: ExecuteOutcomeSchema,
  ReconcileResult: ReconcileResultSchema,
  ReceiptRecord: ReceiptRecordSchema,
  LedgerVerifyResult: LedgerVerifyResultSchema,
  SupplyReport: SupplyReportSchema,
  VaultEvent: VaultEventSchema,
  EventPage: EventPageSchema,
  AdminPolicy: AdminPolicySchema,
  ChangeSet: ChangeSetSchema,
  ChangeApproval: ChangeApprovalSchema,
  GovernancePush: GovernancePushSchema,
} as const;
export type WireSchemaName = keyof typeof WIRE_SCHEMAS;

/**
 * JSON Schema (draft 2020-12) of every wire resource, generated from the runtime schemas, in the
 * form a request body takes (`io: "input"`). This feeds the servers' OpenAPI document.
 */
export function jsonSchemas(): Record<WireSchemaName, Record<string, unknown>> {
  const out = {} as Record<WireSchemaName, Record<string, unknown>>;
  for (const [name, schema] of Object.entries(WIRE_SCHEMAS) as [WireSchemaName, z.ZodType][]) {
    out[name] = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  }
  return out;
}
