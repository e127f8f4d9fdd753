/**
 * @module signer/keystore
 * Where the signer's keys live. A `KeyBackend` lists public keys with their scope and hands out
 * `SigningKey`s that sign without ever exposing the secret; the software backend keeps each key in
 * its own versioned JSON file, encrypted at rest with a passphrase-derived key (scrypt, then
 * XChaCha20-Poly1305 with a random salt and nonce; the header is bound as associated data so a
 * swapped public key, curve or scope fails to decrypt). The PKCS#11 backend (`./pkcs11.ts`: a
 * YubiHSM 2, a cloud HSM, SoftHSM2) implements the same interface.
 */
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { scryptAsync } from '@noble/hashes/scrypt.js';
import { canonicalize, fromHex, sha256Hex, toHex, ValidationError, VaultError, ErrorCode, type Curve, type SigningKey } from '@vault/sdk';
import { randomBytes, createPrivateKey, sign as nodeSign } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../http/files.js';

/** Which wallets and chains a key may sign for. An absent list means "any". */
export interface KeyScope {
  wallets?: string[] | undefined;
  chains?: string[] | undefined;
}

export const KeyScopeSchema = z.strictObject({
  wallets: z.array(z.string().min(1).max(128)).max(1024).optional(),
  chains: z.array(z.string().min(1).max(64)).max(256).optional(),
});

/** True when `scope` lets a key sign for `wallet` on `chain`. */
export function scopeAllows(scope: KeyScope, wallet: string, chain: string): boolean {
  return (scope.wallets === undefined || scope.wallets.includes(wallet)) && (scope.chains === undefined || scope.chains.includes(chain));
}

/** Public facts about a held key: never the secret. */
export interface KeyInfo {
  /** `key_` + the first 16 hex digits of sha256(public key). */
  id: string;
  curve: Curve;
  publicKey: Uint8Array;
  publicKeyHex: string;
  scope: KeyScope;
  /** False when the key is listed but could not be unlocked (wrong passphrase for this file). */
  unlocked: boolean;
}

/** A place keys live. The signer only ever asks it to list and to sign. */
export interface KeyBackend {
  /** What SignResponse.backend reports: `software`, `yubihsm`, or `pkcs11` for any other PKCS#11 token. */
  readonly name: 'software' | 'yubihsm' | 'pkcs11';
  list(): KeyInfo[];
  /** The signing handle of a key, or null when it is not held or is locked. */
  signingKey(publicKeyHex: string): SigningKey | null;
}

/** A key file is unusable: wrong passphrase, tampered header or a corrupt file. */
export class KeystoreError extends VaultError {
  override name = 'KeystoreError';
  constructor(message: string, options: { cause?: unknown; path?: string } = {}) {
    super(ErrorCode.Internal, message, { cause: options.cause, data: options.path ? { path: options.path } : null });
  }
}

/** scrypt cost. The default (N = 2^17, r = 8) takes about a second per key on a laptop. */
export interface KdfParams {
  N: number;
  r: number;
  p: number;
}
export const DEFAULT_KDF: KdfParams = { N: 2 ** 17, r: 8, p: 1 };
/** The weakest parameters a file may declare; lower costs are refused as a downgrade. */
const MIN_KDF_N = 2 ** 10;

const hex = (bytes?: number) => z.string().regex(bytes ? new RegExp(`^[0-9a-f]{${bytes * 2}}$`) : /^[0-9a-f]+$/);

export const KeyFileSchema = z.strictObject({
  format: z.literal('vault-signer-key'),
  version: z.literal(1),
  id: z.string().regex(/^key_[0-9a-f]{16}$/),
  curve: z.enum(['ed25519', 'secp256k1']),
  public_key: hex(),
  purpose: z.enum(['signing', 'receipts']),
  scope: KeyScopeSchema,
  created_at: z.int().min(0),
  kdf: z.strictObject({
    name: z.literal('scrypt'),
    N: z.int().min(MIN_KDF_N).max(2 ** 22).refine((n) => (n & (n - 1)) === 0, 'N must be a power of two'),
    r: z.int().min(1).max(32),
    p: z.int().min(1).max(16),
    salt: hex(16),
  }),
  cipher: z.strictObject({
    name: z.literal('xchacha20poly1305'),
    nonce: hex(24),
    ciphertext: hex(),
  }),
});
export type KeyFile = z.infer<typeof KeyFileSchema>;

/** The fields the AEAD authenticates besides the ciphertext. */
function associatedData(f: Omit<KeyFile, 'cipher'> & { cipher?: unknown }): Uint8Array {
  const { format, version, id, curve, public_key, purpose, scope, created_at, kdf } = f;
  return new TextEncoder().encode(canonicalize({ format, version, id, curve, public_key, purpose, scope, created_at, kdf }));
}

async function deriveKey(passphrase: string, salt: Uint8Array, kdf: KdfParams): Promise<Uint8Array> {
  return scryptAsync(passphrase.normalize('NFKC'), salt, { N: kdf.N, r: kdf.r, p: kdf.p, dkLen: 32, maxmem: 2 ** 31 });
}

export function keyIdOf(publicKey: Uint8Array): string {
  return `key_${sha256Hex(publicKey).slice(0, 16)}`;
}

/** The public key of a secret key on `curve` (secp256k1 compressed, 33 bytes). */
export function publicKeyOf(curve: Curve, secret: Uint8Array): Uint8Array {
  return curve === 'ed25519' ? ed25519.getPublicKey(secret) : secp256k1.getPublicKey(secret, true);
}

/** Encrypts a secret key into a key file (not yet written). */
export async function sealKey(
  secret: Uint8Array,
  options: { curve: Curve; passphrase: string; scope?: KeyScope; purpose?: 'signing' | 'receipts'; kdf?: KdfParams; now?: number },
): Promise<KeyFile> {
  if (options.passphrase.length < 8) {
    throw new ValidationError('passphrase', [{ path: '', message: 'passphrase must be at least 8 characters' }]);
  }
  const kdf = options.kdf ?? DEFAULT_KDF;
  const publicKey = publicKeyOf(options.curve, secret);
  const salt = randomBytes(16);
  const nonce = randomBytes(24);
  const header = {
    format: 'vault-signer-key' as const,
    version: 1 as const,
    id: keyIdOf(publicKey),
    curve: options.curve,
    public_key: toHex(publicKey),
    purpose: options.purpose ?? 'signing',
    scope: cleanScope(options.scope ?? {}),
    created_at: options.now ?? Math.floor(Date.now() / 1000),
    kdf: { name: 'scrypt' as const, N: kdf.N, r: kdf.r, p: kdf.p, salt: toHex(salt) },
  };
  const key = await deriveKey(options.passphrase, salt, kdf);
  const ciphertext = xchacha20poly1305(key, nonce, associatedData(header)).encrypt(secret);
  key.fill(0);
  return KeyFileSchema.parse({ ...header, cipher: { name: 'xchacha20poly1305', nonce: toHex(nonce), ciphertext: toHex(ciphertext) } });
}

/** Decrypts a key file; a wrong passphrase or any tampering is a KeystoreError. */
export async function openKey(file: KeyFile, passphrase: string): Promise<Uint8Array> {
  const key = await deriveKey(passphrase, fromHex(file.kdf.salt, 'kdf.salt', 16), file.kdf);
  let secret: Uint8Array;
  try {
    secret = xchacha20poly1305(key, fromHex(file.cipher.nonce, 'cipher.nonce', 24), associatedData(file)).decrypt(fromHex(file.cipher.ciphertext, 'cipher.ciphertext'));
  } catch (cause) {
    throw new KeystoreError(`cannot unlock ${file.id}: wrong passphrase or tampered key file`, { cause });
  } finally {
    key.fill(0);
  }
  const expected = publicKeyOf(file.curve, secret);
  if (toHex(expected) !== file.public_key) {
    secret.fill(0);
    throw new KeystoreError(`key file ${file.id}: the secret does not match the public key`);
  }
  return secret;
}

function cleanScope(scope: KeyScope): KeyScope {
  const out: KeyScope = {};
  if (scope.wallets !== undefined) out.wallets = [...new Set(scope.wallets)].sort();
  if (scope.chains !== undefined) out.chains = [...new Set(scope.chains)].sort();
  return out;
}

/**
 * A SigningKey over a secret that stays in this closure. ed25519 signs the message (node:crypto,
 * byte-identical to RFC 8032 / noble); secp256k1 signs a 32-byte digest, low-s, returning
 * `r || s || recovery` (65 bytes).
 */
export function softwareSigningKey(curve: Curve, secret: Uint8Array): SigningKey {
  const sk = Uint8Array.from(secret);
  const publicKey = publicKeyOf(curve, sk);
  if (curve === 'ed25519') {
    // PKCS#8 wrapping of a raw ed25519 seed (RFC 8410).
    const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(sk)]);
    const keyObject = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    sk.fill(0);
    return Object.freeze({
      curve,
      get publicKey() {
        return Uint8Array.from(publicKey);
      },
      sign: async (message: Uint8Array) => new Uint8Array(nodeSign(null, message, keyObject)),
    });
  }
  return Object.freeze({
    curve,
    get publicKey() {
      return Uint8Array.from(publicKey);
    },
    async sign(message: Uint8Array) {
      if (message.length !== 32) {
        throw new ValidationError('message', [{ path: '', message: 'secp256k1 keys sign a 32-byte digest' }]);
      }
      // noble's "recovered" format is recovery || r || s; the SigningKey contract is r || s || recovery.
      const rec = secp256k1.sign(message, sk, { prehash: false, lowS: true, format: 'recovered' });
      const out = new Uint8Array(65);
      out.set(rec.subarray(1, 65), 0);
      out[64] = rec[0] as number;
      return out;
    },
  });
}

/** A fresh secret key for `curve` from the platform CSPRNG. */
export function generateSecret(curve: Curve): Uint8Array {
  return curve === 'ed25519' ? ed25519.utils.randomSecretKey() : secp256k1.utils.randomSecretKey();
}

function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') chmodSync(dir, 0o700);
}

/**
 * Creates a key in `dir` (0700) as `<id>.json` (0600).
 *
 * @example
 * const info = await createKey('/var/lib/vault/keys', { curve: 'ed25519', passphrase, scope: { wallets: ['treasury'] } })
 */
export async function createKey(
  dir: string,
  options: { curve: Curve; passphrase: string; scope?: KeyScope; kdf?: KdfParams; secret?: Uint8Array },
): Promise<{ id: string; curve: Curve; publicKeyHex: string; path: string; scope: KeyScope }> {
  ensureDir(dir);
  const secret = options.secret ? Uint8Array.from(options.secret) : generateSecret(options.curve);
  const file = await sealKey(secret, options);
  secret.fill(0);
  const path = join(dir, `${file.id}.json`);
  if (existsSync(path)) throw new KeystoreError(`key ${file.id} already exists in ${dir}`, { path });
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, 0o600);
  return { id: file.id, curve: file.curve, publicKeyHex: file.public_key, path, scope: file.scope };
}

function readKeyFile(path: string): KeyFile {
  const st = statSync(path);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    throw new KeystoreError(`${path} is readable by group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`, { path });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new KeystoreError(`${path} is not JSON`, { cause, path });
  }
  const parsed = KeyFileSchema.safeParse(raw);
  if (!parsed.success) throw new KeystoreError(`${path} is not a vault-signer-key v1 file: ${parsed.error.issues[0]?.message ?? ''}`, { path });
  return parsed.data;
}

/**
 * The public facts of every signing key file in `dir`, read without the passphrase: the public key,
 * curve and scope sit in each file's header (authenticated, not encrypted), so nothing is unlocked
 * and no secret is decrypted. `unlocked` is false for all of them.
 *
 * @example
 * for (const k of listKeyFiles('/var/lib/vault/keys')) console.log(k.id, k.publicKeyHex)
 */
export function listKeyFiles(dir: string): KeyInfo[] {
  if (!existsSync(dir)) throw new KeystoreError(`keystore ${dir} does not exist`, { path: dir });
  const infos: KeyInfo[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    const file = readKeyFile(join(dir, name));
    if (file.purpose !== 'signing') continue;
    infos.push({ id: file.id, curve: file.curve, publicKey: fromHex(file.public_key, 'public_key'), publicKeyHex: file.public_key, scope: file.scope, unlocked: false });
  }
  return infos;
}

/**
 * The software backend: every `*.json` key file of a directory, unlocked with one passphrase.
 * Keys that do not open with it stay listed as locked (the signer refuses them with `key`).
 */
export class SoftwareKeystore implements KeyBackend {
  readonly name = 'software' as const;
  readonly #infos: KeyInfo[];
  readonly #keys: Map<string, SigningKey>;

  private constructor(infos: KeyInfo[], keys: Map<string, SigningKey>) {
    this.#infos = infos;
    this.#keys = keys;
  }

  /**
   * Opens and unlocks a keystore directory. Throws when no signing key unlocks (a wrong
   * passphrase for every key is an operator error, not a state to serve in).
   *
   * @example
   * const keys = await SoftwareKeystore.unlock('/var/lib/vault/keys', process.env.VAULT_SIGNER_PASSPHRASE!)
   */
  static async unlock(dir: string, passphrase: string, options: { allowEmpty?: boolean } = {}): Promise<SoftwareKeystore> {
    if (!existsSync(dir)) throw new KeystoreError(`keystore ${dir} does not exist`, { path: dir });
    const st = statSync(dir);
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      throw new KeystoreError(`keystore ${dir} is accessible by group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 700 it`, { path: dir });
    }
    const infos: KeyInfo[] = [];
    const keys = new Map<string, SigningKey>();
    for (const name of readdirSync(dir).sort()) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const file = readKeyFile(join(dir, name));
      if (file.purpose !== 'signing') continue;
      const publicKey = fromHex(file.public_key, 'public_key');
      const info: KeyInfo = { id: file.id, curve: file.curve, publicKey, publicKeyHex: file.public_key, scope: file.scope, unlocked: false };
      try {
        const secret = await openKey(file, passphrase);
        keys.set(file.public_key, softwareSigningKey(file.curve, secret));
        secret.fill(0);
        info.unlocked = true;
      } catch (e) {
        if (!(e instanceof KeystoreError)) throw e;
      }
      infos.push(info);
    }
    if (keys.size === 0 && !options.allowEmpty) {
      throw new KeystoreError(infos.length === 0 ? `keystore ${dir} holds no keys (run vault-signer keygen)` : `no key in ${dir} unlocks with this passphrase`, { path: dir });
    }
    return new SoftwareKeystore(infos, keys);
  }

  list(): KeyInfo[] {
    return this.#infos.map((i) => ({ ...i, publicKey: Uint8Array.from(i.publicKey), scope: { ...i.scope } }));
  }

  signingKey(publicKeyHex: string): SigningKey | null {
    return this.#keys.get(publicKeyHex) ?? null;
  }
}

/**
 * The receipt key (ed25519) of a state directory, encrypted like a signing key, created on first
 * start. Its public key is what an auditor verifies /receipts with.
 */
export async function loadOrCreateReceiptKey(stateDir: string, passphrase: string, kdf: KdfParams = DEFAULT_KDF): Promise<Uint8Array> {
  ensureDir(stateDir);
  const path = join(stateDir, 'receipt-key.json');
  if (!existsSync(path)) {
    const secret = ed25519.utils.randomSecretKey();
    const file = await sealKey(secret, { curve: 'ed25519', passphrase, purpose: 'receipts', kdf });
    writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, 0o600);
    return secret;
  }
  const file = readKeyFile(path);
  if (file.purpose !== 'receipts') throw new KeystoreError(`${path} is not a receipt key`, { path });
  return openKey(file, passphrase);
}
