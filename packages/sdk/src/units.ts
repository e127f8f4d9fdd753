/**
 * @module units
 * Integer minor units as a decimal a human reads: the one formatter the signer's summaries and the
 * reference drivers share.
 */

const DIGITS = /^[0-9]+$/;

/**
 * Writes an integer amount of minor units (a decimal string or a bigint, never negative) with
 * `decimals` places, without trailing zeros: `1250`, 2 -> `12.5`. Exact (no floating point);
 * leading zeros are dropped. Throws a RangeError on anything but a non-negative integer, or on
 * `decimals` that is not an integer from 0 to 255.
 *
 * @example
 * formatUnits('1500000', 6) // '1.5'
 * formatUnits(1n, 6)        // '0.000001'
 */
export function formatUnits(amount: string | bigint, decimals: number): string {
  const text = typeof amount === 'bigint' ? amount.toString() : amount;
  if (!DIGITS.test(text)) throw new RangeError(`not a non-negative integer amount: ${JSON.stringify(text.slice(0, 80))}`);
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) throw new RangeError(`decimals must be an integer 0..255, not ${decimals}`);
  const digits = text.replace(/^0+(?=\d)/, '');
  if (decimals === 0) return digits;
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const frac = padded.slice(padded.length - decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}
