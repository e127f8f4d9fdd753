/**
 * @module control-plane/event-stream
 * `GET /events/stream`: the event log as Server-Sent Events. Replay from the log first, at the
 * consumer's pace (the log is the buffer), then live from the store's commit notifications. One
 * cursor serves both, so the switch neither skips nor repeats an event: the last empty read of the
 * log and the switch to live happen in one turn of the event loop, and a live event at or below the
 * cursor is dropped.
 *
 * Live events are pushed, not pulled: a consumer that stops reading while events keep coming would
 * make its queue grow, so once its unsent bytes pass a bound it is cut off (the socket closed) and
 * it resumes from its Last-Event-ID. The connection also ends when the session that opened it does.
 */
import { eventId, matchesEventFilter, type EventFilter, type VaultEvent } from '@vault/sdk';

/** Heartbeat comment every 15 s by default: proxies and clients see a live connection. */
export const EVENT_HEARTBEAT_SECONDS = 15;
/** Unsent bytes a live consumer may fall behind by before it is cut off (default 1 MiB). */
export const EVENT_STREAM_BUFFER_BYTES = 1024 * 1024;
/** Streams open at once (each may hold up to its buffer bound): past it, a new one is refused (503). */
export const EVENT_STREAMS_MAX = 32;
/** Events read from the log per replay step, and the most looked at per step through a filter. */
const REPLAY_PAGE = 256;
const REPLAY_SCAN = 4096;

export interface EventLog {
  eventsPage(afterSeq: number, limit: number, filter?: EventFilter, scanMax?: number): { events: VaultEvent[]; next: number };
  onEvents(listener: (events: readonly VaultEvent[]) => void): () => void;
}

export interface EventStreamOptions {
  /** The seq to start after (0: from the first event). */
  after: number;
  filter?: EventFilter;
  /**
   * Whether this consumer may see an event, beyond `filter` (a device's scope): checked on every
   * event, replayed or live, so nothing reaches a consumer the predicate refuses.
   */
  visible?: (e: VaultEvent) => boolean;
  heartbeatMs: number;
  maxBufferBytes: number;
  /** Bytes written to the socket that it has not sent yet (its write buffer), when known. */
  writeBacklog?: () => number;
  /** Called at each heartbeat: throws (or returns false) when the session has ended. */
  stillAuthorized: () => boolean;
  /** Closes the connection under the stream (the consumer is cut off or its session ended); false if it cannot. */
  disconnect: (reason: 'slow_consumer' | 'session_ended') => boolean;
  /** Called once when the stream ends, however it ends. */
  onClose?: () => void;
}

/** One SSE frame: the id line carries the event id, the data line the event as JSON (no newlines). */
export function sseFrame(e: VaultEvent): string {
  return `id: ${e.id}\ndata: ${JSON.stringify(e)}\n\n`;
}

export function eventStream(log: EventLog, opts: EventStreamOptions): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const shown = (e: VaultEvent) => opts.visible === undefined || opts.visible(e);
  let cursor = opts.after;
  let live = false;
  let closed = false;
  let unsubscribe: () => void = () => undefined;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | null = null;

  const stop = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    opts.onClose?.();
    if (timer) clearInterval(timer);
    wake?.();
  };

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const cutOff = (reason: 'slow_consumer' | 'session_ended') => {
          stop();
          // Close the socket under the stream: the server cancels the stream, which drops what is
          // queued (the memory is the point). Without a socket to close, error the stream instead.
          if (!opts.disconnect(reason)) controller.error(new Error(reason));
        };
        const push = (text: string) => {
          controller.enqueue(enc.encode(text));
          // Unsent: what waits in this stream's queue and in the socket's write buffer.
          const unsent = opts.maxBufferBytes - (controller.desiredSize ?? 0) + (opts.writeBacklog?.() ?? 0);
          if (unsent > opts.maxBufferBytes) cutOff('slow_consumer');
        };
        // The reconnection delay a browser EventSource uses; then replay.
        controller.enqueue(enc.encode(`retry: 1000\n: after ${eventId(cursor)}\n\n`));
        unsubscribe = log.onEvents((events) => {
          if (!live || closed) return;
          let out = '';
          for (const e of events) {
            if (e.seq <= cursor) continue;
            cursor = e.seq;
            if (matchesEventFilter(e, opts.filter) && shown(e)) out += sseFrame(e);
          }
          if (out) push(out);
        });
        timer = setInterval(() => {
          if (closed) return;
          let ok = false;
          try {
            ok = opts.stillAuthorized();
          } catch {
            ok = false;
          }
          if (!ok) cutOff('session_ended');
          else push(': heartbeat\n\n');
        }, opts.heartbeatMs);
        timer.unref();
        void (async () => {
          try {
            while (!closed) {
              const page = log.eventsPage(cursor, REPLAY_PAGE, opts.filter, REPLAY_SCAN);
              if (page.next === cursor) {
                // Caught up: from here on the commit notifications carry every event. No await
                // between this read and the switch, so no commit falls between them.
                live = true;
                return;
              }
              cursor = page.next;
              let out = '';
              for (const e of page.events) if (shown(e)) out += sseFrame(e);
              if (out) controller.enqueue(enc.encode(out));
              // Replay goes at the consumer's pace: wait until it has read what is queued (and let
              // other work run between pages).
              while (!closed && (controller.desiredSize ?? 1) <= 0) await new Promise<void>((r) => (wake = r));
              await new Promise((r) => setImmediate(r));
            }
          } catch {
            // The store closed under the replay (shutdown): end the stream; the reader resumes.
            if (!closed) {
              stop();
              controller.error(new Error('event log unavailable'));
            }
          }
        })();
      },
      pull() {
        const w = wake;
        wake = null;
        w?.();
      },
      cancel() {
        stop();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: opts.maxBufferBytes }),
  );
}
