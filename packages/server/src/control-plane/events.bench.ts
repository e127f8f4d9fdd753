/**
 * `pnpm bench`: what the event outbox adds to POST /intent. The same control plane, the same
 * five-rule policy, durable (fsync per group commit), the same load (64 keep-alive connections
 * from a separate process, test/control-plane/fixtures/load.mjs), run with events and without:
 * "without" is the same build with the store told to drop the event drafts it is given (patched
 * here, in the bench only: the product has no switch that turns its outbox off), so it still pays
 * for the projection, which is measured on its own below (projectReceipt per call). After one
 * uncounted run, runs go without, with, with, without, so drift on a shared host falls on both.
 * Server CPU per request
 * (this process; the load generator is another) is the figure that moves least.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControlPlaneClient, projectReceipt } from '@vault/sdk';
import { MemoryLedger, createMemoryDriver, memoryWallet } from '@vault/sdk/testing';
import { bench, describe } from 'vitest';
import { BENCH_INTENT_RULES, loadOnce, type LoadRun } from '../../test/load-control.js';
import { initStateDir, startControlPlane } from './run.js';
import { emptyState } from './state.js';
import type { IntentStore } from './store.js';

const PASS = 'bench passphrase 0123';
const DURATION_MS = Number(process.env['BENCH_SECONDS'] ?? 6) * 1000;
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 64);

type LoadResult = LoadRun;
const load = loadOnce;


const rules = BENCH_INTENT_RULES;

const fmt = (n: number, d = 2) => Number(n.toFixed(d));

/** One run on a fresh state directory: warm-up, then the measured load; events on or dropped. */
async function run(events: boolean, durationMs = DURATION_MS): Promise<LoadResult & { cpuUs: number; eventsWritten: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'vault-bench-events-'));
  try {
    const ledger = new MemoryLedger();
    const driver = createMemoryDriver({ ledger });
    const { wallet } = memoryWallet({ ledger, wallet: 'ops' });
    await initStateDir({ stateDir: dir, passphrase: PASS, scrypt: { N: 1024, r: 8, p: 1 }, state: { ...emptyState(), wallets: [wallet], policies: [{ wallet: 'ops', version: 1, rules }] } });
    const running = await startControlPlane({ stateDir: dir, drivers: [driver] });
    if (!events) {
      // The bench's "without": the store drops the drafts (the writer still projects them).
      const store = running.cp.store as IntentStore & { write: IntentStore['write'] };
      const write = store.write.bind(store);
      store.write = (record, receipt, extra) => write(record, receipt, extra, []);
    }
    const { token } = await createControlPlaneClient({ baseUrl: running.url }).unlock(PASS);
    const cfg = { url: running.url, path: '/intent', method: 'POST', token, concurrency: CONCURRENCY, bodyKind: 'intent' as const };
    await load({ ...cfg, durationMs: 3000 });
    const before = process.cpuUsage();
    const r = await load({ ...cfg, durationMs });
    const u = process.cpuUsage(before);
    const eventsWritten = running.cp.store.lastEventSeq;
    await running.close();
    return { ...r, cpuUs: (u.user + u.system) / r.requests, eventsWritten };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A first run, not counted: the process's first control plane ran slower than the rest (JIT, the
// first LMDB environment), which fell on whichever variant came first. Then without, with, with,
// without, so a drift over the runs falls on both variants alike.
await run(true, 3000);
const runs: { events: boolean; r: Awaited<ReturnType<typeof run>> }[] = [];
for (const events of [false, true, true, false]) runs.push({ events, r: await run(events) });
const rows = runs.map(({ events, r }) => ({
  run: events ? 'POST /intent with events (outbox)' : 'POST /intent, events dropped',
  'req/s': fmt(r.rps, 0),
  'p50 ms': fmt(r.p50),
  'p99 ms': fmt(r.p99),
  'CPU us/req': fmt(r.cpuUs, 1),
  note: `${r.ok} ok, ${r.errors} errors; ${r.eventsWritten} events in the log`,
}));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const withE = runs.filter((x) => x.events).map((x) => x.r);
const without = runs.filter((x) => !x.events).map((x) => x.r);
rows.push({
  run: 'ratio with / without (mean of the pairs)',
  'req/s': fmt(mean(withE.map((r) => r.rps)) / mean(without.map((r) => r.rps))),
  'p50 ms': fmt(mean(withE.map((r) => r.p50)) / mean(without.map((r) => r.p50))),
  'p99 ms': fmt(mean(withE.map((r) => r.p99)) / mean(without.map((r) => r.p99))),
  'CPU us/req': fmt(mean(withE.map((r) => r.cpuUs)) / mean(without.map((r) => r.cpuUs)), 3),
  note: 'CPU ratio > 1: what writing the events costs per request (projection excluded; see below)',
});
console.log('\nevent outbox bench figures');
console.table(rows);

const body = {
  decision: { decision: 'allow', reasons: [{ rule: 'hard_ceiling', ok: true, detail: 'under the ceiling' }], required_weight: 0, current_weight: 0, not_before: 0 },
  intentId: 'int_' + 'ab'.repeat(32),
  status: 'allowed',
};
describe('event projection', () => {
  bench('projectReceipt(intent.created)', () => {
    projectReceipt({ kind: 'intent.created', at: 1_767_225_600, hash: 'cd'.repeat(32), intentId: body.intentId, body }, { wallet: 'ops', from: null });
  }, { time: 1000 });
});
