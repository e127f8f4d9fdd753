/**
 * @module json
 * Every JSON reply is parsed bigint-safe: integers beyond 2^53 (Token-2022 extension fields, u64
 * amounts) become bigint instead of silently rounding. Non-integers that a float cannot hold exactly
 * stay LosslessNumber; the report never reads floats (getTokenSupply's uiAmount is ignored).
 */
import { createHash } from 'node:crypto';
import { isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json';
import { SupplyReportError } from './errors.js';

function parseNumber(text: string): number | bigint | LosslessNumber {
  if (/^-?[0-9]+$/.test(text)) return isSafeNumber(text) ? Number(text) : BigInt(text);
  return isSafeNumber(text) ? Number(text) : new LosslessNumber(text);
}

/** Parses JSON with exact integers. Throws SupplyReportError('bad_reply') naming `what`. */
export function parseJsonExact(text: string, what: string): unknown {
  try {
    return parse(text, null, parseNumber);
  } catch (e) {
    throw new SupplyReportError('bad_reply', `${what}: reply is not valid JSON (${(e as Error).message.slice(0, 120)})`);
  }
}

/** JSON text of a value holding bigints (written as bare JSON numbers). */
export function stringifyExact(value: unknown, indent?: number): string {
  return stringify(value, undefined, indent) as string;
}

/** An integer field that may arrive as a number, a bigint or a decimal string; exact. */
export function toBigInt(v: unknown, field: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return BigInt(v);
  throw new SupplyReportError('bad_reply', `${field}: expected an integer, got ${typeof v === 'object' ? JSON.stringify(String(v)) : JSON.stringify(v)}`);
}

export function sha256Hex(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof LosslessNumber);
}

/** Reads `path` (dot separated) from a reply; throws naming the path when missing or of the wrong kind. */
export function field<T>(root: unknown, path: string, kind: 'string' | 'number' | 'object' | 'array' | 'boolean', what: string): T {
  let v: unknown = root;
  for (const part of path.split('.')) {
    if (!isObject(v)) throw new SupplyReportError('bad_reply', `${what}: missing ${path}`);
    v = v[part];
  }
  const ok =
    kind === 'array' ? Array.isArray(v) : kind === 'object' ? isObject(v) : kind === 'number' ? typeof v === 'number' || typeof v === 'bigint' : typeof v === kind;
  if (!ok) throw new SupplyReportError('bad_reply', `${what}: ${path} is ${v === undefined ? 'missing' : `not a ${kind}`}`);
  return v as T;
}
