import { describe, expect, it } from 'vitest';
import type { WalletDescriptor } from '../schemas/wallet.js';
import { compareControl } from './reconcile.js';

const wallet: WalletDescriptor = {
  wallet: 'w',
  chain: 'xrpl:devnet',
  control: {
    kind: 'native_multisig',
    address: 'rWallet',
    quorum: 2,
    signers: [
      { address: 'rA', curve: 'ed25519', weight: 1, label: 'a' },
      { address: 'rB', curve: 'ed25519', weight: 1, label: 'b' },
    ],
  },
};
const matching = { address: 'rWallet', quorum: 2, members: [{ address: 'rB', weight: 1 }, { address: 'rA', weight: 1 }], masterKeyEnabled: false };

describe('compareControl', () => {
  it('is clean when address, quorum, members and master key all match (member order does not matter)', () => {
    const r = compareControl(wallet, matching);
    expect(r).toMatchObject({ clean: true, drift: [] });
    expect(r.checked.map((c) => c.field)).toEqual(['address', 'quorum', 'members.rA', 'members.rB', 'masterKeyEnabled']);
  });

  it('names each drift: quorum, a weight, a member missing, an extra member, an enabled master key, another account', () => {
    const r = compareControl(wallet, { address: 'rOther', quorum: 3, members: [{ address: 'rA', weight: 2 }, { address: 'rC', weight: 1 }], masterKeyEnabled: true });
    expect(r.clean).toBe(false);
    expect(r.drift).toEqual([
      { field: 'address', expected: 'rWallet', actual: 'rOther', ok: false },
      { field: 'quorum', expected: 2, actual: 3, ok: false },
      { field: 'members.rA', expected: 1, actual: 2, ok: false },
      { field: 'members.rB', expected: 1, actual: null, ok: false },
      { field: 'members.rC', expected: null, actual: 1, ok: false },
      { field: 'masterKeyEnabled', expected: false, actual: true, ok: false },
    ]);
  });

  it('compares EVM addresses without regard to checksum case; a Safe has no master key check', () => {
    const safe: WalletDescriptor = {
      wallet: 's',
      chain: 'eip155:31337',
      control: { kind: 'evm_safe', safe: '0xAbC0000000000000000000000000000000000001', threshold: 1, owners: [{ address: '0xDef0000000000000000000000000000000000002', curve: 'secp256k1', weight: 1, label: 'o' }] },
    };
    const r = compareControl(safe, { address: '0xabc0000000000000000000000000000000000001', quorum: 1, members: [{ address: '0xdef0000000000000000000000000000000000002', weight: 1 }] });
    expect(r.clean).toBe(true);
    expect(r.checked.map((c) => c.field)).not.toContain('masterKeyEnabled');
  });
});
