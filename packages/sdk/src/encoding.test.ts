import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from './encoding.js';
import { ValidationError } from './errors.js';

/** The byte-at-a-time definitions the Buffer-based helpers must agree with. */
const referenceHex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const referenceBytes = (hex: string) => Uint8Array.from({ length: hex.length / 2 }, (_, i) => Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16));

describe('toHex / fromHex', () => {
  it('agree with the byte-at-a-time definition on random inputs, lengths 0..96', () => {
    for (let n = 0; n <= 96; n++) {
      const bytes = new Uint8Array(randomBytes(n));
      const hex = toHex(bytes);
      expect(hex).toBe(referenceHex(bytes));
      const back = fromHex(hex, 'x', n);
      expect(back).toEqual(referenceBytes(hex));
      expect(back.constructor).toBe(Uint8Array); // a plain Uint8Array, not a Buffer
    }
  });

  it('read only the bytes of a view, not its whole backing buffer', () => {
    const backing = new Uint8Array([0xaa, 0x01, 0x02, 0xbb]);
    expect(toHex(backing.subarray(1, 3))).toBe('0102');
  });

  it.each([
    ['odd length', 'abc'],
    ['uppercase', 'AB'],
    ['a non-hex digit', '0g'],
    ['a digit after valid ones (Buffer would stop early)', '00zz'],
    ['whitespace', '00 1'],
  ])('fromHex refuses %s, naming the field', (_, hex) => {
    expect(() => fromHex(hex, 'signature.sig')).toThrow(ValidationError);
    expect(() => fromHex(hex, 'signature.sig')).toThrow(/signature\.sig/);
  });

  it('fromHex refuses a wrong byte length and a non-string', () => {
    expect(() => fromHex('00', 'key', 32)).toThrow(/expected 32 bytes/);
    expect(() => fromHex(7, 'key')).toThrow(/expected a hex string/);
  });
});
