/**
 * The devnet CLI as a real child process: it prints its URL and friendbot path, serves Horizon over
 * a real socket, and stops cleanly when signalled by PID.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Keypair } from '@stellar/stellar-base';
import { describe, expect, it } from 'vitest';

const CLI = new URL('../dist/devnet/cli.js', import.meta.url).pathname;

function start(args: string[]): Promise<{ child: ChildProcessWithoutNullStreams; url: string; out: () => string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`CLI did not start: ${out}`)), 10_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && out.includes('network passphrase:')) {
        clearTimeout(timer);
        resolve({ child, url: m[1] as string, out: () => out });
      }
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`CLI exited ${code}: ${out}`)));
  });
}

function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe('vault-stellar-devnet CLI', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('serves Horizon on a real socket and stops on %s by PID', async (signal) => {
    const { child, url, out } = await start(['--port', '0', '--passphrase', 'CLI Test Network']);
    expect(out()).toContain(`friendbot: ${url}/friendbot?addr=`);
    const root = (await (await fetch(`${url}/`)).json()) as { network_passphrase: string };
    expect(root.network_passphrase).toBe('CLI Test Network');
    const kp = Keypair.random();
    expect((await fetch(`${url}/friendbot?addr=${kp.publicKey()}`)).status).toBe(200);
    const acct = (await (await fetch(`${url}/accounts/${kp.publicKey()}`)).json()) as { balances: { balance: string }[] };
    expect(acct.balances.at(-1)?.balance).toBe('10000.0000000');
    const done = exited(child);
    process.kill(child.pid as number, signal);
    expect(await done).toBe(0);
    expect(out()).toContain(`stopped (${signal})`);
    await expect(fetch(`${url}/`)).rejects.toThrow();
  }, 20_000);

  it('refuses a bad port with exit code 1', async () => {
    const child = spawn(process.execPath, [CLI, '--port', 'nope'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    expect(await exited(child)).toBe(1);
    expect(err).toMatch(/--port must be/);
  });
});
