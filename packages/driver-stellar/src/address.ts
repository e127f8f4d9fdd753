/**
 * @module address
 * StrKey checks. A Stellar account is a `G…` ed25519 public key; a muxed account `M…` wraps one with
 * a 64-bit id. Secret seeds (`S…`), contracts (`C…`) and pre-auth / hash-x keys are never addresses
 * a vault sends to.
 */
import { StrKey } from '@stellar/stellar-base';

export type AddressKind = 'account' | 'muxed';

/** Why `address` is not a G/M address, or null. */
export function addressProblem(address: unknown, allow: readonly AddressKind[] = ['account', 'muxed']): string | null {
  if (typeof address !== 'string' || address === '') return 'address must be a non-empty string';
  const first = address[0];
  if (first === 'S') return 'this is a secret seed (S…), not an address: never share it';
  if (first === 'G') {
    if (!allow.includes('account')) return 'a G… account is not accepted here';
    return StrKey.isValidEd25519PublicKey(address) ? null : 'not a valid G… account (StrKey checksum, length or encoding)';
  }
  if (first === 'M') {
    if (!allow.includes('muxed')) return 'a muxed M… address is not accepted here; give its G… account';
    return StrKey.isValidMed25519PublicKey(address) ? null : 'not a valid M… muxed address (StrKey checksum, length or encoding)';
  }
  if (first === 'C') return 'contract (C…) addresses are not supported by this driver';
  return 'Stellar addresses start with G (account) or M (muxed account)';
}

/** The G… account a G or M address resolves to. */
export function baseAccount(address: string): string {
  if (address.startsWith('M')) {
    const raw = StrKey.decodeMed25519PublicKey(address);
    return StrKey.encodeEd25519PublicKey(Buffer.from(raw.subarray(0, 32)));
  }
  return address;
}

/** The 4-byte signature hint of a G… key: the last 4 bytes of the public key. */
export function hintOf(publicKey: Uint8Array): string {
  return Buffer.from(publicKey.subarray(publicKey.length - 4)).toString('hex');
}

export function publicKeyOf(account: string): Uint8Array {
  return Uint8Array.from(StrKey.decodeEd25519PublicKey(account));
}
