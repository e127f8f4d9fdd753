/**
 * @module history-buckets
 * What velocity caps and agent budgets count, aggregated so that evaluating a cap costs the same
 * whatever the traffic in its window.
 *
 * Entries are grouped by what the SDK's spendInWindow filters on (asset, issuer, initiator,
 * operation) and by whether they are executed or pending, and, within a group, summed per
 * second, per minute and per hour. An entry counts for a window `w` at `now` exactly when `created_at > now - w` (whole seconds), so for a policy
 * whose windows are w1 < w2 < … the only thing that matters about an entry is which stretch
 * between consecutive edges `now - w` it falls in. `windowed()` hands evaluatePolicy one entry
 * per group and stretch, with that stretch's sum: the same totals for every rule as the raw
 * history, from at most (groups × windows) entries. The sum after an edge reads the hours after
 * it, then at most 59 minutes and 59 seconds: about 140 map lookups for a day, instead of one
 * entry per second that saw traffic (86,400 for a busy day: 130 ms per evaluation, measured).
 * What never counts (the SDK's countsTowardCaps: denied, failed, not an outflow) is not kept.
 * Used by the control plane (over its store) and the signer (over its own signing history).
 */
import { countsTowardCaps, EXECUTED_STATUSES, type HistoryEntry } from '@vault/sdk';

/**
 * What spendInWindow filters on, without the time, and whether the entry is executed or pending
 * (spendInWindowByState tells the two apart, so a velocity-cap refusal can say which it counted).
 */
function groupKey(e: HistoryEntry): string {
  return `${e.asset_symbol ?? ''}|${e.asset_issuer ?? ''}|${e.initiator}|${e.op}|${EXECUTED_STATUSES.has(e.status) ? 'executed' : 'pending'}`;
}

function bump(map: Map<number, bigint>, key: number, amount: bigint): void {
  const next = (map.get(key) ?? 0n) + amount;
  if (next === 0n) map.delete(key);
  else map.set(key, next);
}

/** One group's amounts by second, minute and hour: the sum after any edge in bounded work. */
class TimeSums {
  total = 0n;
  readonly seconds = new Map<number, bigint>();
  readonly minutes = new Map<number, bigint>();
  readonly hours = new Map<number, bigint>();
  /** Latest second ever added (entries may be dated ahead of the reader's clock). */
  latest = Number.NEGATIVE_INFINITY;

  add(t: number, amount: bigint): void {
    bump(this.seconds, t, amount);
    bump(this.minutes, Math.floor(t / 60), amount);
    bump(this.hours, Math.floor(t / 3600), amount);
    this.total += amount;
    if (t > this.latest) this.latest = t;
  }

  /** The sum of the amounts created after `edge` (created_at > edge). */
  after(edge: number): bigint {
    if (edge === Number.NEGATIVE_INFINITY) return this.total;
    const hour = Math.floor(edge / 3600);
    const minute = Math.floor(edge / 60);
    let sum = 0n;
    // Whole hours after the edge's hour: walk the indices, or the map when it is shorter.
    const lastHour = Math.floor(this.latest / 3600);
    if (lastHour - hour > this.hours.size) {
      for (const [h, v] of this.hours) if (h > hour) sum += v;
    } else {
      for (let h = hour + 1; h <= lastHour; h++) sum += this.hours.get(h) ?? 0n;
    }
    // The rest of the edge's hour, minute by minute, then the rest of its minute, second by second.
    for (let m = minute + 1, end = hour * 60 + 59; m <= end; m++) sum += this.minutes.get(m) ?? 0n;
    for (let s = edge + 1, end = minute * 60 + 59; s <= end; s++) sum += this.seconds.get(s) ?? 0n;
    return sum;
  }
}

interface Group {
  /** The group's fields (asset, issuer, initiator, op) as an entry to copy. */
  proto: HistoryEntry;
  sums: TimeSums;
}

export class HistoryBuckets {
  /** Entries created before this are not kept (0 = everything). */
  since: number;
  readonly #groups = new Map<string, Group>();

  constructor(since = 0) {
    this.since = since;
  }

  /** Adds (sign 1n) or removes (sign -1n) one entry's amount. */
  add(e: HistoryEntry, sign: bigint = 1n): void {
    if (!countsTowardCaps(e) || e.created_at < this.since) return;
    const key = groupKey(e);
    let g = this.#groups.get(key);
    if (!g) {
      // One status standing for the group's: executed or pending is all the rules read of it.
      g = { proto: { ...e, intentId: `agg:${key}`, status: EXECUTED_STATUSES.has(e.status) ? 'confirmed' : 'allowed' }, sums: new TimeSums() };
      this.#groups.set(key, g);
    }
    g.sums.add(e.created_at, sign * BigInt(e.amount));
  }

  /**
   * The history evaluatePolicy needs at `now` for a policy reading `windows` (the SDK's
   * policyWindows: seconds, `null` for a lifetime budget): one entry per group and stretch between
   * window edges, without the entry `exclude` (an intent evaluated again). Same totals for every
   * one of those windows as the raw history.
   */
  windowed(now: number, windows: readonly (number | null)[], exclude?: HistoryEntry): HistoryEntry[] {
    if (windows.length === 0) return [];
    // Edges ascending; a lifetime window's edge is -infinity.
    const edges = [...new Set(windows.map((w) => (w === null ? Number.NEGATIVE_INFINITY : now - w)))].sort((a, b) => a - b);
    const skip = exclude && countsTowardCaps(exclude) && exclude.created_at >= this.since ? groupKey(exclude) : null;
    const out: HistoryEntry[] = [];
    for (const [key, g] of this.#groups) {
      const after = edges.map((edge) => g.sums.after(edge));
      if (key === skip && exclude) {
        const amount = BigInt(exclude.amount);
        for (let i = 0; i < edges.length; i++) if (exclude.created_at > (edges[i] as number)) after[i] = (after[i] as bigint) - amount;
      }
      for (let i = 0; i < edges.length; i++) {
        const amount = (after[i] as bigint) - (i + 1 < edges.length ? (after[i + 1] as bigint) : 0n);
        if (amount <= 0n) continue;
        // A second inside the stretch (edges[i], edges[i + 1]]: counted by exactly the windows whose edge is before it.
        const lower = edges[i] as number;
        const upper = i + 1 < edges.length ? (edges[i + 1] as number) : Number.POSITIVE_INFINITY;
        const created_at = lower === Number.NEGATIVE_INFINITY ? (upper === Number.POSITIVE_INFINITY ? now : upper) : lower + 1;
        out.push({ ...g.proto, created_at, amount: amount.toString() });
      }
    }
    return out;
  }

  /** Drops amounts created before `floor` (bounded memory). */
  prune(floor: number): void {
    if (floor <= this.since) return;
    for (const [key, g] of this.#groups) {
      for (const [t, v] of g.sums.seconds) if (t < floor) g.sums.add(t, -v);
      if (g.sums.seconds.size === 0) this.#groups.delete(key);
    }
    this.since = floor;
  }
}
