/**
 * Issue #23, "set-up that works as written": the server README's from-scratch section (the fenced
 * `sh` blocks between `<!-- from-scratch: start -->` and `<!-- from-scratch: end -->`) run in bash,
 * command by command as a user would, from an empty directory, against the `vault-xrpl-devnet`
 * CLI and the server's CLIs (bundled from source, on the PATH under their published bin names).
 * What the test changes in the text, and only that: the ports (free ones instead of 5005, 7331,
 * 7333-7335, as tests run side by side) and the approver key the reader fills in. Then, as the
 * operator and the approver device would: unlock, pair the device, create a transfer above the
 * threshold, approve it with the device's signature, execute it to `confirmed`. No file is edited
 * by hand in between. A second `vault provision` changes nothing, byte for byte.
 */
import { createControlPlaneClient, generateEd25519KeyPair, sha256Hex, signApproval, signEd25519, fromHex, toHex } from '@vault/sdk';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bundleClis } from './cli-bundle.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(pkg, '.cache/from-scratch-test');
const BINS: Record<string, string> = {
  'vault-signer': join(outDir, 'signer/cli.js'),
  'vault-control-plane': join(outDir, 'control-plane/cli.js'),
  vault: join(outDir, 'provision/cli.js'),
  'vault-xrpl-devnet': join(pkg, '../driver-xrpl/dist/devnet/cli.js'),
};
/** The README's ports, each replaced by a free one. */
const README_PORTS = ['5005', '7331', '7333', '7334', '7335'] as const;

/** The fenced sh blocks of the README's from-scratch section, in order. */
function fromScratchBlocks(readme: string): string[] {
  const start = readme.indexOf('<!-- from-scratch: start -->');
  const end = readme.indexOf('<!-- from-scratch: end -->');
  if (start < 0 || end < start) throw new Error('README.md has no from-scratch section between its markers');
  return [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)\n```/g)].map((m) => m[1] as string);
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

let bin: string;
let shell: ChildProcess | undefined;
const dirs: string[] = [];

beforeAll(async () => {
  await bundleClis(['signer/cli', 'control-plane/cli', 'provision/cli'], outDir);
  bin = join(outDir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const [name, script] of Object.entries(BINS)) {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  }
});

afterAll(async () => {
  // The section leaves the devnet, three signers and the control plane running in the
  // background, in the shell's process group: stop them all, and wait.
  if (shell?.pid !== undefined) {
    try {
      process.kill(-shell.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    for (let i = 0; i < 50; i++) {
      try {
        process.kill(-shell.pid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("the server README's from-scratch section, as written", () => {
  it('has the blocks the test runs, with the values the reader fills in', () => {
    const blocks = fromScratchBlocks(readFileSync(join(pkg, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    expect(blocks.join('\n').match(/^APPROVER_KEY=…$/gm)).toHaveLength(1);
  });

  it('sets up a served 2-of-3 XRPL wallet; an intent is created, approved and executed to confirmed; re-provisioning changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-from-scratch-'));
    dirs.push(dir);
    const ports = Object.fromEntries(await Promise.all(README_PORTS.map(async (p) => [p, String(await freePort())] as const)));
    const device = generateEd25519KeyPair();
    const deviceId = `dev_${sha256Hex(device.publicKeyHex).slice(0, 16)}`;
    const script = fromScratchBlocks(readFileSync(join(pkg, 'README.md'), 'utf8'))
      .join('\n')
      .replace(/\b(5005|7331|7333|7334|7335)\b/g, (p) => ports[p] as string)
      .replace(/^APPROVER_KEY=…$/m, `APPROVER_KEY=${device.publicKeyHex}`);
    writeFileSync(join(dir, 'from-scratch.sh'), `set -euo pipefail\n${script}\n`);

    // The shell leads its own process group, so everything it leaves running can be stopped together.
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` };
    for (const k of Object.keys(env)) if (k.startsWith('VAULT_')) delete env[k];
    shell = spawn('bash', ['from-scratch.sh'], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    shell.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    shell.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((ok) => shell?.once('exit', (c) => ok(c)));
    expect(code, out).toBe(0);

    // What provision wrote: a servable state and trust files, nothing added by hand.
    const state = JSON.parse(readFileSync(join(dir, 'cp/state.json'), 'utf8')) as { wallets: { wallet: string; control: { signers: { address: string }[] } }[]; signers: Record<string, { url: string; token_env: string }>; drivers: { module: string }[] };
    const wallet = state.wallets.find((w) => w.wallet === 'ops-xrpl');
    const members = wallet?.control.signers.map((s) => s.address) ?? [];
    expect(members).toHaveLength(3);
    expect(Object.keys(state.signers).sort()).toEqual([...members].sort());
    expect(Object.values(state.signers).map((s) => s.url).sort()).toEqual(['7333', '7334', '7335'].map((p) => `http://127.0.0.1:${ports[p]}`).sort());
    expect(state.drivers.map((d) => d.module)).toEqual(['@vault/driver-xrpl']);
    for (const s of ['a', 'b', 'c']) {
      const trust = JSON.parse(readFileSync(join(dir, `signer-${s}/trust.json`), 'utf8')) as { approvers: unknown[]; drivers: { module: string }[]; wallets: { max_fee: number }[] };
      expect(trust.approvers).toEqual([{ id: deviceId, public_key: device.publicKeyHex, weight: 1 }]);
      expect(trust.drivers.map((d) => d.module)).toEqual(['@vault/driver-xrpl']);
      expect(trust.wallets[0]?.max_fee).toBe(1000);
    }

    // The operator unlocks and pairs the approver device (the device signs the pairing challenge).
    const cp = createControlPlaneClient({ baseUrl: `http://127.0.0.1:${ports['7331']}` });
    await cp.unlock('a long operator passphrase');
    const code2 = await cp.pairCreate({ role: 'approver', label: 'approver phone' });
    const claimed = (await cp.pairClaim({ code: code2.code, public_key: device.publicKeyHex, signature: toHex(signEd25519(fromHex(code2.challenge, 'challenge', 32), device.secretKey)), label: 'approver phone' })) as { device?: { id: string } };
    expect(claimed.device?.id).toBe(deviceId);

    // A funded destination from the devnet's faucet, then 20 XRP: above the 10 XRP threshold.
    const faucet = (await (await fetch(`http://127.0.0.1:${ports['5005']}/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { account: string | { classicAddress?: string; address?: string } };
    const destination = typeof faucet.account === 'string' ? faucet.account : (faucet.account.classicAddress ?? faucet.account.address ?? '');
    expect(destination).toMatch(/^r/);
    const created = await cp.createIntent({ wallet: 'ops-xrpl', destination, amount: '20000000' });
    expect(created.status).toBe('pending_approvals');
    const approval = signApproval({ approver_id: deviceId, intent: created.intentId, verdict: 'approve', at: Math.floor(Date.now() / 1000), strong_auth: false }, device.secretKey);
    expect((await cp.approveSigned(created.intentId, approval)).status).toBe('allowed');
    const executed = await cp.execute(created.intentId);
    expect(executed.status, JSON.stringify(executed)).toBe('confirmed');
    expect((await cp.intent(created.intentId)).status).toBe('confirmed');

    // Provisioning again: nothing sent, no file rewritten (byte-identical).
    const files = ['cp/state.json', 'signer-a/trust.json', 'signer-b/trust.json', 'signer-c/trust.json'];
    const before = files.map((f) => readFileSync(join(dir, f), 'utf8'));
    const again = spawnSync('vault', ['provision', '--config', 'provision.json'], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout.trim())).toMatchObject({ wallet: 'ops-xrpl', changed: false, written: [], transactions: [], reconcile: 'clean' });
    expect(files.map((f) => readFileSync(join(dir, f), 'utf8'))).toEqual(before);
  });
});
