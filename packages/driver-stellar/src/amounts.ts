/**
 * @module amounts
 * int64 units <-> Horizon's 7-decimal strings, in bigint only.
 */
import { INT64_MAX, STELLAR_DECIMALS } from './constants.js';

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,7}))?$/;

/** `1234567` -> `'0.1234567'` (the form stellar-base operations take and Horizon prints). */
export function toDecimal(units: bigint): string {
  if (units < 0n) throw new RangeError('negative amount');
  const s = units.toString().padStart(STELLAR_DECIMALS + 1, '0');
  return `${s.slice(0, -STELLAR_DECIMALS)}.${s.slice(-STELLAR_DECIMALS)}`;
}

/** `'10025.7670792'` -> `100257670792n`. Throws on anything that is not a plain non-negative decimal. */
export function fromDecimal(text: string): bigint {
  const m = DECIMAL.exec(text);
  if (!m) throw new RangeError(`not a Stellar amount: ${JSON.stringify(text)}`);
  const frac = (m[2] ?? '').padEnd(STELLAR_DECIMALS, '0');
  const value = BigInt(m[1] as string) * 10n ** BigInt(STELLAR_DECIMALS) + BigInt(frac);
  if (value > INT64_MAX) throw new RangeError(`amount exceeds int64: ${text}`);
  return value;
}

/** Human form without trailing zeros: `10000000n` -> `'1'`. */
export function formatAmount(units: bigint): string {
  const [whole, frac = ''] = toDecimal(units).split('.');
  const trimmed = frac.replace(/0+$/, '');
  return trimmed ? `${whole}.${trimmed}` : (whole as string);
}
