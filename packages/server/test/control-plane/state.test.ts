/**
 * The operator-editable state file: validation naming the field, the JSON Schema, driver loading.
 */
import { ValidationError } from '@vault/sdk';
import { MemoryLedger, memoryWallet } from '@vault/sdk/testing';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { ControlPlane, loadDrivers } from '../../src/control-plane/service.js';
import { initStateDir } from '../../src/control-plane/run.js';
import { emptyState, encodeState, parseState, stateJsonSchema, StateFileSchema, writeStateFile } from '../../src/control-plane/state.js';
import { FAST_SCRYPT } from './helpers.js';

// Real sockets, fsync and scrypt on a shared 2-core machine: allow for slow moments.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const here = dirname(fileURLToPath(import.meta.url));

function pathOf(text: string): string {
  try {
    parseState(text);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as ValidationError).path;
  }
  throw new Error('expected a ValidationError');
}

const { wallet } = memoryWallet({ ledger: new MemoryLedger(), wallet: 'w1' });

describe('state file', () => {
  const base = { version: 1, wallets: [wallet] };

  it('fills defaults for an empty state', () => {
    const s = parseState('{"version":1}');
    expect(s).toEqual(emptyState());
    expect(s.assets).toEqual({ assets: [], reserved: [] });
  });

  it('names the failing field', () => {
    expect(pathOf('nope')).toBe('');
    expect(pathOf('{"version":2}')).toBe('version');
    expect(pathOf(JSON.stringify({ ...base, wallets: [wallet, wallet] }))).toBe('wallets.1.wallet');
    expect(pathOf(JSON.stringify({ ...base, policies: [{ wallet: 'zz', version: 1, rules: [] }] }))).toBe('policies.0.wallet');
    expect(pathOf(JSON.stringify({ ...base, policies: [{ wallet: 'w1', version: 1, rules: [{ rule: 'teleport' }] }] }))).toBe('policies.0.rules.0.rule');
    expect(pathOf(JSON.stringify({ ...base, signers: { a: { url: 'http://127.0.0.1:1', token: 'short' } } }))).toBe('signers.a.token');
    expect(pathOf(JSON.stringify({ ...base, signers: { a: { url: 'ftp://x', token_env: 'X' } } }))).toBe('signers.a.url');
    expect(pathOf(JSON.stringify({ ...base, signers: { a: { url: 'http://x' } } }))).toBe('signers.a.token');
    expect(pathOf(JSON.stringify({ ...base, devices: [{ id: 'a b', role: 'approver', label: '', public_key: '00'.repeat(32), paired_at: 0 }] }))).toBe('devices.0.id');
    const dev = { id: 'd1', role: 'approver', label: '', public_key: '00'.repeat(32), paired_at: 0 };
    expect(pathOf(JSON.stringify({ ...base, devices: [dev, dev] }))).toBe('devices.1.id');
    expect(pathOf(JSON.stringify({ ...base, surprise: 1 }))).toBe('');
  });

  it('operator accounts and API keys: defaults empty (a state from before them loads), each field named when wrong', () => {
    expect(parseState(JSON.stringify(base))).toMatchObject({ operators: [], api_keys: [] });
    const pass = { kdf: 'scrypt', N: 1024, r: 8, p: 1, salt: 'ab'.repeat(16), hash: 'cd'.repeat(32) };
    const op = { name: 'olga', role: 'operator', passphrase: pass, created_at: 0 };
    expect(parseState(JSON.stringify({ ...base, operators: [op] })).operators[0]).toMatchObject({ name: 'olga', disabled_at: null });
    expect(pathOf(JSON.stringify({ ...base, operators: [op, op] }))).toBe('operators.1.name');
    expect(pathOf(JSON.stringify({ ...base, operators: [{ ...op, name: 'operator' }] }))).toBe('operators.0.name');
    expect(pathOf(JSON.stringify({ ...base, operators: [{ ...op, name: 'Olga' }] }))).toBe('operators.0.name');
    expect(pathOf(JSON.stringify({ ...base, operators: [{ ...op, role: 'root' }] }))).toBe('operators.0.role');
    expect(pathOf(JSON.stringify({ ...base, operators: [{ ...op, passphrase: { ...pass, hash: 'plain' } }] }))).toBe('operators.0.passphrase.hash');
    const key = { id: '0123456789abcdef', digest: 'ef'.repeat(32), bound_to: 'agent:bot', created_at: 0, expires_at: 60 };
    expect(parseState(JSON.stringify({ ...base, api_keys: [key] })).api_keys[0]).toMatchObject({ revoked_at: null, label: '' });
    expect(pathOf(JSON.stringify({ ...base, api_keys: [key, key] }))).toBe('api_keys.1.id');
    expect(pathOf(JSON.stringify({ ...base, api_keys: [{ ...key, bound_to: 'operator' }] }))).toBe('api_keys.0.bound_to');
    expect(pathOf(JSON.stringify({ ...base, api_keys: [{ ...key, id: 'vk_x' }] }))).toBe('api_keys.0.id');
    // A secret is never a field: only its digest is.
    expect(pathOf(JSON.stringify({ ...base, api_keys: [{ ...key, secret: 'x' }] }))).toBe('api_keys.0');
  });

  it('refuses a string canonical JSON cannot hold (a lone surrogate), naming it: a reload could never receipt it', () => {
    const dev = { id: 'd1', role: 'approver', label: 'x\ud800', public_key: '00'.repeat(32), paired_at: 0 };
    expect(pathOf(JSON.stringify({ ...base, devices: [dev] }))).toBe('devices.0.label');
    expect(pathOf(JSON.stringify({ ...base, known_destinations: ['ok', '\udfff'] }))).toBe('known_destinations.1');
    // A well-formed pair (an emoji) is fine.
    expect(parseState(JSON.stringify({ ...base, devices: [{ ...dev, label: 'phone 📱' }] })).devices[0]?.label).toBe('phone 📱');
  });

  it('never writes a state the loader would refuse; what it writes reads back equal', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-state-'));
    try {
      const path = join(dir, 'state.json');
      const good = parseState(JSON.stringify(base));
      writeStateFile(path, good);
      const before = readFileSync(path);
      const bad = { ...good, devices: [{ id: 'd1', role: 'approver' as const, label: 'x\ud800', public_key: '00'.repeat(32), paired_at: 0, revoked_at: null }] };
      expect(() => writeStateFile(path, bad)).toThrow(ValidationError);
      expect(() => encodeState({ ...good, version: 2 as 1 })).toThrow(ValidationError);
      expect(readFileSync(path).equals(before)).toBe(true);
      const { text, state } = encodeState(good);
      expect(text).toBe(before.toString('utf8'));
      expect(state).toEqual(parseState(text));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a JSON Schema generated from the same definition', () => {
    const schema = stateJsonSchema();
    expect(schema['$schema']).toMatch(/json-schema/);
    expect(Object.keys(schema['properties'] as object)).toEqual(expect.arrayContaining(['wallets', 'policies', 'devices', 'assets', 'signers', 'compliance', 'attestation', 'drivers']));
    expect(StateFileSchema.safeParse({ version: 1 }).success).toBe(true);
  });

  it('init writes 0600 secrets, the schema file and only a scrypt hash of the passphrase; open refuses a missing state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-init-'));
    try {
      await expect(initStateDir({ stateDir: dir, passphrase: 'short' })).rejects.toBeInstanceOf(ValidationError);
      await expect(ControlPlane.open({ stateDir: dir })).rejects.toThrow(/does not exist/);
      const r = await initStateDir({ stateDir: dir, passphrase: 'a long passphrase', scrypt: FAST_SCRYPT });
      expect(r.receiptPublicKey).toMatch(/^[0-9a-f]{64}$/);
      for (const f of ['operator.json', 'receipt.key', 'state.json']) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
      const op = readFileSync(join(dir, 'operator.json'), 'utf8');
      expect(op).not.toContain('a long passphrase');
      expect(JSON.parse(op)).toMatchObject({ kdf: 'scrypt', N: 1024 });
      expect(JSON.parse(readFileSync(join(dir, 'state.schema.json'), 'utf8')).properties.wallets).toBeDefined();
      await expect(initStateDir({ stateDir: dir, passphrase: 'a long passphrase' })).rejects.toThrow(/already exists/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('driver loading by module name (core code never imports a driver)', () => {
  it('imports a module and calls createDriver(options)', async () => {
    const [d] = await loadDrivers([{ module: join(here, 'fixtures/memory-driver.mjs'), options: { chain: 'memory:x', name: 'm' } }], here);
    expect(d?.chains).toEqual(['memory:x']);
    const rel = await loadDrivers([{ module: './fixtures/memory-driver.mjs', options: {} }], here);
    expect(rel[0]?.chains).toEqual(['memory:devnet']);
  });

  it('names the failing entry: missing module, no createDriver, a throwing factory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-drv-'));
    try {
      writeFileSync(join(dir, 'none.mjs'), 'export const x = 1;');
      writeFileSync(join(dir, 'throws.mjs'), 'export function createDriver() { throw new Error("bad options"); }');
      await expect(loadDrivers([{ module: './missing.mjs', options: {} }], dir)).rejects.toMatchObject({ path: 'drivers.0.module' });
      await expect(loadDrivers([{ module: './none.mjs', options: {} }], dir)).rejects.toMatchObject({ path: 'drivers.0.module' });
      await expect(loadDrivers([{ module: './throws.mjs', options: {} }], dir)).rejects.toMatchObject({ path: 'drivers.0.options' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('attack: a driver written for the old contract (no payloadFate) is refused at start-up, naming its entry', async () => {
    const old = join(here, '../signer/fixtures/memory-driver.mjs');
    await expect(loadDrivers([{ module: old, options: { chain: 'memory:old', payloadFate: false } }], here)).rejects.toMatchObject({
      path: 'drivers.0.module',
      issues: [{ path: 'drivers.0.module', message: expect.stringMatching(/payloadFate must be a function/) }],
    });
    expect((await loadDrivers([{ module: old, options: { chain: 'memory:old' } }], here))[0]?.chains).toEqual(['memory:old']);
  });

  it('refuses to start when a wallet has no driver for its chain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-nodrv-'));
    try {
      await initStateDir({ stateDir: dir, passphrase: 'a long passphrase', scrypt: FAST_SCRYPT, state: { ...emptyState(), wallets: [wallet] } });
      await expect(ControlPlane.open({ stateDir: dir })).rejects.toMatchObject({ path: 'wallets.0.chain' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the README example state file', () => {
  it('is valid once its placeholders are filled', () => {
    const readme = readFileSync(join(here, '../../README.md'), 'utf8');
    const block = /```json\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const filled = (block as string).replace(/<64 hex[^>]*>/g, 'a'.repeat(64)).replace(/<128 hex>/g, 'b'.repeat(128));
    const s = parseState(filled);
    expect(s.wallets[0]?.wallet).toBe('treasury');
    expect(s.devices[0]?.id).toBe('dev_3f1a9c0e5b7d2a41');
  });
});

describe('one control plane per state directory', () => {
  it('a second open is refused while the first runs; a lock left by a dead process is taken over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-lock-'));
    try {
      await initStateDir({ stateDir: dir, passphrase: 'a long passphrase', scrypt: FAST_SCRYPT });
      const a = await ControlPlane.open({ stateDir: dir });
      await expect(ControlPlane.open({ stateDir: dir })).rejects.toThrow(/already open in this process/);
      await a.close();
      writeFileSync(join(dir, 'serve.lock'), `${process.ppid}\n`); // a live process that is not us
      await expect(ControlPlane.open({ stateDir: dir })).rejects.toThrow(/in use by another control plane/);
      writeFileSync(join(dir, 'serve.lock'), '999999999\n'); // no such process
      const b = await ControlPlane.open({ stateDir: dir });
      await b.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
