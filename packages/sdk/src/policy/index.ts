export { evaluatePolicy, parsePolicy, policyLookback, policyWindows, preparePolicy } from './engine.js';
export type { HistoryEntry, PolicyContext, RuleInput, RuleModule, RuleOutcome } from './types.js';
export { RULES, isAgentInitiated, AGENT_PREFIX, nextWindowOpening, windowOpenAt, DEFAULT_VELOCITY_WINDOW } from './rules/index.js';
export { assetKey, countsTowardCaps, spendInWindow, spendInWindowByState, sameAddress, OUTFLOW_OPS, EXECUTED_STATUSES, UNCOUNTED_STATUSES } from './amounts.js';
export { rulesCountingApprover, type CountingRule } from './counting.js';
