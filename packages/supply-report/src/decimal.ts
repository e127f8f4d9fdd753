/**
 * @module decimal
 * Exact decimal arithmetic on strings: every figure in the report is a decimal string, and drift is
 * their exact difference. A value is `coef × 10^exp` with a bigint coefficient, so exponent notation
 * ("5444166510000000e-26", as rippled writes small IOU amounts) and plain notation ("992471.74")
 * compare and subtract without ever passing through a float.
 */
import { SupplyReportError } from './errors.js';

export interface Decimal {
  coef: bigint;
  exp: number;
}

const DECIMAL = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/** Parses a plain or exponent-notation decimal string. Throws on anything else (no NaN, no hex, no spaces). */
export function parseDecimal(text: string, field = 'value'): Decimal {
  const m = DECIMAL.exec(text);
  if (!m) throw new SupplyReportError('bad_decimal', `${field}: "${text}" is not a decimal number`);
  const [, sign, whole, frac = '', e = '0'] = m;
  const exp = Number(e) - frac.length;
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 10_000) throw new SupplyReportError('bad_decimal', `${field}: exponent of "${text}" is out of range`);
  const coef = BigInt(`${sign}${whole}${frac}`);
  return { coef, exp };
}

function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const exp = Math.min(a.exp, b.exp);
  return [a.coef * 10n ** BigInt(a.exp - exp), b.coef * 10n ** BigInt(b.exp - exp), exp];
}

export function addDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, exp] = align(a, b);
  return { coef: x + y, exp };
}

export function subDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, exp] = align(a, b);
  return { coef: x - y, exp };
}

export function compareDecimal(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Plain notation with no exponent and no trailing fractional zeros ("1e3" -> "1000", "1.50" -> "1.5").
 * With `places`, exactly that many fractional digits (refuses to round: a value with more digits throws).
 */
export function formatDecimal(d: Decimal, places?: number): string {
  let { coef, exp } = d;
  if (places !== undefined) {
    if (-exp > places) {
      const drop = 10n ** BigInt(-exp - places);
      if (coef % drop !== 0n) throw new SupplyReportError('bad_decimal', `cannot write ${formatDecimal(d)} with ${places} places without rounding`);
      coef /= drop;
      exp = -places;
    }
    coef *= 10n ** BigInt(exp + places);
    exp = -places;
  } else if (exp > 0) {
    coef *= 10n ** BigInt(exp);
    exp = 0;
  } else {
    while (exp < 0 && coef % 10n === 0n) {
      coef /= 10n;
      exp += 1;
    }
  }
  const neg = coef < 0n;
  const digits = (neg ? -coef : coef).toString();
  if (exp === 0) return `${neg ? '-' : ''}${digits}`;
  const scale = -exp;
  const padded = digits.padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
}

/** Normalises any accepted decimal string to plain notation. */
export function normalizeDecimal(text: string, field?: string): string {
  return formatDecimal(parseDecimal(text, field));
}

/** `units` minor units with `decimals` places as a decimal string, e.g. (1234567n, 6) -> "1.234567". */
export function unitsToDecimal(units: bigint, decimals: number): string {
  return formatDecimal({ coef: units, exp: -decimals }, decimals);
}

/** Signed difference `now - before` in plain notation, with an explicit "+" for growth. */
export function decimalDelta(before: string, now: string): string {
  const d = formatDecimal(subDecimal(parseDecimal(now), parseDecimal(before)));
  return d.startsWith('-') || d === '0' ? d : `+${d}`;
}
