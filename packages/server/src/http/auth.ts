/**
 * @module http/auth
 * Constant-time secret checks and a small fixed-window rate limiter.
 */
import { timingSafeEqual } from '@vault/sdk';
import { createHash } from 'node:crypto';

/**
 * Compares a presented secret with the expected one in constant time. Both are hashed first so
 * neither the content nor the length of the expected secret leaks through timing.
 */
export function secretMatches(presented: string | undefined | null, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length === 0 || presented.length > 4096) return false;
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** Bearer token from an Authorization header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/.exec(header.trim());
  return m ? (m[1] as string) : null;
}

/** At most `max` events per `windowSeconds` per key; `now` is injectable for tests. */
export class RateLimiter {
  readonly #hits = new Map<string, { start: number; count: number }>();
  constructor(
    readonly max: number,
    readonly windowSeconds: number,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /** Records an attempt; false when the key is over its budget. */
  attempt(key: string): boolean {
    const t = this.now();
    const e = this.#hits.get(key);
    if (!e || t - e.start >= this.windowSeconds) {
      this.#hits.set(key, { start: t, count: 1 });
      if (this.#hits.size > 10_000) this.#prune(t);
      return true;
    }
    e.count += 1;
    return e.count <= this.max;
  }

  #prune(t: number): void {
    for (const [k, e] of this.#hits) if (t - e.start >= this.windowSeconds) this.#hits.delete(k);
  }
}
