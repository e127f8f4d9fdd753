/**
 * @module control-plane/actor
 * Who the current request acts as, for the receipts it writes. The access middleware runs each
 * authorised request inside `withActor(actorOf(principal))`; the writer stamps every receipt it
 * chains with `currentActor()`. Work outside any request (start-up resumption, the expiry sweep)
 * and changes the clock makes rather than a caller (expiry, a timelock elapsing) are `system`.
 * Carried by AsyncLocalStorage rather than through every call, so no path that writes a receipt
 * can forget to pass it: a forgotten context reads `system`, never another caller's name.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from './sessions.js';

export const SYSTEM_ACTOR = 'system';

const current = new AsyncLocalStorage<string>();

/** The actor string of a principal: `operator:<name>`, `device:<id>` or `apikey:<id>`. */
export function actorOf(p: Principal): string {
  switch (p.kind) {
    case 'operator':
      return `operator:${p.name}`;
    case 'device':
      return `device:${p.id}`;
    case 'apikey':
      return `apikey:${p.id}`;
  }
}

/** Runs `fn` (and everything it awaits) as `actor`. */
export function withActor<T>(actor: string, fn: () => T): T {
  return current.run(actor, fn);
}

/** The actor of the running request, `system` outside one. */
export function currentActor(): string {
  return current.getStore() ?? SYSTEM_ACTOR;
}
