/**
 * @module answers/params
 * Strict reading of query parameters. Every refusal is a {@link ParamError} naming the offending
 * parameter, so the caller (and the agent paying for the call) can see exactly what to fix.
 *
 * Rules common to all routes:
 * - A parameter the route does not accept is refused (400, code `unknown_parameter`), not ignored:
 *   a typo such as `adult=2` would otherwise silently give a different answer than was paid for.
 * - A parameter given more than once is refused (`duplicate_parameter`).
 * - Integers are plain decimal digits without sign, exponent or leading zeros.
 */
import { toCents } from './money.js';

export type ParamErrorCode = 'invalid_parameter' | 'missing_parameter' | 'unknown_parameter' | 'duplicate_parameter';

/** A query parameter was missing, malformed or out of range. `field` names it. */
export class ParamError extends Error {
  override readonly name = 'ParamError';
  constructor(
    readonly field: string,
    message: string,
    readonly code: ParamErrorCode = 'invalid_parameter',
  ) {
    super(message);
  }
}

const INT = /^(0|[1-9]\d{0,8})$/;
const COORD = /^-?(0|[1-9]\d{0,2})(\.\d{1,10})?$/;

/** Reads one route's query parameters, having first refused unknown and repeated names. */
export class QueryReader {
  private readonly values = new Map<string, string>();

  constructor(params: URLSearchParams, allowed: readonly string[], hint?: (name: string) => string | undefined) {
    for (const [name, value] of params) {
      if (!allowed.includes(name)) {
        const extra = hint?.(name);
        throw new ParamError(
          name,
          `unknown parameter "${name}"; accepted: ${allowed.join(', ')}${extra ? ` (${extra})` : ''}`,
          'unknown_parameter',
        );
      }
      if (this.values.has(name)) throw new ParamError(name, `${name} is given more than once`, 'duplicate_parameter');
      this.values.set(name, value);
    }
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  /** Raw value, or undefined when absent. */
  raw(name: string): string | undefined {
    return this.values.get(name);
  }

  /** Free text, trimmed; an empty value counts as absent. */
  text(name: string, maxLength: number, required = false): string | undefined {
    const v = this.values.get(name)?.trim();
    if (v === undefined || v === '') {
      if (required) throw new ParamError(name, `${name} is required`, 'missing_parameter');
      return undefined;
    }
    // Count code points, as JSON Schema maxLength does, so an emoji counts once.
    const n = [...v].length;
    if (n > maxLength) throw new ParamError(name, `${name} must be at most ${maxLength} characters (got ${n})`);
    return v;
  }

  /** An integer in [min, max]; `dflt` when absent, or a refusal when there is no default. */
  int(name: string, min: number, max: number, dflt?: number): number {
    const v = this.values.get(name);
    if (v === undefined) {
      if (dflt === undefined) throw new ParamError(name, `${name} is required: an integer ${min}..${max}`, 'missing_parameter');
      return dflt;
    }
    if (!INT.test(v)) throw new ParamError(name, `${name} must be an integer ${min}..${max} (got "${v}")`);
    const n = Number(v);
    if (n < min || n > max) throw new ParamError(name, `${name} must be an integer ${min}..${max} (got ${n})`);
    return n;
  }

  /** "1" → true, "0" or absent → false; anything else is refused. */
  flag(name: string): boolean {
    const v = this.values.get(name);
    if (v === undefined || v === '0') return false;
    if (v === '1') return true;
    throw new ParamError(name, `${name} must be 1 or 0 (got "${v}")`);
  }

  /** One of a closed set of words; `dflt` when absent (or a refusal when there is none). */
  oneOf<T extends string>(name: string, values: readonly T[], dflt?: T): T {
    const v = this.values.get(name);
    if (v === undefined) {
      if (dflt === undefined) throw new ParamError(name, `${name} is required: one of ${values.join(', ')}`, 'missing_parameter');
      return dflt;
    }
    if (!(values as readonly string[]).includes(v)) {
      throw new ParamError(name, `${name} must be one of ${values.join(', ')} (got "${v}")`);
    }
    return v as T;
  }

  /** A non-negative decimal amount with at most two fraction digits, as integer cents. */
  cents(name: string): bigint | undefined {
    const v = this.values.get(name);
    if (v === undefined) return undefined;
    const c = toCents(v);
    if (c === undefined) {
      throw new ParamError(name, `${name} must be a decimal amount like 250 or 250.50, at most two fraction digits (got "${v}")`);
    }
    return c;
  }

  /** "lat,lon" in degrees; latitude in [-90, 90], longitude in [-180, 180]. */
  latLon(name: string, required: boolean): { lat: number; lon: number } | undefined {
    const v = this.values.get(name);
    if (v === undefined) {
      if (required) throw new ParamError(name, `${name} is required: "latitude,longitude" in degrees`, 'missing_parameter');
      return undefined;
    }
    const parts = v.split(',').map((s) => s.trim());
    if (parts.length !== 2 || !COORD.test(parts[0] as string) || !COORD.test(parts[1] as string)) {
      throw new ParamError(name, `${name} must be "latitude,longitude" in decimal degrees (got "${v}")`);
    }
    const lat = Number(parts[0]);
    const lon = Number(parts[1]);
    if (lat < -90 || lat > 90) throw new ParamError(name, `${name}: latitude must be within -90..90 (got ${lat})`);
    if (lon < -180 || lon > 180) throw new ParamError(name, `${name}: longitude must be within -180..180 (got ${lon})`);
    return { lat, lon };
  }
}
