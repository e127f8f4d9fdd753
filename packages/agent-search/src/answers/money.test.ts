import { describe, expect, it } from 'vitest';
import { centsOf, formatCents, isDecimal, toCents } from './money.js';

describe('money in integer cents', () => {
  it('parses decimal strings exactly', () => {
    expect(toCents('0')).toBe(0n);
    expect(toCents('12')).toBe(1200n);
    expect(toCents('12.5')).toBe(1250n);
    expect(toCents('12.05')).toBe(1205n);
    expect(toCents('0.01')).toBe(1n);
    expect(toCents('999999999999.99')).toBe(99999999999999n);
  });

  it('refuses anything that is not a plain non-negative decimal with at most two fraction digits', () => {
    for (const s of ['', '-1', '+1', '1.', '.5', '1.234', '01', '1e3', '1,00', ' 1', 'NaN', 'Infinity', '0x10', '1000000000000']) {
      expect(toCents(s), s).toBeUndefined();
      expect(isDecimal(s), s).toBe(false);
    }
    expect(() => centsOf('1.999', 'ticket adult')).toThrow(/ticket adult: "1.999"/);
  });

  it('formats with exactly two fraction digits, and where floats would drift it does not', () => {
    expect(formatCents(0n)).toBe('0.00');
    expect(formatCents(5n)).toBe('0.05');
    expect(formatCents(123456n)).toBe('1234.56');
    expect(formatCents(-250n)).toBe('-2.50');
    // 0.1 + 0.2 in floats is 0.30000000000000004; in cents it is exact.
    expect(formatCents((toCents('0.1') as bigint) + (toCents('0.2') as bigint))).toBe('0.30');
    expect(formatCents((toCents('109.50') as bigint) * 3n)).toBe('328.50');
  });
});
