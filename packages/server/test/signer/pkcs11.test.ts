/**
 * The PKCS#11 key backend against a real SoftHSM2 token that this file initialises (SOFTHSM2_CONF
 * in a temp dir, `softhsm2-util --init-token`). SoftHSM2 is installed when missing (root + apt-get)
 * or the file fails saying what to run: never skipped.
 *
 * Covers: keys generated in the token and held sensitive and non-extractable (read back from the
 * token); both curves' signatures (ed25519 verified, secp256k1 low S with a recovery id that
 * recovers the key); a token that returns a wrong signature; a token pulled mid-run and put back;
 * a module finalised under the signer; a wrong PIN; the PIN kept out of every message and log;
 * import only when asked; and the signer's own checks (verifyAndSign, HTTP) on top of the backend.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { createSignerClient, toHex } from '@vault/sdk';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSoftHsm, initSoftToken, type SoftToken } from '../../../../scripts/softhsm.mjs';
import { createKey, generateSecret, publicKeyOf } from '../../src/signer/keystore.js';
import {
  backendNameOf,
  finishSecp256k1,
  generateTokenKey,
  importTokenKey,
  Pkcs11Backend,
  Pkcs11ConfigSchema,
  privateKeyAttributes,
  readPin,
  type Pkcs11Config,
} from '../../src/signer/pkcs11.js';
import { verifyAndSign } from '../../src/signer/sign.js';
import { bundleClis, SERVER_PKG } from '../cli-bundle.js';
import { makeWorld, PASSPHRASE, serveWorld, TEST_KDF } from './helpers.js';

const PIN = 'pin-7c1f9a2e-only-in-env';
let token: SoftToken;
let config: Pkcs11Config;
const backends: Pkcs11Backend[] = [];

const configFor = (labels: string[], extra: Partial<Pkcs11Config> = {}): Pkcs11Config =>
  Pkcs11ConfigSchema.parse({ format: 'vault-signer-pkcs11', version: 1, module: token.module, token_label: 'vault-test', pin_env: 'VAULT_TEST_PKCS11_PIN', keys: labels.map((label) => ({ label })), ...extra });

async function open(labels: string[], extra: Partial<Pkcs11Config> = {}): Promise<Pkcs11Backend> {
  const b = await Pkcs11Backend.open(configFor(labels, extra), { pin: PIN });
  backends.push(b);
  return b;
}

beforeAll(() => {
  ensureSoftHsm();
  token = initSoftToken({ label: 'vault-test', pin: PIN });
  // SoftHSM reads its configuration when the module is initialised: before any backend opens.
  process.env['SOFTHSM2_CONF'] = token.conf;
  config = configFor(['ed-1', 'k1-1']);
  generateTokenKey(config, PIN, { curve: 'ed25519', label: 'ed-1' });
  generateTokenKey(config, PIN, { curve: 'secp256k1', label: 'k1-1' });
});
afterAll(() => {
  for (const b of backends) b.close();
  rmSync(token.dir, { recursive: true, force: true });
});

describe('keys generated in the token', () => {
  it('are sensitive, not extractable, generated there (CKA_LOCAL) and never extractable, as the token reports them', () => {
    for (const label of ['ed-1', 'k1-1']) {
      expect(privateKeyAttributes(config, PIN, label)).toEqual({ sensitive: true, extractable: false, local: true, never_extractable: true });
    }
  });

  it('attack: the secret cannot be read out of the token (CKA_VALUE is refused as sensitive)', () => {
    const p11 = createRequire(import.meta.url)('pkcs11js') as typeof import('pkcs11js');
    const m = new p11.PKCS11();
    m.load(token.module);
    // Already initialised by the backend in this process: the same library state is shared.
    try {
      m.C_Initialize();
    } catch (e) {
      expect((e as { code: number }).code).toBe(0x191);
    }
    const slot = m.C_GetSlotList(true).find((s) => m.C_GetTokenInfo(s).label.trim() === 'vault-test') as Buffer;
    const session = m.C_OpenSession(slot, p11.CKF_SERIAL_SESSION);
    try {
      m.C_Login(session, p11.CKU_USER, PIN);
    } catch (e) {
      expect((e as { code: number }).code).toBe(0x100); // already logged in (shared login state)
    }
    m.C_FindObjectsInit(session, [{ type: p11.CKA_CLASS, value: p11.CKO_PRIVATE_KEY }, { type: p11.CKA_LABEL, value: 'ed-1' }]);
    const [priv] = m.C_FindObjects(session, 1);
    m.C_FindObjectsFinal(session);
    expect(() => m.C_GetAttributeValue(session, priv as Buffer, [{ type: p11.CKA_VALUE }])).toThrow(/CKR_ATTRIBUTE_SENSITIVE/);
    m.C_CloseSession(session);
  });

  it('a label already in the token is refused, so keygen never shadows a key', () => {
    expect(() => generateTokenKey(config, PIN, { curve: 'ed25519', label: 'ed-1' })).toThrow(/already holds an object labelled "ed-1"/);
  });
});

describe('signing through the token', () => {
  it('ed25519 (CKM_EDDSA) signs the message and the signature verifies with @noble/curves', async () => {
    const b = await open(['ed-1', 'k1-1']);
    expect(b.name).toBe('pkcs11');
    const [ed] = b.list().filter((k) => k.curve === 'ed25519');
    const key = b.signingKey(ed!.publicKeyHex)!;
    for (const message of [new Uint8Array([0]), new TextEncoder().encode('a multisig payload'), new Uint8Array(1000).fill(7)]) {
      const sig = await key.sign(message);
      expect(sig.length).toBe(64);
      expect(ed25519.verify(sig, message, key.publicKey, { zip215: false })).toBe(true);
    }
  });

  it('secp256k1 (CKM_ECDSA over the digest) returns r || s || recovery, always low S, recovering the key', async () => {
    const b = await open(['ed-1', 'k1-1']);
    const [k1] = b.list().filter((k) => k.curve === 'secp256k1');
    const key = b.signingKey(k1!.publicKeyHex)!;
    expect(key.publicKey.length).toBe(33);
    const half = secp256k1.Point.CURVE().n >> 1n;
    const bits = new Set<number>();
    // The token returns high S about half the time: 24 digests see both halves with near certainty.
    for (let i = 0; i < 24; i++) {
      const digest = sha256(new TextEncoder().encode(`digest ${i}`));
      const sig = await key.sign(digest);
      expect(sig.length).toBe(65);
      const s = BigInt(`0x${toHex(sig.subarray(32, 64))}`);
      expect(s <= half).toBe(true);
      bits.add(sig[64] as number);
      const recovered = secp256k1.Signature.fromBytes(sig.subarray(0, 64), 'compact').addRecoveryBit(sig[64] as number).recoverPublicKey(digest).toBytes(true);
      expect(toHex(recovered)).toBe(toHex(key.publicKey));
      expect(secp256k1.verify(sig.subarray(0, 64), digest, key.publicKey, { prehash: false, lowS: true })).toBe(true);
    }
    expect([...bits].every((x) => x === 0 || x === 1)).toBe(true);
    await expect(key.sign(new Uint8Array(31))).rejects.toThrow(/32-byte digest/);
  });

  it('finishSecp256k1 turns a high-S signature into its low-S twin and refuses one that does not verify', () => {
    const secret = generateSecret('secp256k1');
    const pub = publicKeyOf('secp256k1', secret);
    const digest = sha256(new TextEncoder().encode('x'));
    const low = secp256k1.sign(digest, secret, { prehash: false, lowS: true, format: 'compact' });
    const n = secp256k1.Point.CURVE().n;
    const s = BigInt(`0x${toHex(low.subarray(32))}`);
    const high = new Uint8Array(64);
    high.set(low.subarray(0, 32));
    high.set(Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex'), 32);
    expect(toHex(finishSecp256k1(high, digest, pub)!.subarray(0, 64))).toBe(toHex(low));
    const other = publicKeyOf('secp256k1', generateSecret('secp256k1'));
    expect(finishSecp256k1(low, digest, other)).toBeNull();
    expect(finishSecp256k1(new Uint8Array(64), digest, pub)).toBeNull();
  });

  it('backend is yubihsm for a YubiHSM token and pkcs11 for any other', () => {
    expect(backendNameOf('Yubico (www.yubico.com)', 'YubiHSM')).toBe('yubihsm');
    expect(backendNameOf('Yubico', 'YubiHSM 2')).toBe('yubihsm');
    expect(backendNameOf('SoftHSM project', 'SoftHSM v2')).toBe('pkcs11');
    expect(backendNameOf('Amazon', 'CloudHSM')).toBe('pkcs11');
  });

  it('sessions are pooled: concurrent signatures share at most `sessions` sessions and all verify', async () => {
    const b = await open(['ed-1'], { sessions: 2 });
    const [ed] = b.list();
    const key = b.signingKey(ed!.publicKeyHex)!;
    const messages = Array.from({ length: 20 }, (_, i) => new TextEncoder().encode(`m${i}`));
    const sigs = await Promise.all(messages.map((m) => key.sign(m)));
    sigs.forEach((sig, i) => expect(ed25519.verify(sig, messages[i]!, key.publicKey)).toBe(true));
  });
});

describe('a token that misbehaves or goes away', () => {
  it('attack: a token that signs with another key than the one listed is refused (key), and no signature leaves the backend', async () => {
    // Two key pairs; the public object of the first is relabelled to the second's label, so the
    // token lists one key and signs with another (a swapped or faulty device).
    generateTokenKey(config, PIN, { curve: 'ed25519', label: 'swap-a' });
    generateTokenKey(config, PIN, { curve: 'ed25519', label: 'swap-b' });
    generateTokenKey(config, PIN, { curve: 'secp256k1', label: 'swap-c' });
    generateTokenKey(config, PIN, { curve: 'secp256k1', label: 'swap-d' });
    const p11 = createRequire(import.meta.url)('pkcs11js') as typeof import('pkcs11js');
    const m = new p11.PKCS11();
    m.load(token.module);
    const slot = m.C_GetSlotList(true).find((s) => m.C_GetTokenInfo(s).label.trim() === 'vault-test') as Buffer;
    const session = m.C_OpenSession(slot, p11.CKF_SERIAL_SESSION | p11.CKF_RW_SESSION);
    const relabel = (cls: number, from: string, to: string) => {
      m.C_FindObjectsInit(session, [{ type: p11.CKA_CLASS, value: cls }, { type: p11.CKA_LABEL, value: from }]);
      const [h] = m.C_FindObjects(session, 1);
      m.C_FindObjectsFinal(session);
      m.C_SetAttributeValue(session, h as Buffer, [{ type: p11.CKA_LABEL, value: to }]);
    };
    relabel(p11.CKO_PRIVATE_KEY, 'swap-b', 'swap-x');
    relabel(p11.CKO_PRIVATE_KEY, 'swap-a', 'swap-b');
    relabel(p11.CKO_PRIVATE_KEY, 'swap-d', 'swap-y');
    relabel(p11.CKO_PRIVATE_KEY, 'swap-c', 'swap-d');
    m.C_CloseSession(session);
    const b = await open(['swap-b', 'swap-d']);
    for (const info of b.list()) {
      const key = b.signingKey(info.publicKeyHex)!;
      const err = await key.sign(new Uint8Array(32).fill(9)).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'SignerRefusedError', reason: 'key' });
      expect((err as Error).message).toMatch(/does not verify against the key's public key/);
    }
  });

  it('token pulled mid-run: every signature is refused with reason key and a clear message, then it signs again once the token is back', async () => {
    const b = await open(['ed-1', 'k1-1']);
    const keys = b.list().map((k) => b.signingKey(k.publicKeyHex)!);
    for (const k of keys) await k.sign(new Uint8Array(32).fill(1));
    renameSync(token.tokens, `${token.tokens}.pulled`);
    try {
      for (const k of keys) {
        const err = await k.sign(new Uint8Array(32).fill(2)).catch((e: unknown) => e);
        expect(err).toMatchObject({ name: 'SignerRefusedError', reason: 'key' });
        expect((err as Error).message).toMatch(/PKCS#11 token "vault-test" is unavailable .*no other key is used/);
        expect((err as Error).message).not.toContain(PIN);
      }
    } finally {
      renameSync(`${token.tokens}.pulled`, token.tokens);
    }
    for (const k of keys) {
      const message = new Uint8Array(32).fill(3);
      const sig = await k.sign(message);
      if (k.curve === 'ed25519') expect(ed25519.verify(sig, message, k.publicKey)).toBe(true);
      else expect(secp256k1.verify(sig.subarray(0, 64), message, k.publicKey, { prehash: false })).toBe(true);
    }
  });

  it('a module finalised under the signer (a reset) is initialised and logged into again, and signs', async () => {
    const b = await open(['ed-1']);
    const key = b.signingKey(b.list()[0]!.publicKeyHex)!;
    await key.sign(new Uint8Array([1]));
    b.simulateModuleReset();
    const sig = await key.sign(new Uint8Array([2]));
    expect(ed25519.verify(sig, new Uint8Array([2]), key.publicKey)).toBe(true);
  });

  it('attack: a token re-initialised with the same label and PIN, another key under the label, is refused after the reset', async () => {
    const b = await open(['ed-1']);
    const key = b.signingKey(b.list()[0]!.publicKeyHex)!;
    await key.sign(new Uint8Array([1]));
    renameSync(token.tokens, `${token.tokens}.real`);
    mkdirSync(token.tokens, { mode: 0o700 });
    try {
      expect(spawnSyncUtil(['--init-token', '--free', '--label', 'vault-test', '--pin', PIN, '--so-pin', `so-${PIN}`])).toBe(0);
      b.simulateModuleReset();
      // The impostor token has no "ed-1" yet: refused.
      await expect(key.sign(new Uint8Array([2]))).rejects.toMatchObject({ reason: 'key' });
      generateTokenKey(config, PIN, { curve: 'ed25519', label: 'ed-1' });
      const err = await key.sign(new Uint8Array([2])).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'SignerRefusedError', reason: 'key' });
      expect((err as Error).message).toMatch(/now holds another public key under "ed-1"/);
    } finally {
      rmSync(token.tokens, { recursive: true, force: true });
      renameSync(`${token.tokens}.real`, token.tokens);
    }
    b.simulateModuleReset();
    const sig = await key.sign(new Uint8Array([3]));
    expect(ed25519.verify(sig, new Uint8Array([3]), key.publicKey)).toBe(true);
  });
});

describe('a PIN the token refuses after a reset', () => {
  it('attack: a PIN the token refuses is tried once, never again (retrying could lock the PIN); signatures are refused with reason key', async () => {
    const b = await open(['ed-1']);
    const key = b.signingKey(b.list()[0]!.publicKeyHex)!;
    await key.sign(new Uint8Array([1]));
    const p11 = createRequire(import.meta.url)('pkcs11js') as typeof import('pkcs11js');
    const m = new p11.PKCS11();
    m.load(token.module);
    const setPin = (from: string, to: string) => {
      const slot = m.C_GetSlotList(true).find((s) => m.C_GetTokenInfo(s).label.trim() === 'vault-test') as Buffer;
      const session = m.C_OpenSession(slot, p11.CKF_SERIAL_SESSION | p11.CKF_RW_SESSION);
      try {
        m.C_Login(session, p11.CKU_USER, from);
      } catch (e) {
        if ((e as { code: number }).code !== 0x100) throw e;
      }
      m.C_SetPIN(session, from, to);
      m.C_CloseSession(session);
    };
    // The PIN changes on the token while the signer runs, then the token resets.
    setPin(PIN, 'changed-pin-55');
    b.simulateModuleReset();
    let first: unknown;
    try {
      first = await key.sign(new Uint8Array([2])).catch((e: unknown) => e);
    } finally {
      // Put the old PIN back: the backend still does not log in again until it is restarted.
      try {
        m.C_Initialize();
      } catch {
        // initialised again by the backend's reset
      }
      setPin('changed-pin-55', PIN);
    }
    expect(first).toMatchObject({ name: 'SignerRefusedError', reason: 'key' });
    expect((first as Error).message).toMatch(/refused the PIN \(CKR_PIN_INCORRECT\).*stops trying/);
    const second = await key.sign(new Uint8Array([3])).catch((e: unknown) => e);
    expect(second).toMatchObject({ name: 'SignerRefusedError', reason: 'key' });
    expect((second as Error).message).toMatch(/stops trying/);
    expect(`${(first as Error).message}${(second as Error).message}`).not.toMatch(/changed-pin-55|pin-7c1f9a2e/);
    // A backend opened afresh (the restart) signs.
    const fresh = await open(['ed-1']);
    const sig = await fresh.signingKey(fresh.list()[0]!.publicKeyHex)!.sign(new Uint8Array([4]));
    expect(ed25519.verify(sig, new Uint8Array([4]), key.publicKey)).toBe(true);
  });
});

function spawnSyncUtil(args: string[]): number | null {
  const { spawnSync } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
  return spawnSync(token.util, args, { env: { ...process.env, SOFTHSM2_CONF: token.conf }, encoding: 'utf8' }).status;
}

describe('the PIN', () => {
  it('comes from the named environment variable or a 0600 file, and an error names where, never what', () => {
    expect(readPin({ pin_env: 'VAULT_TEST_PKCS11_PIN' }, { VAULT_TEST_PKCS11_PIN: PIN })).toBe(PIN);
    expect(() => readPin({ pin_env: 'VAULT_TEST_PKCS11_PIN' }, {})).toThrow(/set VAULT_TEST_PKCS11_PIN/);
    const dir = mkdtempSync(join(tmpdir(), 'vault-pin-'));
    const file = join(dir, 'pin');
    writeFileSync(file, `${PIN}\n`, { mode: 0o600 });
    expect(readPin({ pin_file: file })).toBe(PIN);
    chmodSync(file, 0o644);
    expect(() => readPin({ pin_file: file })).toThrow(/chmod 600/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the configuration has no PIN field: a PIN written into it is a validation error', () => {
    const r = Pkcs11ConfigSchema.safeParse({ format: 'vault-signer-pkcs11', version: 1, module: token.module, token_label: 'x', pin: PIN, keys: [{ label: 'a' }] });
    expect(r.success).toBe(false);
  });
});

describe('import of a software key', () => {
  it('attack: importing a software key is refused unless asked for explicitly; when asked, the token records it as not generated there', async () => {
    const secret = generateSecret('ed25519');
    const publicKey = publicKeyOf('ed25519', secret);
    expect(() => importTokenKey(config, PIN, { curve: 'ed25519', label: 'imported', secret, publicKey, allowImport: false })).toThrow(/refused unless asked for explicitly \(--allow-import\)/);
    const key = importTokenKey(config, PIN, { curve: 'ed25519', label: 'imported', secret, publicKey, allowImport: true });
    expect(toHex(key.publicKey)).toBe(toHex(publicKey));
    expect(key.attributes).toMatchObject({ sensitive: true, extractable: false, local: false });
    const b = await open(['imported']);
    const sig = await b.signingKey(toHex(publicKey))!.sign(new Uint8Array([5]));
    // The token's signature is the software key's: RFC 8032 ed25519 is deterministic.
    expect(toHex(sig)).toBe(toHex(ed25519.sign(new Uint8Array([5]), secret)));
  });
});

describe('the signer on a PKCS#11 token', () => {
  it('verifyAndSign answers backend pkcs11; with the token pulled it refuses (key) with a receipt and never uses the same key held in software', async () => {
    const held = generateSecret('ed25519');
    importTokenKey(config, PIN, { curve: 'ed25519', label: 'world', secret: held, publicKey: publicKeyOf('ed25519', held), allowImport: true });
    // The world's software keystore holds the same key: a fallback to it would sign.
    const w = await makeWorld({ held });
    const b = await open(['world']);
    const deps = { ...w.deps, keys: b };
    try {
      const ok = await verifyAndSign(await w.request({ amount: '1000' }), deps);
      expect(ok.ok && ok.response.backend).toBe('pkcs11');
      renameSync(token.tokens, `${token.tokens}.pulled`);
      let out;
      try {
        out = await verifyAndSign(await w.request({ amount: '2000' }), deps);
      } finally {
        renameSync(`${token.tokens}.pulled`, token.tokens);
      }
      expect(out.ok).toBe(false);
      if (!out.ok) {
        expect(out.refusal.refused.reason).toBe('key');
        expect(out.refusal.message).toMatch(/PKCS#11 token "vault-test" is unavailable/);
      }
      expect(w.state.recent(1)[0]?.kind).toBe('sign.refused');
      const again = await verifyAndSign(await w.request({ amount: '3000' }), deps);
      expect(again.ok).toBe(true);
    } finally {
      w.cleanup();
    }
  });

  it('over HTTP: /health and /keys say pkcs11, /sign answers a signature from the token, a 403 key refusal while it is pulled, and signs again', async () => {
    const held = generateSecret('ed25519');
    importTokenKey(config, PIN, { curve: 'ed25519', label: 'world-http', secret: held, publicKey: publicKeyOf('ed25519', held), allowImport: true });
    const b = await open(['world-http']);
    const w = await makeWorld({ held });
    const { server, client } = await serveWorld(w, 'http-token-0123456789abcdef0123', { keys: b });
    try {
      const health = (await (await fetch(`${server.url}/health`)).json()) as { backend: string };
      expect(health.backend).toBe('pkcs11');
      const keys = (await (await fetch(`${server.url}/keys`, { headers: { 'x-vault-signer-token': 'http-token-0123456789abcdef0123' } })).json()) as { keys: { backend: string }[] };
      expect(keys.keys.map((k) => k.backend)).toEqual(['pkcs11']);
      const signed = await client.sign(await w.request({ amount: '1500' }));
      expect(signed.ok && signed.response.backend).toBe('pkcs11');
      if (signed.ok) expect(signed.response.signature.public_key.hex).toBe(toHex(publicKeyOf('ed25519', held)));
      // The token pulled while the signer serves: a 403 refusal with reason key, then back to signing.
      renameSync(token.tokens, `${token.tokens}.pulled`);
      let refused;
      try {
        refused = await client.sign(await w.request({ amount: '1600' }));
      } finally {
        renameSync(`${token.tokens}.pulled`, token.tokens);
      }
      expect(!refused.ok && refused.refusal.refused.reason).toBe('key');
      expect(!refused.ok && refused.refusal.message).toMatch(/PKCS#11 token "vault-test" is unavailable/);
      const back = await client.sign(await w.request({ amount: '1700' }));
      expect(back.ok && back.response.backend).toBe('pkcs11');
    } finally {
      await server.close();
      w.cleanup();
    }
  });
});

describe('vault-signer with --backend pkcs11 (processes)', () => {
  // Inside the package, so the bundle resolves @vault/sdk and pkcs11js from its node_modules.
  const out = join(SERVER_PKG, '.cache/pkcs11-cli-test');
  beforeAll(async () => {
    await bundleClis(['signer/cli'], out);
  }, 120_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  const cli = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [join(out, 'signer/cli.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('keygen --backend pkcs11 makes the key in the token; keys lists it; import is refused without --allow-import and done with it; the PIN is in no output', async () => {
    const file = join(out, 'pkcs11.json');
    writeFileSync(file, JSON.stringify({ format: 'vault-signer-pkcs11', version: 1, module: token.module, token_label: 'vault-test', pin_env: 'VAULT_TEST_PKCS11_PIN', keys: [{ label: 'cli-ed' }, { label: 'cli-k1' }] }));
    const env = { SOFTHSM2_CONF: token.conf, VAULT_TEST_PKCS11_PIN: PIN, VAULT_SIGNER_PASSPHRASE: PASSPHRASE };
    const all: string[] = [];
    for (const [label, curve] of [['cli-ed', 'ed25519'], ['cli-k1', 'secp256k1']] as const) {
      const r = await cli(['keygen', '--backend', 'pkcs11', '--pkcs11', file, '--label', label, '--curve', curve], env);
      all.push(r.stdout, r.stderr);
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as { label: string; curve: string; attributes: Record<string, boolean>; addresses: Record<string, string> };
      expect(j).toMatchObject({ label, curve, attributes: { sensitive: true, extractable: false, local: true } });
      expect(Object.keys(j.addresses).length).toBeGreaterThan(0);
    }
    const listed = await cli(['keys', '--pkcs11', file], env);
    all.push(listed.stdout, listed.stderr);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { keys: { label: string }[] }).keys.map((k) => k.label)).toEqual(['cli-ed', 'cli-k1']);
    const noPin = await cli(['keys', '--pkcs11', file], { SOFTHSM2_CONF: token.conf });
    expect(noPin.code).toBe(1);
    expect(noPin.stderr).toMatch(/set VAULT_TEST_PKCS11_PIN/);
    const refused = await cli(['import', '--keystore', join(out, 'nokeys'), '--key', 'key_0000000000000000', '--pkcs11', file, '--label', 'imp'], env);
    all.push(refused.stdout, refused.stderr);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused unless asked for explicitly \(--allow-import\)/);
    // A process of its own: PKCS#11 login state is per process, so only a fresh one checks a PIN.
    const wrong = await cli(['keys', '--pkcs11', file], { ...env, VAULT_TEST_PKCS11_PIN: 'not-the-pin-91' });
    all.push(wrong.stdout, wrong.stderr);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/CKR_PIN_INCORRECT/);
    expect(wrong.stderr).not.toContain('not-the-pin-91');
    // Asked for explicitly, a keystore key goes in, and the token says it was not generated there.
    const ks = join(out, 'keystore');
    const soft = await createKey(ks, { curve: 'secp256k1', passphrase: PASSPHRASE, kdf: TEST_KDF });
    const imported = await cli(['import', '--keystore', ks, '--key', soft.id, '--pkcs11', file, '--label', 'cli-imported', '--allow-import'], env);
    all.push(imported.stdout, imported.stderr);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ id: soft.id, public_key: soft.publicKeyHex, label: 'cli-imported', attributes: { sensitive: true, extractable: false, local: false } });
    for (const text of all) expect(text).not.toContain(PIN);
  }, 60_000);

  it('attack: serve with a wrong PIN does not start, and neither PIN is in what it prints', async () => {
    const file = join(out, 'wrong-pin.json');
    writeFileSync(file, JSON.stringify({ format: 'vault-signer-pkcs11', version: 1, module: token.module, token_label: 'vault-test', pin_env: 'VAULT_TEST_PKCS11_PIN', keys: [{ label: 'ed-1' }] }));
    const w = await makeWorld();
    const trust = join(out, 'trust-wrong.json');
    writeFileSync(trust, JSON.stringify({ ...w.trustFile, drivers: [] }));
    const r = await cli(['serve', '--pkcs11', file, '--trust', trust, '--state-dir', join(out, 'state-wrong'), '--port', '0'], {
      SOFTHSM2_CONF: token.conf,
      VAULT_TEST_PKCS11_PIN: 'wrong-pin-3b9d0c',
      VAULT_SIGNER_PASSPHRASE: PASSPHRASE,
    });
    w.cleanup();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refused the PIN \(CKR_PIN_INCORRECT\)/);
    expect(`${r.stdout}${r.stderr}`).not.toContain('wrong-pin-3b9d0c');
    expect(`${r.stdout}${r.stderr}`).not.toContain(PIN);
  }, 60_000);

  it('serve --pkcs11: the signer starts on the token, /health says pkcs11, and its log never holds the PIN', async () => {
    const w = await makeWorld();
    const file = join(out, 'serve-pkcs11.json');
    writeFileSync(file, JSON.stringify({ format: 'vault-signer-pkcs11', version: 1, module: token.module, token_label: 'vault-test', pin_env: 'VAULT_TEST_PKCS11_PIN', keys: [{ label: 'ed-1' }] }));
    const trust = join(out, 'trust.json');
    writeFileSync(trust, JSON.stringify({ ...w.trustFile, drivers: [] }));
    const env = { SOFTHSM2_CONF: token.conf, VAULT_TEST_PKCS11_PIN: PIN, VAULT_SIGNER_PASSPHRASE: PASSPHRASE, VAULT_SIGNER_TOKEN: 'serve-token-0123456789abcdef0123' };
    const child = spawn(process.execPath, [join(out, 'signer/cli.js'), 'serve', '--pkcs11', file, '--trust', trust, '--state-dir', join(out, 'state'), '--port', '0', '--kdf-log2', '10'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stderr.on('data', (d) => (log += d));
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d) => {
        log += d;
        buf += d;
        if (buf.includes('\n')) resolve(buf.split('\n')[0] as string);
      });
      child.on('close', (code) => reject(new Error(`serve exited ${code}: ${log}`)));
    });
    try {
      const { listening } = JSON.parse(line) as { listening: string };
      const client = createSignerClient({ baseUrl: listening, token: env.VAULT_SIGNER_TOKEN });
      const health = (await (await fetch(`${listening}/health`)).json()) as { backend: string };
      expect(health.backend).toBe('pkcs11');
      void client;
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
      w.cleanup();
    }
    expect(log).not.toContain(PIN);
  }, 60_000);
});
