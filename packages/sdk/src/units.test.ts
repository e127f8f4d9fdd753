import { describe, expect, it } from 'vitest';
import { formatUnits } from './units.js';

describe('formatUnits', () => {
  it('writes minor units exactly, without trailing zeros', () => {
    expect(formatUnits('0', 6)).toBe('0');
    expect(formatUnits('1000000', 6)).toBe('1');
    expect(formatUnits('1', 6)).toBe('0.000001');
    expect(formatUnits('1250', 2)).toBe('12.5');
    expect(formatUnits('123', 0)).toBe('123');
    expect(formatUnits(1500000n, 6)).toBe('1.5');
    expect(formatUnits('007', 0)).toBe('7');
    expect(formatUnits('0070', 1)).toBe('7');
  });

  it('keeps every digit of amounts no float can hold', () => {
    const big = '123456789012345678901234567890123456789';
    expect(formatUnits(big, 18)).toBe('123456789012345678901.234567890123456789');
    expect(formatUnits(`${big}000`, 21)).toBe('123456789012345678901.234567890123456789');
  });

  it('round-trips: the decimal times 10^decimals is the amount', () => {
    for (const [amount, decimals] of [['1', 0], ['10', 1], ['99999', 3], ['100000000000000000001', 18], ['5', 30]] as const) {
      const [whole, frac = ''] = formatUnits(amount, decimals).split('.');
      expect(BigInt(whole + frac.padEnd(decimals, '0'))).toBe(BigInt(amount));
    }
  });

  it('refuses what is not a non-negative integer, and bad decimals', () => {
    for (const bad of ['', '-1', '1.5', '1e3', ' 1', '0x10']) expect(() => formatUnits(bad, 2)).toThrow(RangeError);
    expect(() => formatUnits(-1n, 2)).toThrow(RangeError);
    for (const d of [-1, 1.5, 256, Number.NaN]) expect(() => formatUnits('1', d)).toThrow(RangeError);
  });
});
