/**
 * The event log across real process deaths: the control plane runs as the CLI in a child process
 * (built from source like crash.test.ts), the ledger and signers in another (fixtures/devnet.mjs).
 * A kill -9 during a burst of POST /intent leaves every acknowledged intent with its event and no
 * event without its change; a stream followed with Last-Event-ID across restarts loses and repeats
 * nothing; `vault events tail` prints the same log, resuming on its own.
 */
import { createControlPlaneClient, eventId, type ControlPlaneClient, type ReceiptRecord, type VaultEvent } from '@vault/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bundleClis } from '../cli-bundle.js';
import { PASSPHRASE } from './helpers.js';
import { initDevnetStateDir, kill9, serveControlPlane, startDevnet, type Devnet, type ServedControlPlane } from './processes.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '../..');
const outDir = join(pkg, '.cache/cli-test-events');
const cli = join(outDir, 'control-plane/cli.js');
const vaultCli = join(outDir, 'provision/cli.js');

let dir = '';
let devnet: Devnet | undefined;
const procs: ChildProcess[] = [];

async function serve(stateDir: string, port = 0): Promise<ServedControlPlane> {
  const s = await serveControlPlane(cli, stateDir, { port });
  procs.push(s.proc);
  return s;
}

async function newStateDir(name: string): Promise<string> {
  const stateDir = join(dir, name);
  await initDevnetStateDir(stateDir, devnet!);
  return stateDir;
}

async function fullLog(client: ControlPlaneClient): Promise<VaultEvent[]> {
  const out: VaultEvent[] = [];
  for await (const page of client.events().replay({ pageSize: 1000 })) out.push(...page.events);
  return out;
}

async function chain(client: ControlPlaneClient): Promise<ReceiptRecord[]> {
  const r = (await client.ledgerRecent(1000)) as { receipts: ReceiptRecord[] };
  return r.receipts.reverse();
}

const dest = (n: number) => 'mem1' + String(n).padStart(40, '0');

beforeAll(async () => {
  await bundleClis(['control-plane/cli', 'provision/cli'], outDir);
  dir = mkdtempSync(join(tmpdir(), 'vault-events-crash-'));
  devnet = await startDevnet(dir, 20);
  procs.push(devnet.proc);
});

afterAll(async () => {
  for (const p of procs) await kill9(p);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('events across kill -9 and restarts (real processes)', () => {
  it('kill -9 during a burst of POST /intent: every acknowledged intent has its event, no event lacks its change', async () => {
    const stateDir = await newStateDir('burst');
    const s1 = await serve(stateDir);
    const acked = new Map<string, string>(); // intentId -> receipt_head
    let n = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const amount = ++n;
        try {
          const r = await s1.client.createIntent({ wallet: 'crash', destination: dest(amount), amount: String(amount) });
          acked.set(r.intentId, r.receipt_head);
        } catch {
          return; // the server died under us: never acknowledged
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    while (acked.size < 150) await new Promise((r) => setTimeout(r, 2));
    killed = true;
    await kill9(s1.proc);
    await Promise.all(workers);

    const s2 = await serve(stateDir);
    const events = await fullLog(s2.client);
    const receipts = await chain(s2.client);
    // No gap in the log and one intent.created per intent the store holds.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const created = new Map(events.filter((e) => e.type === 'intent.created').map((e) => [e.subject.intent!, e]));
    for (const [id, head] of acked) {
      const e = created.get(id);
      expect(e, `acknowledged ${id} has no event`).toBeDefined();
      expect(e!.receipt).toBe(head);
    }
    // No orphan: every event's change is on disk (its intent and its receipt), and every receipt has its event.
    const hashes = new Set(receipts.map((r) => r.hash));
    expect(receipts.length).toBe(events.length);
    for (const e of events) {
      expect(hashes.has(e.receipt!), `event ${e.id} names no receipt`).toBe(true);
      expect((await s2.client.intent(e.subject.intent!)).intentId).toBe(e.subject.intent);
    }
    // The intents written but never acknowledged (in flight at the kill) have their events too.
    expect(created.size).toBe((await s2.client.health())['intents']);
    expect(created.size).toBeGreaterThanOrEqual(acked.size);
    expect((await s2.client.ledgerVerify()).verified).toBe(true);
    await kill9(s2.proc);
  });

  it('a stream followed with Last-Event-ID across a kill -9 and a restart loses and repeats nothing; vault events tail prints the same log', async () => {
    const stateDir = await newStateDir('follow');
    const s1 = await serve(stateDir);
    const port = s1.port;
    // The follower and `vault events tail` both outlive the control plane: same URL, new process.
    const follower = createControlPlaneClient({ baseUrl: s1.url, timeoutMs: 20_000 });
    await follower.unlock(PASSPHRASE);
    const seen: VaultEvent[] = [];
    const reconnects: string[] = [];
    const ac = new AbortController();
    const following = (async () => {
      for await (const e of follower.events().follow({
        signal: ac.signal,
        reconnectDelayMs: 100,
        onReconnect: (_err, after) => reconnects.push(after ?? ''),
        reauthenticate: async () => {
          await follower.unlock(PASSPHRASE).catch(() => undefined);
          return true;
        },
      })) {
        seen.push(e);
      }
    })();
    const tail = spawn(process.execPath, [vaultCli, 'events', 'tail', '--url', s1.url, '--types', 'intent.created,intent.confirmed'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', VAULT_OPERATOR_PASSPHRASE: PASSPHRASE },
    });
    procs.push(tail);
    let tailOut = '';
    let tailErr = '';
    tail.stdout!.on('data', (d: Buffer) => (tailOut += d.toString()));
    tail.stderr!.on('data', (d: Buffer) => (tailErr += d.toString()));

    let amount = 5000;
    const burst = async (client: ControlPlaneClient, k: number) => {
      for (let i = 0; i < k; i++) await client.createIntent({ wallet: 'crash', destination: dest(++amount), amount: String(amount) });
    };
    await burst(s1.client, 10);
    const confirmed = await s1.client.createIntent({ wallet: 'crash', destination: dest(++amount), amount: String(amount) });
    expect((await s1.client.execute(confirmed.intentId)).status).toBe('confirmed');
    const until = async (pred: () => boolean, what: string) => {
      const t0 = Date.now();
      while (!pred()) {
        if (Date.now() - t0 > 30_000) throw new Error(`timeout: ${what}; seen ${seen.length}; tail ${tailOut.split('\n').length} ${tailErr.slice(-300)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await until(() => seen.some((e) => e.type === 'intent.confirmed'), 'first run');
    await until(() => tailOut.includes(' intent.confirmed '), 'tail first run');
    // kill -9 mid-burst, then a restart on the same port
    const inflight = burst(s1.client, 50).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 30));
    await kill9(s1.proc);
    await inflight;
    const s2 = await serve(stateDir, port);
    await burst(s2.client, 10);
    // and a clean restart (SIGTERM) too
    s2.proc.kill('SIGTERM');
    await new Promise((r) => s2.proc.once('exit', r));
    const s3 = await serve(stateDir, port);
    await burst(s3.client, 5);
    const log = await fullLog(s3.client);
    await until(() => seen.length >= log.length, 'follower caught up');
    await new Promise((r) => setTimeout(r, 200));
    expect(reconnects.length).toBeGreaterThanOrEqual(2);
    expect(seen.map((e) => e.id)).toEqual(log.map((e) => e.id));
    expect(seen).toEqual(log);

    const wanted = log.filter((e) => e.type === 'intent.created' || e.type === 'intent.confirmed');
    await until(() => tailOut.trim().split('\n').length >= wanted.length, 'tail caught up');
    await new Promise((r) => setTimeout(r, 200));
    const lines = tailOut.trim().split('\n');
    expect(lines.map((l) => l.split(' ')[0])).toEqual(wanted.map((e) => e.id));
    const c = lines.find((l) => l.includes(' intent.confirmed '))!;
    expect(c).toMatch(new RegExp(`^evt_\\d{16} \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z intent\\.confirmed intent=${confirmed.intentId},wallet=crash .*txHash=`));
    expect(tailErr).toContain('reconnecting after evt_');
    ac.abort();
    await following;
    await kill9(tail);
    await kill9(s3.proc);
    // A fresh tail with --after prints only what follows.
    const last = wanted.at(-2)!;
    const s4 = await serve(stateDir, port);
    const t2 = spawn(process.execPath, [vaultCli, 'events', 'tail', '--url', s3.url, '--after', last.id, '--types', 'intent.created,intent.confirmed'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', VAULT_OPERATOR_PASSPHRASE: PASSPHRASE },
    });
    procs.push(t2);
    let t2Out = '';
    t2.stdout!.on('data', (d: Buffer) => (t2Out += d.toString()));
    await until(() => t2Out.includes('\n'), 'second tail');
    await new Promise((r) => setTimeout(r, 200));
    expect(t2Out.trim().split('\n').map((l) => l.split(' ')[0])).toEqual([wanted.at(-1)!.id]);
    await kill9(t2);
    await kill9(s4.proc);
    expect(eventId(log.length)).toBe(log.at(-1)!.id);
  });
});
