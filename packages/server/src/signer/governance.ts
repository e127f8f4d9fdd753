/**
 * @module signer/governance
 * What POST /governance/changes, GET /governance and the start-up replay do besides HTTP.
 *
 * Unlike a restriction, a change set can add power (a new approver, a lower threshold, another
 * wallet), so the control plane's word is worth nothing here: the signer judges every push with
 * the SDK's checkChangeSet against its OWN admin policy and version (trust file, then its journal),
 * at its own clock. A change set that passes is applied live, in the sign queue (a signature
 * checked after it sees the new trust, none checked before is changed under it), journaled with
 * the approvals that carried it before the reply, and the version only moves forward: a replayed
 * or older change set is refused, and a restart on an older trust file replays the journal.
 */
import { checkChangeSet, InternalError, type ChangeSetRefusal, type GovernancePush } from '@vault/sdk';
import { serialised, type SignerDeps } from './sign.js';
import type { SignerState } from './state.js';
import { trustAfterChange, type Trust } from './trust.js';

export type GovernanceOutcome =
  | { ok: true; version: number; digest: string; ready_at: number; receipt_head: string }
  | { ok: false; reason: ChangeSetRefusal; message: string; version: number | null; receipt_head: string };

/**
 * Judges a pushed change set against this signer's own governance and, when the admin quorum
 * approved it, applies it (trust swapped in `deps`, journaled and on disk before this resolves).
 * A refusal is journaled too (`governance.refused`): a control plane pushing what the admins did
 * not sign leaves evidence on the signer.
 *
 * @example
 * const outcome = await applyChangeSet({ change, approvals }, deps)
 * if (!outcome.ok) reply(outcome.reason === 'stale_base' ? 409 : 403, outcome)
 */
export async function applyChangeSet(push: GovernancePush, deps: Pick<SignerDeps, 'now' | 'state' | 'trust'>): Promise<GovernanceOutcome> {
  const { outcome, ticket } = await serialised(deps.state, async () => {
    const state = deps.state;
    const now = deps.now();
    const governance = deps.trust.governance;
    const check = checkChangeSet(governance, push.change, push.approvals, now, { appliedDigests: state.governedDigests });
    if (!check.ok) {
      state.commit({ at: now, kind: 'governance.refused', body: { reason: check.reason, message: check.message, digest: check.digest, version: governance?.version ?? null } });
      const o: GovernanceOutcome = { ok: false, reason: check.reason, message: check.message, version: governance?.version ?? null, receipt_head: '' };
      return { outcome: o, ticket: state.ticket };
    }
    const next = trustAfterChange(deps.trust, check.change, check.ready_at);
    const after = next.governance!;
    state.commit(
      {
        at: now,
        kind: 'governance.applied',
        body: { digest: check.digest, version: check.version, ready_at: check.ready_at, ops: check.change.ops.map((o) => o.op), admins: check.approvals.map((a) => a.admin_id) },
      },
      [{ t: 'governed', digest: check.digest, version: check.version, ready_at: check.ready_at, change: check.change, approvals: check.approvals, governance: after, at: now }],
    );
    deps.trust = next;
    const o: GovernanceOutcome = { ok: true, version: check.version, digest: check.digest, ready_at: check.ready_at, receipt_head: '' };
    return { outcome: o, ticket: state.ticket };
  });
  await deps.state.durable(ticket);
  return { ...outcome, receipt_head: deps.state.head };
}

/**
 * The trust a signer serves with at start: its trust file, then every change set its journal
 * holds past the file's governance version, in order. A trust file older than the journal never
 * rolls the signer back; one the operator moved past the journal (a higher version) stands.
 *
 * Each change set is judged again, as when it was pushed (checkChangeSet at the time it was
 * applied), against the admin policy it was applied under: the trust file's, then the one each
 * verified change set leaves. A journal's events are not what its receipts hash, so one written in
 * by hand (or under an admin policy the trust file no longer has) stops the start, naming it.
 *
 * @example
 * deps.trust = replayGovernance(loadTrust(path), state)
 */
export function replayGovernance(trust: Trust, state: SignerState): Trust {
  const from = trust.governance?.version ?? -1;
  let out = trust;
  for (const e of state.governedChanges()) {
    if (e.version <= from) continue;
    const base = out.governance;
    if (base === undefined || base.version !== e.version - 1) {
      throw new InternalError(`journal: change set version ${e.version} (${e.digest}) was taken on under an admin policy at version ${e.version - 1}, which the trust file does not hold (it is at ${base?.version ?? 'no admin policy'}): restore its governance section`);
    }
    const check = checkChangeSet(base, e.change, e.approvals, e.at);
    if (!check.ok) throw new InternalError(`journal: change set version ${e.version} (${e.digest}) does not verify against the admin policy of version ${base.version}: ${check.reason}: ${check.message}`);
    if (check.digest !== e.digest || check.ready_at !== e.ready_at) throw new InternalError(`journal: change set version ${e.version} is recorded with another digest or ready_at than its change set and approvals give`);
    out = trustAfterChange(out, check.change, check.ready_at);
  }
  return out;
}

/** GET /governance: the admin policy in force, its version and the change sets taken on. */
export function describeGovernance(trust: Trust, state: SignerState): unknown {
  return {
    version: trust.governance?.version ?? null,
    governance: trust.governance ?? null,
    applied: state.governedChanges().map((e) => ({ version: e.version, digest: e.digest, ready_at: e.ready_at, at: e.at })),
  };
}
