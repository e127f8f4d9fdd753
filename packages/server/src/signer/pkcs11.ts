/**
 * @module signer/pkcs11
 * A `KeyBackend` whose keys live in a PKCS#11 token (YubiHSM 2, a cloud HSM's PKCS#11 library,
 * SoftHSM2 in tests). The secret never leaves the token: ed25519 signs through CKM_EDDSA over the
 * message; secp256k1 through CKM_ECDSA over the 32-byte digest the driver hands in, and the raw
 * `r || s` the token returns is normalised to low S and given its recovery id here. Every signature
 * is verified with @noble/curves against the public key read at start before it leaves the
 * backend: a token that answers with a wrong signature (a faulty device, objects swapped under a
 * label) is a refusal (`key`), never a contribution.
 *
 * A token that resets or disappears (session or object handles invalid, device removed, the module
 * finalised) is re-initialised, logged into again and its keys found again by label, each checked
 * to still be the public key it was at start; until that works every signature is refused with
 * reason `key` and a message naming the token. There is no fallback to any other key.
 *
 * The PIN comes from an environment variable or a 0600 file named in the configuration, never a
 * flag; it is held in this closure, never logged and never put in an error.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { parseWith, SignerRefusedError, toHex, VaultError, type Curve, type SigningKey } from '@vault/sdk';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { readSecretFile } from '../http/files.js';
import { KeyScopeSchema, KeystoreError, keyIdOf, type KeyBackend, type KeyInfo, type KeyScope } from './keystore.js';

type Pkcs11Lib = typeof import('pkcs11js');
type PKCS11 = InstanceType<Pkcs11Lib['PKCS11']>;
type Handle = Buffer;

// PKCS#11 3.0 values pkcs11js does not define.
const CKK_EC_EDWARDS = 0x40;
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
const CKM_EDDSA = 0x1057;
const CKM_ECDSA = 0x1041;
const CKM_EC_KEY_PAIR_GEN = 0x1040;
const CKK_EC = 0x3;

/** DER OIDs: what CKA_EC_PARAMS holds for each curve. */
const OID_SECP256K1 = '06052b8104000a';
const OID_ED25519 = '06032b6570';
/** Some modules name the curve instead (PKCS#11 3.0 allows a PrintableString). */
const NAMED_ED25519 = '130c656477617264733235353139';

const CKR = {
  GENERAL_ERROR: 0x5,
  DEVICE_ERROR: 0x30,
  DEVICE_REMOVED: 0x32,
  KEY_HANDLE_INVALID: 0x60,
  OBJECT_HANDLE_INVALID: 0x82,
  PIN_INCORRECT: 0xa0,
  PIN_INVALID: 0xa1,
  PIN_LEN_RANGE: 0xa2,
  PIN_EXPIRED: 0xa3,
  PIN_LOCKED: 0xa4,
  SESSION_CLOSED: 0xb0,
  SESSION_HANDLE_INVALID: 0xb3,
  TOKEN_NOT_PRESENT: 0xe0,
  TOKEN_NOT_RECOGNIZED: 0xe1,
  USER_ALREADY_LOGGED_IN: 0x100,
  USER_NOT_LOGGED_IN: 0x101,
  CRYPTOKI_NOT_INITIALIZED: 0x190,
  CRYPTOKI_ALREADY_INITIALIZED: 0x191,
  SLOT_ID_INVALID: 0x3,
} as const;

/** Return values after which the token is re-initialised and logged into again. */
const RESET_CODES: ReadonlySet<number> = new Set([
  CKR.GENERAL_ERROR,
  CKR.DEVICE_ERROR,
  CKR.DEVICE_REMOVED,
  CKR.KEY_HANDLE_INVALID,
  CKR.OBJECT_HANDLE_INVALID,
  CKR.SESSION_CLOSED,
  CKR.SESSION_HANDLE_INVALID,
  CKR.TOKEN_NOT_PRESENT,
  CKR.TOKEN_NOT_RECOGNIZED,
  CKR.USER_NOT_LOGGED_IN,
  CKR.CRYPTOKI_NOT_INITIALIZED,
  CKR.SLOT_ID_INVALID,
]);
/** The token refused the PIN: trying again could lock it, so the backend stops trying. */
const PIN_CODES: ReadonlySet<number> = new Set([CKR.PIN_INCORRECT, CKR.PIN_INVALID, CKR.PIN_LEN_RANGE, CKR.PIN_EXPIRED, CKR.PIN_LOCKED]);

/** The `backend` a PKCS#11 token reports in SignResponse: `yubihsm` for a YubiHSM 2, else `pkcs11`. */
export type Pkcs11BackendName = 'yubihsm' | 'pkcs11';

const labelSchema = z.string().min(1).max(64);

/** The signer's PKCS#11 configuration file (`vault-signer serve --pkcs11 FILE`). */
export const Pkcs11ConfigSchema = z
  .strictObject({
    format: z.literal('vault-signer-pkcs11'),
    version: z.literal(1),
    /** The PKCS#11 library: yubihsm_pkcs11.so, libsofthsm2.so, a cloud HSM's client library. Relative to the file. */
    module: z.string().min(1).max(4096),
    /** The token, by label (preferred: slot numbers move) or by slot id. */
    token_label: labelSchema.optional(),
    slot: z.int().min(0).optional(),
    /** Where the user PIN is: an environment variable (default VAULT_PKCS11_PIN) or a 0600 file. */
    pin_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/).max(128).optional(),
    pin_file: z.string().min(1).max(4096).optional(),
    /** The signing keys, by CKA_LABEL (each label names one private key and its public key). */
    keys: z.array(z.strictObject({ label: labelSchema, scope: KeyScopeSchema.optional() })).min(1).max(256),
    /** Sessions kept open for signing. Default 4. */
    sessions: z.int().min(1).max(64).optional(),
    /** How long one signature may take before it is refused. Default 10 000 ms. */
    timeout_ms: z.int().min(100).max(120_000).optional(),
  })
  .refine((c) => (c.token_label === undefined) !== (c.slot === undefined), { message: 'name the token by exactly one of token_label or slot', path: ['token_label'] })
  .refine((c) => c.pin_env === undefined || c.pin_file === undefined, { message: 'give the PIN by pin_env or pin_file, not both', path: ['pin_file'] });
export type Pkcs11Config = z.infer<typeof Pkcs11ConfigSchema>;

/** Reads and validates a configuration file; `module` and `pin_file` are resolved against its directory. */
export function loadPkcs11Config(path: string): Pkcs11Config {
  const abs = resolve(path);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(abs, 'utf8'));
  } catch (cause) {
    throw new KeystoreError(`${abs} is not readable JSON`, { cause, path: abs });
  }
  const config = parseWith(Pkcs11ConfigSchema, raw, 'pkcs11');
  const base = dirname(abs);
  return {
    ...config,
    module: isAbsolute(config.module) ? config.module : resolve(base, config.module),
    ...(config.pin_file !== undefined ? { pin_file: isAbsolute(config.pin_file) ? config.pin_file : resolve(base, config.pin_file) } : {}),
  };
}

/** The PIN the configuration points at. Never logged; an error names where it was looked for, never what. */
export function readPin(config: Pick<Pkcs11Config, 'pin_env' | 'pin_file'>, env: NodeJS.ProcessEnv = process.env): string {
  if (config.pin_file !== undefined) {
    const pin = readSecretFile(config.pin_file).replace(/\r?\n$/, '');
    if (pin === '') throw new KeystoreError(`the PIN file ${config.pin_file} is empty`);
    return pin;
  }
  const name = config.pin_env ?? 'VAULT_PKCS11_PIN';
  const pin = env[name];
  if (pin === undefined || pin === '') throw new KeystoreError(`set ${name} to the token's user PIN (or give pin_file in the PKCS#11 configuration)`);
  return pin;
}

let lib: Pkcs11Lib | undefined;
/** pkcs11js, loaded on first use: a signer on the software keystore never loads the native binding. */
function pkcs11js(): Pkcs11Lib {
  lib ??= createRequire(import.meta.url)('pkcs11js') as Pkcs11Lib;
  return lib;
}

const ckrName = (code: number): string => {
  const l = pkcs11js() as unknown as Record<string, unknown>;
  const name = Object.keys(l).find((k) => k.startsWith('CKR_') && l[k] === code);
  return name ?? `CKR 0x${code.toString(16)}`;
};
/** The CKR_* value of a PKCS#11 error (pkcs11js's Pkcs11Error), else null; a VaultError's wire code is not one. */
const codeOf = (e: unknown): number | null => {
  if (e instanceof VaultError) return null;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 0 ? code : null;
};

/**
 * One loaded library per path and process: PKCS#11 state (initialisation, login) belongs to the
 * library, not to whoever opened it, so every backend over the same module shares this, and a
 * reset by one is seen by all through `generation`.
 */
class Module {
  static readonly #loaded = new Map<string, Module>();
  readonly p: PKCS11;
  generation = 0;
  /** Signatures running on libuv's threads right now: a reset waits for them (finalising under a running call is undefined behaviour in most modules). */
  inflight = 0;
  #initialised = false;

  private constructor(readonly path: string) {
    const { PKCS11 } = pkcs11js();
    this.p = new PKCS11();
    try {
      this.p.load(path);
    } catch (cause) {
      throw new KeystoreError(`cannot load the PKCS#11 module ${path}: ${(cause as Error).message}`, { cause });
    }
  }

  static of(path: string): Module {
    let m = Module.#loaded.get(path);
    if (!m) {
      m = new Module(path);
      Module.#loaded.set(path, m);
    }
    return m;
  }

  initialise(): void {
    if (this.#initialised) return;
    try {
      // OS locking: signatures run on libuv's threads, several sessions at once.
      this.p.C_Initialize({ flags: pkcs11js().CKF_OS_LOCKING_OK });
    } catch (e) {
      if (codeOf(e) !== CKR.CRYPTOKI_ALREADY_INITIALIZED) throw e;
    }
    this.#initialised = true;
  }

  /** Resolves once no signature is running in the module, or after `maxMs` (a call that hangs must not block recovery forever). */
  async drained(maxMs: number): Promise<void> {
    const until = Date.now() + maxMs;
    while (this.inflight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  }

  /** Finalises and initialises again: every session and handle of the old generation is gone. */
  reset(seenGeneration: number): void {
    if (seenGeneration !== this.generation) return; // another backend already reset it
    try {
      this.p.C_Finalize();
    } catch {
      // already finalised, or the device is gone: initialising again is what matters
    }
    this.#initialised = false;
    this.generation++;
    this.initialise();
  }

  /** Test seam for "the module was finalised under the signer": C_Finalize without telling anyone. */
  finalizeBehindTheBackend(): void {
    this.p.C_Finalize();
  }
}

/** A live connection to the token: its slot, a pool of logged-in sessions and the key handles. */
interface Connection {
  generation: number;
  slot: Handle;
  idle: Handle[];
  open: number;
  /** Every session this backend opened on the connection (idle or busy), so close() closes only its own. */
  sessions: Set<Handle>;
  handles: Map<string, Handle>;
}

interface HeldKey {
  info: KeyInfo;
  label: string;
  signer: SigningKey;
}

/** Where a token is, for messages: `token "vault-a"` or `slot 3`. */
const tokenName = (c: Pick<Pkcs11Config, 'token_label' | 'slot'>): string => (c.token_label !== undefined ? `token "${c.token_label}"` : `slot ${c.slot}`);

function findSlot(m: Module, config: Pick<Pkcs11Config, 'token_label' | 'slot'>): { slot: Handle; manufacturer: string; model: string } {
  for (const slot of m.p.C_GetSlotList(true)) {
    const info = m.p.C_GetTokenInfo(slot);
    const match = config.token_label !== undefined ? info.label.trim() === config.token_label : slot.readUIntLE(0, Math.min(slot.length, 6)) === config.slot;
    if (match) return { slot, manufacturer: info.manufacturerID.trim(), model: info.model.trim() };
  }
  throw new KeystoreError(`no PKCS#11 ${tokenName(config)} is present in ${m.path}`);
}

/** `yubihsm` when the token says it is a YubiHSM (its manufacturer is Yubico and its model YubiHSM), else `pkcs11`. */
export function backendNameOf(manufacturer: string, model: string): Pkcs11BackendName {
  return /yubihsm/i.test(model) || (/yubico/i.test(manufacturer) && /hsm/i.test(model)) ? 'yubihsm' : 'pkcs11';
}

function findObjects(p: PKCS11, session: Handle, template: { type: number; value?: number | boolean | string | Buffer }[]): Handle[] {
  p.C_FindObjectsInit(session, template);
  try {
    return p.C_FindObjects(session, 16);
  } finally {
    p.C_FindObjectsFinal(session);
  }
}

const ulong = (b: unknown): number => (Buffer.isBuffer(b) ? b.readUIntLE(0, Math.min(b.length, 6)) : Number(b));
const bool = (b: unknown): boolean => (Buffer.isBuffer(b) ? b.length > 0 && b[0] !== 0 : b === true);

/** The curve and public key of a key pair from its public object's attributes. */
function publicKeyFromAttributes(keyType: number, params: Buffer, point: Buffer, label: string): { curve: Curve; publicKey: Uint8Array } {
  // CKA_EC_POINT is a DER OCTET STRING around the point; some modules return the bare point.
  const unwrap = (expected: number): Buffer => {
    if (point.length === expected + 2 && point[0] === 0x04 && point[1] === expected) return point.subarray(2);
    if (point.length === expected) return point;
    throw new KeystoreError(`key "${label}": CKA_EC_POINT is not a ${expected}-byte point`);
  };
  const p = params.toString('hex');
  if (keyType === CKK_EC_EDWARDS && (p === OID_ED25519 || p === NAMED_ED25519)) return { curve: 'ed25519', publicKey: Uint8Array.from(unwrap(32)) };
  if (keyType === CKK_EC && p === OID_SECP256K1) {
    const raw = point.length === 65 || point.length === 33 ? point : unwrap(point.length - 2);
    return { curve: 'secp256k1', publicKey: secp256k1.Point.fromBytes(Uint8Array.from(raw)).toBytes(true) };
  }
  throw new KeystoreError(`key "${label}" is neither ed25519 nor secp256k1 (key type 0x${keyType.toString(16)}, params ${p})`);
}

const SECP256K1_N = secp256k1.Point.CURVE().n;

/**
 * The token's raw `r || s` over `digest` as the SigningKey contract wants it: low S, recovery id
 * appended, verified against `publicKey`. Null when the token's answer is not a valid signature.
 */
export function finishSecp256k1(raw: Uint8Array, digest: Uint8Array, publicKey: Uint8Array): Uint8Array | null {
  if (raw.length !== 64) return null;
  const r = BigInt(`0x${toHex(raw.subarray(0, 32))}`);
  let s = BigInt(`0x${toHex(raw.subarray(32, 64))}`);
  if (r <= 0n || r >= SECP256K1_N || s <= 0n || s >= SECP256K1_N) return null;
  if (s > SECP256K1_N >> 1n) s = SECP256K1_N - s;
  const sig = new secp256k1.Signature(r, s);
  const compact = sig.toBytes('compact');
  if (!secp256k1.verify(compact, digest, publicKey, { prehash: false, lowS: true })) return null;
  const want = toHex(publicKey);
  for (const bit of [0, 1]) {
    let recovered: string;
    try {
      recovered = toHex(sig.addRecoveryBit(bit).recoverPublicKey(digest).toBytes(true));
    } catch {
      continue;
    }
    if (recovered === want) {
      const out = new Uint8Array(65);
      out.set(compact, 0);
      out[64] = bit;
      return out;
    }
  }
  return null;
}

/**
 * The PKCS#11 backend. `open` loads the module, finds the token, logs in and reads every configured
 * key's public key (a key that is missing, or not ed25519 / secp256k1, is an error: the signer
 * does not start half-configured).
 *
 * @example
 * const keys = await Pkcs11Backend.open(loadPkcs11Config('/etc/vault/pkcs11.json'))
 */
export class Pkcs11Backend implements KeyBackend {
  readonly name: Pkcs11BackendName;
  readonly #module: Module;
  readonly #config: Pkcs11Config;
  readonly #pin: string;
  readonly #keys: Map<string, HeldKey> = new Map();
  readonly #maxSessions: number;
  readonly #timeoutMs: number;
  readonly #waiting: { resolve: (s: Handle) => void; reject: (e: unknown) => void }[] = [];
  #conn: Connection | null = null;
  /** Set when the token refused the PIN: no further login is attempted (it could lock the PIN). */
  #pinRefused: string | null = null;
  #closed = false;

  private constructor(module: Module, config: Pkcs11Config, pin: string, name: Pkcs11BackendName) {
    this.#module = module;
    this.#config = config;
    this.#pin = pin;
    this.name = name;
    this.#maxSessions = config.sessions ?? 4;
    this.#timeoutMs = config.timeout_ms ?? 10_000;
  }

  static async open(config: Pkcs11Config, options: { pin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Pkcs11Backend> {
    const pin = options.pin ?? readPin(config, options.env);
    const module = Module.of(config.module);
    module.initialise();
    let found: ReturnType<typeof findSlot>;
    try {
      found = findSlot(module, config);
    } catch (e) {
      if (codeOf(e) === null) throw e;
      module.reset(module.generation);
      found = findSlot(module, config);
    }
    const backend = new Pkcs11Backend(module, config, pin, backendNameOf(found.manufacturer, found.model));
    const conn = backend.#connect();
    const session = await backend.#acquire(conn);
    try {
      for (const k of config.keys) {
        const { curve, publicKey } = backend.#readPublicKey(session, k.label);
        const publicKeyHex = toHex(publicKey);
        if ([...backend.#keys.values()].some((h) => h.info.publicKeyHex === publicKeyHex)) throw new KeystoreError(`key "${k.label}" is listed twice`);
        const info: KeyInfo = { id: keyIdOf(publicKey), curve, publicKey, publicKeyHex, scope: k.scope ?? {}, unlocked: true };
        backend.#keys.set(publicKeyHex, { info, label: k.label, signer: backend.#signingKey(curve, publicKey, k.label) });
      }
      backend.#release(conn, session);
    } catch (e) {
      backend.close();
      throw e instanceof KeystoreError ? e : new KeystoreError(`cannot read the keys of ${tokenName(config)}: ${describe(e)}`, { cause: e });
    }
    return backend;
  }

  list(): KeyInfo[] {
    return [...this.#keys.values()].map(({ info }) => ({ ...info, publicKey: Uint8Array.from(info.publicKey), scope: { ...info.scope } }));
  }

  signingKey(publicKeyHex: string): SigningKey | null {
    return this.#keys.get(publicKeyHex)?.signer ?? null;
  }

  /** The key's token label, for the CLI's listing. */
  labelOf(publicKeyHex: string): string | null {
    return this.#keys.get(publicKeyHex)?.label ?? null;
  }

  /** Closes this backend's sessions (the login ends with the application's last session). */
  close(): void {
    this.#closed = true;
    const conn = this.#conn;
    this.#conn = null;
    if (!conn || conn.generation !== this.#module.generation) return;
    for (const session of conn.sessions) {
      try {
        this.#module.p.C_CloseSession(session);
      } catch {
        // the token is gone already
      }
    }
    conn.sessions.clear();
  }

  /** Test seam: finalises the module under the backend, as a token reset or a crashed connector would. */
  simulateModuleReset(): void {
    this.#module.finalizeBehindTheBackend();
  }

  // ------------------------------------------------------------------ connection and sessions

  #connect(): Connection {
    if (this.#closed) throw new KeystoreError('the PKCS#11 backend is closed');
    if (this.#pinRefused !== null) throw new KeystoreError(this.#pinRefused);
    const m = this.#module;
    m.initialise();
    const { slot } = findSlot(m, this.#config);
    const conn: Connection = { generation: m.generation, slot, idle: [], open: 0, sessions: new Set(), handles: new Map() };
    this.#conn = conn;
    return conn;
  }

  #openSession(conn: Connection): Handle {
    if (this.#pinRefused !== null) throw new KeystoreError(this.#pinRefused);
    const { p } = this.#module;
    const l = pkcs11js();
    const session = p.C_OpenSession(conn.slot, l.CKF_SERIAL_SESSION | l.CKF_RW_SESSION);
    conn.open++;
    conn.sessions.add(session);
    try {
      p.C_Login(session, l.CKU_USER, this.#pin);
    } catch (e) {
      const code = codeOf(e);
      if (code !== CKR.USER_ALREADY_LOGGED_IN) {
        try {
          p.C_CloseSession(session);
        } catch {
          // nothing to do
        }
        conn.open--;
        conn.sessions.delete(session);
        if (code !== null && PIN_CODES.has(code)) {
          this.#pinRefused = `${tokenName(this.#config)} refused the PIN (${ckrName(code)}); the signer stops trying so the PIN is not locked: restart it with the right PIN`;
          throw new KeystoreError(this.#pinRefused);
        }
        throw e;
      }
    }
    return session;
  }

  #acquire(conn: Connection): Promise<Handle> {
    const idle = conn.idle.pop();
    if (idle) return Promise.resolve(idle);
    if (conn.open < this.#maxSessions) return Promise.resolve(this.#openSession(conn));
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  #release(conn: Connection, session: Handle): void {
    if (this.#closed && conn.generation === this.#module.generation) {
      try {
        this.#module.p.C_CloseSession(session);
      } catch {
        // already closed
      }
      return;
    }
    if (this.#conn !== conn || conn.generation !== this.#module.generation) return; // a reset dropped it
    const next = this.#waiting.shift();
    if (next) next.resolve(session);
    else conn.idle.push(session);
  }

  /** Drops a session that may still be busy (a timed-out call) without giving it to anyone. */
  #discard(conn: Connection, session: Handle): void {
    conn.open--;
    conn.sessions.delete(session);
    try {
      this.#module.p.C_CloseSession(session);
    } catch {
      // the module may be mid-call on it; it goes with the next reset
    }
  }

  /** A usable connection: the current one, or a new one after a reset of the module. */
  #live(): Connection {
    const conn = this.#conn;
    if (conn && conn.generation === this.#module.generation) return conn;
    return this.#connect();
  }

  async #reset(conn: Connection | null): Promise<void> {
    this.#conn = null;
    await this.#module.drained(this.#timeoutMs);
    this.#module.reset(conn?.generation ?? this.#module.generation);
    // Anyone waiting for a session of the dropped connection starts over (its retry reconnects).
    for (const w of this.#waiting.splice(0)) w.reject(Object.assign(new Error('the connection to the token was reset'), { code: CKR.SESSION_CLOSED }));
  }

  #readPublicKey(session: Handle, label: string): { curve: Curve; publicKey: Uint8Array } {
    const { p } = this.#module;
    const l = pkcs11js();
    const pubs = findObjects(p, session, [
      { type: l.CKA_CLASS, value: l.CKO_PUBLIC_KEY },
      { type: l.CKA_LABEL, value: label },
    ]);
    if (pubs.length === 0) throw new KeystoreError(`${tokenName(this.#config)} holds no public key labelled "${label}" (generate it with vault-signer keygen --backend pkcs11)`);
    if (pubs.length > 1) throw new KeystoreError(`${tokenName(this.#config)} holds ${pubs.length} public keys labelled "${label}"; labels must name one key`);
    const [type, params, point] = p.C_GetAttributeValue(session, pubs[0] as Handle, [{ type: l.CKA_KEY_TYPE }, { type: l.CKA_EC_PARAMS }, { type: l.CKA_EC_POINT }]);
    return publicKeyFromAttributes(ulong(type?.value), params?.value as Buffer, point?.value as Buffer, label);
  }

  /** The private key handle for `label`, found once per connection and checked against its public key. */
  #privateKey(conn: Connection, session: Handle, label: string, publicKey: Uint8Array): Handle {
    const cached = conn.handles.get(label);
    if (cached) return cached;
    const l = pkcs11js();
    // After a reset the label must still name the same key pair: a token swapped under the
    // signer (same label, same PIN, another key) is refused here, before anything is signed.
    const now = this.#readPublicKey(session, label);
    if (toHex(now.publicKey) !== toHex(publicKey)) throw new SignerRefusedError('key', `${tokenName(this.#config)} now holds another public key under "${label}"; refusing to sign with it`);
    const privs = findObjects(this.#module.p, session, [
      { type: l.CKA_CLASS, value: l.CKO_PRIVATE_KEY },
      { type: l.CKA_LABEL, value: label },
    ]);
    if (privs.length !== 1) throw new SignerRefusedError('key', `${tokenName(this.#config)} holds ${privs.length} private keys labelled "${label}"`);
    conn.handles.set(label, privs[0] as Handle);
    return privs[0] as Handle;
  }

  // ------------------------------------------------------------------ signing

  #signingKey(curve: Curve, publicKey: Uint8Array, label: string): SigningKey {
    const pub = Uint8Array.from(publicKey);
    const backend = this;
    return Object.freeze({
      curve,
      get publicKey() {
        return Uint8Array.from(pub);
      },
      async sign(message: Uint8Array): Promise<Uint8Array> {
        if (curve === 'secp256k1' && message.length !== 32) {
          throw new SignerRefusedError('key', 'secp256k1 keys sign a 32-byte digest');
        }
        const raw = await backend.#signWithRetry(curve, label, pub, message);
        if (curve === 'ed25519') {
          // Strict RFC 8032 verification (zip215 off): what the ledgers accept.
          if (raw.length === 64 && ed25519.verify(raw, message, pub, { zip215: false })) return raw;
          throw new SignerRefusedError('key', `${tokenName(backend.#config)} returned an ed25519 signature under "${label}" that does not verify against the key's public key; nothing was signed`);
        }
        const out = finishSecp256k1(raw, message, pub);
        if (out === null) throw new SignerRefusedError('key', `${tokenName(backend.#config)} returned a secp256k1 signature under "${label}" that does not verify against the key's public key; nothing was signed`);
        return out;
      },
    });
  }

  /** Signs once; on a reset-class error, reconnects (new sessions, login, key lookup) and signs once more. */
  async #signWithRetry(curve: Curve, label: string, publicKey: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 2; attempt++) {
      let conn: Connection | null = null;
      try {
        conn = this.#live();
        return await this.#signOnce(conn, curve, label, publicKey, message);
      } catch (e) {
        if (e instanceof SignerRefusedError) throw e;
        lastError = e;
        const code = codeOf(e);
        const resettable = code === null ? !(e instanceof KeystoreError) || /no PKCS#11/.test((e as Error).message) : RESET_CODES.has(code);
        if (this.#pinRefused !== null) break;
        if (!resettable) {
          throw new SignerRefusedError('key', `the PKCS#11 ${tokenName(this.#config)} refused to sign with "${label}" (${describe(e)}); no signature was made and no other key is used`);
        }
        try {
          await this.#reset(conn);
        } catch (resetError) {
          // The module cannot even be initialised again (the token or its connector is gone).
          lastError = resetError;
          break;
        }
      }
    }
    throw new SignerRefusedError('key', `the PKCS#11 ${tokenName(this.#config)} is unavailable (${describe(lastError)}); no signature was made and no other key is used`);
  }

  async #signOnce(conn: Connection, curve: Curve, label: string, publicKey: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SignerRefusedError('key', `${tokenName(this.#config)} did not sign within ${this.#timeoutMs} ms`)), this.#timeoutMs);
    });
    // Raced below and cleared in every path; never an unhandled rejection if a path returns first.
    timeout.catch(() => undefined);
    let session: Handle;
    const acquiring = this.#acquire(conn);
    try {
      session = await Promise.race([acquiring, timeout]);
    } catch (e) {
      clearTimeout(timer);
      // A session that arrives after the wait was given up goes back to the pool, not astray.
      acquiring.then((s) => this.#release(conn, s), () => undefined);
      throw e;
    }
    const { p } = this.#module;
    let done = false;
    try {
      const key = this.#privateKey(conn, session, label, publicKey);
      p.C_SignInit(session, { mechanism: curve === 'ed25519' ? CKM_EDDSA : CKM_ECDSA }, key);
      const module = this.#module;
      const call = p.C_SignAsync(session, Buffer.from(message), Buffer.alloc(curve === 'ed25519' ? 64 : 72));
      module.inflight++;
      const signing = call.finally(() => module.inflight--);
      const sig = await Promise.race([signing, timeout]);
      done = true;
      return Uint8Array.from(sig);
    } finally {
      clearTimeout(timer);
      // A session whose call timed out may still be busy inside the module: never hand it out again.
      if (done) this.#release(conn, session);
      else this.#discard(conn, session);
    }
  }
}

/** A short, PIN-free description of a PKCS#11 or load error for a refusal message. */
function describe(e: unknown): string {
  const code = codeOf(e);
  if (code !== null) return ckrName(code);
  if (e instanceof VaultError) return e.shortMessage;
  return e instanceof Error ? (e.message.split('\n')[0] ?? '').slice(0, 200) : 'unknown error';
}

// ------------------------------------------------------------------ key generation and import

/** What `keygen --backend pkcs11` and `import` report: the public facts and how the private key is held. */
export interface TokenKey {
  label: string;
  id: string;
  curve: Curve;
  publicKey: Uint8Array;
  /** The private key's CKA_SENSITIVE, CKA_EXTRACTABLE, CKA_LOCAL (generated on the token), CKA_NEVER_EXTRACTABLE. */
  attributes: { sensitive: boolean; extractable: boolean; local: boolean; never_extractable: boolean };
}

function withSession<T>(config: Pkcs11Config, pin: string, fn: (p: PKCS11, session: Handle) => T): T {
  const m = Module.of(config.module);
  m.initialise();
  const { slot } = findSlot(m, config);
  const l = pkcs11js();
  const session = m.p.C_OpenSession(slot, l.CKF_SERIAL_SESSION | l.CKF_RW_SESSION);
  try {
    try {
      m.p.C_Login(session, l.CKU_USER, pin);
    } catch (e) {
      if (codeOf(e) !== CKR.USER_ALREADY_LOGGED_IN) throw new KeystoreError(`cannot log in to ${tokenName(config)}: ${describe(e)}`);
    }
    return fn(m.p, session);
  } finally {
    try {
      m.p.C_CloseSession(session);
    } catch {
      // nothing to do
    }
  }
}

function labelTaken(p: PKCS11, session: Handle, label: string): boolean {
  return findObjects(p, session, [{ type: pkcs11js().CKA_LABEL, value: label }]).length > 0;
}

/** Reads a private key's protection attributes back from the token. */
export function privateKeyAttributes(config: Pkcs11Config, pin: string, label: string): TokenKey['attributes'] {
  return withSession(config, pin, (p, session) => readAttributes(p, session, label));
}

function readAttributes(p: PKCS11, session: Handle, label: string): TokenKey['attributes'] {
  const l = pkcs11js();
  const [priv] = findObjects(p, session, [
    { type: l.CKA_CLASS, value: l.CKO_PRIVATE_KEY },
    { type: l.CKA_LABEL, value: label },
  ]);
  if (!priv) throw new KeystoreError(`no private key labelled "${label}"`);
  const [sensitive, extractable, local, never] = p.C_GetAttributeValue(session, priv, [{ type: l.CKA_SENSITIVE }, { type: l.CKA_EXTRACTABLE }, { type: l.CKA_LOCAL }, { type: l.CKA_NEVER_EXTRACTABLE }]);
  return { sensitive: bool(sensitive?.value), extractable: bool(extractable?.value), local: bool(local?.value), never_extractable: bool(never?.value) };
}

function tokenKey(p: PKCS11, session: Handle, label: string): TokenKey {
  const l = pkcs11js();
  const [pub] = findObjects(p, session, [
    { type: l.CKA_CLASS, value: l.CKO_PUBLIC_KEY },
    { type: l.CKA_LABEL, value: label },
  ]);
  if (!pub) throw new KeystoreError(`no public key labelled "${label}"`);
  const [type, params, point] = p.C_GetAttributeValue(session, pub, [{ type: l.CKA_KEY_TYPE }, { type: l.CKA_EC_PARAMS }, { type: l.CKA_EC_POINT }]);
  const { curve, publicKey } = publicKeyFromAttributes(ulong(type?.value), params?.value as Buffer, point?.value as Buffer, label);
  return { label, id: keyIdOf(publicKey), curve, publicKey, attributes: readAttributes(p, session, label) };
}

/**
 * Generates a key pair inside the token under `label`: the private key sensitive, not extractable,
 * usable only to sign. The secret never exists outside the token.
 *
 * @example
 * const key = generateTokenKey(config, readPin(config), { curve: 'secp256k1', label: 'signer-a-evm' })
 */
export function generateTokenKey(config: Pkcs11Config, pin: string, options: { curve: Curve; label: string }): TokenKey {
  return withSession(config, pin, (p, session) => {
    if (labelTaken(p, session, options.label)) throw new KeystoreError(`${tokenName(config)} already holds an object labelled "${options.label}"`);
    const l = pkcs11js();
    const ed = options.curve === 'ed25519';
    const common = [
      { type: l.CKA_TOKEN, value: true },
      { type: l.CKA_LABEL, value: options.label },
    ];
    p.C_GenerateKeyPair(
      session,
      { mechanism: ed ? CKM_EC_EDWARDS_KEY_PAIR_GEN : CKM_EC_KEY_PAIR_GEN },
      [...common, { type: l.CKA_EC_PARAMS, value: Buffer.from(ed ? OID_ED25519 : OID_SECP256K1, 'hex') }, { type: l.CKA_VERIFY, value: true }, { type: l.CKA_PRIVATE, value: false }],
      [
        ...common,
        { type: l.CKA_PRIVATE, value: true },
        { type: l.CKA_SENSITIVE, value: true },
        { type: l.CKA_EXTRACTABLE, value: false },
        { type: l.CKA_SIGN, value: true },
        { type: l.CKA_DECRYPT, value: false },
        { type: l.CKA_DERIVE, value: false },
        { type: l.CKA_UNWRAP, value: false },
      ],
    );
    return tokenKey(p, session, options.label);
  });
}

/** The refusal of an import nobody asked for explicitly. */
export function refuseImport(): never {
  throw new KeystoreError('importing a software key into a token is refused unless asked for explicitly (--allow-import): the key existed outside the token, so a copy may exist; generate a new key in the token instead (keygen --backend pkcs11)');
}

/**
 * Writes a software secret into the token under `label` (sensitive, not extractable from then on).
 * The key existed outside the token, so a copy may exist anywhere it was: the caller must have
 * been asked explicitly (`vault-signer import --allow-import`); the token records it as not
 * generated there (CKA_LOCAL false), and `keys` shows that.
 */
export function importTokenKey(config: Pkcs11Config, pin: string, options: { curve: Curve; label: string; secret: Uint8Array; publicKey: Uint8Array; allowImport: boolean }): TokenKey {
  if (!options.allowImport) refuseImport();
  return withSession(config, pin, (p, session) => {
    if (labelTaken(p, session, options.label)) throw new KeystoreError(`${tokenName(config)} already holds an object labelled "${options.label}"`);
    const l = pkcs11js();
    const ed = options.curve === 'ed25519';
    const params = Buffer.from(ed ? OID_ED25519 : OID_SECP256K1, 'hex');
    const uncompressed = ed ? options.publicKey : secp256k1.Point.fromBytes(options.publicKey).toBytes(false);
    const point = Buffer.concat([Buffer.from([0x04, uncompressed.length]), Buffer.from(uncompressed)]);
    const keyType = ed ? CKK_EC_EDWARDS : CKK_EC;
    const common = [
      { type: l.CKA_TOKEN, value: true },
      { type: l.CKA_LABEL, value: options.label },
      { type: l.CKA_KEY_TYPE, value: keyType },
      { type: l.CKA_EC_PARAMS, value: params },
    ];
    p.C_CreateObject(session, [...common, { type: l.CKA_CLASS, value: l.CKO_PUBLIC_KEY }, { type: l.CKA_EC_POINT, value: point }, { type: l.CKA_VERIFY, value: true }, { type: l.CKA_PRIVATE, value: false }]);
    const value = Buffer.from(options.secret);
    try {
      p.C_CreateObject(session, [
        ...common,
        { type: l.CKA_CLASS, value: l.CKO_PRIVATE_KEY },
        { type: l.CKA_VALUE, value },
        { type: l.CKA_PRIVATE, value: true },
        { type: l.CKA_SENSITIVE, value: true },
        { type: l.CKA_EXTRACTABLE, value: false },
        { type: l.CKA_SIGN, value: true },
      ]);
    } finally {
      value.fill(0);
    }
    return tokenKey(p, session, options.label);
  });
}

/** The public facts of labelled keys in a token (what `vault-signer keys --pkcs11` prints). */
export function listTokenKeys(config: Pkcs11Config, pin: string, labels: readonly string[] = config.keys.map((k) => k.label)): TokenKey[] {
  return withSession(config, pin, (p, session) => labels.map((label) => tokenKey(p, session, label)));
}

/** `scope` of a configured label, for the CLI. */
export function configuredScope(config: Pkcs11Config, label: string): KeyScope {
  return config.keys.find((k) => k.label === label)?.scope ?? {};
}
