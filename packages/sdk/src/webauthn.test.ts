import { p256 } from '@noble/curves/nist.js';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signApproval, verifyApprovals, type ApproverPasskey } from './approvals.js';
import { intentId } from './digest.js';
import { generateEd25519KeyPair } from './ed25519.js';
import type { SignedApproval } from './schemas/approval.js';
import { createSoftwarePasskey, type SoftwarePasskey } from './testing/passkey.js';
import { parseRegistration, passkeyChallenge, registeredPasskeyProblem, verifyPasskeyAssertion, type RegisteredPasskey } from './webauthn.js';

const RP = 'localhost';
const ORIGIN = 'http://localhost:8080';
const ORIGINS = [ORIGIN];
const NOW = 1767225600;
const INTENT = intentId({ wallet: 'w1', destination: 'rDest', amount: '5' });
const alice = generateEd25519KeyPair();
const bob = generateEd25519KeyPair();

function approval(over: Partial<Pick<SignedApproval, 'verdict' | 'at' | 'strong_auth' | 'approver_id'>> = {}, key = alice.secretKey): SignedApproval {
  return signApproval({ approver_id: 'alice', intent: INTENT, verdict: 'approve', at: NOW, strong_auth: true, ...over }, key);
}

/** Registers `pk` as a pairing would (parseRegistration) and returns the record the device keeps. */
function registered(pk: SoftwarePasskey): RegisteredPasskey {
  const challenge = new Uint8Array(32).fill(7);
  const r = parseRegistration(pk.register(challenge), { challenge, rp_id: RP, origins: ORIGINS });
  if (!r.ok) throw new Error(`registration refused: ${r.reason}: ${r.message}`);
  return r.passkey;
}

function verify(a: SignedApproval, passkey: RegisteredPasskey, over: { rp_id?: string; origins?: string[] } = {}) {
  return verifyPasskeyAssertion({ assertion: a.webauthn, passkey, statement: a, rp_id: over.rp_id ?? RP, origins: over.origins ?? ORIGINS });
}

const N = p256.Point.CURVE().n;

describe('passkeyChallenge', () => {
  it('is base64url of SHA-256 of the approval message, and differs per approval', () => {
    const a = approval();
    expect(passkeyChallenge(a)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(passkeyChallenge(a)).not.toBe(passkeyChallenge(approval({ verdict: 'reject' })));
    expect(passkeyChallenge(a)).not.toBe(passkeyChallenge(approval({ at: NOW + 1 })));
  });
});

describe('parseRegistration', () => {
  const challenge = new Uint8Array(32).fill(9);
  const expectOk = { challenge, rp_id: RP, origins: ORIGINS };

  it('reads the credential id, the COSE key and BE from a browser registration', () => {
    const device = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
    const r = parseRegistration(device.register(challenge), expectOk);
    expect(r).toEqual({ ok: true, passkey: { credential_id: device.credential_id, public_key: device.public_key, backup_eligible: false, rp_id: RP }, flags: { user_verified: true, backup_eligible: false, backed_up: false } });
    const synced = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN, backup_eligible: true });
    const s = parseRegistration(synced.register(challenge), expectOk);
    expect(s.ok && s.passkey.backup_eligible).toBe(true);
  });

  it.each([
    ['another challenge', { challenge: new Uint8Array(32).fill(1) }, {}, 'wrong_challenge'],
    ['a wrong origin', {}, { origin: 'https://evil.example' }, 'wrong_origin'],
    ['a wrong rpId', {}, { rp_id: 'evil.example' }, 'wrong_rp_id'],
    ['an assertion type', {}, { type: 'webauthn.get' }, 'wrong_type'],
    ['a cross-origin ceremony', {}, { cross_origin: true }, 'cross_origin'],
    ['UV not set', {}, { flags: 0x01 | 0x40 }, 'user_not_verified'],
    ['UP not set', {}, { flags: 0x04 | 0x40 }, 'user_not_present'],
    ['no attested credential data', {}, { flags: 0x05 }, 'malformed'],
    ['BS without BE', {}, { flags: 0x05 | 0x10 | 0x40 }, 'malformed'],
  ] as const)('refuses a registration with %s', (_name, expectOver, ceremony, reason) => {
    const device = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
    const r = parseRegistration(device.register(challenge, ceremony), { ...expectOk, ...expectOver });
    expect(r.ok ? 'ok' : r.reason).toBe(reason);
  });

  it('refuses a COSE key that is not ES256 (RS256, alg -257)', () => {
    const device = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
    const reg = device.register(challenge);
    const att = Buffer.from(reg.attestation_object, 'base64url');
    // The COSE map's `3: -7` is 0x03 0x26; RS256 (-257) is 0x03 0x39 0x01 0x00.
    const at = att.indexOf(Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26]));
    expect(at).toBeGreaterThan(0);
    const forged = Buffer.concat([att.subarray(0, at + 4), Buffer.from([0x39, 0x01, 0x00]), att.subarray(at + 5)]);
    // authData's byte-string length grows by 2.
    const lenAt = forged.indexOf(Buffer.from('authData')) + 8;
    expect(forged[lenAt]).toBe(0x58);
    forged[lenAt + 1] = (forged[lenAt + 1] as number) + 2;
    const r = parseRegistration({ ...reg, attestation_object: forged.toString('base64url') }, expectOk);
    expect(r.ok ? 'ok' : r.reason).toBe('unsupported_algorithm');
  });

  it('refuses non-canonical CBOR: a length not in its shortest form, a duplicate key, trailing bytes, a tag', () => {
    const device = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
    const reg = device.register(challenge);
    const att = Buffer.from(reg.attestation_object, 'base64url');
    const cases: Buffer[] = [
      // {fmt...} map of 3 written with a one-byte argument (0xb8 0x03) instead of 0xa3
      Buffer.concat([Buffer.from([0xb8, 0x03]), att.subarray(1)]),
      // "fmt" twice: map of 4 whose last member repeats "fmt": "none"
      Buffer.concat([Buffer.from([0xa4]), att.subarray(1), Buffer.from([0x63, 0x66, 0x6d, 0x74, 0x64, 0x6e, 0x6f, 0x6e, 0x65])]),
      Buffer.concat([att, Buffer.from([0x00])]),
      Buffer.concat([Buffer.from([0xd8, 0x18]), att]),
      att.subarray(0, att.length - 1),
    ];
    for (const bytes of cases) {
      const r = parseRegistration({ ...reg, attestation_object: bytes.toString('base64url') }, expectOk);
      expect(r.ok ? 'ok' : r.reason).toBe('malformed');
    }
  });

  it('never throws on hostile input, and bounds every field', () => {
    const device = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
    const reg = device.register(challenge);
    const att = Buffer.from(reg.attestation_object, 'base64url');
    const hostile: unknown[] = [null, 1, 'x', [], {}, { attestation_object: 5, client_data_json: reg.client_data_json }, { ...reg, attestation_object: 'A'.repeat(1_000_000) }, { ...reg, client_data_json: '!!' }, { ...reg, client_data_json: Buffer.from('[1]').toString('base64url') }];
    for (let cut = 0; cut < att.length; cut += 7) hostile.push({ ...reg, attestation_object: att.subarray(0, cut).toString('base64url') });
    for (const h of hostile) {
      const r = parseRegistration(h, expectOk);
      expect(r.ok).toBe(false);
    }
    // A flipped byte inside the aaguid, the credential id or signCount still reads as a
    // registration (nothing signs them); anywhere else it is refused. Either way, no exception.
    for (let i = 0; i < att.length; i += 1) {
      const flipped = Buffer.from(att);
      flipped[i] = (flipped[i] as number) ^ 0xff;
      const r = parseRegistration({ ...reg, attestation_object: flipped.toString('base64url') }, expectOk);
      expect(typeof r.ok).toBe('boolean');
      if (r.ok) expect(r.passkey.public_key === device.public_key || r.passkey.credential_id !== device.credential_id || r.passkey.backup_eligible).toBe(true);
    }
  });
});

describe('verifyPasskeyAssertion', () => {
  const device = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
  const passkey = registered(device);

  it('accepts an assertion a browser makes over this approval, many times over (high and low S from the authenticator)', () => {
    for (let i = 0; i < 16; i++) {
      const a = device.attach(approval({ at: NOW + i }));
      expect(verify(a, passkey)).toEqual({ ok: true, device_bound: true });
    }
  });

  it('the challenge is what a browser puts in clientDataJSON', () => {
    const a = device.attach(approval());
    const client = JSON.parse(Buffer.from(a.webauthn!.client_data_json, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(client).toEqual({ type: 'webauthn.get', challenge: passkeyChallenge(a), origin: ORIGIN, crossOrigin: false });
  });

  it('attack: an assertion made for another approval', () => {
    const other = device.attach(approval({ verdict: 'reject' }));
    const a = { ...approval(), webauthn: other.webauthn! };
    expect(verify(a, passkey)).toMatchObject({ ok: false, reason: 'wrong_challenge' });
  });

  it('attack: a wrong origin', () => {
    const a = device.attach(approval(), { origin: 'https://vault.evil.example' });
    expect(verify(a, passkey)).toMatchObject({ ok: false, reason: 'wrong_origin' });
    // An origin differing only in port or scheme is another origin.
    expect(verify(device.attach(approval(), { origin: 'http://localhost:8081' }), passkey)).toMatchObject({ reason: 'wrong_origin' });
    expect(verify(device.attach(approval(), { origin: 'https://localhost:8080' }), passkey)).toMatchObject({ reason: 'wrong_origin' });
  });

  it('attack: a wrong rpId', () => {
    expect(verify(device.attach(approval(), { rp_id: 'evil.example' }), passkey)).toMatchObject({ ok: false, reason: 'wrong_rp_id' });
    // A passkey registered for another rp id is not used for this one.
    expect(verify(device.attach(approval()), { ...passkey, rp_id: 'vault.example' })).toMatchObject({ ok: false, reason: 'wrong_rp_id' });
  });

  it('attack: UV flag not set', () => {
    expect(verify(device.attach(approval(), { flags: 0x01 }), passkey)).toMatchObject({ ok: false, reason: 'user_not_verified' });
    expect(verify(device.attach(approval(), { flags: 0x04 }), passkey)).toMatchObject({ ok: false, reason: 'user_not_present' });
  });

  it('attack: a high-S signature', () => {
    const low = device.attach(approval(), { s: 'low' });
    const high = device.attach(approval(), { s: 'high' });
    expect(verify(low, passkey)).toEqual({ ok: true, device_bound: true });
    expect(verify(high, passkey)).toMatchObject({ ok: false, reason: 'high_s' });
    // The high twin is a valid ECDSA signature of the same bytes: only the low-S rule refuses it.
    const der = Buffer.from(high.webauthn!.signature, 'base64url');
    const sig = p256.Signature.fromBytes(der, 'der');
    expect(sig.s > N >> 1n).toBe(true);
    const signed = Buffer.concat([Buffer.from(high.webauthn!.authenticator_data, 'base64url'), createHash('sha256').update(Buffer.from(high.webauthn!.client_data_json, 'base64url')).digest()]);
    const point = p256.Point.fromBytes(Buffer.from('04' + Buffer.from(device.public_key, 'base64url').toString('hex').slice(20, 84) + Buffer.from(device.public_key, 'base64url').toString('hex').slice(90, 154), 'hex'));
    expect(p256.verify(sig.toBytes('compact'), signed, point.toBytes(false), { lowS: false })).toBe(true);
  });

  it('attack: a cross-origin ceremony', () => {
    expect(verify(device.attach(approval(), { cross_origin: true }), passkey)).toMatchObject({ ok: false, reason: 'cross_origin' });
  });

  it('attack: a credential id of another device', () => {
    const other = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
    registered(other);
    // Signed by the other device's passkey, naming its own credential.
    expect(verify(other.attach(approval()), passkey)).toMatchObject({ ok: false, reason: 'wrong_credential' });
    // Signed by the other device's passkey, claiming this device's credential id.
    const claimed = other.attach(approval(), { credential_id: Buffer.from(passkey.credential_id, 'base64url') });
    expect(verify(claimed, passkey)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('refuses an assertion of the wrong type, a changed BE flag, and a signature over other bytes', () => {
    expect(verify(device.attach(approval(), { type: 'webauthn.create' }), passkey)).toMatchObject({ reason: 'wrong_type' });
    expect(verify(device.attach(approval(), { flags: 0x05 | 0x08 }), passkey)).toMatchObject({ reason: 'backup_eligibility_changed' });
    const a = device.attach(approval());
    const data = Buffer.from(a.webauthn!.authenticator_data, 'base64url');
    data[33] = 1; // signCount changed after signing
    expect(verify({ ...a, webauthn: { ...a.webauthn!, authenticator_data: data.toString('base64url') } }, passkey)).toMatchObject({ reason: 'bad_signature' });
  });

  it('a synced passkey verifies but is not device-bound', () => {
    const synced = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN, backup_eligible: true });
    expect(verify(synced.attach(approval()), registered(synced))).toEqual({ ok: true, device_bound: false });
  });

  it('refuses non-strict DER: a needless leading zero, trailing bytes, a negative integer', () => {
    const a = device.attach(approval());
    const der = Buffer.from(a.webauthn!.signature, 'base64url');
    const rLen = der[3] as number;
    const r = der.subarray(4, 4 + rLen);
    const s = der.subarray(6 + rLen);
    const seq = (body: Buffer) => Buffer.concat([Buffer.from([0x30, body.length]), body]);
    const int = (v: Buffer) => Buffer.concat([Buffer.from([0x02, v.length]), v]);
    const variants = [
      seq(Buffer.concat([int(Buffer.concat([Buffer.from([0]), r[0] === 0 ? r.subarray(1) : r])), int(s)])).subarray(0),
      Buffer.concat([der, Buffer.from([0])]),
      seq(Buffer.concat([int(Buffer.from([0x80, ...r.subarray(1)])), int(s)])),
    ];
    // The first variant only adds a zero where none is needed when r's top bit is clear.
    for (const v of variants.slice(r[0] === 0 ? 1 : 0)) {
      const check = verify({ ...a, webauthn: { ...a.webauthn!, signature: v.toString('base64url') } }, passkey);
      expect(check.ok ? 'ok' : check.reason).toBe('malformed');
    }
  });

  it('never throws on hostile input', () => {
    const a = device.attach(approval());
    const w = a.webauthn!;
    const hostile: unknown[] = [undefined, null, 'x', 42, [], {}, { ...w, signature: 7 }, { ...w, client_data_json: 'A'.repeat(100_000) }, { ...w, authenticator_data: '' }, { ...w, credential_id: '=' }];
    for (const field of ['authenticator_data', 'client_data_json', 'signature'] as const) {
      const bytes = Buffer.from(w[field], 'base64url');
      for (let cut = 0; cut < bytes.length; cut += 3) hostile.push({ ...w, [field]: bytes.subarray(0, cut).toString('base64url') });
      for (let i = 0; i < bytes.length; i += 2) {
        const f = Buffer.from(bytes);
        f[i] = (f[i] as number) ^ 0x55;
        hostile.push({ ...w, [field]: f.toString('base64url') });
      }
    }
    for (const h of hostile) {
      const check = verifyPasskeyAssertion({ assertion: h, passkey, statement: a, rp_id: RP, origins: ORIGINS });
      expect(check.ok).toBe(false);
    }
    // A corrupt registered key is a reason too.
    expect(verifyPasskeyAssertion({ assertion: w, passkey: { ...passkey, public_key: 'AAAA' }, statement: a, rp_id: RP, origins: ORIGINS }).ok).toBe(false);
  });
});

describe('hostile input, property-tested', () => {
  const device = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
  const passkey = registered(device);
  const a = device.attach(approval());
  const b64 = fc.uint8Array({ maxLength: 600 }).map((x) => Buffer.from(x).toString('base64url'));
  const field = fc.oneof(b64, fc.string({ maxLength: 200 }), fc.anything());

  it('verifyPasskeyAssertion never throws and never accepts what it was not given', () => {
    fc.assert(
      fc.property(fc.record({ credential_id: field, authenticator_data: field, client_data_json: field, signature: field }, { requiredKeys: [] }), fc.anything(), (assertion, other) => {
        expect(verifyPasskeyAssertion({ assertion, passkey, statement: a, rp_id: RP, origins: ORIGINS }).ok).toBe(false);
        expect(verifyPasskeyAssertion({ assertion: other, passkey, statement: a, rp_id: RP, origins: ORIGINS }).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('parseRegistration never throws on any attestation object or client data', () => {
    const challenge = new Uint8Array(32);
    fc.assert(
      fc.property(fc.record({ attestation_object: field, client_data_json: field }, { requiredKeys: [] }), (r) => {
        expect(parseRegistration(r, { challenge, rp_id: RP, origins: ORIGINS }).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('registeredPasskeyProblem', () => {
  it('accepts a registered passkey and names the field of a broken one', () => {
    const passkey = registered(createSoftwarePasskey({ rp_id: RP, origin: ORIGIN }));
    expect(registeredPasskeyProblem(passkey)).toBeNull();
    expect(registeredPasskeyProblem({ ...passkey, credential_id: 'a+b' })).toMatchObject({ path: 'credential_id' });
    expect(registeredPasskeyProblem({ ...passkey, public_key: 'AQID' })).toMatchObject({ path: 'public_key' });
    // The x coordinate moved off the curve.
    const key = Buffer.from(passkey.public_key, 'base64url');
    key[12] = (key[12] as number) ^ 1;
    expect(registeredPasskeyProblem({ ...passkey, public_key: key.toString('base64url') })).toMatchObject({ path: 'public_key', message: 'COSE key is not a point on P-256' });
  });
});

describe('verifyApprovals with passkeys', () => {
  const aliceDevice = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN });
  const alicePasskey: ApproverPasskey = { ...registered(aliceDevice), origins: ORIGINS };
  const bobDevice = createSoftwarePasskey({ rp_id: RP, origin: ORIGIN, backup_eligible: true });
  const bobPasskey: ApproverPasskey = { ...registered(bobDevice), origins: ORIGINS };
  const approvers = new Map([
    ['alice', { publicKey: alice.publicKey, passkey: alicePasskey }],
    ['bob', { publicKey: bob.publicKey, passkey: bobPasskey }],
    ['carol', { publicKey: generateEd25519KeyPair().publicKey }],
  ]);
  const ctx = { intentId: INTENT, approvers, window: { createdAt: NOW - 10, now: NOW + 10 } };

  it('counts a proven strong approval as strong, device-bound or not, and forwards it as signed', () => {
    const a = aliceDevice.attach(approval());
    const b = bobDevice.attach(approval({ approver_id: 'bob' }, bob.secretKey));
    const r = verifyApprovals([a, b], ctx);
    expect(r.problems).toEqual([]);
    expect(r.weakened).toEqual([]);
    expect(r.valid).toEqual([a, b]);
    expect(r.counted).toEqual([{ ...a, device_bound: true }, { ...b, device_bound: false }]);
  });

  it('counts strong_auth true without a verifying assertion as weak, saying why', () => {
    const bare = approval();
    const wrongDevice = bobDevice.attach(approval());
    const noPasskey = signApproval({ approver_id: 'carol', intent: INTENT, verdict: 'approve', at: NOW, strong_auth: true }, generateEd25519KeyPair().secretKey);
    const r1 = verifyApprovals([bare], ctx);
    expect(r1.valid).toEqual([bare]);
    expect(r1.counted).toEqual([{ ...bare, strong_auth: false }]);
    expect(r1.weakened).toMatchObject([{ index: 0, approver_id: 'alice', reason: 'no_assertion' }]);
    expect(verifyApprovals([wrongDevice], ctx).weakened).toMatchObject([{ reason: 'wrong_credential' }]);
    expect(verifyApprovals([noPasskey], ctx).problems).toMatchObject([{ reason: 'bad_signature' }]);
  });

  it('a weak approval needs no assertion, and an assertion does not make it strong', () => {
    const weak = aliceDevice.attach(approval({ strong_auth: false }));
    const r = verifyApprovals([weak], ctx);
    expect(r.weakened).toEqual([]);
    expect(r.counted).toEqual([weak]);
    expect(r.counted[0]?.strong_auth).toBe(false);
  });

  it('the webauthn member is outside the ed25519 message: adding it keeps the signature valid', () => {
    const a = approval();
    expect(verifyApprovals([aliceDevice.attach(a)], ctx).valid).toHaveLength(1);
  });
});
