/**
 * @module control-plane/history
 * What velocity caps and agent budgets count, per wallet, aggregated into HistoryBuckets
 * (../history-buckets.ts) and loaded lazily from the store.
 */
import { policyLookback, policyWindows, type HistoryEntry, type PolicySet } from '@vault/sdk';
import { HistoryBuckets } from '../history-buckets.js';
import { historyEntry, type IntentRecord, type IntentStore } from './store.js';

/** How far back a policy looks (the SDK's policyLookback: one definition for both services). */
export const lookback = policyLookback;

export class HistoryCache {
  readonly #wallets = new Map<string, HistoryBuckets>();
  constructor(
    private readonly store: IntentStore,
    /** Records whose writes are queued but not yet committed (the store does not show them yet). */
    private readonly pending: () => Iterable<IntentRecord> = () => [],
  ) {}

  #load(wallet: string, since: number): HistoryBuckets {
    const have = this.#wallets.get(wallet);
    if (have && have.since <= since) return have;
    const w = new HistoryBuckets(since);
    const entries = new Map<string, HistoryEntry>();
    for (const e of this.store.historySince(wallet, since)) entries.set(e.intentId, e);
    for (const r of this.pending()) if (r.intent.wallet === wallet) entries.set(r.intentId, historyEntry(r));
    for (const e of entries.values()) w.add(e);
    this.#wallets.set(wallet, w);
    return w;
  }

  /** The history a policy needs for `wallet`, without the intent `exclude` itself. */
  forPolicy(policy: PolicySet, wallet: string, now: number, exclude?: IntentRecord): HistoryEntry[] {
    const back = lookback(policy);
    if (back === 0) return [];
    const since = back === null ? 0 : Math.max(0, now - back);
    return this.#load(wallet, since).windowed(now, policyWindows(policy), exclude ? historyEntry(exclude) : undefined);
  }

  /** Records a status change (or a new intent: `before` null). Call before the write commits. */
  update(before: IntentRecord | null, after: IntentRecord): void {
    const w = this.#wallets.get(after.intent.wallet);
    if (!w) return; // loaded lazily from the store, which will have the write
    if (before) w.add(historyEntry(before), -1n);
    w.add(historyEntry(after), 1n);
  }

  /** Drops cached buckets older than a day beyond what any policy can ask for (bounded memory). */
  prune(now: number, keepSeconds: number): void {
    for (const w of this.#wallets.values()) {
      if (w.since === 0) continue;
      w.prune(now - keepSeconds);
    }
  }

  /** Forgets every cached wallet (reloaded lazily from the store). */
  clear(): void {
    this.#wallets.clear();
  }
}
