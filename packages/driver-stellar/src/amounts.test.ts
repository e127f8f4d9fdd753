import { describe, expect, it } from 'vitest';
import { formatAmount, fromDecimal, toDecimal } from './amounts.js';

describe('amounts', () => {
  it('round-trips int64 units and Horizon decimals', () => {
    expect(toDecimal(0n)).toBe('0.0000000');
    expect(toDecimal(1234567n)).toBe('0.1234567');
    expect(toDecimal(9223372036854775807n)).toBe('922337203685.4775807');
    expect(fromDecimal('922337203685.4775807')).toBe(9223372036854775807n);
    expect(fromDecimal('10025.7670792')).toBe(100257670792n);
    expect(fromDecimal('5')).toBe(50000000n);
    expect(fromDecimal('0.5')).toBe(5000000n);
    expect(formatAmount(0n)).toBe('0');
    expect(formatAmount(15000000n)).toBe('1.5');
    expect(formatAmount(1n)).toBe('0.0000001');
  });
  it('refuses what is not an amount', () => {
    for (const bad of ['-1', '1.12345678', '01', '', '1e5', '922337203685.4775808']) expect(() => fromDecimal(bad)).toThrow(RangeError);
    expect(() => toDecimal(-1n)).toThrow(RangeError);
  });
});
