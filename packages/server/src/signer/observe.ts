/**
 * @module signer/observe
 * `observeIntent(request, deps)`: everything POST /observe does besides HTTP. A control plane shows
 * the signer an intent a timelock holds back as soon as it creates it, so that the signer's own
 * clock starts then: the signer counts a timelock from the later of the claimed created_at and its
 * own first sight of the intent (a control plane cannot backdate created_at past a lock), and an
 * intent it first saw at execute would otherwise be held for a second full timelock.
 *
 * It runs the first checks of /sign on the request (intent_tampered, the wallet served and not
 * frozen, the pinned descriptor and policy: policy_mismatch / policy_denied) and then records first
 * sight, durably, under an `intent.observed` receipt. It signs nothing: it takes no key, payload,
 * approval or signer address, and is given no access to the keystore (its deps have none).
 * Observing an intent already seen writes nothing and answers when it was first seen. A refusal
 * is a receipt (`observe.refused`), as on /sign, and records nothing else.
 */
import { canonicalize, sha256Hex, SignerRefusedError, VaultError, type ObserveRequest, type ObserveResponse, type SignerRefusal } from '@vault/sdk';
import { checkIntent, checkPinned, serialised, type SignerDeps } from './sign.js';
import { restrictedTrust } from './trust.js';

/** What observing needs: no keys and no chain signers, so it cannot sign whatever it is sent. */
export type ObserveDeps = Pick<SignerDeps, 'now' | 'drivers' | 'trust' | 'state'>;

export type ObserveOutcome = { ok: true; response: ObserveResponse } | { ok: false; refusal: SignerRefusal; receipt_head: string };

/**
 * Verifies an ObserveRequest (already schema-validated) and records when this signer first saw the
 * intent, or refuses. Runs in the sign queue: a /sign checked after this resolves sees the record.
 *
 * @example
 * const outcome = await observeIntent(request, deps)
 * if (outcome.ok) reply(200, outcome.response) // { intentId, first_seen_at, timelock_from, receipt_head }
 * else reply(403, outcome.refusal)
 */
export async function observeIntent(request: ObserveRequest, deps: ObserveDeps): Promise<ObserveOutcome> {
  const { outcome, ticket, error } = await serialised(deps.state, async () => {
    try {
      return { outcome: observeNow(request, deps), ticket: deps.state.ticket, error: undefined };
    } catch (e) {
      return { outcome: undefined, ticket: deps.state.ticket, error: e as unknown };
    }
  });
  await deps.state.durable(ticket);
  if (error !== undefined || outcome === undefined) throw error;
  return outcome;
}

function observeNow(req: ObserveRequest, deps: ObserveDeps): ObserveOutcome {
  const { state } = deps;
  const now = deps.now();
  const requestDigest = sha256Hex(canonicalize(req));
  try {
    const trust = restrictedTrust(deps.trust, state.restrictions);
    const checked = checkIntent(req, deps, trust, state);
    checkPinned(req, checked, trust);
    const { id } = checked;
    const seen = state.firstSeen(id);
    // Seen before: nothing to write; the answer names the head as written.
    const receipt = seen === undefined ? state.commit({ at: now, kind: 'intent.observed', intentId: id, body: { request: requestDigest } }, [{ t: 'seen', intentId: id, at: now }]) : null;
    const first = seen ?? now;
    return { ok: true, response: { intentId: id, first_seen_at: first, timelock_from: Math.max(req.intent.created_at, first), receipt_head: receipt?.hash ?? state.head } };
  } catch (e) {
    if (e instanceof SignerRefusedError) {
      const refusal = e.toRefusal();
      const receipt = state.commit({ at: now, kind: 'observe.refused', intentId: req.intent.id, body: { request: requestDigest, reason: refusal.refused.reason, message: refusal.message } });
      return { ok: false, refusal, receipt_head: receipt.hash };
    }
    // A fault is on the record too, without its details (they may name internals).
    state.commit({ at: now, kind: 'observe.fault', intentId: req.intent.id, body: { request: requestDigest, error: e instanceof VaultError ? e.code : 'fault' } });
    throw e;
  }
}
