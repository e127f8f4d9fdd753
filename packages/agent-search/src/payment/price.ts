/**
 * @module payment/price
 * Prices: the spec's decimal strings (src/routes.ts PRICES) turned into token base units with
 * bigint arithmetic, and the price of one call resolved from its path and `mode`.
 *
 * Money is never a float here: "0.01" at 6 decimals is 10_000n, computed digit by digit.
 */
import { PRICES, SEARCH_MODES, type PaidPath, type SearchMode } from '../routes.js';
import { ConfigError } from './errors.js';

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/**
 * Converts a non-negative decimal string to integer base units of a token with `decimals` decimals.
 * Refuses (ConfigError naming `field`) signs, exponents, spaces, and more fractional digits than the
 * token has, because rounding a price silently would charge a different amount than published.
 *
 * @example
 * decimalToBaseUnits('0.05', 6) // 50000n
 */
export function decimalToBaseUnits(value: string, decimals: number, field = 'price'): bigint {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36) {
    throw new ConfigError('decimals', `must be an integer from 0 to 36, got ${String(decimals)}`);
  }
  const m = typeof value === 'string' ? DECIMAL.exec(value) : null;
  if (!m) throw new ConfigError(field, `must be a decimal string such as "0.05", got ${JSON.stringify(value)}`);
  const whole = m[1] ?? '0';
  const frac = m[2] ?? '';
  if (frac.length > decimals) {
    throw new ConfigError(field, `${value} has ${frac.length} fractional digits; the token has only ${decimals}`);
  }
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

/**
 * Formats base units as a decimal string without trailing zeros ("10000", 6 → "0.01").
 *
 * @example
 * baseUnitsToDecimal(50000n, 6) // "0.05"
 */
export function baseUnitsToDecimal(units: bigint, decimals: number): string {
  if (units < 0n) throw new ConfigError('amount', 'must not be negative');
  const scale = 10n ** BigInt(decimals);
  const whole = units / scale;
  const frac = (units % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return frac.length > 0 ? `${whole}.${frac}` : whole.toString();
}

/** The mode /api/x402/search uses when the caller gives none: the cheapest, so an omission never costs more. */
export const DEFAULT_SEARCH_MODE: SearchMode = 'quick';

export type PriceResolution =
  | { ok: true; path: PaidPath; mode: SearchMode | undefined; price: string }
  | { ok: false; error: { code: 'invalid_parameter'; field: string; message: string } };

/**
 * The price of one call. Only /api/x402/search has a price per `mode`; its mode defaults to quick.
 * A repeated or unknown mode is refused, before any payment is asked, because the price of an
 * ambiguous request is not defined.
 *
 * @example
 * resolvePrice('/api/x402/search', new URLSearchParams('q=x&mode=deep')) // { ok: true, price: '0.05', ... }
 */
export function resolvePrice(path: PaidPath, params: URLSearchParams): PriceResolution {
  const entry = PRICES[path];
  if (typeof entry === 'string') return { ok: true, path, mode: undefined, price: entry };
  const given = params.getAll('mode');
  if (given.length > 1) {
    return { ok: false, error: { code: 'invalid_parameter', field: 'mode', message: 'mode is given more than once' } };
  }
  const raw = given[0];
  if (raw === undefined) return { ok: true, path, mode: DEFAULT_SEARCH_MODE, price: entry[DEFAULT_SEARCH_MODE] };
  if (!(SEARCH_MODES as readonly string[]).includes(raw)) {
    return {
      ok: false,
      error: { code: 'invalid_parameter', field: 'mode', message: `mode must be one of ${SEARCH_MODES.join(', ')}; got ${JSON.stringify(raw.slice(0, 40))}` },
    };
  }
  const mode = raw as SearchMode;
  return { ok: true, path, mode, price: entry[mode] };
}
