import type { RuleModule } from '../types.js';

/** require_attestation: deny unless a valid attestation (by one of `attesters`) was presented. */
export const requireAttestation: RuleModule<'require_attestation'> = {
  kind: 'require_attestation',
  evaluate: (rule, input, label) =>
    input.attestation_valid
      ? { effect: 'pass' }
      : {
          effect: 'deny',
          reason: `${label}: a valid attestation from one of ${rule.attesters.length} attester key(s) is required`,
        },
};
