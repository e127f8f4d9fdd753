/**
 * Crash test with real processes: the CLI built with tsup (`node <out>/control-plane/cli.js serve`) is
 * killed with SIGKILL during a burst of intent creations and during execute. On restart every
 * acknowledged intent is there, the receipt chain verifies, and no intent is submitted twice.
 * The ledger and the signers live in another process (fixtures/devnet.mjs), so they outlive it.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildControlPlaneCli, devnetRpc, initDevnetStateDir, kill9, serveControlPlane, startDevnet, type Devnet } from './processes.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let cli = '';

const serve = (stateDir: string) => serveControlPlane(cli, stateDir);

let dir = '';
let devnet: Devnet | undefined;
const procs: ChildProcess[] = [];

beforeAll(async () => {
  cli = await buildControlPlaneCli('cli-test');
  dir = mkdtempSync(join(tmpdir(), 'vault-crash-'));
  devnet = await startDevnet(dir, 40);
  await initDevnetStateDir(join(dir, 'state'), devnet);
}, 120_000);

afterAll(async () => {
  for (const p of procs) await kill9(p);
  if (devnet) await kill9(devnet.proc);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('crash safety (kill -9 of the real CLI process)', () => {
  it('the built CLI exists', () => {
    expect(existsSync(cli)).toBe(true);
  });

  it('kill -9 during a burst of intent creations loses nothing acknowledged; the receipt chain verifies', async () => {
    const stateDir = join(dir, 'state');
    const s1 = await serve(stateDir);
    procs.push(s1.proc);
    const acked: { id: string; receipt_head: string; amount: string }[] = [];
    let n = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const amount = String(++n);
        try {
          const r = await s1.client.createIntent({ wallet: 'crash', destination: 'mem1' + amount.padStart(40, '0'), amount });
          acked.push({ id: r.intentId, receipt_head: r.receipt_head, amount });
        } catch {
          return; // the server died under us: this request was never acknowledged
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    while (acked.length < 150) await new Promise((r) => setTimeout(r, 2));
    killed = true;
    await kill9(s1.proc);
    await Promise.all(workers);
    expect(acked.length).toBeGreaterThanOrEqual(150);

    const s2 = await serve(stateDir);
    procs.push(s2.proc);
    for (const a of acked) {
      const stored = await s2.client.intent(a.id);
      expect(stored.intentId).toBe(a.id);
      expect(stored.intent.amount).toBe(a.amount);
      // a replay after the crash returns the original, same receipt head
      const replay = await s2.client.createIntent({ wallet: 'crash', destination: 'mem1' + a.amount.padStart(40, '0'), amount: a.amount });
      expect(replay.receipt_head).toBe(a.receipt_head);
    }
    const v = await s2.client.ledgerVerify();
    expect(v.verified).toBe(true);
    expect(v.receipts).toBeGreaterThanOrEqual(acked.length);
    await kill9(s2.proc);
  }, 120_000);

  it('kill -9 during execute: on restart each intent confirms exactly once, never submitted twice', async () => {
    const stateDir = join(dir, 'state');
    const s1 = await serve(stateDir);
    procs.push(s1.proc);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push((await s1.client.createIntent({ wallet: 'crash', destination: 'mem1' + String(900000 + i).padStart(40, 'f'), amount: String(1000 + i) })).intentId);
    }
    const before = (await devnetRpc(devnet!, 'txs')).length as number;
    const results = ids.map((id) => s1.client.execute(id).then((o) => o.status, () => 'died'));
    // Let some executes get through signing and submission, then kill mid-flight.
    await new Promise((r) => setTimeout(r, 150));
    await kill9(s1.proc);
    const statuses = await Promise.all(results);
    expect(statuses).toContain('died'); // the kill landed while executes were in flight

    const s2 = await serve(stateDir);
    procs.push(s2.proc);
    for (const id of ids) {
      let out;
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          out = await s2.client.execute(id);
          break;
        } catch (e) {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(out?.status, id).toBe('confirmed');
    }
    const txs = (await devnetRpc(devnet!, 'txs')) as { payload: { destination: string } }[];
    const mine = txs.slice(before);
    expect(mine).toHaveLength(ids.length);
    const dests = mine.map((t) => t.payload.destination);
    expect(new Set(dests).size).toBe(ids.length);
    // The ledger accepted exactly one transaction per intent: a resumed execute only re-sent the
    // identical blob (answered already_applied), never a second transaction.
    const accepted = ((await devnetRpc(devnet!, 'submissions')) as { hash: string; accepted: boolean }[]).filter((x) => x.accepted);
    expect(accepted).toHaveLength(ids.length);
    expect(new Set(accepted.map((x) => x.hash)).size).toBe(ids.length);
    const v = await s2.client.ledgerVerify();
    expect(v.verified).toBe(true);
    await kill9(s2.proc);
  }, 120_000);
});

describe('vault-control-plane CLI', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', ...env }, input: '' });

  it('init reads the passphrase from VAULT_OPERATOR_PASSPHRASE or --passphrase-file and stores only its scrypt hash', () => {
    const a = join(dir, 'cli-a');
    const r = run(['init', '--state-dir', a], { VAULT_OPERATOR_PASSPHRASE: 'env passphrase 123' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/receipt public key [0-9a-f]{64}/);
    expect(readFileSync(join(a, 'operator.json'), 'utf8')).not.toContain('env passphrase 123');
    expect(statSync(join(a, 'receipt.key')).mode & 0o777).toBe(0o600);
    const b = join(dir, 'cli-b');
    const file = join(dir, 'pp.txt');
    writeFileSync(file, 'file passphrase 456\n');
    expect(run(['init', '--state-dir', b, '--passphrase-file', file]).status).toBe(0);
    expect(run(['init', '--state-dir', b, '--passphrase-file', file]).stderr).toMatch(/already exists/);
  }, 60_000);

  it('refuses without a passphrase source, prints usage, and fails cleanly on a missing state', () => {
    const r = run(['init', '--state-dir', join(dir, 'cli-c')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no passphrase/);
    expect(run([]).status).toBe(2);
    expect(run(['serve', '--state-dir']).status).toBe(1);
    const s = run(['serve', '--state-dir', join(dir, 'nowhere')]);
    expect(s.status).toBe(1);
    expect(s.stderr).toMatch(/does not exist/);
  }, 60_000);
});
