import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rawRpc } from './helpers.js';

const cli = fileURLToPath(new URL('../dist/devnet/cli.js', import.meta.url));

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('vault-evm-devnet (the built CLI as a real process)', () => {
  it('is built (run `npx tsup` before the tests)', () => {
    expect(existsSync(cli), `${cli} is missing: build the package first`).toBe(true);
  });

  it('prints the RPC URL and addresses, serves the chain, and stops anvil on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [cli, '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no output: ${err}`)), 30_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) {
          clearTimeout(t);
          resolve(out.split('\n')[0] as string);
        }
      });
      child.once('exit', (code) => reject(new Error(`cli exited ${code}: ${err}`)));
    });
    const info = JSON.parse(line) as { rpcUrl: string; pid: number; chainId: number; safe: { address: string; threshold: number }; token: { address: string }; safeAddresses: Record<string, string> };
    expect(info.rpcUrl).toBe(`http://127.0.0.1:${port}`);
    expect(info.chainId).toBe(31337);
    expect(info.safe.threshold).toBe(2);
    expect(info.safeAddresses['safe']).toBe('0x41675C099F32341bf84BFc5382aF534df5C7461a');
    expect(BigInt(await rawRpc<string>(info.rpcUrl, 'eth_chainId'))).toBe(31337n);
    expect((await rawRpc<string>(info.rpcUrl, 'eth_getCode', [info.safe.address, 'latest'])).length).toBeGreaterThan(2);
    expect(alive(info.pid)).toBe(true);

    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    process.kill(child.pid as number, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(err).toContain(`stopping anvil (pid ${info.pid})`);
    expect(alive(info.pid)).toBe(false);
    await expect(rawRpc(info.rpcUrl, 'eth_chainId')).rejects.toThrow();
  });

  it('rejects a bad --port', async () => {
    const child = spawn(process.execPath, [cli, '--port', 'x'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(err).toMatch(/--port must be 0\.\.65535/);
  });
});
