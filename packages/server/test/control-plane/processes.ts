/**
 * Child processes for the crash and failover tests: the devnet (ledger + signers,
 * fixtures/devnet.mjs), the control plane's CLI built from source and served, waiting for a line a
 * process prints, and kill -9.
 */
import { createControlPlaneClient, type ControlPlaneClient, type Rule } from '@vault/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleClis, SERVER_PKG } from '../cli-bundle.js';
import { initStateDir } from '../../src/control-plane/run.js';
import { emptyState } from '../../src/control-plane/state.js';
import { FAST_SCRYPT, PASSPHRASE } from './helpers.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface Devnet {
  proc: ChildProcess;
  rpc_url: string;
  wallet: any;
  signers: Record<string, { url: string; token: string }>;
  /** An approver device the devnet's signers know (initDevnetStateDir pairs it). */
  approver: { id: string; public_key: string; secret_key: string };
}

export async function waitLine(proc: ChildProcess, match: (line: string) => boolean, ms = 20_000): Promise<string> {
  return new Promise((res, rej) => {
    let buf = '';
    const timer = setTimeout(() => rej(new Error(`timeout waiting for output; got: ${buf.slice(-500)}`)), ms);
    const onData = (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        if (match(line)) {
          clearTimeout(timer);
          proc.stdout?.off('data', onData);
          res(line);
          return;
        }
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', (d: Buffer) => (buf += d.toString()));
    proc.once('exit', (code) => rej(new Error(`process exited ${code}: ${buf.slice(-800)}`)));
  });
}

/** Starts fixtures/devnet.mjs; each signer answers after `signerDelayMs`. */
export async function startDevnet(dir: string, signerDelayMs: number): Promise<Devnet> {
  const out = join(dir, 'devnet.json');
  const proc = spawn(process.execPath, [join(here, 'fixtures/devnet.mjs'), out], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SIGNER_DELAY_MS: String(signerDelayMs) } });
  await waitLine(proc, (l) => l.trim() === 'ready');
  return { proc, ...JSON.parse(readFileSync(out, 'utf8')) };
}

export function kill9(proc: ChildProcess): Promise<void> {
  return new Promise((res) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return res();
    proc.once('exit', () => res());
    proc.kill('SIGKILL');
  });
}

/**
 * Bundles the control plane's CLI (same entry, same externals as dist/control-plane/cli.js) into a
 * private, ignored directory under .cache/ and returns the path of cli.js: another engineer's full
 * `tsup` run (clean: true) must not delete it mid-test. One directory per test file, so two files
 * running at once do not write the same bundle.
 */
export async function buildControlPlaneCli(name: string): Promise<string> {
  const outDir = join(SERVER_PKG, '.cache', name);
  await bundleClis(['control-plane/cli'], outDir);
  return join(outDir, 'control-plane/cli.js');
}

export interface ServedControlPlane {
  proc: ChildProcess;
  url: string;
  port: number;
  client: ControlPlaneClient;
  /** Every line the process printed on stdout so far (JSON log lines, access log). */
  lines: string[];
  /** Everything it printed on stderr so far. */
  stderr: () => string;
}

/**
 * `node <cli> serve --state-dir DIR --port PORT ...args` (port 0: any) with `env` added to this process's; resolves
 * once it listens, unlocked with the test passphrase. Its output is kept (`lines`, `stderr`), so a
 * test can look for a log line that came before it asked.
 */
export async function serveControlPlane(
  cli: string,
  stateDir: string,
  { port = 0, args = [], env = {} }: { port?: number; args?: readonly string[]; env?: Record<string, string> } = {},
): Promise<ServedControlPlane> {
  const proc = spawn(process.execPath, [cli, 'serve', '--state-dir', stateDir, '--port', String(port), ...args], { stdio: ['ignore', 'pipe', 'pipe'], cwd: SERVER_PKG, env: { ...process.env, ...env } });
  const lines: string[] = [];
  let err = '';
  let partial = '';
  proc.stdout?.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const line = await waitLine(proc, (l) => l.includes('"event":"listening"'), 60_000);
  const url = JSON.parse(line).url as string;
  const client = createControlPlaneClient({ baseUrl: url, timeoutMs: 20_000 });
  await client.unlock(PASSPHRASE);
  return { proc, url, port: Number(new URL(url).port), client, lines, stderr: () => err };
}

/**
 * Initialises a state directory for the devnet's wallet (`rules`, default always_allow; the
 * devnet's signers and approver device; the memory driver on its RPC); returns the receipt public key.
 */
export async function initDevnetStateDir(stateDir: string, devnet: Devnet, rules: Rule[] = [{ rule: 'always_allow' }]): Promise<string> {
  const r = await initStateDir({
    stateDir,
    passphrase: PASSPHRASE,
    scrypt: FAST_SCRYPT,
    state: {
      ...emptyState(),
      wallets: [devnet.wallet],
      policies: [{ wallet: 'crash', version: 1, rules }],
      signers: devnet.signers,
      devices: [{ id: devnet.approver.id, role: 'approver', label: devnet.approver.id, public_key: devnet.approver.public_key, paired_at: Math.floor(Date.now() / 1000), revoked_at: null }],
      drivers: [{ module: join(here, 'fixtures/memory-driver.mjs'), options: { rpc_url: devnet.rpc_url } }],
    },
  });
  return r.receiptPublicKey;
}

/** One call to the devnet's JSON RPC (e.g. `txs`, `submissions`: what the ledger itself holds). */
export async function devnetRpc(devnet: Devnet, method: string, params: unknown[] = []): Promise<any> {
  const r = await fetch(`${devnet.rpc_url}/rpc`, { method: 'POST', body: JSON.stringify({ method, params }) });
  return r.json();
}
