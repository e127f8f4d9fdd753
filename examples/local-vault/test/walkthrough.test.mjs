/**
 * The README's main job, end to end: `vault.mjs --walkthrough` starts three devnets, three signer
 * processes and the control plane, provisions a 2-of-3 wallet on each ledger and drives every
 * step over HTTP; it must exit 0. Then: Ctrl-C on a running vault stops every process it started.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const VAULT = join(dirname(fileURLToPath(import.meta.url)), '..', 'vault.mjs');

function launch(args) {
  const child = spawn(process.execPath, [VAULT, ...args, '--port', '0', '--kdf-log2', '10'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr += d));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, out, exited };
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('examples/local-vault', () => {
  it('--walkthrough: every step behaves as described, and it exits 0', async () => {
    const { out, exited } = launch(['--walkthrough']);
    const { code } = await exited;
    if (code !== 0) console.error(out.stdout, out.stderr);
    expect(code).toBe(0);
    expect(out.stdout).toMatch(/walkthrough: all \d+ steps behaved as described/);
    for (const what of ['confirmed on the ledger', 'mptIssuanceId', 'awaiting_signatures', 'exactly one ledger transaction for the intent', 'intent_tampered', 'chain verifies', 'clean']) expect(out.stdout).toContain(what);
  }, 300_000);

  it('Ctrl-C stops every process it started', async () => {
    const { child, out, exited } = launch([]);
    await new Promise((resolve, reject) => {
      const timer = setInterval(() => {
        if (out.stdout.includes('Ctrl-C stops every process')) {
          clearInterval(timer);
          resolve();
        }
      }, 100);
      exited.then(() => {
        clearInterval(timer);
        reject(new Error(`vault exited early: ${out.stderr}`));
      });
    });
    const pids = JSON.parse(/processes\s+(\{.*\})/.exec(out.stdout)?.[1] ?? 'null');
    expect(pids.children.length).toBe(4);
    for (const pid of [pids.anvil, ...pids.children]) expect(alive(pid)).toBe(true);
    child.kill('SIGINT');
    const { code } = await exited;
    expect(code).toBe(130);
    for (const pid of [pids.anvil, ...pids.children]) expect(alive(pid), `process ${pid} still running`).toBe(false);
  }, 300_000);
});
