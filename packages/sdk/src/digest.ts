/**
 * @module digest
 * Content addressing (DESIGN.md §3): intent normalisation and ids, policy digests, and the exact
 * bytes an approval signature covers.
 */
import { canonicalize } from './canonical.js';
import { sha256Hex, utf8Bytes } from './encoding.js';
import { PolicySetSchema, type PolicySet } from './schemas/policy.js';
import {
  IntentRequestSchema,
  type IntentRequest,
  type NormalizedIntent,
  type NormalizedOperation,
} from './schemas/intent.js';
import { parseWith } from './schemas/index.js';
import type { SignedApproval } from './schemas/approval.js';
import { isValidated, sealValidated } from './validated.js';

export const DEFAULT_ASSET_DECIMALS = 6;
export const DEFAULT_INITIATOR = 'operator';

/**
 * Validates an IntentRequest and normalises it: fills the defaults (asset_decimals 6, initiator
 * "operator", operation transfer, authorize_holder.revoke false), drops absent and null
 * optionals and an empty tag list, writes mpt maximum_amount as a decimal string and hex in
 * lowercase. Equivalent requests normalise to identical objects; normalising twice is a no-op.
 * The result is deeply frozen; passing it back in returns it without validating it again.
 *
 * @example
 * normalizeIntent({ wallet: 'w1', destination: 'rDest', amount: '10' }).operation // { op: 'transfer' }
 */
export function normalizeIntent(request: IntentRequest | unknown): NormalizedIntent {
  if (isValidated(request)) return request as NormalizedIntent;
  const r = parseWith(IntentRequestSchema, request, 'intent');
  // Members added in RFC 8785 order, so the intent id's canonicalize takes its fast path.
  const out = { amount: r.amount, asset_decimals: r.asset_decimals ?? DEFAULT_ASSET_DECIMALS } as NormalizedIntent;
  if (r.asset_issuer !== undefined) out.asset_issuer = r.asset_issuer;
  if (r.asset_symbol !== undefined) out.asset_symbol = r.asset_symbol;
  out.destination = r.destination;
  out.initiator = r.initiator ?? DEFAULT_INITIATOR;
  if (r.memo !== undefined) out.memo = r.memo;
  out.operation = normalizeOperation(r.operation);
  if (r.tags !== undefined && r.tags.length > 0) out.tags = r.tags.map(([k, v]) => [k, v]);
  out.wallet = r.wallet;
  return sealValidated(out);
}

function normalizeOperation(op: ReturnType<typeof IntentRequestSchema.parse>['operation']): NormalizedOperation {
  if (op === undefined) return { op: 'transfer' };
  switch (op.op) {
    case 'authorize_holder':
      return { op: 'authorize_holder', revoke: op.revoke ?? false };
    case 'mpt_create': {
      // RFC 8785 member order, as for the intent.
      const out = { asset_scale: op.asset_scale, flags: op.flags } as Extract<NormalizedOperation, { op: 'mpt_create' }>;
      if (op.maximum_amount != null) out.maximum_amount = BigInt(op.maximum_amount).toString();
      if (op.metadata_hex != null) out.metadata_hex = op.metadata_hex.toLowerCase();
      out.op = 'mpt_create';
      if (op.transfer_fee != null) out.transfer_fee = op.transfer_fee;
      return out;
    }
    case 'account_flags': {
      const out = {} as Extract<NormalizedOperation, { op: 'account_flags' }>;
      if (op.clear != null) out.clear = op.clear;
      out.op = 'account_flags';
      if (op.set != null) out.set = op.set;
      return out;
    }
    case 'contract_call':
      return { data_hex: op.data_hex.toLowerCase(), op: 'contract_call' };
    default:
      return { op: op.op };
  }
}

/**
 * The content address of an intent: `"int_" + sha256(JCS(normalizeIntent(request)))`.
 *
 * @example
 * intentId({ wallet: 'w1', destination: 'rDest', amount: '10' }) // 'int_…64 hex'
 */
export function intentId(request: IntentRequest | unknown): string {
  return `int_${sha256Hex(canonicalize(normalizeIntent(request)))}`;
}

const PREPARED_DIGESTS = new WeakMap<object, string>();

/** `sha256(JCS(PolicySet))` after validating the policy (a prepared policy's digest is computed once). */
export function policyDigest(policy: PolicySet | unknown): string {
  if (isValidated(policy)) {
    const known = PREPARED_DIGESTS.get(policy as object);
    if (known !== undefined) return known;
    const digest = sha256Hex(canonicalize(policy));
    PREPARED_DIGESTS.set(policy as object, digest);
    return digest;
  }
  return sha256Hex(canonicalize(parseWith(PolicySetSchema, policy, 'policy')));
}

/** The fields of an approval that its signature covers. */
export type ApprovalStatement = Pick<SignedApproval, 'approver_id' | 'intent' | 'verdict' | 'at' | 'strong_auth'>;

export const APPROVAL_DOMAIN = 'vault-approval-v1\n';

/**
 * The exact bytes an approval signature covers: UTF-8 of
 * `"vault-approval-v1\n" + JCS({approver_id, intent, verdict, at, strong_auth})`.
 */
export function approvalMessage(statement: ApprovalStatement): Uint8Array {
  const { approver_id, intent, verdict, at, strong_auth } = statement;
  // Members in RFC 8785 order, so canonicalize takes its fast path (the bytes are the same either way).
  return utf8Bytes(APPROVAL_DOMAIN + canonicalize({ approver_id, at, intent, strong_auth, verdict }));
}
