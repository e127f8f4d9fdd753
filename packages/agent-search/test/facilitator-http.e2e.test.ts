/**
 * The HTTP facilitator (POST /verify, POST /settle, GET /supported) on a real chain, used by the
 * server through the reference HTTPFacilitatorClient, and its refusals.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAnswerer, createSampleProvider } from '../src/answers/index.js';
import { createHttpFacilitatorClient, startFacilitatorServer, type RunningServer } from '../src/facilitator/http.js';
import { createLocalFacilitator } from '../src/facilitator/local.js';
import { buildRequirements } from '../src/payment/requirements.js';
import { PAYMENT_CODES } from '../src/payment/errors.js';
import { startServer } from '../src/server.js';
import { localFacilitatorFor, quoteAndSign, startTestChain, type TestChain } from './helpers.js';

let chain: TestChain;
let fac: RunningServer;
let server: RunningServer & { baseUrl: string };
let calls = 0;

beforeAll(async () => {
  chain = await startTestChain();
  const local = localFacilitatorFor(chain);
  fac = await startFacilitatorServer(local);
  const real = createAnswerer(createSampleProvider());
  server = await startServer({
    operator: 'Test Operator',
    answerer: { answer: (p, q) => ((calls += 1), real.answer(p, q)) },
    payment: { terms: chain.terms, facilitator: createHttpFacilitatorClient(fac.url, 10_000) },
  });
});

afterAll(async () => {
  await server?.close();
  await fac?.close();
  await chain?.stop();
});

describe('HTTP facilitator', () => {
  test('a paid call through the HTTP facilitator moves exactly the price and returns the receipt', async () => {
    const target = `${server.url}/api/x402/search?mode=plan&who=2,2&when=3&budget=2500`;
    const { header } = await quoteAndSign(target, chain.payer.privateKey);
    const [p0, q0] = await Promise.all([chain.balanceOf(chain.payer.address), chain.balanceOf(chain.payee.address)]);
    const res = await fetch(target, { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(res.status).toBe(200);
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt.success).toBe(true);
    const [p1, q1] = await Promise.all([chain.balanceOf(chain.payer.address), chain.balanceOf(chain.payee.address)]);
    expect(p0 - p1).toBe(50_000n);
    expect(q1 - q0).toBe(50_000n);
    const r = await chain.devnet.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` });
    expect(r.status).toBe('success');
  });

  test('GET /supported lists the exact scheme on the configured network; /health names the gas address', async () => {
    const s = (await (await fetch(`${fac.url}/supported`)).json()) as { kinds: { x402Version: number; scheme: string; network: string }[] };
    expect(s.kinds).toContainEqual(expect.objectContaining({ x402Version: 2, scheme: 'exact', network: chain.network }));
    const h = (await (await fetch(`${fac.url}/health`)).json()) as { gasAddress: string };
    expect(h.gasAddress.toLowerCase()).toBe(chain.gas.address.toLowerCase());
    expect(JSON.stringify(h)).not.toContain(chain.gas.privateKey.slice(2));
  });

  test('malformed /verify and /settle requests are 400 naming the field', async () => {
    const post = (path: string, body: string) => fetch(`${fac.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const cases: [string, string][] = [
      ['not json', 'body'],
      ['[]', 'body'],
      ['{"x402Version":1,"paymentPayload":{},"paymentRequirements":{}}', 'x402Version'],
      ['{"x402Version":2,"paymentRequirements":{}}', 'paymentPayload'],
      ['{"x402Version":2,"paymentPayload":{}}', 'paymentRequirements'],
    ];
    for (const path of ['/verify', '/settle']) {
      for (const [body, field] of cases) {
        const res = await post(path, body);
        expect(res.status, `${path} ${body}`).toBe(400);
        expect(((await res.json()) as { error: { field: string } }).error.field).toBe(field);
      }
    }
  });

  test('attack: the facilitator refuses to settle a valid authorization for a payee it does not serve', async () => {
    // A genuine authorization paying someone else (payer2 → payer) with the same token.
    const stranger = { ...chain.terms, payTo: chain.payer.address };
    const requirements = buildRequirements(stranger, 1_000n);
    const app = await startServer({ operator: 'x', answerer: { answer: async () => ({ status: 200, body: {} }) }, payment: { terms: stranger, facilitator: createHttpFacilitatorClient(fac.url) } });
    try {
      const { payload } = await quoteAndSign(`${app.url}/api/x402/places`, chain.payer2.privateKey);
      const b0 = await chain.balanceOf(chain.payer2.address);
      for (const path of ['/verify', '/settle']) {
        const res = await fetch(`${fac.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: { ...requirements, amount: '2000' } }) });
        expect(res.status).toBe(200);
        const body = (await res.json()) as { isValid?: boolean; success?: boolean; invalidReason?: string; errorReason?: string };
        expect(body.isValid ?? body.success).toBe(false);
        expect(body.invalidReason ?? body.errorReason).toBe('unsupported_pay_to');
      }
      expect(await chain.balanceOf(chain.payer2.address)).toBe(b0);
    } finally {
      await app.close();
    }
  });

  test('attack: the facilitator refuses another token even with a well-formed request', async () => {
    const other = buildRequirements({ ...chain.terms, asset: '0x0000000000000000000000000000000000000001' }, 2_000n);
    const res = await fetch(`${fac.url}/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x402Version: 2, paymentPayload: { x402Version: 2, accepted: other, payload: {} }, paymentRequirements: other }) });
    expect(((await res.json()) as { invalidReason: string }).invalidReason).toBe('unsupported_asset');
  });

  test('an unreachable facilitator: 502, the handler does not run, nothing is charged', async () => {
    const dead = await startFacilitatorServer(createLocalFacilitator({ rpcUrl: chain.devnet.rpcUrl, gasPrivateKey: chain.gas.privateKey, network: chain.network, asset: chain.token, assetName: 'USD Coin', assetVersion: '2' }));
    const deadUrl = dead.url;
    await dead.close();
    const app = await startServer({ operator: 'x', answerer: { answer: (p, q) => ((calls += 1), Promise.resolve({ status: 200 as const, body: {} })) }, payment: { terms: chain.terms, facilitator: createHttpFacilitatorClient(deadUrl, 2_000) } });
    try {
      const { header } = await quoteAndSign(`${app.url}/api/x402/places`, chain.payer.privateKey);
      const before = calls;
      const b0 = await chain.balanceOf(chain.payer.address);
      const res = await fetch(`${app.url}/api/x402/places`, { headers: { 'PAYMENT-SIGNATURE': header } });
      expect(res.status).toBe(502);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(PAYMENT_CODES.facilitatorUnavailable);
      expect(calls).toBe(before);
      expect(await chain.balanceOf(chain.payer.address)).toBe(b0);
    } finally {
      await app.close();
    }
  });
});
