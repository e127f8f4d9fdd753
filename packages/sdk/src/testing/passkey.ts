/**
 * @module testing/passkey
 * A software passkey that answers WebAuthn ceremonies byte for byte as a browser and a platform
 * authenticator do: clientDataJSON with members in the browser's order, CTAP2 canonical CBOR
 * (attestationObject `{fmt: "none", attStmt: {}, authData}`, COSE_Key `{1, 3, -1, -2, -3}`),
 * authenticatorData `rpIdHash | flags | signCount`, and a DER ECDSA P-256 signature over
 * authenticatorData || SHA-256(clientDataJSON) whose S is high about half the time, as real
 * authenticators return it. `assert` sends the low-S twin unless told otherwise, as a client must.
 * Tests use it to make real registrations and assertions, and to bend one field at a time.
 */
import { p256 } from '@noble/curves/nist.js';
import { createHash, randomBytes } from 'node:crypto';
import type { ApprovalStatement } from '../digest.js';
import type { SignedApproval } from '../schemas/approval.js';
import { passkeyChallenge, type PasskeyAssertion, type PasskeyRegistration } from '../webauthn.js';

export interface SoftwarePasskeyOptions {
  rp_id?: string;
  origin?: string;
  /** BE: a synced passkey (iCloud Keychain, Google Password Manager) is backup-eligible. Default false. */
  backup_eligible?: boolean;
  /** BS: backed up now (only with backup_eligible). Default: as backup_eligible. */
  backed_up?: boolean;
  credential_id?: Uint8Array;
}

/** What a ceremony can be bent to do (each default is what an honest browser sends). */
export interface CeremonyOptions {
  origin?: string;
  rp_id?: string;
  type?: string;
  cross_origin?: boolean;
  /** Flags byte override (UP 0x01, UV 0x04, BE 0x08, BS 0x10, AT 0x40, ED 0x80). */
  flags?: number;
  /** Which S to send: `low` (a correct client), `high` (the malleable twin), `as_signed` (the authenticator's raw answer). */
  s?: 'low' | 'high' | 'as_signed';
  credential_id?: Uint8Array;
}

export interface SoftwarePasskey {
  readonly rp_id: string;
  readonly origin: string;
  readonly credential_id: string;
  /** The COSE_Key bytes, base64url. */
  readonly public_key: string;
  /** `navigator.credentials.create()` for a pairing challenge (its 32 bytes). */
  register(challenge: Uint8Array, opts?: CeremonyOptions): PasskeyRegistration;
  /** `navigator.credentials.get()` for a base64url challenge. */
  assert(challenge: string, opts?: CeremonyOptions): PasskeyAssertion;
  /** An approval with its `webauthn` member: the assertion over passkeyChallenge(approval). */
  attach(approval: SignedApproval, opts?: CeremonyOptions): SignedApproval;
}

const N = p256.Point.CURVE().n;

/**
 * @example
 * const passkey = createSoftwarePasskey({ rp_id: 'localhost', origin: 'http://localhost:8080' })
 * const claim = { ...claimBody, passkey: passkey.register(fromHex(code.challenge, 'challenge', 32)) }
 * const approval = passkey.attach(signApproval(statement, secretKey))
 */
export function createSoftwarePasskey(options: SoftwarePasskeyOptions = {}): SoftwarePasskey {
  const rpId = options.rp_id ?? 'localhost';
  const origin = options.origin ?? 'http://localhost';
  const be = options.backup_eligible ?? false;
  const bs = options.backed_up ?? be;
  const secretKey = p256.utils.randomSecretKey();
  const point = p256.getPublicKey(secretKey, false);
  const credentialId = options.credential_id ?? new Uint8Array(randomBytes(16));
  const cose = cbor(new Map<number, unknown>([[1, 2], [3, -7], [-1, 1], [-2, point.subarray(1, 33)], [-3, point.subarray(33, 65)]]));
  const baseFlags = 0x01 | 0x04 | (be ? 0x08 : 0) | (bs ? 0x10 : 0);

  const clientData = (type: string, challenge: string, opts: CeremonyOptions): Uint8Array =>
    Buffer.from(JSON.stringify({ type: opts.type ?? type, challenge, origin: opts.origin ?? origin, crossOrigin: opts.cross_origin ?? false }), 'utf8');
  const authData = (flags: number, rp: string, attested: Uint8Array | null): Uint8Array =>
    Buffer.concat([createHash('sha256').update(rp, 'utf8').digest(), Buffer.from([flags]), Buffer.alloc(4), ...(attested ? [attested] : [])]);

  const register = (challenge: Uint8Array, opts: CeremonyOptions = {}): PasskeyRegistration => {
    const id = opts.credential_id ?? credentialId;
    const attested = Buffer.concat([Buffer.alloc(16), Buffer.from([id.length >> 8, id.length & 0xff]), id, cose]);
    const data = authData(opts.flags ?? baseFlags | 0x40, opts.rp_id ?? rpId, attested);
    const attestation = cbor(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', data]]));
    return { attestation_object: b64u(attestation), client_data_json: b64u(clientData('webauthn.create', Buffer.from(challenge).toString('base64url'), opts)) };
  };

  const assert = (challenge: string, opts: CeremonyOptions = {}): PasskeyAssertion => {
    const data = authData(opts.flags ?? baseFlags, opts.rp_id ?? rpId, null);
    const cdj = clientData('webauthn.get', challenge, opts);
    const signed = Buffer.concat([data, createHash('sha256').update(cdj).digest()]);
    // A real authenticator does not normalise S: about half of its signatures are high-S.
    let sig = p256.Signature.fromBytes(p256.sign(signed, secretKey, { prehash: true, lowS: false }));
    const high = sig.s > N >> 1n;
    const want = opts.s ?? 'low';
    if ((want === 'low' && high) || (want === 'high' && !high)) sig = new p256.Signature(sig.r, N - sig.s);
    return {
      credential_id: b64u(opts.credential_id ?? credentialId),
      authenticator_data: b64u(data),
      client_data_json: b64u(cdj),
      signature: b64u(sig.toBytes('der')),
    };
  };

  return {
    rp_id: rpId,
    origin,
    credential_id: b64u(credentialId),
    public_key: b64u(cose),
    register,
    assert,
    attach: (approval, opts) => ({ ...approval, webauthn: assert(passkeyChallenge(approval as ApprovalStatement), opts) }),
  };
}

function b64u(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** CTAP2 canonical CBOR of the few shapes the ceremonies use. */
function cbor(value: unknown): Uint8Array {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
    if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const s = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, s.length), s]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (value instanceof Map) {
    const parts: Uint8Array[] = [head(5, value.size)];
    for (const [k, v] of value) parts.push(cbor(k), cbor(v));
    return Buffer.concat(parts);
  }
  throw new TypeError('cbor: unsupported value');
}
