/**
 * @module util
 * Small pure helpers shared by the driver, the signer and the devnet: hashing, AccountID order,
 * currency codes, exact decimal conversion of IOU values, and the MPTokenIssuanceID.
 */
import { formatUnits } from '@vault/sdk';
import { createHash } from 'node:crypto';
import { decodeAccountID, encodeAccountID, isValidClassicAddress } from 'ripple-address-codec';

/** First 32 bytes of SHA-512: the XRPL's hash for signing data, transaction ids and ledger keys. */
export function sha512Half(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha512').update(bytes).digest().subarray(0, 32));
}

export function hexToBytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** Compares two classic addresses by their 20-byte AccountID, the order rippled sorts Signers in. */
export function compareAccountIds(a: string, b: string): number {
  return Buffer.compare(Buffer.from(decodeAccountID(a)), Buffer.from(decodeAccountID(b)));
}

/**
 * The MPTokenIssuanceID: the 4-byte big-endian Sequence of the MPTokenIssuanceCreate followed by
 * the issuer's 20-byte AccountID, as 48 uppercase hex digits (xrpl.js has no helper for it).
 *
 * @example
 * mptIssuanceId(1, 'rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQC') // '00000001A3780F5CB5A44D366520FC44055E8ED44D9A2270'
 */
export function mptIssuanceId(sequence: number, issuer: string): string {
  const seq = Buffer.alloc(4);
  seq.writeUInt32BE(sequence >>> 0);
  return (seq.toString('hex') + Buffer.from(decodeAccountID(issuer)).toString('hex')).toUpperCase();
}

/** Splits an MPTokenIssuanceID into its sequence and issuer, or null when it is not one. */
export function parseMptIssuanceId(id: string): { sequence: number; issuer: string } | null {
  if (!/^[0-9A-Fa-f]{48}$/.test(id)) return null;
  const bytes = Buffer.from(id, 'hex');
  return { sequence: bytes.readUInt32BE(0), issuer: encodeAccountID(new Uint8Array(bytes.subarray(4))) };
}

const STANDARD_CODE = /^[A-Za-z0-9?!@#$%^&*<>(){}[\]|]{3}$/;

/**
 * A currency code as the ledger takes it: a 3-character standard code, or 40 hex digits
 * (uppercase). Names of 4 to 20 ASCII characters become the usual zero-padded 40-hex form.
 * Returns null for anything the ledger would refuse (including "XRP", which is not an IOU).
 */
export function toCurrencyCode(code: string): string | null {
  if (STANDARD_CODE.test(code)) return code.toUpperCase() === 'XRP' ? null : code;
  if (/^[0-9A-Fa-f]{40}$/.test(code)) return /^0{2}/.test(code) ? null : code.toUpperCase();
  if (/^[\x21-\x7e]{4,20}$/.test(code)) return Buffer.from(code, 'ascii').toString('hex').toUpperCase().padEnd(40, '0');
  return null;
}

/** The printable name of a currency code (40-hex codes decoded when they are ASCII), or null. */
export function currencyName(code: string): string | null {
  if (code.length === 3) return code;
  if (!/^[0-9A-F]{40}$/.test(code)) return null;
  const text = Buffer.from(code, 'hex').toString('latin1').replace(/\0+$/, '');
  return /^[\x21-\x7e]+$/.test(text) ? text : null;
}

/**
 * Integer minor units to an exact IOU value string: `1500`, 2 -> `15`. Throws a RangeError when
 * the value has more than 16 significant digits (the ledger would round it).
 */
export function minorUnitsToValue(amount: string, decimals: number): string {
  const digits = amount.replace(/^0+(?=\d)/, '');
  const significant = digits.replace(/0+$/, '').replace(/^0+/, '');
  if (significant.length > 16) throw new RangeError(`${amount} has more than 16 significant digits`);
  return formatUnits(digits, decimals);
}

/**
 * A decimal value (optionally signed, optionally with an exponent, as rippled prints IOU values)
 * to integer units of 10^-scale, or null when it is not exact at that scale.
 */
export function parseScaled(value: string, scale: number): bigint | null {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$/.exec(value.trim());
  if (!m) return null;
  const intPart = m[2] ?? '';
  const frac = m[3] ?? '';
  if (intPart === '' && frac === '') return null;
  const sign = m[1] === '-' ? -1n : 1n;
  const digits = BigInt(intPart + frac);
  const shift = scale + Number(m[4] ?? '0') - frac.length;
  if (shift >= 0) return shift > 400 ? null : sign * digits * 10n ** BigInt(shift);
  const div = 10n ** BigInt(-shift);
  return digits % div === 0n ? (sign * digits) / div : null;
}

/** Integer units of 10^-scale back to the shortest plain decimal string. */
export function formatScaled(units: bigint, scale: number): string {
  const negative = units < 0n;
  const abs = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = abs.slice(0, abs.length - scale);
  const frac = abs.slice(abs.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

export function isClassicAddress(address: string): boolean {
  return isValidClassicAddress(address);
}

/** `rAbc…wxyz` for one-line summaries. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

/** 1500000 drops -> "1.5". */
export function dropsToXrpText(drops: string): string {
  return formatScaled(BigInt(drops), 6);
}
