/**
 * @module driver/fee
 * The fee cap a signer applies before it signs (issue #20: a control plane picked a 2 XRP fee and
 * got it signed). Pure: the signer passes its own driver, the payload it rebuilt itself and the
 * trust file's `max_fee`; the conformance suite and the tests call the same function.
 */
import { VaultError } from '../errors.js';
import type { BuiltPayload, ChainDriver, FeeQuote } from './types.js';

export type FeeCheck =
  | {
      ok: true;
      fee: FeeQuote;
      cap: bigint;
      /** Where the cap came from: the trust file's `max_fee`, or the driver's `defaultMaxFee`. */
      capSource: 'max_fee' | 'driver_default';
    }
  | { ok: false; message: string };

/**
 * Is the most `built` can pay in fees within the cap? The cap is `maxFee` (the signer's trust file)
 * when set, else the driver's `defaultMaxFee`. Fails closed: a driver that cannot state the fee
 * of its payloads (no `fee`, or `fee` throws) gets no cap it could pass.
 *
 * @example
 * const check = checkFee(driver, built, trusted.maxFee)
 * if (!check.ok) refuse('chain', check.message)
 */
export function checkFee(driver: ChainDriver, built: BuiltPayload, maxFee: bigint | undefined): FeeCheck {
  if (typeof driver.fee !== 'function') {
    return { ok: false, message: `driver ${driver.name} cannot state the fee of its payloads, so no fee cap can hold: refusing to sign` };
  }
  const cap = maxFee ?? driver.defaultMaxFee;
  if (cap === undefined) return { ok: false, message: `driver ${driver.name} has no default fee cap and the trust file sets no max_fee` };
  let fee: FeeQuote;
  try {
    fee = driver.fee({ built });
  } catch (e) {
    // A payload whose fee the driver cannot bound is one whose fee nobody can cap.
    return { ok: false, message: `driver ${driver.name} cannot bound the fee of this payload: ${e instanceof VaultError ? e.shortMessage : 'driver fault'}` };
  }
  if (typeof fee?.amount !== 'bigint' || fee.amount < 0n) return { ok: false, message: `driver ${driver.name} stated no fee for this payload` };
  const capSource = maxFee === undefined ? 'driver_default' : 'max_fee';
  if (fee.amount > cap) {
    const from = capSource === 'max_fee' ? `the trust file's max_fee ${cap}` : `${driver.name}'s default cap ${cap} (the trust file sets no max_fee)`;
    return { ok: false, message: `the payload pays up to ${fee.amount} ${fee.unit} in fees, above ${from}` };
  }
  return { ok: true, fee, cap, capSource };
}
