/**
 * @module destination
 * An intent's addresses, checked and written in one form for the wallet's chain before its id is
 * computed: the control plane (creating the intent) and the signer (recomputing its id) call the
 * same function, so one address always makes one intent and both services agree on its id.
 */
import { normalizeIntent } from './digest.js';
import type { ChainDriver } from './driver/types.js';
import { ValidationError } from './errors.js';
import type { NormalizedIntent } from './schemas/intent.js';

/**
 * Validates `intent.destination` with the wallet's driver and returns the intent with the
 * driver's normalised form of it (EIP-55 checksum on EVM chains; on XRPL the classic address, or
 * the X-address itself when it carries a destination tag). `asset_issuer` is normalised the same
 * way when it is an address of the chain; other issuer forms (`CODE:ISSUER`, `ACCOUNT.CODE`, an
 * MPT id) are left to the driver's build. Every operation's destination must be an address of
 * the chain (the network_separation guard demands it at execution too); for mpt_create and
 * account_flags, which act on the wallet itself, give the wallet's address.
 *
 * Throws a ValidationError naming `destination` when it is not an address of `chain`: malformed
 * for the chain (an EVM address on an XRPL wallet), or well-formed but of another network by its
 * own encoding (the valid result's `network`: an XRPL X-address of mainnet on a testnet wallet). These are the
 * ledger-free parts of the network_separation guard, refused at creation with the reason instead
 * of an intent that only execute blocks. The same for an `asset_issuer` that is an address of the
 * chain's family but of another network. Returns the same object when nothing changes (the common
 * case costs one driver call), else a new normalised intent.
 *
 * @example
 * const intent = normalizeDestination(normalizeIntent(body), driver, wallet.chain)
 * const id = intentId(intent)
 */
export function normalizeDestination(
  intent: NormalizedIntent,
  driver: Pick<ChainDriver, 'validateAddress'>,
  chain: string,
): NormalizedIntent {
  const n = normalizeIntent(intent);
  const dest = driver.validateAddress({ chain, address: n.destination });
  if (!dest.valid) {
    throw new ValidationError('intent', [{ path: 'destination', message: `not an address on ${chain}: ${dest.reason}` }]);
  }
  refuseForeignNetwork(dest.network, chain, n.destination, 'destination');
  let issuer = n.asset_issuer;
  if (issuer !== undefined) {
    const check = driver.validateAddress({ chain, address: issuer });
    if (check.valid) {
      refuseForeignNetwork(check.network, chain, issuer, 'asset_issuer');
      issuer = check.normalized;
    }
  }
  if (dest.normalized === n.destination && issuer === n.asset_issuer) return n;
  // Same members in the same order; validated again, so a driver's normalised form must itself
  // be a valid destination.
  return normalizeIntent({ ...n, destination: dest.normalized, ...(issuer !== undefined ? { asset_issuer: issuer } : {}) });
}

/** An address whose own encoding names another network than `chain` (same wording as the guard). */
function refuseForeignNetwork(network: string | null, chain: string, address: string, path: string): void {
  if (network !== null && network !== chain) {
    throw new ValidationError('intent', [{ path, message: `${address} belongs to ${network}, but the wallet is on ${chain}` }]);
  }
}

/**
 * The account the destination's funds reach, as the wallet's driver reads the address (an XRPL
 * X-address with a tag: its classic account), for `PolicyContext.destination_account`. Both
 * services call this, so a policy list matches the same account at creation and at the signer.
 *
 * @example
 * evaluatePolicy(policy, intent, { now, destination_account: destinationAccount(driver, wallet.chain, intent.destination) })
 */
export function destinationAccount(driver: Pick<ChainDriver, 'validateAddress'>, chain: string, destination: string): string {
  const check = driver.validateAddress({ chain, address: destination });
  return check.valid ? (check.account ?? check.normalized) : destination;
}
