import { describe, expect, it } from 'vitest';
import { canonicalize, MAX_CANONICAL_DEPTH } from './canonical.js';
import { ValidationError } from './errors.js';

function fromIeeeHex(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('canonicalize (RFC 8785)', () => {
  it('RFC 8785 §3.2.2 serialization example', () => {
    const input = JSON.parse(String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`);
    expect(canonicalize(input)).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('RFC 8785 §3.2.3 sorts members by UTF-16 code units', () => {
    const input = JSON.parse(String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`);
    const out = canonicalize(input);
    const order = ['\r', '1', '\u0080', 'ö', '€', '😀', '\ufb33'].map((k) => JSON.stringify(k));
    const positions = order.map((k) => out.indexOf(`${k}:`));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  // RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('RFC 8785 Appendix B number %s -> %s', (hex, text) => {
    expect(canonicalize(fromIeeeHex(hex))).toBe(text);
  });

  it.each([
    ['7fffffffffffffff', 'NaN'],
    ['7ff0000000000000', 'Infinity'],
  ])('RFC 8785 Appendix B refuses %s (%s)', (hex) => {
    expect(() => canonicalize(fromIeeeHex(hex))).toThrow(ValidationError);
  });

  it('drops undefined members and keeps array order', () => {
    expect(canonicalize({ b: [3, 1, 2], a: undefined, c: { z: 1, y: null } })).toBe('{"b":[3,1,2],"c":{"y":null,"z":1}}');
  });

  it('keeps amounts past 2^64 exact because they travel as strings', () => {
    const amount = (2n ** 200n + 1n).toString();
    const text = canonicalize({ amount });
    expect(BigInt(JSON.parse(text).amount)).toBe(2n ** 200n + 1n);
  });

  it.each([
    ['a bigint', { a: 1n }, 'a'],
    ['undefined in an array', [1, undefined], '1'],
    ['a Date', { when: new Date(0) }, 'when'],
    ['a Map', { m: new Map() }, 'm'],
    ['a function', { f: () => 1 }, 'f'],
    ['a lone high surrogate', { s: 'a\ud800b' }, 's'],
    ['a lone low surrogate', { s: '\udc00' }, 's'],
    ['a lone surrogate in a key', { ['\ud800']: 1 }, ''],
    ['a symbol', { s: Symbol('x') }, 's'],
  ])('refuses %s, naming the path', (_what, value, path) => {
    try {
      canonicalize(value);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).path).toBe(path);
    }
  });

  it('refuses cycles and excessive depth instead of overflowing the stack', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => canonicalize(cyclic)).toThrow(/cyclic/);
    let deep: unknown = 1;
    for (let i = 0; i <= MAX_CANONICAL_DEPTH + 1; i++) deep = [deep];
    expect(() => canonicalize(deep)).toThrow(/nesting/);
  });

  it('accepts the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('accepts null-prototype objects', () => {
    const o = Object.create(null) as Record<string, number>;
    o['b'] = 2;
    o['a'] = 1;
    expect(canonicalize(o)).toBe('{"a":1,"b":2}');
  });

  it('equals a naive reference (sorted keys + JSON.stringify) on 3,000 random JSON trees', () => {
    // xorshift32, seeded: the same trees on every run.
    let x = 0x9e3779b9;
    const rnd = (n: number) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    const ALPHABET = ['a', 'b', 'Z', '0', ' ', '"', '\\', '\n', '\u0001', '\u007f', 'é', '€', '\u2028', '😀', '\ufeff'];
    const str = () => Array.from({ length: rnd(6) }, () => ALPHABET[rnd(ALPHABET.length)]).join('');
    const num = () => [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789.125, -(2 ** 53), Number.MIN_VALUE, Number.MAX_VALUE][rnd(11)] as number;
    const tree = (depth: number): unknown => {
      const kind = depth > 4 ? rnd(4) : rnd(7);
      if (kind === 0) return str();
      if (kind === 1) return num();
      if (kind === 2) return rnd(2) === 0;
      if (kind === 3) return null;
      if (kind === 4) return Array.from({ length: rnd(4) }, () => tree(depth + 1));
      const o: Record<string, unknown> = {};
      // The "k" prefix keeps keys from looking like array indices, which objects enumerate first.
      for (let i = rnd(5); i > 0; i--) o[`k${str()}`] = rnd(8) === 0 ? undefined : tree(depth + 1);
      return o;
    };
    const sortDeep = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(sortDeep);
      if (v !== null && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        return Object.fromEntries(Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => [k, sortDeep(o[k])]));
      }
      return v;
    };
    for (let i = 0; i < 3000; i++) {
      const v = tree(0);
      expect(canonicalize(v)).toBe(JSON.stringify(sortDeep(v)));
      // The same tree with every object already in key order takes the JSON.stringify fast path.
      expect(canonicalize(sortDeep(v))).toBe(JSON.stringify(sortDeep(v)));
    }
  });

  it.each([
    ['index-like keys, which objects enumerate first in numeric order', { '10': 1, '2': 2, a: 3 }, '{"10":1,"2":2,"a":3}'],
    ['index-like keys already in both orders', { '1': 'x', '2': 'y' }, '{"1":"x","2":"y"}'],
    ['sorted keys with an undefined member', { a: 1, b: undefined, c: [null, -0] }, '{"a":1,"c":[null,0]}'],
    ['a duplicate-looking pair that differs only in case', { B: 1, a: 2 }, '{"B":1,"a":2}'],
    ['keys past the BMP against keys above U+E000 (UTF-16, not code points)', { '\ue000': 1, '😀': 2 }, '{"😀":2,"\ue000":1}'],
    ['an own "__proto__" member in an out-of-order object (copied as a member)', JSON.parse('{"b":1,"__proto__":{"y":2,"x":1}}') as unknown, '{"__proto__":{"x":1,"y":2},"b":1}'],
    ['an in-order object whose later member is out of order (copied from the start)', { a: 1, b: undefined, c: { e: [1], d: 2 }, f: 'x' }, '{"a":1,"c":{"d":2,"e":[1]},"f":"x"}'],
    ['an array whose second item is out of order', [{ a: 1 }, { c: 1, b: [{ z: 0, y: 1 }] }, 'x'], '[{"a":1},{"b":[{"y":1,"z":0}],"c":1},"x"]'],
    ['an out-of-order object with an undefined member', { b: undefined, a: 1 }, '{"a":1}'],
  ])('fast and slow paths agree on %s', (_what, value, expected) => {
    expect(canonicalize(value)).toBe(expected);
  });

  it('never reorders or otherwise changes the value it is given', () => {
    const value = { b: [{ d: 1, c: 2 }], a: { f: 1, e: undefined } };
    const before = JSON.stringify(value);
    expect(canonicalize(value)).toBe('{"a":{"f":1},"b":[{"c":2,"d":1}]}');
    expect(JSON.stringify(value)).toBe(before);
    expect(Object.keys(value)).toEqual(['b', 'a']);
  });

  it('refuses on the fast path exactly what the writer refuses (sorted objects, bad leaves)', () => {
    expect(() => canonicalize({ a: 1, b: 2n })).toThrow(/bigint/);
    expect(() => canonicalize({ a: [1, undefined] })).toThrow(/undefined/);
    expect(() => canonicalize({ a: NaN })).toThrow(/not valid JSON/);
    expect(() => canonicalize({ a: 'x', b: '\ud800' })).toThrow(/lone surrogate/);
    expect(() => canonicalize({ a: { toJSON: () => 'forged' } })).toThrow(/function/);
    const sortedCycle: Record<string, unknown> = { a: 1 };
    sortedCycle['b'] = sortedCycle;
    expect(() => canonicalize(sortedCycle)).toThrow(/cyclic/);
  });
});
