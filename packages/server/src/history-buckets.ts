/**
 * @module history-buckets
 * What velocity caps and agent budgets count, aggregated: entries created in the same second with
 * the same asset, initiator and operation are one bucket with the summed amount. The SDK's
 * spendInWindow gives exactly the same total for the buckets as for the entries (its window is in
 * whole seconds and it filters on exactly these fields), so a cap costs O(buckets in the window)
 * instead of O(intents in the window). Denied and failed entries never count and are not kept.
 * Used by the control plane (over its store) and the signer (over its own signing history).
 */
import type { HistoryEntry, IntentStatus } from '@vault/sdk';

const NOT_COUNTED: ReadonlySet<IntentStatus> = new Set(['denied', 'failed']);

function bucketKey(e: HistoryEntry): string {
  return `${e.created_at}|${e.asset_symbol ?? ''}|${e.asset_issuer ?? ''}|${e.initiator}|${e.op}`;
}

export class HistoryBuckets {
  /** Entries created before this are not kept (0 = everything). */
  since: number;
  readonly #buckets = new Map<string, { entry: HistoryEntry; sum: bigint }>();

  constructor(since = 0) {
    this.since = since;
  }

  /** Adds (sign 1n) or removes (sign -1n) one entry's amount. */
  add(e: HistoryEntry, sign: bigint = 1n): void {
    if (NOT_COUNTED.has(e.status) || e.created_at < this.since) return;
    const key = bucketKey(e);
    let b = this.#buckets.get(key);
    if (!b) {
      b = { entry: { ...e, intentId: `agg:${key}`, status: 'allowed' }, sum: 0n };
      this.#buckets.set(key, b);
    }
    b.sum += sign * BigInt(e.amount);
    if (b.sum === 0n) this.#buckets.delete(key);
  }

  /** The buckets created at or after `since`, without the entry `exclude` (an intent evaluated again). */
  entries(since: number, exclude?: HistoryEntry): HistoryEntry[] {
    const skip = exclude && !NOT_COUNTED.has(exclude.status) ? bucketKey(exclude) : null;
    const out: HistoryEntry[] = [];
    for (const [key, b] of this.#buckets) {
      if (b.entry.created_at < since) continue;
      let sum = b.sum;
      if (key === skip && exclude) sum -= BigInt(exclude.amount);
      if (sum > 0n) out.push({ ...b.entry, amount: sum.toString() });
    }
    return out;
  }

  /** Drops buckets created before `floor` (bounded memory). */
  prune(floor: number): void {
    if (floor <= this.since) return;
    for (const [k, b] of this.#buckets) if (b.entry.created_at < floor) this.#buckets.delete(k);
    this.since = floor;
  }
}
