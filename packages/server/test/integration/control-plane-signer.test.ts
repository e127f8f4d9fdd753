/**
 * The control plane against REAL signer processes.
 *
 * - one ledger process (fixtures/ledger.mjs, a memory ledger over HTTP) that both services reach
 *   through the same driver module (fixtures/remote-memory-driver.mjs);
 * - three signers, each `node <built>/signer/cli.js keygen` (one ed25519 key each) and
 *   `serve --port 0` with its own keystore, state dir, token file and trust file;
 * - the control plane, `node <built>/control-plane/cli.js init` then `serve --port 0`, whose state
 *   file names the three signers (URL + token per member address) and the driver module;
 * - the SDK clients (createControlPlaneClient, createSignerClient) on real loopback sockets.
 *
 * Three 2-of-3 wallets over the same three member keys:
 *   ops        every signer pins the control plane's policy         -> confirmed, 3 signatures
 *   ops-mixed  signer C pins a different policy digest              -> confirmed (A+B reach quorum);
 *                                                                     C's policy_mismatch is in signers[]
 *   ops-short  signers B and C pin a different policy digest        -> HTTP 500 stage signers,
 *                                                                     reason policy_mismatch; nothing submitted
 * The CLIs are built with tsup from src (same entries and externals as the package's bins) into a
 * private ignored directory, like test/control-plane/crash.test.ts does, so a concurrent full
 * `tsup` run (clean: true) or another suite's build of dist/ cannot pull them away mid-test.
 */
import {
  createControlPlaneClient,
  createSignerClient,
  generateEd25519KeyPair,
  parseRegistration,
  policyDigest,
  signApproval,
  SignerRefusedError,
  verifyReceiptChain,
  type ControlPlaneClient,
  type ExecuteOutcome,
  type PolicySet,
  type WalletDescriptor,
} from '@vault/sdk';
import { createSoftwarePasskey, memoryAddress } from '@vault/sdk/testing';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_AWAITED } from '../../src/control-plane/signers.js';
import { bundleClis } from '../cli-bundle.js';
import { until } from '../control-plane/helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '../..');
const outDir = join(pkg, '.cache/integration-test');
const SIGNER_CLI = join(outDir, 'signer/cli.js');
const CP_CLI = join(outDir, 'control-plane/cli.js');
const LEDGER = join(here, 'fixtures/ledger.mjs');
const DRIVER = join(here, 'fixtures/remote-memory-driver.mjs');
const CHAIN = 'memory:devnet';
const SIGNER_PASS = 'integration signer passphrase';
const OPERATOR_PASS = 'integration operator passphrase';
const SIGNER_ENV = { ...process.env, VAULT_SIGNER_PASSPHRASE: SIGNER_PASS, VAULT_SIGNER_TOKEN: '' };
const CP_ENV = { ...process.env, VAULT_OPERATOR_PASSPHRASE: OPERATOR_PASS };

async function buildClis(): Promise<void> {
  await bundleClis(['signer/cli', 'control-plane/cli'], outDir);
}

// ------------------------------------------------------------------ processes

const children: ChildProcess[] = [];

/** Spawns a process and resolves with the first stdout line matching `match` (parsed as JSON). */
function start(args: string[], env: NodeJS.ProcessEnv, match: (line: string) => boolean, ms = 30_000): Promise<{ child: ChildProcess; line: Record<string, any> }> {
  const child = spawn(process.execPath, args, { env, cwd: pkg, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((res, rej) => {
    let out = '';
    let err = '';
    let found = false;
    const timer = setTimeout(() => rej(new Error(`timeout starting ${args.join(' ')}: ${out.slice(-400)} ${err.slice(-400)}`)), ms);
    // Keeps draining stdout after the line is found (the control plane logs every request).
    child.stdout?.on('data', (d: Buffer) => {
      if (found) return;
      out += d.toString();
      for (const line of out.split('\n')) {
        if (line.trim() !== '' && match(line)) {
          found = true;
          clearTimeout(timer);
          res({ child, line: JSON.parse(line) });
          return;
        }
      }
    });
    child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      rej(new Error(`${args[0]} exited ${code ?? signal}: ${err.slice(-800)}`));
    });
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) return res({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => res({ code, signal }));
  });
}

/** SIGTERM by PID, SIGKILL if it has not exited within 5 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const done = exited(child);
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => child.pid !== undefined && child.exitCode === null && process.kill(child.pid, 'SIGKILL'), 5_000);
  await done;
  clearTimeout(timer);
}

// ------------------------------------------------------------------ world

interface Approver {
  id: string;
  secretKey: Uint8Array;
  publicKeyHex: string;
}
interface RealSigner {
  name: string;
  dir: string;
  keystore: string;
  stateDir: string;
  trustPath: string;
  publicKey: string;
  address: string;
  child?: ChildProcess;
  pid?: number;
  url?: string;
  token?: string;
  receiptPublicKey?: string;
}

let root = '';
let rpcUrl = '';
let ledgerProc: ChildProcess | undefined;
let cpProc: ChildProcess | undefined;
let cpUrl = '';
let cpStateDir = '';
let cp: ControlPlaneClient;
const signers: RealSigner[] = [];
const approvers: Approver[] = ['alice', 'bob', 'carol'].map((id) => {
  const k = generateEd25519KeyPair();
  return { id, secretKey: k.secretKey, publicKeyHex: k.publicKeyHex };
});
const wallets: Record<'ops' | 'ops-mixed' | 'ops-short' | 'ops-agent', WalletDescriptor> = {} as never;
/**
 * Passkeys (issue #24): alice's phone registered one at pairing. Signers A and B list it in their
 * trust files; C does not, so C counts alice's strong approvals as weak.
 */
const PAGE_ORIGIN = 'http://localhost:5999';
const alicePasskey = createSoftwarePasskey({ rp_id: 'localhost', origin: PAGE_ORIGIN });
const aliceRegistered = (() => {
  const challenge = new Uint8Array(32).fill(5);
  const r = parseRegistration(alicePasskey.register(challenge), { challenge, rp_id: 'localhost', origins: [PAGE_ORIGIN] });
  if (!r.ok) throw new Error(r.message);
  return r.passkey;
})();
const PASSKEY_TRUSTED_BY = ['A', 'B'];
const policies: Record<string, PolicySet> = {};
/** Per signer name: the wallets whose pinned policy digest is NOT the control plane's. */
const WRONG_PIN: Record<string, string[]> = { A: [], B: ['ops-short'], C: ['ops-mixed', 'ops-short'] };

async function rpc<T = any>(method: string, ...params: unknown[]): Promise<T> {
  const r = await fetch(`${rpcUrl}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method, params }) });
  const body = await r.json();
  if (!r.ok) throw new Error(`ledger rpc ${method}: ${JSON.stringify(body)}`);
  return body as T;
}

const freshAddress = () => memoryAddress(generateEd25519KeyPair().publicKey);
const now = () => Math.floor(Date.now() / 1000);

function policyOf(wallet: string, version = 1): PolicySet {
  return {
    wallet,
    version,
    rules: [
      { rule: 'hard_ceiling', max: '500000000' },
      { rule: 'approval_threshold', above: '0', required_weight: 2, approvers: approvers.map((a) => ({ id: a.id, weight: 1 })) },
      { rule: 'always_allow' },
    ],
  };
}

function approve(intent: string, who: string) {
  const a = approvers.find((x) => x.id === who) as Approver;
  return signApproval({ approver_id: a.id, intent, verdict: 'approve', at: now() - 1, strong_auth: false }, a.secretKey);
}

function signerClient(s: RealSigner) {
  return createSignerClient({ baseUrl: s.url as string, token: s.token as string, timeoutMs: 20_000 });
}

beforeAll(async () => {
  const t0 = Date.now();
  await buildClis();
  root = mkdtempSync(join(tmpdir(), 'vault-integration-'));

  // 1. The ledger both services reach over HTTP.
  const ledger = await start([LEDGER], process.env, (l) => l.includes('rpc_url'));
  ledgerProc = ledger.child;
  rpcUrl = ledger.line['rpc_url'];
  const driverConfig = { module: DRIVER, options: { chain: CHAIN, rpc_url: rpcUrl } };

  // 2. One key per signer, made by the real CLI (the drivers file lets keygen print the address).
  const driversFile = join(root, 'drivers.json');
  writeFileSync(driversFile, JSON.stringify({ drivers: [driverConfig] }));
  for (const name of ['A', 'B', 'C']) {
    const dir = join(root, `signer-${name}`);
    const keystore = join(dir, 'keys');
    const out = JSON.parse(
      execFileSync(process.execPath, [SIGNER_CLI, 'keygen', '--keystore', keystore, '--curve', 'ed25519', '--scope', 'wallet=ops,wallet=ops-mixed,wallet=ops-short,wallet=ops-agent', '--drivers', driversFile, '--kdf-log2', '10'], {
        env: SIGNER_ENV,
        encoding: 'utf8',
      }),
    );
    expect(out.addresses[CHAIN]).toBe(memoryAddress(Buffer.from(out.public_key, 'hex')));
    signers.push({ name, dir, keystore, stateDir: join(dir, 'state'), trustPath: join(dir, 'trust.json'), publicKey: out.public_key, address: out.addresses[CHAIN] });
  }

  // 3. Three 2-of-3 wallets over those keys, funded on the ledger with the members as signer list.
  for (const id of ['ops', 'ops-mixed', 'ops-short', 'ops-agent'] as const) {
    const address = freshAddress();
    await rpc('createAccount', { address, balance: '1000000000', signers: { members: signers.map((s) => ({ address: s.address, weight: 1 })), quorum: 2 }, masterKey: false });
    wallets[id] = {
      wallet: id,
      chain: CHAIN,
      control: { kind: 'native_multisig', address, quorum: 2, signers: signers.map((s) => ({ address: s.address, curve: 'ed25519' as const, weight: 1, label: `signer-${s.name}` })) },
    };
    policies[id] = policyOf(id);
  }
  // An agent's intents on ops-agent need a strong (passkey-proven) human approval besides the weight.
  policies['ops-agent'] = { ...policyOf('ops-agent'), rules: [...policyOf('ops-agent').rules, { rule: 'require_human_approver_for_agent_initiated' }] };

  // 4. Each signer's own trust file, then `serve --port 0`.
  for (const s of signers) {
    writeFileSync(
      s.trustPath,
      JSON.stringify({
        format: 'vault-signer-trust',
        version: 1,
        wallets: Object.values(wallets).map((w) => ({
          descriptor: w,
          // A wrong pin: the digest of the same rules under another version number.
          policy_digest: WRONG_PIN[s.name]?.includes(w.wallet) ? policyDigest(policyOf(w.wallet, 2)) : policyDigest(policies[w.wallet]),
          max_fee: 100,
        })),
        approvers: approvers.map((a) => ({
          id: a.id,
          public_key: a.publicKeyHex,
          weight: 1,
          ...(a.id === 'alice' && PASSKEY_TRUSTED_BY.includes(s.name) ? { passkey: { ...aliceRegistered, origins: [PAGE_ORIGIN] } } : {}),
        })),
        drivers: [driverConfig],
      }),
    );
  }
  await Promise.all(
    signers.map(async (s) => {
      const { child, line } = await start([SIGNER_CLI, 'serve', '--keystore', s.keystore, '--trust', s.trustPath, '--state-dir', s.stateDir, '--port', '0', '--kdf-log2', '10'], SIGNER_ENV, (l) => l.includes('"listening"'));
      s.child = child;
      s.pid = line['pid'];
      s.url = line['listening'];
      s.receiptPublicKey = line['receipt_public_key'];
      s.token = readFileSync(line['token_file'], 'utf8').trim();
      expect(s.pid).toBe(child.pid);
    }),
  );

  // 5. The control plane: `init`, then the state file naming the signers and the driver, then `serve`.
  const stateDir = join(root, 'cp-state');
  cpStateDir = stateDir;
  execFileSync(process.execPath, [CP_CLI, 'init', '--state-dir', stateDir], { env: CP_ENV, encoding: 'utf8' });
  const statePath = join(stateDir, 'state.json');
  const state = JSON.parse(readFileSync(statePath, 'utf8'));
  writeFileSync(
    statePath,
    JSON.stringify({
      ...state,
      wallets: Object.values(wallets),
      policies: Object.values(policies),
      devices: approvers.map((a) => ({ id: a.id, role: 'approver', label: a.id, public_key: a.publicKeyHex, paired_at: now() - 60, revoked_at: null, ...(a.id === 'alice' ? { passkey: aliceRegistered } : {}) })),
      webauthn: { rp_id: 'localhost', origins: [PAGE_ORIGIN] },
      signers: Object.fromEntries(signers.map((s) => [s.address, { url: s.url, token: s.token, label: `signer-${s.name}` }])),
      drivers: [driverConfig],
    }),
  );
  const served = await start([CP_CLI, 'serve', '--state-dir', stateDir, '--port', '0'], CP_ENV, (l) => l.includes('"event":"listening"'));
  cpProc = served.child;
  cpUrl = served.line['url'];
  cp = createControlPlaneClient({ baseUrl: cpUrl, timeoutMs: 30_000 });
  await cp.unlock(OPERATOR_PASS);
  console.log(`integration set-up: ${Date.now() - t0} ms`);
}, 90_000);

afterAll(async () => {
  // Stop every process we started by its PID, then make sure none is left.
  await Promise.all(children.map((c) => stop(c)));
  for (const c of children) expect(c.exitCode !== null || c.signalCode !== null).toBe(true);
  if (root) rmSync(root, { recursive: true, force: true });
}, 30_000);

/** Creates an intent on `wallet`, approves it with alice and bob (weight 2). */
async function approvedIntent(wallet: string, destination: string, amount: string): Promise<string> {
  const created = await cp.createIntent({ wallet, destination, amount });
  expect(created.status).toBe('pending_approvals');
  // The policy refuses before any signer is asked.
  await expect(cp.execute(created.intentId)).rejects.toMatchObject({ data: { stage: 'policy', reason: 'pending_approvals' } });
  const first = await cp.approveSigned(created.intentId, approve(created.intentId, 'alice'));
  expect(first.status).toBe('pending_approvals');
  const second = await cp.approveSigned(created.intentId, approve(created.intentId, 'bob'));
  expect(second.status).toBe('allowed');
  return created.intentId;
}

const byName = (outcome: { signers: ExecuteOutcome['signers'] }, name: string) => outcome.signers.find((x) => x.signer === `signer-${name}`);
/** A signer's receipt kinds for one intent, sorted. */
const kindsOf = async (s: RealSigner, id: string) =>
  ((await signerClient(s).receipts(1000)) as { receipts: { kind: string; intentId?: string }[] }).receipts.filter((x) => x.intentId === id).map((x) => x.kind).sort();
/**
 * A signer's line when execute went on at the quorum: its answer, or not awaited when the others
 * carried the quorum first. Either way its own receipt chain shows what it answered (`kind`),
 * waited for here, since an answer not awaited still comes.
 */
async function answeredOrNotAwaited(outcome: { signers: ExecuteOutcome['signers'] }, s: RealSigner, id: string, kind: string, line: object): Promise<void> {
  const got = byName(outcome, s.name);
  if (got?.detail !== NOT_AWAITED) expect(got, s.name).toMatchObject(line);
  await until(`${s.name}'s ${kind} for the intent`, async () => ((await kindsOf(s, id)).includes(kind) ? true : undefined), 10_000);
}

describe('control plane + real signer processes', () => {
  it('the signers are up, each holding its own key for the wallets', async () => {
    for (const s of signers) {
      const health = await signerClient(s).health();
      expect(health['ok']).toBe(true);
      const keys = (await signerClient(s).keys()) as { keys: { public_key: string; unlocked: boolean; addresses: Record<string, string> }[] };
      expect(keys.keys).toHaveLength(1);
      expect(keys.keys[0]).toMatchObject({ public_key: s.publicKey, unlocked: true, addresses: { [CHAIN]: s.address } });
    }
    const cpWallets = await cp.wallets();
    expect(cpWallets.map((w) => w['policy_digest'])).toEqual(Object.values(policies).map((p) => policyDigest(p)));
  });

  it('approved intent: every signer is asked, the control plane assembles at the quorum, submits and confirms', async () => {
    const dest = freshAddress();
    const walletAddress = (wallets.ops.control as { address: string }).address;
    const before = BigInt(await rpc<string>('balance', walletAddress));
    const id = await approvedIntent('ops', dest, '2500000');
    const outcome = await cp.execute(id);
    expect(outcome.status).toBe('confirmed');
    expect(outcome.txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(outcome.weight).toBe(2);
    expect(outcome.quorum).toBe(2);
    expect(outcome.signers).toHaveLength(3);
    // The first two answers reach the quorum; the third is not waited for (it signs all the same).
    const signedBy = signers.filter((s) => byName(outcome, s.name)?.ok);
    expect(signedBy).toHaveLength(2);
    for (const s of signedBy) expect(byName(outcome, s.name)).toMatchObject({ address: s.address, ok: true, detail: expect.stringMatching(/^signed \(software\); signer receipt [0-9a-f]{64}$/) });
    expect(outcome.signers.filter((x) => !x.ok)).toEqual([expect.objectContaining({ detail: NOT_AWAITED })]);
    // Idempotent: executing again answers the stored outcome.
    expect((await cp.execute(id)).txHash).toBe(outcome.txHash);
    expect((await cp.intent(id)).status).toBe('confirmed');

    // The ledger, read independently of both services.
    const txs = await rpc<{ hash: string; payload: { account: string; destination: string; amount: string; fee: string }; signers: string[] }[]>('txs');
    const tx = txs.find((t) => t.hash === outcome.txHash);
    expect(tx).toBeDefined();
    expect(tx?.payload).toMatchObject({ account: walletAddress, destination: dest, amount: '2500000' });
    expect([...(tx?.signers ?? [])].sort()).toEqual(signedBy.map((s) => s.address).sort());
    expect(await rpc<string>('balance', dest)).toBe('2500000');
    expect(BigInt(await rpc<string>('balance', walletAddress))).toBe(before - 2_500_000n - BigInt(tx?.payload.fee ?? 0));
  }, 30_000);

  it('passkeys: strong_auth without an assertion is a 400 at the control plane; with one, A and B count it strong and sign, C (no passkey in its trust file) counts it weak and refuses', async () => {
    const created = await cp.createIntent({ wallet: 'ops-agent', destination: freshAddress(), amount: '2500000', initiator: 'agent:payroll' });
    expect(created.status).toBe('pending_approvals');
    const alice = approvers.find((a) => a.id === 'alice') as Approver;
    const strong = signApproval({ approver_id: 'alice', intent: created.intentId, verdict: 'approve', at: now() - 1, strong_auth: true }, alice.secretKey);
    await expect(cp.approveSigned(created.intentId, strong)).rejects.toMatchObject({ status: 400, data: { path: 'webauthn', reason: 'strong_auth_unproven' } });
    const r1 = await cp.approveSigned(created.intentId, alicePasskey.attach(strong));
    expect(r1.status).toBe('pending_approvals');
    expect(r1.decision.reasons.join(' ')).not.toMatch(/strong-auth/);
    expect((await cp.approveSigned(created.intentId, approve(created.intentId, 'bob'))).status).toBe('allowed');
    const outcome = await cp.execute(created.intentId);
    expect(outcome.status).toBe('confirmed');
    expect(outcome.weight).toBe(2);
    expect(byName(outcome, 'A')).toMatchObject({ ok: true });
    expect(byName(outcome, 'B')).toMatchObject({ ok: true });
    const [, , c] = signers as [RealSigner, RealSigner, RealSigner];
    await answeredOrNotAwaited(outcome, c, created.intentId, 'sign.refused', { ok: false, detail: expect.stringMatching(/0 of 1 strong-auth human approval/) });
  }, 30_000);

  it('a signer pinning a different policy digest refuses (policy_mismatch); with quorum from the others it is recorded in signers[]', async () => {
    const dest = freshAddress();
    const id = await approvedIntent('ops-mixed', dest, '1000000');
    const outcome = await cp.execute(id);
    expect(outcome.status).toBe('confirmed');
    expect(outcome.weight).toBe(2);
    expect(byName(outcome, 'A')).toMatchObject({ ok: true });
    expect(byName(outcome, 'B')).toMatchObject({ ok: true });
    const [, , c] = signers as [RealSigner, RealSigner, RealSigner];
    await answeredOrNotAwaited(outcome, c, id, 'sign.refused', { address: c.address, ok: false, detail: expect.stringMatching(/^refused \(policy_mismatch\): policy [0-9a-f]{64} is not the policy pinned for ops-mixed/) });
    const txs = await rpc<{ hash: string; signers: string[] }[]>('txs');
    expect([...(txs.find((t) => t.hash === outcome.txHash)?.signers ?? [])].sort()).toEqual([signers[0]?.address, signers[1]?.address].sort());
    expect(await rpc<string>('balance', dest)).toBe('1000000');
  }, 30_000);

  it('short of quorum because two signers refuse: HTTP 500 at stage signers, reason policy_mismatch; nothing reaches the ledger', async () => {
    const dest = freshAddress();
    const id = await approvedIntent('ops-short', dest, '1000000');
    const txsBefore = (await rpc<unknown[]>('txs')).length;
    const res = await fetch(`${cpUrl}/intent/${id}/execute`, { method: 'POST', headers: { authorization: `Bearer ${cp.getToken()}` } });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { code: number; data: { stage: string; reason: string; signer: string; weight: number; quorum: number; signers: ExecuteOutcome['signers'] } } };
    expect(body.error.code).toBe(-32602);
    expect(body.error.data).toMatchObject({ stage: 'signers', reason: 'policy_mismatch', weight: 1, quorum: 2 });
    expect([signers[1]?.address, signers[2]?.address]).toContain(body.error.data.signer);
    const data = body.error.data;
    expect(byName(data, 'A')).toMatchObject({ ok: true });
    expect(byName(data, 'B')).toMatchObject({ ok: false, detail: expect.stringMatching(/^refused \(policy_mismatch\)/) });
    expect(byName(data, 'C')).toMatchObject({ ok: false, detail: expect.stringMatching(/^refused \(policy_mismatch\)/) });
    // The typed client maps it to a SignerRefusedError keeping stage and reason.
    const err = await cp.execute(id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SignerRefusedError);
    expect((err as SignerRefusedError).reason).toBe('policy_mismatch');
    expect((err as SignerRefusedError).data).toMatchObject({ stage: 'signers', reason: 'policy_mismatch' });
    expect((await cp.intent(id)).status).toBe('allowed');
    expect((await rpc<unknown[]>('txs')).length).toBe(txsBefore);
    expect(await rpc<string>('balance', dest)).toBe('0');
  }, 30_000);

  it('short of quorum with two signers down, the ledger moves on, they come back: the next execute reuses the payload the first signer signed, and one transaction lands', async () => {
    const [, b, c] = signers as [RealSigner, RealSigner, RealSigner];
    const dest = freshAddress();
    const id = await approvedIntent('ops', dest, '1100000');
    for (const s of [b, c]) await stop(s.child as ChildProcess);
    const first = await cp.execute(id);
    expect(first).toMatchObject({ status: 'awaiting_signatures', weight: 1, quorum: 2 });
    expect(byName(first, 'A')).toMatchObject({ ok: true });
    // Fresh chain parameters would now give another payload, which A must refuse while its first
    // one can still land; the control plane reuses the first.
    await rpc('close', 3);
    for (const s of [b, c]) {
      const { child, line } = await start([SIGNER_CLI, 'serve', '--keystore', s.keystore, '--trust', s.trustPath, '--state-dir', s.stateDir, '--port', new URL(s.url as string).port, '--kdf-log2', '10'], SIGNER_ENV, (l) => l.includes('"listening"'));
      s.child = child;
      s.pid = line['pid'];
    }
    const done = await cp.execute(id);
    expect(done.status).toBe('confirmed');
    // A re-signed the payload it signed first (or B and C carried the quorum before it answered).
    await answeredOrNotAwaited(done, signers[0] as RealSigner, id, 'sign.repeated', { ok: true });
    const sent = (await rpc<{ payload: { destination: string } }[]>('txs')).filter((t) => t.payload.destination === dest);
    expect(sent).toHaveLength(1);
    expect(await rpc<string>('balance', dest)).toBe('1100000');
  }, 60_000);

  it("/ledger/verify verifies the control plane's chain; each signer's /receipts is a verifying chain of its signatures and refusals", async () => {
    const verify = await cp.ledgerVerify();
    expect(verify.verified).toBe(true);
    expect(verify.receipts).toBeGreaterThan(0);
    const recent = (await cp.ledgerRecent(100)) as { receipts?: { kind: string }[] } | { kind: string }[];
    const kinds = (Array.isArray(recent) ? recent : (recent.receipts ?? [])).map((r) => r.kind);
    expect(kinds).toEqual(expect.arrayContaining(['intent.created', 'intent.approval', 'intent.submitting', 'intent.confirmed']));

    // A signed ops, ops-mixed and ops-short, and re-signed the identical ops-short payload on the
    // second execute; B refused ops-short twice; C refused ops-mixed once and ops-short twice.
    // Then the short-of-quorum intent: A signed it and, on the next execute, re-signed the same
    // payload; B and C (back up) signed it once. The ops-agent intent: A and B signed it, C
    // (alice's passkey unknown to it) refused.
    const expected: Record<string, Record<string, number>> = {
      A: { 'sign.signed': 5, 'sign.repeated': 2, 'sign.refused': 0 },
      B: { 'sign.signed': 4, 'sign.repeated': 0, 'sign.refused': 2 },
      C: { 'sign.signed': 2, 'sign.repeated': 0, 'sign.refused': 4 },
    };
    for (const s of signers) {
      const r = (await signerClient(s).receipts(1000)) as { receipt_head: string; total: number; receipt_public_key: string; receipts: { kind: string; intentId?: string }[] };
      expect(r.receipt_public_key).toBe(s.receiptPublicKey);
      expect(r.receipts).toHaveLength(r.total);
      const chain = [...r.receipts].reverse();
      expect(verifyReceiptChain(chain, r.receipt_public_key, { head: r.receipt_head, length: r.total }).verified).toBe(true);
      const counts: Record<string, number> = { 'sign.signed': 0, 'sign.repeated': 0, 'sign.refused': 0 };
      for (const x of r.receipts) counts[x.kind] = (counts[x.kind] ?? 0) + 1;
      expect(counts).toEqual(expected[s.name]);
      // The signer's health agrees with its receipts.
      expect((await signerClient(s).health())['receipt_head']).toBe(r.receipt_head);
    }
  }, 30_000);

  it('attack: kill -9 of the control plane after a signer signed and before it committed `submitted`, the ledger moves on: the first execute after the restart has it re-sign the same payload, one transaction', async () => {
    const [a, b, c] = signers as [RealSigner, RealSigner, RealSigner];
    const dest = freshAddress();
    const id = await approvedIntent('ops', dest, '1300000');
    const heads = () => Promise.all([a].map((s) => signerClient(s).health().then((h) => h['receipt_head'])));
    const before = await heads();
    // B and C are frozen (SIGSTOP), so the control plane, short of quorum, waits on them holding A's
    // signature: the kill lands, every time, between A signing and the `submitted` commit.
    for (const s of [b, c]) process.kill(s.pid as number, 'SIGSTOP');
    let killed: string;
    try {
      const inFlight = cp.execute(id).then(
        (o) => o.status,
        () => 'cut off',
      );
      for (;;) {
        const now = await heads();
        if (now.every((h, i) => h !== before[i])) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      const old = cpProc as ChildProcess;
      const gone = exited(old);
      process.kill(old.pid as number, 'SIGKILL');
      await gone;
      killed = await inFlight;
    } finally {
      for (const s of [b, c]) process.kill(s.pid as number, 'SIGCONT');
    }
    expect(killed).toBe('cut off');
    // While the control plane is down the ledger moves on: fresh parameters would now give another
    // payload, which A must refuse while the one it signed can still land.
    await rpc('close', 3);
    const served = await start([CP_CLI, 'serve', '--state-dir', cpStateDir, '--port', '0'], CP_ENV, (l) => l.includes('"event":"listening"'));
    cpProc = served.child;
    cp = createControlPlaneClient({ baseUrl: served.line['url'], timeoutMs: 30_000 });
    await cp.unlock(OPERATOR_PASS);

    const done = await cp.execute(id);
    expect(done.status).toBe('confirmed');
    const sent = (await rpc<{ payload: { destination: string } }[]>('txs')).filter((t) => t.payload.destination === dest);
    expect(sent).toHaveLength(1);
    expect(await rpc<string>('balance', dest)).toBe('1300000');
    // A signed once and re-signed that identical payload; B and C signed it (and re-signed it if the
    // dead control plane's request, held while they were frozen, reached them first); no signer
    // refused anything for it. (An answer the quorum did not wait for still comes: waited for here.)
    for (const s of [a, b, c]) await until(`${s.name} to have signed the intent`, async () => ((await kindsOf(s, id)).includes('sign.signed') ? true : undefined), 10_000);
    expect(await kindsOf(a, id), 'A').toEqual(['sign.repeated', 'sign.signed']);
    for (const s of [b, c]) expect((await kindsOf(s, id)).filter((k) => k !== 'sign.repeated'), s.name).toEqual(['sign.signed']);
    // The control plane's chain shows the attempt committed once, before the signers were asked.
    const recent = (await cp.ledgerRecent(1000)) as { receipts: { kind: string; intentId?: string }[] };
    const mine = recent.receipts.filter((x) => x.intentId === id).map((x) => x.kind).reverse();
    expect(mine.filter((k) => k === 'intent.signing')).toHaveLength(1);
    expect(mine.indexOf('intent.signing')).toBeLessThan(mine.indexOf('intent.submitting'));
    expect((await cp.ledgerVerify()).verified).toBe(true);
  }, 60_000);

  it('stops the signers by PID cleanly', async () => {
    for (const s of signers) {
      const done = exited(s.child as ChildProcess);
      process.kill(s.pid as number, 'SIGTERM');
      expect(await done).toEqual({ code: 0, signal: null });
    }
  });
});

