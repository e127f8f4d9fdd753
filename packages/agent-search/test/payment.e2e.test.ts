/**
 * End-to-end payment tests on a real chain (anvil) with the real TestUSDC (EIP-3009), this
 * package's own in-process facilitator, the real server over loopback HTTP and the real answers
 * (createAnswerer(createSampleProvider())). Balances are read from the chain, not from the server.
 * Each attack is its own named test.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAnswerer, createSampleProvider, type Answerer, type DataProvider } from '../src/answers/index.js';
import type { LocalFacilitator } from '../src/facilitator/local.js';
import { createFileChargeLog, type ChargeRecord } from '../src/payment/charge-log.js';
import { PAYMENT_CODES } from '../src/payment/errors.js';
import { MemoryAuthorizationStore } from '../src/payment/idempotency.js';
import { startServer, type RunningServer } from '../src/server.js';
import { artifact, encodePayload, localFacilitatorFor, quoteAndSign, startTestChain, type TestChain } from './helpers.js';

const PLACES = '/api/x402/places';
const DEALS = '/api/x402/deals';
const STACK = '/api/x402/stack';
const SEARCH = '/api/x402/search';
const GEO_PLACES = '/api/v1/geo/places';

let chain: TestChain;
let facilitator: LocalFacilitator;
let server: RunningServer & { baseUrl: string };
let dir: string;
let chargeLogPath: string;
let real: Answerer;

/** The answerer the server calls: the real one by default, swapped per test for failure cases; every call counted. */
const answerer = {
  impl: undefined as unknown as Pick<Answerer, 'answer'>,
  calls: 0,
  answer(path: Parameters<Answerer['answer']>[0], params: URLSearchParams) {
    this.calls += 1;
    return this.impl.answer(path, params);
  },
};

/** Settled charges counted by this file, to check the charge log has exactly one line each. */
const settledTx: string[] = [];

const url = (path: string) => `${server.url}${path}`;
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string; field?: string } }).error;

beforeAll(async () => {
  chain = await startTestChain();
  dir = mkdtempSync(join(tmpdir(), 'agent-search-pay-'));
  chargeLogPath = join(dir, 'charges.jsonl');
  facilitator = localFacilitatorFor(chain);
  real = createAnswerer(createSampleProvider());
  answerer.impl = real;
  server = await startServer({
    operator: 'Test Operator',
    answerer,
    payment: { terms: chain.terms, facilitator, chargeLog: createFileChargeLog(chargeLogPath) },
  });
});

afterAll(async () => {
  await server?.close();
  await chain?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `fn` and returns how the payer's and payee's token balances moved and how many transfers landed. */
async function moved(fn: () => Promise<void>, payer = chain.payer.address): Promise<{ payer: bigint; payee: bigint; transfers: number }> {
  const [p0, q0, b0] = await Promise.all([chain.balanceOf(payer), chain.balanceOf(chain.payee.address), chain.blockNumber()]);
  await fn();
  const [p1, q1, transfers] = await Promise.all([chain.balanceOf(payer), chain.balanceOf(chain.payee.address), chain.transfersSince(b0 + 1n)]);
  return { payer: p1 - p0, payee: q1 - q0, transfers: transfers.filter((t) => t.to === chain.payee.address).length };
}

describe('quotes', () => {
  test('an unpaid call gets 402 with PAYMENT-REQUIRED holding the x402 v2 terms, and the handler does not run', async () => {
    const before = answerer.calls;
    const res = await fetch(url(PLACES));
    expect(res.status).toBe(402);
    const header = res.headers.get('PAYMENT-REQUIRED');
    expect(header).toBeTruthy();
    const required = decodePaymentRequiredHeader(header!);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(`${server.baseUrl}${PLACES}`);
    expect(required.accepts).toHaveLength(1);
    const a = required.accepts[0]!;
    expect(a.scheme).toBe('exact');
    expect(a.network).toBe(chain.network);
    expect(a.amount).toBe('2000'); // 0.002 at 6 decimals
    expect(a.asset.toLowerCase()).toBe(chain.token.toLowerCase());
    expect(a.payTo.toLowerCase()).toBe(chain.payee.address.toLowerCase());
    expect(a.extra).toEqual({ name: 'USD Coin', version: '2' });
    expect(a.maxTimeoutSeconds).toBe(120);
    expect((await errorOf(res)).code).toBe(PAYMENT_CODES.paymentRequired);
    expect(answerer.calls).toBe(before);
  });

  test('every paid route is quoted at the price table in base units; search by mode, quick when absent', async () => {
    const cases: [string, string][] = [
      [SEARCH, '10000'],
      [`${SEARCH}?mode=quick`, '10000'],
      [`${SEARCH}?mode=deep`, '50000'],
      [`${SEARCH}?mode=plan`, '50000'],
      [PLACES, '2000'],
      [DEALS, '2000'],
      [STACK, '10000'],
      [GEO_PLACES, '5000'],
      ['/api/v1/geo/events', '5000'],
    ];
    for (const [path, amount] of cases) {
      const res = await fetch(url(path));
      expect(res.status, path).toBe(402);
      expect(decodePaymentRequiredHeader(res.headers.get('PAYMENT-REQUIRED')!).accepts[0]!.amount, path).toBe(amount);
      await res.body?.cancel();
    }
  });

  test('an invalid search mode is a 400 naming the field, before any payment is asked', async () => {
    const before = answerer.calls;
    for (const q of ['mode=turbo', 'mode=', 'mode=quick&mode=deep']) {
      const res = await fetch(url(`${SEARCH}?q=x&${q}`));
      expect(res.status, q).toBe(400);
      expect(res.headers.get('PAYMENT-REQUIRED'), q).toBeNull();
      const e = await errorOf(res);
      expect(e.code).toBe('invalid_parameter');
      expect(e.field).toBe('mode');
    }
    expect(answerer.calls).toBe(before);
  });

  test('CORS exposes PAYMENT-REQUIRED and PAYMENT-RESPONSE, and a preflight allows PAYMENT-SIGNATURE', async () => {
    const res = await fetch(url(PLACES), { headers: { Origin: 'https://agent.example' } });
    expect(res.status).toBe(402);
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toUpperCase().split(/\s*,\s*/);
    expect(exposed).toContain('PAYMENT-REQUIRED');
    expect(exposed).toContain('PAYMENT-RESPONSE');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    await res.body?.cancel();
    const pre = await fetch(url(PLACES), {
      method: 'OPTIONS',
      headers: { Origin: 'https://agent.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'payment-signature' },
    });
    expect(pre.status).toBeLessThan(300);
    expect((pre.headers.get('access-control-allow-headers') ?? '').toUpperCase()).toContain('PAYMENT-SIGNATURE');
  });
});

describe('paid calls', () => {
  test('a paid call answers 200 once, moves exactly the price from payer to payee, and returns the receipt', async () => {
    const { header } = await quoteAndSign(url(`${SEARCH}?q=coffee&mode=deep`), chain.payer.privateKey);
    const before = answerer.calls;
    let res!: Response;
    const delta = await moved(async () => {
      res = await fetch(url(`${SEARCH}?q=coffee&mode=deep`), { headers: { 'PAYMENT-SIGNATURE': header } });
    });
    expect(res.status).toBe(200);
    expect(answerer.calls).toBe(before + 1);
    expect(delta).toEqual({ payer: -50_000n, payee: 50_000n, transfers: 1 });
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt.success).toBe(true);
    expect(receipt.network).toBe(chain.network);
    expect(receipt.payer?.toLowerCase()).toBe(chain.payer.address.toLowerCase());
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const onChain = await chain.devnet.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` });
    expect(onChain.status).toBe('success');
    settledTx.push(receipt.transaction);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toBeTypeOf('object');
  });

  test('attack: a replayed authorization is refused with 402 and charged only once', async () => {
    const { header } = await quoteAndSign(url(PLACES), chain.payer.privateKey);
    const first = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(first.status).toBe(200);
    settledTx.push(decodePaymentResponseHeader(first.headers.get('PAYMENT-RESPONSE')!).transaction);
    const before = answerer.calls;
    let replay!: Response;
    const delta = await moved(async () => {
      replay = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': header } });
    });
    expect(replay.status).toBe(402);
    expect((await errorOf(replay)).code).toBe(PAYMENT_CODES.alreadyUsed);
    expect(answerer.calls).toBe(before);
    expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
  });

  test('attack: a replay against a fresh server (new memory) is refused by the chain-backed verification', async () => {
    const { header } = await quoteAndSign(url(DEALS), chain.payer.privateKey);
    const first = await fetch(url(DEALS), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(first.status).toBe(200);
    settledTx.push(decodePaymentResponseHeader(first.headers.get('PAYMENT-RESPONSE')!).transaction);
    // Same base URL matters for the resource binding, so the second server reuses the first's quote terms.
    const fresh = await startServer({ operator: 'Test Operator', answerer, payment: { terms: chain.terms, facilitator } });
    try {
      // Learn the fresh server's resource URL, then present the spent authorization re-targeted at it.
      const quote = await fetch(`${fresh.url}${DEALS}`);
      const resource = decodePaymentRequiredHeader(quote.headers.get('PAYMENT-REQUIRED')!).resource;
      const spent = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentPayload;
      const retargeted = encodePayload({ ...spent, resource });
      const before = answerer.calls;
      const res = await fetch(`${fresh.url}${DEALS}`, { headers: { 'PAYMENT-SIGNATURE': retargeted } });
      expect(res.status).toBe(402);
      const e = await errorOf(res);
      expect(e.code).toMatch(/nonce|used|simulation|invalid/);
      expect(answerer.calls).toBe(before);
    } finally {
      await fresh.close();
    }
  });

  test('attack: two concurrent requests with one authorization run the handler exactly once and charge once', async () => {
    const path = `${STACK}?parks=both&adults=2&kids=1&days=4`;
    const { header } = await quoteAndSign(url(path), chain.payer.privateKey);
    const before = answerer.calls;
    let results: Response[] = [];
    const delta = await moved(async () => {
      results = await Promise.all(Array.from({ length: 4 }, () => fetch(url(path), { headers: { 'PAYMENT-SIGNATURE': header } })));
    });
    const statuses = results.map((r) => r.status);
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(answerer.calls - before, `statuses ${statuses.join(',')}`).toBe(1);
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect([PAYMENT_CODES.inProgress, PAYMENT_CODES.alreadyUsed]).toContain((await errorOf(r)).code);
    expect(delta).toEqual({ payer: -10_000n, payee: 10_000n, transfers: 1 });
    settledTx.push(decodePaymentResponseHeader(ok[0]!.headers.get('PAYMENT-RESPONSE')!).transaction);
  });

  test('attack: a tampered signature is refused with 402, the handler does not run, nothing moves', async () => {
    const { payload } = await quoteAndSign(url(PLACES), chain.payer.privateKey);
    const p = payload.payload as { signature: string };
    // Flip one bit inside r: same length, a different (wrong) signer recovers.
    const sig = p.signature;
    const flipped = `${sig.slice(0, 10)}${((parseInt(sig[10]!, 16) ^ 1) & 15).toString(16)}${sig.slice(11)}`;
    const tampered = encodePayload({ ...payload, payload: { ...payload.payload, signature: flipped } });
    const before = answerer.calls;
    let res!: Response;
    const delta = await moved(async () => {
      res = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': tampered } });
    });
    expect(res.status).toBe(402);
    const e = await errorOf(res);
    expect(e.code).toMatch(/signature/);
    expect(answerer.calls).toBe(before);
    expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
  });

  test('attack: an authorization whose value was raised after signing is refused (signature no longer matches)', async () => {
    // Quote quick (0.01), then rewrite everything to deep (0.05) except the signature.
    const { payload } = await quoteAndSign(url(`${SEARCH}?q=x&mode=quick`), chain.payer.privateKey);
    const deep = await fetch(url(`${SEARCH}?q=x&mode=deep`));
    const deepReq = decodePaymentRequiredHeader(deep.headers.get('PAYMENT-REQUIRED')!);
    const auth = (payload.payload as { authorization: Record<string, string> }).authorization;
    const forged = encodePayload({
      ...payload,
      resource: deepReq.resource,
      accepted: deepReq.accepts[0]!,
      payload: { ...payload.payload, authorization: { ...auth, value: '50000' } },
    });
    const before = answerer.calls;
    const res = await fetch(url(`${SEARCH}?q=x&mode=deep`), { headers: { 'PAYMENT-SIGNATURE': forged } });
    expect(res.status).toBe(402);
    expect((await errorOf(res)).code).toMatch(/signature/);
    expect(answerer.calls).toBe(before);
  });

  test('attack: a payment quoted for the quick price and presented for deep is refused (price binding)', async () => {
    const { header } = await quoteAndSign(url(`${SEARCH}?q=x&mode=quick`), chain.payer.privateKey);
    const before = answerer.calls;
    const res = await fetch(url(`${SEARCH}?q=x&mode=deep`), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(res.status).toBe(402);
    const e = await errorOf(res);
    expect(e.code).toBe(PAYMENT_CODES.requirementsMismatch);
    expect(e.field).toBe('accepted.amount');
    expect(answerer.calls).toBe(before);
  });

  test('attack: a payment quoted for one route and presented to another route of the same price is refused (route binding)', async () => {
    const { header } = await quoteAndSign(url(PLACES), chain.payer.privateKey);
    const before = answerer.calls;
    const res = await fetch(url(DEALS), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(res.status).toBe(402);
    const e = await errorOf(res);
    expect(e.code).toBe(PAYMENT_CODES.resourceMismatch);
    expect(e.field).toBe('resource.url');
    expect(answerer.calls).toBe(before);
    // The untouched authorization still works where it was quoted: a refusal spends nothing.
    const ok = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(ok.status).toBe(200);
    settledTx.push(decodePaymentResponseHeader(ok.headers.get('PAYMENT-RESPONSE')!).transaction);
  });

  test('attack: a cheap route\'s payment presented to a dearer route is refused', async () => {
    const { header } = await quoteAndSign(url(PLACES), chain.payer.privateKey);
    const res = await fetch(url(STACK), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(res.status).toBe(402);
    expect((await errorOf(res)).field).toBe('accepted.amount');
  });

  test('attack: a paid HEAD request (an answer nobody receives) is refused with 405 and charges nothing', async () => {
    const { header } = await quoteAndSign(url(PLACES), chain.payer.privateKey);
    const before = answerer.calls;
    let res!: Response;
    const delta = await moved(async () => {
      res = await fetch(url(PLACES), { method: 'HEAD', headers: { 'PAYMENT-SIGNATURE': header } });
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(answerer.calls).toBe(before);
    expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
    // The authorization was never claimed: a GET may still use it.
    const ok = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(ok.status).toBe(200);
    settledTx.push(decodePaymentResponseHeader(ok.headers.get('PAYMENT-RESPONSE')!).transaction);
  });

  test('attack: a malformed PAYMENT-SIGNATURE is refused with 402 naming the problem', async () => {
    for (const h of ['not base64 at all', Buffer.from('{"x402Version":1}').toString('base64'), Buffer.from('[]').toString('base64')]) {
      const res = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': h } });
      expect(res.status).toBe(402);
      expect((await errorOf(res)).code).toBe(PAYMENT_CODES.invalidPaymentHeader);
      expect(res.headers.get('PAYMENT-REQUIRED')).toBeTruthy();
    }
  });
});

describe('no answer, no charge', () => {
  const provider = (): DataProvider => {
    const sample = createSampleProvider();
    const boom = () => Promise.reject(new Error('data source down'));
    return { source: sample.source, areas: boom, places: boom, deals: boom, events: boom, resorts: boom };
  };

  test('a throwing data provider charges nothing, and the same authorization does not run the handler again', async () => {
    const { header, payload } = await quoteAndSign(url(PLACES), chain.payer.privateKey);
    answerer.impl = createAnswerer(provider());
    let res!: Response;
    try {
      const delta = await moved(async () => {
        res = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': header } });
      });
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.headers.get('PAYMENT-RESPONSE')).toBeNull();
      expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
    } finally {
      answerer.impl = real;
    }
    const before = answerer.calls;
    const again = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(again.status).toBe(402);
    expect((await errorOf(again)).code).toBe(PAYMENT_CODES.alreadyUsed);
    expect(answerer.calls).toBe(before);
    // Still unspent on chain: the payer lost nothing.
    const auth = (payload.payload as { authorization: { nonce: `0x${string}` } }).authorization;
    const used = await chain.devnet.publicClient.readContract({ address: chain.token, abi: artifact.abi, functionName: 'authorizationState', args: [chain.payer.address, auth.nonce] });
    expect(used).toBe(false);
  });

  test('a handler that throws (500) charges nothing', async () => {
    const { header } = await quoteAndSign(url(DEALS), chain.payer.privateKey);
    answerer.impl = { answer: () => Promise.reject(new Error('bug')) };
    try {
      let res!: Response;
      const delta = await moved(async () => {
        res = await fetch(url(DEALS), { headers: { 'PAYMENT-SIGNATURE': header } });
      });
      expect(res.status).toBe(500);
      expect((await errorOf(res)).code).toBe('internal');
      expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
    } finally {
      answerer.impl = real;
    }
  });

  test('a handler 5xx answer charges nothing', async () => {
    const { header } = await quoteAndSign(url(DEALS), chain.payer.privateKey);
    answerer.impl = { answer: async () => ({ status: 500, body: { error: { code: 'upstream', message: 'upstream failed' } } }) };
    try {
      let res!: Response;
      const delta = await moved(async () => {
        res = await fetch(url(DEALS), { headers: { 'PAYMENT-SIGNATURE': header } });
      });
      expect(res.status).toBe(500);
      expect(res.headers.get('PAYMENT-RESPONSE')).toBeNull();
      expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
    } finally {
      answerer.impl = real;
    }
  });

  test('an answer slower than answerTimeoutMs is abandoned with 504 and charges nothing', async () => {
    let late = 0;
    const slow = await startServer({
      operator: 'Test Operator',
      answerTimeoutMs: 300,
      answerer: { answer: () => new Promise((resolve) => setTimeout(() => { late += 1; resolve({ status: 200, body: { too: 'late' } }); }, 1500)) },
      payment: { terms: chain.terms, facilitator },
    });
    try {
      const target = `${slow.url}${PLACES}`;
      const { header } = await quoteAndSign(target, chain.payer.privateKey);
      let res!: Response;
      const delta = await moved(async () => {
        res = await fetch(target, { headers: { 'PAYMENT-SIGNATURE': header } });
      });
      expect(res.status).toBe(504);
      expect((await errorOf(res)).code).toBe('answer_timeout');
      expect(res.headers.get('PAYMENT-RESPONSE')).toBeNull();
      expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
      // The late answer arrives and is dropped; the authorization is not accepted again.
      await new Promise((r) => setTimeout(r, 1400));
      expect(late).toBe(1);
      const again = await fetch(target, { headers: { 'PAYMENT-SIGNATURE': header } });
      expect(again.status).toBe(402);
      expect((await errorOf(again)).code).toBe(PAYMENT_CODES.alreadyUsed);
    } finally {
      await slow.close();
    }
  });

  test('a handler 4xx (bad parameter) charges nothing', async () => {
    const path = `${GEO_PLACES}?near=not-a-point`;
    const { header } = await quoteAndSign(url(path), chain.payer.privateKey);
    const before = answerer.calls;
    let res!: Response;
    const delta = await moved(async () => {
      res = await fetch(url(path), { headers: { 'PAYMENT-SIGNATURE': header } });
    });
    expect(res.status).toBe(400);
    expect(answerer.calls).toBe(before + 1);
    expect((await errorOf(res)).field).toBe('near');
    expect(res.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
  });

  test('attack: the payer spends the funds between verification and settlement: no answer, no charge, a trimmed reason', async () => {
    const { header } = await quoteAndSign(url(PLACES), chain.payer2.privateKey);
    // While the handler runs, payer2 moves its whole balance away, so settlement must fail.
    answerer.impl = {
      answer: async (p, q) => {
        const all = await chain.balanceOf(chain.payer2.address);
        await chain.transfer(chain.payer2, chain.gas.address, all);
        return real.answer(p, q);
      },
    };
    let res!: Response;
    try {
      const delta = await moved(async () => {
        res = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': header } });
      }, chain.payer2.address);
      expect(res.status).toBe(402);
      expect(delta.payee).toBe(0n);
      expect(delta.transfers).toBe(0);
    } finally {
      answerer.impl = real;
      await chain.mint(chain.payer2.address, 10_000_000n);
    }
    const body = (await res.json()) as { error: { code: string; message: string } };
    // The withheld answer is not in the body: only the error.
    expect(Object.keys(body)).toEqual(['error']);
    const e = body.error;
    expect(e.code).toBe(PAYMENT_CODES.settlementFailed);
    expect(e.message.length).toBeLessThanOrEqual(200);
    expect(e.message).not.toMatch(/\n/);
    expect(e.message).not.toMatch(/0x[0-9a-fA-F]{64,}/);
    expect(e.message).toMatch(/balance|transaction_failed|failed/i);
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt.success).toBe(false);
    // And the authorization cannot be tried again here.
    const again = await fetch(url(PLACES), { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(again.status).toBe(402);
    expect((await errorOf(again)).code).toBe(PAYMENT_CODES.alreadyUsed);
  });
});

describe('how PAYMENT-SIGNATURE is read (issue #20: the README and the code must agree)', () => {
  /** Standard base64 of the payload's JSON, with JSON whitespace in front until the encoding has the shape `want` asks for. */
  const encodedWhere = (payload: unknown, want: (b64: string) => boolean): string => {
    const json = JSON.stringify(payload);
    for (let pad = 0; pad < 64; pad++) {
      const b64 = Buffer.from(`${' '.repeat(pad)}${json}`, 'utf8').toString('base64');
      if (want(b64)) return b64;
    }
    throw new Error('no such encoding');
  };

  test('attack: a payment header with extra members is the same payment: the extras reach no facilitator, and it is charged once', async () => {
    // A server whose facilitator records what it is handed.
    const seen: { payload: PaymentPayload; requirements: unknown }[] = [];
    const recording = {
      verify: (payload: PaymentPayload, requirements: Parameters<typeof facilitator.verify>[1]) => (seen.push({ payload, requirements }), facilitator.verify(payload, requirements)),
      settle: (payload: PaymentPayload, requirements: Parameters<typeof facilitator.settle>[1]) => (seen.push({ payload, requirements }), facilitator.settle(payload, requirements)),
    };
    const rec = await startServer({ operator: 'Test Operator', answerer, payment: { terms: chain.terms, facilitator: recording } });
    try {
      const target = `${rec.url}${PLACES}`;
      const { header, payload } = await quoteAndSign(target, chain.payer.privateKey);
      const auth = (payload.payload as { authorization: Record<string, string> }).authorization;
      // Members nobody checks, in every object: an x402 extension, a bonus in the quote, a Permit2
      // authorization beside the EIP-3009 one (the reference facilitator would take that path).
      const padded = encodePayload({
        ...payload,
        extensions: { 'builder-code': { info: { s: ['evil'] } } },
        resource: { ...payload.resource!, description: 'something else' },
        accepted: { ...payload.accepted, bonus: '1' } as PaymentPayload['accepted'],
        payload: {
          ...payload.payload,
          authorization: { ...auth, extra: 'ignored' },
          permit2Authorization: { from: auth.from, permitted: { token: chain.token, amount: '1' }, spender: auth.to, nonce: '1', deadline: '1', witness: { to: auth.to, validAfter: '0' } },
        },
      } as PaymentPayload);
      const before = answerer.calls;
      let res!: Response;
      const delta = await moved(async () => {
        res = await fetch(target, { headers: { 'PAYMENT-SIGNATURE': padded } });
      });
      expect(res.status).toBe(200);
      expect(answerer.calls).toBe(before + 1);
      expect(delta).toEqual({ payer: -2_000n, payee: 2_000n, transfers: 1 });
      // The facilitator saw only what the gate checked: our resource and requirements, the signature and the six fields.
      expect(seen.map((x) => x.payload.x402Version)).toEqual([2, 2]);
      for (const { payload: p, requirements } of seen) {
        expect(Object.keys(p).sort()).toEqual(['accepted', 'payload', 'resource', 'x402Version']);
        expect(p.accepted).toEqual(requirements);
        expect(p.resource?.url).toBe(target);
        expect(p.resource?.description).not.toBe('something else');
        expect(Object.keys(p.payload).sort()).toEqual(['authorization', 'signature']);
        expect(Object.keys(p.payload['authorization'] as object).sort()).toEqual(['from', 'nonce', 'to', 'validAfter', 'validBefore', 'value']);
      }
      // The plain header carries the same authorization: already used, nothing runs, nothing moves.
      let replay!: Response;
      const again = await moved(async () => {
        replay = await fetch(target, { headers: { 'PAYMENT-SIGNATURE': header } });
      });
      expect(replay.status).toBe(402);
      expect((await errorOf(replay)).code).toBe(PAYMENT_CODES.alreadyUsed);
      expect(answerer.calls).toBe(before + 1);
      expect(again).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
    } finally {
      await rec.close();
    }
  });

  test('attack: a payment header in base64url is refused as invalid_payment_header: nothing runs, nothing is charged', async () => {
    // A resource URL with a query: its '?' (0x3f) encodes to '/' in one of three alignments.
    const path = `${SEARCH}?q=base64&mode=quick`;
    const { payload } = await quoteAndSign(url(path), chain.payer.privateKey);
    const standard = encodedWhere(payload, (b) => /[+/]/.test(b));
    const urlSafe = standard.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    expect(urlSafe).toMatch(/[-_]/);
    const before = answerer.calls;
    let res!: Response;
    const delta = await moved(async () => {
      res = await fetch(url(path), { headers: { 'PAYMENT-SIGNATURE': urlSafe } });
    });
    expect(res.status).toBe(402);
    const e = await errorOf(res);
    expect(e.code).toBe(PAYMENT_CODES.invalidPaymentHeader);
    expect(e.field).toBe('PAYMENT-SIGNATURE');
    expect(answerer.calls).toBe(before);
    expect(delta).toEqual({ payer: 0n, payee: 0n, transfers: 0 });
    // The refusal claimed nothing: the same authorization in standard base64 pays once.
    let ok!: Response;
    const paid = await moved(async () => {
      ok = await fetch(url(path), { headers: { 'PAYMENT-SIGNATURE': standard } });
    });
    expect(ok.status).toBe(200);
    expect(paid).toEqual({ payer: -10_000n, payee: 10_000n, transfers: 1 });
    settledTx.push(decodePaymentResponseHeader(ok.headers.get('PAYMENT-RESPONSE')!).transaction);
  });

  test('attack: the same payment without base64 padding, then padded, is charged once (read as the reference server reads it)', async () => {
    const { payload } = await quoteAndSign(url(DEALS), chain.payer.privateKey);
    const paddedHeader = encodedWhere(payload, (b) => b.endsWith('='));
    const unpadded = paddedHeader.replace(/=+$/, '');
    const before = answerer.calls;
    const results: Response[] = [];
    const delta = await moved(async () => {
      results.push(await fetch(url(DEALS), { headers: { 'PAYMENT-SIGNATURE': unpadded } }));
      results.push(await fetch(url(DEALS), { headers: { 'PAYMENT-SIGNATURE': paddedHeader } }));
    });
    expect(results.map((r) => r.status)).toEqual([200, 402]);
    expect((await errorOf(results[1]!)).code).toBe(PAYMENT_CODES.alreadyUsed);
    expect(answerer.calls).toBe(before + 1);
    expect(delta).toEqual({ payer: -2_000n, payee: 2_000n, transfers: 1 });
    settledTx.push(decodePaymentResponseHeader(results[0]!.headers.get('PAYMENT-RESPONSE')!).transaction);
  });
});

describe('limits', () => {
  test('when the authorization store is full a paid call is refused with 503, before verification or the handler', async () => {
    const full = await startServer({ operator: 'Test Operator', answerer, payment: { terms: chain.terms, facilitator, store: new MemoryAuthorizationStore({ maxEntries: 0 }) } });
    try {
      const { header } = await quoteAndSign(`${full.url}${PLACES}`, chain.payer.privateKey);
      const before = answerer.calls;
      const res = await fetch(`${full.url}${PLACES}`, { headers: { 'PAYMENT-SIGNATURE': header } });
      expect(res.status).toBe(503);
      expect((await errorOf(res)).code).toBe(PAYMENT_CODES.busy);
      expect(answerer.calls).toBe(before);
    } finally {
      await full.close();
    }
  });
});

describe('charge log', () => {
  test('has one line per settled charge, each with its on-chain transaction hash, and no secrets', async () => {
    const text = readFileSync(chargeLogPath, 'utf8');
    const lines = text.trim().split('\n').map((l) => JSON.parse(l) as ChargeRecord);
    expect(lines.map((l) => l.transaction).sort()).toEqual([...settledTx].sort());
    for (const l of lines) {
      expect(l.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(l.payTo.toLowerCase()).toBe(chain.payee.address.toLowerCase());
      expect(BigInt(l.amount)).toBeGreaterThan(0n);
      expect(Number.isInteger(l.time)).toBe(true);
      const r = await chain.devnet.publicClient.getTransactionReceipt({ hash: l.transaction as `0x${string}` });
      expect(r.status).toBe('success');
      expect(Object.keys(l)).not.toContain('signature');
    }
    for (const secret of [chain.payer.privateKey, chain.payer2.privateKey, chain.gas.privateKey]) {
      expect(text.toLowerCase()).not.toContain(secret.slice(2).toLowerCase());
    }
    // No 65-byte signature anywhere in the log.
    expect(text).not.toMatch(/0x[0-9a-fA-F]{130}/);
  });
});

describe('payment not configured', () => {
  test('the descriptor says enabled false and status ABSENT, and paid routes answer 503 naming why', async () => {
    const off = await startServer({ operator: 'Test Operator', answerer, payment: null });
    try {
      const d = (await (await fetch(`${off.url}/.well-known/x402`)).json()) as { enabled: boolean; status: string; protocol: string };
      expect(d.enabled).toBe(false);
      expect(d.status).toBe('ABSENT');
      expect(d.protocol).toBe('x402 v2');
      const before = answerer.calls;
      for (const path of [SEARCH, PLACES, DEALS, STACK, GEO_PLACES, '/api/v1/geo/events']) {
        const res = await fetch(`${off.url}${path}`);
        expect(res.status, path).toBe(503);
        expect(res.headers.get('PAYMENT-REQUIRED')).toBeNull();
        const e = await errorOf(res);
        expect(e.code).toBe(PAYMENT_CODES.paymentAbsent);
        expect(e.message).toMatch(/ABSENT/);
      }
      expect(answerer.calls).toBe(before);
      const llms = await (await fetch(`${off.url}/llms.txt`)).text();
      expect(llms.length).toBeGreaterThan(0);
    } finally {
      await off.close();
    }
  });

  test('with payment configured the descriptor says enabled true and status LIVE', async () => {
    const d = (await (await fetch(url('/.well-known/x402'))).json()) as { enabled: boolean; status: string };
    expect(d.enabled).toBe(true);
    expect(d.status).toBe('LIVE');
  });
});
