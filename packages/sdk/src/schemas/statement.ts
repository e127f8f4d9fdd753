/**
 * @module schemas/statement
 * Signed statements: an attestation of a wallet and a compliance clearance of a destination, each
 * signed by an ed25519 key a policy names (`require_attestation.attesters`,
 * `require_compliance_clearance.clearers`). They are the evidence behind `attestation_valid` and
 * `compliance_cleared`: a service decides those from statements it verified, never from a boolean
 * it was sent (see statements.ts).
 */
import { z } from 'zod';
import { boundedString, hexBytes, UnixSecondsSchema } from './common.js';

/** The most statements one SignRequest carries (protect.statements). */
export const MAX_STATEMENTS = 64;

const StatementSignatureSchema = z.strictObject({
  curve: z.literal('ed25519', { error: 'curve must be ed25519' }),
  sig: z.string().regex(/^[0-9a-f]{128}$/, 'sig must be 64 bytes as 128 lowercase hex digits'),
});

const validity = {
  issued_at: UnixSecondsSchema.describe('Not valid before this instant (integer Unix seconds).'),
  expires_at: UnixSecondsSchema.describe('Not valid from this instant on (integer Unix seconds).'),
};

export const AttestationStatementSchema = z
  .strictObject({
    kind: z.literal('attestation'),
    wallet: boundedString(128),
    attester: hexBytes(32).describe('The ed25519 key that signed: one of a require_attestation rule\'s attesters.'),
    ...validity,
    signature: StatementSignatureSchema,
  })
  .describe('The attester vouches for the wallet until expires_at.');
export type AttestationStatement = z.infer<typeof AttestationStatementSchema>;

export const ClearanceStatementSchema = z
  .strictObject({
    kind: z.literal('clearance'),
    destination: boundedString(256),
    chain: boundedString(128).optional().describe('Only on this chain; absent: on any chain.'),
    clearer: hexBytes(32).describe('The ed25519 key that signed: one of a require_compliance_clearance rule\'s clearers.'),
    ...validity,
    signature: StatementSignatureSchema,
  })
  .describe('Compliance cleared sending to the destination until expires_at.');
export type ClearanceStatement = z.infer<typeof ClearanceStatementSchema>;

export const SignedStatementSchema = z.discriminatedUnion('kind', [AttestationStatementSchema, ClearanceStatementSchema]);
export type SignedStatement = z.infer<typeof SignedStatementSchema>;
export type StatementKind = SignedStatement['kind'];

/** A statement before it is signed: everything its signature covers. */
export type UnsignedStatement = { [K in StatementKind]: Omit<Extract<SignedStatement, { kind: K }>, 'signature'> }[StatementKind];
