/**
 * The built CLI (node dist/cli.js; `npx tsup` first) as a user runs it: run against the XRPL and
 * Stellar devnets and the Solana responder, verify (exit 0, then 1 after a seeded payment, 2 when
 * a query fails), serve (the document and /namespaces fetched over real HTTP, the process stopped
 * by PID), and the usage/config error paths (exit 64 with the field named).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startXrplDevnet, type XrplDevnet } from '@vault/driver-xrpl/devnet';
import { startDevnet as startStellarDevnet, type StellarDevnet } from '@vault/driver-stellar/devnet';
import { Wallet } from 'xrpl';
import { SupplyReportSchema } from '@vault/sdk';
import { startSolanaResponder, type SolanaResponder } from './helpers/solana-responder.js';
import { stellarFunded, stellarIssue, xrplIssue, xrplWallet } from './helpers/seed.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const SECRET = 'cli-secret-7a7a7a';

let xrpl: XrplDevnet;
let stellar: StellarDevnet;
let sol: SolanaResponder;
let dir: string;
let issuer: Wallet;
let holder: Wallet;
const children: ChildProcess[] = [];

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), 25_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error('build the package first: npx tsup (dist/cli.js is missing)');
  [xrpl, stellar, sol] = await Promise.all([startXrplDevnet({ networkId: 0, closeIntervalMs: 0 }), startStellarDevnet(), startSolanaResponder()]);
  issuer = xrplWallet(xrpl);
  holder = xrplWallet(xrpl);
  await xrplIssue(xrpl, issuer, holder, 'USD', '42.5');
  const sIssuer = await stellarFunded(stellar);
  await stellarIssue(stellar, sIssuer, await stellarFunded(stellar), 'ABC', '3');
  sol.model.addMint(MINT, { program: 'spl-token', supply: 77n, decimals: 1, mintAuthority: null, freezeAuthority: null });
  dir = mkdtempSync(join(tmpdir(), 'supply-cli-'));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      xrpl: { endpoint: xrpl.url, issuers: [issuer.classicAddress] },
      stellar: { endpoint: stellar.url, issuers: [sIssuer.publicKey()] },
      solana: { endpoint: `${sol.url}/?token=\${SOL_TOKEN}`, mints: [{ mint: MINT, label: 'Seven point seven' }] },
      // No contracts: the Polygon endpoint is never contacted.
      polygon: { endpoint: 'http://127.0.0.1:9', owner: `0x${'11'.repeat(20)}`, contracts: [] },
    }),
  );
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  await Promise.all([xrpl?.close(), stellar?.close(), sol?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('vault-supply-report CLI', () => {
  it('run writes the report and the run log; progress on stderr; the secret appears nowhere', async () => {
    const out = join(dir, 'report.json');
    const r = await cli(['run', '--config', join(dir, 'config.json'), '--out', out], { SOL_TOKEN: SECRET });
    expect(r.stderr).toContain('wrote');
    expect(r.code).toBe(0);
    const text = readFileSync(out, 'utf8');
    const report = JSON.parse(text);
    expect(SupplyReportSchema.safeParse(report).success).toBe(true);
    expect(report.chains.xrpl.issuers[0].obligations).toEqual({ USD: '42.5' });
    expect(report.chains.solana.mints[0].supply).toBe('7.7');
    expect(report.chains.solana.endpoint).toBe(sol.url);
    const runLog = JSON.parse(readFileSync(join(dir, 'report.runlog.json'), 'utf8'));
    expect(runLog.omitted).toEqual([]);
    expect(r.stderr).toMatch(/\[solana\] \d\/3 /);
    for (const t of [text, r.stderr, r.stdout, readFileSync(join(dir, 'report.runlog.json'), 'utf8')]) expect(t).not.toContain(SECRET);
  });

  it('verify: exit 0 with no drift, exit 1 with the exact drift after a payment, exit 2 when a query fails', async () => {
    const report = join(dir, 'report.json');
    const same = await cli(['verify', report, '--config', join(dir, 'config.json')], { SOL_TOKEN: SECRET });
    expect(same.stdout).toContain('3 unchanged, 0 drifted, 0 failed');
    expect(same.code).toBe(0);

    await xrplIssue(xrpl, issuer, holder, 'USD', '0.25');
    const drift = await cli(['verify', report, '--json', '--quiet'], {});
    expect(drift.code).toBe(1);
    const result = JSON.parse(drift.stdout);
    expect(result.rows.find((r: { subject: string }) => r.subject === issuer.classicAddress).changes).toEqual([{ field: 'obligations.USD', before: '42.5', now: '42.75', delta: '+0.25' }]);

    const broken = JSON.parse(readFileSync(report, 'utf8'));
    broken.chains.xrpl.issuers[0].query = JSON.stringify({ method: 'gateway_balances', params: [{ account: Wallet.generate().classicAddress }] });
    writeFileSync(join(dir, 'broken.json'), JSON.stringify(broken));
    const failed = await cli(['verify', join(dir, 'broken.json')]);
    expect(failed.stdout).toMatch(/FAILED\s+xrpl .*actNotFound/);
    expect(failed.code).toBe(2);
  });

  it('serve publishes the document and /namespaces on 127.0.0.1, and stops on SIGTERM (by PID)', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', join(dir, 'report.json'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 15_000);
      child.stdout?.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1] as string);
        }
      });
    });
    const doc = await fetch(`${url}/supply-report.json`);
    expect(doc.status).toBe(200);
    expect(await doc.text()).toBe(readFileSync(join(dir, 'report.json'), 'utf8'));
    const ns = (await (await fetch(`${url}/namespaces`)).json()) as { document: string; namespaces: Record<string, { entries: { id: string; row: string; href: string }[] }> };
    expect(ns.document).toBe('/supply-report.json');
    expect(ns.namespaces['xrpl']?.entries).toEqual([{ id: issuer.classicAddress, row: '/supply-report.json#/chains/xrpl/issuers/0', href: '/rows/xrpl/0' }]);
    expect(ns.namespaces['solana']?.entries[0]).toMatchObject({ id: MINT, label: 'Seven point seven' });
    const row = (await (await fetch(`${url}${ns.namespaces['xrpl']?.entries[0]?.href}`)).json()) as { account: string };
    expect(row.account).toBe(issuer.classicAddress);
    expect((await fetch(`${url}/rows/xrpl/9`)).status).toBe(404);
    expect((await fetch(`${url}/supply-report.json`, { method: 'POST' })).status).toBe(405);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    process.kill(child.pid as number, 'SIGTERM');
    expect(await exited).toBe(0);
  });

  it('serve refuses a non-loopback host and an invalid document', async () => {
    const r = await cli(['serve', join(dir, 'report.json'), '--host', '0.0.0.0']);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('binds loopback only');
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ derivedAt: 'yesterday' }));
    const bad = await cli(['serve', join(dir, 'bad.json')]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('not a supply report');
  });

  it('config errors name the field and exit 64; usage errors exit 64', async () => {
    writeFileSync(join(dir, 'bad-config.json'), JSON.stringify({ xrpl: { endpoint: xrpl.url, issuers: ['rNOPE'] } }));
    const r = await cli(['run', '--config', join(dir, 'bad-config.json'), '--out', join(dir, 'x.json')]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('xrpl.issuers[0].account: not a valid XRPL classic address');
    expect((await cli(['run', '--config', join(dir, 'config.json')])).code).toBe(64);
    expect((await cli(['frobnicate'])).code).toBe(64);
    expect((await cli(['run', '--bogus'])).code).toBe(64);
    const missingEnv = await cli(['run', '--config', join(dir, 'config.json'), '--out', join(dir, 'y.json')], { SOL_TOKEN: '' });
    expect(missingEnv.stderr).toContain('solana.endpoint.url: environment variable SOL_TOKEN is not set');
    expect(missingEnv.code).toBe(64);
  });
});
