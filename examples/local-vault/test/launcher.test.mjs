/**
 * What a new user trips over in the first minutes with `npm start` (issue #27), checked on the real
 * launcher (`vault.mjs` as a process, as `npm start` runs it):
 *   - the banner's ready-to-run request for each ledger, pasted as printed, is allowed and confirms
 *     (its destination is a funded account; a Stellar payment to an unfunded one fails at the
 *     ledger with op_no_destination and costs a fee);
 *   - every process writes its log to a file in the working directory, and the banner says where;
 *   - a signer that dies (SIGKILL by its PID) is reported, with its log's path.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const VAULT = join(dirname(fileURLToPath(import.meta.url)), '..', 'vault.mjs');

let dir;
let child;
const out = { stdout: '', stderr: '' };
let exited;

/** Resolves when `pred()` holds (polled), rejects if the launcher exits first or `ms` pass. */
function until(pred, what, ms = 30_000) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      if (pred()) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started > ms) {
        clearInterval(timer);
        reject(new Error(`timed out waiting for ${what}\n${out.stdout}\n${out.stderr}`));
      }
    }, 50);
    exited.then(() => {
      clearInterval(timer);
      reject(new Error(`vault exited while waiting for ${what}: ${out.stderr}`));
    });
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vault-launcher-test-'));
  child = spawn(process.execPath, [VAULT, '--port', '0', '--kdf-log2', '10', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d) => (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr += d));
  exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  await until(() => out.stdout.includes('Ctrl-C stops every process'), 'the vault to be up', 240_000);
}, 300_000);

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGINT');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('the local vault launcher, as a new user meets it', () => {
  it('the banner names the operator console, and the control plane serves it there', async () => {
    const line = /^\s*console\s+(\S+)/m.exec(out.stdout);
    expect(line, out.stdout).not.toBeNull();
    const res = await fetch(line[1]);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await res.text()).toContain('<title>Vault operator console</title>');
  });

  it("the banner's ready-to-run request for each ledger is allowed and confirms (funded destinations)", async () => {
    // The unlock line, as printed: TOKEN=$(curl -s -X POST <url>/session/unlock ... -d '<json>' | node ...)
    const unlock = /TOKEN=\$\(curl -s -X POST (\S+)\/session\/unlock .* -d '([^']+)' \| node -pe/.exec(out.stdout);
    expect(unlock, out.stdout).not.toBeNull();
    const [, base, unlockBody] = unlock;
    const session = await fetch(`${base}/session/unlock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: unlockBody });
    expect(session.status).toBe(200);
    const { token } = await session.json();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const requests = [...out.stdout.matchAll(/curl -s -X POST (\S+)\/intent -H "authorization: Bearer \$TOKEN" -H 'content-type: application\/json' -d '([^']+)'/g)];
    expect(requests.map(([, , body]) => JSON.parse(body).wallet).sort()).toEqual(['ops-evm', 'ops-stellar', 'ops-xrpl']);
    for (const [, url, body] of requests) {
      expect(url).toBe(base);
      // The destination is one the banner lists as funded.
      expect(/destinations\s+funded accounts to send to: (.*)/.exec(out.stdout)?.[1]).toContain(JSON.parse(body).destination);
      const created = await (await fetch(`${url}/intent`, { method: 'POST', headers, body })).json();
      expect(created.status, JSON.stringify(created)).toBe('allowed');
      const executed = await (await fetch(`${url}/intent/${created.intentId}/execute`, { method: 'POST', headers })).json();
      expect(executed.status, `${body}: ${JSON.stringify(executed)}`).toBe('confirmed');
    }
  }, 120_000);

  it('POST /intent refuses an EVM address on the XRPL wallet at creation (400 naming destination), not `allowed`', async () => {
    const [, base, unlockBody] = /TOKEN=\$\(curl -s -X POST (\S+)\/session\/unlock .* -d '([^']+)' \| node -pe/.exec(out.stdout);
    const { token } = await (await fetch(`${base}/session/unlock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: unlockBody })).json();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = async (destination) => {
      const r = await fetch(`${base}/intent`, { method: 'POST', headers, body: JSON.stringify({ wallet: 'ops-xrpl', destination, amount: '1000000' }) });
      return { status: r.status, body: await r.json() };
    };
    const evm = await post('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC');
    expect(evm.status).toBe(400);
    expect(evm.body.error.data.path).toBe('destination');
    expect(evm.body.error.message).toContain('not an address on xrpl:local');
    // The ledger-free half of network_separation at creation too: a mainnet X-address on a test network.
    const mainnet = await post('XVLhHMPHU98es4dbozjVtdWzVrDjtV5fdx1mHp98tDMoQXb');
    expect(mainnet.status).toBe(400);
    expect(mainnet.body.error.data.path).toBe('destination');
    expect(mainnet.body.error.message).toContain('mainnet');
    // Nothing was created for either: the XRPL wallet's intents are the banner's one transfer.
    const intents = await (await fetch(`${base}/intents?limit=1000`, { headers })).json();
    expect(intents.filter((i) => i.wallet === 'ops-xrpl').map((i) => i.amount)).toEqual(['10000000']);
  });

  it("each process's log is a file in the working directory, and the banner says where", () => {
    const logs = join(dir, 'logs');
    expect(out.stdout).toContain(`in ${logs}`);
    for (const name of ['signer-a', 'signer-b', 'signer-c', 'control-plane']) {
      const pid = Number(new RegExp(`${name}\\.log \\(pid (\\d+)\\)`).exec(out.stdout)?.[1]);
      expect(pid, `${name} in the banner`).toBeGreaterThan(0);
      const log = readFileSync(join(logs, `${name}.log`), 'utf8');
      expect(log).toContain(`pid ${pid}`);
    }
    // What a process says after start-up reaches its log too: the control plane's access log
    // records the requests of the test above.
    expect(readFileSync(join(logs, 'control-plane.log'), 'utf8')).toMatch(/"path":"\/intent\/\{id\}\/execute","status":200/);
    for (const once of ['keygen-a', 'control-plane-init', 'provision']) expect(existsSync(join(logs, `${once}.log`)), once).toBe(true);
  });

  it('the launcher reports a signer that dies', async () => {
    const pid = Number(/signer-b\.log \(pid (\d+)\)/.exec(out.stdout)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(out.stderr).not.toContain('signer b');
    process.kill(pid, 'SIGKILL');
    await until(() => out.stderr.includes(`its whole log: ${join(dir, 'logs', 'signer-b.log')}`), 'the report of signer b');
    expect(out.stderr).toContain(`vault: signer b (pid ${pid}) was killed by SIGKILL`);
    // The report repeats what the signer said last (its listening line) and the launcher keeps running.
    expect(out.stderr).toMatch(/its last output:\n\s+\{"listening":/);
    expect(child.exitCode).toBeNull();
    // The other signers are not reported.
    expect(out.stderr).not.toMatch(/signer [ac] \(pid/);
  });

  it('Ctrl-C after a signer died still stops everything, exit 130, and reports no exit of its own making', async () => {
    const before = out.stderr;
    child.kill('SIGINT');
    const { code } = await exited;
    expect(code).toBe(130);
    expect(out.stderr.slice(before.length)).not.toContain('was killed by');
  });
});
