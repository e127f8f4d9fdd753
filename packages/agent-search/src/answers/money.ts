/**
 * @module answers/money
 * Decimal-string money in integer cents. Prices never pass through a float: a string is parsed
 * into a bigint count of cents, summed and multiplied as bigint, and rendered back to a string.
 */

const DECIMAL = /^(0|[1-9]\d{0,11})(?:\.(\d{1,2}))?$/;

/** True when `s` is a non-negative decimal with at most two fraction digits and at most 12 integer digits. */
export function isDecimal(s: string): boolean {
  return DECIMAL.test(s);
}

/**
 * Parse a decimal string ("12", "12.5", "12.50") into integer cents.
 * Returns undefined when `s` is not such a string; callers turn that into a refusal naming the field.
 */
export function toCents(s: string): bigint | undefined {
  const m = DECIMAL.exec(s);
  if (!m) return undefined;
  const whole = BigInt(m[1] as string);
  const frac = (m[2] ?? '').padEnd(2, '0');
  return whole * 100n + BigInt(frac);
}

/** Parse a decimal string from trusted data; a malformed one is a data fault and throws. */
export function centsOf(s: string, what: string): bigint {
  const c = toCents(s);
  if (c === undefined) throw new TypeError(`${what}: "${s}" is not a decimal amount with at most two fraction digits`);
  return c;
}

/** Render integer cents as a decimal string with exactly two fraction digits, e.g. 12345n → "123.45". */
export function formatCents(c: bigint): string {
  const neg = c < 0n;
  const a = neg ? -c : c;
  const whole = a / 100n;
  const frac = (a % 100n).toString().padStart(2, '0');
  return `${neg ? '-' : ''}${whole.toString()}.${frac}`;
}
