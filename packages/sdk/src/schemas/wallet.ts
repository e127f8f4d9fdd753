/**
 * @module schemas/wallet
 * WalletDescriptor, SignerDesc and ChainParams.
 */
import { z } from 'zod';
import { boundedString, boundedText, CurveSchema, integer } from './common.js';

export const SignerDescSchema = z.strictObject({
  address: boundedString(256),
  curve: CurveSchema,
  weight: integer().min(1, 'weight must be at least 1').max(65535),
  label: boundedText(128),
});
export type SignerDesc = z.infer<typeof SignerDescSchema>;

const NativeMultisig = z.strictObject({
  kind: z.literal('native_multisig'),
  address: boundedString(256),
  signers: z.array(SignerDescSchema).min(1, 'at least one signer').max(32, 'at most 32 signers'),
  quorum: integer().min(1, 'quorum must be at least 1').max(0xffffffff),
});
const EvmSafe = z.strictObject({
  kind: z.literal('evm_safe'),
  safe: boundedString(256),
  owners: z.array(SignerDescSchema).min(1, 'at least one owner').max(64, 'at most 64 owners'),
  threshold: integer().min(1, 'threshold must be at least 1').max(64),
  // What the Safe was deployed or adopted with, so reconcile reports any change as drift. Absent
  // in older descriptors: then version, singleton and fallback handler are not compared.
  version: z.string().regex(/^[0-9]+\.[0-9]+\.[0-9]+$/, 'version must be x.y.z').optional().describe('Safe version, identified by the singleton code'),
  singleton: boundedString(256).optional(),
  fallback_handler: boundedString(256).optional(),
  modules: z
    .array(boundedString(256))
    .max(64, 'at most 64 modules')
    .optional()
    .describe('Modules the operator allowed when adopting: each moves funds without the owners. Absent: none.'),
  guard: boundedString(256).optional().describe('The transaction guard the operator allowed when adopting. Absent: none.'),
});

export const WalletControlSchema = z.discriminatedUnion('kind', [NativeMultisig, EvmSafe]);
export type WalletControl = z.infer<typeof WalletControlSchema>;

function reachable(c: WalletControl): boolean {
  const members = c.kind === 'native_multisig' ? c.signers : c.owners;
  const total = members.reduce((sum, s) => sum + s.weight, 0);
  return total >= (c.kind === 'native_multisig' ? c.quorum : c.threshold);
}

function unique(c: WalletControl): boolean {
  const members = c.kind === 'native_multisig' ? c.signers : c.owners;
  return new Set(members.map((m) => m.address.toLowerCase())).size === members.length;
}

export const WalletDescriptorSchema = z.strictObject({
  wallet: boundedString(128),
  chain: boundedString(64),
  control: WalletControlSchema
    .refine(unique, { message: 'signer addresses must be unique', path: ['signers'] })
    .refine(reachable, { message: 'quorum is higher than the total signer weight', path: ['quorum'] }),
});
export type WalletDescriptor = z.infer<typeof WalletDescriptorSchema>;

/** Signers (native multisig) or owners (Safe) of a wallet, with the weight needed. */
export function walletMembers(wallet: WalletDescriptor): { members: SignerDesc[]; quorum: number } {
  const c = wallet.control;
  return c.kind === 'native_multisig'
    ? { members: c.signers, quorum: c.quorum }
    : { members: c.owners, quorum: c.threshold };
}

const XrplParams = z.strictObject({
  kind: z.literal('xrpl'),
  sequence: integer().min(0).max(0xffffffff),
  base_fee_drops: integer().min(1).max(1_000_000_000),
  last_ledger_sequence: integer().min(1).max(0xffffffff),
  network_id: integer().min(0).max(0xffffffff).nullable(),
});
const StellarParams = z.strictObject({
  kind: z.literal('stellar'),
  /**
   * Stellar sequence numbers are int64 and today exceed 2^53 (ledger << 32), so a JSON number
   * would silently lose precision: past Number.MAX_SAFE_INTEGER the value must be a decimal string.
   */
  sequence: z.union([
    integer().min(0),
    z.string().regex(/^(0|[1-9][0-9]{0,18})$/, 'sequence must be an int64 decimal string'),
  ]),
  base_fee_stroops: integer().min(100, 'base_fee_stroops must be at least 100').max(100_000_000),
  max_time: integer().min(1),
  /**
   * The account's low / medium / high thresholds as the ledger holds them (Stellar only): an
   * operation needs the weight of its threshold class, which may differ from the descriptor's
   * quorum. Optional; without it every class is taken to be the descriptor's quorum. Only decides
   * when the control plane stops collecting signatures; the ledger enforces the real thresholds.
   */
  thresholds: z
    .strictObject({ low: integer().min(0).max(255), med: integer().min(0).max(255), high: integer().min(0).max(255) })
    .optional(),
});
const EvmSafeParams = z.strictObject({
  kind: z.literal('evm_safe'),
  chain_id: integer().min(1),
  safe_nonce: z.string().regex(/^(0|[1-9][0-9]{0,77})$/, 'safe_nonce must be a decimal integer string'),
});

/**
 * Parameters of a ledger family the spec does not name (a third-party driver's own ledger).
 * `family` is the driver's family; `fields` are flat JSON values the driver validates itself in
 * buildPayload. Integers past 2^53 must travel as decimal strings.
 */
const CustomParams = z.strictObject({
  kind: z.literal('custom'),
  family: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'family must be 1-32 of a-z, 0-9 and -'),
  fields: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'field names are identifiers'),
      z.union([z.string().max(1024), integer(), z.boolean(), z.null()]),
    )
    .refine((f) => Object.keys(f).length <= 32, 'at most 32 fields'),
});

/**
 * ChainParams, tagged by kind; frozen before anyone signs. `xrpl`, `stellar` and `evm_safe` are
 * the spec's; `custom` lets a third-party driver add a ledger without changing the wire contract.
 */
export const ChainParamsSchema = z.discriminatedUnion('kind', [XrplParams, StellarParams, EvmSafeParams, CustomParams]);
export type ChainParams = z.infer<typeof ChainParamsSchema>;
export type ChainParamsKind = ChainParams['kind'];
export const CHAIN_PARAMS_KINDS = ['xrpl', 'stellar', 'evm_safe', 'custom'] as const satisfies readonly ChainParamsKind[];
