/**
 * The signer as a real process: `node dist/signer/cli.js keygen` and `serve` (built with tsup from
 * the signer's sources before the suite), driver modules loaded by dynamic import from the trust
 * file, a signature over loopback, a stop by PID, and kill -9 in the middle of a burst of /sign
 * calls, after which the receipt chain still verifies and the signer starts again.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSignerClient, intentId, normalizeIntent, policyDigest, signApproval, verifyReceiptChain, type PolicySet, type SignRequest, type WalletDescriptor } from '@vault/sdk';
import { MemoryLedger, createMemoryDriver, createSoftwareKey, memoryAddress } from '@vault/sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateReceiptKey } from '../../src/signer/keystore.js';
import { SignerState } from '../../src/signer/state.js';
import { approver, TEST_KDF } from './helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '../..');
const CLI = join(pkg, 'dist/signer/cli.js');
/** The bin the package publishes: it sizes libuv's thread pool, then runs dist/signer/cli.js. */
const BIN = join(pkg, 'bin/vault-signer.cjs');
const FIXTURE = join(here, 'fixtures/memory-driver.mjs');
const PASS = 'process test passphrase';
const ENV = { ...process.env, VAULT_SIGNER_PASSPHRASE: PASS, VAULT_SIGNER_TOKEN: '' };

let root: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  // Build exactly the bin the package ships (dist/signer/cli.js) from the current sources.
  execFileSync(join(pkg, 'node_modules/.bin/tsup'), ['src/signer/cli.ts', '--format', 'esm', '--platform', 'node', '--target', 'node20', '--out-dir', 'dist/signer', '--no-config'], { cwd: pkg, stdio: 'pipe' });
  root = mkdtempSync(join(tmpdir(), 'vault-signer-proc-'));
}, 60_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

function cli(args: string[]): string {
  return execFileSync(process.execPath, [CLI, ...args], { env: ENV, encoding: 'utf8' });
}

interface Started {
  child: ChildProcess;
  info: { listening: string; pid: number; receipt_head: string; token_file: string | null; repaired_bytes: number };
}

function serve(args: string[], how: { script?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Started> {
  const child = spawn(process.execPath, [how.script ?? CLI, 'serve', ...args], { env: how.env ?? ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((res, rej) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) res({ child, info: JSON.parse(out.slice(0, nl)) });
    });
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => rej(new Error(`signer exited ${code}: ${err}`)));
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) return res({ code: child.exitCode, signal: child.signalCode });
    child.on('exit', (code, signal) => res({ code, signal }));
  });
}

const approvers = [approver('alice', 11), approver('bob', 12), approver('carol', 13)];
let wallet: WalletDescriptor;
let policy: PolicySet;
let signerAddress: string;
let keystore: string;
let stateDir: string;
let trustPath: string;

function request(memo: string): SignRequest {
  const req = { wallet: wallet.wallet, destination: `mem1${'cd'.repeat(20)}`, amount: '2500000', memo };
  const id = intentId(req);
  const params = { kind: 'xrpl' as const, sequence: 1, base_fee_drops: 10, last_ledger_sequence: 21, network_id: null };
  const digest = createMemoryDriver({ ledger: new MemoryLedger() }).buildPayload({ intent: normalizeIntent(req), wallet, params }).digest;
  return {
    intent: { id, created_at: Math.floor(Date.now() / 1000) - 5, request: req },
    wallet,
    policy,
    policy_digest: policyDigest(policy),
    approvals: approvers.map((a) => signApproval({ approver_id: a.id, intent: id, verdict: 'approve', at: Math.floor(Date.now() / 1000) - 1, strong_auth: true }, a.secret)),
    params,
    protect: { known_destinations: [req.destination], burned: [], evm_code: [], token_owner_burned: false, onchain_symbol: null, compliance_cleared: false, attestation_valid: false },
    expected_payload_digest: digest,
    signer_address: signerAddress,
  };
}

describe('vault-signer as a process', () => {
  it('keygen prints the public key and its address for each chain the configured drivers know', () => {
    keystore = join(root, 'keys');
    stateDir = join(root, 'state');
    const driversFile = join(root, 'drivers.json');
    writeFileSync(driversFile, JSON.stringify({ drivers: [{ module: FIXTURE, options: { chain: 'memory:devnet' } }] }));
    const out = JSON.parse(cli(['keygen', '--keystore', keystore, '--curve', 'ed25519', '--scope', 'wallet=ops', '--drivers', driversFile, '--kdf-log2', '10']));
    expect(out.public_key).toMatch(/^[0-9a-f]{64}$/);
    signerAddress = memoryAddress(Buffer.from(out.public_key, 'hex'));
    expect(out.addresses).toEqual({ 'memory:devnet': signerAddress });
    expect(out.scope).toEqual({ wallets: ['ops'] });
    expect(statSync(out.file).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(out)).not.toContain('ciphertext');
    // A secp256k1 key has no memory address (that family takes ed25519 only).
    const secp = JSON.parse(cli(['keygen', '--keystore', keystore, '--curve', 'secp256k1', '--drivers', driversFile, '--kdf-log2', '10']));
    expect(secp.addresses).toEqual({});
    expect(() => execFileSync(process.execPath, [CLI, 'keygen', '--keystore', keystore, '--curve', 'rsa'], { env: ENV, stdio: 'pipe' })).toThrow(/--curve/);

    const others = [createSoftwareKey(), createSoftwareKey()].map((k) => memoryAddress(k.publicKey));
    wallet = {
      wallet: 'ops',
      chain: 'memory:devnet',
      control: {
        kind: 'native_multisig',
        address: memoryAddress(createSoftwareKey().publicKey),
        signers: [signerAddress, ...others].map((address, i) => ({ address, curve: 'ed25519' as const, weight: 1, label: `m${i}` })),
        quorum: 2,
      },
    };
    policy = { wallet: 'ops', version: 1, rules: [{ rule: 'approval_threshold', above: '0', required_weight: 3, approvers: approvers.map((a) => ({ id: a.id, weight: 1 })) }] };
    trustPath = join(root, 'trust.json');
    writeFileSync(
      trustPath,
      JSON.stringify({
        format: 'vault-signer-trust',
        version: 1,
        wallets: [{ descriptor: wallet, policy_digest: policyDigest(policy) }],
        approvers: approvers.map((a) => ({ id: a.id, public_key: a.publicKeyHex, weight: 1 })),
        drivers: [{ module: './drivers-link.mjs' }],
      }),
    );
    // A relative module path resolves against the trust file's directory.
    writeFileSync(join(root, 'drivers-link.mjs'), `export * from ${JSON.stringify(FIXTURE)};\n`);
  }, 60_000);

  it('serve: signs over loopback, creates a 0600 token file, and stops cleanly by PID', async () => {
    const { child, info } = await serve(['--keystore', keystore, '--trust', trustPath, '--state-dir', stateDir, '--port', '0', '--kdf-log2', '10']);
    expect(info.pid).toBe(child.pid);
    expect(info.token_file).toBe(join(stateDir, 'signer-token'));
    expect(statSync(info.token_file!).mode & 0o777).toBe(0o600);
    const token = readFileSync(info.token_file!, 'utf8').trim();
    const client = createSignerClient({ baseUrl: info.listening, token });
    const health = await client.health();
    expect(health['receipt_head']).toBe(info.receipt_head);
    const signed = await client.sign(request('first'));
    expect(signed.ok).toBe(true);
    if (signed.ok) expect(signed.response.summary).toBe(`send 2.5 native to mem1${'cd'.repeat(20)} on memory:devnet`);
    await expect(createSignerClient({ baseUrl: info.listening, token: 'not-the-token-at-all' }).keys()).rejects.toThrow();
    process.kill(info.pid, 'SIGTERM');
    expect(await exited(child)).toEqual({ code: 0, signal: null });
    expect(existsSync(join(stateDir, 'signer.lock'))).toBe(false);
  }, 30_000);

  it('serve: GET /ready is 200 and GET /metrics wants VAULT_METRICS_TOKEN from the environment', async () => {
    const metricsToken = 'metrics-token-from-env-0123456789';
    const { child, info } = await serve(['--keystore', keystore, '--trust', trustPath, '--state-dir', stateDir, '--port', '0', '--kdf-log2', '10'], { env: { ...ENV, VAULT_METRICS_TOKEN: metricsToken } });
    const ready = await fetch(`${info.listening}/ready`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { ready: boolean }).ready).toBe(true);
    expect((await fetch(`${info.listening}/metrics`)).status).toBe(401);
    const m = await fetch(`${info.listening}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(m.status).toBe(200);
    expect(await m.text()).toMatch(/^vault_http_requests_total\{method="GET",route="\/ready",status="2xx"\} 1$/m);
    process.kill(info.pid, 'SIGTERM');
    expect(await exited(child)).toEqual({ code: 0, signal: null });
  }, 30_000);

  it('kill -9 in the middle of a burst of /sign calls leaves a receipt chain that verifies; the signer starts again', async () => {
    const { child, info } = await serve(['--keystore', keystore, '--trust', trustPath, '--state-dir', stateDir, '--port', '0']);
    const token = readFileSync(join(stateDir, 'signer-token'), 'utf8').trim();
    const client = createSignerClient({ baseUrl: info.listening, token, timeoutMs: 60_000 });
    let done = 0;
    let killed = false;
    // Kill as the fifth answer arrives, in its own callback (a timer's poll could wake, on a loaded
    // machine, only after the whole burst was answered), while the rest are in flight.
    const killAfterFifth = () => {
      done += 1;
      if (done === 5 && !killed) {
        killed = true;
        process.kill(info.pid, 'SIGKILL');
      }
    };
    const burst = Array.from({ length: 160 }, (_, i) =>
      client.sign(request(`burst-${i}`)).then(
        (r) => (killAfterFifth(), r.ok ? r.response.receipt_head : 'refused'),
        () => 'lost',
      ),
    );
    for (let waited = 0; !killed && waited < 40_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    if (!killed) process.kill(info.pid, 'SIGKILL');
    expect((await exited(child)).signal).toBe('SIGKILL');
    const results = await Promise.all(burst);
    const answered = results.filter((r) => r !== 'lost' && r !== 'refused');
    expect(results).not.toContain('refused');
    // The kill landed mid-burst: some calls were answered, some never were.
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.length).toBeLessThan(results.length);
    // Simulate the torn tail a crash mid-write can leave, on top of whatever the kill left.
    appendFileSync(join(stateDir, 'journal.jsonl'), '{"receipt":{"seq":');

    const key = await loadOrCreateReceiptKey(stateDir, PASS, TEST_KDF);
    const state = SignerState.open(stateDir, key);
    try {
      expect(state.repairedBytes).toBeGreaterThan(0);
      // Every answered signature's receipt made it to disk before its reply.
      const hashes = new Set(state.records().map((r) => r.hash));
      for (const head of answered) expect(hashes.has(head)).toBe(true);
      expect(verifyReceiptChain(state.records(), state.receiptPublicKey, { head: state.head, length: state.length }).verified).toBe(true);
    } finally {
      state.close();
    }
    const again = await serve(['--keystore', keystore, '--trust', trustPath, '--state-dir', stateDir, '--port', '0']);
    expect(again.info.repaired_bytes).toBe(0);
    expect(again.info.receipt_head).toMatch(/^[0-9a-f]{64}$/);
    process.kill(again.info.pid, 'SIGTERM');
    expect((await exited(again.child)).code).toBe(0);
  }, 90_000);

  it('the published bin (bin/vault-signer.cjs) runs the same CLI: usage errors, keygen, serve and a stop by PID', async () => {
    const usage = spawnSync(process.execPath, [BIN], { env: ENV, encoding: 'utf8' });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/^vault-signer: no command\nusage:/);
    const out = JSON.parse(execFileSync(process.execPath, [BIN, 'keygen', '--keystore', join(root, 'bin-keys'), '--curve', 'ed25519', '--kdf-log2', '10'], { env: ENV, encoding: 'utf8' }));
    expect(out.public_key).toMatch(/^[0-9a-f]{64}$/);
    const { child, info } = await serve(['--keystore', keystore, '--trust', trustPath, '--state-dir', stateDir, '--port', '0'], { script: BIN });
    const token = readFileSync(join(stateDir, 'signer-token'), 'utf8').trim();
    const signed = await createSignerClient({ baseUrl: info.listening, token }).sign(request('through the bin'));
    expect(signed.ok).toBe(true);
    process.kill(info.pid, 'SIGTERM');
    expect(await exited(child)).toEqual({ code: 0, signal: null });
  }, 30_000);

  // libuv reads UV_THREADPOOL_SIZE once, when its pool starts. On Node 20 the ESM loader starts it
  // before an ES module's code runs; a CommonJS entry runs before anything can, on every version.
  // So the bin's process must have the threads of one started with that size in the environment.
  // The pool starts lazily (on Node 22 and 24 only at the first use), so each process first signs
  // a request: its three approval signatures are checked on the pool. Linux only (/proc).
  it.runIf(process.platform === 'linux')('the bin sizes libuv\'s thread pool before anything starts it (cores - 1 threads, at least 1; an explicit size is kept)', async () => {
    const threadsOf = async (script: string, env: NodeJS.ProcessEnv): Promise<number> => {
      const dir = join(root, `pool-${children.length}`);
      const { child, info } = await serve(['--keystore', keystore, '--trust', trustPath, '--state-dir', dir, '--port', '0'], { script, env });
      const token = readFileSync(join(dir, 'signer-token'), 'utf8').trim();
      const signed = await createSignerClient({ baseUrl: info.listening, token }).sign(request(`pool-${children.length}`));
      expect(signed.ok).toBe(true);
      const n = readdirSync(`/proc/${info.pid}/task`).length;
      process.kill(info.pid, 'SIGTERM');
      await exited(child);
      return n;
    };
    const unset: NodeJS.ProcessEnv = { ...ENV };
    delete unset['UV_THREADPOOL_SIZE'];
    const size = Math.max(1, availableParallelism() - 1);
    const viaBin = await threadsOf(BIN, unset);
    expect(viaBin).toBe(await threadsOf(CLI, { ...unset, UV_THREADPOOL_SIZE: String(size) }));
    // Started straight from the ES module, the pool keeps libuv's default of 4.
    expect(await threadsOf(CLI, unset)).toBe(viaBin + 4 - size);
    // A size given in the environment is kept.
    expect(await threadsOf(BIN, { ...unset, UV_THREADPOOL_SIZE: '7' })).toBe(viaBin + 7 - size);
  }, 60_000);

  it('refuses to start when the trust file is invalid, naming the field', async () => {
    const bad = join(root, 'bad-trust.json');
    writeFileSync(bad, JSON.stringify({ format: 'vault-signer-trust', version: 1, wallets: [], approvers: [{ id: 'a', public_key: 'not hex', weight: 1 }] }));
    await expect(serve(['--keystore', keystore, '--trust', bad, '--state-dir', join(root, 'state2'), '--port', '0'])).rejects.toThrow(/trust\.approvers\.0\.public_key/);
  }, 30_000);
});
