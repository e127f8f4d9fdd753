import { sameAddress } from '../amounts.js';
import type { RuleInput, RuleModule } from '../types.js';

/**
 * Whether a list names the destination: as written, or by the account behind it (a tagged XRPL
 * X-address names its classic account plus a tag; the tag does not make it another beneficiary).
 */
function listed(addresses: readonly string[], input: RuleInput): boolean {
  return addresses.some((a) => sameAddress(a, input.intent.destination) || sameAddress(a, input.destination_account));
}

/** destination_allowlist: deny a destination outside `addresses`. */
export const destinationAllowlist: RuleModule<'destination_allowlist'> = {
  kind: 'destination_allowlist',
  evaluate: (rule, input, label) =>
    listed(rule.addresses, input)
      ? { effect: 'pass' }
      : {
          effect: 'deny',
          reason: `${label}: destination ${input.intent.destination} is not among the ${rule.addresses.length} allowed address(es)`,
        },
};

/** destination_blocklist: deny a destination inside `addresses`, or one whose account is. */
export const destinationBlocklist: RuleModule<'destination_blocklist'> = {
  kind: 'destination_blocklist',
  evaluate: (rule, input, label) =>
    listed(rule.addresses, input)
      ? {
          effect: 'deny',
          reason: `${label}: destination ${input.intent.destination}${input.destination_account !== input.intent.destination ? ` (account ${input.destination_account})` : ''} is blocked`,
        }
      : { effect: 'pass' },
};
