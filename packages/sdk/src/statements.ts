/**
 * @module statements
 * Signed statements (schemas/statement): an attestation of a wallet, a compliance clearance of a
 * destination. Each is ed25519 over `"vault-statement-v1\n" + JCS(statement without signature)`,
 * by a key the policy names. `verifyStatements` is the one function both services decide
 * `attestation_valid` and `compliance_cleared` with: from statements it verified, the policy's
 * named keys and the caller's own clock. A boolean someone sends proves nothing.
 */
import { canonicalize } from './canonical.js';
import { ed25519PublicKey, signEd25519, verifyEd25519 } from './ed25519.js';
import { fromHex, toHex, utf8Bytes } from './encoding.js';
import { ValidationError } from './errors.js';
import { sameAddress } from './policy/amounts.js';
import { parseWith, toValidationIssues } from './schemas/index.js';
import type { PolicySet } from './schemas/policy.js';
import { SignedStatementSchema, type SignedStatement, type StatementKind, type UnsignedStatement } from './schemas/statement.js';

export const STATEMENT_DOMAIN = 'vault-statement-v1\n';

/** The key that signs a statement: the attester of an attestation, the clearer of a clearance. */
export function statementKey(statement: UnsignedStatement): string {
  return statement.kind === 'attestation' ? statement.attester : statement.clearer;
}

/**
 * The exact bytes a statement's signature covers: UTF-8 of
 * `"vault-statement-v1\n" + JCS(statement)` without its `signature` member. The kind, the signing
 * key, the subject and both times are all covered.
 */
export function statementMessage(statement: UnsignedStatement | SignedStatement): Uint8Array {
  const { signature: _signature, ...unsigned } = statement as SignedStatement;
  return utf8Bytes(STATEMENT_DOMAIN + canonicalize(unsigned));
}

/**
 * Signs a statement with the 32-byte ed25519 secret key of the attester or clearer it names.
 * Throws a ValidationError when the statement is malformed or the key is not the one it names.
 *
 * @example
 * const clearance = signStatement({ kind: 'clearance', destination: 'rCounterparty…', clearer: clearerKeyHex, issued_at: now, expires_at: now + 86400 }, clearerSecret)
 */
export function signStatement<S extends UnsignedStatement>(statement: S, secretKey: Uint8Array | string): Extract<SignedStatement, { kind: S['kind'] }> {
  const key = typeof secretKey === 'string' ? fromHex(secretKey, 'secretKey', 32) : secretKey;
  if (key.length !== 32) throw new ValidationError('secretKey', [{ path: '', message: `expected 32 bytes, got ${key.length}` }]);
  const named = statementKey(statement);
  if (toHex(ed25519PublicKey(key)) !== named) {
    throw new ValidationError('secretKey', [{ path: '', message: `is not the secret key of ${statement.kind === 'attestation' ? 'attester' : 'clearer'} ${named}` }]);
  }
  const sig = toHex(signEd25519(statementMessage(statement), key));
  return parseWith(SignedStatementSchema, { ...statement, signature: { curve: 'ed25519', sig } }, 'statement') as Extract<SignedStatement, { kind: S['kind'] }>;
}

export type StatementProblem = 'malformed' | 'not_yet_valid' | 'expired' | 'other_subject' | 'unnamed_key' | 'bad_signature';

/** What a statement is checked against. */
export interface StatementContext {
  /** The policy whose require_attestation / require_compliance_clearance rules name the keys. */
  policy: PolicySet;
  /** The intent's wallet (an attestation must be for it). */
  wallet: string;
  /** The wallet's chain (a clearance that names a chain must name this one). */
  chain: string;
  /** The intent's destination (a clearance must be for it). */
  destination: string;
  /** The verifying service's own clock, integer Unix seconds. */
  now: number;
}

export interface StatementVerdict {
  /** The policy has a require_attestation rule, and each has a valid attestation by one of its attesters. */
  attestation_valid: boolean;
  /** The policy has a require_compliance_clearance rule, and each has a valid clearance by one of its clearers. */
  compliance_cleared: boolean;
  /** Statements that verified, in input order. */
  valid: SignedStatement[];
  problems: { index: number; kind: StatementKind | null; reason: StatementProblem; message: string }[];
}

/** The keys each rule of a kind names, one list per rule (a rule naming none gets an empty list). */
export function statementKeys(policy: PolicySet): Record<StatementKind, string[][]> {
  const out: Record<StatementKind, string[][]> = { attestation: [], clearance: [] };
  for (const r of policy.rules) {
    if (r.rule === 'require_attestation') out.attestation.push([...r.attesters]);
    else if (r.rule === 'require_compliance_clearance') out.clearance.push([...(r.clearers ?? [])]);
  }
  return out;
}

/**
 * Verifies statements for one intent and decides `attestation_valid` and `compliance_cleared`.
 * A statement counts only when it is well formed, `issued_at <= now < expires_at`, about this
 * wallet (attestation) or this destination and chain (clearance), signed by a key a rule of its
 * kind names, and its signature verifies. Each rule must be met by a key it names itself: with two
 * require_attestation rules, one attestation by a key only the first names meets only the first,
 * and the flag stays false. A rule that names no key is never met. Cheap checks come first, so a
 * signature is verified only for a statement that could count.
 *
 * @example
 * const v = verifyStatements(request.protect.statements ?? [], { policy, wallet: 'treasury', chain: 'xrpl:testnet', destination, now })
 * evaluatePolicy(policy, intent, { now, compliance_cleared: v.compliance_cleared, attestation_valid: v.attestation_valid })
 */
export function verifyStatements(statements: readonly unknown[], ctx: StatementContext): StatementVerdict {
  const keys = statementKeys(ctx.policy);
  const named = { attestation: new Set(keys.attestation.flat()), clearance: new Set(keys.clearance.flat()) };
  const valid: SignedStatement[] = [];
  const problems: StatementVerdict['problems'] = [];
  statements.forEach((raw, index) => {
    const parsed = SignedStatementSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = toValidationIssues(parsed.error)[0] ?? { path: '', message: 'invalid' };
      problems.push({ index, kind: null, reason: 'malformed', message: `statement.${issue.path}: ${issue.message}` });
      return;
    }
    const s = parsed.data;
    const problem = (reason: StatementProblem, message: string) => problems.push({ index, kind: s.kind, reason, message });
    if (s.issued_at > ctx.now) return problem('not_yet_valid', `${s.kind} is issued at ${s.issued_at}, after now (${ctx.now})`);
    if (s.expires_at <= ctx.now) return problem('expired', `${s.kind} expired at ${s.expires_at} (now ${ctx.now})`);
    if (s.kind === 'attestation' && s.wallet !== ctx.wallet) return problem('other_subject', `attestation is for wallet ${s.wallet}, not ${ctx.wallet}`);
    if (s.kind === 'clearance') {
      if (!sameAddress(s.destination, ctx.destination)) return problem('other_subject', `clearance is for destination ${s.destination}, not ${ctx.destination}`);
      if (s.chain !== undefined && s.chain !== ctx.chain) return problem('other_subject', `clearance is for chain ${s.chain}, not ${ctx.chain}`);
    }
    const key = statementKey(s);
    if (!named[s.kind].has(key)) return problem('unnamed_key', `${s.kind} is signed by ${key}, a key no ${s.kind === 'attestation' ? 'require_attestation' : 'require_compliance_clearance'} rule of the policy names`);
    if (!verifyEd25519(fromHex(s.signature.sig, 'signature.sig', 64), statementMessage(s), fromHex(key, 'key', 32))) {
      return problem('bad_signature', `the signature of ${s.kind} by ${key} does not verify`);
    }
    valid.push(s);
  });
  const met = (kind: StatementKind) => {
    const signers = new Set(valid.filter((s) => s.kind === kind).map(statementKey));
    return keys[kind].length > 0 && keys[kind].every((ruleKeys) => ruleKeys.some((k) => signers.has(k)));
  };
  return { attestation_valid: met('attestation'), compliance_cleared: met('clearance'), valid, problems };
}
