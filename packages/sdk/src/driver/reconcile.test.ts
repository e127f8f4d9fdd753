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

describe('compareControl: a Safe’s settings', () => {
  const A = '0x00000000000000000000000000000000000000aa';
  const M = '0x00000000000000000000000000000000000000Mm'.replace('Mm', 'b1');
  const ZERO = '0x0000000000000000000000000000000000000000';
  const safe = (extra: Record<string, unknown> = {}): WalletDescriptor =>
    ({ wallet: 's', chain: 'eip155:1', control: { kind: 'evm_safe', safe: '0x00000000000000000000000000000000000000cc', owners: [{ address: A, curve: 'secp256k1', weight: 1, label: 'a' }], threshold: 1, ...extra } }) as WalletDescriptor;
  const state = (settings: Record<string, string | string[] | null>) => ({ address: '0x00000000000000000000000000000000000000CC', quorum: 1, members: [{ address: A, weight: 1 }], settings });
  const clean = { version: '1.3.0', singleton: '0xd9Db270c1B5E3Bd161E8c8503c55cEABeE709552', fallback_handler: '0xf48f2B2d2a534e402487b3ee7C18c33Aec0Fe5e4', modules: [], guard: ZERO, module_guard: ZERO };

  it('an enabled module, a guard and a module guard are drift unless the descriptor allows them', () => {
    const r = compareControl(safe(), state({ ...clean, modules: [M], guard: A, module_guard: A }));
    expect(r.drift.map((d) => d.field)).toEqual(['modules', 'guard', 'module_guard']);
    expect(compareControl(safe({ modules: [M.toUpperCase().replace('0X', '0x')], guard: A }), state({ ...clean, modules: [M], guard: A })).clean).toBe(true);
  });

  it('an upgrade (another singleton or version) and a new fallback handler are drift when the descriptor pins them', () => {
    const pinned = safe({ version: '1.3.0', singleton: clean.singleton, fallback_handler: clean.fallback_handler });
    expect(compareControl(pinned, state(clean)).clean).toBe(true);
    const upgraded = compareControl(pinned, state({ ...clean, version: '1.4.1', singleton: '0x41675C099F32341bf84BFc5382aF534df5C7461a', fallback_handler: A }));
    expect(upgraded.drift.map((d) => d.field)).toEqual(['version', 'singleton', 'fallback_handler']);
    // An older descriptor pins none of them: only modules and guards are compared.
    expect(compareControl(safe(), state({ ...clean, version: '1.4.1' })).clean).toBe(true);
  });

  it('a module removed since adoption is drift too: the set must be exactly what was allowed', () => {
    expect(compareControl(safe({ modules: [M] }), state({ ...clean, modules: [] })).drift.map((d) => d.field)).toEqual(['modules']);
  });
});
