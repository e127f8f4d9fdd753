import { describe, expect, it } from 'vitest';
import { bearerToken, RateLimiter, secretMatches } from './auth.js';

describe('secretMatches (constant time: both sides hashed, then timingSafeEqual)', () => {
  it('matches only the exact secret', () => {
    expect(secretMatches('s3cret-token', 's3cret-token')).toBe(true);
    expect(secretMatches('s3cret-tokem', 's3cret-token')).toBe(false);
    expect(secretMatches('s3cret', 's3cret-token')).toBe(false);
    expect(secretMatches('', 'x')).toBe(false);
    expect(secretMatches(undefined, 'x')).toBe(false);
    expect(secretMatches(null, 'x')).toBe(false);
    expect(secretMatches('x'.repeat(5000), 'x'.repeat(5000))).toBe(false);
  });
});

describe('bearerToken', () => {
  it('extracts a well-formed token only', () => {
    expect(bearerToken('Bearer abc_DEF-123')).toBe('abc_DEF-123');
    expect(bearerToken('  Bearer abc  ')).toBe('abc');
    expect(bearerToken('bearer abc')).toBeNull();
    expect(bearerToken('Basic abc')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
    expect(bearerToken(undefined)).toBeNull();
    expect(bearerToken(`Bearer ${'a'.repeat(600)}`)).toBeNull();
  });
});

describe('RateLimiter', () => {
  it('allows max attempts per window per key, then resets', () => {
    let t = 1000;
    const rl = new RateLimiter(3, 60, () => t);
    expect([rl.attempt('a'), rl.attempt('a'), rl.attempt('a'), rl.attempt('a')]).toEqual([true, true, true, false]);
    expect(rl.attempt('b')).toBe(true);
    t += 60;
    expect(rl.attempt('a')).toBe(true);
  });
  it('prunes old keys when many are tracked', () => {
    let t = 0;
    const rl = new RateLimiter(1, 10, () => t);
    for (let i = 0; i < 10_001; i++) rl.attempt(`k${i}`);
    t = 20;
    expect(rl.attempt('fresh')).toBe(true);
    for (let i = 0; i < 10_001; i++) rl.attempt(`j${i}`);
    expect(rl.attempt('k1')).toBe(true);
  });
  it('uses the wall clock by default', () => {
    const rl = new RateLimiter(1, 60);
    expect(rl.attempt('x')).toBe(true);
    expect(rl.attempt('x')).toBe(false);
  });
});
