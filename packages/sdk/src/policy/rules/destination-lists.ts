import { sameAddress } from '../amounts.js';
import type { RuleModule } from '../types.js';

/** destination_allowlist: deny a destination outside `addresses`. */
export const destinationAllowlist: RuleModule<'destination_allowlist'> = {
  kind: 'destination_allowlist',
  evaluate: (rule, input, label) =>
    rule.addresses.some((a) => sameAddress(a, input.intent.destination))
      ? { effect: 'pass' }
      : {
          effect: 'deny',
          reason: `${label}: destination ${input.intent.destination} is not among the ${rule.addresses.length} allowed address(es)`,
        },
};

/** destination_blocklist: deny a destination inside `addresses`. */
export const destinationBlocklist: RuleModule<'destination_blocklist'> = {
  kind: 'destination_blocklist',
  evaluate: (rule, input, label) =>
    rule.addresses.some((a) => sameAddress(a, input.intent.destination))
      ? { effect: 'deny', reason: `${label}: destination ${input.intent.destination} is blocked` }
      : { effect: 'pass' },
};
