/**
 * startSigner, the driver loader and the CLI entry, in-process (the process suite runs the same
 * code from dist as a child process, where coverage cannot see it).
 */
import { createSignerClient, DriverRegistryError, policyDigest } from '@vault/sdk';
import { memoryAddress } from '@vault/sdk/testing';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main, parseScope } from '../../src/signer/cli.js';
import { loadDriverModules, resolveModule } from '../../src/signer/drivers.js';
import { startSigner, resolveToken } from '../../src/signer/serve.js';
import { approver, basePolicy, PASSPHRASE, tempDir, TEST_KDF } from './helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'fixtures/memory-driver.mjs');
let root: string;

beforeAll(() => {
  root = tempDir('signer-serve-');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function captureStdout(fn: () => Promise<unknown>): Promise<string> {
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return out;
}

describe('driver modules', () => {
  it('loads createDriver/createSigner from a module path, or from a default export', async () => {
    const { drivers, signers } = await loadDriverModules([{ module: FIXTURE, options: { chain: 'memory:serve' } }], root);
    expect(drivers.chains()).toEqual(['memory:serve']);
    expect(signers.chains()).toEqual(['memory:serve']);
    writeFileSync(join(root, 'default.mjs'), `import * as m from ${JSON.stringify(pathToFileURL(FIXTURE).href)};\nexport default { createDriver: m.createDriver, createSigner: m.createSigner };\n`);
    const viaDefault = await loadDriverModules([{ module: './default.mjs', options: { chain: 'memory:default' } }], root);
    expect(viaDefault.drivers.has('memory:default')).toBe(true);
  });

  it('refuses a module without the two factories, and two modules for one chain', async () => {
    writeFileSync(join(root, 'empty.mjs'), 'export const nothing = 1;\n');
    await expect(loadDriverModules([{ module: './empty.mjs' }], root)).rejects.toBeInstanceOf(DriverRegistryError);
    await expect(loadDriverModules([{ module: FIXTURE, options: { chain: 'memory:dup' } }, { module: FIXTURE, options: { chain: 'memory:dup' } }], root)).rejects.toThrow(/already served/);
  });

  it('attack: a driver module written for the old contract (no payloadFate) is refused at start-up, before any request', async () => {
    await expect(loadDriverModules([{ module: FIXTURE, options: { chain: 'memory:old', payloadFate: false } }], root)).rejects.toThrow(/payloadFate must be a function/);
    await expect(loadDriverModules([{ module: FIXTURE, options: { chain: 'memory:old', payloadFate: false } }], root)).rejects.toBeInstanceOf(DriverRegistryError);
    // The same module with it loads.
    expect((await loadDriverModules([{ module: FIXTURE, options: { chain: 'memory:old' } }], root)).drivers.has('memory:old')).toBe(true);
  });

  it('resolves paths against the config directory and packages from there', () => {
    expect(resolveModule('./x.mjs', '/etc/vault')).toBe('file:///etc/vault/x.mjs');
    expect(resolveModule('/opt/d.mjs', '/etc/vault')).toBe('file:///opt/d.mjs');
    expect(resolveModule('file:///a.mjs', '/etc')).toBe('file:///a.mjs');
    expect(resolveModule('@vault/sdk', here)).toMatch(/^file:.*sdk/);
    expect(resolveModule('not-a-package-anywhere', here)).toBe('not-a-package-anywhere');
  });
});

describe('startSigner', () => {
  it('unlocks, loads drivers from the trust file, serves /health and /keys, stops and restarts', async () => {
    const keystore = join(root, 'keys');
    const out = await captureStdout(() =>
      main(['keygen', '--keystore', keystore, '--curve', 'ed25519', '--scope', 'wallet=ops,chain=memory:devnet', '--drivers', writeDrivers(), '--kdf-log2', '10', '--passphrase-file', passFile()]),
    );
    const key = JSON.parse(out) as { public_key: string; addresses: Record<string, string>; scope: unknown };
    expect(key.scope).toEqual({ wallets: ['ops'], chains: ['memory:devnet'] });
    const address = memoryAddress(Buffer.from(key.public_key, 'hex'));
    expect(key.addresses['memory:devnet']).toBe(address);

    const policy = basePolicy('ops');
    const approvers = [approver('alice', 1), approver('bob', 2), approver('carol', 3)];
    const wallet = {
      wallet: 'ops',
      chain: 'memory:devnet',
      control: { kind: 'native_multisig' as const, address: `mem1${'12'.repeat(20)}`, signers: [{ address, curve: 'ed25519' as const, weight: 1, label: 'me' }], quorum: 1 },
    };
    const trust = join(root, 'trust.json');
    writeFileSync(
      trust,
      JSON.stringify({
        format: 'vault-signer-trust',
        version: 1,
        wallets: [{ descriptor: wallet, policy_digest: policyDigest(policy) }],
        approvers: approvers.map((a) => ({ id: a.id, public_key: a.publicKeyHex, weight: 1 })),
        drivers: [{ module: FIXTURE }],
      }),
    );
    const stateDir = join(root, 'state');
    const signer = await startSigner({ keystore, trust, stateDir, port: 0, passphrase: PASSPHRASE, kdf: TEST_KDF, token: 'explicit-token-0123456789' });
    try {
      expect(signer.tokenFile).toBeNull();
      const client = createSignerClient({ baseUrl: signer.url, token: 'explicit-token-0123456789' });
      expect((await client.health())['chains']).toEqual(['memory:devnet']);
      const keys = (await client.keys()) as { keys: { addresses: Record<string, string>; scope: unknown }[] };
      expect(keys.keys[0]!.addresses['memory:devnet']).toBe(address);
    } finally {
      await signer.stop();
    }
    // A second start on the same state verifies the chain and reuses the receipt key.
    const again = await startSigner({ keystore, trust, stateDir, port: 0, passphrase: PASSPHRASE, drivers: writeDrivers(), token: 'explicit-token-0123456789' });
    await again.stop();
  });

  it('the token comes from VAULT_SIGNER_TOKEN, else from a 0600 file created once', () => {
    const dir = join(root, 'tok');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const prev = process.env['VAULT_SIGNER_TOKEN'];
    try {
      process.env['VAULT_SIGNER_TOKEN'] = 'from-env-token-0123456789';
      expect(resolveToken(dir)).toEqual({ token: 'from-env-token-0123456789', file: null });
      delete process.env['VAULT_SIGNER_TOKEN'];
      const a = resolveToken(dir);
      expect(a.file).toBe(join(dir, 'signer-token'));
      expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(statSync(a.file!).mode & 0o777).toBe(0o600);
      expect(resolveToken(dir).token).toBe(a.token);
      expect(readFileSync(a.file!, 'utf8')).toContain(a.token);
    } finally {
      if (prev === undefined) delete process.env['VAULT_SIGNER_TOKEN'];
      else process.env['VAULT_SIGNER_TOKEN'] = prev;
    }
  });

  it('refuses a drivers file that is not JSON', async () => {
    writeFileSync(join(root, 'bad-drivers.json'), '{');
    await expect(startSigner({ keystore: join(root, 'keys'), trust: join(root, 'trust.json'), drivers: join(root, 'bad-drivers.json'), passphrase: PASSPHRASE, port: 0 })).rejects.toThrow(/not readable JSON/);
  });
});

describe('cli', () => {
  it('parses scopes and refuses bad arguments', async () => {
    expect(parseScope(['wallet=a,chain=x:y', 'wallet=b'])).toEqual({ wallets: ['a', 'b'], chains: ['x:y'] });
    expect(() => parseScope(['owner=a'])).toThrow(/--scope/);
    await expect(main([])).rejects.toThrow(/no command/);
    await expect(main(['frobnicate'])).rejects.toThrow(/unknown command/);
    await expect(main(['keygen', '--curve', 'ed25519'])).rejects.toThrow(/--keystore/);
    await expect(main(['keygen', '--keystore', join(root, 'k2'), '--curve', 'ed448'])).rejects.toThrow(/--curve/);
    await expect(main(['keygen', '--keystore', join(root, 'k2'), '--curve', 'ed25519', '--kdf-log2', '3', '--passphrase-file', passFile()])).rejects.toThrow(/--kdf-log2/);
    await expect(main(['serve', '--keystore', join(root, 'k2')])).rejects.toThrow(/--trust/);
    await expect(main(['serve', '--keystore', 'k', '--trust', 't', '--port', '99999'])).rejects.toThrow(/--port/);
    const prev = process.env['VAULT_SIGNER_PASSPHRASE'];
    delete process.env['VAULT_SIGNER_PASSPHRASE'];
    try {
      await expect(main(['keygen', '--keystore', join(root, 'k2'), '--curve', 'ed25519'])).rejects.toThrow(/VAULT_SIGNER_PASSPHRASE/);
    } finally {
      if (prev !== undefined) process.env['VAULT_SIGNER_PASSPHRASE'] = prev;
    }
  });

  it('keygen without drivers prints the addresses of the installed first-party drivers; keygen reads drivers from a trust file', async () => {
    const out = await captureStdout(() => main(['keygen', '--keystore', join(root, 'k3'), '--curve', 'secp256k1', '--kdf-log2', '10', '--passphrase-file', passFile()]));
    const chains = Object.keys(JSON.parse(out).addresses);
    expect(chains).toContain('xrpl:local');
    expect(chains.some((c) => c.startsWith('eip155:'))).toBe(true);
    expect(chains).not.toContain('memory:devnet');
    const viaTrust = await captureStdout(() => main(['keygen', '--keystore', join(root, 'k3'), '--curve', 'ed25519', '--trust', join(root, 'trust.json'), '--kdf-log2', '10', '--passphrase-file', passFile()]));
    expect(Object.keys(JSON.parse(viaTrust).addresses)).toEqual(['memory:devnet']);
  });
});

function passFile(): string {
  const p = join(root, 'passphrase');
  writeFileSync(p, `${PASSPHRASE}\n`, { mode: 0o600 });
  return p;
}

function writeDrivers(): string {
  const p = join(root, 'drivers.json');
  writeFileSync(p, JSON.stringify({ drivers: [{ module: FIXTURE }] }));
  return p;
}
