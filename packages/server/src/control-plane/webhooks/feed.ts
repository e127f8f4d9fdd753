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
