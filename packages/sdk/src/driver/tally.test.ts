import { describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../errors.js';
import type { Contribution } from '../schemas/sign.js';
import type { SignerDesc, WalletDescriptor } from '../schemas/wallet.js';
import { assembleContributions, CONTRIBUTION_REJECTIONS, ContributionMemo, MAX_CONTRIBUTIONS, tallyContributions, type ContributionProblem } from './tally.js';

// Weights 1, 2, 1; quorum 3.
const wallet: WalletDescriptor = {
  wallet: 'w',
  chain: 'xrpl:devnet',
  control: {
    kind: 'native_multisig',
    address: 'rWallet',
    quorum: 3,
    signers: [
      { address: 'rA', curve: 'ed25519', weight: 1, label: 'a' },
      { address: 'rB', curve: 'ed25519', weight: 2, label: 'b' },
      { address: 'rC', curve: 'secp256k1', weight: 1, label: 'c' },
    ],
  },
};

/** A contribution whose "signature" is good when it is `aa` and whose key is its member's when it is `k` + address. */
const contribution = (address: string, sig = 'aa', curve: 'ed25519' | 'secp256k1' = address === 'rC' ? 'secp256k1' : 'ed25519'): Contribution => ({
  signer_address: address,
  public_key: { curve, hex: keyOf(address) },
  signature: { encoding: 'test', hex: sig },
});
const keyOf = (address: string) => Buffer.from(address.toLowerCase()).toString('hex');

/** The ledger-specific part, as a driver writes it: the key must be the wallet member's, the signature `aa`. */
const verify = (c: Contribution, member: SignerDesc): ContributionProblem | null => {
  if (c.public_key.hex !== keyOf(member.address)) return { reason: 'wrong_key', detail: `key does not control ${member.address}` };
  return c.signature.hex === 'aa' ? null : { reason: 'bad_signature', detail: 'signature does not verify' };
};

const tally = (contributions: readonly unknown[], extra: Partial<Parameters<typeof tallyContributions>[0]> = {}) =>
  tallyContributions({ contributions, wallet, verify, ...extra });

describe('tallyContributions', () => {
  it('counts each member once by its weight, in wallet order whatever the arrival order, and lists who is missing', () => {
    const t = tally([contribution('rB'), contribution('rA')]);
    expect(t.counted.map((c) => [c.member.address, c.index])).toEqual([
      ['rA', 1],
      ['rB', 0],
    ]);
    expect(t).toMatchObject({ weight: 3, quorum: 3, missing: [{ address: 'rC', weight: 1 }], invalid: [] });
  });

  it('attack: a member who contributes three times counts once; each repeat is listed duplicate', () => {
    const a = contribution('rA');
    const t = tally([a, a, contribution('rC'), a]);
    expect(t.weight).toBe(2);
    expect(t.invalid).toEqual([
      { index: 1, address: 'rA', reason: 'duplicate', detail: 'rA already contributed (contribution 0)' },
      { index: 3, address: 'rA', reason: 'duplicate', detail: 'rA already contributed (contribution 0)' },
    ]);
  });

  it('attack: a bad signature sent before a good one is bad_signature in either order, and the good one counts', () => {
    const bad = contribution('rB', 'bb');
    const good = contribution('rB');
    for (const order of [[bad, good], [good, bad]]) {
      const t = tally(order);
      expect(t.weight).toBe(2);
      expect(t.invalid.map((x) => x.reason)).toEqual(['bad_signature']);
    }
  });

  it('malformed contributions (null, wrong types, missing or extra members) are listed, never thrown, and never reach verify', () => {
    const spy = vi.fn(verify);
    const a = contribution('rA');
    const inputs: unknown[] = [null, undefined, 7, 'rA', [a], {}, { ...a, signer_address: 1 }, { ...a, public_key: 'k' }, { ...a, signature: { encoding: 'test', hex: 'AA' } }, { ...a, extra: 1 }];
    const t = tally(inputs, { verify: spy });
    expect(spy).not.toHaveBeenCalled();
    expect(t.weight).toBe(0);
    expect(t.invalid.map((x) => [x.index, x.address, x.reason])).toEqual([
      [0, undefined, 'malformed'],
      [1, undefined, 'malformed'],
      [2, undefined, 'malformed'],
      [3, undefined, 'malformed'],
      [4, undefined, 'malformed'],
      [5, undefined, 'malformed'],
      [6, undefined, 'malformed'],
      [7, 'rA', 'malformed'],
      [8, 'rA', 'malformed'],
      [9, 'rA', 'malformed'],
    ]);
    // The entry carries no `address` key at all when none was readable.
    expect(Object.keys(t.invalid[0] ?? {})).toEqual(['index', 'reason', 'detail']);
    expect(t.invalid[9]?.detail).toMatch(/extra/);
  });

  it('a non-member is not_a_member and never reaches verify', () => {
    const spy = vi.fn(verify);
    const t = tally([contribution('rZ')], { verify: spy });
    expect(spy).not.toHaveBeenCalled();
    expect(t.invalid).toEqual([{ index: 0, address: 'rZ', reason: 'not_a_member', detail: 'rZ is not a member of wallet w' }]);
  });

  it("a key on another curve than the member's is wrong_key before verify", () => {
    const spy = vi.fn(verify);
    const t = tally([contribution('rA', 'aa', 'secp256k1')], { verify: spy });
    expect(spy).not.toHaveBeenCalled();
    expect(t.invalid).toEqual([{ index: 0, address: 'rA', reason: 'wrong_key', detail: "curve secp256k1 is not the member's curve ed25519" }]);
  });

  it("attack: another member's key and signature claimed for rB are wrong_key (verify sees the wallet's record of rB)", () => {
    const spy = vi.fn(verify);
    const stolen = { ...contribution('rA'), signer_address: 'rB' };
    const t = tally([stolen], { verify: spy });
    expect(spy).toHaveBeenCalledWith(stolen, (wallet.control as { signers: SignerDesc[] }).signers[1]);
    expect(t).toMatchObject({ weight: 0, invalid: [{ index: 0, address: 'rB', reason: 'wrong_key' }] });
  });

  it('fails closed: a verify that throws does not count the contribution, and says why', () => {
    const t = tally([contribution('rB')], {
      verify: () => {
        throw new TypeError('cannot read properties of undefined');
      },
    });
    expect(t).toMatchObject({ weight: 0, invalid: [{ index: 0, address: 'rB', reason: 'bad_signature', detail: 'could not be checked: cannot read properties of undefined' }] });
  });

  it('compares addresses in the driver\'s form (EVM: lowercase) and hands verify the wallet\'s spelling', () => {
    const evm: WalletDescriptor = {
      wallet: 'safe',
      chain: 'evm:31337',
      control: { kind: 'evm_safe', safe: '0x' + '1'.repeat(40), threshold: 1, owners: [{ address: '0xAbC' + '0'.repeat(37), curve: 'secp256k1', weight: 1, label: 'o' }] },
    };
    const seen: string[] = [];
    const t = tallyContributions({
      contributions: [{ signer_address: '0xabc' + '0'.repeat(37), public_key: { curve: 'secp256k1', hex: '02' }, signature: { encoding: 'e', hex: 'aa' } }],
      wallet: evm,
      verify: (_c, member) => (seen.push(member.address), null),
      addressKey: (a) => a.toLowerCase(),
    });
    expect(t.weight).toBe(1);
    expect(seen).toEqual(['0xAbC' + '0'.repeat(37)]);
    // Without the driver's addressKey, spellings are distinct (base58 and StrKey are case-sensitive).
    expect(tallyContributions({ contributions: [{ ...contribution('ra') }], wallet, verify }).invalid[0]?.reason).toBe('not_a_member');
  });

  it('takes the weight needed from the driver when given (a Stellar threshold class)', () => {
    expect(tally([contribution('rB')], { quorum: 2 })).toMatchObject({ weight: 2, quorum: 2 });
  });

  it('bounds what it repeats back: no address longer than the schema allows, details cut short', () => {
    const long = 'r'.repeat(300);
    const t = tally([{ signer_address: long, public_key: {}, signature: {} }, { ...contribution('rA'), ['x'.repeat(5000)]: 1 }]);
    expect(t.invalid[0]).not.toHaveProperty('address');
    expect(t.invalid[1]?.detail.length).toBeLessThanOrEqual(300);
  });

  it('refuses a list that is not an array or longer than MAX_CONTRIBUTIONS before verifying any (a caller fault)', () => {
    const spy = vi.fn(verify);
    expect(() => tally(Array.from({ length: MAX_CONTRIBUTIONS + 1 }, () => contribution('rA')), { verify: spy })).toThrow(ValidationError);
    expect(() => tally({ length: 1 } as unknown as unknown[])).toThrow(ValidationError);
    expect(spy).not.toHaveBeenCalled();
    expect(tally(Array.from({ length: MAX_CONTRIBUTIONS }, () => contribution('rA'))).weight).toBe(1);
  });

  it('publishes its reasons as a fixed set', () => {
    expect(CONTRIBUTION_REJECTIONS).toEqual(['malformed', 'not_a_member', 'wrong_key', 'bad_signature', 'duplicate']);
  });
});

describe('tallyContributions with a ContributionMemo', () => {
  /** A verify over a payload: good when the signature is the payload's name, counting its calls. */
  const overPayload = (payload: string) => vi.fn((c: Contribution, member: SignerDesc) => verify({ ...c, signature: { ...c.signature, hex: c.signature.hex === payload ? 'aa' : 'bb' } }, member));
  const contributions = [contribution('rA', 'a1'), contribution('rB', 'a1'), contribution('rC', 'cc'), contribution('rA', 'a1')];

  it('verifies each contribution once across tallies of one payload, and tallies as without it', () => {
    const memo = new ContributionMemo();
    const v = overPayload('a1');
    // As the control plane does: each contribution as it arrives, then all of them.
    for (const c of contributions) tallyContributions({ contributions: [c], wallet, verify: v, memo, memoKey: 'a1' });
    expect(v).toHaveBeenCalledTimes(3); // the repeat of rA's is the same contribution for the same member
    const withMemo = tallyContributions({ contributions, wallet, verify: v, memo, memoKey: 'a1' });
    expect(v).toHaveBeenCalledTimes(3);
    expect(withMemo).toEqual(tallyContributions({ contributions, wallet, verify: overPayload('a1') }));
    expect(withMemo).toMatchObject({ weight: 3, invalid: [{ index: 2, reason: 'bad_signature' }, { index: 3, reason: 'duplicate' }] });
  });

  it('attack: a memo filled for one payload is ignored for another: its signatures are verified again and do not count', () => {
    const memo = new ContributionMemo();
    tallyContributions({ contributions, wallet, verify: overPayload('a1'), memo, memoKey: 'a1' });
    const v = overPayload('b2');
    const other = tallyContributions({ contributions, wallet, verify: v, memo, memoKey: 'b2' });
    expect(v).toHaveBeenCalledTimes(4);
    expect(other.weight).toBe(0);
    // Still bound to a1 (the first payload it served), so b2's results never enter it either.
    const v1 = overPayload('a1');
    expect(tallyContributions({ contributions, wallet, verify: v1, memo, memoKey: 'a1' }).weight).toBe(3);
    expect(v1).not.toHaveBeenCalled();
  });

  it('attack: a memo filled for one wallet is ignored for another wallet with the same members', () => {
    const memo = new ContributionMemo();
    tallyContributions({ contributions, wallet, verify: overPayload('a1'), memo, memoKey: 'a1' });
    const v = overPayload('a1');
    tallyContributions({ contributions, wallet: { ...wallet, wallet: 'w2' }, verify: v, memo, memoKey: 'a1' });
    expect(v).toHaveBeenCalledTimes(4);
  });

  it('keeps a result per member and contribution: the same bytes claimed for another member are checked for that member', () => {
    const memo = new ContributionMemo();
    const v = overPayload('a1');
    tallyContributions({ contributions: [contribution('rA', 'a1')], wallet, verify: v, memo, memoKey: 'a1' });
    const stolen = { ...contribution('rA', 'a1'), signer_address: 'rB' };
    const t = tallyContributions({ contributions: [stolen], wallet, verify: v, memo, memoKey: 'a1' });
    expect(v).toHaveBeenCalledTimes(2);
    expect(t.invalid).toMatchObject([{ reason: 'wrong_key' }]);
  });

  it('without a memoKey the memo is not used', () => {
    const memo = new ContributionMemo();
    const v = overPayload('a1');
    tallyContributions({ contributions, wallet, verify: v, memo });
    tallyContributions({ contributions, wallet, verify: v, memo });
    expect(v).toHaveBeenCalledTimes(8);
  });
});

describe('assembleContributions', () => {
  it('below quorum: short_of_quorum with weight, quorum, missing and invalid; encode is not called', () => {
    const encode = vi.fn(() => ({ blob: 'b', txHash: 'h' }));
    const r = assembleContributions({ contributions: [contribution('rA'), null], wallet, verify, encode });
    expect(encode).not.toHaveBeenCalled();
    expect(r).toEqual({
      ok: false,
      reason: 'short_of_quorum',
      weight: 1,
      quorum: 3,
      missing: [
        { address: 'rB', weight: 2 },
        { address: 'rC', weight: 1 },
      ],
      invalid: [{ index: 1, reason: 'malformed', detail: expect.stringMatching(/\S/) }],
    });
  });

  it('at quorum: encodes the counted contributions in wallet order with the quorum', () => {
    const encode = vi.fn((counted: readonly { member: SignerDesc }[], quorum: number) => ({ blob: counted.map((c) => c.member.address).join(','), txHash: `q${quorum}` }));
    const r = assembleContributions({ contributions: [contribution('rC'), contribution('rB'), contribution('rB')], wallet, verify, encode });
    expect(r).toEqual({ ok: true, blob: 'rB,rC', txHash: 'q3', weight: 3, quorum: 3 });
  });
});
