import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeDestination } from './destination.js';
import { intentId, normalizeIntent } from './digest.js';
import type { AddressCheck, ValidateAddressInput } from './driver/types.js';
import { ValidationError } from './errors.js';
import { createMemoryDriver } from './testing/memory-driver.js';
import { MemoryLedger } from './testing/memory-ledger.js';

const ledger = new MemoryLedger({ chain: 'memory:devnet' });
const memory = createMemoryDriver({ ledger });
const CHAIN = 'memory:devnet';
const DEST = `mem1${'ab'.repeat(20)}`;

/**
 * The memory driver with a canonical form, as an EVM driver has one (EIP-55): it takes its
 * addresses in either case and writes them in lowercase.
 */
const caseless = {
  validateAddress({ chain, address }: ValidateAddressInput): AddressCheck {
    const lower = /^mem1[0-9a-fA-F]{40}$/.test(address) ? `mem1${address.slice(4).toLowerCase()}` : address;
    return memory.validateAddress({ chain, address: lower });
  },
};

/**
 * The memory driver with addresses that say their network, as an XRPL X-address does: `mem1f…`
 * belongs to memory:faraway. Valid on every memory chain by format; of one network by encoding.
 */
const FARAWAY = 'memory:faraway';
const FOREIGN = `mem1f${'cd'.repeat(19)}c`;
const tagged = {
  validateAddress: ({ chain, address }: ValidateAddressInput): AddressCheck => {
    const check = memory.validateAddress({ chain, address });
    return check.valid ? { ...check, network: address.startsWith('mem1f') ? FARAWAY : null } : check;
  },
};

const intent = (destination: string, extra: Record<string, unknown> = {}) => normalizeIntent({ wallet: 'w', destination, amount: '1', ...extra });

function refusal(f: () => unknown): ValidationError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return e as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('normalizeDestination', () => {
  it('returns the very intent when the destination is already in its one form (no copy, no second validation)', () => {
    const i = intent(DEST);
    expect(normalizeDestination(i, memory, CHAIN)).toBe(i);
  });

  it.each([['abc'], ['mem1'], [`mem1${'AB'.repeat(20)}`], [`mem2${'ab'.repeat(20)}`], [`mem1${'ab'.repeat(20)}0`]])(
    'attack: %j is not a destination on the wallet\'s chain: refused naming destination',
    (d) => {
      const e = refusal(() => normalizeDestination(intent(d), memory, CHAIN));
      expect(e.path).toBe('destination');
      expect(e.code).toBe(4000);
    },
  );

  it('attack: an address of another network by its own encoding (an X-address of mainnet on a testnet wallet) is refused at creation, naming destination and both networks', () => {
    expect(tagged.validateAddress({ chain: CHAIN, address: FOREIGN }).valid).toBe(true); // well-formed: only its network is wrong
    const e = refusal(() => normalizeDestination(intent(FOREIGN), tagged, CHAIN));
    expect(e.path).toBe('destination');
    expect(e.issues[0]?.message).toBe(`${FOREIGN} belongs to ${FARAWAY}, but the wallet is on ${CHAIN}`);
    // An address that names no network is judged by its format alone.
    expect(normalizeDestination(intent(DEST), tagged, CHAIN).destination).toBe(DEST);
  });

  it('attack: an asset_issuer of another network is refused at creation, naming asset_issuer', () => {
    const e = refusal(() => normalizeDestination(intent(DEST, { asset_issuer: FOREIGN }), tagged, CHAIN));
    expect(e.path).toBe('asset_issuer');
    expect(e.issues[0]?.message).toContain(`belongs to ${FARAWAY}`);
  });

  it('a chain the driver does not serve is refused, not waved through', () => {
    expect(refusal(() => normalizeDestination(intent(DEST), memory, 'memory:other')).path).toBe('destination');
  });

  it('every operation needs an address of the chain, mpt_create and account_flags included (the network_separation guard demands it at execution)', () => {
    for (const operation of [{ op: 'mpt_create', asset_scale: 0, flags: 0 }, { op: 'account_flags', set: 8 }, { op: 'authorize_holder' }, { op: 'clawback' }]) {
      expect(normalizeDestination(intent(DEST, { operation }), memory, CHAIN).destination).toBe(DEST);
      expect(refusal(() => normalizeDestination(intent('the wallet', { operation }), memory, CHAIN)).path).toBe('destination');
    }
  });

  it('property: one address is one intent, however its letters are cased', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), (bytes, upper) => {
        const canonical = `mem1${Buffer.from(bytes).toString('hex')}`;
        const spelled = `mem1${[...canonical.slice(4)].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')}`;
        const a = normalizeDestination(intent(spelled), caseless, CHAIN);
        expect(a.destination).toBe(canonical);
        expect(intentId(a)).toBe(intentId(normalizeDestination(intent(canonical), caseless, CHAIN)));
        // idempotent: the signer, normalising what the control plane stored, computes the same id
        expect(normalizeDestination(a, caseless, CHAIN)).toBe(a);
      }),
      { numRuns: 300 },
    );
  });

  it('asset_issuer is written in the chain\'s form when it is an address, and left to the driver when it is not', () => {
    const upper = `mem1${'CD'.repeat(20)}`;
    expect(normalizeDestination(intent(DEST, { asset_issuer: upper }), caseless, CHAIN).asset_issuer).toBe(`mem1${'cd'.repeat(20)}`);
    // CODE:ISSUER (Stellar), ACCOUNT.CODE (XRPL), an MPT id: not addresses, the driver's build checks them
    expect(normalizeDestination(intent(DEST, { asset_issuer: 'USD:GISSUER' }), caseless, CHAIN).asset_issuer).toBe('USD:GISSUER');
  });

  it('the normalised intent is a validated intent: normalising it again is a no-op and its members keep their order', () => {
    const i = intent(`mem1${'EF'.repeat(20)}`, { memo: 'm', asset_symbol: 'X' });
    const n = normalizeDestination(i, caseless, CHAIN);
    expect(normalizeIntent(n)).toBe(n);
    expect(Object.keys(n)).toEqual(Object.keys(i));
    expect(Object.isFrozen(n)).toBe(true);
  });
});
