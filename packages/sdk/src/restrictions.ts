/**
 * @module restrictions
 * Restriction sets (schemas/restriction): their canonical form and digest, which the control plane
 * and the signer both compute to agree on what was acknowledged, and what a set does to the
 * approvers a service knows. Only ever removes power: an approver a set names is revoked, by id
 * and by key; a wallet it names is frozen; an intent it names is cancelled.
 */
import { canonicalize } from './canonical.js';
import { sha256Hex, toHex } from './encoding.js';
import type { ApproverKey } from './approvals.js';
import type { Restriction } from './schemas/restriction.js';

/** One restriction's identity: its canonical JSON (member order and duplicates do not matter). */
export function restrictionKey(restriction: Restriction): string {
  return canonicalize(restriction);
}

/**
 * A set of restrictions in its one canonical form: duplicates removed, sorted by restrictionKey.
 *
 * @example
 * normalizeRestrictions([{ restriction: 'freeze_wallet', wallet: 'ops' }, { restriction: 'freeze_wallet', wallet: 'ops' }])
 * // [{ restriction: 'freeze_wallet', wallet: 'ops' }]
 */
export function normalizeRestrictions(restrictions: readonly Restriction[]): Restriction[] {
  const byKey = new Map<string, Restriction>();
  for (const r of restrictions) byKey.set(restrictionKey(r), r);
  return [...byKey.keys()].sort().map((k) => byKey.get(k) as Restriction);
}

/**
 * `sha256(JCS({format, restrictions}))` over the normalised set: the same restrictions in any
 * order, with any repeats, give the same digest.
 *
 * @example
 * restrictionDigest([]) // the digest of the empty set, the same on every service
 */
export function restrictionDigest(restrictions: readonly Restriction[]): string {
  return sha256Hex(canonicalize({ format: 'vault-restrictions', restrictions: normalizeRestrictions(restrictions) }));
}

/** A restriction set indexed for the checks a signer makes on every request. */
export interface RestrictionIndex {
  /** Approver ids whose approvals no longer count (revoke_approver, drop_approver). */
  readonly approverIds: ReadonlySet<string>;
  /** Approver keys (lowercase hex) whose approvals no longer count, whatever id they are listed under. */
  readonly publicKeys: ReadonlySet<string>;
  /** Wallets nothing is signed for. */
  readonly wallets: ReadonlySet<string>;
  /** Intents nothing is signed for (cancel_intent). */
  readonly intents: ReadonlySet<string>;
}

/**
 * Indexes a set of restrictions.
 *
 * @example
 * const index = indexRestrictions([{ restriction: 'freeze_wallet', wallet: 'ops' }])
 * index.wallets.has('ops') // true
 */
export function indexRestrictions(restrictions: Iterable<Restriction>): RestrictionIndex {
  const approverIds = new Set<string>();
  const publicKeys = new Set<string>();
  const wallets = new Set<string>();
  const intents = new Set<string>();
  for (const r of restrictions) {
    switch (r.restriction) {
      case 'revoke_approver':
        approverIds.add(r.approver_id);
        publicKeys.add(r.public_key.toLowerCase());
        break;
      case 'drop_approver':
        approverIds.add(r.approver_id);
        break;
      case 'freeze_wallet':
        wallets.add(r.wallet);
        break;
      case 'cancel_intent':
        intents.add(r.intent_id);
        break;
    }
  }
  return { approverIds, publicKeys, wallets, intents };
}

/** Does the index take away this approver's power (by its id, or by its key under any id)? */
export function approverRestricted(index: RestrictionIndex, id: string, publicKey: Uint8Array | string): boolean {
  if (index.approverIds.has(id)) return true;
  if (index.publicKeys.size === 0) return false;
  return index.publicKeys.has(typeof publicKey === 'string' ? publicKey.toLowerCase() : toHex(publicKey));
}

/**
 * The approvers as they stand under the restrictions: every one the index names is `revoked`
 * (so verifyApprovals reports its approvals as revoked), the rest unchanged. Returns `approvers`
 * itself when the index names none of them.
 *
 * @example
 * const approvers = restrictApprovers(trust.approvers, index)
 * verifyApprovals(request.approvals, { intentId, approvers })
 */
export function restrictApprovers<A extends ApproverKey>(approvers: ReadonlyMap<string, A>, index: RestrictionIndex): ReadonlyMap<string, A> {
  if (index.approverIds.size === 0 && index.publicKeys.size === 0) return approvers;
  let out: Map<string, A> | undefined;
  for (const [id, a] of approvers) {
    if (a.revoked || !approverRestricted(index, id, a.publicKey)) continue;
    out ??= new Map(approvers);
    out.set(id, { ...a, revoked: true });
  }
  return out ?? approvers;
}
