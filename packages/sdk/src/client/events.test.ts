import { describe, expect, it } from 'vitest';
import { SessionError, TransportError } from '../errors.js';
import { eventId, type VaultEvent } from '../schemas/event.js';
import { createEventsClient, parseSse } from './events.js';

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(typeof ch === 'string' ? enc.encode(ch) : ch);
      c.close();
    },
  });
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const ev = (seq: number): VaultEvent => ({ id: eventId(seq), seq, type: 'intent.created', at: 1_767_225_600, subject: { intent: 'i', wallet: 'ops' }, receipt: 'ab'.repeat(32), data: {} });
const frame = (e: VaultEvent) => `id: ${e.id}\ndata: ${JSON.stringify(e)}\n\n`;

describe('parseSse', () => {
  it('reads id and data across chunk boundaries, CRLF and CR line ends, skips comments', async () => {
    const msgs = await collect(parseSse(streamOf(['retry: 10\n: hi\n\nid: a\r', '\ndata: x\r\ndata: y\r\rdat', 'a:z\n\n', 'data: tail-without-blank-line']), 1024));
    expect(msgs).toEqual([
      { id: 'a', data: 'x\ny' },
      { id: 'a', data: 'z' },
    ]);
  });

  it('attack: a server that sends a line without end is refused at the bound, not buffered whole', async () => {
    const big = 'data: ' + 'x'.repeat(5000);
    await expect(collect(parseSse(streamOf([big.slice(0, 2500), big.slice(2500)]), 2048))).rejects.toThrow(TransportError);
    // data lines of one event count together
    const many = Array.from({ length: 10 }, () => 'data: ' + 'y'.repeat(300)).join('\n') + '\n';
    await expect(collect(parseSse(streamOf([many]), 2048))).rejects.toThrow(/longer than 2048/);
  });
});

describe('follow', () => {
  it('reconnects with Last-Event-ID after the last event handed out and drops repeats', async () => {
    const seen: (string | null)[] = [];
    let call = 0;
    const fetch = async (_url: string, init: RequestInit) => {
      const h = new Headers(init.headers);
      seen.push(h.get('last-event-id'));
      call++;
      // The first connection ends after two events; the second replays one of them, then more.
      const body = call === 1 ? [frame(ev(1)), frame(ev(2))] : [frame(ev(2)), frame(ev(3)), frame(ev(4))];
      return new Response(streamOf(body), { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    const client = createEventsClient({ baseUrl: 'http://127.0.0.1:1', token: 'tok-0123456789', fetch });
    const ac = new AbortController();
    const got: number[] = [];
    for await (const e of client.follow({ signal: ac.signal, reconnectDelayMs: 1 })) {
      got.push(e.seq);
      if (e.seq === 4) ac.abort();
    }
    expect(got).toEqual([1, 2, 3, 4]);
    expect(seen).toEqual([null, eventId(2)]);
  });

  it('a refused session ends the iteration unless the caller can unlock again', async () => {
    const fetch = async () => new Response(JSON.stringify({ error: { code: 4100, message: 'session invalid or expired', data: null } }), { status: 401, headers: { 'content-type': 'application/json' } });
    const client = createEventsClient({ baseUrl: 'http://127.0.0.1:1', token: 'tok-0123456789', fetch });
    await expect(collect(client.follow({ reconnectDelayMs: 1 }))).rejects.toThrow(SessionError);
    let asked = 0;
    await expect(collect(client.follow({ reconnectDelayMs: 1, reauthenticate: async () => ++asked < 3 }))).rejects.toThrow(SessionError);
    expect(asked).toBe(3);
  });

  it('refuses an event whose id line differs from its id, and a reply that is not an event stream', async () => {
    const bad = async () => new Response(streamOf([`id: ${eventId(9)}\ndata: ${JSON.stringify(ev(1))}\n\n`]), { status: 200, headers: { 'content-type': 'text/event-stream' } });
    const errors: unknown[] = [];
    const ac = new AbortController();
    const c1 = createEventsClient({ baseUrl: 'http://127.0.0.1:1', token: 'tok-0123456789', fetch: bad });
    await collect(c1.follow({ signal: ac.signal, reconnectDelayMs: 1, onReconnect: (e) => (errors.push(e), errors.length >= 2 && ac.abort()) }));
    expect(String(errors[0])).toMatch(/id line differs/);
  });
});
