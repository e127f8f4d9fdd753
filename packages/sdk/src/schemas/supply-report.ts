/**
 * @module schemas/supply-report
 * The derived, re-runnable supply report document (interface.md "Supply report").
 */
import { z } from 'zod';

const DecimalString = z.string().regex(/^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/, 'expected a decimal string');

/** Provenance the report adds beyond the spec so `verify` can re-run a row and measure drift. */
const Provenance = {
  at: z
    .strictObject({ ledger: z.union([z.int(), z.string()]), hash: z.string().nullable().optional() })
    .optional(),
  response_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
};

export const XrplIssuerRowSchema = z.strictObject({
  account: z.string().min(1),
  domain: z.string().nullable(),
  obligations: z.record(z.string(), DecimalString),
  query: z.string().min(1),
  note: z.string().optional(),
  ...Provenance,
});

export const StellarIssuerRowSchema = z.strictObject({
  issuer: z.string().min(1),
  locked: z.boolean().nullable(),
  merged: z.string().optional(),
  assets: z.record(z.string(), z.string()),
  query: z.string().regex(/^GET \//, 'query must be a GET request line'),
  note: z.string().optional(),
  /** For a group row: the issuer accounts the group label stands for, so `verify` can re-check each. */
  members: z.array(z.string().min(1)).min(1).optional(),
  ...Provenance,
});

export const SolanaMintRowSchema = z.strictObject({
  mint: z.string().min(1),
  label: z.string(),
  supply: z.string(),
  decimals: z.int().min(0),
  mintAuthority: z.string().nullable().optional(),
  freezeAuthority: z.string().nullable().optional(),
  query: z.string().min(1),
  note: z.string().optional(),
  ...Provenance,
});

export const PolygonContractSchema = z.strictObject({
  address: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  label: z.string(),
  owner: z.string().optional(),
  supply: z.string().optional(),
  note: z.string().optional(),
  /** The exact JSON-RPC request (a batch of eth_call and eth_getCode pinned to one block) behind the row. */
  query: z.string().min(1).optional(),
  /** Bytes of runtime code eth_getCode returned at the row's block (0: no code). Optional: reports made before it existed lack it. */
  code_size: z.int().min(0).optional(),
  ...Provenance,
});

export const SupplyReportSchema = z.strictObject({
  derivedAt: z.iso.datetime({ message: 'derivedAt must be an ISO 8601 UTC timestamp' }),
  rule: z.string().min(1),
  chains: z.strictObject({
    xrpl: z.strictObject({ endpoint: z.string().min(1), issuers: z.array(XrplIssuerRowSchema) }),
    stellar: z.strictObject({ endpoint: z.string().min(1), issuers: z.array(StellarIssuerRowSchema) }),
    solana: z.strictObject({ endpoint: z.string().min(1), mints: z.array(SolanaMintRowSchema) }),
    polygon: z.strictObject({
      endpoint: z.string().min(1),
      owner: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
      contracts: z.array(PolygonContractSchema),
      query: z.string().min(1),
      note: z.string().min(1),
      /** The block every call of the run was pinned to. */
      at: Provenance.at,
    }),
  }),
});
export type SupplyReport = z.infer<typeof SupplyReportSchema>;
