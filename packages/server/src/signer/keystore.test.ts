import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { fromHex, toHex } from '@vault/sdk';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKey, generateSecret, KeyFileSchema, KeystoreError, loadOrCreateReceiptKey, openKey, scopeAllows, sealKey, softwareSigningKey, SoftwareKeystore } from './keystore.js';

const KDF = { N: 2 ** 10, r: 8, p: 1 };
const PASS = 'a long enough passphrase';
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'keystore-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('software keystore', () => {
  it('round-trips an encrypted key; the file holds no plaintext secret; files are 0600 and the directory 0700', async () => {
    const secret = generateSecret('ed25519');
    const keys = join(dir, 'keys');
    const info = await createKey(keys, { curve: 'ed25519', passphrase: PASS, kdf: KDF, secret, scope: { wallets: ['b', 'a', 'a'] } });
    const text = readFileSync(info.path, 'utf8');
    expect(text).not.toContain(toHex(secret));
    const file = KeyFileSchema.parse(JSON.parse(text));
    expect(file.scope).toEqual({ wallets: ['a', 'b'] });
    expect(file.cipher.name).toBe('xchacha20poly1305');
    expect(file.kdf.name).toBe('scrypt');
    expect(statSync(info.path).mode & 0o777).toBe(0o600);
    expect(statSync(keys).mode & 0o777).toBe(0o700);
    expect(toHex(await openKey(file, PASS))).toBe(toHex(secret));
    const store = await SoftwareKeystore.unlock(keys, PASS);
    expect(store.list().map((k) => [k.id, k.unlocked])).toEqual([[info.id, true]]);
    const key = store.signingKey(info.publicKeyHex);
    const msg = new Uint8Array([1, 2, 3]);
    const sig = await key!.sign(msg);
    expect(ed25519.verify(sig, msg, fromHex(info.publicKeyHex, 'pk', 32))).toBe(true);
    // Nothing the backend hands out carries the secret.
    expect(JSON.stringify(store.list())).not.toContain(toHex(secret));
    expect(Object.keys(key!)).toEqual(['curve', 'publicKey', 'sign']);
  });

  it('a wrong passphrase does not unlock (and unlock refuses a keystore where nothing opens)', async () => {
    const info = await createKey(dir, { curve: 'ed25519', passphrase: PASS, kdf: KDF });
    const file = KeyFileSchema.parse(JSON.parse(readFileSync(info.path, 'utf8')));
    await expect(openKey(file, 'the wrong passphrase')).rejects.toBeInstanceOf(KeystoreError);
    await expect(SoftwareKeystore.unlock(dir, 'the wrong passphrase')).rejects.toThrow(/no key .* unlocks/);
  });

  it('a tampered header (swapped public key or widened scope) fails authentication', async () => {
    const info = await createKey(dir, { curve: 'ed25519', passphrase: PASS, kdf: KDF, scope: { wallets: ['a'] } });
    const file = KeyFileSchema.parse(JSON.parse(readFileSync(info.path, 'utf8')));
    await expect(openKey({ ...file, scope: {} }, PASS)).rejects.toThrow(/wrong passphrase or tampered/);
    const other = toHex(ed25519.getPublicKey(generateSecret('ed25519')));
    await expect(openKey({ ...file, public_key: other }, PASS)).rejects.toThrow(/tampered/);
  });

  it('refuses key files and directories others can read', async () => {
    const info = await createKey(dir, { curve: 'ed25519', passphrase: PASS, kdf: KDF });
    chmodSync(info.path, 0o644);
    await expect(SoftwareKeystore.unlock(dir, PASS)).rejects.toThrow(/chmod 600/);
    chmodSync(info.path, 0o600);
    chmodSync(dir, 0o755);
    await expect(SoftwareKeystore.unlock(dir, PASS)).rejects.toThrow(/chmod 700/);
  });

  it('refuses a downgraded KDF cost, a short passphrase, a malformed file and an empty keystore', async () => {
    const secret = generateSecret('ed25519');
    const file = await sealKey(secret, { curve: 'ed25519', passphrase: PASS, kdf: KDF });
    expect(KeyFileSchema.safeParse({ ...file, kdf: { ...file.kdf, N: 2 } }).success).toBe(false);
    await expect(sealKey(secret, { curve: 'ed25519', passphrase: 'short', kdf: KDF })).rejects.toThrow(/at least 8/);
    writeFileSync(join(dir, 'junk.json'), '{"format":"other"}', { mode: 0o600 });
    await expect(SoftwareKeystore.unlock(dir, PASS)).rejects.toThrow(/not a vault-signer-key/);
    rmSync(join(dir, 'junk.json'));
    await expect(SoftwareKeystore.unlock(dir, PASS)).rejects.toThrow(/holds no keys/);
    await expect(SoftwareKeystore.unlock(join(dir, 'missing'), PASS)).rejects.toThrow(/does not exist/);
  });

  it('secp256k1 keys sign a 32-byte digest: 65 bytes r||s||recovery, low-s, recoverable', async () => {
    const secret = generateSecret('secp256k1');
    const key = softwareSigningKey('secp256k1', secret);
    expect(key.publicKey.length).toBe(33);
    for (let i = 0; i < 20; i++) {
      const digest = new Uint8Array(32).fill(i);
      const sig = await key.sign(digest);
      expect(sig.length).toBe(65);
      const rs = sig.subarray(0, 64);
      const parsed = secp256k1.Signature.fromBytes(rs, 'compact');
      expect(parsed.hasHighS()).toBe(false);
      expect(secp256k1.verify(rs, digest, key.publicKey, { prehash: false })).toBe(true);
      const recovered = parsed.addRecoveryBit(sig[64] as number).recoverPublicKey(digest).toBytes(true);
      expect(toHex(recovered)).toBe(toHex(key.publicKey));
    }
    await expect(key.sign(new Uint8Array(31))).rejects.toThrow(/32-byte digest/);
  });

  it('ed25519 signatures from node:crypto equal the RFC 8032 (noble) ones', async () => {
    const secret = generateSecret('ed25519');
    const key = softwareSigningKey('ed25519', secret);
    const msg = new TextEncoder().encode('vault');
    expect(toHex(await key.sign(msg))).toBe(toHex(ed25519.sign(msg, secret)));
  });

  it('keeps keys sealed under another passphrase listed but locked', async () => {
    await createKey(dir, { curve: 'ed25519', passphrase: PASS, kdf: KDF });
    const locked = await createKey(dir, { curve: 'secp256k1', passphrase: 'another passphrase', kdf: KDF });
    const store = await SoftwareKeystore.unlock(dir, PASS);
    expect(store.list().find((k) => k.id === locked.id)?.unlocked).toBe(false);
    expect(store.signingKey(locked.publicKeyHex)).toBeNull();
    await expect(createKey(dir, { curve: 'secp256k1', passphrase: PASS, kdf: KDF, secret: new Uint8Array(32).fill(5) })).resolves.toBeDefined();
    await expect(createKey(dir, { curve: 'secp256k1', passphrase: PASS, kdf: KDF, secret: new Uint8Array(32).fill(5) })).rejects.toThrow(/already exists/);
  });

  it('creates the receipt key once, encrypted, and reopens it', async () => {
    const a = await loadOrCreateReceiptKey(join(dir, 'state'), PASS, KDF);
    const b = await loadOrCreateReceiptKey(join(dir, 'state'), PASS, KDF);
    expect(toHex(a)).toBe(toHex(b));
    expect(readdirSync(join(dir, 'state'))).toEqual(['receipt-key.json']);
    expect(statSync(join(dir, 'state', 'receipt-key.json')).mode & 0o777).toBe(0o600);
    await expect(loadOrCreateReceiptKey(join(dir, 'state'), 'the wrong passphrase', KDF)).rejects.toBeInstanceOf(KeystoreError);
  });

  it('scopes: absent lists allow anything, present lists must name the wallet and the chain', () => {
    expect(scopeAllows({}, 'w', 'c')).toBe(true);
    expect(scopeAllows({ wallets: ['w'] }, 'w', 'c')).toBe(true);
    expect(scopeAllows({ wallets: ['x'] }, 'w', 'c')).toBe(false);
    expect(scopeAllows({ chains: ['c'] }, 'w', 'c')).toBe(true);
    expect(scopeAllows({ chains: ['d'] }, 'w', 'c')).toBe(false);
  });
});
