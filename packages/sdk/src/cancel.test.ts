import { describe, expect, it } from 'vitest';
import { approvalMessage } from './digest.js';
import { generateEd25519KeyPair, signEd25519 } from './ed25519.js';
import { toHex } from './encoding.js';
import { CANCEL_CLOCK_SKEW_SECONDS, cancelMessage, signCancel, verifyCancel } from './cancel.js';

const ID = `int_${'ab'.repeat(32)}`;
const OTHER = `int_${'cd'.repeat(32)}`;

describe('signed cancellations', () => {
  const { secretKey, publicKey } = generateEd25519KeyPair();
  const now = 1_767_225_600;

  it('a statement signed by the key verifies for its intent, by and time', () => {
    const signed = signCancel({ intentId: ID, by: 'device:alice', at: now }, secretKey);
    expect(verifyCancel(signed, publicKey, { intentId: ID, now })).toEqual({ ok: true });
  });

  it('attack: a cancel statement for one intent is replayed against another', () => {
    const signed = signCancel({ intentId: ID, by: 'device:alice', at: now }, secretKey);
    expect(verifyCancel(signed, publicKey, { intentId: OTHER, now })).toMatchObject({ ok: false, reason: 'wrong_intent' });
    const { intentId: _dropped, ...bare } = signed;
    expect(verifyCancel(bare, publicKey, { intentId: OTHER, now })).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('attack: a statement names another principal than the one that signed', () => {
    const signed = signCancel({ intentId: ID, by: 'device:alice', at: now }, secretKey);
    expect(verifyCancel({ ...signed, by: 'device:bob' }, publicKey, { intentId: ID, now })).toMatchObject({ ok: false, reason: 'bad_signature' });
    const other = generateEd25519KeyPair();
    expect(verifyCancel(signed, other.publicKey, { intentId: ID, now })).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('attack: an approval signature passes for a cancel (domain separation)', () => {
    const approvalSig = toHex(signEd25519(approvalMessage({ approver_id: 'alice', intent: ID, verdict: 'reject', at: now, strong_auth: false }), secretKey));
    expect(verifyCancel({ by: 'device:alice', at: now, signature: { curve: 'ed25519', sig: approvalSig } }, publicKey, { intentId: ID, now })).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(new TextDecoder().decode(cancelMessage({ intentId: ID, by: 'device:alice', at: now }))).toMatch(/^vault-cancel-v1\n\{"at":/);
  });

  it('a statement dated outside the skew either way is refused', () => {
    const at = (t: number) => signCancel({ intentId: ID, by: 'device:alice', at: t }, secretKey);
    expect(verifyCancel(at(now - CANCEL_CLOCK_SKEW_SECONDS), publicKey, { intentId: ID, now }).ok).toBe(true);
    expect(verifyCancel(at(now - CANCEL_CLOCK_SKEW_SECONDS - 1), publicKey, { intentId: ID, now })).toMatchObject({ ok: false, reason: 'stale' });
    expect(verifyCancel(at(now + CANCEL_CLOCK_SKEW_SECONDS + 1), publicKey, { intentId: ID, now })).toMatchObject({ ok: false, reason: 'future' });
  });

  it('a malformed signature or key is a refusal, never a throw', () => {
    expect(verifyCancel({ by: 'device:alice', at: now, signature: { curve: 'ed25519', sig: '00'.repeat(64) } }, 'zz', { intentId: ID, now })).toMatchObject({ ok: false, reason: 'bad_signature' });
  });
});
