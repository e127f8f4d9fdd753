/**
 * Issue #27, "set-up from scratch": the README's first run, with the built CLIs as real processes
 * from an empty directory. `vault-signer keygen` prints addresses without a trust file, and
 * `vault-signer keys` lists them again offline. The README's provisioning section is run as written,
 * through to a confirmed transfer, by test/from-scratch.test.ts. CLIs are bundled from source
 * (test/cli-bundle.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { bundleClis } from './cli-bundle.js';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(pkg, '.cache/first-hour-test');
const ENTRIES = ['signer/cli', 'control-plane/cli', 'provision/cli'] as const;
const ENV = { ...process.env, VAULT_SIGNER_PASSPHRASE: 'a long signer passphrase', VAULT_OPERATOR_PASSPHRASE: 'a long operator passphrase' };

beforeAll(async () => {
  await bundleClis(ENTRIES, outDir);
});

function run(entry: (typeof ENTRIES)[number], args: string[], cwd: string, env: NodeJS.ProcessEnv = ENV): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(outDir, `${entry}.js`), ...args], { encoding: 'utf8', cwd, env, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** keygen with a cheap KDF (the only deviation from the README: 2^17 scrypt per key is slow in CI). */
function keygen(cwd: string, keystore: string, curve: 'ed25519' | 'secp256k1') {
  const r = run('signer/cli', ['keygen', '--keystore', keystore, '--curve', curve, '--kdf-log2', '10'], cwd);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as { id: string; public_key: string; addresses: Record<string, string> };
}

describe('vault-signer keygen and keys, from scratch', () => {
  it('keygen without a trust file prints the addresses', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-first-hour-'));
    const ed = keygen(dir, './keys', 'ed25519');
    // An XRPL address on every XRPL chain (both curves), a Stellar one for ed25519, none on EVM.
    expect(ed.addresses['xrpl:local']).toMatch(/^r[1-9A-HJ-NP-Za-km-z]{24,34}$/);
    expect(ed.addresses['xrpl:testnet']).toBe(ed.addresses['xrpl:local']);
    expect(ed.addresses['stellar:testnet']).toMatch(/^G[A-Z2-7]{55}$/);
    expect(Object.keys(ed.addresses).some((c) => c.startsWith('eip155:'))).toBe(false);
    const k1 = keygen(dir, './keys', 'secp256k1');
    expect(k1.addresses['eip155:1']).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(k1.addresses['xrpl:local']).toMatch(/^r/);
    expect(k1.addresses['xrpl:local']).not.toBe(ed.addresses['xrpl:local']);
    expect(Object.keys(k1.addresses).some((c) => c.startsWith('stellar:'))).toBe(false);
  });

  it('keys lists the addresses of an existing key offline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-first-hour-'));
    const a = keygen(dir, './keys', 'ed25519');
    const b = keygen(dir, './keys', 'secp256k1');
    // No passphrase at all: nothing is unlocked.
    const env = { ...process.env, VAULT_SIGNER_PASSPHRASE: '' };
    const r = run('signer/cli', ['keys', '--keystore', './keys'], dir, env);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { keys: { id: string; public_key: string; addresses: Record<string, string> }[] };
    const byId = new Map(out.keys.map((k) => [k.id, k]));
    expect(byId.size).toBe(2);
    for (const made of [a, b]) {
      expect(byId.get(made.id)?.public_key).toBe(made.public_key);
      expect(byId.get(made.id)?.addresses).toEqual(made.addresses);
    }
    // Never any part of the sealed secret.
    const file = JSON.parse(readFileSync(join(dir, 'keys', `${a.id}.json`), 'utf8')) as { cipher: { ciphertext: string; nonce: string }; kdf: { salt: string } };
    for (const secretish of [file.cipher.ciphertext, file.cipher.nonce, file.kdf.salt]) expect(r.stdout).not.toContain(secretish);
  });

  it('keys refuses a key file whose id does not name its public key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-first-hour-'));
    const a = keygen(dir, './keys', 'ed25519');
    const b = keygen(dir, './keys', 'ed25519');
    const path = join(dir, 'keys', `${a.id}.json`);
    const file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...file, public_key: b.public_key }), { mode: 0o600 });
    const r = run('signer/cli', ['keys', '--keystore', './keys'], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`key file ${a.id}: the id does not match its public key`);
  });
});
