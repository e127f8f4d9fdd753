/**
 * @module schemas/intent
 * IntentRequest (body of POST /intent) and every Operation variant with its limits.
 */
import { z } from 'zod';
import { INITIATOR_GRAMMAR, INITIATOR_RE } from '../identity.js';
import { addressText, AmountSchema, boundedString, boundedText, integer } from './common.js';

/** mpt_create flag bits (interface.md): CanLock .. CanClawback. */
export const MPT_FLAGS = {
  CanLock: 0x02,
  RequireAuth: 0x04,
  CanEscrow: 0x08,
  CanTrade: 0x10,
  CanTransfer: 0x20,
  CanClawback: 0x40,
} as const;
export const MPT_FLAGS_MASK = 0x7e;
/** XRPL's MPT MaximumAmount ceiling: 2^63 - 1. */
export const MPT_MAX_AMOUNT = (1n << 63n) - 1n;

const Uint32 = integer().min(0).max(0xffffffff);

/**
 * maximum_amount <= 2^63-1. Zod runs a refinement even when the union beneath it reported a
 * malformed string (a failed pattern does not stop the checks), so this must not throw on any
 * string: only a well-formed amount is converted; anything else is already an issue of its own.
 */
function atMostMptMax(v: number | string): boolean {
  if (typeof v === 'number') return v <= MPT_MAX_AMOUNT;
  return !/^(0|[1-9][0-9]{0,77})$/.test(v) || BigInt(v) <= MPT_MAX_AMOUNT;
}

const TransferOp = z.strictObject({ op: z.literal('transfer') });
const IssueOp = z.strictObject({ op: z.literal('issue') });
const AuthorizeHolderOp = z.strictObject({
  op: z.literal('authorize_holder'),
  revoke: z.boolean().optional(),
});
const ClawbackOp = z.strictObject({ op: z.literal('clawback') });
const MptCreateOp = z.strictObject({
  op: z.literal('mpt_create'),
  asset_scale: integer().min(0, 'asset_scale must be 0..19').max(19, 'asset_scale must be 0..19'),
  // Bounded first: `&` reads only 32 bits, so 2^33 would pass the mask test alone.
  flags: integer()
    .min(0)
    .max(MPT_FLAGS_MASK, 'flags may only combine 0x02, 0x04, 0x08, 0x10, 0x20, 0x40')
    .refine((f) => (f & ~MPT_FLAGS_MASK) === 0, 'flags may only combine 0x02, 0x04, 0x08, 0x10, 0x20, 0x40'),
  maximum_amount: z
    .union([integer().min(0), AmountSchema])
    .refine(atMostMptMax, 'maximum_amount must be at most 2^63-1')
    .nullable()
    .optional(),
  transfer_fee: integer().min(0).max(50000, 'transfer_fee must be at most 50000').nullable().optional(),
  metadata_hex: z
    .string()
    .max(2048, 'metadata_hex is at most 1024 bytes')
    .regex(/^(?:[0-9a-fA-F]{2})*$/, 'metadata_hex must be hex with an even number of digits')
    .nullable()
    .optional(),
});
const AccountFlagsOp = z
  .strictObject({
    op: z.literal('account_flags'),
    set: Uint32.nullable().optional(),
    clear: Uint32.nullable().optional(),
  })
  .refine((o) => o.set != null || o.clear != null, {
    message: 'account_flags needs set or clear',
    path: ['set'],
  });
const ContractCallOp = z.strictObject({
  op: z.literal('contract_call'),
  data_hex: z
    .string()
    .max(262146, 'data_hex is at most 128 KiB')
    .regex(/^0x[0-9a-fA-F]{8,}$/, 'data_hex must be 0x followed by at least 8 hex digits')
    .refine((d) => d.length % 2 === 0, 'data_hex must have an even number of hex digits'),
});

export const OperationSchema = z.discriminatedUnion('op', [
  TransferOp,
  IssueOp,
  AuthorizeHolderOp,
  ClawbackOp,
  MptCreateOp,
  AccountFlagsOp,
  ContractCallOp,
]);
export type Operation = z.infer<typeof OperationSchema>;
export type OperationInput = z.input<typeof OperationSchema>;

export const OPERATION_KINDS = [
  'transfer',
  'issue',
  'authorize_holder',
  'clawback',
  'mpt_create',
  'account_flags',
  'contract_call',
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export const TagSchema = z.tuple([boundedString(128, 1), boundedText(256)]);

export const IntentRequestSchema = z.strictObject({
  wallet: boundedString(128),
  destination: addressText(256),
  amount: AmountSchema,
  /** Shown to approvers beside the amount: no invisible or direction-changing character (U+202E would show `USDC` for `CDSU`). */
  asset_symbol: addressText(64).optional(),
  asset_issuer: addressText(256).optional(),
  asset_decimals: integer().min(0).max(36).optional(),
  memo: boundedText(1024, 'memo must be at most 1024 characters').optional(),
  /** Who initiated the intent (identity.ts): exactly one spelling per identity. */
  initiator: z.string().max(128).regex(INITIATOR_RE, `initiator must be ${INITIATOR_GRAMMAR}`).optional(),
  tags: z.array(TagSchema).max(32, 'at most 32 tags').optional(),
  operation: OperationSchema.optional(),
});
/** What a caller sends to POST /intent. */
export type IntentRequest = z.input<typeof IntentRequestSchema>;

/** An intent after normalisation (DESIGN.md §3): defaults filled, absent optionals dropped. */
export interface NormalizedIntent {
  wallet: string;
  destination: string;
  amount: string;
  asset_symbol?: string;
  asset_issuer?: string;
  asset_decimals: number;
  memo?: string;
  initiator: string;
  tags?: [string, string][];
  operation: NormalizedOperation;
}

export type NormalizedOperation =
  | { op: 'transfer' }
  | { op: 'issue' }
  | { op: 'authorize_holder'; revoke: boolean }
  | { op: 'clawback' }
  | {
      op: 'mpt_create';
      asset_scale: number;
      flags: number;
      maximum_amount?: string;
      transfer_fee?: number;
      metadata_hex?: string;
    }
  | { op: 'account_flags'; set?: number; clear?: number }
  | { op: 'contract_call'; data_hex: string };

/** AssetSpec: one entry of the canonical asset registry. */
export const AssetSpecSchema = z.strictObject({
  chain: boundedString(64),
  symbol: boundedString(64),
  decimals: integer().min(0).max(36),
  issuer: z.string().max(256).nullable().optional(),
});
export type AssetSpec = z.infer<typeof AssetSpecSchema>;
