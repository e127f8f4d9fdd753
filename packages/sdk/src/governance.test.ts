import { ed25519 } from '@noble/curves/ed25519.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from './encoding.js';
import {
  approvalsUnderPolicy,
  CHANGE_SET_REFUSALS,
  changeApprovalMessage,
  changeSetDigest,
  checkChangeSet,
  governanceAfter,
  signChangeApproval,
  walletsChangedBy,
  type Governance,
} from './governance.js';
import { AdminPolicySchema, ChangeSetSchema, MAX_CHANGE_APPROVALS, type ChangeSet } from './schemas/governance.js';

const seed = (n: number) => new Uint8Array(32).fill(n);
const admin = (n: number, id = `a${n}`) => ({ id, sk: seed(n), pk: toHex(ed25519.getPublicKey(seed(n))) });
const [a1, a2, a3, outsider] = [admin(1), admin(2), admin(3), admin(9, 'a9')];
const T = 1_767_225_600;
const gov: Governance = { admins: [a1, a2, a3].map((a) => ({ id: a.id, public_key: a.pk, weight: 1 })), threshold: 2, delay_seconds: 0, version: 4 };
const policy = { wallet: 'ops', version: 2, rules: [{ rule: 'approval_threshold', above: '0', required_weight: 2, approvers: [{ id: 'dev1', weight: 1 }, { id: 'dev2', weight: 1 }] }] };
const change = (over: Partial<ChangeSet> = {}): ChangeSet => ({ base_version: 4, ops: [{ op: 'set_policy', policy } as ChangeSet['ops'][number]], proposed_by: 'a1', created_at: T, ...over });
const approve = (a: { id: string; sk: Uint8Array }, c: ChangeSet, at = T + 10, verdict: 'approve' | 'reject' = 'approve') =>
  signChangeApproval({ admin_id: a.id, change: changeSetDigest(c), verdict, at }, a.sk);

describe('changeSetDigest', () => {
  it('is domain-separated, order-independent in members and binds the base version', () => {
    const c = change();
    const reordered = { created_at: c.created_at, proposed_by: c.proposed_by, ops: c.ops, base_version: c.base_version };
    expect(changeSetDigest(reordered)).toBe(changeSetDigest(c));
    expect(changeSetDigest(change({ base_version: 5 }))).not.toBe(changeSetDigest(c));
    expect(changeSetDigest(c)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a malformed change set naming the field', () => {
    expect(() => changeSetDigest({ ...change(), ops: [] })).toThrow(/change\.ops/);
    expect(() => changeSetDigest({ ...change(), ops: [{ op: 'set_webhook', url: 'https://h.example/x', secret: 'x' }] })).toThrow(/unknown field/);
  });

  it('a change set never carries a secret: a signer endpoint names an env var, a webhook has no secret field', () => {
    expect(ChangeSetSchema.safeParse(change({ ops: [{ op: 'set_signer_endpoint', signer: 'rAddr', url: 'http://127.0.0.1:1/', token: 'x'.repeat(20) } as never] })).success).toBe(false);
    expect(ChangeSetSchema.safeParse(change({ ops: [{ op: 'set_signer_endpoint', signer: 'rAddr', url: 'http://127.0.0.1:1/', token_env: 'SIGNER_TOKEN' }] })).success).toBe(true);
  });
});

describe('checkChangeSet', () => {
  it('applies with a 2-of-3 quorum and reports the next version and ready_at', () => {
    const c = change();
    const r = checkChangeSet(gov, c, [approve(a2, c, T + 30), approve(a1, c, T + 20)], T + 60);
    expect(r).toMatchObject({ ok: true, version: 5, weight: 2, threshold: 2, ready_at: T + 30, digest: changeSetDigest(c) });
    if (r.ok) expect(r.approvals.map((a) => a.admin_id)).toEqual(['a1', 'a2']);
  });

  it('attack: an unsigned change set', () => {
    const r = checkChangeSet(gov, change(), [], T);
    expect(r).toMatchObject({ ok: false, reason: 'under_quorum', weight: 0 });
  });

  it('attack: a change set under quorum', () => {
    const c = change();
    expect(checkChangeSet(gov, c, [approve(a1, c)], T + 60)).toMatchObject({ ok: false, reason: 'under_quorum', weight: 1, threshold: 2 });
  });

  it('attack: a stale base version (approvals of version 3 do not count at version 4)', () => {
    const c = change({ base_version: 3 });
    const r = checkChangeSet(gov, c, [approve(a1, c), approve(a2, c)], T + 60);
    expect(r).toMatchObject({ ok: false, reason: 'stale_base' });
    if (!r.ok) expect(r.message).toMatch(/version 3.*version is 4/);
  });

  it('attack: a replayed change set', () => {
    const c = change({ base_version: 3 });
    const r = checkChangeSet(gov, c, [approve(a1, c), approve(a2, c)], T + 60, { appliedDigests: new Set([changeSetDigest(c)]) });
    expect(r).toMatchObject({ ok: false, reason: 'replayed' });
  });

  it('refuses a base version this service never reached (future_base)', () => {
    const c = change({ base_version: 9 });
    expect(checkChangeSet(gov, c, [approve(a1, c), approve(a2, c)], T + 60)).toMatchObject({ ok: false, reason: 'future_base' });
  });

  it('attack: a forged admin signature', () => {
    const c = change();
    const forged = { ...approve(a2, c), signature: { curve: 'ed25519' as const, sig: approve(outsider, c).signature.sig } };
    const r = checkChangeSet(gov, c, [approve(a1, c), forged], T + 60);
    expect(r).toMatchObject({ ok: false, reason: 'bad_signature' });
    if (!r.ok) expect(r.problems).toEqual([expect.objectContaining({ index: 1, admin_id: 'a2', reason: 'bad_signature' })]);
  });

  it('attack: an approval signed for another change set is not moved onto this one', () => {
    const c = change();
    const other = change({ note: 'other' });
    const moved = { ...approve(a2, other), change: changeSetDigest(c) };
    expect(checkChangeSet(gov, c, [approve(a1, c), moved], T + 60)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(checkChangeSet(gov, c, [approve(a1, c), approve(a2, other)], T + 60)).toMatchObject({ ok: false, reason: 'wrong_change' });
  });

  it('refuses an unknown admin, a duplicate verdict, a future or pre-creation date, malformed input', () => {
    const c = change();
    expect(checkChangeSet(gov, c, [approve(a1, c), approve(outsider, c)], T + 60)).toMatchObject({ reason: 'unknown_admin' });
    expect(checkChangeSet(gov, c, [approve(a1, c), approve(a1, c, T + 11)], T + 60)).toMatchObject({ reason: 'duplicate' });
    expect(checkChangeSet(gov, c, [approve(a1, c), approve(a2, c, T + 10_000)], T + 60)).toMatchObject({ reason: 'future' });
    expect(checkChangeSet(gov, c, [approve(a1, c), approve(a2, c, T - 10_000)], T + 60)).toMatchObject({ reason: 'stale' });
    expect(checkChangeSet(gov, c, [approve(a1, c), { admin_id: 'a2' }], T + 60)).toMatchObject({ reason: 'malformed' });
    expect(checkChangeSet(gov, c, [null, 7, 'x'], T + 60)).toMatchObject({ reason: 'malformed' });
    expect(checkChangeSet(gov, { ...c, ops: 'x' }, [], T)).toMatchObject({ reason: 'malformed', digest: null });
    expect(checkChangeSet(null, c, [], T)).toMatchObject({ reason: 'no_governance' });
  });

  it('bounds the approvals it verifies', () => {
    const c = change();
    const one = approve(a1, c);
    const many = Array.from({ length: MAX_CHANGE_APPROVALS + 1 }, () => one);
    expect(checkChangeSet(gov, c, many, T + 60)).toMatchObject({ ok: false, reason: 'too_many_approvals' });
  });

  it('any valid admin rejection vetoes, whatever the approving weight', () => {
    const c = change();
    expect(checkChangeSet(gov, c, [approve(a1, c), approve(a2, c), approve(a3, c, T + 12, 'reject')], T + 60)).toMatchObject({ ok: false, reason: 'vetoed' });
  });

  it('waits delay_seconds from the signed time of the approval that reached quorum', () => {
    const slow = { ...gov, delay_seconds: 3600 };
    const c = change();
    const approvals = [approve(a1, c, T + 10), approve(a2, c, T + 20), approve(a3, c, T + 500)];
    expect(checkChangeSet(slow, c, approvals, T + 3619)).toMatchObject({ ok: false, reason: 'delay_not_elapsed', ready_at: T + 3620 });
    expect(checkChangeSet(slow, c, approvals, T + 3620)).toMatchObject({ ok: true, ready_at: T + 3620 });
  });

  it('refusal reasons are a contract, in the order checked', () => {
    expect(CHANGE_SET_REFUSALS).toEqual(['malformed', 'no_governance', 'replayed', 'stale_base', 'future_base', 'too_many_approvals', 'wrong_change', 'unknown_admin', 'bad_signature', 'future', 'stale', 'duplicate', 'vetoed', 'under_quorum', 'delay_not_elapsed']);
    // The order is checkChangeSet's own: a case with two defects reports the one listed first.
    const c = change();
    const old = change({ base_version: 3 });
    const other = change({ note: 'other' });
    const forged = (a: ReturnType<typeof approve>) => ({ ...a, signature: { curve: 'ed25519' as const, sig: approve(outsider, c).signature.sig } });
    const flood = (x: ChangeSet) => Array.from({ length: MAX_CHANGE_APPROVALS + 1 }, () => approve(a1, x));
    const slow = { ...gov, delay_seconds: 3600 };
    const pairs: [string, string, unknown][] = [
      ['malformed', 'no_governance', checkChangeSet(null, { ...c, ops: 'x' }, [], T)],
      ['no_governance', 'replayed', checkChangeSet(null, old, [], T, { appliedDigests: new Set([changeSetDigest(old)]) })],
      ['replayed', 'stale_base', checkChangeSet(gov, old, [], T, { appliedDigests: new Set([changeSetDigest(old)]) })],
      ['stale_base', 'too_many_approvals', checkChangeSet(gov, old, flood(old), T + 60)],
      ['future_base', 'too_many_approvals', checkChangeSet(gov, change({ base_version: 9 }), flood(change({ base_version: 9 })), T + 60)],
      ['too_many_approvals', 'wrong_change', checkChangeSet(gov, c, flood(other), T + 60)],
      ['wrong_change', 'unknown_admin', checkChangeSet(gov, c, [approve(outsider, other)], T + 60)],
      ['unknown_admin', 'bad_signature', checkChangeSet(gov, c, [forged(approve(outsider, c))], T + 60)],
      ['bad_signature', 'future', checkChangeSet(gov, c, [forged(approve(a2, c, T + 10_000))], T + 60)],
      ['future', 'duplicate', checkChangeSet(gov, c, [approve(a1, c), approve(a1, c, T + 10_000)], T + 60)],
      ['stale', 'duplicate', checkChangeSet(gov, c, [approve(a1, c), approve(a1, c, T - 10_000)], T + 60)],
      ['duplicate', 'vetoed', checkChangeSet(gov, c, [approve(a1, c), approve(a1, c, T + 11, 'reject')], T + 60)],
      ['vetoed', 'under_quorum', checkChangeSet(gov, c, [approve(a1, c, T + 10, 'reject')], T + 60)],
      ['under_quorum', 'delay_not_elapsed', checkChangeSet(slow, c, [approve(a1, c)], T + 60)],
    ];
    for (const [first, then, r] of pairs) {
      expect(CHANGE_SET_REFUSALS.indexOf(first as never)).toBeLessThan(CHANGE_SET_REFUSALS.indexOf(then as never));
      expect(r, `${first} before ${then}`).toMatchObject({ ok: false, reason: first });
    }
    expect(new TextDecoder().decode(changeApprovalMessage({ admin_id: 'a1', change: 'ab'.repeat(32), verdict: 'approve', at: 5 }))).toBe(
      `vault-change-approval-v1\n{"admin_id":"a1","at":5,"change":"${'ab'.repeat(32)}","verdict":"approve"}`,
    );
  });

  it('property: a change set applies exactly when distinct valid approvals reach the threshold and none rejects', () => {
    const keys = [a1, a2, a3];
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 3, maxLength: 3 }),
        fc.integer({ min: 1, max: 15 }),
        fc.subarray([0, 1, 2]),
        fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
        (weights, rawThreshold, signers, rejecter) => {
          const total = weights.reduce((n, w) => n + w, 0);
          const g: Governance = { admins: keys.map((k, i) => ({ id: k.id, public_key: k.pk, weight: weights[i]! })), threshold: Math.min(rawThreshold, total), delay_seconds: 0, version: 4 };
          const c = change();
          const approvals = signers.map((i) => approve(keys[i]!, c, T + i, rejecter === i ? 'reject' : 'approve'));
          const r = checkChangeSet(g, c, approvals, T + 60);
          const vetoed = rejecter !== undefined && signers.includes(rejecter);
          const weight = signers.filter((i) => i !== rejecter).reduce((n, i) => n + weights[i]!, 0);
          expect(r.ok).toBe(!vetoed && weight >= g.threshold);
          if (!r.ok) expect(r.reason).toBe(vetoed ? 'vetoed' : 'under_quorum');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: flipping any byte of a signature makes the set refused, never applied', () => {
    const c = change();
    const good = [approve(a1, c), approve(a2, c)];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 0, max: 127 }), (which, pos) => {
        const sig = good[which]!.signature.sig;
        const flipped = sig.slice(0, pos) + (sig[pos] === '0' ? '1' : '0') + sig.slice(pos + 1);
        const approvals = good.map((a, i) => (i === which ? { ...a, signature: { ...a.signature, sig: flipped } } : a));
        expect(checkChangeSet(gov, c, approvals, T + 60).ok).toBe(false);
      }),
      { numRuns: 100 },
    );
  });
});

describe('governanceAfter / walletsChangedBy / approvalsUnderPolicy', () => {
  it('moves the version on and takes the new admin policy from set_admin_policy', () => {
    expect(governanceAfter(gov, change())).toEqual({ ...gov, version: 5 });
    const quorum = { admins: [{ id: 'a1', public_key: a1.pk, weight: 2 }], threshold: 2, delay_seconds: 60 };
    expect(governanceAfter(gov, change({ ops: [{ op: 'set_admin_policy', quorum }] }))).toEqual({ ...quorum, version: 5 });
  });

  it('an admin policy refuses an unreachable threshold and a key listed twice', () => {
    expect(AdminPolicySchema.safeParse({ ...gov, threshold: 4 }).success).toBe(false);
    expect(AdminPolicySchema.safeParse({ ...gov, admins: [gov.admins[0], { ...gov.admins[0], id: 'other' }] }).success).toBe(false);
  });

  it('names the wallets whose policy changed', () => {
    expect([...walletsChangedBy(change({ ops: [{ op: 'set_policy', policy } as never, { op: 'remove_approver', id: 'x', wallet: 'cold' }, { op: 'set_asset', asset: { chain: 'xrpl', symbol: 'USD', decimals: 6 } }] }))]).toEqual(['ops', 'cold']);
  });

  it('approvals dated before the policy took effect stop counting', () => {
    const list = [{ at: 9 }, { at: 10 }, { at: 11 }];
    expect(approvalsUnderPolicy(list, 10)).toEqual({ kept: [{ at: 10 }, { at: 11 }], superseded: [{ at: 9 }] });
    expect(approvalsUnderPolicy(list, undefined).kept).toHaveLength(3);
  });
});
