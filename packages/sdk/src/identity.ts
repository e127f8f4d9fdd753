/**
 * @module identity
 * Who initiated an intent, as a typed identity. `initiator` is a security input (the initiator may
 * not approve their own intent; agent rules key on it), so it has one strict grammar and one
 * spelling per identity: exactly `operator`, `device:<id>`, `agent:<name>` or `app:<id>` (an
 * application holding an API key), where the id or name is 1..120 of `a-z 0-9 . _ -`. No upper case (so `device:ALICE` cannot pass for another device
 * than `device:alice` while a reader sees the same one, and nothing needs folding), no
 * whitespace, no other Unicode: a string outside the grammar is not an identity, and identities
 * are compared as values.
 */

export type Identity = { kind: 'operator' } | { kind: 'device'; id: string } | { kind: 'agent'; name: string } | { kind: 'app'; id: string };

/** Every initiator the grammar accepts, as one expression (the intent schema checks with it). */
export const INITIATOR_RE = /^(?:operator|device:[a-z0-9._-]{1,120}|agent:[a-z0-9._-]{1,120}|app:[a-z0-9._-]{1,120})$/;

/** An agent's initiator alone (policies name one agent with it). */
export const AGENT_INITIATOR_RE = /^agent:[a-z0-9._-]{1,120}$/;

export const INITIATOR_GRAMMAR = '"operator", "device:<id>", "agent:<name>" or "app:<id>" (id, name: 1..120 of a-z 0-9 . _ -)';

/** What an API key may be bound to: an agent or an application, never an operator or a device. */
export const KEY_BINDING_RE = /^(?:agent|app):[a-z0-9._-]{1,120}$/;

/**
 * Who did something, as every receipt and event names it: `operator:<name>` (a named operator
 * account; the legacy passphrase is `operator:operator`), `device:<id>` (a paired device's
 * session), `apikey:<id>` (an application or agent key) or `system` (the control plane itself:
 * expiry sweeps, resumed confirmations, start-up).
 */
export const ACTOR_RE = /^(?:system|operator:[a-z0-9._-]{1,64}|device:[A-Za-z0-9._:-]{1,128}|apikey:[a-z0-9]{8,32})$/;

/**
 * Parses an initiator string into its identity, or null when it is not exactly in the grammar
 * (`Device:x`, `device:X`, `device: x`, a trailing space, a zero-width space, `x` alone are all null).
 *
 * @example
 * parseInitiator('device:dev_3f2a') // { kind: 'device', id: 'dev_3f2a' }
 * parseInitiator('Device:dev_3f2a') // null
 */
export function parseInitiator(initiator: unknown): Identity | null {
  if (typeof initiator !== 'string' || !INITIATOR_RE.test(initiator)) return null;
  if (initiator === 'operator') return { kind: 'operator' };
  const colon = initiator.indexOf(':');
  const name = initiator.slice(colon + 1);
  if (initiator.startsWith('device:')) return { kind: 'device', id: name };
  return initiator.startsWith('app:') ? { kind: 'app', id: name } : { kind: 'agent', name };
}

/** The one string form of an identity (`parseInitiator(formatIdentity(i))` equals `i`). */
export function formatIdentity(identity: Identity): string {
  switch (identity.kind) {
    case 'operator':
      return 'operator';
    case 'device':
      return `device:${identity.id}`;
    case 'agent':
      return `agent:${identity.name}`;
    case 'app':
      return `app:${identity.id}`;
  }
}

/** Are two identities the same principal? Exact comparison of kind and id or name. */
export function sameIdentity(a: Identity, b: Identity): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'device' || a.kind === 'app') return a.id === (b as { id: string }).id;
  if (a.kind === 'agent') return a.name === (b as { name: string }).name;
  return true;
}

/** The identity of an approver: approvers are paired devices, named by their device id. */
export function approverIdentity(approverId: string): Identity {
  return { kind: 'device', id: approverId };
}

/**
 * Is `approverId` the initiator of an intent? The initiator is parsed (a string) or already an
 * identity. An initiator string outside the grammar answers true: nobody can be shown not to be
 * it, so no approval of such an intent may count (fail closed; the intent schema refuses such
 * initiators, so only a record written before the grammar existed can carry one).
 *
 * @example
 * isInitiator('device:alice', 'alice') // true
 * isInitiator('agent:alice', 'alice') // false: an agent is not the device alice
 */
export function isInitiator(initiator: string | Identity, approverId: string): boolean {
  const who = typeof initiator === 'string' ? parseInitiator(initiator) : initiator;
  if (who === null) return true;
  return sameIdentity(who, approverIdentity(approverId));
}
