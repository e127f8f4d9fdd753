/**
 * Fixtures for the answers tests: fixed instants (never the wall clock), an answerer factory, and
 * a small JSON Schema (2020-12) checker for the subset of keywords the route schemas use. The
 * checker throws on any keyword it does not implement, so a schema using something new fails
 * the test instead of passing unchecked.
 */
import { expect } from 'vitest';
import { createAnswerer, createSampleProvider, type AnswerResult, type DataProvider } from '../src/answers/index.js';
import type { PaidPath } from '../src/routes.js';

/** Sunday 2026-11-22 15:00:00 UTC = 10:00 in Orlando (EST, UTC-5) = 15:00 in Lisbon (WET, UTC+0). */
export const SUNDAY_1500Z = 1_795_359_600;
/** Monday 2026-11-23 02:00:00 UTC = Sunday 21:00 in Orlando. */
export const MONDAY_0200Z = 1_795_399_200;
/** Monday 2026-03-09 13:30:00 UTC = 09:30 EDT (US daylight time began 2026-03-08). */
export const DST_MONDAY_1330Z = 1_773_063_000;
/** Friday 2026-03-06 13:30:00 UTC = 08:30 EST (before the change). */
export const PRE_DST_FRIDAY_1330Z = 1_772_803_800;
/** Thursday 2026-11-26 15:00:00 UTC: US Thanksgiving, 10:00 in Orlando. */
export const THANKSGIVING_1500Z = 1_795_705_200;
/** Wednesday 2026-11-25 15:00:00 UTC, 10:00 in Orlando. */
export const WEDNESDAY_1500Z = 1_795_618_800;

export function sampleAnswerer(now: number = SUNDAY_1500Z, anchor: number = SUNDAY_1500Z) {
  return createAnswerer(createSampleProvider({ anchor }), { now: () => now });
}

export type Ans = ReturnType<typeof createAnswerer>;

/** Call and expect 200; returns the body typed loosely for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function ok(a: Ans, path: PaidPath, query: string): Promise<any> {
  const r = await a.answer(path, new URLSearchParams(query));
  if (r.status !== 200) throw new Error(`expected 200 for ${path}?${query}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Call and expect a 400 naming `field`; returns the error. */
export async function refused(a: Ans, path: PaidPath, query: string, field: string) {
  const r: AnswerResult = await a.answer(path, new URLSearchParams(query));
  expect(r.status, `${path}?${query} should be refused`).toBe(400);
  if (r.status === 200) throw new Error('unreachable');
  expect(r.body.error.field, `${path}?${query}: ${r.body.error.message}`).toBe(field);
  expect(r.body.error.message.length).toBeGreaterThan(0);
  expect(r.body.error.message).toContain(field);
  return r.body.error;
}

/** A provider wrapper that counts calls per method, to prove the data is indexed once. */
export function countingProvider(inner: DataProvider): { provider: DataProvider; calls: Record<string, number> } {
  const calls: Record<string, number> = { areas: 0, places: 0, deals: 0, events: 0, resorts: 0 };
  const wrap =
    <K extends 'areas' | 'places' | 'deals' | 'events' | 'resorts'>(k: K) =>
    () => {
      calls[k] = (calls[k] ?? 0) + 1;
      return inner[k]();
    };
  return {
    calls,
    provider: {
      source: inner.source,
      areas: wrap('areas') as DataProvider['areas'],
      places: wrap('places') as DataProvider['places'],
      deals: wrap('deals') as DataProvider['deals'],
      events: wrap('events') as DataProvider['events'],
      resorts: wrap('resorts') as DataProvider['resorts'],
    },
  };
}

/** Great-circle distance in km, written here independently of geokdbush (mean Earth radius 6371 km). */
export function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const dLat = (lat2 - lat1) * r;
  const dLon = (lon2 - lon1) * r;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(a));
}

// ---------------------------------------------------------------------------------------------
// Minimal JSON Schema checker.

type S = Record<string, unknown>;
const ANNOTATIONS = new Set(['$schema', 'description', 'default', 'examples', 'title']);
const KNOWN = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'pattern', 'minLength', 'maxLength',
  'minimum', 'maximum', 'anyOf', 'allOf', 'not', 'if', 'then', 'else',
]);

function typeOk(t: string, v: unknown): boolean {
  switch (t) {
    case 'string': return typeof v === 'string';
    case 'number': return typeof v === 'number' && Number.isFinite(v);
    case 'integer': return typeof v === 'number' && Number.isInteger(v);
    case 'boolean': return typeof v === 'boolean';
    case 'null': return v === null;
    case 'object': return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'array': return Array.isArray(v);
    default: throw new Error(`schema checker: unknown type ${t}`);
  }
}

/** Returns a list of violations ("path: message"); empty when `v` conforms. */
export function schemaErrors(schema: S, v: unknown, path = '$'): string[] {
  const errs: string[] = [];
  for (const k of Object.keys(schema)) {
    if (!KNOWN.has(k) && !ANNOTATIONS.has(k) && !k.startsWith('x-')) throw new Error(`schema checker: keyword "${k}" not implemented (at ${path})`);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((t) => typeOk(t, v))) return [`${path}: expected ${types.join('|')}, got ${JSON.stringify(v)?.slice(0, 60)}`];
  }
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(v)) errs.push(`${path}: expected const ${JSON.stringify(schema.const)}`);
  if (schema.enum && !(schema.enum as unknown[]).some((e) => JSON.stringify(e) === JSON.stringify(v))) errs.push(`${path}: ${JSON.stringify(v)} not in enum`);
  if (typeof v === 'string') {
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(v)) errs.push(`${path}: "${v}" does not match ${schema.pattern}`);
    if (typeof schema.minLength === 'number' && [...v].length < schema.minLength) errs.push(`${path}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === 'number' && [...v].length > schema.maxLength) errs.push(`${path}: longer than ${schema.maxLength}`);
  }
  if (typeof v === 'number') {
    if (typeof schema.minimum === 'number' && v < schema.minimum) errs.push(`${path}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && v > schema.maximum) errs.push(`${path}: above ${schema.maximum}`);
  }
  if (typeOk('object', v)) {
    const o = v as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, S>;
    for (const r of (schema.required ?? []) as string[]) if (!(r in o)) errs.push(`${path}: missing required "${r}"`);
    for (const [k, val] of Object.entries(o)) {
      if (props[k]) errs.push(...schemaErrors(props[k], val, `${path}.${k}`));
      else if (schema.additionalProperties === false) errs.push(`${path}: unexpected property "${k}"`);
      else if (schema.additionalProperties !== undefined && schema.additionalProperties !== true) throw new Error('schema checker: only boolean additionalProperties');
    }
  }
  if (Array.isArray(v) && schema.items) v.forEach((x, i) => errs.push(...schemaErrors(schema.items as S, x, `${path}[${i}]`)));
  if (schema.anyOf && !(schema.anyOf as S[]).some((s) => schemaErrors(s, v, path).length === 0)) errs.push(`${path}: matches none of anyOf`);
  if (schema.allOf) for (const s of schema.allOf as S[]) errs.push(...schemaErrors(s, v, path));
  if (schema.not && schemaErrors(schema.not as S, v, path).length === 0) errs.push(`${path}: matches "not"`);
  if (schema.if) {
    const branch = schemaErrors(schema.if as S, v, path).length === 0 ? schema.then : schema.else;
    if (branch) errs.push(...schemaErrors(branch as S, v, path));
  }
  return errs;
}

/** Query string → the object a query-parameter schema describes (all values strings). */
export function queryObject(query: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(query));
}
