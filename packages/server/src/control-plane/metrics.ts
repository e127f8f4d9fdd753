/**
 * @module control-plane/metrics
 * What the control plane exposes at GET /metrics and answers at GET /ready. The registry and the
 * request middleware are the shared edge's (http/metrics.ts); here are the control plane's own
 * families and its readiness checks.
 */
import { INTENT_STATUSES, VaultError, type ExecuteOutcome, type VaultEvent } from '@vault/sdk';
import { httpMetricFamilies, MetricsRegistry, OTHER, type Counter, type HttpMetrics, type LabelValues, type ReadyCheck } from '../http/metrics.js';
import type { ControlPlane } from './service.js';
import { answerKind } from './signers.js';

export interface ControlPlaneMetrics {
  registry: MetricsRegistry;
  http: HttpMetrics;
  /** Records how one POST /intent/{id}/execute ended. */
  execute(outcome: ExecuteOutcome | { error: unknown }): void;
}

/** Intents a count reads before it lets the event loop run (a large store is counted in slices). */
const COUNT_SLICE = 2000;

/**
 * Intents by status, kept current from the event log: one count over a read snapshot of the store,
 * then `intent.created` adds and `intent.status_changed` moves. The count is read in slices between
 * which requests run (a synchronous scan of a large store stalled the loop: about 9 us an intent
 * measured here, seconds at a million). Events committed after the snapshot, buffered meanwhile,
 * are applied once it is done; those it already holds (seq at or below its last) are skipped.
 */
function intentCounter(cp: ControlPlane): { read(): Iterable<readonly [LabelValues, number]> } {
  let counts: Map<string, number> | null = null;
  let started = false;
  let snapshotSeq = Number.POSITIVE_INFINITY;
  const pending: VaultEvent[] = [];
  const bump = (status: unknown, by: number) => {
    if (!counts) return;
    const s = typeof status === 'string' && (INTENT_STATUSES as readonly string[]).includes(status) ? status : OTHER;
    counts.set(s, (counts.get(s) ?? 0) + by);
  };
  const apply = (e: VaultEvent) => {
    if (e.seq <= snapshotSeq) return;
    const d = e.data as { status?: unknown; from?: unknown; to?: unknown };
    if (e.type === 'intent.created') bump(d.status, 1);
    else if (e.type === 'intent.status_changed') {
      bump(d.from, -1);
      bump(d.to, 1);
    }
  };
  const count = async () => {
    // Listen first: nothing committed from now on is missed; the snapshot's seq filters repeats.
    cp.store.onEvents((events) => {
      if (counts) for (const e of events) apply(e);
      else pending.push(...events);
    });
    const txn = cp.store.root.useReadTransaction();
    try {
      let last = 0;
      for (const { key } of cp.store.events.getRange({ reverse: true, limit: 1, transaction: txn })) last = key;
      const tally = new Map<string, number>(INTENT_STATUSES.map((st) => [st, 0]));
      let n = 0;
      for (const { value } of cp.store.intents.getRange({ transaction: txn })) {
        const st = (INTENT_STATUSES as readonly string[]).includes(value.status) ? value.status : OTHER;
        tally.set(st, (tally.get(st) ?? 0) + 1);
        if (++n % COUNT_SLICE === 0) await new Promise((r) => setImmediate(r));
      }
      snapshotSeq = last;
      counts = tally;
      for (const e of pending.splice(0)) apply(e);
    } finally {
      txn.done();
    }
  };
  return {
    read() {
      if (!started) {
        started = true;
        // A failed count (store closing) leaves the gauge absent rather than wrong.
        void count().catch(() => undefined);
      }
      return counts ? [...counts].map(([status, v]) => [{ status }, v] as const) : [];
    },
  };
}

export function controlPlaneMetrics(cp: ControlPlane): ControlPlaneMetrics {
  const registry = new MetricsRegistry();
  const http = httpMetricFamilies(registry);
  const outcomes: Counter = registry.counter(
    'vault_execute_outcomes_total',
    'POST /intent/{id}/execute results: outcome confirmed, awaiting_signatures or denied; refused with the stage that refused; error for a fault.',
    ['outcome', 'stage'],
    { maxSeries: 64 },
  );

  // Execute goes on at the quorum, so a slow or hung signer no longer slows anything down: this is
  // where it shows (a signer often not_awaited, or unavailable, leaves its wallet without a spare).
  const answers: Counter = registry.counter(
    'vault_signer_answers_total',
    'Each signer line of an execute: signed, refused, unavailable (unreachable, no endpoint, a fault), or not_awaited (the quorum was reached before it answered).',
    ['signer', 'answer'],
    { maxSeries: 256 },
  );
  const countAnswers = (lines: unknown) => {
    if (!Array.isArray(lines)) return;
    for (const line of lines as { signer?: unknown; ok?: unknown; detail?: unknown }[]) {
      if (typeof line?.signer !== 'string') continue;
      answers.inc({ signer: line.signer, answer: answerKind({ ok: line.ok === true, detail: typeof line.detail === 'string' ? line.detail : '' }) });
    }
  };

  const intents = intentCounter(cp);
  registry.collectGauge('vault_intents', 'Intents in the store by status (absent until the first count has finished).', ['status'], () => intents.read());

  // LMDB alone: one process holds the state directory (state-lock.ts), the single writer, no lease.
  // PostgreSQL: the writer's lease decides, and can be lost.
  registry.collectGauge('vault_store_writer', 'Whether this instance is the writer of its store (1) or not (0); LMDB: single writer, always 1.', ['backend'], () => [
    [{ backend: cp.database ? 'postgres' : 'lmdb' }, cp.database ? (cp.database.role === 'writer' ? 1 : 0) : 1],
  ]);
  if (cp.database) {
    const db = cp.database;
    registry.collectGauge('vault_lease_token', 'The fencing token of the writer lease this instance holds (0 when it holds none).', [], () => [[{}, db.fence ?? 0]]);
    registry.collectGauge('vault_lease_lost', 'Whether this instance lost the writer lease after holding it (1: it writes no more; restart it).', [], () => [[{}, cp.leaseLost === null ? 0 : 1]]);
    registry.collectGauge('vault_lease_changes', 'Times this instance took the lease (promoted) and lost it (demoted).', ['change'], () => [
      [{ change: 'promoted' }, db.counters.promotions],
      [{ change: 'demoted' }, db.counters.demotions],
    ]);
    registry.collectGauge('vault_replica_applied', 'Shared-log entries this instance applied to its replica, and the log position it is at.', ['what'], () => [
      [{ what: 'entries' }, db.counters.applied],
      [{ what: 'position' }, cp.store.appliedLogSeq],
    ]);
  }
  registry.collectGauge('vault_receipts', 'Receipts in the control plane\'s chain.', [], () => [[{}, cp.receiptCount]]);

  return {
    registry,
    http,
    execute(r) {
      if (!('error' in r)) {
        countAnswers(r.signers);
        return outcomes.inc({ outcome: r.status, stage: '' });
      }
      const data = r.error instanceof VaultError ? (r.error.data as { stage?: unknown; signers?: unknown } | null) : null;
      countAnswers(data?.signers);
      const stage = typeof data?.stage === 'string' ? data.stage : '';
      outcomes.inc({ outcome: r.error instanceof VaultError && r.error.code === -32602 ? 'refused' : 'error', stage });
    },
  };
}

/**
 * GET /ready for the control plane. Ready means it can take and record intents:
 * - `store`: the intent store is open, readable, and no commit has failed (after a failed commit
 *   every write is refused until a restart);
 * - `receipts`: the receipt chain's head matches its anchor (a mismatch means the store was
 *   rolled back or edited, and the service must not record on top of it);
 * - `open`: the service is not shutting down;
 * - `lease` (PostgreSQL): this instance has not lost the writer's lease after holding it (one that
 *   did writes no more until restarted). A standby is ready: it serves reads. `?role=writer` adds
 *   a `writer` check, for a load balancer that routes writes only to the instance that takes them.
 * Ledgers and signers are not checked: each is one chain's or one key's dependency, reported per
 * intent at execute; taking the whole instance out of a load balancer for one of them would stop
 * every other chain too.
 */
export function controlPlaneReadiness(cp: ControlPlane, wantWriter = false): ReadyCheck[] {
  const checks: ReadyCheck[] = [];
  let store: ReadyCheck = { name: 'store', ok: true };
  try {
    const fault = cp.store.fault;
    if (fault !== null) store = { name: 'store', ok: false, detail: fault };
    else cp.store.getMeta();
  } catch (e) {
    store = { name: 'store', ok: false, detail: `unreadable: ${e instanceof Error ? e.name : 'error'}` };
  }
  checks.push(store);
  checks.push(cp.anchorOk ? { name: 'receipts', ok: true } : { name: 'receipts', ok: false, detail: 'the receipt chain does not match its anchor' });
  checks.push(cp.closing ? { name: 'open', ok: false, detail: 'shutting down' } : { name: 'open', ok: true });
  if (cp.database) {
    checks.push(cp.leaseLost === null ? { name: 'lease', ok: true, detail: cp.database.role } : { name: 'lease', ok: false, detail: `lost the writer lease (${cp.leaseLost}); restart this instance to stand by again` });
  }
  if (wantWriter) {
    const writer = cp.database ? cp.database.role === 'writer' : true;
    checks.push(writer ? { name: 'writer', ok: true } : { name: 'writer', ok: false, detail: `a standby; the writer is ${cp.database?.writerUrl ?? 'unknown'}` });
  }
  return checks;
}
