import { Account, Asset, Keypair, Networks, Operation, TransactionBuilder } from '@stellar/stellar-base';
import { describe, expect, it } from 'vitest';
import { SignerRefusedError, ValidationError } from '@vault/sdk';
import { hex, openPayload, parsePayload, type StellarPayload } from './payload.js';

function built(mutate: (tx: ReturnType<TransactionBuilder['build']>) => void = () => undefined, patch: Partial<StellarPayload> = {}) {
  const src = Keypair.random();
  const tx = new TransactionBuilder(new Account(src.publicKey(), '41'), { fee: '100', networkPassphrase: Networks.TESTNET, timebounds: { minTime: 0, maxTime: 2_000_000_000 } })
    .addOperation(Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: '1' }))
    .build();
  mutate(tx);
  const payload: StellarPayload = {
    format: 'stellar-tx/1', chain: 'stellar:testnet', network_passphrase: Networks.TESTNET, source: src.publicKey(),
    sequence: tx.sequence, op: 'transfer', threshold: 'medium', tx_xdr: tx.toEnvelope().toXDR('base64'), ...patch,
  };
  return { built: { payload, digest: hex(tx.hash()), summary: 's' }, src };
}

describe('payload', () => {
  it('opens a well-formed payload', () => {
    const { built: b } = built();
    expect(openPayload(b).payload.sequence).toBe('42');
  });
  it('refuses malformed shapes', () => {
    const { built: b } = built();
    const p = b.payload as unknown as Record<string, unknown>;
    expect(() => parsePayload(null)).toThrow(ValidationError);
    expect(() => parsePayload([])).toThrow(ValidationError);
    expect(() => parsePayload({ ...p, extra: 1 })).toThrow(/unknown field/);
    expect(() => parsePayload({ ...p, format: 'x' })).toThrow(/format/);
    expect(() => parsePayload({ ...p, chain: '' })).toThrow(/chain/);
    expect(() => parsePayload({ ...p, sequence: '-1' })).toThrow(/int64/);
    expect(() => parsePayload({ ...p, threshold: 'max' })).toThrow(/threshold/);
    expect(parsePayload({ ...p, needed_weight: 3 }).needed_weight).toBe(3);
    for (const bad of [0, 1.5, '2', -1, 2 ** 32]) expect(() => parsePayload({ ...p, needed_weight: bad })).toThrow(/needed_weight/);
  });
  it('proves the digest, the absence of signatures, source and sequence', () => {
    const { built: b } = built();
    expect(() => openPayload({ ...b, digest: '00'.repeat(32) })).toThrow(ValidationError);
    expect(() => openPayload({ ...b, digest: '00'.repeat(32) }, { signer: true })).toThrow(SignerRefusedError);
    expect(() => openPayload({ ...b, payload: { ...b.payload, network_passphrase: Networks.PUBLIC } })).toThrow(/digest/);
    expect(() => openPayload({ ...b, payload: { ...b.payload, tx_xdr: 'AAAA' } })).toThrow(/not a TransactionEnvelope/);
    const signed = built((tx) => tx.sign(Keypair.random()));
    expect(() => openPayload(signed.built)).toThrow(/unsigned/);
    expect(() => openPayload({ ...b, payload: { ...b.payload, source: Keypair.random().publicKey() } })).toThrow(/source/);
    expect(() => openPayload({ ...b, payload: { ...b.payload, sequence: '43' } })).toThrow(/sequence/);
  });
});
