import type { RuleKind } from '../../schemas/policy.js';
import type { RuleModule } from '../types.js';
import { agentBudgetCeiling } from './agent-budget-ceiling.js';
import { allowOperations } from './allow-operations.js';
import { alwaysAllow } from './always-allow.js';
import { approvalThreshold } from './approval-threshold.js';
import { dailyVelocityCap } from './daily-velocity-cap.js';
import { destinationAllowlist, destinationBlocklist } from './destination-lists.js';
import { hardCeiling } from './hard-ceiling.js';
import { operatingWindowUtc } from './operating-window-utc.js';
import { requireAttestation } from './require-attestation.js';
import { requireComplianceClearance } from './require-compliance-clearance.js';
import { requireHumanApproverForAgentInitiated } from './require-human-approver.js';
import { requireTag } from './require-tag.js';
import { timelockAbove } from './timelock-above.js';

/** Every rule module by kind; the type makes a missing kind a compile error. */
export const RULES: { readonly [K in RuleKind]: RuleModule<K> } = {
  always_allow: alwaysAllow,
  require_compliance_clearance: requireComplianceClearance,
  destination_allowlist: destinationAllowlist,
  destination_blocklist: destinationBlocklist,
  daily_velocity_cap: dailyVelocityCap,
  approval_threshold: approvalThreshold,
  timelock_above: timelockAbove,
  hard_ceiling: hardCeiling,
  require_attestation: requireAttestation,
  require_human_approver_for_agent_initiated: requireHumanApproverForAgentInitiated,
  agent_budget_ceiling: agentBudgetCeiling,
  operating_window_utc: operatingWindowUtc,
  require_tag: requireTag,
  allow_operations: allowOperations,
};

export { isAgentInitiated, AGENT_PREFIX } from './require-human-approver.js';
export { nextWindowOpening, windowOpenAt } from './operating-window-utc.js';
export { DEFAULT_VELOCITY_WINDOW } from './daily-velocity-cap.js';
