import { describe, expect, it } from 'vitest';
import { canonicalize } from './canonical.js';
import { approvalMessage, intentId, normalizeIntent, policyDigest } from './digest.js';
import { ValidationError } from './errors.js';
import { evaluatePolicy } from './policy/index.js';

const AMOUNT_2_128_PLUS_1 = (2n ** 128n + 1n).toString();

describe('normalizeIntent', () => {
  it('fills the defaults and drops absent optionals', () => {
    expect(normalizeIntent({ wallet: 'w', destination: 'd', amount: '1' })).toEqual({
      wallet: 'w',
      destination: 'd',
      amount: '1',
      asset_decimals: 6,
      initiator: 'operator',
      operation: { op: 'transfer' },
    });
  });

  it('is idempotent', () => {
    const once = normalizeIntent({
      wallet: 'w',
      destination: 'd',
      amount: '1',
      tags: [['k', 'v']],
      operation: { op: 'mpt_create', asset_scale: 2, flags: 0x60, maximum_amount: 1000, metadata_hex: 'ABCD', transfer_fee: null },
    });
    expect(normalizeIntent(once)).toEqual(once);
  });

  it('makes equivalent requests identical (null vs absent, number vs string, hex case, empty tags)', () => {
    const a = intentId({
      wallet: 'w', destination: 'd', amount: '5', tags: [],
      operation: { op: 'mpt_create', asset_scale: 0, flags: 2, maximum_amount: 100, metadata_hex: 'AB', transfer_fee: null },
    });
    const b = intentId({
      wallet: 'w', destination: 'd', amount: '5', asset_decimals: 6, initiator: 'operator',
      operation: { op: 'mpt_create', asset_scale: 0, flags: 2, maximum_amount: '100', metadata_hex: 'ab' },
    });
    expect(a).toBe(b);
    expect(intentId({ wallet: 'w', destination: 'd', amount: '5', operation: { op: 'authorize_holder' } })).toBe(
      intentId({ wallet: 'w', destination: 'd', amount: '5', operation: { op: 'authorize_holder', revoke: false } }),
    );
    expect(intentId({ wallet: 'w', destination: 'd', amount: '5', operation: { op: 'contract_call', data_hex: '0xA9059CBB' } })).toBe(
      intentId({ wallet: 'w', destination: 'd', amount: '5', operation: { op: 'contract_call', data_hex: '0xa9059cbb' } }),
    );
    expect(intentId({ wallet: 'w', destination: 'd', amount: '5', operation: { op: 'account_flags', set: 8, clear: null } })).toBe(
      intentId({ wallet: 'w', destination: 'd', amount: '5', operation: { op: 'account_flags', set: 8 } }),
    );
  });

  it('distinguishes requests that differ in any field', () => {
    const base = { wallet: 'w', destination: 'd', amount: '5' };
    const ids = new Set([
      intentId(base),
      intentId({ ...base, amount: '6' }),
      intentId({ ...base, destination: 'e' }),
      intentId({ ...base, memo: '' }),
      intentId({ ...base, initiator: 'agent:x' }),
      intentId({ ...base, asset_decimals: 7 }),
      intentId({ ...base, tags: [['a', 'b']] }),
      intentId({ ...base, operation: { op: 'issue' } }),
    ]);
    expect(ids.size).toBe(8);
  });

  it('rejects malformed requests naming the field', () => {
    expect(() => normalizeIntent({ wallet: 'w', destination: 'd', amount: 5 })).toThrow(/invalid intent\.amount/);
  });
});

describe('member order of what gets hashed', () => {
  // canonicalize is fastest on objects that already enumerate in RFC 8785 order; normalizeIntent
  // and evaluatePolicy build theirs that way. This pins it (a reorder would only cost speed).
  const inOrder = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.every(inOrder);
    if (v === null || typeof v !== 'object') return true;
    const keys = Object.keys(v);
    return keys.every((k, i) => i === 0 || (keys[i - 1] as string) < k) && Object.values(v).every(inOrder);
  };
  it.each([
    { wallet: 'w', destination: 'd', amount: '5' },
    { wallet: 'w', destination: 'd', amount: '5', asset_symbol: 'USD', asset_issuer: 'rI', memo: 'm', tags: [['desk', 't']], initiator: 'agent:1' },
    { wallet: 'w', destination: 'd', amount: '5', operation: { op: 'mpt_create', asset_scale: 2, flags: 0x60, maximum_amount: 1000, metadata_hex: 'AB', transfer_fee: 10 } },
    { wallet: 'w', destination: 'd', amount: '5', operation: { op: 'account_flags', set: 8, clear: 6 } },
    { wallet: 'w', destination: 'd', amount: '5', operation: { op: 'contract_call', data_hex: '0xA9059CBB' } },
    { wallet: 'w', destination: 'd', amount: '5', operation: { op: 'authorize_holder', revoke: true } },
  ])('normalizeIntent(%o) enumerates its members in canonical order', (request) => {
    expect(inOrder(normalizeIntent(request))).toBe(true);
  });
  it('evaluatePolicy returns its Decision in canonical order', () => {
    const decision = evaluatePolicy({ wallet: 'w', version: 1, rules: [{ rule: 'hard_ceiling', max: '10' }] }, { wallet: 'w', destination: 'd', amount: '5' }, { now: 1767225600 });
    expect(Object.keys(decision)).toEqual(['current_weight', 'decision', 'not_before', 'reasons', 'required_weight']);
  });
});

describe('intentId known answers', () => {
  it('hashes the JCS form of the normalised request (amount 2^128+1 round-trips exactly)', () => {
    const request = { wallet: 'treasury', destination: 'rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY', amount: AMOUNT_2_128_PLUS_1 };
    expect(canonicalize(normalizeIntent(request))).toBe(
      `{"amount":"${AMOUNT_2_128_PLUS_1}","asset_decimals":6,"destination":"rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY","initiator":"operator","operation":{"op":"transfer"},"wallet":"treasury"}`,
    );
    // sha256 computed independently with node:crypto over the string above.
    expect(intentId(request)).toBe('int_8932aadd034ae8b7cd0d74a40ab4ac584c00e831b05bd0fb4966c82f08cb2ea6');
    expect(BigInt(normalizeIntent(request).amount)).toBe(2n ** 128n + 1n);
  });

  it('policyDigest is sha256(JCS(PolicySet))', () => {
    const policy = { wallet: 'treasury', version: 1, rules: [{ rule: 'hard_ceiling', max: '1000' }] };
    expect(policyDigest(policy)).toBe('297364249ae85cb9937a9dd1d9c417cffaa30e2c1ba3a5ec294d205bd555ea41');
  });

  it('policyDigest refuses an invalid policy', () => {
    expect(() => policyDigest({ wallet: 'w', version: -1, rules: [] })).toThrow(ValidationError);
  });
});

describe('approvalMessage', () => {
  it('is the domain tag followed by the JCS of exactly the five signed fields', () => {
    const statement = {
      approver_id: 'alice',
      intent: `int_${'a'.repeat(64)}`,
      verdict: 'approve' as const,
      at: 1767225600,
      strong_auth: true,
      // extra fields are not covered
      signature: { curve: 'ed25519', sig: '00' },
    };
    expect(new TextDecoder().decode(approvalMessage(statement))).toBe(
      `vault-approval-v1\n{"approver_id":"alice","at":1767225600,"intent":"int_${'a'.repeat(64)}","strong_auth":true,"verdict":"approve"}`,
    );
  });
});
