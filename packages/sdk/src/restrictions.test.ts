import { describe, expect, it } from 'vitest';
import { signApproval, verifyApprovals, type ApproverKey } from './approvals.js';
import { generateEd25519KeyPair } from './ed25519.js';
import {
  approverRestricted,
  indexRestrictions,
  normalizeRestrictions,
  restrictApprovers,
  restrictionDigest,
} from './restrictions.js';
import { RestrictionSetSchema, type Restriction } from './schemas/restriction.js';

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
const INTENT = `int_${'1'.repeat(64)}`;

describe('restriction schema: only statements that remove power', () => {
  it('takes the four kinds', () => {
    const set = {
      restrictions: [
        { restriction: 'revoke_approver', approver_id: 'bob', public_key: KEY_B },
        { restriction: 'drop_approver', approver_id: 'carol' },
        { restriction: 'freeze_wallet', wallet: 'ops' },
        { restriction: 'cancel_intent', intent_id: `int_${'ab'.repeat(32)}` },
      ],
    };
    expect(RestrictionSetSchema.parse(set)).toEqual(set);
    expect([...indexRestrictions(set.restrictions as Restriction[]).intents]).toEqual([`int_${'ab'.repeat(32)}`]);
  });

  it.each([
    ['an unrevoke', { restriction: 'unrevoke_approver', approver_id: 'bob' }],
    ['an unfreeze', { restriction: 'unfreeze_wallet', wallet: 'ops' }],
    ['a revocation carrying revoked: false', { restriction: 'revoke_approver', approver_id: 'bob', public_key: KEY_B, revoked: false }],
    ['a freeze carrying frozen: false', { restriction: 'freeze_wallet', wallet: 'ops', frozen: false }],
    ['a weight', { restriction: 'drop_approver', approver_id: 'bob', weight: 5 }],
    ['a new approver', { restriction: 'add_approver', approver_id: 'mallory', public_key: KEY_A, weight: 1 }],
    ['an uncancel', { restriction: 'uncancel_intent', intent_id: `int_${'ab'.repeat(32)}` }],
    ['a cancellation carrying cancelled: false', { restriction: 'cancel_intent', intent_id: `int_${'ab'.repeat(32)}`, cancelled: false }],
    ['a cancellation of something that is not an intent id', { restriction: 'cancel_intent', intent_id: 'int_xyz' }],
    ['a key that is not 32 bytes of lowercase hex', { restriction: 'revoke_approver', approver_id: 'bob', public_key: KEY_B.toUpperCase() }],
  ])('refuses %s', (_, restriction) => {
    expect(RestrictionSetSchema.safeParse({ restrictions: [restriction] }).success).toBe(false);
  });

  it('refuses members beside restrictions (a lift list rides nowhere)', () => {
    expect(RestrictionSetSchema.safeParse({ restrictions: [], lift: [{ restriction: 'freeze_wallet', wallet: 'ops' }] }).success).toBe(false);
  });
});

describe('restrictionDigest', () => {
  const a: Restriction = { restriction: 'freeze_wallet', wallet: 'ops' };
  const b: Restriction = { restriction: 'revoke_approver', approver_id: 'bob', public_key: KEY_B };

  it('is the same for any order and any repeats, different for a different set', () => {
    expect(restrictionDigest([a, b])).toBe(restrictionDigest([b, a, b]));
    expect(restrictionDigest([a, b])).not.toBe(restrictionDigest([a]));
    expect(restrictionDigest([])).toMatch(/^[0-9a-f]{64}$/);
    expect(restrictionDigest([])).not.toBe(restrictionDigest([a]));
    expect(normalizeRestrictions([b, a, b])).toEqual(normalizeRestrictions([a, b]));
    expect(normalizeRestrictions([b, a, b])).toHaveLength(2);
  });

  it('does not depend on member order inside a restriction', () => {
    const reordered = { public_key: KEY_B, approver_id: 'bob', restriction: 'revoke_approver' } as Restriction;
    expect(restrictionDigest([reordered])).toBe(restrictionDigest([b]));
  });
});

describe('restrictApprovers: a revocation sticks to the id and to the key', () => {
  const alice = generateEd25519KeyPair();
  const bob = generateEd25519KeyPair();
  const approvers = new Map<string, ApproverKey & { weight: number }>([
    ['alice', { publicKey: alice.publicKeyHex, weight: 1 }],
    ['bob', { publicKey: bob.publicKeyHex, weight: 1 }],
  ]);
  const approve = (who: string, secret: Uint8Array) => signApproval({ approver_id: who, intent: INTENT, verdict: 'approve', at: 1, strong_auth: true }, secret);

  it('an unrestricted set leaves the map itself', () => {
    expect(restrictApprovers(approvers, indexRestrictions([{ restriction: 'freeze_wallet', wallet: 'ops' }]))).toBe(approvers);
  });

  it("a revoked approver's approval is reported revoked; the others still count", () => {
    const index = indexRestrictions([{ restriction: 'revoke_approver', approver_id: 'bob', public_key: bob.publicKeyHex }]);
    const restricted = restrictApprovers(approvers, index);
    expect(restricted.get('bob')).toMatchObject({ revoked: true, weight: 1 });
    expect(restricted.get('alice')?.revoked).toBeUndefined();
    expect(approvers.get('bob')?.revoked).toBeUndefined();
    const r = verifyApprovals([approve('bob', bob.secretKey), approve('alice', alice.secretKey)], { intentId: INTENT, approvers: restricted, window: { createdAt: 1, now: 1 } });
    expect(r.valid.map((x) => x.approver_id)).toEqual(['alice']);
    expect(r.problems).toMatchObject([{ approver_id: 'bob', reason: 'revoked' }]);
  });

  it('the revoked key stays revoked when listed under another id; a wrong key still revokes the id', () => {
    const relisted = new Map([...approvers, ['bob2', { publicKey: bob.publicKeyHex.toUpperCase(), weight: 1 }]]);
    const index = indexRestrictions([{ restriction: 'revoke_approver', approver_id: 'bob', public_key: bob.publicKeyHex }]);
    expect(restrictApprovers(relisted, index).get('bob2')?.revoked).toBe(true);
    const wrongKey = indexRestrictions([{ restriction: 'revoke_approver', approver_id: 'bob', public_key: KEY_A }]);
    expect(restrictApprovers(approvers, wrongKey).get('bob')?.revoked).toBe(true);
    expect(approverRestricted(wrongKey, 'alice', alice.publicKey)).toBe(false);
  });

  it('drop_approver revokes by id; freeze_wallet touches no approver', () => {
    const index = indexRestrictions([{ restriction: 'drop_approver', approver_id: 'alice' }, { restriction: 'freeze_wallet', wallet: 'ops' }]);
    const restricted = restrictApprovers(approvers, index);
    expect(restricted.get('alice')?.revoked).toBe(true);
    expect(restricted.get('bob')?.revoked).toBeUndefined();
    expect(index.wallets.has('ops')).toBe(true);
  });
});
