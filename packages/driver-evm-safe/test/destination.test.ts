/**
 * Issue #20, finding 7 on an EVM chain: destinations differing only in letter case made different
 * intents for one address. With the driver's normalised form (EIP-55) applied before the id is
 * computed (`normalizeDestination`, called by both services), one address is one intent. No node
 * is needed: validateAddress is pure.
 */
import { randomBytes } from 'node:crypto';
import { intentId, normalizeDestination, normalizeIntent, ValidationError } from '@vault/sdk';
import { getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { createEvmSafeDriver } from '../src/index.js';

const CHAIN = 'eip155:31337';
const driver = createEvmSafeDriver({ chains: { [CHAIN]: { rpcUrl: 'http://127.0.0.1:9' } } });
const intent = (destination: string, extra: Record<string, unknown> = {}) => normalizeIntent({ wallet: 'treasury', destination, amount: '1', ...extra });
const idOf = (destination: string) => intentId(normalizeDestination(intent(destination), driver, CHAIN));

/** A seeded case mask over the 40 hex digits of an address (the 0x stays lowercase). */
function cased(address: string, seed: number): string {
  let x = seed >>> 0 || 1;
  const body = [...address.slice(2)].map((c) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x & 1) === 1 ? c.toUpperCase() : c.toLowerCase();
  });
  return `0x${body.join('')}`;
}

describe('attack: EVM destinations differing only in letter case make different intents for one address', () => {
  it('the lowercase and checksummed spellings of one address are one intent, written in its EIP-55 form', () => {
    const checksummed = getAddress(`0x${randomBytes(20).toString('hex')}`);
    for (const spelling of [checksummed.toLowerCase(), checksummed]) {
      expect(normalizeDestination(intent(spelling), driver, CHAIN).destination).toBe(checksummed);
      expect(idOf(spelling)).toBe(idOf(checksummed));
    }
    // all capitals is not its checksum either (the driver reads it as mixed case): refused, not a second intent
    expect(() => idOf(`0x${checksummed.slice(2).toUpperCase()}`)).toThrow(ValidationError);
  });

  it('property: every case spelling of an address is either refused (a mixed case that is not its checksum) or the checksummed intent', () => {
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const checksummed = getAddress(`0x${randomBytes(20).toString('hex')}`);
      const spelling = cased(checksummed, i + 1);
      try {
        expect(idOf(spelling)).toBe(idOf(checksummed));
      } catch (e) {
        if (!(e instanceof ValidationError)) throw e;
        expect(e.path).toBe('destination');
        expect(spelling).not.toBe(checksummed);
        refused += 1;
      }
    }
    // random masks are almost never the checksum: most are refused, so the property was exercised both ways
    expect(refused).toBeGreaterThan(250);
  });

  it('a mixed-case address with a wrong checksum is refused naming destination (a mistyped address is not guessed at)', () => {
    const checksummed = getAddress(`0x${'ab'.repeat(20)}`);
    const i = [...checksummed].findIndex((c, j) => j > 1 && /[a-fA-F]/.test(c));
    const flipped = checksummed.slice(0, i) + (checksummed[i] === checksummed[i]!.toUpperCase() ? checksummed[i]!.toLowerCase() : checksummed[i]!.toUpperCase()) + checksummed.slice(i + 1);
    try {
      normalizeDestination(intent(flipped), driver, CHAIN);
      expect.unreachable('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).path).toBe('destination');
    }
  });

  it('a token contract given in lowercase as asset_issuer is written in its EIP-55 form too', () => {
    const token = getAddress(`0x${randomBytes(20).toString('hex')}`);
    const n = normalizeDestination(intent(getAddress(`0x${'12'.repeat(20)}`), { asset_issuer: token.toLowerCase(), asset_symbol: 'TOK' }), driver, CHAIN);
    expect(n.asset_issuer).toBe(token);
  });

  it.each([['abc'], ['0x1234'], [`0X${'ab'.repeat(20)}`], [`0x${'ab'.repeat(20)}00`]])('%j is not an EVM destination', (d) => {
    expect(() => normalizeDestination(intent(d), driver, CHAIN)).toThrow(ValidationError);
  });
});
