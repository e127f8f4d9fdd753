/**
 * @module driver/reconcile
 * The comparison behind /wallets/{id}/reconcile and `vault provision`: a wallet descriptor against
 * the control state the ledger reports (ChainDriver.controlState). Pure; the callers do the I/O.
 */
import { canonicalize } from '../canonical.js';
import { walletMembers, type WalletDescriptor } from '../schemas/wallet.js';
import type { ControlState } from './types.js';

export interface ControlCheck {
  /** `address`, `quorum`, `members.<address>`, `masterKeyEnabled`, or a setting (`modules`, `guard`, `version`…). */
  field: string;
  expected: unknown;
  actual: unknown;
  ok: boolean;
}

export interface ControlComparison {
  clean: boolean;
  checked: ControlCheck[];
  /** The checks that failed. */
  drift: ControlCheck[];
}

/**
 * Compares a descriptor with the ledger's control state: the account (or Safe) address, the
 * quorum, every member's weight both ways (missing on the ledger, or on the ledger but not in the
 * descriptor), and that no master key can act alone. Addresses compare case-insensitively.
 *
 * @example
 * const { clean, drift } = compareControl(wallet, await driver.controlState({ wallet }))
 */
export function compareControl(wallet: WalletDescriptor, state: ControlState): ControlComparison {
  const { members, quorum } = walletMembers(wallet);
  const checked: ControlCheck[] = [];
  const same = (a: unknown, b: unknown) => canonicalize(a ?? null) === canonicalize(b ?? null);
  const check = (field: string, expected: unknown, actual: unknown, ok = same(expected, actual)) => checked.push({ field, expected, actual, ok });
  const address = wallet.control.kind === 'native_multisig' ? wallet.control.address : wallet.control.safe;
  check('address', address, state.address, address.toLowerCase() === state.address.toLowerCase());
  check('quorum', quorum, state.quorum);
  const onLedger = new Map(state.members.map((m) => [m.address.toLowerCase(), m.weight]));
  for (const m of members) check(`members.${m.address}`, m.weight, onLedger.get(m.address.toLowerCase()) ?? null);
  for (const m of state.members) {
    if (!members.some((x) => x.address.toLowerCase() === m.address.toLowerCase())) check(`members.${m.address}`, null, m.weight);
  }
  if (state.masterKeyEnabled !== undefined) check('masterKeyEnabled', false, state.masterKeyEnabled);
  if (wallet.control.kind === 'evm_safe' && state.settings) compareSafeSettings(wallet.control, state.settings, check);
  const drift = checked.filter((c) => !c.ok);
  return { clean: drift.length === 0, checked, drift };
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/**
 * A Safe's settings against its descriptor: the modules and guard must be exactly the ones the
 * operator allowed (none unless named), no module guard, and the version, singleton (an upgrade
 * changes it) and fallback handler as deployed or adopted, when the descriptor records them.
 */
function compareSafeSettings(
  control: Extract<WalletDescriptor['control'], { kind: 'evm_safe' }>,
  settings: NonNullable<ControlState['settings']>,
  check: (field: string, expected: unknown, actual: unknown, ok?: boolean) => void,
): void {
  const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
  const set = (v: unknown) => (Array.isArray(v) ? v.map(lower).sort() : v);
  const sameAddr = (field: string, expected: unknown, actual: unknown) => check(field, expected, actual ?? null, lower(expected) === lower(actual ?? null));
  const allowed = control.modules ?? [];
  check('modules', allowed, settings['modules'] ?? null, canonicalize(set(allowed)) === canonicalize(set(settings['modules'] ?? null)));
  sameAddr('guard', control.guard ?? ZERO_ADDRESS, settings['guard']);
  if ('module_guard' in settings) sameAddr('module_guard', ZERO_ADDRESS, settings['module_guard']);
  if (control.version !== undefined) check('version', control.version, settings['version'] ?? null);
  if (control.singleton !== undefined) sameAddr('singleton', control.singleton, settings['singleton']);
  if (control.fallback_handler !== undefined) sameAddr('fallback_handler', control.fallback_handler, settings['fallback_handler']);
}
