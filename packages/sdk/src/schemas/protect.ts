/**
 * @module schemas/protect
 * Finding, the protect inputs of SignRequest, and SignerOutcome.
 */
import { z } from 'zod';
import { boundedString, boundedText } from './common.js';
import { MAX_STATEMENTS, SignedStatementSchema } from './statement.js';

export const GUARDS = ['network_separation', 'counterfeit_asset', 'address_poisoning', 'burned_key'] as const;
export type GuardName = (typeof GUARDS)[number];

export const FindingSchema = z.strictObject({
  guard: z.enum(GUARDS),
  severity: z.enum(['block', 'warn']),
  detail: z.string(),
});
export type Finding = z.infer<typeof FindingSchema>;

/**
 * One element of protect.evm_code: `[address, code]`, code being "0x" when no code is deployed at
 * the address and else the code's hash as 0x-hex (keccak256 of the runtime bytecode, as
 * EXTCODEHASH), as `protectChainFacts` writes a driver's neutral facts. A ledger whose accounts
 * hold no code sends an empty array.
 */
export const EvmCodeEntrySchema = z.tuple([
  boundedString(256),
  z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/, 'code must be 0x-prefixed hex'),
]);
export type EvmCodeEntry = z.infer<typeof EvmCodeEntrySchema>;

export const ProtectInputsSchema = z.strictObject({
  known_destinations: z.array(boundedString(256)).max(10000),
  burned: z.array(boundedString(256)).max(10000),
  evm_code: z.array(EvmCodeEntrySchema).max(64),
  token_owner_burned: z.boolean(),
  onchain_symbol: boundedText(64).nullable(),
  compliance_cleared: z.boolean(),
  attestation_valid: z.boolean(),
  /**
   * The signed attestations and clearances behind the two flags above. A signer decides both flags
   * from these alone (verifyStatements); the flags are the control plane's view, for the record.
   */
  statements: z.array(SignedStatementSchema).max(MAX_STATEMENTS).optional(),
});
export type ProtectInputs = z.infer<typeof ProtectInputsSchema>;

export const SignerOutcomeSchema = z.strictObject({
  signer: z.string(),
  address: z.string(),
  ok: z.boolean(),
  detail: z.string(),
});
export type SignerOutcome = z.infer<typeof SignerOutcomeSchema>;
