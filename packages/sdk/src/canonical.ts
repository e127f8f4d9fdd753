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
  return write(value, '', 0, new Set());
}

function fail(path: string, message: string): never {
  throw new ValidationError('json', [{ path, message }]);
}

function write(value: unknown, path: string, depth: number, seen: Set<object>): string {
  if (depth > MAX_CANONICAL_DEPTH) fail(path, `nesting deeper than ${MAX_CANONICAL_DEPTH}`);
  switch (typeof value) {
    case 'string':
      return quote(value, path);
    case 'number':
      if (!Number.isFinite(value)) fail(path, `number ${String(value)} is not valid JSON`);
      // ECMAScript Number::toString is exactly the RFC 8785 number form; -0 becomes "0".
      return Object.is(value, -0) ? '0' : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (seen.has(value)) fail(path, 'cyclic structure');
      seen.add(value);
      let out: string;
      if (Array.isArray(value)) {
        const parts: string[] = [];
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          const itemPath = join(path, String(i));
          if (item === undefined) fail(itemPath, 'undefined is not valid JSON');
          parts.push(write(item, itemPath, depth + 1, seen));
        }
        out = `[${parts.join(',')}]`;
      } else {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          fail(path, `${proto?.constructor?.name ?? 'object'} is not a plain JSON object`);
        }
        const record = value as Record<string, unknown>;
        // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 requires.
        const keys = Object.keys(record)
          .filter((k) => record[k] !== undefined)
          .sort();
        const parts = keys.map(
          (k) => `${quote(k, path)}:${write(record[k], join(path, k), depth + 1, seen)}`,
        );
        out = `{${parts.join(',')}}`;
      }
      seen.delete(value);
      return out;
    }
    case 'bigint':
      return fail(path, 'bigint is not JSON; carry amounts as decimal strings');
    default:
      return fail(path, `${typeof value} is not valid JSON`);
  }
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function quote(text: string, path: string): string {
  if (LONE_SURROGATE.test(text)) fail(path, 'string contains a lone surrogate (not I-JSON)');
  // JSON.stringify on a well-formed string emits exactly the RFC 8785 §3.2.2.2 escapes.
  return JSON.stringify(text);
}
