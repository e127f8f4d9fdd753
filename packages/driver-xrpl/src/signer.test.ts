import { SignerRefusedError, normalizeIntent, type WalletDescriptor } from '@vault/sdk';
import { createSoftwareKey } from '@vault/sdk/testing';
import { describe, expect, it } from 'vitest';
import { createXrplDriver } from './driver.js';
import { createXrplSigner, derSignature, xrplAddressOf } from './signer.js';

const key = createSoftwareKey(new Uint8Array(32).fill(3));
const member = xrplAddressOf(key.publicKey, 'ed25519');
const wallet: WalletDescriptor = {
  wallet: 'w',
  chain: 'xrpl:local',
  control: { kind: 'native_multisig', address: 'rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQC', signers: [{ address: member, curve: 'ed25519', weight: 1, label: 'a' }], quorum: 1 },
};
const driver = createXrplDriver({ chains: { 'xrpl:local': { url: 'http://unused/' } } });
const built = driver.buildPayload({
  intent: normalizeIntent({ wallet: 'w', destination: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', amount: '5' }),
  wallet,
  params: { kind: 'xrpl', sequence: 3, base_fee_drops: 10, last_ledger_sequence: 50, network_id: null },
});

describe('xrpl signer', () => {
  const signer = createXrplSigner({ chains: ['xrpl:local'] });
  it('signs what it rebuilt and refuses a mismatched digest, a wrong key or an unserved chain', async () => {
    const c = await signer.signPayload({ built, key, signerAddress: member });
    expect(c).toMatchObject({ signer_address: member, public_key: { curve: 'ed25519' }, signature: { encoding: 'xrpl-ed25519' } });
    await expect(signer.signPayload({ built: { ...built, digest: '00'.repeat(32) }, key, signerAddress: member })).rejects.toMatchObject({ reason: 'digest_mismatch' });
    await expect(signer.signPayload({ built, key: createSoftwareKey(new Uint8Array(32).fill(4)), signerAddress: member })).rejects.toMatchObject({ reason: 'key' });
    await expect(signer.signPayload({ built, key, signerAddress: member })).resolves.toBeTruthy();
    const other = createXrplSigner({ chains: ['xrpl:testnet'] });
    await expect(other.signPayload({ built, key, signerAddress: member })).rejects.toThrow(/does not serve/);
    expect(() => other.deriveAddress({ chain: 'xrpl:local', publicKey: key.publicKey, curve: 'ed25519' })).toThrow(/does not serve/);
  });
  it('refuses a key that returns a bad signature', async () => {
    const liar = { curve: 'ed25519' as const, publicKey: key.publicKey, sign: async () => new Uint8Array(64) };
    await expect(signer.signPayload({ built, key: liar, signerAddress: member })).rejects.toBeInstanceOf(SignerRefusedError);
    const short = { curve: 'ed25519' as const, publicKey: key.publicKey, sign: async () => new Uint8Array(10) };
    await expect(signer.signPayload({ built, key: short, signerAddress: member })).rejects.toMatchObject({ reason: 'key' });
  });
  it('rejects malformed public keys and encodes DER integers minimally', () => {
    expect(() => xrplAddressOf(new Uint8Array(31), 'ed25519')).toThrow(/32 bytes/);
    expect(() => xrplAddressOf(new Uint8Array(33), 'secp256k1')).toThrow(/compressed/);
    const der = derSignature(Uint8Array.from([0x80, ...new Uint8Array(31)]), Uint8Array.from([...new Uint8Array(31), 1]));
    expect(Buffer.from(der).toString('hex')).toBe(`3026022100800000000000000000000000000000000000000000000000000000000000000002010${'1'}`);
  });
});
