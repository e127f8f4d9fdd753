import type { RuleModule } from '../types.js';

/**
 * require_compliance_clearance: deny unless a valid clearance of the destination, signed by one of
 * `clearers`, was presented (verifyStatements decides compliance_cleared).
 */
export const requireComplianceClearance: RuleModule<'require_compliance_clearance'> = {
  kind: 'require_compliance_clearance',
  evaluate: (rule, input, label) => {
    if (input.compliance_cleared) return { effect: 'pass' };
    const n = rule.clearers?.length ?? 0;
    return {
      effect: 'deny',
      reason:
        n === 0
          ? `${label}: compliance clearance is required and this rule names no clearer key, so no clearance can meet it`
          : `${label}: compliance clearance is required: a valid clearance of the destination from one of ${n} clearer key(s)`,
    };
  },
};
