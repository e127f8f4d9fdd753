/**
 * Unit tests of the payment layer's pure parts: price conversion, mode resolution, failure-reason
 * trimming, the idempotency store, and the strict reading of payment payloads.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { withTimings } from '../src/facilitator/timing.js';
import { createFileChargeLog, createMemoryChargeLog } from '../src/payment/charge-log.js';
import { PAYMENT_CODES, trimReason } from '../src/payment/errors.js';
import { authorizationKey, MemoryAuthorizationStore } from '../src/payment/idempotency.js';
import { baseUnitsToDecimal, decimalToBaseUnits, DEFAULT_SEARCH_MODE, resolvePrice } from '../src/payment/price.js';
import { acceptedMismatch, buildRequirements, readExactEvmPayment, validateTerms, type PaymentTerms } from '../src/payment/requirements.js';
import { PAID_PATHS, PRICES } from '../src/routes.js';

const terms: PaymentTerms = {
  network: 'eip155:31337',
  asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  assetName: 'USD Coin',
  assetVersion: '2',
  assetSymbol: 'USDC',
  decimals: 6,
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  maxTimeoutSeconds: 60,
};

describe('decimalToBaseUnits', () => {
  test('converts every price of the table exactly at 6 decimals', () => {
    expect(decimalToBaseUnits(PRICES['/api/x402/search'].quick, 6)).toBe(10_000n);
    expect(decimalToBaseUnits(PRICES['/api/x402/search'].deep, 6)).toBe(50_000n);
    expect(decimalToBaseUnits(PRICES['/api/x402/search'].plan, 6)).toBe(50_000n);
    expect(decimalToBaseUnits(PRICES['/api/x402/places'], 6)).toBe(2_000n);
    expect(decimalToBaseUnits(PRICES['/api/x402/deals'], 6)).toBe(2_000n);
    expect(decimalToBaseUnits(PRICES['/api/x402/stack'], 6)).toBe(10_000n);
    expect(decimalToBaseUnits(PRICES['/api/v1/geo/places'], 6)).toBe(5_000n);
    expect(decimalToBaseUnits(PRICES['/api/v1/geo/events'], 6)).toBe(5_000n);
  });

  test('is exact where floats are not, and handles large values', () => {
    // 0.1 + 0.2 style: no float ever touches the amount.
    expect(decimalToBaseUnits('0.3', 6)).toBe(300_000n);
    expect(decimalToBaseUnits('123456789012345678901234567890.123456', 6)).toBe(123456789012345678901234567890123456n);
    expect(decimalToBaseUnits('7', 0)).toBe(7n);
    expect(decimalToBaseUnits('0', 6)).toBe(0n);
  });

  test('refuses malformed input and excess precision, naming the field', () => {
    for (const bad of ['', '-1', '+1', '1e3', ' 1', '1.', '.5', '01', '0x10', 'NaN', '1,5']) {
      expect(() => decimalToBaseUnits(bad, 6, 'maxPrice'), bad).toThrow(/maxPrice/);
    }
    expect(() => decimalToBaseUnits('0.0000001', 6)).toThrow(/fractional digits/);
    expect(() => decimalToBaseUnits('1', 6.5)).toThrow(/decimals/);
  });

  test('baseUnitsToDecimal inverts it', () => {
    for (const v of ['0.01', '0.05', '0.002', '1', '12.5']) expect(baseUnitsToDecimal(decimalToBaseUnits(v, 6), 6)).toBe(v);
    expect(baseUnitsToDecimal(0n, 6)).toBe('0');
  });
});

describe('resolvePrice', () => {
  test('search defaults to quick and prices by mode; other routes have one price', () => {
    expect(DEFAULT_SEARCH_MODE).toBe('quick');
    expect(resolvePrice('/api/x402/search', new URLSearchParams('q=x'))).toMatchObject({ ok: true, mode: 'quick', price: '0.01' });
    expect(resolvePrice('/api/x402/search', new URLSearchParams('mode=deep'))).toMatchObject({ ok: true, mode: 'deep', price: '0.05' });
    expect(resolvePrice('/api/x402/search', new URLSearchParams('mode=plan'))).toMatchObject({ ok: true, mode: 'plan', price: '0.05' });
    for (const p of PAID_PATHS.filter((x) => x !== '/api/x402/search')) {
      expect(resolvePrice(p, new URLSearchParams('mode=deep'))).toMatchObject({ ok: true, mode: undefined, price: PRICES[p] });
    }
  });

  test('an unknown, empty or repeated mode is refused naming the field', () => {
    for (const q of ['mode=fast', 'mode=', 'mode=QUICK', 'mode=quick&mode=deep']) {
      const r = resolvePrice('/api/x402/search', new URLSearchParams(q));
      expect(r.ok, q).toBe(false);
      if (!r.ok) expect(r.error.field).toBe('mode');
    }
  });
});

describe('trimReason', () => {
  test('turns a long multi-line chain error into one short line without hex blobs or URLs', () => {
    const sig = `0x${'ab'.repeat(65)}`;
    const msg = `The contract function "transferWithAuthorization" reverted with the following reason:\nTestUSDC: transfer amount exceeds balance ${sig}\n\nContract Call: address: 0x5FbDB2315678afecb367f032d93F642f64180aa3 https://rpc.example/KEY123`;
    const t = trimReason('Transaction Failed!', msg);
    expect(t.code).toBe('transaction_failed');
    expect(t.message).not.toMatch(/\n/);
    expect(t.message.length).toBeLessThanOrEqual(200);
    expect(trimReason('x', `failed ${sig} at https://rpc.example/KEY123 for 0x5FbDB2315678afecb367f032d93F642f64180aa3`).message).toBe('failed 0x… at <url> for 0x5FbDB2315678afecb367f032d93F642f64180aa3');
    expect(trimReason('x', 'y'.repeat(1000)).message.length).toBe(200);
  });

  test('falls back to a code when none is usable, and caps codes at 64 characters', () => {
    expect(trimReason(undefined, undefined).code).toBe('payment_failed');
    expect(trimReason(42, 'x', 'settlement_failed').code).toBe('settlement_failed');
    expect(trimReason('a'.repeat(100)).code).toHaveLength(64);
    expect(trimReason('invalid_exact_evm_payload_signature').message).toBe('invalid exact evm payload signature');
  });

  test('wire codes are stable', () => {
    expect(PAYMENT_CODES).toMatchObject({
      paymentRequired: 'payment_required',
      alreadyUsed: 'payment_already_used',
      inProgress: 'payment_in_progress',
      requirementsMismatch: 'payment_requirements_mismatch',
      resourceMismatch: 'payment_resource_mismatch',
      settlementFailed: 'settlement_failed',
      paymentAbsent: 'payment_absent',
    });
  });
});

describe('MemoryAuthorizationStore', () => {
  test('a key is claimed once; a second claim sees it in progress, then used; release frees only in-progress keys', () => {
    const s = new MemoryAuthorizationStore();
    const k = authorizationKey('eip155:1', '0xA', '0xB', '0xC');
    expect(k).toBe('eip155:1|0xa|0xb|0xc');
    expect(s.claim(k, 100)).toBe('claimed');
    expect(s.claim(k, 100)).toBe('in_progress');
    s.release(k);
    expect(s.claim(k, 100)).toBe('claimed');
    s.markUsed(k);
    expect(s.claim(k, 100)).toBe('used');
    s.release(k);
    expect(s.claim(k, 100)).toBe('used');
  });

  test('when full it prunes expired used keys, never in-flight ones, and otherwise refuses', () => {
    let now = 1000;
    const s = new MemoryAuthorizationStore({ maxEntries: 2, now: () => now });
    expect(s.claim('a', 1500)).toBe('claimed');
    s.markUsed('a');
    expect(s.claim('b', 1100)).toBe('claimed'); // in flight
    expect(s.claim('c', 2000)).toBe('full');
    now = 1600; // a expired; b is in flight and expired but must stay
    expect(s.claim('c', 2000)).toBe('claimed');
    expect(s.claim('b', 1100)).toBe('in_progress');
    expect(s.size).toBe(2);
  });
});

describe('payload reading and requirement binding', () => {
  const req = buildRequirements(validateTerms(terms), 10_000n);
  const good = {
    x402Version: 2,
    accepted: { ...req },
    resource: { url: 'http://x/api/x402/search?mode=quick' },
    payload: {
      signature: `0x${'11'.repeat(65)}`,
      authorization: { from: terms.payTo, to: terms.payTo, value: '10000', validAfter: '0', validBefore: '99999999999', nonce: `0x${'22'.repeat(32)}` },
    },
  };

  test('a well-formed EIP-3009 payload is read', () => {
    const r = readExactEvmPayment(good);
    expect('field' in r).toBe(false);
  });

  test('each malformed field is named', () => {
    const cases: [unknown, string][] = [
      [null, 'payload'],
      [{ ...good, x402Version: 1 }, 'x402Version'],
      [{ ...good, accepted: 'x' }, 'accepted'],
      [{ ...good, payload: { ...good.payload, signature: '0x1234' } }, 'payload.signature'],
      [{ ...good, payload: { ...good.payload, authorization: { ...good.payload.authorization, from: 'alice' } } }, 'payload.authorization.from'],
      [{ ...good, payload: { ...good.payload, authorization: { ...good.payload.authorization, value: '-1' } } }, 'payload.authorization.value'],
      [{ ...good, payload: { ...good.payload, authorization: { ...good.payload.authorization, value: 10000 } } }, 'payload.authorization.value'],
      [{ ...good, payload: { ...good.payload, authorization: { ...good.payload.authorization, nonce: '0x12' } } }, 'payload.authorization.nonce'],
      [{ ...good, payload: { ...good.payload, authorization: undefined } }, 'payload.authorization'],
    ];
    for (const [input, field] of cases) expect(readExactEvmPayment(input), field).toEqual({ field });
  });

  test('accepted must equal the requirements of this call, field by field', () => {
    expect(acceptedMismatch(req, req)).toBeUndefined();
    expect(acceptedMismatch({ ...req, asset: req.asset.toLowerCase() }, req)).toBeUndefined();
    expect(acceptedMismatch({ ...req, amount: '9999' }, req)).toBe('accepted.amount');
    expect(acceptedMismatch({ ...req, payTo: terms.asset }, req)).toBe('accepted.payTo');
    expect(acceptedMismatch({ ...req, network: 'eip155:1' }, req)).toBe('accepted.network');
    expect(acceptedMismatch({ ...req, scheme: 'upto' }, req)).toBe('accepted.scheme');
    expect(acceptedMismatch({ ...req, maxTimeoutSeconds: 3600 }, req)).toBe('accepted.maxTimeoutSeconds');
    expect(acceptedMismatch({ ...req, extra: { name: 'USDC', version: '2' } }, req)).toBe('accepted.extra.name');
  });

  test('terms are validated with named fields', () => {
    expect(() => validateTerms({ ...terms, network: 'base' as never })).toThrow(/network/);
    expect(() => validateTerms({ ...terms, asset: '0x12' as never })).toThrow(/asset/);
    expect(() => validateTerms({ ...terms, payTo: 'me' as never })).toThrow(/payTo/);
    expect(() => validateTerms({ ...terms, maxTimeoutSeconds: 5 })).toThrow(/maxTimeoutSeconds/);
  });
});

describe('small helpers', () => {
  test('withTimings records one timing per verify/settle call, including failed ones, and passes results through', async () => {
    const inner = {
      verify: async (_p: unknown, _r: unknown) => ({ isValid: true }),
      settle: async (_p: unknown, _r: unknown): Promise<never> => {
        throw new Error('down');
      },
    };
    const t = withTimings(inner);
    expect(await t.facilitator.verify({} as never, {} as never)).toEqual({ isValid: true });
    await expect(t.facilitator.settle({} as never, {} as never)).rejects.toThrow('down');
    expect(t.timings.map((x) => x.op)).toEqual(['verify', 'settle']);
    for (const x of t.timings) expect(x.ms).toBeGreaterThanOrEqual(0);
  });

  test('the memory charge log keeps records in order', () => {
    const log = createMemoryChargeLog();
    const r = { time: 1, route: '/api/x402/places', price: '0.002', amount: '2000', asset: '0xa', network: 'eip155:1', payer: '0xb', payTo: '0xc', transaction: '0xd', nonce: '0xe' };
    log.record(r);
    log.record({ ...r, time: 2 });
    expect(log.records.map((x) => x.time)).toEqual([1, 2]);
  });

  test('the file charge log appends one JSON line per charge to a 0600 file, across reopenings, and refuses after close', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-search-charges-'));
    try {
      const path = join(dir, 'nested', 'charges.jsonl');
      const r = { time: 1, route: '/api/x402/places', price: '0.002', amount: '2000', asset: '0xa', network: 'eip155:1', payer: '0xb', payTo: '0xc', transaction: '0xd', nonce: '0xe' };
      const first = createFileChargeLog(path);
      first.record(r);
      first.close();
      expect(() => first.record(r)).toThrow(/closed/);
      const second = createFileChargeLog(path);
      second.record({ ...r, time: 2, transaction: '0xf' });
      second.close();
      const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { time: number; transaction: string });
      expect(lines.map((l) => [l.time, l.transaction])).toEqual([[1, '0xd'], [2, '0xf']]);
      expect(statSync(path).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
