/**
 * The HTTP layer on a real local server: retry with backoff on 429 and 503 (Retry-After honoured,
 * too-long Retry-After and exhausted retries refused), rippled's slowDown retried, the token bucket,
 * the global concurrency bound, the reply size cap, and redaction of secrets in every log line and
 * error (userinfo becomes a Basic header, never a logged URL).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_HTTP, HttpClient, parseConfig, retryAfterMs, resolveEndpoint, runReport, SupplyReportError, TokenBucket } from '../src/index.js';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;
let handler: Handler = (_q, res) => res.end('{}');
let hits = 0;
let inFlight = 0;
let peak = 0;
const seen: { auth?: string; url?: string }[] = [];
let base = '';
const server = createServer((req, res) => {
  hits += 1;
  inFlight += 1;
  peak = Math.max(peak, inFlight);
  seen.push({ ...(req.headers.authorization ? { auth: req.headers.authorization } : {}), ...(req.url ? { url: req.url } : {}) });
  res.on('finish', () => {
    inFlight -= 1;
  });
  req.resume();
  handler(req, res, hits);
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const reset = (h: Handler) => {
  handler = h;
  hits = 0;
  peak = 0;
  seen.length = 0;
};
const cfg = { ...DEFAULT_HTTP, backoffMs: 40, maxBackoffMs: 1000, retries: 3 };

describe('retry and backoff', () => {
  it('retries 503 with exponential backoff, then returns the 200 reply and its SHA-256', async () => {
    reset((_q, res, n) => (n <= 2 ? res.writeHead(503).end('busy') : res.end('{"ok":true}')));
    const lines: string[] = [];
    const client = new HttpClient(cfg, [], (l) => lines.push(l));
    const t0 = performance.now();
    const reply = await client.send(base, { method: 'GET', url: `${base}/x`, label: 'x' });
    const elapsed = performance.now() - t0;
    expect(reply).toMatchObject({ status: 200, text: '{"ok":true}', attempts: 3, sha256: '4062edaf750fb8074e7e83e0c9028c94e32468a8b6f1614774328ef045150f93' });
    expect(elapsed).toBeGreaterThanOrEqual(40 + 80 - 5);
    expect(lines.map((l) => /retry (\d)\/3 in (\d+) ms/.exec(l)?.slice(1))).toEqual([['1', '40'], ['2', '80']]);
  });

  it('honours Retry-After (seconds) on 429', async () => {
    reset((_q, res, n) => (n === 1 ? res.writeHead(429, { 'retry-after': '1' }).end() : res.end('{}')));
    const lines: string[] = [];
    const t0 = performance.now();
    await new HttpClient(cfg, [], (l) => lines.push(l)).send(base, { method: 'GET', url: base, label: 'x' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(990);
    expect(lines[0]).toContain('retry 1/3 in 1000 ms (Retry-After)');
  });

  it('refuses a Retry-After longer than maxRetryAfterMs instead of waiting', async () => {
    reset((_q, res) => res.writeHead(429, { 'retry-after': '3600' }).end());
    const err = await new HttpClient({ ...cfg, maxRetryAfterMs: 5000 }, []).send(base, { method: 'GET', url: base, label: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SupplyReportError);
    expect(err).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('3600000 ms') });
    expect(hits).toBe(1);
  });

  it('gives up after the configured retries with rate_limited', async () => {
    reset((_q, res) => res.writeHead(503).end());
    const err = await new HttpClient({ ...cfg, backoffMs: 1 }, []).send(base, { method: 'GET', url: base, label: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('after 4 attempts') });
    expect(hits).toBe(4);
  });

  it('does not retry other statuses (404 is an http error at once)', async () => {
    reset((_q, res) => res.writeHead(404).end('nope'));
    await expect(new HttpClient(cfg, []).send(base, { method: 'GET', url: base, label: 'x' })).rejects.toMatchObject({ code: 'http', message: expect.stringContaining('HTTP 404') });
    expect(hits).toBe(1);
  });

  it('retries a 200 reply the caller marks as overloaded (rippled slowDown)', async () => {
    reset((_q, res, n) => res.end(n === 1 ? '{"result":{"error":"slowDown","status":"error"}}' : '{"result":{"status":"success"}}'));
    const reply = await new HttpClient(cfg, []).send(base, { method: 'POST', url: base, body: '{}', label: 'x', retryIf: (r) => r.text.includes('slowDown') });
    expect(reply.attempts).toBe(2);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });
});

describe('rate limit, concurrency and size cap', () => {
  it('token bucket: 8 requests at 10/s with burst 2 take at least 600 ms', async () => {
    reset((_q, res) => res.end('{}'));
    const client = new HttpClient(cfg, []);
    client.limit(base, { perSecond: 10, burst: 2 });
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 8 }, () => client.send(base, { method: 'GET', url: base, label: 'x' })));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(590);
    expect(hits).toBe(8);
  });

  it('token bucket serves callers in order and refills at the configured rate (virtual clock)', async () => {
    let now = 0;
    const waits: number[] = [];
    const bucket = new TokenBucket({ perSecond: 4, burst: 1 }, () => now, async (ms) => {
      waits.push(ms);
      now += ms;
    });
    await Promise.all([bucket.take(), bucket.take(), bucket.take()]);
    expect(waits).toEqual([250, 250]);
  });

  it('never has more requests in flight than http.concurrency', async () => {
    reset((_q, res) => setTimeout(() => res.end('{}'), 60));
    const client = new HttpClient({ ...cfg, concurrency: 2 }, []);
    await Promise.all(Array.from({ length: 7 }, () => client.send(base, { method: 'GET', url: base, label: 'x' })));
    expect(peak).toBe(2);
    expect(client.peakConcurrency).toBe(2);
  });

  it('refuses a reply larger than maxResponseBytes', async () => {
    reset((_q, res) => res.end('x'.repeat(5000)));
    await expect(new HttpClient({ ...cfg, maxResponseBytes: 1024 }, []).send(base, { method: 'GET', url: base, label: 'x' })).rejects.toMatchObject({ code: 'bad_reply' });
  });

  it('times out a silent server, retrying the timeout like any transport failure', async () => {
    reset(() => {});
    const lines: string[] = [];
    const err = await new HttpClient({ ...cfg, timeoutMs: 200, backoffMs: 1 }, [], (l) => lines.push(l)).send(base, { method: 'GET', url: base, label: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'timeout', message: 'x: no reply within 200 ms after 4 attempts' });
    expect(hits).toBe(4);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('transport failure (no reply within 200 ms); retry 1/3');
  });
});

/**
 * A raw TCP server that answers like HTTP/1.1 but misbehaves on the first connections: it resets
 * them (TCP RST), closes them after reading the request without a byte of reply (socket hang up),
 * or sends the status line and half the promised body, then resets (a reply cut off mid-body).
 */
type Misbehaviour = 'reset' | 'hangup' | 'partial' | 'ok';
function startFlakyServer(plan: (n: number) => Misbehaviour): Promise<{ url: string; connections: () => number; requests: string[]; close: () => Promise<void> }> {
  let n = 0;
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const srv: TcpServer = createTcpServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    n += 1;
    const what = plan(n);
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      requests.push(buf.slice(0, buf.indexOf('\r\n')));
      if (what === 'reset') sock.resetAndDestroy();
      else if (what === 'hangup') sock.destroy();
      else if (what === 'partial') {
        sock.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"half":');
        setTimeout(() => sock.resetAndDestroy(), 20);
      }
      else {
        const body = '{"ok":true}';
        sock.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
      }
    });
  });
  return new Promise((resolve) =>
    srv.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
        connections: () => n,
        requests,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            srv.close(() => r());
          }),
      }),
    ),
  );
}

describe('transport failures are retried with the same bounded backoff', () => {
  it('a server that resets the first two connections (TCP RST), then answers: the reply comes back on attempt 3', async () => {
    const flaky = await startFlakyServer((n) => (n <= 2 ? 'reset' : 'ok'));
    try {
      const lines: string[] = [];
      const t0 = performance.now();
      const reply = await new HttpClient(cfg, [], (l) => lines.push(l)).send(flaky.url, { method: 'POST', url: `${flaky.url}/rpc`, body: '{}', label: 'gateway_balances rX' });
      expect(reply).toMatchObject({ status: 200, text: '{"ok":true}', attempts: 3 });
      expect(flaky.connections()).toBe(3);
      expect(flaky.requests).toEqual(['POST /rpc HTTP/1.1', 'POST /rpc HTTP/1.1', 'POST /rpc HTTP/1.1']);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(40 + 80 - 5);
      expect(lines.map((l) => /transport failure .*; retry (\d)\/3 in (\d+) ms/.exec(l)?.slice(1))).toEqual([['1', '40'], ['2', '80']]);
      expect(lines[0]).toContain('ECONNRESET');
    } finally {
      await flaky.close();
    }
  });

  it('a server that hangs up after reading the request (socket hang up), then answers', async () => {
    const flaky = await startFlakyServer((n) => (n === 1 ? 'hangup' : 'ok'));
    try {
      const reply = await new HttpClient({ ...cfg, backoffMs: 1 }, []).send(flaky.url, { method: 'GET', url: flaky.url, label: 'x' });
      expect(reply.attempts).toBe(2);
      expect(flaky.requests).toHaveLength(2);
    } finally {
      await flaky.close();
    }
  });

  it('a reply cut off mid-body is retried too, and the complete reply is the one returned', async () => {
    const flaky = await startFlakyServer((n) => (n === 1 ? 'partial' : 'ok'));
    try {
      const lines: string[] = [];
      const reply = await new HttpClient({ ...cfg, backoffMs: 1 }, [], (l) => lines.push(l)).send(flaky.url, { method: 'GET', url: flaky.url, label: 'x' });
      expect(reply).toMatchObject({ status: 200, text: '{"ok":true}', attempts: 2 });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('reading the reply failed');
    } finally {
      await flaky.close();
    }
  });

  it('connection refused on every attempt: fails after retries + 1 attempts, code http, cause named, URL secret scrubbed', async () => {
    // Take a port, then free it, so nothing listens there.
    const probe = await startFlakyServer(() => 'ok');
    const dead = probe.url;
    await probe.close();
    const ep = resolveEndpoint(`${dead}/rpc?api-key=\${KEY}`, undefined, { KEY: 'refused-secret-77' }, 'xrpl.endpoint');
    const lines: string[] = [];
    const client = new HttpClient({ ...cfg, backoffMs: 1 }, ep.secrets, (l) => lines.push(l));
    const err = (await client.send(ep.publicUrl, { method: 'POST', url: ep.url, body: '{}', label: 'x' }).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ code: 'http', message: expect.stringMatching(/ECONNREFUSED.*after 4 attempts$/) });
    expect(lines).toHaveLength(3);
    expect(lines.every((l) => l.includes('transport failure'))).toBe(true);
    expect(`${lines.join('\n')}${err.message}`).not.toContain('refused-secret-77');
    expect(client.requests[0]).toMatchObject({ endpoint: ep.publicUrl, status: null, attempts: 4 });
  });

  it('a failure no retry can change (fetch refuses port 9, a "bad port") fails at once, without retry lines', async () => {
    const lines: string[] = [];
    const client = new HttpClient({ ...cfg, backoffMs: 1 }, [], (l) => lines.push(l));
    const err = await client.send('http://127.0.0.1:9', { method: 'GET', url: 'http://127.0.0.1:9/', label: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'http', message: 'x: request failed (fetch failed: bad port)' });
    expect(lines).toEqual([]);
    expect(client.requests[0]).toMatchObject({ attempts: 1, status: null });
  });

  it('http.retries 0 turns the retry off: one attempt, then the failure', async () => {
    const flaky = await startFlakyServer(() => 'reset');
    try {
      const err = await new HttpClient({ ...cfg, retries: 0 }, []).send(flaky.url, { method: 'GET', url: flaky.url, label: 'x' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'http', message: expect.stringContaining('after 1 attempt') });
      expect(flaky.connections()).toBe(1);
    } finally {
      await flaky.close();
    }
  });

  it('a row whose request still fails after the retries is left out of the report and listed in the run log', async () => {
    const flaky = await startFlakyServer(() => 'reset');
    try {
      const account = 'rf1BiGeXwwQoi8Z2ueFYTEXSwuJYfV2Jpn';
      const config = parseConfig({
        xrpl: { endpoint: flaky.url, issuers: [account] },
        stellar: { endpoint: 'http://127.0.0.1:9/', issuers: [] },
        solana: { endpoint: 'http://127.0.0.1:9/', mints: [] },
        polygon: { endpoint: 'http://127.0.0.1:9/', owner: `0x${'1'.repeat(40)}`, contracts: [] },
        http: { retries: 2, backoffMs: 1 },
      });
      const lines: string[] = [];
      const { report, runLog } = await runReport(config, { log: (l) => lines.push(l) });
      expect(report.chains.xrpl.issuers).toEqual([]);
      expect(runLog.omitted).toEqual([{ chain: 'xrpl', subject: account, query: expect.stringContaining('gateway_balances'), reason: expect.stringMatching(/request failed .*after 3 attempts$/) }]);
      expect(runLog.requests).toEqual([{ endpoint: flaky.url, label: `[xrpl] gateway_balances ${account}`, status: null, attempts: 3 }]);
      expect(flaky.connections()).toBe(3);
      expect(lines.filter((l) => l.includes('transport failure'))).toHaveLength(2);
    } finally {
      await flaky.close();
    }
  });

  it('a reply over the size cap is not a transport failure: refused at once, not retried', async () => {
    reset((_q, res) => res.end('x'.repeat(5000)));
    await expect(new HttpClient({ ...cfg, maxResponseBytes: 1024 }, []).send(base, { method: 'GET', url: base, label: 'x' })).rejects.toMatchObject({ code: 'bad_reply' });
    expect(hits).toBe(1);
  });
});

describe('secrets never reach logs or errors', () => {
  it('an API key in the query string and credentials in userinfo are scrubbed from retry lines and errors; userinfo travels as Basic auth', async () => {
    const ep = resolveEndpoint(`${base.replace('http://', 'http://alice:pa55word-xyz@')}/rpc?api-key=\${KEY}`, undefined, { KEY: 'k3y-very-secret' }, 'solana.endpoint');
    expect(ep.publicUrl).toBe(`${base}/rpc`);
    reset((_q, res, n) => (n === 1 ? res.writeHead(503).end(`overloaded for ${ep.url}`) : res.writeHead(500).end(`bad request to ${ep.url} with k3y-very-secret`)));
    const lines: string[] = [];
    const client = new HttpClient({ ...cfg, backoffMs: 1 }, ep.secrets, (l) => lines.push(l));
    const err = (await client.send(ep.publicUrl, { method: 'POST', url: ep.url, body: '{}', label: 'getSlot' }).catch((e: unknown) => e)) as Error;
    const text = `${lines.join('\n')}\n${err.message}`;
    expect(err).toMatchObject({ code: 'http' });
    for (const secret of ['k3y-very-secret', 'pa55word-xyz', 'alice:']) expect(text).not.toContain(secret);
    expect(text).toContain('***');
    expect(seen[0]?.auth).toBe(`Basic ${Buffer.from('alice:pa55word-xyz').toString('base64')}`);
    expect(seen[0]?.url).toBe('/rpc?api-key=k3y-very-secret');
  });

  it('a secret in the path needs an explicit publicUrl, which may not reveal it', () => {
    expect(() => resolveEndpoint('https://polygon.example/v2/${KEY}', undefined, { KEY: 'abcdef' }, 'polygon.endpoint')).toThrow('polygon.endpoint.publicUrl: required');
    expect(() => resolveEndpoint('https://polygon.example/v2/${KEY}', 'https://polygon.example/v2/abcdef', { KEY: 'abcdef' }, 'polygon.endpoint')).toThrow('would reveal a secret');
    expect(() => resolveEndpoint('https://polygon.example/v2/${KEY}', 'https://polygon.example/v2?key=1', { KEY: 'abcdef' }, 'polygon.endpoint')).toThrow('must not carry');
    expect(() => resolveEndpoint('https://polygon.example/v2/${KEY}', 'https://polygon.example/v2', {}, 'polygon.endpoint')).toThrow('polygon.endpoint.url: environment variable KEY is not set');
    expect(resolveEndpoint('https://polygon.example/v2/${KEY}', 'https://polygon.example/v2', { KEY: 'abcdef' }, 'polygon.endpoint')).toMatchObject({ url: 'https://polygon.example/v2/abcdef', publicUrl: 'https://polygon.example/v2', secrets: ['abcdef'] });
    expect(() => resolveEndpoint('ftp://x', undefined, {}, 'xrpl.endpoint')).toThrow('xrpl.endpoint.url: only http and https');
  });
});
