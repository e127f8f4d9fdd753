/**
 * @module payment/idempotency
 * One use per EIP-3009 authorization, enforced before the handler runs.
 *
 * Why: the reference middleware verifies each request on its own, so two requests carrying the
 * same authorization both verify (the nonce is still unused on chain), both run the handler, and
 * only one settlement lands: one charge, two answers. Here the first request claims the
 * authorization's key synchronously (Node runs one callback at a time, so check-and-set cannot
 * interleave); a second request carrying it is refused while the first is in flight, and after it.
 *
 * Lifecycle of a key: claimed → released (verification failed: the handler did not run and nothing
 * was settled, so the caller may retry with the same authorization, e.g. after topping up) or →
 * used (the handler ran, whatever its outcome, or a settlement was attempted: never accepted again
 * here, because a duplicate must not run the handler twice and a transfer whose outcome is unknown
 * may still land).
 */

export type ClaimResult = 'claimed' | 'in_progress' | 'used' | 'full';

/**
 * The store the middleware uses. A multi-process deployment needs a shared implementation with an
 * atomic claim (postgres.ts); a shared store answers asynchronously, the in-process one at once.
 */
export interface AuthorizationStore {
  /** Atomically claims `key`; `expiresAt` (Unix seconds) is the authorization's validBefore. */
  claim(key: string, expiresAt: number): ClaimResult | Promise<ClaimResult>;
  /** Frees a claimed key (nothing was settled). */
  release(key: string): void | Promise<void>;
  /** Marks a claimed key as spent for good. */
  markUsed(key: string): void | Promise<void>;
  /** Number of keys held (claimed or used), where the store can tell at once. */
  readonly size?: number;
}

export interface MemoryAuthorizationStoreOptions {
  /** Upper bound on keys held; beyond it new claims are refused ('full') rather than memory growing. Default 100_000. */
  maxEntries?: number;
  /** Clock in Unix seconds (tests). */
  now?: () => number;
}

/**
 * In-process store. A used key is kept until its authorization expires (validBefore has passed),
 * after which the chain itself refuses the authorization, so forgetting it is safe.
 *
 * @example
 * const store = new MemoryAuthorizationStore()
 * store.claim('eip155:1|0xasset|0xfrom|0xnonce', validBefore) // 'claimed'
 */
export class MemoryAuthorizationStore implements AuthorizationStore {
  private readonly entries = new Map<string, { state: 'in_progress' | 'used'; expiresAt: number }>();
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: MemoryAuthorizationStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
  }

  get size(): number {
    return this.entries.size;
  }

  claim(key: string, expiresAt: number): ClaimResult {
    const existing = this.entries.get(key);
    if (existing) return existing.state;
    if (this.entries.size >= this.maxEntries) {
      this.prune();
      if (this.entries.size >= this.maxEntries) return 'full';
    }
    this.entries.set(key, { state: 'in_progress', expiresAt });
    return 'claimed';
  }

  release(key: string): void {
    const e = this.entries.get(key);
    if (e?.state === 'in_progress') this.entries.delete(key);
  }

  markUsed(key: string): void {
    const e = this.entries.get(key);
    if (e) e.state = 'used';
  }

  /** Forgets used keys whose authorization has expired. In-flight keys are never pruned. */
  prune(): void {
    const now = this.now();
    for (const [k, e] of this.entries) {
      if (e.state === 'used' && e.expiresAt < now) this.entries.delete(k);
    }
  }
}

/** The key of an authorization: EIP-3009 nonces are unique per (token, authorizer), so both are part of it. */
export function authorizationKey(network: string, asset: string, from: string, nonce: string): string {
  return `${network}|${asset}|${from}|${nonce}`.toLowerCase();
}
