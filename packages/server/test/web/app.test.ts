/**
 * The approver app's pure parts, run in Node: reading a pairing code in each form it arrives in
 * (and refusing anything else), the low-S form of a passkey's DER signature, and the intent id
 * recomputed from the intent it shows.
 */
import { p256 } from '@noble/curves/nist.js';
import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { intentId, normalizeIntent } from '@vault/sdk';
import { assertIntentIs, intentIdOf } from '../../web/app/intent-id.js';
import { parsePairing } from '../../web/app/pairing.js';
import { b64url, fromB64url, lowS } from '../../web/app/passkey.js';

const code = 'AbCdEfGhIjKlMnOpQrStUv';
const challenge = 'ab'.repeat(32);

describe('parsePairing', () => {
  it("reads the control plane's QR (JSON), the printed code and the pairing link", () => {
    expect(parsePairing(JSON.stringify({ url: 'http://127.0.0.1:7331', code, challenge }))).toEqual({ code, challenge });
    expect(parsePairing(`  ${code}.${challenge}\n`)).toEqual({ code, challenge });
    expect(parsePairing(`http://localhost:7331/app/#pair=${code}.${challenge}`)).toEqual({ code, challenge });
  });

  it('refuses what is not a whole pairing code, saying what is wrong', () => {
    expect(() => parsePairing(code)).toThrow('<code>.<challenge>');
    expect(() => parsePairing(`${code}.${challenge.slice(2)}`)).toThrow('no challenge');
    expect(() => parsePairing(`${code}.${challenge.toUpperCase()}`)).toThrow('no challenge');
    expect(() => parsePairing(`${code}.${challenge}.more`)).toThrow('<code>.<challenge>');
    expect(() => parsePairing(`a/b.${challenge}`)).toThrow('not one this vault printed');
    expect(() => parsePairing('{"code": 1')).toThrow('not valid JSON');
    expect(() => parsePairing(JSON.stringify({ code: ['x'], challenge }))).toThrow('not one this vault printed');
    expect(() => parsePairing(`${'a'.repeat(3000)}.${challenge}`)).toThrow('too long');
  });
});

describe('lowS', () => {
  const N = p256.Point.CURVE().n;
  const secret = p256.utils.randomSecretKey();
  const point = p256.getPublicKey(secret, false);
  const publicKey = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64url(point.subarray(1, 33)), y: b64url(point.subarray(33)) }, format: 'jwk' });
  const message = new TextEncoder().encode('authenticatorData || SHA-256(clientDataJSON)');
  const low = p256.Signature.fromBytes(p256.sign(message, secret), 'compact');

  it('attack: the high-S twin of a valid signature (malleability) is sent as its low-S form', () => {
    const high = new p256.Signature(low.r, N - low.s);
    expect(high.hasHighS()).toBe(true);
    // Both verify with OpenSSL: a verifier that takes high S accepts two encodings of one signature.
    expect(verify('sha256', message, { key: publicKey, dsaEncoding: 'der' }, high.toBytes('der'))).toBe(true);
    const out = lowS(high.toBytes('der'));
    const parsed = p256.Signature.fromBytes(out, 'der');
    expect(parsed.hasHighS()).toBe(false);
    expect(parsed.s).toBe(low.s);
    expect(verify('sha256', message, { key: publicKey, dsaEncoding: 'der' }, out)).toBe(true);
  });

  it('leaves a low-S signature as it is, byte for byte', () => {
    const der = low.toBytes('der');
    expect(lowS(der)).toBe(der);
  });

  it('base64url without padding, both ways', () => {
    const bytes = Uint8Array.from({ length: 33 }, (_, i) => 250 - i);
    expect(b64url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
    expect(fromB64url(b64url(bytes))).toEqual(bytes);
    expect(fromB64url(b64url(bytes.subarray(0, 31)))).toEqual(bytes.subarray(0, 31));
  });
});

describe('intentIdOf', () => {
  const shown = normalizeIntent({ wallet: 'treasury', destination: 'rBenign', amount: '5', memo: 'coffee', initiator: 'agent:bot' });
  const other = normalizeIntent({ wallet: 'treasury', destination: 'rAttacker', amount: '5000000000', initiator: 'agent:bot' });

  it("is the SDK's intentId, computed with WebCrypto (the page has no node:crypto)", async () => {
    expect(await intentIdOf(shown)).toBe(intentId(shown));
    expect(await intentIdOf(other)).toBe(intentId(other));
    // As GET /intent/{id} sends it: plain JSON, not the SDK's frozen object.
    expect(await intentIdOf(JSON.parse(JSON.stringify(shown)))).toBe(intentId(shown));
  });

  it('attack: a control plane shows one intent and asks for approval of another', async () => {
    await expect(assertIntentIs(intentId(other), JSON.parse(JSON.stringify(shown)))).rejects.toThrow(`not of ${intentId(other)}: not shown, not signed`);
    await expect(assertIntentIs(intentId(other), { ...JSON.parse(JSON.stringify(other)), amount: '5' })).rejects.toThrow('not shown, not signed');
    await expect(assertIntentIs(intentId(other), { wallet: 'treasury' })).rejects.toThrow('cannot be read');
    await expect(assertIntentIs(intentId(shown), JSON.parse(JSON.stringify(shown)))).resolves.toBeUndefined();
  });
});
