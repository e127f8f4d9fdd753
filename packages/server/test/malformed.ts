/**
 * Malformed-input generation shared by the "never a 500" property tests of both services (issue
 * #20, finding 4): take a valid request body, replace one field at any depth (or drop it) with an
 * arbitrary JSON value or a hostile one, and judge the answer. A 400 must name the field (or an
 * object enclosing it, for a check across fields); other refusals must be documented statuses.
 */
import fc from 'fast-check';
import type { Hono } from 'hono';
import { expect } from 'vitest';
import { listen, type Listening } from '../src/http/listen.js';

export type Path = (string | number)[];

/** Every path in a JSON value: each member and element at any depth (containers included). */
export function pathsOf(value: unknown, at: Path = []): Path[] {
  const here = at.length > 0 ? [at] : [];
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => pathsOf(v, [...at, i]))];
  if (value !== null && typeof value === 'object') return [...here, ...Object.entries(value).flatMap(([k, v]) => pathsOf(v, [...at, k]))];
  return here;
}

/** Number spellings JSON allows and JSON.stringify never writes: written into the body text as they are. */
const RAW_NUMBERS = ['-0', '-0.0', '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '9007199254740993', '1.0', '1E3', '0.1'];

/** Strings probes use: NUL, a right-to-left override, lone surrogates, 300 KB, number look-alikes. */
const HOSTILE_STRINGS = ['\u0000', 'a\u0000b', '\u202e', '\u202edest', '\u200b', '\ud800', '\udfff', 'a\ud800b', 'x'.repeat(300 * 1024), '-0', '0', '', ' ', 'abc', '1.5', '1e3', '9'.repeat(400), '__proto__', 'constructor', 'operator', 'device:alice'];

export type Replacement = { kind: 'json'; value: unknown } | { kind: 'raw'; text: string } | { kind: 'drop' };

export const replacement: fc.Arbitrary<Replacement> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: 'json' as const, value })) },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map((value) => ({ kind: 'json' as const, value })) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((text) => ({ kind: 'raw' as const, text })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'drop' as const }) },
);

const MARK = '\u0001replaced\u0001';

/** The body text of `valid` with the value at `path` replaced (or dropped). */
export function replaced(valid: unknown, path: Path, r: Replacement): string {
  const copy = structuredClone(valid) as Record<string | number, unknown>;
  let node = copy;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (r.kind === 'drop') {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
    return JSON.stringify(copy);
  }
  node[last] = r.kind === 'json' ? r.value : MARK;
  const text = JSON.stringify(copy);
  return r.kind === 'raw' ? text.replace(JSON.stringify(MARK), r.text) : text;
}

/** Is `named` the replaced field, inside it, or a field of an object that encloses it? */
function related(named: string, path: Path): boolean {
  const p = path.join('.');
  if (named === p || named.startsWith(`${p}.`) || p.startsWith(`${named}.`)) return true;
  // a check across fields names a sibling: its parent must enclose the replaced field
  const parent = named.includes('.') ? named.slice(0, named.lastIndexOf('.')) : '';
  return parent !== '' && (p === parent || p.startsWith(`${parent}.`));
}

/**
 * Never a 500. A 400 names the replaced field (or an object enclosing it), or carries a domain
 * reason (a signature that no longer verifies names the signature), or says the body was too
 * large; any other status must be one the route documents.
 */
export function judge(res: { status: number; body: unknown }, path: Path, r: Replacement, allowed: readonly number[]): void {
  const where = `${path.join('.')} := ${r.kind === 'json' ? JSON.stringify(r.value)?.slice(0, 80) : r.kind === 'raw' ? r.text : '(dropped)'}`;
  expect(res.status, `${where} -> ${JSON.stringify(res.body)?.slice(0, 300)}`).not.toBe(500);
  if (res.status === 400) {
    const error = (res.body as { error?: { message?: string; data?: { path?: unknown; reason?: unknown } } }).error;
    const named = error?.data?.path;
    expect(typeof named, `${where}: a 400 must name a field: ${JSON.stringify(res.body)?.slice(0, 300)}`).toBe('string');
    const ok = related(named as string, path) || typeof error?.data?.reason === 'string' || /body larger than/.test(error?.message ?? '');
    expect(ok, `${where}: the 400 names ${JSON.stringify(named)}: ${error?.message?.slice(0, 200)}`).toBe(true);
    return;
  }
  expect(allowed, `${where} -> ${res.status} ${JSON.stringify(res.body)?.slice(0, 300)}`).toContain(res.status);
}

/**
 * A service app on a real loopback socket, and a raw POST to it: the body goes out as the exact
 * text given (a raw `-0` or `1e400` must reach the server's JSON parser as written).
 */
export async function serveForProbe(app: Hono): Promise<{ post(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: any }>; close(): Promise<void> }> {
  const server: Listening = await listen(app);
  return {
    async post(path, body, headers) {
      const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      return { status: res.status, body: parsed };
    },
    close: () => server.close(),
  };
}

/** One valid operation of each kind, with every optional field set (the shapes both services parse). */
export const EVERY_OPERATION = [
  { op: 'transfer' },
  { op: 'issue' },
  { op: 'authorize_holder', revoke: true },
  { op: 'clawback' },
  { op: 'mpt_create', asset_scale: 2, flags: 0x22, maximum_amount: '1000000', transfer_fee: 100, metadata_hex: 'ab' },
  { op: 'account_flags', set: 8, clear: 6 },
  { op: 'contract_call', data_hex: '0xa9059cbb' },
] as const;
