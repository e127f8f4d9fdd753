/**
 * Why this package has its own payment gate: the reference `@x402/hono` middleware (2.27.0),
 * wired to the same facilitator, the same token and the same chain, verifies each request on its
 * own, so several concurrent requests carrying ONE authorization all pass verification (the nonce
 * is still unused on chain) and all run the handler; only one settlement lands, and the others
 * get a 402 after their answer was computed. Measured here: four copies, four handler runs, one
 * 200, three 402s, one transfer. A handler with side effects (a metered upstream call, a write)
 * would do them four times for one payment. This test pins that behaviour of the pinned
 * reference version, side by side with our gate on the identical scenario. If a later reference version fixes it, the first test fails and says so: then the
 * custom gate's reason to exist should be revisited.
 *
 * Real anvil, the committed EIP-3009 token, real signatures, real HTTP on 127.0.0.1.
 */
import { serve, type ServerType } from '@hono/node-server';
import { x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/hono';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAnswerer, createSampleProvider } from '../src/answers/index.js';
import type { LocalFacilitator } from '../src/facilitator/local.js';
import { startServer, type RunningServer } from '../src/server.js';
import { localFacilitatorFor, quoteAndSign, startTestChain, type TestChain } from './helpers.js';

let chain: TestChain;
let facilitator: LocalFacilitator;
let reference: ServerType;
let referenceUrl = '';
let ours: RunningServer;
let referenceCalls = 0;
let ourCalls = 0;

const COPIES = 4;
const HANDLER_MS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  chain = await startTestChain();
  facilitator = localFacilitatorFor(chain);

  // The reference wiring, as its README shows it: a resource server over our facilitator, the
  // exact EVM scheme, and the Hono middleware guarding one route priced at 0.01 of the token.
  const resourceServer = new x402ResourceServer(facilitator).register(chain.network, new ExactEvmScheme());
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        'GET /paid': {
          accepts: {
            scheme: 'exact',
            network: chain.network,
            payTo: chain.payee.address,
            price: { asset: chain.token, amount: '10000', extra: { name: 'USD Coin', version: '2' } },
            maxTimeoutSeconds: 120,
          },
          description: 'reference middleware under test',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  app.get('/paid', async (c) => {
    referenceCalls += 1;
    await sleep(HANDLER_MS); // an answer that takes a moment, like a real search
    return c.json({ answer: referenceCalls });
  });
  reference = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  referenceUrl = `http://127.0.0.1:${(reference.address() as AddressInfo).port}`;

  const real = createAnswerer(createSampleProvider());
  ours = await startServer({
    operator: 'Test Operator',
    answerer: {
      answer: async (path, params) => {
        ourCalls += 1;
        await sleep(HANDLER_MS);
        return real.answer(path, params);
      },
    },
    payment: { terms: chain.terms, facilitator },
  });
}, 120_000);

afterAll(async () => {
  await new Promise<void>((r) => (reference ? reference.close(() => r()) : r()));
  await ours?.close();
  await chain?.stop();
});

/** Fires COPIES requests carrying one authorization at once; returns statuses, handler runs and token transfers. */
async function burst(url: string, calls: () => number) {
  const { header } = await quoteAndSign(url, chain.payer.privateKey);
  const from = (await chain.blockNumber()) + 1n;
  const before = calls();
  const results = await Promise.all(Array.from({ length: COPIES }, () => fetch(url, { headers: { 'PAYMENT-SIGNATURE': header } })));
  await Promise.all(results.map((r) => r.arrayBuffer()));
  const transfers = await chain.transfersSince(from);
  return { statuses: results.map((r) => r.status), handlerRuns: calls() - before, transfers: transfers.length };
}

describe('one authorization, four concurrent requests', () => {
  test('the reference @x402/hono middleware runs the handler for more than one of them, yet one transfer lands', async () => {
    const r = await burst(`${referenceUrl}/paid`, () => referenceCalls);
    expect(r.transfers, JSON.stringify(r)).toBe(1);
    expect(r.handlerRuns, `reference 2.27.0 ran the handler ${r.handlerRuns} times for one authorization (${JSON.stringify(r)})`).toBeGreaterThan(1);
  });

  test('our gate runs the handler once and answers once, with the same single transfer', async () => {
    const r = await burst(`${ours.url}/api/x402/places?q=coffee`, () => ourCalls);
    expect(r.transfers, JSON.stringify(r)).toBe(1);
    expect(r.handlerRuns, JSON.stringify(r)).toBe(1);
    expect(r.statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(r.statuses.filter((s) => s === 402)).toHaveLength(COPIES - 1);
  });
});
