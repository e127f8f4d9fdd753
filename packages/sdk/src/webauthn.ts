/**
 * @module webauthn
 * Passkeys for strong authentication (issue #24): the challenge an approval's WebAuthn assertion
 * signs, the registration a device sends at pairing, and the one verifier both services call.
 * Every input is bounded before it is decoded; hostile input is a reason, never an exception.
 * Only what a P-256 passkey needs is read: ES256 (COSE -7), a strict minimal CBOR reader, strict
 * DER signatures, low-S only (a high-S twin of a valid signature is refused, so one approval has
 * exactly one valid encoding).
 */
import { p256 } from '@noble/curves/nist.js';
import { createHash } from 'node:crypto';
import { approvalMessage, type ApprovalStatement } from './digest.js';
import { timingSafeEqual, utf8Bytes } from './encoding.js';
import { z } from 'zod';
import { WEBAUTHN_LIMITS } from './schemas/approval.js';
import { base64url, boundedString } from './schemas/common.js';


/** The assertion an approval with `strong_auth: true` carries (wire.md), each field base64url. */
export interface PasskeyAssertion {
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
}

/** A passkey as registered at pairing and kept on the device record (wire.md). */
export interface RegisteredPasskey {
  credential_id: string;
  /** The COSE_Key bytes, base64url (EC2, P-256, ES256). */
  public_key: string;
  /** The BE flag at registration: true for a synced (backup-eligible) passkey. */
  backup_eligible: boolean;
  rp_id: string;
}

/** The standard registration response a device sends with `POST /pair/claim` (base64url). */
export interface PasskeyRegistration {
  attestation_object: string;
  client_data_json: string;
}

export type PasskeyProblem =
  | 'malformed'
  | 'wrong_type'
  | 'wrong_challenge'
  | 'wrong_origin'
  | 'cross_origin'
  | 'wrong_rp_id'
  | 'user_not_present'
  | 'user_not_verified'
  | 'backup_eligibility_changed'
  | 'wrong_credential'
  | 'unsupported_algorithm'
  | 'high_s'
  | 'bad_signature';

export type PasskeyFailure = { ok: false; reason: PasskeyProblem; message: string; path?: string };

/** Authenticator data flags (WebAuthn §6.1). */
const UP = 0x01;
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;
const ED = 0x80;

const COSE_ALG_ES256 = -7;

/**
 * The `challenge` of an approval's assertion: base64url(SHA-256(approvalMessage(statement))), so
 * an assertion is bound to exactly one approval (approver, intent, verdict, date, strong_auth).
 *
 * @example
 * navigator.credentials.get({ publicKey: { challenge: base64urlDecode(passkeyChallenge(statement)), rpId, userVerification: 'required' } })
 */
export function passkeyChallenge(statement: ApprovalStatement): string {
  return createHash('sha256').update(approvalMessage(statement)).digest('base64url');
}

/** What verifyPasskeyAssertion checks: the assertion sent, the passkey registered, the approval it must be over, and where it may come from. */
export interface PasskeyAssertionCheck {
  assertion: unknown;
  passkey: RegisteredPasskey;
  statement: ApprovalStatement;
  rp_id: string;
  origins: readonly string[];
}

/**
 * Verifies a passkey assertion over an approval: clientData type `webauthn.get`, challenge equal to
 * passkeyChallenge(statement), origin allowed and not cross-origin, rpIdHash of `rp_id`, UP and UV
 * set, BE as at registration, the registered credential id, and an ES256 low-S signature over
 * authenticatorData || SHA-256(clientDataJSON). `device_bound` is true for a passkey that was not
 * backup-eligible at registration (a synced passkey is not).
 *
 * @example
 * const check = verifyPasskeyAssertion({ assertion: approval.webauthn, passkey, statement: approval, rp_id: 'localhost', origins: ['http://localhost:8080'] })
 * if (!check.ok) console.log(check.reason, check.message)
 */
export function verifyPasskeyAssertion(args: PasskeyAssertionCheck): { ok: true; device_bound: boolean } | PasskeyFailure {
  try {
    return verifyAssertion(args);
  } catch {
    // Every path of verifyAssertion returns a reason; this only keeps a missed case from becoming a 500.
    return { ok: false, reason: 'malformed', message: 'assertion could not be read' };
  }
}

function verifyAssertion(args: PasskeyAssertionCheck): { ok: true; device_bound: boolean } | PasskeyFailure {
  const { assertion, passkey, statement, rp_id, origins } = args;
  if (typeof assertion !== 'object' || assertion === null) return fail('malformed', 'webauthn must be an object');
  const a = assertion as Record<string, unknown>;
  const credentialId = b64(a['credential_id'], 'credential_id', WEBAUTHN_LIMITS.credential_id);
  if (!credentialId.ok) return credentialId;
  const authData = b64(a['authenticator_data'], 'authenticator_data', WEBAUTHN_LIMITS.authenticator_data);
  if (!authData.ok) return authData;
  const clientDataJson = b64(a['client_data_json'], 'client_data_json', WEBAUTHN_LIMITS.client_data_json);
  if (!clientDataJson.ok) return clientDataJson;
  const signature = b64(a['signature'], 'signature', WEBAUTHN_LIMITS.signature);
  if (!signature.ok) return signature;

  const registeredId = b64(passkey.credential_id, 'passkey.credential_id', WEBAUTHN_LIMITS.credential_id);
  if (!registeredId.ok) return registeredId;
  if (!timingSafeEqual(credentialId.bytes, registeredId.bytes)) return fail('wrong_credential', 'credential_id is not the passkey registered for this approver', 'credential_id');

  const client = checkClientData(clientDataJson.bytes, 'webauthn.get', passkeyChallenge(statement), origins);
  if (!client.ok) return client;
  if (passkey.rp_id !== rp_id) return fail('wrong_rp_id', `the passkey was registered for rp_id ${JSON.stringify(passkey.rp_id)}, not ${JSON.stringify(rp_id)}`);
  const auth = readAuthData(authData.bytes, rp_id, 'authenticator_data');
  if (!auth.ok) return auth;
  if ((auth.flags & AT) !== 0) return fail('malformed', 'an assertion must not carry attested credential data (AT set)', 'authenticator_data');
  if (auth.rest.length > 0 && (auth.flags & ED) === 0) return fail('malformed', 'trailing bytes after the authenticator data', 'authenticator_data');
  if (auth.rest.length > 0) {
    const ext = readCbor(auth.rest, 0);
    if (!ext.ok || !(ext.value instanceof Map) || ext.end !== auth.rest.length) return fail('malformed', 'extensions are not one CBOR map', 'authenticator_data');
  }
  if (Boolean(auth.flags & BE) !== passkey.backup_eligible) {
    return fail('backup_eligibility_changed', `BE flag is ${Boolean(auth.flags & BE)}, registered as ${passkey.backup_eligible}`, 'authenticator_data');
  }

  const key = b64(passkey.public_key, 'passkey.public_key', 256);
  if (!key.ok) return key;
  const cose = parseCoseKey(key.bytes);
  if (!cose.ok) return cose;
  const sig = parseDerSignature(signature.bytes);
  if (!sig.ok) return sig;
  const clientHash = createHash('sha256').update(clientDataJson.bytes).digest();
  const signed = new Uint8Array(authData.bytes.length + 32);
  signed.set(authData.bytes, 0);
  signed.set(clientHash, authData.bytes.length);
  if (!p256.verify(sig.compact, signed, cose.point, { prehash: true, lowS: true, format: 'compact' })) {
    return fail('bad_signature', 'passkey signature does not verify', 'signature');
  }
  return { ok: true, device_bound: !passkey.backup_eligible };
}

/**
 * Why a stored passkey record (a device's, a trust file's) cannot verify anything, or null: its
 * credential id must be base64url and its key an ES256 P-256 COSE key. Services check it on load,
 * so a mistyped record is refused there rather than silently making every approval weak.
 *
 * @example
 * registeredPasskeyProblem({ credential_id: 'AQID', public_key: 'pQECAyYgASFYI…', backup_eligible: false, rp_id: 'localhost' }) // null
 */
export function registeredPasskeyProblem(passkey: Pick<RegisteredPasskey, 'credential_id' | 'public_key'>): { path: string; message: string } | null {
  const id = b64(passkey.credential_id, 'credential_id', WEBAUTHN_LIMITS.credential_id);
  if (!id.ok) return { path: 'credential_id', message: id.message };
  const key = b64(passkey.public_key, 'public_key', 256);
  if (!key.ok) return { path: 'public_key', message: key.message };
  const cose = parseCoseKey(key.bytes);
  return cose.ok ? null : { path: 'public_key', message: cose.message };
}

/** A WebAuthn origin: `scheme://host[:port]`, exactly as a browser writes it in clientDataJSON. */
export const WebAuthnOriginSchema = z
  .string()
  .max(256)
  .refine((o) => {
    try {
      return new URL(o).origin === o;
    } catch {
      return false;
    }
  }, 'an origin is scheme://host[:port], as a browser writes it (no path, no trailing slash)');

const PASSKEY_SHAPE = {
  credential_id: base64url(WEBAUTHN_LIMITS.credential_id),
  public_key: base64url(256).describe('The COSE_Key (ES256, P-256) as registered, base64url.'),
  backup_eligible: z.boolean().describe('The BE flag at registration: true for a synced passkey, false for a device-bound one.'),
  rp_id: boundedString(253),
};

function checkKey(p: Pick<RegisteredPasskey, 'credential_id' | 'public_key'>, ctx: z.RefinementCtx): void {
  const problem = registeredPasskeyProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', path: [problem.path], message: problem.message });
}

/**
 * A stored passkey record (a device's in state.json), its key checked as registeredPasskeyProblem
 * checks it.
 */
export const RegisteredPasskeySchema = z.strictObject(PASSKEY_SHAPE).superRefine(checkKey);

/** A passkey record with the origins its assertions may come from (a signer's trust file). */
export const ApproverPasskeySchema = z
  .strictObject({
    ...PASSKEY_SHAPE,
    origins: z.array(WebAuthnOriginSchema).min(1).max(16).describe('Page origins an assertion may come from (clientDataJSON.origin, exact match), e.g. http://localhost:8080.'),
  })
  .superRefine(checkKey);

/**
 * Reads the registration response a device sends at pairing: clientData type `webauthn.create`
 * with `challenge` (the pairing challenge bytes) from an allowed origin, not cross-origin; the
 * attestation object's authenticator data for `rp_id` with UP, UV and AT set; an ES256 P-256
 * COSE key (anything else is refused). The attestation statement is not verified: what a passkey
 * proves here is the device's consent ceremony, and BE is as the authenticator reports it.
 *
 * @example
 * const r = parseRegistration(body.passkey, { challenge: fromHex(code.challenge, 'challenge', 32), rp_id: 'localhost', origins })
 * if (r.ok) device.passkey = r.passkey
 */
export function parseRegistration(
  response: unknown,
  expect: { challenge: Uint8Array; rp_id: string; origins: readonly string[] },
): { ok: true; passkey: RegisteredPasskey; flags: { user_verified: boolean; backup_eligible: boolean; backed_up: boolean } } | PasskeyFailure {
  try {
    return readRegistration(response, expect);
  } catch {
    return { ok: false, reason: 'malformed', message: 'registration could not be read' };
  }
}

function readRegistration(
  response: unknown,
  expect: { challenge: Uint8Array; rp_id: string; origins: readonly string[] },
): ReturnType<typeof parseRegistration> {
  if (typeof response !== 'object' || response === null) return fail('malformed', 'passkey must be an object');
  const r = response as Record<string, unknown>;
  const clientDataJson = b64(r['client_data_json'], 'client_data_json', WEBAUTHN_LIMITS.client_data_json);
  if (!clientDataJson.ok) return clientDataJson;
  const attestation = b64(r['attestation_object'], 'attestation_object', WEBAUTHN_LIMITS.attestation_object);
  if (!attestation.ok) return attestation;
  const client = checkClientData(clientDataJson.bytes, 'webauthn.create', Buffer.from(expect.challenge).toString('base64url'), expect.origins);
  if (!client.ok) return client;

  const top = readCbor(attestation.bytes, 0);
  if (!top.ok) return fail('malformed', `attestation_object: ${top.message}`, 'attestation_object');
  if (top.end !== attestation.bytes.length) return fail('malformed', 'trailing bytes after the attestation object', 'attestation_object');
  if (!(top.value instanceof Map)) return fail('malformed', 'attestation object is not a CBOR map', 'attestation_object');
  const fmt = top.value.get('fmt');
  const authBytes = top.value.get('authData');
  if (typeof fmt !== 'string' || !(top.value.get('attStmt') instanceof Map) || !(authBytes instanceof Uint8Array) || top.value.size !== 3) {
    return fail('malformed', 'attestation object must hold exactly fmt (text), attStmt (map) and authData (bytes)', 'attestation_object');
  }
  if (authBytes.length > WEBAUTHN_LIMITS.authenticator_data) return fail('malformed', `authData is longer than ${WEBAUTHN_LIMITS.authenticator_data} bytes`, 'attestation_object');
  const auth = readAuthData(authBytes, expect.rp_id, 'attestation_object');
  if (!auth.ok) return auth;
  if ((auth.flags & AT) === 0) return fail('malformed', 'authData carries no attested credential data (AT not set)', 'attestation_object');
  // aaguid (16) | credentialIdLength (2) | credentialId | credentialPublicKey (CBOR) | extensions?
  const rest = auth.rest;
  if (rest.length < 18) return fail('malformed', 'attested credential data is truncated', 'attestation_object');
  const idLength = ((rest[16] as number) << 8) | (rest[17] as number);
  if (idLength < 1 || idLength > WEBAUTHN_LIMITS.credential_id || rest.length < 18 + idLength) {
    return fail('malformed', `credential id length ${idLength} is out of bounds`, 'attestation_object');
  }
  const credentialId = rest.subarray(18, 18 + idLength);
  const keyStart = 18 + idLength;
  const keyItem = readCbor(rest, keyStart);
  if (!keyItem.ok) return fail('malformed', `credential public key: ${keyItem.message}`, 'attestation_object');
  const keyBytes = rest.subarray(keyStart, keyItem.end);
  const cose = parseCoseKey(keyBytes);
  if (!cose.ok) return cose;
  const tail = rest.subarray(keyItem.end);
  if ((auth.flags & ED) === 0 ? tail.length > 0 : !isOneCborMap(tail)) {
    return fail('malformed', 'authData has bytes after the credential public key that are not its extensions', 'attestation_object');
  }
  return {
    ok: true,
    passkey: {
      credential_id: Buffer.from(credentialId).toString('base64url'),
      public_key: Buffer.from(keyBytes).toString('base64url'),
      backup_eligible: Boolean(auth.flags & BE),
      rp_id: expect.rp_id,
    },
    flags: { user_verified: Boolean(auth.flags & UV), backup_eligible: Boolean(auth.flags & BE), backed_up: Boolean(auth.flags & BS) },
  };
}

function isOneCborMap(bytes: Uint8Array): boolean {
  const item = readCbor(bytes, 0);
  return item.ok && item.value instanceof Map && item.end === bytes.length;
}

function fail(reason: PasskeyProblem, message: string, path?: string): PasskeyFailure {
  return path === undefined ? { ok: false, reason, message } : { ok: false, reason, message, path };
}

const B64URL_RE = /^[A-Za-z0-9_-]*$/;

/** Strict base64url (no padding, canonical trailing bits) of at most `maxBytes` bytes. */
function b64(value: unknown, field: string, maxBytes: number): { ok: true; bytes: Uint8Array } | PasskeyFailure {
  if (typeof value !== 'string') return fail('malformed', `${field} must be a base64url string`, field);
  if (value.length > Math.ceil((maxBytes * 4) / 3)) return fail('malformed', `${field} is longer than ${maxBytes} bytes`, field);
  if (!B64URL_RE.test(value) || value.length % 4 === 1) return fail('malformed', `${field} is not base64url without padding`, field);
  const buf = Buffer.from(value, 'base64url');
  if (buf.toString('base64url') !== value) return fail('malformed', `${field} is not canonical base64url`, field);
  if (buf.length === 0) return fail('malformed', `${field} is empty`, field);
  return { ok: true, bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.length) };
}

/** CollectedClientData (WebAuthn §5.8.1), checked against what the ceremony must have been. */
function checkClientData(bytes: Uint8Array, type: 'webauthn.get' | 'webauthn.create', challenge: string, origins: readonly string[]): { ok: true } | PasskeyFailure {
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    return fail('malformed', 'client_data_json is not UTF-8 JSON', 'client_data_json');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return fail('malformed', 'client_data_json is not a JSON object', 'client_data_json');
  const c = data as Record<string, unknown>;
  if (typeof c['type'] !== 'string' || typeof c['challenge'] !== 'string' || typeof c['origin'] !== 'string') {
    return fail('malformed', 'client_data_json needs string type, challenge and origin', 'client_data_json');
  }
  if (c['type'] !== type) return fail('wrong_type', `clientData type is ${JSON.stringify(c['type'])}, not ${type}`, 'client_data_json');
  if (!timingSafeEqual(utf8Bytes(c['challenge']), utf8Bytes(challenge))) {
    return fail('wrong_challenge', 'clientData challenge is not the challenge of this ceremony', 'client_data_json');
  }
  const origin = c['origin'];
  if (!origins.includes(origin)) return fail('wrong_origin', `origin ${JSON.stringify(origin)} is not allowed`, 'client_data_json');
  const cross = c['crossOrigin'];
  if (cross !== undefined && typeof cross !== 'boolean') return fail('malformed', 'clientData crossOrigin must be a boolean', 'client_data_json');
  // An iframe ceremony: another site framed the page and chose what the user signed for.
  if (cross === true || c['topOrigin'] !== undefined) return fail('cross_origin', 'the ceremony ran in a cross-origin frame', 'client_data_json');
  return { ok: true };
}

/** rpIdHash (32) | flags (1) | signCount (4) | rest; rpIdHash and UP, UV, BS-without-BE checked. */
function readAuthData(bytes: Uint8Array, rpId: string, field: string): { ok: true; flags: number; rest: Uint8Array } | PasskeyFailure {
  if (bytes.length < 37) return fail('malformed', 'authenticator data is shorter than 37 bytes', field);
  const rpIdHash = createHash('sha256').update(rpId, 'utf8').digest();
  if (!timingSafeEqual(bytes.subarray(0, 32), rpIdHash)) return fail('wrong_rp_id', `rpIdHash is not SHA-256(${JSON.stringify(rpId)})`, field);
  const flags = bytes[32] as number;
  if ((flags & UP) === 0) return fail('user_not_present', 'UP flag not set: no user presence', field);
  if ((flags & UV) === 0) return fail('user_not_verified', 'UV flag not set: the user was not verified', field);
  if ((flags & BS) !== 0 && (flags & BE) === 0) return fail('malformed', 'BS flag set without BE', field);
  return { ok: true, flags, rest: bytes.subarray(37) };
}

/** An ES256 COSE_Key: exactly {1: 2, 3: -7, -1: 1, -2: x, -3: y} with (x, y) on P-256. */
function parseCoseKey(bytes: Uint8Array): { ok: true; point: Uint8Array } | PasskeyFailure {
  const item = readCbor(bytes, 0);
  if (!item.ok || item.end !== bytes.length || !(item.value instanceof Map)) return fail('malformed', 'public key is not one COSE_Key map', 'public_key');
  const m = item.value;
  if (m.get(3) !== COSE_ALG_ES256) return fail('unsupported_algorithm', `COSE alg ${String(m.get(3))} is not ES256 (-7)`, 'public_key');
  const x = m.get(-2);
  const y = m.get(-3);
  if (m.size !== 5 || m.get(1) !== 2 || m.get(-1) !== 1 || !(x instanceof Uint8Array) || !(y instanceof Uint8Array) || x.length !== 32 || y.length !== 32) {
    return fail('unsupported_algorithm', 'COSE key must be exactly EC2 (kty 2), P-256 (crv 1), ES256 with 32-byte x and y', 'public_key');
  }
  const point = new Uint8Array(65);
  point[0] = 0x04;
  point.set(x, 1);
  point.set(y, 33);
  try {
    p256.Point.fromBytes(point).assertValidity();
  } catch {
    return fail('malformed', 'COSE key is not a point on P-256', 'public_key');
  }
  return { ok: true, point };
}

const N = p256.Point.CURVE().n;
const HALF_N = N >> 1n;

/**
 * Strict DER ECDSA-Sig-Value: SEQUENCE of two minimal positive INTEGERs in [1, n-1], nothing
 * after; s above n/2 is `high_s` (the malleable twin of (r, n - s)).
 */
function parseDerSignature(der: Uint8Array): { ok: true; compact: Uint8Array } | PasskeyFailure {
  const bad = (why: string) => fail('malformed', `signature is not strict DER: ${why}`, 'signature');
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) return bad('not one SEQUENCE of its length');
  let at = 2;
  const ints: bigint[] = [];
  for (let i = 0; i < 2; i++) {
    if (der[at] !== 0x02) return bad('INTEGER expected');
    const len = der[at + 1] as number;
    if (len < 1 || len > 33 || at + 2 + len > der.length) return bad('INTEGER length out of bounds');
    const v = der.subarray(at + 2, at + 2 + len);
    if (((v[0] as number) & 0x80) !== 0) return bad('negative INTEGER');
    if (len > 1 && v[0] === 0 && ((v[1] as number) & 0x80) === 0) return bad('INTEGER with a needless leading zero');
    ints.push(BigInt(`0x${Buffer.from(v).toString('hex')}`));
    at += 2 + len;
  }
  if (at !== der.length) return bad('bytes after the two INTEGERs');
  const [r, s] = ints as [bigint, bigint];
  if (r < 1n || r >= N || s < 1n || s >= N) return bad('r or s out of range');
  if (s > HALF_N) return fail('high_s', 'signature has a high S; send its low-S twin (r, n - s)', 'signature');
  const compact = new Uint8Array(64);
  compact.set(Buffer.from(r.toString(16).padStart(64, '0'), 'hex'), 0);
  compact.set(Buffer.from(s.toString(16).padStart(64, '0'), 'hex'), 32);
  return { ok: true, compact };
}

// ---------------------------------------------------------------------------------------------
// Minimal CBOR (RFC 8949): unsigned and negative integers (safe range), byte and text strings,
// arrays, maps with integer or text keys, false and true. Definite lengths in their shortest
// form only; no tags, floats, null, undefined or indefinite lengths; duplicate map keys refused.

type Cbor = number | string | boolean | Uint8Array | Cbor[] | Map<number | string, Cbor>;

const CBOR_MAX_DEPTH = 4;
const CBOR_MAX_ITEMS = 64;

function readCbor(bytes: Uint8Array, start: number): { ok: true; value: Cbor; end: number } | { ok: false; message: string } {
  try {
    const r = { at: start };
    const value = item(bytes, r, 0);
    return { ok: true, value, end: r.at };
  } catch (e) {
    return { ok: false, message: e instanceof CborError ? e.message : 'unreadable CBOR' };
  }
}

class CborError extends Error {}

function argument(bytes: Uint8Array, r: { at: number }, info: number): number {
  if (info < 24) return info;
  const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0;
  if (size === 0) throw new CborError(`unsupported additional information ${info}`);
  if (r.at + size > bytes.length) throw new CborError('truncated');
  let v = 0n;
  for (let i = 0; i < size; i++) v = (v << 8n) | BigInt(bytes[r.at + i] as number);
  r.at += size;
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new CborError('integer out of range');
  const n = Number(v);
  const min = size === 1 ? 24 : size === 2 ? 0x100 : size === 4 ? 0x10000 : 0x100000000;
  if (n < min) throw new CborError('integer not in its shortest form');
  return n;
}

function item(bytes: Uint8Array, r: { at: number }, depth: number): Cbor {
  if (depth > CBOR_MAX_DEPTH) throw new CborError('nested too deeply');
  if (r.at >= bytes.length) throw new CborError('truncated');
  const head = bytes[r.at++] as number;
  const major = head >> 5;
  const info = head & 0x1f;
  if (major === 7) {
    if (info === 20) return false;
    if (info === 21) return true;
    throw new CborError('unsupported simple value or float');
  }
  const n = argument(bytes, r, info);
  switch (major) {
    case 0:
      return n;
    case 1:
      return -1 - n;
    case 2:
    case 3: {
      if (r.at + n > bytes.length) throw new CborError('truncated string');
      const s = bytes.subarray(r.at, r.at + n);
      r.at += n;
      if (major === 2) return s;
      try {
        return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(s);
      } catch {
        throw new CborError('text is not UTF-8');
      }
    }
    case 4: {
      if (n > CBOR_MAX_ITEMS) throw new CborError('array too long');
      const out: Cbor[] = [];
      for (let i = 0; i < n; i++) out.push(item(bytes, r, depth + 1));
      return out;
    }
    case 5: {
      if (n > CBOR_MAX_ITEMS) throw new CborError('map too long');
      const out = new Map<number | string, Cbor>();
      for (let i = 0; i < n; i++) {
        const k = item(bytes, r, depth + 1);
        if (typeof k !== 'number' && typeof k !== 'string') throw new CborError('map key is not an integer or text');
        if (out.has(k)) throw new CborError(`duplicate map key ${JSON.stringify(k)}`);
        out.set(k, item(bytes, r, depth + 1));
      }
      return out;
    }
    default:
      throw new CborError('tags are not supported');
  }
}
