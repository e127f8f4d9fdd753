/**
 * `vault.mjs --walkthrough --hsm`: the same walkthrough with signer a's keys generated in a SoftHSM2
 * token and served over PKCS#11 (XRPL and Stellar ed25519, the Safe's secp256k1 on anvil), which
 * the launcher installs when missing (root + apt-get) or fails on, saying what to run.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const VAULT = join(dirname(fileURLToPath(import.meta.url)), '..', 'vault.mjs');

describe('examples/local-vault --hsm', () => {
  it('--walkthrough --hsm: every step behaves as described with signer a on SoftHSM2, and it exits 0', async () => {
    const child = spawn(process.execPath, [VAULT, '--walkthrough', '--hsm', '--port', '0', '--kdf-log2', '10'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d) => (out.stdout += d));
    child.stderr.on('data', (d) => (out.stderr += d));
    const code = await new Promise((resolve) => child.once('exit', (c) => resolve(c)));
    if (code !== 0) console.error(out.stdout, out.stderr);
    expect(code).toBe(0);
    expect(out.stdout).toMatch(/walkthrough: all \d+ steps behaved as described/);
    expect(out.stdout).toContain('keys: SoftHSM2 token over PKCS#11');
    expect(out.stdout).toContain('signer a reports backend pkcs11');
    for (const w of ['ops-xrpl', 'ops-stellar', 'ops-evm']) expect(out.stdout).toMatch(new RegExp(`${w}: signer a signed, in its token, intents the ledger confirmed \\(([1-9]\\d*) of`));
  }, 300_000);
});
