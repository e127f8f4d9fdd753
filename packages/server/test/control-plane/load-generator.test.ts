/**
 * The benches' load generator (fixtures/load.mjs) in its control mode, driven as the sign bench
 * drives it (test/load-control.ts), against a real loopback server: the sign bench's figures rest
 * on it sending every prepared request once, in order, across the warm-up and the slices, on
 * sockets it keeps open, and on its counts being the server's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoadControl, type LoadControl, type LoadRun } from '../load-control.js';

let server: Server | undefined;
let gen: LoadControl | undefined;
let dir: string | undefined;

afterEach(async () => {
  gen?.kill();
  gen = undefined;
  server?.closeAllConnections();
  await new Promise<void>((res) => (server ? server.close(() => res()) : res()));
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A server that records each body's `n` and each connection, answering `status(n)` after `delayMs`. */
async function recordingServer(opts: { delayMs?: number; status?: (n: number) => number } = {}) {
  const seen: number[] = [];
  let connections = 0;
  let tokens = 0;
  server = createServer((req, res) => {
    if (req.headers['x-test-token'] === 'tok') tokens += 1;
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const n = (JSON.parse(body) as { n: number }).n;
      seen.push(n);
      setTimeout(() => {
        const out = JSON.stringify({ n });
        res.writeHead(opts.status?.(n) ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
        res.end(out);
      }, opts.delayMs ?? 1);
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((res) => server!.listen(0, '127.0.0.1', res));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, connections: () => connections, tokens: () => tokens };
}

/** The generator in control mode over `count` bodies {n: i}, ready to run. */
async function control(url: string, count: number, concurrency: number): Promise<LoadControl> {
  dir = mkdtempSync(join(tmpdir(), 'vault-load-test-'));
  const bodyFile = join(dir, 'bodies.json');
  writeFileSync(bodyFile, JSON.stringify(Array.from({ length: count }, (_, n) => ({ n }))));
  gen = await startLoadControl({ url, path: '/sign', method: 'POST', token: 'tok', tokenHeader: 'x-test-token', concurrency, bodyFile });
  return gen;
}

describe('load generator, control mode', () => {
  it('sends every body once, in order, across runs, on the same keep-alive sockets, and counts what the server answered', async () => {
    const srv = await recordingServer({ delayMs: 2 });
    const gen = await control(srv.url, 5000, 4);
    let sent = 0;
    const runs: LoadRun[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await gen.run(150, sent);
      runs.push(r);
      sent += r.requests;
    }
    expect(await gen.exit()).toBe(0);
    for (const r of runs) {
      expect(r.requests).toBeGreaterThan(0);
      expect(r.ok).toBe(r.requests);
      expect(r.errors).toBe(0);
      expect(r.seconds).toBeGreaterThanOrEqual(0.15);
    }
    // Every body the server saw is a distinct one, and together they are exactly 0..sent-1.
    expect(srv.seen.length).toBe(sent);
    expect([...srv.seen].sort((a, b) => a - b)).toEqual(Array.from({ length: sent }, (_, n) => n));
    expect(srv.tokens()).toBe(sent);
    // Four lanes, four connections for all three runs: no socket opened per run.
    expect(srv.connections()).toBe(4);
  });

  it('counts a non-200 answer as an error, not as ok', async () => {
    const srv = await recordingServer({ status: (n) => (n % 2 === 0 ? 200 : 403) });
    const gen = await control(srv.url, 5000, 2);
    const r = await gen.run(100, 0);
    await gen.exit();
    expect(r.requests).toBe(srv.seen.length);
    expect(r.ok).toBe(srv.seen.filter((n) => n % 2 === 0).length);
    expect(r.errors).toBe(srv.seen.filter((n) => n % 2 === 1).length);
    expect(r.errors).toBeGreaterThan(0);
  });

  it('reopens a socket the server closed while the lane was idle, without counting an error', async () => {
    const srv = await recordingServer();
    const gen = await control(srv.url, 5000, 2);
    const first = await gen.run(80, 0);
    server!.closeAllConnections();
    await new Promise((res) => setTimeout(res, 50));
    const second = await gen.run(80, first.requests);
    await gen.exit();
    expect(second.errors).toBe(0);
    expect(second.ok).toBeGreaterThan(0);
    expect(srv.connections()).toBe(4);
    expect(new Set(srv.seen).size).toBe(srv.seen.length);
  });
});
