/**
 * @module control-plane/history
 * What velocity caps and agent budgets count, kept in memory per wallet and aggregated: intents
 * created in the same second with the same asset, initiator and operation are one entry with the
 * summed amount. The SDK's spendInWindow gives exactly the same total for the aggregate as for the
 * individual entries (its window is in whole seconds and it filters on exactly these fields), so
 * a cap costs O(seconds in the window) per evaluation instead of O(intents in the window).
 * Denied and failed intents never count, so they are not kept.
 */
import { policyLookback, type HistoryEntry, type IntentStatus, type PolicySet } from '@vault/sdk';
import { historyEntry, type IntentRecord, type IntentStore } from './store.js';

const NOT_COUNTED: ReadonlySet<IntentStatus> = new Set(['denied', 'failed']);

function bucketKey(e: HistoryEntry): string {
  return `${e.created_at}|${e.asset_symbol ?? ''}|${e.asset_issuer ?? ''}|${e.initiator}|${e.op}`;
}

/** How far back a policy looks (the SDK's policyLookback: one definition for both services). */
export const lookback = policyLookback;

interface WalletBuckets {
  /** Entries at or after this time are loaded (0 = everything). */
  since: number;
  buckets: Map<string, { entry: HistoryEntry; sum: bigint }>;
}

export class HistoryCache {
  readonly #wallets = new Map<string, WalletBuckets>();
  constructor(
    private readonly store: IntentStore,
    /** Records whose writes are queued but not yet committed (the store does not show them yet). */
    private readonly pending: () => Iterable<IntentRecord> = () => [],
  ) {}

  #load(wallet: string, since: number): WalletBuckets {
    const have = this.#wallets.get(wallet);
    if (have && have.since <= since) return have;
    const w: WalletBuckets = { since, buckets: new Map() };
    const entries = new Map<string, HistoryEntry>();
    for (const e of this.store.historySince(wallet, since)) entries.set(e.intentId, e);
    for (const r of this.pending()) if (r.intent.wallet === wallet) entries.set(r.intentId, historyEntry(r));
    for (const e of entries.values()) this.#add(w, e, 1n);
    this.#wallets.set(wallet, w);
    return w;
  }

  #add(w: WalletBuckets, e: HistoryEntry, sign: bigint): void {
    if (NOT_COUNTED.has(e.status) || e.created_at < w.since) return;
    const key = bucketKey(e);
    let b = w.buckets.get(key);
    if (!b) {
      b = { entry: { ...e, intentId: `agg:${key}`, status: 'allowed' }, sum: 0n };
      w.buckets.set(key, b);
    }
    b.sum += sign * BigInt(e.amount);
    if (b.sum === 0n) w.buckets.delete(key);
  }

  /** The history a policy needs for `wallet`, without the intent `exclude` itself. */
  forPolicy(policy: PolicySet, wallet: string, now: number, exclude?: IntentRecord): HistoryEntry[] {
    const back = lookback(policy);
    if (back === 0) return [];
    const since = back === null ? 0 : Math.max(0, now - back);
    const w = this.#load(wallet, since);
    const skip = exclude && !NOT_COUNTED.has(exclude.status) ? bucketKey(historyEntry(exclude)) : null;
    const out: HistoryEntry[] = [];
    for (const [key, b] of w.buckets) {
      if (b.entry.created_at < since) continue;
      let sum = b.sum;
      if (key === skip && exclude) sum -= BigInt(exclude.intent.amount);
      if (sum > 0n) out.push({ ...b.entry, amount: sum.toString() });
    }
    return out;
  }

  /** Records a status change (or a new intent: `before` null). Call before the write commits. */
  update(before: IntentRecord | null, after: IntentRecord): void {
    const w = this.#wallets.get(after.intent.wallet);
    if (!w) return; // loaded lazily from the store, which will have the write
    if (before) this.#add(w, historyEntry(before), -1n);
    this.#add(w, historyEntry(after), 1n);
  }

  /** Drops cached buckets older than a day beyond what any policy can ask for (bounded memory). */
  prune(now: number, keepSeconds: number): void {
    for (const w of this.#wallets.values()) {
      if (w.since === 0) continue;
      const floor = now - keepSeconds;
      if (floor <= w.since) continue;
      for (const [k, b] of w.buckets) if (b.entry.created_at < floor) w.buckets.delete(k);
      w.since = floor;
    }
  }

  clear(): void {
    this.#wallets.clear();
  }
}
