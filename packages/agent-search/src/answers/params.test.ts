import { describe, expect, it } from 'vitest';
import { ParamError, QueryReader } from './params.js';

const reader = (q: string, allowed = ['a', 'b', 'n', 'f', 'm', 'near']) => new QueryReader(new URLSearchParams(q), allowed);

function field(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ParamError) return `${e.code}:${e.field}`;
    throw e;
  }
  return 'no error';
}

describe('QueryReader', () => {
  it('refuses unknown and repeated parameters before anything else', () => {
    expect(field(() => reader('zz=1'))).toBe('unknown_parameter:zz');
    expect(field(() => reader('a=1&a=2'))).toBe('duplicate_parameter:a');
  });

  it('integers: plain digits in range, default when absent, required otherwise', () => {
    expect(reader('n=7').int('n', 1, 10)).toBe(7);
    expect(reader('').int('n', 1, 10, 3)).toBe(3);
    for (const bad of ['0', '11', '-1', '1.0', '07', '1e1', ' 5', '', 'x']) {
      expect(field(() => reader(`n=${encodeURIComponent(bad)}`).int('n', 1, 10)), bad).toBe('invalid_parameter:n');
    }
    expect(field(() => reader('').int('n', 1, 10))).toBe('missing_parameter:n');
  });

  it('flags are exactly 1 or 0', () => {
    expect(reader('f=1').flag('f')).toBe(true);
    expect(reader('f=0').flag('f')).toBe(false);
    expect(reader('').flag('f')).toBe(false);
    for (const bad of ['true', 'yes', '', '2']) expect(field(() => reader(`f=${bad}`).flag('f'))).toBe('invalid_parameter:f');
  });

  it('lat,lon in range', () => {
    expect(reader('near=-33.9,151.2').latLon('near', true)).toEqual({ lat: -33.9, lon: 151.2 });
    expect(reader('near=90,-180').latLon('near', true)).toEqual({ lat: 90, lon: -180 });
    for (const bad of ['90.0001,0', '0,180.5', '1', '1;2', 'a,b', '1,2,3', ',']) {
      expect(field(() => reader(`near=${encodeURIComponent(bad)}`).latLon('near', true)), bad).toBe('invalid_parameter:near');
    }
    expect(field(() => reader('').latLon('near', true))).toBe('missing_parameter:near');
  });

  it('text trims, treats empty as absent, and caps length', () => {
    expect(reader('a=%20hi%20').text('a', 5)).toBe('hi');
    expect(reader('a=').text('a', 5)).toBeUndefined();
    expect(field(() => reader('a=').text('a', 5, true))).toBe('missing_parameter:a');
    expect(field(() => reader('a=abcdef').text('a', 5))).toBe('invalid_parameter:a');
    // Five emoji are five characters (ten UTF-16 units).
    expect(reader(`a=${encodeURIComponent('😀'.repeat(5))}`).text('a', 5)).toBe('😀'.repeat(5));
  });

  it('oneOf and cents', () => {
    expect(reader('m=x').oneOf('m', ['x', 'y'])).toBe('x');
    expect(field(() => reader('m=z').oneOf('m', ['x', 'y']))).toBe('invalid_parameter:m');
    expect(reader('b=10.5').cents('b')).toBe(1050n);
    expect(field(() => reader('b=10.555').cents('b'))).toBe('invalid_parameter:b');
  });
});
