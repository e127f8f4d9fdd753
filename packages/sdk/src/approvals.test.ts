import { ed25519 } from '@noble/curves/ed25519.js';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { APPROVAL_CLOCK_SKEW_SECONDS, approvalTimeProblem, preverifyApprovals, signApproval, verifyApproval, verifyApprovals, type ApproverKey } from './approvals.js';
import { toHex } from './encoding.js';
import { isInitiator } from './identity.js';
import { ValidationError } from './errors.js';
import { SignedApprovalSchema } from './schemas/approval.js';
import { createSoftwarePasskey } from './testing/passkey.js';
import { parseRegistration } from './webauthn.js';

const seed = (n: number) => new Uint8Array(32).fill(n);
const alice = { sk: seed(1), pk: toHex(ed25519.getPublicKey(seed(1))) };
const bob = { sk: seed(2), pk: toHex(ed25519.getPublicKey(seed(2))) };
const intent = `int_${'1f'.repeat(32)}`;
const other = `int_${'2e'.repeat(32)}`;
const stmt = (approver_id: string, verdict: 'approve' | 'reject' = 'approve', forIntent = intent) => ({
  approver_id,
  intent: forIntent,
  verdict,
  at: 1767225600,
  strong_auth: true,
});
/** The intent was created a minute before the approvals are dated; the verifier's clock reads a minute after. */
const window = { createdAt: 1767225600 - 60, now: 1767225600 + 60 };

describe('signApproval / verifyApproval', () => {
  it('signs a verifiable approval with a 128-hex signature', () => {
    const a = signApproval(stmt('alice'), alice.sk);
    expect(a.signature).toEqual({ curve: 'ed25519', sig: expect.stringMatching(/^[0-9a-f]{128}$/) });
    expect(verifyApproval(a, alice.pk, { intentId: intent })).toEqual({ ok: true, approval: a });
  });

  it('accepts the secret key as hex and is deterministic (RFC 8032)', () => {
    expect(signApproval(stmt('alice'), toHex(alice.sk))).toEqual(signApproval(stmt('alice'), alice.sk));
  });

  it.each([
    ['another key', () => verifyApproval(signApproval(stmt('alice'), alice.sk), bob.pk), 'bad_signature'],
    ['a changed verdict', () => verifyApproval({ ...signApproval(stmt('alice'), alice.sk), verdict: 'reject' }, alice.pk), 'bad_signature'],
    ['a changed time', () => verifyApproval({ ...signApproval(stmt('alice'), alice.sk), at: 1 }, alice.pk), 'bad_signature'],
    ['strong_auth flipped', () => verifyApproval({ ...signApproval(stmt('alice'), alice.sk), strong_auth: false }, alice.pk), 'bad_signature'],
    ['a replay on another intent', () => verifyApproval(signApproval(stmt('alice'), alice.sk), alice.pk, { intentId: other }), 'wrong_intent'],
    ['a wrong curve', () => verifyApproval({ ...signApproval(stmt('alice'), alice.sk), signature: { curve: 'secp256k1', sig: 'ab'.repeat(64) } }, alice.pk), 'malformed'],
    ['bad hex in the signature', () => verifyApproval({ ...signApproval(stmt('alice'), alice.sk), signature: { curve: 'ed25519', sig: 'zz'.repeat(64) } }, alice.pk), 'malformed'],
    ['a short signature', () => verifyApproval({ ...signApproval(stmt('alice'), alice.sk), signature: { curve: 'ed25519', sig: 'ab'.repeat(32) } }, alice.pk), 'malformed'],
    ['a public key of the wrong length', () => verifyApproval(signApproval(stmt('alice'), alice.sk), 'ab'.repeat(31)), 'malformed'],
    ['a public key with bad hex', () => verifyApproval(signApproval(stmt('alice'), alice.sk), 'xy'.repeat(32)), 'malformed'],
    ['a public key of the wrong byte length', () => verifyApproval(signApproval(stmt('alice'), alice.sk), new Uint8Array(33)), 'malformed'],
    ['not an object', () => verifyApproval('approve!', alice.pk), 'malformed'],
    ['null', () => verifyApproval(null, alice.pk), 'malformed'],
  ])('refuses %s without throwing', (_what, run, reason) => {
    const r = run();
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason);
  });

  it('strict RFC 8032: refuses a signature with a non-canonical S (S + L)', () => {
    const a = signApproval(stmt('alice'), alice.sk);
    const sig = Buffer.from(a.signature.sig, 'hex');
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString('hex')}`) + L;
    const sBytes = Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse();
    const malleated = Buffer.concat([sig.subarray(0, 32), sBytes]).toString('hex');
    expect(verifyApproval({ ...a, signature: { curve: 'ed25519', sig: malleated } }, alice.pk).ok).toBe(false);
  });

  it('refuses to sign with a malformed secret key (clear error, no crash)', () => {
    expect(() => signApproval(stmt('alice'), 'abc')).toThrow(ValidationError);
    expect(() => signApproval(stmt('alice'), new Uint8Array(16))).toThrow(/32 bytes/);
    expect(() => signApproval({ ...stmt('alice'), intent: 'int_x' }, alice.sk)).toThrow(/approval\.intent/);
  });
});

describe('verifyApprovals', () => {
  const approvers = new Map<string, ApproverKey>([
    ['alice', { publicKey: alice.pk }],
    ['bob', { publicKey: bob.pk }],
    ['mallory', { publicKey: bob.pk, revoked: true }],
  ]);

  it('keeps valid approvals and reports each problem with its index', () => {
    const { valid, problems } = verifyApprovals(
      [
        signApproval(stmt('alice'), alice.sk),
        signApproval(stmt('alice'), alice.sk), // duplicate
        signApproval(stmt('carol'), seed(3)), // unknown approver
        signApproval(stmt('bob'), alice.sk), // signed by the wrong key
        signApproval(stmt('bob', 'approve', other), bob.sk), // another intent
        signApproval(stmt('mallory'), bob.sk), // revoked
        { approver_id: 42 },
        signApproval(stmt('bob', 'reject'), bob.sk),
      ],
      { intentId: intent, window, approvers },
    );
    expect(valid.map((a) => [a.approver_id, a.verdict])).toEqual([['alice', 'approve'], ['bob', 'reject']]);
    expect(problems.map((p) => [p.index, p.reason])).toEqual([
      [1, 'duplicate'],
      [2, 'unknown_approver'],
      [3, 'bad_signature'],
      [4, 'wrong_intent'],
      [5, 'revoked'],
      [6, 'malformed'],
    ]);
  });

  it('self approval: an initiator device cannot approve its own intent', () => {
    const r = verifyApprovals([signApproval(stmt('alice'), alice.sk)], { intentId: intent, window, approvers, initiator: 'device:alice' });
    expect(r.valid).toEqual([]);
    expect(r.problems[0]?.reason).toBe('self_approval');
    expect(isInitiator('device:alice', 'alice')).toBe(true);
    expect(isInitiator({ kind: 'device', id: 'alice' }, 'alice')).toBe(true);
    expect(isInitiator('device:bob', 'alice')).toBe(false);
    // not an identity (the bare id, a respelling): fail closed
    expect(isInitiator('alice', 'alice')).toBe(true);
    expect(isInitiator('Device:bob', 'alice')).toBe(true);
  });
});

describe('approval freshness: dated between the intent\'s creation and now', () => {
  const approvers = new Map<string, ApproverKey>([['alice', { publicKey: alice.pk }]]);
  const created = 1_767_225_600;
  const at = (t: number) => signApproval({ ...stmt('alice'), at: t }, alice.sk);
  const check = (t: number, now = created + 60) => verifyApprovals([at(t)], { intentId: intent, approvers, window: { createdAt: created, now } });

  it('attack: an approval dated at 1, long before its intent existed, is refused as stale', () => {
    const r = check(1);
    expect(r.valid).toEqual([]);
    expect(r.problems.map((p) => p.reason)).toEqual(['stale']);
  });

  it('attack: an approval dated ten years ahead is refused as future', () => {
    const r = check(created + 10 * 365 * 86400);
    expect(r.valid).toEqual([]);
    expect(r.problems.map((p) => p.reason)).toEqual(['future']);
  });

  it('a clock skew of APPROVAL_CLOCK_SKEW_SECONDS either way is tolerated, one second more is not', () => {
    const now = created + 60;
    expect(check(created - APPROVAL_CLOCK_SKEW_SECONDS, now).valid).toHaveLength(1);
    expect(check(created - APPROVAL_CLOCK_SKEW_SECONDS - 1, now).problems.map((p) => p.reason)).toEqual(['stale']);
    expect(check(now + APPROVAL_CLOCK_SKEW_SECONDS, now).valid).toHaveLength(1);
    expect(check(now + APPROVAL_CLOCK_SKEW_SECONDS + 1, now).problems.map((p) => p.reason)).toEqual(['future']);
  });

  it('property: an approval counts exactly when created - skew <= at <= now + skew', () => {
    fc.assert(
      fc.property(fc.nat({ max: 4_000_000_000 }), fc.nat({ max: 4_000_000_000 }), fc.nat({ max: 1_000_000 }), fc.nat({ max: 3600 }), (t, createdAt, age, skewSeconds) => {
        const now = createdAt + age;
        const window = { createdAt, now, skewSeconds };
        const inside = t >= createdAt - skewSeconds && t <= now + skewSeconds;
        expect(approvalTimeProblem(t, window) === null).toBe(inside);
        const problem = approvalTimeProblem(t, window);
        if (problem) expect(problem.reason).toBe(t < createdAt - skewSeconds ? 'stale' : 'future');
      }),
      { numRuns: 2000 },
    );
  });

  it('the window is judged after the signature: a forged date is bad_signature, not stale', () => {
    const forged = { ...at(created), at: 1 };
    expect(verifyApprovals([forged], { intentId: intent, approvers, window: { createdAt: created, now: created } }).problems.map((p) => p.reason)).toEqual(['bad_signature']);
  });
});

describe('preverifyApprovals: verdicts worked out ahead, bound to the bytes', () => {
  const approvers = new Map<string, ApproverKey>([
    ['alice', { publicKey: alice.pk }],
    ['bob', { publicKey: bob.pk }],
    ['mallory', { publicKey: bob.pk, revoked: true }],
  ]);
  const mixed = () => [
    signApproval(stmt('alice'), alice.sk),
    signApproval(stmt('alice'), alice.sk),
    signApproval(stmt('carol'), seed(3)),
    signApproval(stmt('bob'), alice.sk),
    signApproval(stmt('bob', 'approve', other), bob.sk),
    signApproval(stmt('mallory'), bob.sk),
    { approver_id: 42 },
    'not an object',
    { ...signApproval(stmt('bob'), bob.sk), signature: { curve: 'ed25519', sig: 'zz' } },
    signApproval(stmt('bob', 'reject'), bob.sk),
  ];

  it('verifyApprovals with verdicts gives exactly the result it gives without them', async () => {
    const approvals = mixed();
    const verdicts = await preverifyApprovals(approvals, approvers);
    expect(verdicts.size).toBeGreaterThan(0);
    const ctx = { intentId: intent, window, approvers };
    expect(verifyApprovals(approvals, { ...ctx, verdicts })).toEqual(verifyApprovals(approvals, ctx));
  });

  it('a "valid" verdict worked out for another key does not carry over (bound to the public key)', async () => {
    const forged = signApproval(stmt('bob'), alice.sk); // "bob" signed with alice's key
    // worked out against a trust map in which bob's key was alice's: there the signature is valid
    const verdicts = await preverifyApprovals([forged], new Map([['bob', { publicKey: alice.pk }]]));
    expect(verdicts.size).toBe(1);
    const r = verifyApprovals([forged], { intentId: intent, window, approvers, verdicts });
    expect(r.valid).toEqual([]);
    expect(r.problems.map((p) => p.reason)).toEqual(['bad_signature']);
  });

  it('a "valid" verdict for one statement does not carry over to another statement with the same signature (bound to the message)', async () => {
    const good = signApproval(stmt('alice'), alice.sk);
    const verdicts = await preverifyApprovals([good], approvers);
    // the same signature bytes on a later statement (another time): the message differs
    const replayed = { ...good, at: good.at + 60 };
    const r = verifyApprovals([replayed], { intentId: intent, window, approvers, verdicts });
    expect(r.problems.map((p) => p.reason)).toEqual(['bad_signature']);
  });

  it('reuses what it recorded for an unchanged approval: no second parse, and the same result', async () => {
    const approvals = [signApproval(stmt('alice'), alice.sk), signApproval(stmt('bob'), bob.sk)];
    const verdicts = await preverifyApprovals(approvals, approvers);
    const parse = vi.spyOn(SignedApprovalSchema, 'safeParse');
    try {
      const r = verifyApprovals(approvals, { intentId: intent, window, approvers, verdicts });
      expect(parse).not.toHaveBeenCalled();
      expect(r).toEqual(verifyApprovals(approvals, { intentId: intent, window, approvers }));
      expect(r.valid.map((a) => a.approver_id)).toEqual(['alice', 'bob']);
    } finally {
      parse.mockRestore();
    }
  });

  it('compares every member a SignedApproval has (a tripwire: a member added to the schema must be compared in Verdicts.recorded)', () => {
    // Verdicts.recorded reuses a recorded outcome only for an approval with exactly these members.
    // `webauthn` is the exception: an approval carrying it is never taken from the record.
    expect(Object.keys(SignedApprovalSchema.shape).sort()).toEqual(['approver_id', 'at', 'intent', 'signature', 'strong_auth', 'verdict', 'webauthn']);
    expect(Object.keys(SignedApprovalSchema.shape.signature.shape).sort()).toEqual(['curve', 'sig']);
  });

  it('an approval changed after it was preverified is checked from scratch (a verdict flipped to reject does not inherit "valid")', async () => {
    const approval: Record<string, unknown> = { ...signApproval(stmt('alice'), alice.sk) };
    const verdicts = await preverifyApprovals([approval], approvers);
    approval['verdict'] = 'reject';
    const r = verifyApprovals([approval], { intentId: intent, window, approvers, verdicts });
    expect(r.valid).toEqual([]);
    expect(r.problems.map((p) => p.reason)).toEqual(['bad_signature']);
  });

  it('an assertion stripped after preverification is not taken from the record: the approval counts as weak', async () => {
    const passkey = createSoftwarePasskey({ rp_id: 'localhost', origin: 'http://localhost:1' });
    const challenge = new Uint8Array(32);
    const reg = parseRegistration(passkey.register(challenge), { challenge, rp_id: 'localhost', origins: ['http://localhost:1'] });
    if (!reg.ok) throw new Error(reg.message);
    const keys = new Map([['alice', { publicKey: alice.pk, passkey: { ...reg.passkey, origins: ['http://localhost:1'] } }]]);
    const approval: Record<string, unknown> = { ...passkey.attach(signApproval(stmt('alice'), alice.sk)) };
    const verdicts = await preverifyApprovals([approval], keys);
    expect(verifyApprovals([approval], { intentId: intent, window, approvers: keys, verdicts }).counted[0]?.strong_auth).toBe(true);
    delete approval['webauthn'];
    const r = verifyApprovals([approval], { intentId: intent, window, approvers: keys, verdicts });
    expect(r.counted[0]?.strong_auth).toBe(false);
    expect(r.weakened.map((w) => w.reason)).toEqual(['no_assertion']);
  });

  it('a member added after preverification is refused as malformed, not waved through by the recorded verdict', async () => {
    const approval: Record<string, unknown> = { ...signApproval(stmt('alice'), alice.sk) };
    const verdicts = await preverifyApprovals([approval], approvers);
    approval['weight'] = 100;
    const r = verifyApprovals([approval], { intentId: intent, window, approvers, verdicts });
    expect(r.problems.map((p) => p.reason)).toEqual(['malformed']);
  });

  it('a recorded approval checked for another intent is wrong_intent, and a recorded "invalid" stays bad_signature', async () => {
    const good = signApproval(stmt('alice'), alice.sk);
    const forged = signApproval(stmt('bob'), alice.sk);
    const verdicts = await preverifyApprovals([good, forged], approvers);
    expect(verifyApprovals([good], { intentId: other, window, approvers, verdicts }).problems.map((p) => p.reason)).toEqual(['wrong_intent']);
    expect(verifyApprovals([forged], { intentId: intent, window, approvers, verdicts }).problems.map((p) => p.reason)).toEqual(['bad_signature']);
  });

  it('the approvals it returns from a recorded verdict are frozen copies, never the caller\'s objects', async () => {
    const approval = signApproval(stmt('alice'), alice.sk);
    const verdicts = await preverifyApprovals([approval], approvers);
    const [valid] = verifyApprovals([approval], { intentId: intent, window, approvers, verdicts }).valid;
    expect(valid).toEqual(approval);
    expect(valid).not.toBe(approval);
    expect(Object.isFrozen(valid) && Object.isFrozen(valid?.signature)).toBe(true);
    expect(Object.isFrozen(approval)).toBe(false);
  });

  it('looks at no more than 64 approvals of a hostile list', async () => {
    const many = Array.from({ length: 200 }, () => signApproval(stmt('alice'), alice.sk));
    const verdicts = await preverifyApprovals(many, approvers);
    expect(verdicts.size).toBe(1); // all the same bytes: one verdict
    const distinct = Array.from({ length: 200 }, (_, i) => signApproval({ ...stmt('alice'), at: 1767225600 + i }, alice.sk));
    expect((await preverifyApprovals(distinct, approvers)).size).toBe(64);
  });
});
