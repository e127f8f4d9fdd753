import type { RuleModule } from '../types.js';

/** require_compliance_clearance: deny unless the compliance check cleared the intent. */
export const requireComplianceClearance: RuleModule<'require_compliance_clearance'> = {
  kind: 'require_compliance_clearance',
  evaluate: (_rule, input, label) =>
    input.compliance_cleared
      ? { effect: 'pass' }
      : { effect: 'deny', reason: `${label}: compliance clearance is required and was not given` },
};
