/**
 * @module control-plane/webhooks/feed
 * What webhook delivery reads: the event log, in order. The control plane's outbox implements it;
 * delivery depends on nothing else of the log.
 */
import type { VaultEvent } from '@vault/sdk';

export interface EventFeed {
  /** The seq of the last event appended, or -1 when the log is empty (where a new endpoint starts). */
  head(): number;
  /** Up to `limit` events with seq > `seq`, in log order (seq ascending, no gaps skipped over). */
  after(seq: number, limit: number): VaultEvent[];
  /** Called after each durable append (no payload: the reader calls `after`). Returns an unsubscribe. */
  onAppend(listener: () => void): () => void;
}

/**
 * How far delivery got, shared between the control-plane instances of one database (PostgreSQL),
 * so a new writer starts where the last one left off instead of replaying the log from its own
 * (possibly never used) cursor. Absent: delivery state is the instance's own (LMDB alone).
 */
export interface DeliveryProgress {
  /** Each endpoint's low water: every event of it with seq <= the mark is delivered or dead-lettered. */
  readProgress(): Promise<Map<string, number>>;
  /**
   * Raises the marks (never lowers one). Refused unless this instance holds the writer's lease,
   * checked in the same transaction as the write.
   */
  writeProgress(marks: ReadonlyMap<string, number>): Promise<void>;
}

/**
 * The control plane's own event log (the outbox in the intent store) as a feed: what webhooks
 * deliver from unless a test injects another.
 */
export function logFeed(log: {
  readonly lastEventSeq: number;
  eventsAfter(afterSeq: number, limit: number): VaultEvent[];
  onEvents(listener: (events: readonly VaultEvent[]) => void): () => void;
}): EventFeed {
  return {
    // The log's seqs start at 1, so an empty log's head is 0: a new endpoint starts after it.
    head: () => log.lastEventSeq,
    after: (seq, limit) => log.eventsAfter(seq, limit),
    onAppend: (listener) =>
      log.onEvents(() => {
        // The log drops a listener that throws; delivery must keep listening whatever happens.
        try {
          listener();
        } catch {
          // the dispatcher logs its own faults
        }
      }),
  };
}
