import { normalizeIntent, type Contribution, type WalletDescriptor } from '@vault/sdk';
import { createSoftwareKey } from '@vault/sdk/testing';
import { verify } from 'ripple-keypairs';
import { describe, expect, it } from 'vitest';
import { createXrplDriver } from './driver.js';
import { contributionProblem, multisigningData, payloadOf } from './multisig.js';
import { createXrplSigner, xrplAddressOf } from './signer.js';

const key = createSoftwareKey(new Uint8Array(32).fill(7));
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
const { tx_json } = payloadOf(built);
/** The group order of ed25519. */
const L = (1n << 252n) + 27742317777372353535851937790883648493n;

/** The signature with S replaced by S + L: the same equation holds, the encoding is not canonical. */
function malleated(hex: string): string {
  const s = Buffer.from(hex.slice(64), 'hex').reverse();
  const bumped = (BigInt(`0x${s.toString('hex')}`) + L).toString(16).padStart(64, '0');
  return hex.slice(0, 64) + Buffer.from(bumped, 'hex').reverse().toString('hex');
}

describe('xrpl contributions (ed25519 through the SDK strict verification)', () => {
  it('a member signature verifies, and ripple-keypairs agrees on it', async () => {
    const c = (await createXrplSigner({ chains: ['xrpl:local'] }).signPayload({ built, key, signerAddress: member })) as Contribution;
    expect(contributionProblem(tx_json, c, member)).toBeNull();
    expect(verify(multisigningData(tx_json, member), c.signature.hex.toUpperCase(), `ED${c.public_key.hex.toUpperCase()}`)).toBe(true);
  });

  it('attack: a malleated ed25519 signature (S + L) is refused', async () => {
    const c = (await createXrplSigner({ chains: ['xrpl:local'] }).signPayload({ built, key, signerAddress: member })) as Contribution;
    const bad = { ...c, signature: { ...c.signature, hex: malleated(c.signature.hex) } };
    expect(contributionProblem(tx_json, bad, member)).toEqual({ reason: 'bad_signature', detail: 'signature does not verify over the multisigning data' });
  });

  it('attack: a signature over another transaction, or of the wrong length, is refused', async () => {
    const c = (await createXrplSigner({ chains: ['xrpl:local'] }).signPayload({ built, key, signerAddress: member })) as Contribution;
    const other = { ...tx_json, Sequence: 4 };
    expect(contributionProblem(other, c, member)).toMatchObject({ reason: 'bad_signature' });
    expect(contributionProblem(tx_json, { ...c, signature: { ...c.signature, hex: c.signature.hex.slice(2) } }, member)).toMatchObject({ reason: 'bad_signature' });
  });
});
