/**
 * @module policy/amounts
 * Shared arithmetic of the amount rules: asset matching and windowed spend, in bigint.
 */
import type { IntentStatus } from '../schemas/approval.js';
import type { NormalizedIntent, OperationKind } from '../schemas/intent.js';
import { ValidationError } from '../errors.js';
import type { HistoryEntry } from './types.js';

const AMOUNT_RE = /^(0|[1-9][0-9]{0,77})$/;

/** Operations whose amount leaves the wallet and counts toward caps and budgets. */
export const OUTFLOW_OPS: ReadonlySet<OperationKind> = new Set(['transfer', 'issue', 'contract_call']);

/**
 * Statuses of an intent whose transaction went to the ledger: its amount is spent. Every other
 * counted status (allowed, pending_approvals, timelocked) is committed but not yet executed.
 */
export const EXECUTED_STATUSES: ReadonlySet<IntentStatus> = new Set(['submitted', 'confirmed']);

type AssetFields = Pick<NormalizedIntent, 'asset_symbol' | 'asset_issuer'>;

/** `native` when the intent names no asset, else `symbol|issuer`. */
export function assetKey(a: AssetFields): string {
  if (a.asset_symbol === undefined && a.asset_issuer === undefined) return 'native';
  return `${a.asset_symbol ?? ''}|${a.asset_issuer ?? ''}`;
}

/**
 * Does an asset filter of a rule match? `native` matches intents naming no asset; any other value
 * matches the asset symbol or the issuer. Without a filter, the intent's own asset is the filter
 * (caps never add up amounts of different assets).
 */
export function assetMatcher(ruleAsset: string | undefined, intent: AssetFields): (e: AssetFields) => boolean {
  if (ruleAsset === undefined) {
    const key = assetKey(intent);
    return (e) => assetKey(e) === key;
  }
  if (ruleAsset === 'native') return (e) => assetKey(e) === 'native';
  return (e) => e.asset_symbol === ruleAsset || e.asset_issuer === ruleAsset;
}

/** Statuses whose amount will never leave the wallet: they count toward no cap or budget. */
export const UNCOUNTED_STATUSES: ReadonlySet<IntentStatus> = new Set(['denied', 'failed', 'cancelled', 'expired']);

/**
 * Whether a history entry counts toward velocity caps and agent budgets at all: an outflow
 * (OUTFLOW_OPS) that was not denied, did not fail, was not cancelled and did not expire. The one counting rule: spendInWindow applies
 * it, and a service that aggregates history ahead of evaluatePolicy keeps only what it admits.
 *
 * @example
 * countsTowardCaps({ status: 'failed', op: 'transfer' }) // false
 */
export function countsTowardCaps(e: Pick<HistoryEntry, 'status' | 'op'>): boolean {
  return !UNCOUNTED_STATUSES.has(e.status) && OUTFLOW_OPS.has(e.op);
}

/**
 * Sum of the amounts of history entries that count (countsTowardCaps), match, are
 * not the intent being evaluated, and were created after `now - window` (`window` null =
 * lifetime). An entry exactly `window` seconds old is outside. An entry dated after `now` (another
 * service's clock running ahead) counts: a cap fails closed under clock skew.
 */
export function spendInWindow(
  history: readonly HistoryEntry[],
  opts: { now: number; windowSeconds: number | null; excludeId: string | undefined; match: (e: HistoryEntry) => boolean },
): bigint {
  const { executed, pending } = spendInWindowByState(history, opts);
  return executed + pending;
}

/**
 * spendInWindow split by where the amounts stand: `executed` (submitted or confirmed, see
 * EXECUTED_STATUSES) and `pending` (committed by intents not yet executed), so a refusal can say
 * which of the two it counted.
 */
export function spendInWindowByState(
  history: readonly HistoryEntry[],
  opts: { now: number; windowSeconds: number | null; excludeId: string | undefined; match: (e: HistoryEntry) => boolean },
): { executed: bigint; pending: bigint } {
  let executed = 0n;
  let pending = 0n;
  for (const e of history) {
    if (e.intentId === opts.excludeId) continue;
    if (!countsTowardCaps(e)) continue;
    if (opts.windowSeconds !== null && e.created_at <= opts.now - opts.windowSeconds) continue;
    if (!opts.match(e)) continue;
    if (typeof e.amount !== 'string' || !AMOUNT_RE.test(e.amount)) {
      throw new ValidationError('context', [{ path: `history.${e.intentId}.amount`, message: 'must be an integer decimal string' }]);
    }
    if (EXECUTED_STATUSES.has(e.status)) executed += BigInt(e.amount);
    else pending += BigInt(e.amount);
  }
  return { executed, pending };
}

/**
 * Approvers' distinct approve verdicts: all, only strong ones (`strongOnly`), or only strong ones
 * proven by a device-bound passkey (`'device_bound'`).
 */
export function approvers(
  approvals: readonly { approver_id: string; verdict: string; strong_auth: boolean; device_bound?: boolean }[],
  strongOnly: boolean | 'device_bound' = false,
): Set<string> {
  const ids = new Set<string>();
  for (const a of approvals) {
    if (a.verdict !== 'approve') continue;
    if (strongOnly && !a.strong_auth) continue;
    if (strongOnly === 'device_bound' && a.device_bound !== true) continue;
    ids.add(a.approver_id);
  }
  return ids;
}

/** EVM addresses compare case-insensitively (checksum casing); every other address exactly. */
export function sameAddress(a: string, b: string): boolean {
  const evm = /^0x[0-9a-fA-F]{40}$/;
  if (evm.test(a) && evm.test(b)) return a.toLowerCase() === b.toLowerCase();
  return a === b;
}
