import { Keypair, MuxedAccount, Account } from '@stellar/stellar-base';
import { describe, expect, it } from 'vitest';
import { addressProblem, baseAccount, hintOf, publicKeyOf } from './address.js';

describe('addresses', () => {
  const kp = Keypair.fromRawEd25519Seed(Buffer.alloc(32, 7));
  // Flip the top bit of the last base32 digit: a data bit for G (56 chars) and M (69 chars) alike.
  const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const flipLast = (s: string) => `${s.slice(0, -1)}${B32[B32.indexOf(s.slice(-1)) ^ 16]}`;
  const muxed = new MuxedAccount(new Account(kp.publicKey(), '0'), '7').accountId();
  it('accepts G and M, and resolves M to its G', () => {
    expect(addressProblem(kp.publicKey())).toBeNull();
    expect(addressProblem(muxed)).toBeNull();
    expect(baseAccount(muxed)).toBe(kp.publicKey());
    expect(baseAccount(kp.publicKey())).toBe(kp.publicKey());
    expect(addressProblem(muxed, ['account'])).toMatch(/muxed/);
    expect(addressProblem(kp.publicKey(), ['muxed'])).toMatch(/not accepted/);
  });
  it('names what is wrong', () => {
    expect(addressProblem(kp.secret())).toMatch(/secret seed/);
    expect(addressProblem('')).toMatch(/non-empty/);
    expect(addressProblem(42)).toMatch(/string/);
    expect(addressProblem(flipLast(kp.publicKey()))).toMatch(/checksum|valid/);
    expect(addressProblem(flipLast(muxed))).toMatch(/muxed/);
    expect(addressProblem('CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC')).toMatch(/contract/);
    expect(addressProblem('rN7n7otQDd6FczFgLdSqtcsAUxDkw6fzRH')).toMatch(/start with G/);
  });
  it('hint is the last 4 bytes of the key', () => {
    expect(hintOf(publicKeyOf(kp.publicKey()))).toBe(Buffer.from(kp.signatureHint()).toString('hex'));
  });
});
