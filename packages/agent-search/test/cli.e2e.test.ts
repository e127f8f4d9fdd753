/**
 * The built CLI (dist/cli.js) as real processes: `facilitator` (HTTP facilitator), `serve` using
 * it, and `query` paying a call; `serve` without payment configuration; a bad configuration. Every
 * process started here is stopped by PID in afterAll. Requires `npx tsup` first (the workspace
 * build runs before tests).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopProcess } from '@vault/driver-evm-safe/devnet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listening, runCli, startTestChain, type CliProcess, type TestChain } from './helpers.js';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const children: ChildProcess[] = [];
let chain: TestChain;
let dir: string;

const run = (args: string[], env: Record<string, string>): CliProcess => runCli(cli, args, env, children);

const exited = (p: CliProcess) => new Promise<number | null>((resolve) => (p.child.exitCode !== null ? resolve(p.child.exitCode) : p.child.once('exit', resolve)));

beforeAll(async () => {
  if (!existsSync(cli)) throw new Error('dist/cli.js missing: run `npx tsup` in packages/agent-search first');
  chain = await startTestChain();
  dir = mkdtempSync(join(tmpdir(), 'agent-search-cli-'));
});

afterAll(async () => {
  for (const c of children) await stopProcess(c);
  await chain?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('vault-agent-search CLI', () => {
  test('facilitator + serve + query: a paid call end to end through processes, with no key in any output', async () => {
    const gasKey = join(dir, 'gas.key');
    const payerKey = join(dir, 'payer.key');
    writeFileSync(gasKey, chain.gas.privateKey, { mode: 0o600 });
    writeFileSync(payerKey, chain.payer.privateKey, { mode: 0o600 });
    const chargeLog = join(dir, 'charges.jsonl');
    const common = { X402_NETWORK: chain.network, X402_ASSET: chain.token, X402_PAY_TO: chain.payee.address };

    const fac = run(['facilitator', '--port', '0', '--rpc-url', chain.devnet.rpcUrl, '--gas-key-file', gasKey], common);
    const facUrl = await listening(fac);
    const srv = run(['serve', '--port', '0', '--operator', 'CLI Test'], { ...common, X402_FACILITATOR_URL: facUrl, X402_CHARGE_LOG: chargeLog });
    const srvUrl = await listening(srv);
    expect(srv.out()).toMatch(/payment LIVE, http facilitator/);

    const b0 = await chain.balanceOf(chain.payer.address);
    const q = run(['query', '/api/x402/places', 'q=cafe', '--key-file', payerKey, '--max-price', '0.01', '--asset', chain.token, '--base', srvUrl], {});
    const code = await exited(q);
    expect(q.err()).toMatch(/paid: tx 0x[0-9a-f]{64}/);
    expect(code).toBe(0);
    expect(JSON.parse(q.out())).toBeTypeOf('object');
    expect(b0 - (await chain.balanceOf(chain.payer.address))).toBe(2_000n);
    expect(readFileSync(chargeLog, 'utf8').trim().split('\n')).toHaveLength(1);

    // A price above --max-price is refused before signing.
    const q2 = run(['query', '/api/x402/search', 'q=x', 'mode=deep', '--key-file', payerKey, '--max-price', '0.01', '--asset', chain.token, '--base', srvUrl], {});
    expect(await exited(q2)).toBe(1);
    expect(q2.err()).toMatch(/refused to pay/);

    for (const p of [fac, srv, q, q2]) {
      const all = p.out() + p.err();
      expect(all).not.toContain(chain.gas.privateKey.slice(2));
      expect(all).not.toContain(chain.payer.privateKey.slice(2));
    }
  });

  test('serve with the in-process facilitator (--rpc-url, X402_GAS_KEY_FILE) takes a paid query', async () => {
    const gasKey = join(dir, 'gas-local.key');
    const payerKey = join(dir, 'payer2.key');
    writeFileSync(gasKey, chain.gas.privateKey, { mode: 0o600 });
    writeFileSync(payerKey, chain.payer2.privateKey, { mode: 0o600 });
    const srv = run(['serve', '--port', '0', '--rpc-url', chain.devnet.rpcUrl], { X402_NETWORK: chain.network, X402_ASSET: chain.token, X402_PAY_TO: chain.payee.address, X402_GAS_KEY_FILE: gasKey });
    const srvUrl = await listening(srv);
    expect(srv.out()).toMatch(/payment LIVE, local facilitator/);
    const b0 = await chain.balanceOf(chain.payer2.address);
    const q = run(['query', '/api/x402/search?q=coffee', 'mode=deep', '--key-file', payerKey, '--max-price', '0.05', '--asset', chain.token, '--base', srvUrl], {});
    expect(await exited(q)).toBe(0);
    expect(b0 - (await chain.balanceOf(chain.payer2.address))).toBe(50_000n);
    for (const p of [srv, q]) expect(p.out() + p.err()).not.toContain(chain.gas.privateKey.slice(2));
  });

  test('serve without payment configuration: descriptor ABSENT, paid routes 503', async () => {
    const srv = run(['serve', '--port', '0'], {});
    const url = await listening(srv);
    expect(srv.out()).toMatch(/payment ABSENT/);
    const d = (await (await fetch(`${url}/.well-known/x402`)).json()) as { enabled: boolean; status: string };
    expect(d).toMatchObject({ enabled: false, status: 'ABSENT' });
    const res = await fetch(`${url}/api/x402/search?q=x`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('payment_absent');
  });

  test('a bad configuration exits 1 naming the setting, without a secret in the message', async () => {
    const p = run(['serve'], { X402_NETWORK: 'eip155:31337', X402_ASSET: chain.token, X402_PAY_TO: chain.payee.address, X402_RPC_URL: chain.devnet.rpcUrl, X402_GAS_KEY: 'ab'.repeat(31) });
    expect(await exited(p)).toBe(1);
    expect(p.err()).toMatch(/X402_GAS_KEY/);
    expect(p.err()).not.toContain('ab'.repeat(31));
    const u = run(['serve', '--gas-key', 'x'], {});
    expect(await exited(u)).toBe(1);
    expect(u.err()).toMatch(/gas-key/);
  });
});
