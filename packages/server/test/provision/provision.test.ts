/**
 * `vault provision`: file handling, idempotency and the reconcile gate, with a provisioner over the
 * SDK's memory ledger (fixtures/memory-provisioner.mjs). The ledgers' own provisioners are tested
 * in the driver packages against their devnets; examples/local-vault runs them end to end.
 */
import { ValidationError, policyDigest, sha256Hex, type PolicySet } from '@vault/sdk';
import { MEMORY_DEFAULT_MAX_FEE, createSoftwareKey, memoryAddress } from '@vault/sdk/testing';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { initStateDir } from '../../src/control-plane/run.js';
import { emptyState, readStateFile, writeStateFile } from '../../src/control-plane/state.js';
import { createKey } from '../../src/signer/keystore.js';
import { provision, ProvisionConfigSchema, readProvisionConfig, type ProvisionConfig } from '../../src/provision/index.js';
import { parseTrust } from '../../src/signer/trust.js';
import { calls, ledgerFor } from './fixtures/memory-provisioner.mjs';
import { bundleClis } from '../cli-bundle.js';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '../..');
const FIXTURE = join(here, 'fixtures/memory-provisioner.mjs');
const CLI_DIR = join(pkg, '.cache/provision-test');
const members = [1, 2, 3].map((n) => ({ address: memoryAddress(createSoftwareKey(new Uint8Array(32).fill(n)).publicKey), weight: 1, curve: 'ed25519' as const, label: `m${n}` }));
const policy: PolicySet = { wallet: 'ops', version: 1, rules: [{ rule: 'hard_ceiling', max: '1000' }] };

let dir: string;
let stateDir: string;
let trustA: string;
let trustB: string;

function trustFile(path: string, wallets: unknown[] = []): void {
  writeFileSync(path, JSON.stringify({ format: 'vault-signer-trust', version: 1, wallets, approvers: [], keys: [] }));
}

function config(extra: Partial<ProvisionConfig> = {}, wallet: Record<string, unknown> = {}): ProvisionConfig {
  return ProvisionConfigSchema.parse({
    state_dir: 'cp',
    trust_files: ['a-trust.json', 'b-trust.json'],
    wallets: [{ wallet: 'ops', chain: 'memory:devnet', members, quorum: 2, funding: { kind: 'faucet', url: 'http://127.0.0.1:1/faucet' }, policy, ...wallet }],
    ...extra,
  });
}

beforeEach(async () => {
  dir = mkdtempSync(join('/dev/shm', 'vault-provision-'));
  stateDir = join(dir, 'cp');
  await initStateDir({ stateDir, passphrase: 'provision test passphrase', scrypt: { N: 1024, r: 8, p: 1 }, state: { ...emptyState(), drivers: [{ module: FIXTURE, options: {} }] } });
  trustA = join(dir, 'a-trust.json');
  trustB = join(dir, 'b-trust.json');
  trustFile(trustA);
  trustFile(trustB);
  calls.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('vault provision', () => {
  it('provisions, writes the descriptor to the state file and both trust files (policy digest pinned, 0600), and reconciles clean', async () => {
    const [done] = await provision(config(), dir);
    expect(done).toMatchObject({ wallet: 'ops', chain: 'memory:devnet', changed: true, reconcile: { clean: true } });
    const state = readStateFile(join(stateDir, 'state.json'));
    const descriptor = state.wallets.find((w) => w.wallet === 'ops');
    expect(state.policies).toEqual([policy]);
    expect(descriptor?.control).toMatchObject({ kind: 'native_multisig', address: done?.address, quorum: 2 });
    for (const t of [trustA, trustB]) {
      const trust = parseTrust(JSON.parse(readFileSync(t, 'utf8')));
      expect(trust.wallet('ops')).toMatchObject({ descriptor, policyDigest: policyDigest(policy) });
      expect(statSync(t).mode & 0o777).toBe(0o600);
    }
    expect(done?.written.sort()).toEqual([join(stateDir, 'state.json'), trustA, trustB].sort());
    expect(ledgerFor('memory:devnet').account(done?.address ?? '')?.signers?.quorum).toBe(2);
  });

  it("passes the wallet's driver options to the provisioner as they are (the driver validates them)", async () => {
    await provision(config({}, { options: { safe_version: '1.3.0', allow_modules: ['0xabc'] } }), dir);
    expect(calls[0]?.options).toEqual({ safe_version: '1.3.0', allow_modules: ['0xabc'] });
    expect(() => config({}, { options: ['not', 'an', 'object'] })).toThrow();
  });

  it("writes an explicit max_fee into every trust file: the driver's default, the configured one, or the one already there", async () => {
    await provision(config(), dir);
    for (const t of [trustA, trustB]) {
      expect(JSON.parse(readFileSync(t, 'utf8')).wallets[0].max_fee).toBe(Number(MEMORY_DEFAULT_MAX_FEE));
      expect(parseTrust(JSON.parse(readFileSync(t, 'utf8'))).wallet('ops')?.maxFee).toBe(MEMORY_DEFAULT_MAX_FEE);
    }
    // An operator's own cap survives a re-run that does not name one...
    const edited = JSON.parse(readFileSync(trustA, 'utf8'));
    edited.wallets[0].max_fee = 40;
    writeFileSync(trustA, JSON.stringify(edited));
    await provision(config(), dir);
    expect(parseTrust(JSON.parse(readFileSync(trustA, 'utf8'))).wallet('ops')?.maxFee).toBe(40n);
    // ...and a configured one (a decimal string past 2^53 is kept as a string) is written to both.
    await provision(config({}, { max_fee: '90071992547409930' }), dir);
    for (const t of [trustA, trustB]) expect(parseTrust(JSON.parse(readFileSync(t, 'utf8'))).wallet('ops')?.maxFee).toBe(90071992547409930n);
  });

  it('writes the lifetime to the state file and every trust file, so both services enforce the same', async () => {
    const lifetime = { ttl_seconds: 86400, approval_max_age_seconds: 3600 };
    await provision(config({}, { lifetime }), dir);
    expect(readStateFile(join(stateDir, 'state.json')).lifetimes).toEqual({ ops: lifetime });
    for (const t of [trustA, trustB]) expect(parseTrust(JSON.parse(readFileSync(t, 'utf8'))).wallet('ops')?.lifetime).toEqual(lifetime);
    // A re-run that names none keeps it, on both sides.
    const [again] = await provision(config(), dir);
    expect(again?.written).toEqual([]);
    expect(parseTrust(JSON.parse(readFileSync(trustB, 'utf8'))).wallet('ops')?.lifetime).toEqual(lifetime);
    // One the state cannot hold is refused by the config schema, naming the field.
    expect(() => config({}, { lifetime: { ttl_seconds: 5 } })).toThrow(/ttl_seconds/);
  });

  it('re-running is safe: the stored descriptor goes to the provisioner as existing, nothing changes, no file is rewritten', async () => {
    const [first] = await provision(config(), dir);
    const before = [readFileSync(join(stateDir, 'state.json'), 'utf8'), readFileSync(trustA, 'utf8')];
    const [again] = await provision(config(), dir);
    expect(calls[1]?.existing?.control).toMatchObject({ address: first?.address });
    expect(again).toMatchObject({ changed: false, address: first?.address, written: [], transactions: [], reconcile: { clean: true } });
    expect([readFileSync(join(stateDir, 'state.json'), 'utf8'), readFileSync(trustA, 'utf8')]).toEqual(before);
  });

  it('a re-run whose request differs from the ledger is refused by the provisioner, and no file changes', async () => {
    await provision(config(), dir);
    const before = readFileSync(join(stateDir, 'state.json'), 'utf8');
    await expect(provision(config({}, { quorum: 3 }), dir)).rejects.toThrow(/quorum on ledger 2, requested 3/);
    expect(readFileSync(join(stateDir, 'state.json'), 'utf8')).toBe(before);
  });

  it('a plugin that reports a descriptor the ledger does not match fails the reconcile gate, naming the drift', async () => {
    const cfg = config({ drivers: [{ module: FIXTURE, options: { drift: true } }] });
    await expect(provision(cfg, dir)).rejects.toThrow(/does not reconcile: quorum: expected 3, ledger 2/);
  });

  it('the trust files pin the policy_digest given when the state file has none; a mismatch with the state policy is refused', async () => {
    const digest = 'ab'.repeat(32);
    const cfg = config({ state_dir: undefined }, { policy: undefined, policy_digest: digest });
    await provision({ ...cfg, drivers: [{ module: FIXTURE, options: {} }] }, dir);
    expect(parseTrust(JSON.parse(readFileSync(trustA, 'utf8'))).wallet('ops')?.policyDigest).toBe(digest);
    await expect(provision(config({}, { policy_digest: digest }), dir)).rejects.toThrow(/policy_digest.*hashes to/);
  });

  it('refusals name the field: no destination, unknown chain, a plugin without createProvisioner, no policy to pin, descriptors that disagree, a bad trust file', async () => {
    expect(() => ProvisionConfigSchema.parse({ wallets: config().wallets })).toThrow(/state_dir/);
    await expect(provision(config({}, { chain: 'memory:elsewhere' }), dir)).rejects.toThrow(/wallets\.0\.chain.*no configured driver serves memory:elsewhere/);
    const noProvisioner = join(dir, 'plain.mjs');
    writeFileSync(noProvisioner, `export { createDriver, createSigner } from ${JSON.stringify(FIXTURE)};\n`);
    await expect(provision(config({ drivers: [{ module: noProvisioner, options: {} }] }), dir)).rejects.toThrow(/cannot provision wallets/);
    await expect(provision(config({ drivers: [{ module: './missing.mjs', options: {} }] }), dir)).rejects.toThrow(/drivers\.0\.module.*cannot import/);
    await expect(provision({ ...config({ state_dir: undefined }, { policy: undefined }), drivers: [{ module: FIXTURE, options: {} }] }, dir)).rejects.toThrow(/no policy to pin/);
    await expect(provision(config({}, { policy: { ...policy, wallet: 'other' } }), dir)).rejects.toThrow(/wallets\.0\.policy\.wallet/);
    await provision(config(), dir);
    await expect(provision(config({}, { policy: { ...policy, version: 2 } }), dir)).rejects.toThrow(/already has a different policy/);
    const t = JSON.parse(readFileSync(trustB, 'utf8'));
    t.wallets[0].descriptor.control.quorum = 3;
    writeFileSync(trustB, JSON.stringify(t));
    await expect(provision(config(), dir)).rejects.toThrow(/different descriptors/);
    writeFileSync(trustB, '{"format":"vault-signer-trust"}');
    await expect(provision(config(), dir)).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('vault provision: a servable state (issue #23)', () => {
  const device = createSoftwareKey(new Uint8Array(32).fill(9));
  const deviceKey = Buffer.from(device.publicKey).toString('hex');
  const deviceId = `dev_${sha256Hex(deviceKey).slice(0, 16)}`;
  const gated: PolicySet = { wallet: 'ops', version: 1, rules: [{ rule: 'approval_threshold', above: '10', required_weight: 1, approvers: [{ id: deviceId, weight: 2 }] }, { rule: 'always_allow' }] };
  const endpoint = (n: number) => ({ url: `http://127.0.0.1:${7332 + n}`, token_env: `VAULT_SIGNER_${n}_TOKEN`, label: `signer-${n}` });
  const servable = (wallet: Record<string, unknown> = {}, extra: Partial<ProvisionConfig> = {}) =>
    config({ drivers: [{ module: './fixture-plugin.mjs', options: {} }], approvers: [{ id: deviceId, public_key: deviceKey }], ...extra }, { policy: gated, members: members.map((m, i) => ({ ...m, signer: endpoint(i + 1) })), ...wallet });
  const files = () => [join(stateDir, 'state.json'), trustA, trustB].map((f) => readFileSync(f, 'utf8'));

  beforeEach(() => {
    // The plugin named by a path relative to the provision file: each file must name it from its own directory.
    writeFileSync(join(dir, 'fixture-plugin.mjs'), `export * from ${JSON.stringify(FIXTURE)};\n`);
  });

  it('writes signer endpoints per member address and the drivers into state.json, and the approvers and drivers into every trust file', async () => {
    await provision(servable(), dir);
    const state = readStateFile(join(stateDir, 'state.json'));
    expect(state.signers).toEqual(Object.fromEntries(members.map((m, i) => [m.address, endpoint(i + 1)])));
    // state.json's relative module paths resolve against the state directory.
    expect(state.drivers).toEqual([{ module: FIXTURE, options: {} }, { module: '../fixture-plugin.mjs', options: {} }]);
    for (const t of [trustA, trustB]) {
      const trust = JSON.parse(readFileSync(t, 'utf8'));
      expect(trust.approvers).toEqual([{ id: deviceId, public_key: deviceKey, weight: 2 }]);
      expect(trust.drivers).toEqual([{ module: './fixture-plugin.mjs', options: {} }]);
      expect(parseTrust(trust).approvers.get(deviceId)).toMatchObject({ publicKey: deviceKey, weight: 2, revoked: false });
    }
  });

  it('a second identical run changes nothing: state.json and every trust file byte-identical, nothing written', async () => {
    await provision(servable(), dir);
    const before = files();
    const [again] = await provision(servable(), dir);
    expect(again).toMatchObject({ changed: false, written: [] });
    expect(files()).toEqual(before);
  });

  it("takes a paired approver device's key from the state file when the configuration does not list it", async () => {
    const path = join(stateDir, 'state.json');
    const state = readStateFile(path);
    writeStateFile(path, { ...state, devices: [{ id: deviceId, role: 'approver', label: 'phone', public_key: deviceKey, paired_at: 1, revoked_at: null }] });
    await provision(servable({}, { approvers: [] }), dir);
    expect(JSON.parse(readFileSync(trustB, 'utf8')).approvers).toEqual([{ id: deviceId, public_key: deviceKey, weight: 2 }]);
  });

  it('a member given by its keystore folder: the address is derived from its key file; two candidate keys need key; none refuses naming the field', async () => {
    const ks = join(dir, 'signer-x/keys');
    const key = await createKey(ks, { curve: 'ed25519', passphrase: 'a long signer passphrase', kdf: { N: 1024, r: 8, p: 1 } });
    const address = memoryAddress(Buffer.from(key.publicKeyHex, 'hex'));
    const viaKeystore = [{ keystore: './signer-x/keys', weight: 1, label: 'x', signer: endpoint(1) }, ...members.slice(1)];
    const [done] = await provision(servable({ members: viaKeystore }), dir);
    expect(calls[0]?.members[0]).toEqual({ address, weight: 1, curve: 'ed25519', label: 'x' });
    expect(readStateFile(join(stateDir, 'state.json')).signers[address]).toEqual(endpoint(1));
    expect(done?.reconcile.clean).toBe(true);
    // A second ed25519 key in the folder: which one is ambiguous until the member names it.
    const other = await createKey(ks, { curve: 'ed25519', passphrase: 'a long signer passphrase', kdf: { N: 1024, r: 8, p: 1 } });
    await expect(provision(servable({ members: viaKeystore }), dir)).rejects.toThrow(/wallets\.0\.members\.0\.key.*2 keys/);
    await provision(servable({ members: [{ ...viaKeystore[0], key: key.id }, ...members.slice(1)] }), dir);
    expect(calls.at(-1)?.members[0]?.address).toBe(address);
    expect(other.id).not.toBe(key.id);
    await expect(provision(servable({ members: [{ keystore: './nowhere', weight: 1 }, ...members.slice(1)] }), dir)).rejects.toThrow(/wallets\.0\.members\.0\.keystore/);
    await expect(provision(servable({ members: [{ ...viaKeystore[0], curve: 'secp256k1' }, ...members.slice(1)] }), dir)).rejects.toThrow(/members\.0\.keystore.*no key/);
    expect(() => config({}, { members: [{ address: 'x', keystore: './k', weight: 1, curve: 'ed25519' }] })).toThrow(/exactly one of address or keystore/);
    expect(() => config({}, { members: [{ address: 'x', weight: 1 }] })).toThrow(/curve is required/);
  });

  it('attack: re-keying an approver through provision is refused naming the field, before any ledger is touched', async () => {
    await provision(servable(), dir);
    const before = files();
    calls.length = 0;
    const attacker = Buffer.from(createSoftwareKey(new Uint8Array(32).fill(66)).publicKey).toString('hex');
    await expect(provision(servable({}, { approvers: [{ id: deviceId, public_key: attacker }] }), dir)).rejects.toThrow(/trust_files\.0\.approvers\.0\.public_key.*does not re-key/);
    expect(calls).toEqual([]);
    expect(files()).toEqual(before);
  });

  it('attack: re-weighting an approver through provision is refused naming the field', async () => {
    await provision(servable(), dir);
    const before = files();
    const heavier = { ...gated, version: 2, rules: [{ ...gated.rules[0], approvers: [{ id: deviceId, weight: 5 }] }, { rule: 'always_allow' }] } as PolicySet;
    // A fresh state file (the policy is not yet stored there) so the new weight reaches the trust-file check.
    const path = join(stateDir, 'state.json');
    writeStateFile(path, { ...readStateFile(path), policies: [] });
    await expect(provision(servable({ policy: heavier }), dir)).rejects.toThrow(/trust_files\.0\.approvers\.0\.weight.*does not re-weight/);
    expect(files().slice(1)).toEqual(before.slice(1));
  });

  it('attack: reviving a revoked approver through provision is refused naming the field', async () => {
    await provision(servable(), dir);
    const t = JSON.parse(readFileSync(trustA, 'utf8'));
    t.approvers[0].revoked = true;
    writeFileSync(trustA, JSON.stringify(t));
    await expect(provision(servable(), dir)).rejects.toThrow(/trust_files\.0\.approvers\.0\.revoked.*does not revive/);
    expect(JSON.parse(readFileSync(trustA, 'utf8')).approvers[0].revoked).toBe(true);
    // Nor through the state file: a device revoked there is not listed back as a live approver.
    const path = join(stateDir, 'state.json');
    writeStateFile(path, { ...readStateFile(path), devices: [{ id: deviceId, role: 'approver', label: 'phone', public_key: deviceKey, paired_at: 1, revoked_at: 2 }] });
    await expect(provision(servable(), dir)).rejects.toThrow(/approvers\.0\.id.*revoked in the state file/);
  });

  it('a revoked paired device is written revoked into a trust file that still trusts it (only removes power)', async () => {
    await provision(servable(), dir);
    const path = join(stateDir, 'state.json');
    writeStateFile(path, { ...readStateFile(path), devices: [{ id: deviceId, role: 'approver', label: 'phone', public_key: deviceKey, paired_at: 1, revoked_at: 2 }] });
    await provision(servable({}, { approvers: [] }), dir);
    for (const t of [trustA, trustB]) expect(JSON.parse(readFileSync(t, 'utf8')).approvers).toEqual([{ id: deviceId, public_key: deviceKey, weight: 2, revoked: true }]);
  });

  it('refusals name the field: an approver with no key, one weighed twice differently, a listed one no policy weighs', async () => {
    await expect(provision(servable({}, { approvers: [] }), dir)).rejects.toThrow(/wallets\.0\.policy\.rules\.0\.approvers\.0\.id.*no key for trust_files\.0/);
    expect(calls).toEqual([]);
    // Trust files that already hold it (written by hand, say) need no key from here, if the weight agrees.
    for (const t of [trustA, trustB]) writeFileSync(t, JSON.stringify({ format: 'vault-signer-trust', version: 1, wallets: [], approvers: [{ id: deviceId, public_key: deviceKey, weight: 1 }] }));
    await expect(provision(servable({}, { approvers: [] }), dir)).rejects.toThrow(/trust_files\.0\.approvers\.0\.weight.*does not re-weight/);
    expect(calls).toEqual([]);
    for (const t of [trustA, trustB]) writeFileSync(t, JSON.stringify({ format: 'vault-signer-trust', version: 1, wallets: [], approvers: [{ id: deviceId, public_key: deviceKey, weight: 2 }] }));
    await provision(servable({}, { approvers: [] }), dir);
    expect(JSON.parse(readFileSync(trustA, 'utf8')).approvers).toEqual([{ id: deviceId, public_key: deviceKey, weight: 2 }]);
    calls.length = 0;
    await initStateDir({ stateDir: join(dir, 'cp2'), passphrase: 'provision test passphrase', scrypt: { N: 1024, r: 8, p: 1 }, state: { ...emptyState(), drivers: [{ module: FIXTURE, options: {} }] } });
    for (const t of [trustA, trustB]) trustFile(t);
    const fresh = { state_dir: 'cp2' };
    await expect(provision(servable({}, { ...fresh, approvers: [{ id: deviceId, public_key: deviceKey, weight: 1 }] }), dir)).rejects.toThrow(/approvers\.0\.weight.*weight 2 in the policy/);
    await expect(provision(servable({}, { ...fresh, approvers: [{ id: deviceId, public_key: deviceKey }, { id: 'dev_other', public_key: deviceKey }] }), dir)).rejects.toThrow(/approvers\.1\.weight.*give its weight/);
    const twice = { ...gated, rules: [gated.rules[0], { rule: 'approval_threshold', above: '99', required_weight: 3, approvers: [{ id: deviceId, weight: 3 }] }] } as PolicySet;
    await expect(provision(servable({ policy: twice }, fresh), dir)).rejects.toThrow(/wallets\.0\.policy\.rules\.1\.approvers\.0\.weight.*one weight per approver/);
    expect(calls).toEqual([]);
  });
});

describe('vault provision (CLI process)', () => {
  beforeAll(async () => {
    await bundleClis(['provision/cli'], CLI_DIR);
  }, 120_000);

  const run = (args: string[]) => {
    try {
      return { code: 0, out: execFileSync(process.execPath, [join(CLI_DIR, 'provision/cli.js'), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }), err: '' };
    } catch (e) {
      const x = e as { status: number; stdout: string; stderr: string };
      return { code: x.status, out: x.stdout, err: x.stderr };
    }
  };

  it('prints one JSON line per wallet and exits 0; a re-run reports changed false; bad usage exits 2; a failure exits 1 naming the field', () => {
    const file = join(dir, 'provision.json');
    writeFileSync(file, JSON.stringify({ state_dir: 'cp', trust_files: ['a-trust.json'], wallets: [{ wallet: 'ops', chain: 'memory:devnet', members, quorum: 2, policy, funding: { kind: 'faucet', url: 'http://127.0.0.1:1/' } }] }));
    const first = run(['provision', '--config', file]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out.trim())).toMatchObject({ wallet: 'ops', changed: true, reconcile: 'clean' });
    // A new process has a new memory ledger: the stored account is not there, and the run says so.
    const second = run(['provision', '--config', file]);
    expect(second.code).toBe(1);
    expect(second.err).toMatch(/^vault: .*not on the ledger/m);
    expect(run(['provision']).code).toBe(2);
    expect(run(['provision', '--nope', 'x']).code).toBe(2);
    writeFileSync(file, JSON.stringify({ wallets: [] }));
    const bad = run(['provision', '--config', file]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/wallets/);
    expect(readProvisionConfig).toBeTypeOf('function');
  });
});
