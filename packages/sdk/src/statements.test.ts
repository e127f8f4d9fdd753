import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { toHex } from './encoding.js';
import { ValidationError } from './errors.js';
import { evaluatePolicy } from './policy/engine.js';
import type { PolicySet, Rule } from './schemas/policy.js';
import type { UnsignedStatement } from './schemas/statement.js';
import { signStatement, statementMessage, STATEMENT_DOMAIN, verifyStatements, type StatementContext } from './statements.js';

const seed = (n: number) => new Uint8Array(32).fill(n);
const key = (n: number) => ({ sk: seed(n), pk: toHex(ed25519.getPublicKey(seed(n))) });
const attester = key(1);
const clearer = key(2);
const other = key(3);
const NOW = 1_767_225_600;
const DEST = `0x${'ab'.repeat(20)}`;

const policyOf = (rules: Rule[]): PolicySet => ({ wallet: 'treasury', version: 1, rules });
const both = policyOf([
  { rule: 'always_allow' },
  { rule: 'require_attestation', attesters: [attester.pk] },
  { rule: 'require_compliance_clearance', clearers: [clearer.pk] },
]);
const ctx = (over: Partial<StatementContext> = {}): StatementContext => ({ policy: both, wallet: 'treasury', chain: 'evm:devnet', destination: DEST, now: NOW, ...over });
const attestation = (over: Partial<Extract<UnsignedStatement, { kind: 'attestation' }>> = {}, sk = attester.sk) =>
  signStatement({ kind: 'attestation', wallet: 'treasury', attester: attester.pk, issued_at: NOW - 60, expires_at: NOW + 3600, ...over }, sk);
const clearance = (over: Partial<Extract<UnsignedStatement, { kind: 'clearance' }>> = {}, sk = clearer.sk) =>
  signStatement({ kind: 'clearance', destination: DEST, clearer: clearer.pk, issued_at: NOW - 60, expires_at: NOW + 3600, ...over }, sk);

describe('signStatement / statementMessage', () => {
  it('signs over the domain tag and the canonical statement without its signature', () => {
    const s = attestation();
    expect(s.signature).toEqual({ curve: 'ed25519', sig: expect.stringMatching(/^[0-9a-f]{128}$/) });
    const text = new TextDecoder().decode(statementMessage(s));
    expect(text).toBe(`${STATEMENT_DOMAIN}{"attester":"${attester.pk}","expires_at":${NOW + 3600},"issued_at":${NOW - 60},"kind":"attestation","wallet":"treasury"}`);
  });

  it('refuses a secret key that is not the named attester or clearer', () => {
    expect(() => attestation({}, other.sk)).toThrow(ValidationError);
    expect(() => clearance({}, attester.sk)).toThrow(/not the secret key of clearer/);
  });
});

describe('verifyStatements', () => {
  it('a valid attestation and clearance make both flags true, and the policy allows', () => {
    const v = verifyStatements([attestation(), clearance()], ctx());
    expect(v).toMatchObject({ attestation_valid: true, compliance_cleared: true, problems: [] });
    expect(v.valid).toHaveLength(2);
    const decision = evaluatePolicy(both, { wallet: 'treasury', destination: DEST, amount: '1' }, { now: NOW, ...v });
    expect(decision.decision).toBe('allow');
  });

  it('no statements: both flags false, and the policy denies on both rules', () => {
    const v = verifyStatements([], ctx());
    expect(v).toMatchObject({ attestation_valid: false, compliance_cleared: false });
    const decision = evaluatePolicy(both, { wallet: 'treasury', destination: DEST, amount: '1' }, { now: NOW, ...v });
    expect(decision.decision).toBe('deny');
    expect(decision.reasons.join('\n')).toMatch(/require_attestation\[1\][\s\S]*require_compliance_clearance\[2\]/);
  });

  it.each([
    ['signed by a key the policy does not name', () => attestation({ attester: other.pk }, other.sk), 'unnamed_key'],
    ['a clearance signed by the attester key', () => clearance({ clearer: attester.pk }, attester.sk), 'unnamed_key'],
    ['expired', () => attestation({ expires_at: NOW }), 'expired'],
    ['issued in the future', () => attestation({ issued_at: NOW + 1 }), 'not_yet_valid'],
    ['for another wallet', () => attestation({ wallet: 'ops' }), 'other_subject'],
    ['for another destination', () => clearance({ destination: `0x${'cd'.repeat(20)}` }), 'other_subject'],
    ['for another chain', () => clearance({ chain: 'evm:mainnet' }), 'other_subject'],
    ['with a changed expiry', () => ({ ...attestation(), expires_at: NOW + 999_999 }), 'bad_signature'],
    ['moved to another wallet', () => ({ ...attestation(), wallet: 'ops' }), 'other_subject'],
    ['moved to another destination', () => ({ ...clearance(), destination: `0x${'cd'.repeat(20)}` }), 'other_subject'],
    ['re-labelled as signed by another named key', () => ({ ...attestation(), attester: clearer.pk }), 'unnamed_key'],
    ['with a forged signature', () => ({ ...attestation(), signature: { curve: 'ed25519', sig: 'ab'.repeat(64) } }), 'bad_signature'],
    ['malformed', () => ({ kind: 'attestation', wallet: 'treasury' }), 'malformed'],
    ['of an unknown kind', () => ({ ...attestation(), kind: 'blessing' }), 'malformed'],
  ])('a statement %s does not count', (_name, make, reason) => {
    const v = verifyStatements([make()], ctx());
    expect(v.valid).toEqual([]);
    expect(v.problems).toEqual([expect.objectContaining({ index: 0, reason })]);
    expect(v.attestation_valid).toBe(false);
    expect(v.compliance_cleared).toBe(false);
  });

  it('a clearance re-labelled as an attestation by the same key does not verify (the kind is signed)', () => {
    const c = clearance();
    const relabelled = { kind: 'attestation', wallet: 'treasury', attester: clearer.pk, issued_at: c.issued_at, expires_at: c.expires_at, signature: c.signature };
    const p = policyOf([{ rule: 'require_attestation', attesters: [clearer.pk] }]);
    expect(verifyStatements([relabelled], ctx({ policy: p })).problems[0]?.reason).toBe('bad_signature');
  });

  it('EVM destinations compare case-insensitively; other addresses exactly', () => {
    expect(verifyStatements([clearance({ destination: DEST.toUpperCase().replace('0X', '0x') })], ctx()).compliance_cleared).toBe(true);
    const xrpl = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe';
    expect(verifyStatements([clearance({ destination: xrpl })], ctx({ destination: xrpl.toLowerCase() })).compliance_cleared).toBe(false);
  });

  it('a clearance naming the wallet chain counts; one without a chain counts on any chain', () => {
    expect(verifyStatements([clearance({ chain: 'evm:devnet' })], ctx()).compliance_cleared).toBe(true);
    expect(verifyStatements([clearance()], ctx({ chain: 'evm:other' })).compliance_cleared).toBe(true);
  });

  it('valid from issued_at up to (not including) expires_at, on the caller clock', () => {
    const s = attestation({ issued_at: NOW, expires_at: NOW + 10 });
    expect(verifyStatements([s], ctx({ now: NOW - 1 })).attestation_valid).toBe(false);
    expect(verifyStatements([s], ctx({ now: NOW })).attestation_valid).toBe(true);
    expect(verifyStatements([s], ctx({ now: NOW + 9 })).attestation_valid).toBe(true);
    expect(verifyStatements([s], ctx({ now: NOW + 10 })).attestation_valid).toBe(false);
  });

  it('a rule that names no clearer is never met, whatever is presented', () => {
    const p = policyOf([{ rule: 'require_compliance_clearance' }]);
    const v = verifyStatements([clearance()], ctx({ policy: p }));
    expect(v.compliance_cleared).toBe(false);
    expect(v.problems[0]?.reason).toBe('unnamed_key');
    const decision = evaluatePolicy(p, { wallet: 'treasury', destination: DEST, amount: '1' }, { now: NOW, compliance_cleared: v.compliance_cleared });
    expect(decision.reasons[0]).toMatch(/names no clearer key/);
  });

  it('without a rule of its kind a flag is false (nothing asks for it)', () => {
    const v = verifyStatements([attestation(), clearance()], ctx({ policy: policyOf([{ rule: 'always_allow' }]) }));
    expect(v).toMatchObject({ attestation_valid: false, compliance_cleared: false, valid: [] });
  });

  it('every rule of a kind must be met by a key it names itself', () => {
    const p = policyOf([
      { rule: 'require_attestation', attesters: [attester.pk] },
      { rule: 'require_attestation', attesters: [other.pk] },
    ]);
    expect(verifyStatements([attestation()], ctx({ policy: p })).attestation_valid).toBe(false);
    const byOther = attestation({ attester: other.pk }, other.sk);
    expect(verifyStatements([attestation(), byOther], ctx({ policy: p })).attestation_valid).toBe(true);
  });

  it('one bad statement does not spoil a good one beside it', () => {
    const v = verifyStatements([attestation({ wallet: 'ops' }), attestation()], ctx());
    expect(v.attestation_valid).toBe(true);
    expect(v.problems.map((p) => p.index)).toEqual([0]);
  });
});
