/**
 * @module signer/restrictions
 * What POST /restrictions, GET /restrictions and `vault-signer lift` do besides HTTP and argv.
 *
 * The signer trusts nothing the control plane sends, with one exception: a restriction (revoke or
 * drop an approver, freeze a wallet, cancel an intent) only removes power, so it is taken on at once, before the
 * reply, durably (a `restricted` event on the journal, under a `restrictions.added` receipt) and
 * for good: the route can only add restrictions, never lift one. Lifting adds power back, so only
 * the operator does it, on the signer host, with the signer stopped and the keystore passphrase
 * (the journal is locked to one process and its receipts are signed with the receipt key).
 */
import {
  normalizeRestrictions,
  restrictionDigest,
  ValidationError,
  type Restriction,
  type RestrictionsInForce,
  type RestrictionsResult,
} from '@vault/sdk';
import { serialised, type SignerDeps } from './sign.js';
import type { SignerState, StateEvent } from './state.js';

/**
 * Most restrictions on approvers and wallets a signer holds at once. Bounds what a hostile control
 * plane can make the signer keep; past it a push is refused (400), and a control plane that cannot
 * get its restrictions acknowledged does not ask this signer to sign. Cancellations are not
 * counted: one arrives per cancelled intent for as long as the vault runs, and each costs what a
 * first sight of an intent costs (the signer keeps those too); a push carries at most
 * MAX_RESTRICTIONS_PER_SET of them.
 */
export const MAX_RESTRICTIONS_IN_FORCE = 16_384;

/**
 * Takes on every restriction of `restrictions` this signer does not hold yet, and resolves once
 * all of them are on disk. Idempotent: restrictions already in force add nothing (no receipt).
 * Runs in the sign queue, so a signature checked after this resolves sees every restriction, and
 * none checked before it is changed under it.
 *
 * @example
 * const result = await applyRestrictions([{ restriction: 'freeze_wallet', wallet: 'ops' }], deps)
 * // result.count restrictions in force, result.digest = restrictionDigest of them all
 */
export async function applyRestrictions(restrictions: readonly Restriction[], deps: Pick<SignerDeps, 'now' | 'state'>): Promise<RestrictionsResult> {
  const received = restrictionDigest(restrictions);
  const { ticket, added } = await serialised(deps.state, async () => {
    const state = deps.state;
    const fresh = normalizeRestrictions(restrictions).filter((r) => !state.restricted(r));
    if (fresh.length > 0) {
      const counted = fresh.filter((r) => r.restriction !== 'cancel_intent').length;
      if (counted > 0 && state.cappedRestrictionCount + counted > MAX_RESTRICTIONS_IN_FORCE) {
        throw new ValidationError('restrictions', [{ path: 'restrictions', message: `this signer holds ${state.cappedRestrictionCount} restrictions on approvers and wallets; at most ${MAX_RESTRICTIONS_IN_FORCE} (its operator can lift some)` }]);
      }
      const at = deps.now();
      const events: StateEvent[] = fresh.map((restriction) => ({ t: 'restricted', restriction, at }));
      // A cancelled intent this signer never saw is seen now: its time to live runs from here at
      // the latest, so it expires here whatever created_at a control plane later claims.
      for (const r of fresh) if (r.restriction === 'cancel_intent' && state.firstSeen(r.intent_id) === undefined) events.push({ t: 'seen', intentId: r.intent_id, at });
      const digest = restrictionDigest([...state.restrictionsInForce().map((r) => r.restriction), ...fresh]);
      state.commit({ at, kind: 'restrictions.added', body: { received, added: fresh, count: state.restrictionCount + fresh.length, digest } }, events);
    }
    return { ticket: state.ticket, added: fresh.length };
  });
  // Acknowledged only once on disk, including a push of the same restrictions still in flight.
  await deps.state.durable(ticket);
  const state = deps.state;
  return { received, added, count: state.restrictionCount, digest: state.restrictionDigest, receipt_head: state.head };
}

/** GET /restrictions: what is in force. */
export function describeRestrictions(state: SignerState): RestrictionsInForce {
  return { count: state.restrictionCount, digest: state.restrictionDigest, restrictions: state.restrictionsInForce() };
}

/** Which restrictions `liftRestrictions` lifts: those naming one of these approvers or wallets. */
export interface LiftSelector {
  approvers?: readonly string[];
  wallets?: readonly string[];
}

/**
 * Lifts the restrictions in force that name one of the selected approvers (revoke_approver,
 * drop_approver) or wallets (freeze_wallet), durably, under a `restrictions.lifted` receipt.
 * Returns what it lifted (nothing lifted, nothing written). Only the operator's CLI calls this,
 * on a state it opened itself: no route reaches it.
 *
 * @example
 * const lifted = await liftRestrictions(state, { approvers: ['bob'] }, now)
 */
export async function liftRestrictions(state: SignerState, select: LiftSelector, now: number): Promise<Restriction[]> {
  const approvers = new Set(select.approvers ?? []);
  const wallets = new Set(select.wallets ?? []);
  const lifted: Restriction[] = [];
  const kept: Restriction[] = [];
  for (const { restriction: r } of state.restrictionsInForce()) {
    // A cancellation is final, here too: no selector names one.
    const named = r.restriction === 'cancel_intent' ? false : r.restriction === 'freeze_wallet' ? wallets.has(r.wallet) : approvers.has(r.approver_id);
    (named ? lifted : kept).push(r);
  }
  if (lifted.length === 0) return [];
  const events: StateEvent[] = lifted.map((restriction) => ({ t: 'lifted', restriction, at: now }));
  await state.commitDurably({ at: now, kind: 'restrictions.lifted', body: { lifted, by: 'operator', count: kept.length, digest: restrictionDigest(kept) } }, events);
  return lifted;
}
