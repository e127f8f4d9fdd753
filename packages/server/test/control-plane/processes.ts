/**
 * Child processes for the crash tests: the devnet (ledger + signers, fixtures/devnet.mjs) and
 * waiting for a line a process prints, and kill -9.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export interface Devnet {
  proc: ChildProcess;
  rpc_url: string;
  wallet: any;
  signers: Record<string, { url: string; token: string }>;
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
