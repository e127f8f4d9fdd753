/**
 * @module canonical
 * RFC 8785 JSON Canonicalization Scheme (JCS). Every hash in the toolkit is over these bytes.
 */
import { ValidationError } from './errors.js';

/** Deepest nesting accepted; wire objects are a few levels deep, this bounds hostile input. */
export const MAX_CANONICAL_DEPTH = 64;

/**
 * Serialises a JSON value per RFC 8785: object members sorted by their UTF-16 code units,
 * no whitespace, numbers in ECMAScript shortest form, strings with the minimal JSON escapes.
 * Properties whose value is `undefined` are omitted (as in JSON.stringify). Anything that is not
 * I-JSON — a non-finite number, a bigint, a lone surrogate, a Date, a Map, a class instance,
 * `undefined` in an array, a cycle — is refused with a ValidationError naming the path.
 *
 * @example
 * canonicalize({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalize(value: unknown): string {
  // Fast path: JSON.stringify emits exactly the RFC 8785 form of a valid value whose objects list
  // their keys in RFC 8785 order (same number form, same escapes for well-formed strings,
  // undefined members omitted alike). canonicalView checks that in one walk and copies, with its
  // members sorted, only the objects that are out of order; the serialising is then native.
  // Anything unusual, including every refusal, takes the writer below, which names the path.
  const view = canonicalView(value, 0);
  if (view !== NOT_CANONICAL) return JSON.stringify(view);
  return write(value, { keys: [], ancestors: [] }, 0);
}

const NOT_CANONICAL: unique symbol = Symbol('not canonical');

/** Sets a member of a plain object; an own "__proto__" member (JSON.parse makes those) stays a member instead of setting a prototype. */
function setMember(out: Record<string, unknown>, k: string, v: unknown): void {
  if (v === undefined) return;
  if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  else out[k] = v;
}

/** An array index used as an object key: objects enumerate such keys first, in numeric order. */
const INDEX_KEY = /^(?:0|[1-9][0-9]{0,9})$/;

/**
 * `value` itself when it is valid I-JSON and JSON.stringify already gives its canonical form; a
 * copy in which every out-of-order object is rebuilt with its members in RFC 8785 order (sharing
 * every subtree that was in order); or NOT_CANONICAL for anything unusual, leaving the verdict
 * and the error to `write` (a cycle runs into the depth bound). An out-of-order object with an
 * index-like key ("2", "10") cannot be mended by copying (every object enumerates "2" before
 * "10"; RFC 8785 puts "10" first), so it goes to the writer too. An object whose keys already
 * enumerate in canonical order is judged by the order they actually enumerate in, so it is
 * judged right.
 */
function canonicalView(value: unknown, depth: number): unknown {
  if (depth > MAX_CANONICAL_DEPTH) return NOT_CANONICAL;
  switch (typeof value) {
    case 'string':
      return wellFormed(value) ? value : NOT_CANONICAL;
    case 'number':
      return Number.isFinite(value) ? value : NOT_CANONICAL;
    case 'boolean':
      return value;
    case 'object': {
      if (value === null) return value;
      if (Array.isArray(value)) {
        let copy: unknown[] | null = null;
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === undefined) return NOT_CANONICAL;
          const view = canonicalView(item, depth + 1);
          if (view === NOT_CANONICAL) return NOT_CANONICAL;
          if (view !== item) (copy ??= value.slice())[i] = view;
        }
        return copy ?? value;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return NOT_CANONICAL;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      let inOrder = true;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        if (!wellFormed(k)) return NOT_CANONICAL;
        if (i > 0 && !((keys[i - 1] as string) < k)) inOrder = false;
      }
      if (!inOrder) {
        if (keys.some((k) => INDEX_KEY.test(k))) return NOT_CANONICAL;
        keys.sort(); // UTF-16 code unit order, as RFC 8785 §3.2.3 requires
      }
      // The copy, made as soon as it is known to be needed: at once for an out-of-order object,
      // at the first member whose own view is a copy for one in order.
      let out: Record<string, unknown> | null = inOrder ? null : {};
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        const member = record[k];
        if (member === undefined) continue;
        const view = canonicalView(member, depth + 1);
        if (view === NOT_CANONICAL) return NOT_CANONICAL;
        if (out === null && view !== member) {
          out = {};
          for (let j = 0; j < i; j++) setMember(out, keys[j] as string, record[keys[j] as string]);
        }
        if (out !== null) setMember(out, k, view);
      }
      return out ?? value;
    }
    default:
      return NOT_CANONICAL;
  }
}

/**
 * The walk's position: `keys[i]` is the member name or index leading to the value at depth i + 1,
 * `ancestors[i]` the container at depth i. Paths are built only when something is refused, so the
 * common case allocates no path strings.
 */
interface Walk {
  keys: string[];
  ancestors: object[];
}

function fail(path: string, message: string): never {
  throw new ValidationError('json', [{ path, message }]);
}

function pathAt(walk: Walk, depth: number): string {
  return walk.keys.slice(0, depth).join('.');
}

function write(value: unknown, walk: Walk, depth: number): string {
  if (depth > MAX_CANONICAL_DEPTH) fail(pathAt(walk, depth), `nesting deeper than ${MAX_CANONICAL_DEPTH}`);
  switch (typeof value) {
    case 'string':
      return quote(value, walk, depth);
    case 'number':
      if (!Number.isFinite(value)) fail(pathAt(walk, depth), `number ${String(value)} is not valid JSON`);
      // ECMAScript Number::toString is exactly the RFC 8785 number form; -0 becomes "0".
      return Object.is(value, -0) ? '0' : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      // A cycle is an object among its own ancestors (at most MAX_CANONICAL_DEPTH of them).
      for (let i = 0; i < depth; i++) if (walk.ancestors[i] === value) fail(pathAt(walk, depth), 'cyclic structure');
      walk.ancestors[depth] = value;
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          walk.keys[depth] = String(i);
          if (item === undefined) fail(pathAt(walk, depth + 1), 'undefined is not valid JSON');
          out += i === 0 ? write(item, walk, depth + 1) : `,${write(item, walk, depth + 1)}`;
        }
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        fail(pathAt(walk, depth), `${proto?.constructor?.name ?? 'object'} is not a plain JSON object`);
      }
      const record = value as Record<string, unknown>;
      // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 requires.
      const keys = Object.keys(record).sort();
      let out = '{';
      let first = true;
      for (const k of keys) {
        const member = record[k];
        if (member === undefined) continue;
        const name = quote(k, walk, depth);
        walk.keys[depth] = k;
        out += `${first ? '' : ','}${name}:${write(member, walk, depth + 1)}`;
        first = false;
      }
      return `${out}}`;
    }
    case 'bigint':
      return fail(pathAt(walk, depth), 'bigint is not JSON; carry amounts as decimal strings');
    default:
      return fail(pathAt(walk, depth), `${typeof value} is not valid JSON`);
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** String.prototype.isWellFormed (ES2024, in Node 20+); the regular expression where it is missing. */
const wellFormed: (text: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (text) => (text as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (text) => !LONE_SURROGATE.test(text);

function quote(text: string, walk: Walk, depth: number): string {
  if (!wellFormed(text)) fail(pathAt(walk, depth), 'string contains a lone surrogate (not I-JSON)');
  // JSON.stringify on a well-formed string emits exactly the RFC 8785 §3.2.2.2 escapes.
  return JSON.stringify(text);
}
