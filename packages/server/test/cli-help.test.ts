/**
 * The three CLIs a new user runs first (`vault-signer`, `vault-control-plane`, `vault`) answer
 * `--help` with their usage and exit 0; a real mistake still exits 2 with the usage on stderr.
 * Built from the current sources with tsup (same entries and externals as dist) into a private,
 * ignored directory, then run as real processes.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { bundleClis } from './cli-bundle.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(pkg, '.cache/cli-help-test');
const CLIS = [
  { name: 'vault-signer', entry: 'signer/cli', first: 'vault-signer keygen' },
  { name: 'vault-control-plane', entry: 'control-plane/cli', first: 'vault-control-plane init' },
  { name: 'vault', entry: 'provision/cli', first: 'vault provision' },
] as const;

beforeAll(async () => {
  await bundleClis(CLIS.map((c) => c.entry), outDir);
});

function runCli(entry: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  // The signer CLI runs itself only when its file is named cli.js (the bin imports it instead).
  const r = spawnSync(process.execPath, [join(outDir, `${entry}.js`), ...args], { encoding: 'utf8', cwd: pkg, env: { ...process.env, VAULT_SIGNER_PASSPHRASE: '', VAULT_OPERATOR_PASSPHRASE: '' }, timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('--help exits 0 with usage', () => {
  for (const c of CLIS) {
    for (const args of [['--help'], ['-h'], ['help'], ['serve', '--help']]) {
      it(`${c.name} ${args.join(' ')}: exit 0, the usage on stdout, nothing on stderr`, () => {
        const r = runCli(c.entry, args);
        expect(r.stderr).toBe('');
        expect(r.status).toBe(0);
        expect(r.stdout).toMatch(/^usage:\n/);
        expect(r.stdout).toContain(c.first);
      });
    }

    it(`${c.name}: an unknown command still exits 2 with the usage on stderr`, () => {
      const r = runCli(c.entry, ['frobnicate']);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('usage:');
      expect(r.stderr).toContain(c.first);
    });
  }
});
