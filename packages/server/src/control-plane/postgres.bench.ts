/**
 * `pnpm bench`: the control plane on PostgreSQL beside LMDB, in one run (issue #26). POST /intent
 * with the five-rule policy over loopback, 64 keep-alive connections from a separate process
 * (test/control-plane/fixtures/load.mjs), on:
 *   - LMDB, the embedded default (fsync per group commit): the floor;
 *   - PostgreSQL, one instance (the writer alone);
 *   - PostgreSQL, two instances: the writer under the load while a standby follows the log (in
 *     this process, so its replay shares the writer's event loop, as it shares the cores), and
 *     how far behind the standby is when the load stops, in log entries and in ms to catch up.
 * All three are up at once and loaded in turns (L, P1, P2, P2, P1, L) so drift on a shared host
 * falls on each alike; ratios PG/LMDB are from the same run. PostgreSQL is a real server
 * (scripts/postgres.mjs) with fsync on, so both sides make a commit durable before the reply.
 * CPU per request is this process's (the control planes) and, apart, the PostgreSQL server's.
 * Then failover with the real CLI: two `serve` processes on one database, the writer killed with
 * SIGKILL, and the time from the kill to the first POST /intent the standby acknowledges (a client
 * retrying every 50 ms), several times per lease length. Figures are printed as a table; nothing
 * is asserted. BENCH_SECONDS, BENCH_FAILOVERS, BENCH_FAILOVER_LEASES (e.g. "2,5") shorten a run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createControlPlaneClient } from '@vault/sdk';
import { MemoryLedger, createMemoryDriver, memoryWallet } from '@vault/sdk/testing';
import pg from 'pg';
import { bench, describe } from 'vitest';
import { BENCH_INTENT_RULES, loadOnce, type LoadRun } from '../../test/load-control.js';
import { startPostgres } from '../../../../scripts/postgres.mjs';
import { buildControlPlaneCli } from '../../test/control-plane/processes.js';
import { migrateControlPlane } from './postgres/log.js';
import { initStateDir, startControlPlane, type RunningControlPlane } from './run.js';
import { emptyState } from './state.js';
import type { CommitBatch } from './store.js';

const here = dirname(fileURLToPath(import.meta.url));
const PKG = resolve(here, '../..');
const MEMORY_DRIVER = resolve(here, '../../test/control-plane/fixtures/memory-driver.mjs');
const PASS = 'bench passphrase 0123';
const DURATION_MS = Number(process.env['BENCH_SECONDS'] ?? 6) * 1000;
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 64);
const WARMUP_MS = 3000;
const FAILOVERS = Number(process.env['BENCH_FAILOVERS'] ?? 5);
const FAILOVER_LEASES = (process.env['BENCH_FAILOVER_LEASES'] ?? '2,5').split(',').map(Number);
const RETRY_MS = 50;

type LoadResult = LoadRun;
const load = (cfg: { url: string; token: string; concurrency: number; durationMs: number }): Promise<LoadResult> => loadOnce({ ...cfg, path: '/intent', method: 'POST', bodyKind: 'intent' });


const rules = BENCH_INTENT_RULES;

const fmt = (n: number, d = 2) => Number(n.toFixed(d));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function until<T>(what: string, fn: () => T | undefined | false, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** A state directory: one wallet on the memory chain, the five rules; `driverModule` for the CLI. */
async function makeState(dir: string, driverModule: boolean) {
  const ledger = new MemoryLedger({ chain: 'memory:devnet' });
  const driver = createMemoryDriver({ ledger });
  const { wallet } = memoryWallet({ ledger, wallet: 'ops' });
  const state = { ...emptyState(), wallets: [wallet], policies: [{ wallet: 'ops', version: 1, rules }], ...(driverModule ? { drivers: [{ module: MEMORY_DRIVER, options: {} }] } : {}) };
  await initStateDir({ stateDir: dir, passphrase: PASS, scrypt: { N: 1024, r: 8, p: 1 }, state });
  return { driver };
}

/** A copy of a state directory for another instance: same keys and state, its own lock and replica. */
function copyState(from: string, to: string): void {
  cpSync(from, to, { recursive: true, filter: (src) => !src.endsWith('serve.lock') && !src.includes('/replica') && !src.includes('/store') });
}

/**
 * CPU seconds of the PostgreSQL server: the postmaster, the children it has reaped (autovacuum
 * workers come and go) and those alive (backends, WAL writer, checkpointer).
 */
function pgCpuSeconds(): number {
  let total = 0;
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = readFileSync(`/proc/${e}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      if (Number(e) === db.pid) total += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
      else if (Number(f[1]) === db.pid) total += (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      // the process ended between the listing and the read
    }
  }
  return total;
}

const db = await startPostgres({ fsync: true });
const admin = new pg.Client({ connectionString: db.url });
await admin.connect();
/** A fresh database on the one server, migrated, for each scenario (each has its own log and lease). */
async function database(name: string): Promise<string> {
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(db.url);
  u.pathname = `/${name}`;
  await migrateControlPlane(u.toString());
  return u.toString();
}

const rows: Record<string, string | number>[] = [];
const dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;
const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length);

/** Times each append to the shared log and counts the intents it carries (wraps the instance's method). */
function timeAppends(running: RunningControlPlane): { ms: number[]; writes: number[]; largest: CommitBatch | null } {
  const log = running.cp.database!;
  const append = log.append.bind(log);
  const out = { ms: [] as number[], writes: [] as number[], largest: null as CommitBatch | null };
  log.append = async (entry, logSeq) => {
    const t = performance.now();
    const r = await append(entry, logSeq);
    out.ms.push(performance.now() - t);
    out.writes.push(entry.batch.writes.length);
    if (entry.batch.writes.length > (out.largest?.writes.length ?? 0)) out.largest = entry.batch;
    return r;
  };
  return out;
}

/** A control plane on `url`, in this process, named `instanceId`; waits for the role it should take. */
async function onPostgres(dir: string, driver: ReturnType<typeof createMemoryDriver>, url: string, instanceId: string, role: 'writer' | 'standby'): Promise<RunningControlPlane> {
  const running = await startControlPlane({ stateDir: dir, drivers: [driver], expirySweepMs: 0, database: { url, instanceId, leaseSeconds: 10, pollMs: 1000 } });
  open.add(running);
  await until(`${instanceId} to be ${role}`, () => running.cp.database?.role === role && (role === 'writer' || running.cp.database.writerUrl !== null));
  return running;
}

interface Config {
  name: string;
  url: string;
  token: string;
  appends: ReturnType<typeof timeAppends> | null;
  standby: RunningControlPlane | null;
  writer: RunningControlPlane;
  runs: { r: LoadResult; cpuUs: number; pgCpuUs: number; appendMs: number[]; appendWrites: number[]; endLag: number; catchUpMs: number; maxLag: number }[];
  single?: LoadResult;
}

let largestBatch: CommitBatch | null = null;
const procs: ChildProcess[] = [];
/** Control planes still open, closed in the finally below should a measurement throw. */
const open = new Set<RunningControlPlane>();
async function closeCp(c: RunningControlPlane): Promise<void> {
  open.delete(c);
  await c.close();
}

function kill9(proc: ChildProcess): Promise<void> {
  return new Promise((res) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return res();
    proc.once('exit', () => res());
    proc.kill('SIGKILL');
  });
}

async function measureAll(): Promise<void> {
  // All configurations are up at once and measured in turns (L, P1, P2, P2, P1, L), so drift on a
  // shared host (other work on the same two cores) falls on each of them alike.
  const lmdbDir = tmp('vault-pgbench-lmdb-');
  const { driver } = await makeState(lmdbDir, false);
  const lmdbCp = await startControlPlane({ stateDir: lmdbDir, drivers: [driver] });
  open.add(lmdbCp);
  const oneDir = tmp('vault-pgbench-one-');
  await makeState(oneDir, false);
  const oneCp = await onPostgres(oneDir, driver, await database('bench_one'), 'one-a', 'writer');
  const twoDir = tmp('vault-pgbench-two-');
  await makeState(twoDir, false);
  const twoUrl = await database('bench_two');
  const twoCp = await onPostgres(twoDir, driver, twoUrl, 'two-a', 'writer');
  const twoBDir = `${twoDir}-b`;
  dirs.push(twoBDir);
  copyState(twoDir, twoBDir);
  const twoStandby = await onPostgres(twoBDir, driver, twoUrl, 'two-b', 'standby');

  const configs: Config[] = [];
  for (const [name, writer, standby] of [['LMDB (fsync per group commit)', lmdbCp, null], ['PostgreSQL, 1 instance (writer)', oneCp, null], ['PostgreSQL, 2 instances (writer + standby)', twoCp, twoStandby]] as const) {
    const { token } = await createControlPlaneClient({ baseUrl: writer.url }).unlock(PASS);
    configs.push({ name, url: writer.url, token, writer, standby, appends: writer.cp.database ? timeAppends(writer) : null, runs: [] });
  }
  const [lmdb, one, two] = configs as [Config, Config, Config];

  for (const c of configs) await load({ url: c.url, token: c.token, concurrency: CONCURRENCY, durationMs: WARMUP_MS });
  for (const c of [lmdb, one, two, two, one, lmdb]) {
    if (c.appends) {
      c.appends.ms.length = 0;
      c.appends.writes.length = 0;
    }
    // The standby's lag in log entries, sampled through the load.
    let maxLag = 0;
    const lag = () => (c.standby ? c.writer.cp.store.appliedLogSeq - c.standby.cp.store.appliedLogSeq : 0);
    const sampler = setInterval(() => (maxLag = Math.max(maxLag, lag())), 50);
    const c0 = cpuSeconds();
    const p0 = pgCpuSeconds();
    const r = await load({ url: c.url, token: c.token, concurrency: CONCURRENCY, durationMs: DURATION_MS });
    const cpuUs = ((cpuSeconds() - c0) * 1e6) / Math.max(1, r.requests);
    const pgCpuUs = ((pgCpuSeconds() - p0) * 1e6) / Math.max(1, r.requests);
    clearInterval(sampler);
    // What the standby still lacks when the last reply is out, and how long it takes to apply it.
    const endLag = lag();
    const target = c.writer.cp.store.appliedLogSeq;
    const t0 = performance.now();
    if (c.standby) await until('the standby to catch up', () => c.standby!.cp.store.appliedLogSeq >= target);
    const catchUpMs = performance.now() - t0;
    c.runs.push({ r, cpuUs, pgCpuUs, appendMs: [...(c.appends?.ms ?? [])], appendWrites: [...(c.appends?.writes ?? [])], endLag, catchUpMs, maxLag });
  }
  for (const c of configs) c.single = await load({ url: c.url, token: c.token, concurrency: 1, durationMs: 3000 });
  const twoEntries = twoCp.cp.store.appliedLogSeq;
  await until('the standby to apply the last lone commit', () => twoStandby.cp.store.appliedLogSeq >= twoEntries);
  largestBatch = one.appends?.largest ?? null;
  await closeCp(twoStandby);
  for (const c of configs) await closeCp(c.writer);

  const avg = (c: Config, f: (x: Config['runs'][number]) => number) => mean(c.runs.map(f));
  const perRun = (c: Config, f: (x: Config['runs'][number]) => number, d = 0) => c.runs.map((x) => fmt(f(x), d)).join(' / ');
  for (const c of configs) {
    const rps = avg(c, (x) => x.r.rps);
    const p50 = avg(c, (x) => x.r.p50);
    const ratio = c === lmdb ? 'the floor' : `PG/LMDB: req/s ${fmt(rps / avg(lmdb, (x) => x.r.rps))}, p50 ${fmt(p50 / avg(lmdb, (x) => x.r.p50))}x, CPU here ${fmt(avg(c, (x) => x.cpuUs) / avg(lmdb, (x) => x.cpuUs))}x`;
    rows.push({
      measure: c.name,
      'req/s': fmt(rps, 0),
      'p50 ms': fmt(p50),
      'p99 ms': fmt(avg(c, (x) => x.r.p99)),
      'CPU us/req': fmt(avg(c, (x) => x.cpuUs), 0),
      'PG CPU us/req': fmt(avg(c, (x) => x.pgCpuUs), 0),
      note: `${ratio}; mean of ${c.runs.length} runs (req/s ${perRun(c, (x) => x.r.rps)}); ${c.runs.reduce((n, x) => n + x.r.errors, 0)} errors`,
    });
  }
  const appendMs = one.runs.flatMap((x) => x.appendMs);
  const appendWrites = one.runs.flatMap((x) => x.appendWrites);
  rows.push({ measure: '  1 instance: append (a transaction per group commit)', 'req/s': '', 'p50 ms': fmt(pct(appendMs, 0.5)), 'p99 ms': fmt(pct(appendMs, 0.99)), 'CPU us/req': '', 'PG CPU us/req': '', note: `${appendMs.length} appends under load, ${fmt(mean(appendWrites), 1)} writes each on average, ${Math.max(0, ...appendWrites)} at most` });
  rows.push({ measure: '  2 instances: standby lag (ms to catch up)', 'req/s': '', 'p50 ms': fmt(avg(two, (x) => x.catchUpMs)), 'p99 ms': '', 'CPU us/req': '', 'PG CPU us/req': '', note: `log entries behind when the load stopped: ${perRun(two, (x) => x.endLag)}, applied in ${perRun(two, (x) => x.catchUpMs, 1)} ms; at most ${perRun(two, (x) => x.maxLag)} behind while loaded (sampled every 50 ms); ${twoEntries} log entries in all; CPU here includes the standby's replay` });
  for (const c of configs) {
    const s1 = c.single!;
    rows.push({ measure: `${c.name}, one at a time`, 'req/s': fmt(s1.rps, 0), 'p50 ms': fmt(s1.p50), 'p99 ms': fmt(s1.p99), 'CPU us/req': '', 'PG CPU us/req': '', note: c === lmdb ? 'latency of a lone commit' : `p50 ${fmt(s1.p50 / lmdb.single!.p50)}x LMDB's` });
  }

  // ---------------------------------------------------------------- failover with the real CLI
  interface Serve {
    proc: ChildProcess;
    url: string;
    name: string;
  }

  /** Resolves with the first stdout line `match` accepts; rejects if the process exits first. */
  function lineOf(proc: ChildProcess, match: (line: string) => boolean, ms = 30_000): Promise<string> {
    return new Promise((res, rej) => {
      let buf = '';
      let err = '';
      const timer = setTimeout(() => done(new Error(`timeout waiting for output; got: ${buf.slice(-500)} ${err.slice(-500)}`)), ms);
      const onOut = (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop() ?? '';
        for (const l of lines) if (match(l)) return done(null, l);
      };
      const onErr = (d: Buffer) => (err += d.toString());
      const onExit = (code: number | null) => done(new Error(`process exited ${code}: ${err.slice(-800)}`));
      function done(e: Error | null, line?: string) {
        clearTimeout(timer);
        proc.stdout?.off('data', onOut);
        proc.stderr?.off('data', onErr);
        proc.off('exit', onExit);
        if (e) rej(e);
        else res(line!);
      }
      proc.stdout?.on('data', onOut);
      proc.stderr?.on('data', onErr);
      proc.once('exit', onExit);
    });
  }

  async function serve(stateDir: string, dbUrlFile: string, name: string, leaseSeconds: number, expect: 'lease_acquired' | 'listening'): Promise<Serve> {
    const proc = spawn(process.execPath, [CLI, 'serve', '--state-dir', stateDir, '--port', '0', '--database-url-file', dbUrlFile, '--instance-id', name, '--lease-seconds', String(leaseSeconds)], { stdio: ['ignore', 'pipe', 'pipe'], cwd: PKG });
    procs.push(proc);
    const listening = lineOf(proc, (l) => l.includes('"event":"listening"'));
    const acquired = expect === 'lease_acquired' ? lineOf(proc, (l) => l.includes('"event":"lease_acquired"')) : null;
    const url = JSON.parse(await listening).url as string;
    await acquired;
    // Nothing reads the rest of its output; keep the pipe drained so the process never blocks on it.
    proc.stdout?.resume();
    proc.stderr?.resume();
    return { proc, url, name };
  }

  async function postIntent(url: string, token: string, n: number): Promise<number> {
    try {
      const res = await fetch(`${url}/intent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ wallet: 'ops', destination: 'mem1' + (n % 50).toString(16).padStart(40, '0'), amount: String(1 + n), tags: [['desk', 'treasury']], memo: `failover-${n}` }),
        signal: AbortSignal.timeout(5000),
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  }

  // A private bundle of the CLI (as the crash tests build theirs): a concurrent `tsup` clean cannot delete it mid-run.
  const CLI = await buildControlPlaneCli('bench-cli');
  let seq = 0;
  for (const leaseSeconds of FAILOVER_LEASES) {
    const url = await database(`bench_failover_${leaseSeconds}`);
    const base = tmp(`vault-pgbench-failover-${leaseSeconds}-`);
    const template = join(base, 'template');
    await makeState(template, true);
    const urlFile = join(base, 'database-url');
    writeFileSync(urlFile, `${url}\n`, { mode: 0o600 });
    const stateFor = (i: number) => {
      const d = join(base, `i${i}`);
      copyState(template, d);
      return d;
    };
    let writer = await serve(stateFor(0), urlFile, 'f0', leaseSeconds, 'lease_acquired');
    const times: number[] = [];
    const attempts: number[] = [];
    for (let i = 1; i <= FAILOVERS; i++) {
      const standby = await serve(stateFor(i), urlFile, `f${i}`, leaseSeconds, 'listening');
      const { token } = await createControlPlaneClient({ baseUrl: standby.url }).unlock(PASS);
      const wt = await createControlPlaneClient({ baseUrl: writer.url }).unlock(PASS);
      // The writer is acknowledging writes and the standby refusing them: the state a kill meets.
      const okBefore = await postIntent(writer.url, wt.token, ++seq);
      const refused = await postIntent(standby.url, token, ++seq);
      if (okBefore !== 200 || refused !== 503) throw new Error(`failover setup: writer answered ${okBefore}, standby ${refused}`);
      // Leases renew every quarter lease: kill at a random point of that cycle, not always just after a renewal.
      await sleep(Math.floor(Math.random() * leaseSeconds * 250));
      const t0 = performance.now();
      await kill9(writer.proc);
      let tries = 0;
      for (;;) {
        tries++;
        const status = await postIntent(standby.url, token, ++seq);
        if (status === 200) break;
        if (performance.now() - t0 > (leaseSeconds + 30) * 1000) throw new Error(`failover: no acknowledged write ${leaseSeconds + 30} s after the kill (last status ${status})`);
        await sleep(RETRY_MS);
      }
      times.push(performance.now() - t0);
      attempts.push(tries);
      writer = standby;
    }
    await kill9(writer.proc);
    const sorted = [...times].sort((x, y) => x - y);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    rows.push({
      measure: `failover, --lease-seconds ${leaseSeconds} (kill -9 to first acknowledged POST /intent)`,
      'req/s': '',
      'p50 ms': fmt(median, 0),
      'p99 ms': '',
      'CPU us/req': '',
      'PG CPU us/req': '',
      note: `${times.length} runs: min ${fmt(sorted[0]!, 0)} / median ${fmt(median, 0)} / max ${fmt(sorted.at(-1)!, 0)} ms (each: ${times.map((t) => fmt(t, 0)).join(', ')}); ${attempts.join(', ')} tries at ${RETRY_MS} ms`,
    });
  }


  // One round trip to the server (the unit a commit on PostgreSQL pays several of; see postgres/log.ts append).
  const rtt: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t = performance.now();
    await admin.query('SELECT 1');
    rtt.push(performance.now() - t);
  }
  rtt.sort((x, y) => x - y);
  rows.push({ measure: 'PostgreSQL round trip (SELECT 1, one client)', 'req/s': '', 'p50 ms': fmt(rtt[1000]!, 3), 'p99 ms': fmt(rtt[1980]!, 3), 'CPU us/req': '', 'PG CPU us/req': '', note: '2000 in a row on loopback' });
}

try {
  await measureAll();
} finally {
  // Whatever happened, nothing this file started outlives it: processes by PID, then the server.
  for (const p of procs) await kill9(p);
  for (const c of open) await c.close().catch(() => undefined);
  await admin.end().catch(() => undefined);
  await db.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
console.log('\ncontrol plane on PostgreSQL: bench figures');
console.table(rows);

// What the writer pays in this process per append before the database sees it (postgres/log.ts
// append): the batch as JSON for cp_log, and the receipts, records and events again for their tables.
const batch = largestBatch as CommitBatch | null;
describe(`append's JSON for the largest batch of the run (${batch?.writes.length ?? 0} writes)`, () => {
  bench('JSON.stringify of the batch, its receipts, records and events', () => {
    if (!batch) return;
    JSON.stringify(batch);
    JSON.stringify(batch.writes.flatMap((w) => (w.receipt ? [w.receipt] : [])));
    JSON.stringify(batch.writes.flatMap((w) => (w.record ? [w.record] : [])));
    JSON.stringify(batch.events);
  }, { time: 500 });
});
