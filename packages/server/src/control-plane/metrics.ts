/**
 * @module control-plane/metrics
 * What the control plane exposes at GET /metrics and answers at GET /ready. The registry and the
 * request middleware are the shared edge's (http/metrics.ts); here are the control plane's own
 * families and its readiness checks.
 */
import { INTENT_STATUSES, VaultError, type ExecuteOutcome } from '@vault/sdk';
import { httpMetricFamilies, MetricsRegistry, OTHER, type Counter, type HttpMetrics, type ReadyCheck } from '../http/metrics.js';
import type { ControlPlane } from './service.js';

export interface ControlPlaneMetrics {
  registry: MetricsRegistry;
  http: HttpMetrics;
  /** Records how one POST /intent/{id}/execute ended. */
  execute(outcome: ExecuteOutcome | { error: unknown }): void;
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

  // Counting is a scan of every intent (synchronous, in the event loop), so a scrape reuses the last
  // count until the store changes (every status change is committed with its events: an unmoved
  // event log means unmoved counts), and a scan that took t >= 20 ms waits 100 t before the next
  // one: a large store spends at most 1% of the loop recounting, a small one is always current.
  let counted: { seq: number; size: number; counts: Map<string, number>; until: number } | null = null;
  registry.collectGauge('vault_intents', 'Intents in the store by status (recounted when the store changed, at most 1% of the time).', ['status'], () => {
    const seq = cp.store.lastEventSeq;
    const size = cp.store.size;
    const t0 = performance.now();
    if (!counted || ((counted.seq !== seq || counted.size !== size) && t0 >= counted.until)) {
      const counts = new Map<string, number>(INTENT_STATUSES.map((s) => [s, 0]));
      for (const { value } of cp.store.intents.getRange({})) {
        const s = (INTENT_STATUSES as readonly string[]).includes(value.status) ? value.status : OTHER;
        counts.set(s, (counts.get(s) ?? 0) + 1);
      }
      const took = performance.now() - t0;
      counted = { seq, size, counts, until: took >= 20 ? t0 + took * 100 : 0 };
    }
    return [...counted.counts].map(([status, n]) => [{ status }, n] as const);
  });

  // Today's store is one LMDB directory held by one process (state-lock.ts): this instance is the
  // single writer, with no lease to lose. A store with leases (several instances on PostgreSQL)
  // would report its lease state here instead; until then the gauge says 1 and the backend.
  registry.collectGauge('vault_store_writer', 'Whether this instance is the writer of its store (1) or not (0); LMDB: single writer, always 1.', ['backend'], () => [[{ backend: 'lmdb' }, 1]]);
  registry.collectGauge('vault_receipts', 'Receipts in the control plane\'s chain.', [], () => [[{}, cp.receiptCount]]);

  return {
    registry,
    http,
    execute(r) {
      if (!('error' in r)) return outcomes.inc({ outcome: r.status, stage: '' });
      const data = r.error instanceof VaultError ? (r.error.data as { stage?: unknown } | null) : null;
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
 * - `open`: the service is not shutting down.
 * Ledgers and signers are not checked: each is one chain's or one key's dependency, reported per
 * intent at execute; taking the whole instance out of a load balancer for one of them would stop
 * every other chain too.
 */
export function controlPlaneReadiness(cp: ControlPlane): ReadyCheck[] {
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
  return checks;
}
