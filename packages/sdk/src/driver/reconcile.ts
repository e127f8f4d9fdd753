/**
 * @module driver/reconcile
 * The comparison behind /wallets/{id}/reconcile and `vault provision`: a wallet descriptor against
 * the control state the ledger reports (ChainDriver.controlState). Pure; the callers do the I/O.
 */
import { canonicalize } from '../canonical.js';
import { walletMembers, type WalletDescriptor } from '../schemas/wallet.js';
import type { ControlState } from './types.js';

export interface ControlCheck {
  /** `address`, `quorum`, `members.<address>` or `masterKeyEnabled`. */
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
  const drift = checked.filter((c) => !c.ok);
  return { clean: drift.length === 0, checked, drift };
}
