/**
 * Paid vs unpaid latency over real loopback HTTP, on anvil with TestUSDC and the in-process
 * facilitator, in one run (`pnpm bench` → `vitest bench --run`).
 *
 * Three cases on the same route (/api/x402/places, the real sample answerer):
 *  - free:   the answerer mounted on a plain Hono route (no payment layer): the baseline;
 *  - quote:  the paid server without PAYMENT-SIGNATURE (402 with PAYMENT-REQUIRED);
 *  - paid:   the paid server with a fresh pre-signed authorization per call (verify, handler,
 *            settle with a mined transaction, receipt).
 * The facilitator is wrapped to time verify and settle; the payment layer's own overhead is
 * paid − free − (verify + settle), printed at the end. Bounded: fixed iteration counts.
 */
import { Hono } from 'hono';
import { afterAll, bench, describe } from 'vitest';
import { createAnswerer, createSampleProvider } from '../src/answers/index.js';
import { listen } from '../src/facilitator/http.js';
import { withTimings } from '../src/facilitator/timing.js';
import { startServer } from '../src/server.js';
import { localFacilitatorFor, quoteAndSign, startTestChain } from './helpers.js';

const PATH = '/api/x402/places';
const PAID_ITERATIONS = 30;
/** The cheap cases run longer so their means are stable. */
const FREE_ITERATIONS = 200;
const WARMUP = 3;

const chain = await startTestChain();
const local = localFacilitatorFor(chain, { pollingIntervalMs: 10 });
const timed = withTimings(local);
const real = createAnswerer(createSampleProvider());
/** Handler (answer) time per request, per server, so it can be taken out of both sides. */
const handlerMs = { free: [] as number[], paid: [] as number[] };
const timedAnswerer = (kind: 'free' | 'paid') => ({
  answer: async (p: typeof PATH, q: URLSearchParams) => {
    const t0 = performance.now();
    try {
      return await real.answer(p, q);
    } finally {
      handlerMs[kind].push(performance.now() - t0);
    }
  },
});
const paid = await startServer({ operator: 'Bench', answerer: timedAnswerer('paid'), payment: { terms: { ...chain.terms, maxTimeoutSeconds: 600 }, facilitator: timed.facilitator } });
const freeApp = new Hono();
const freeAnswerer = timedAnswerer('free');
freeApp.get(PATH, async (c) => {
  const r = await freeAnswerer.answer(PATH, new URL(c.req.url).searchParams);
  return c.json(r.body as object, r.status as 200);
});
const free = await listen(freeApp);

// One fresh authorization per paid call (warm-up included), signed before timing starts.
const pool: string[] = [];
for (let i = 0; i < PAID_ITERATIONS + WARMUP + 2; i++) pool.push((await quoteAndSign(`${paid.url}${PATH}`, chain.payer.privateKey)).header);
const b0 = await chain.balanceOf(chain.payer.address);

const samples = { free: [] as number[], quote: [] as number[], paid: [] as number[] };
async function timedFetch(kind: keyof typeof samples, url: string, init?: RequestInit, expect = 200): Promise<void> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  samples[kind].push(performance.now() - t0);
  if (res.status !== expect) throw new Error(`${kind}: expected ${expect}, got ${res.status}`);
}

/** Drops the warm-up samples (the first WARMUP of each case), then mean, median and p95. */
const stats = (all: number[], skip = WARMUP) => {
  const s = all.slice(skip).sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  const p = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { n: s.length, mean, median: p(0.5), p95: p(0.95) };
};

afterAll(async () => {
  const verify = stats(timed.timings.filter((t) => t.op === 'verify').map((t) => t.ms));
  const settle = stats(timed.timings.filter((t) => t.op === 'settle').map((t) => t.ms));
  const f = stats(samples.free);
  const q = stats(samples.quote);
  const p = stats(samples.paid);
  // Per request: what is left after taking out the answer (and, when paid, verify and settle).
  const verifyAll = timed.timings.filter((t) => t.op === 'verify').map((t) => t.ms);
  const settleAll = timed.timings.filter((t) => t.op === 'settle').map((t) => t.ms);
  const restPaid = stats(samples.paid.map((ms, i) => ms - (handlerMs.paid[i] ?? NaN) - (verifyAll[i] ?? NaN) - (settleAll[i] ?? NaN)));
  const restFree = stats(samples.free.map((ms, i) => ms - (handlerMs.free[i] ?? NaN)));
  const charged = b0 - (await chain.balanceOf(chain.payer.address));
  const fmt = (x: ReturnType<typeof stats>) => `n=${x.n} mean=${x.mean.toFixed(2)}ms median=${x.median.toFixed(2)}ms p95=${x.p95.toFixed(2)}ms`;
  const lines = [
    `free (no payment layer)      ${fmt(f)}`,
    `quote (402)                  ${fmt(q)}`,
    `paid (200, settled)          ${fmt(p)}`,
    `facilitator verify           ${fmt(verify)}`,
    `facilitator settle           ${fmt(settle)}`,
    `paid − answer − verify − settle ${fmt(restPaid)}`,
    `free − answer                   ${fmt(restFree)}`,
    `payment-layer overhead beyond the facilitator (per-request residuals): mean ${(restPaid.mean - restFree.mean).toFixed(2)} ms, median ${(restPaid.median - restFree.median).toFixed(2)} ms`,
    `same from the raw means: paid − free − verify − settle = ${(p.mean - f.mean - verify.mean - settle.mean).toFixed(2)} ms (noisier: different answers' times on each side)`,
    `quote overhead vs free (mean) = ${(q.mean - f.mean).toFixed(2)} ms`,
    `charged on chain: ${charged} base units for ${samples.paid.length} paid calls incl. warm-up (expected ${2000n * BigInt(samples.paid.length)})`,
  ];
  process.stdout.write(`\n[payment.bench] ${new Date().toISOString()} node ${process.version}\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
  await paid.close();
  await free.close();
  await chain.stop();
});

describe('paid vs unpaid latency, loopback HTTP, anvil', () => {
  bench('free: answer without payment layer', () => timedFetch('free', `${free.url}${PATH}`), { iterations: FREE_ITERATIONS, time: 0, warmupIterations: WARMUP, warmupTime: 0 });
  bench('quote: 402 with PAYMENT-REQUIRED', () => timedFetch('quote', `${paid.url}${PATH}`, undefined, 402), { iterations: FREE_ITERATIONS, time: 0, warmupIterations: WARMUP, warmupTime: 0 });
  bench(
    'paid: verify + answer + settle (mined tx) + receipt',
    () => {
      const header = pool.shift();
      if (!header) throw new Error('authorization pool exhausted');
      return timedFetch('paid', `${paid.url}${PATH}`, { headers: { 'PAYMENT-SIGNATURE': header } });
    },
    { iterations: PAID_ITERATIONS, time: 0, warmupIterations: WARMUP, warmupTime: 0 },
  );
});
