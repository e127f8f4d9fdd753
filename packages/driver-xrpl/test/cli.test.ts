/**
 * The devnet CLI as a real child process: it prints its URL, answers JSON-RPC and the faucet over
 * a real socket, and stops cleanly when signalled by PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createXrplDriver } from '../src/index.js';
import { CLI_OUT } from './global-setup.js';

let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
});

function start(args: string[]): Promise<{ url: string; output: () => string }> {
  child = spawn(process.execPath, [join(CLI_OUT, 'devnet/cli.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 15_000);
    child?.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m && out.includes('faucet:') && out.endsWith('\n')) {
        clearTimeout(timer);
        resolve({ url: m[1] as string, output: () => out });
      }
    });
    child?.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child?.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

describe('vault-xrpl-devnet CLI', () => {
  it('serves JSON-RPC and the faucet, then stops on SIGTERM by PID', async () => {
    const { url, output } = await start(['--port', '0', '--network-id', '21337', '--close-ms', '0']);
    expect(output()).toMatch(/faucet: POST http:\/\/127\.0\.0\.1:\d+\/accounts/);
    const driver = createXrplDriver({ chains: { 'xrpl:local': { url, networkId: 21337 } } });
    expect(await driver.networkId({ chain: 'xrpl:local' })).toBe(21337);
    const res = await fetch(new URL('accounts', url), { method: 'POST', body: '{}' });
    const body = (await res.json()) as { account: { classicAddress: string }; seed: string; amount: number };
    expect(res.status).toBe(200);
    expect(body.amount).toBe(1000);
    expect(body.seed).toMatch(/^s/);
    const info = await fetch(url, { method: 'POST', body: JSON.stringify({ method: 'account_info', params: [{ account: body.account.classicAddress }] }) });
    expect(((await info.json()) as { result: { account_data: { Balance: string } } }).result.account_data.Balance).toBe('1000000000');
    const exited = new Promise<number | null>((r) => child?.once('exit', (code) => r(code)));
    process.kill(child?.pid as number, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toMatch(/received SIGTERM, stopping/);
    await expect(fetch(url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('refuses a bad --port', async () => {
    child = spawn(process.execPath, [join(CLI_OUT, 'devnet/cli.js'), '--port', 'abc'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child?.once('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(err).toMatch(/--port must be a non-negative integer/);
  });
});
