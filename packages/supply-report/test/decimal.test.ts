/** Exact decimal arithmetic: exponent notation, differences, no rounding ever. */
import { describe, expect, it } from 'vitest';
import { decimalDelta, formatDecimal, normalizeDecimal, parseDecimal, unitsToDecimal, addDecimal, compareDecimal } from '../src/index.js';

describe('decimal', () => {
  it('normalises exponent notation exactly (rippled writes small IOU values this way)', () => {
    expect(normalizeDecimal('5444166510000000e-26')).toBe('0.000000000054441665100000'.replace(/0+$/, ''));
    expect(normalizeDecimal('8700000000000000e-30')).toBe('0.0000000000000087');
    expect(normalizeDecimal('1.5e3')).toBe('1500');
    expect(normalizeDecimal('1997134.20229482')).toBe('1997134.20229482');
    expect(normalizeDecimal('-0.100')).toBe('-0.1');
    expect(normalizeDecimal('0E+10')).toBe('0');
  });
  it('differences are exact, beyond float precision', () => {
    expect(decimalDelta('9007199254740993.0000001', '9007199254740993.0000002')).toBe('+0.0000001');
    expect(decimalDelta('100', '99.5')).toBe('-0.5');
    expect(decimalDelta('1e-30', '1e-30')).toBe('0');
    expect(formatDecimal(addDecimal(parseDecimal('0.1'), parseDecimal('0.2')))).toBe('0.3');
    expect(compareDecimal(parseDecimal('1.10'), parseDecimal('1.1'))).toBe(0);
  });
  it('formats minor units with fixed places and refuses to round', () => {
    expect(unitsToDecimal(1_000_000_123_456n, 6)).toBe('1000000.123456');
    expect(unitsToDecimal(5n, 9)).toBe('0.000000005');
    expect(unitsToDecimal(18446744073709551615n, 0)).toBe('18446744073709551615');
    expect(formatDecimal(parseDecimal('1.5'), 7)).toBe('1.5000000');
    expect(() => formatDecimal(parseDecimal('1.00000001'), 7)).toThrow('without rounding');
  });
  it('refuses anything that is not a decimal', () => {
    for (const bad of ['', 'NaN', '0x10', '1,5', ' 1', '1e', 'Infinity', '1.']) expect(() => parseDecimal(bad, 'obligations.USD')).toThrow(/obligations\.USD: .* is not a decimal number/);
    expect(() => parseDecimal('1e999999')).toThrow('out of range');
  });
});
