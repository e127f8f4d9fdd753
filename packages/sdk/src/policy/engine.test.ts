import { describe, expect, it } from 'vitest';
import { signApproval, verifyApprovals, type CountedApproval } from '../approvals.js';
import { intentId, normalizeIntent, policyDigest } from '../digest.js';
import { ed25519PublicKey } from '../ed25519.js';
import { ErrorCode, UnknownRuleError, ValidationError } from '../errors.js';
import {
  STATUS_BY_DECISION,
  type Decision,
  type DecisionKind,
  type IntentRequest,
  type IntentStatus,
  type PolicySet,
  type Rule,
  type SignedApproval,
} from '../schemas/index.js';
import { evaluatePolicy, parsePolicy, policyLookback, policyWindows, preparePolicy } from './engine.js';
import type { HistoryEntry, PolicyContext } from './types.js';

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

const WALLET = 'w1';
const DEST = 'rDestinationAccount1111111111111';
/** Unix seconds of an ISO-8601 UTC instant. */
const utc = (iso: string): number => Date.parse(iso) / 1000;
/** Thursday 2026-01-01 12:00:00 UTC. */
const NOW = utc('2026-01-01T12:00:00Z');
const DAY = 86400;

const TWO_64 = '18446744073709551616'; // 2^64: past every 64-bit integer
const TWO_64_PLUS_1 = '18446744073709551617';
const TWO_63 = '9223372036854775808';

const seed = (n: number): Uint8Array => new Uint8Array(32).fill(n);
const KEYS = { alice: seed(1), bob: seed(2), carol: seed(3), mallory: seed(4) } as const;
type Who = keyof typeof KEYS;

function request(over: Partial<IntentRequest> = {}): IntentRequest {
  return { wallet: WALLET, destination: DEST, amount: '100', ...over };
}

function policy(rules: Rule[], over: Partial<PolicySet> = {}): PolicySet {
  return { wallet: WALLET, version: 1, rules, ...over };
}

interface ApprovalSpec {
  who: Who;
  verdict?: 'approve' | 'reject';
  strong?: boolean;
  /** As verifyApprovals' `counted` marks a strong approval proven by a device-bound passkey. */
  device_bound?: boolean;
}

function approvalsFor(req: IntentRequest, specs: readonly ApprovalSpec[], at = NOW - 60): CountedApproval[] {
  const id = intentId(req);
  return specs.map(({ who, verdict = 'approve', strong = false, device_bound }) => ({
    ...signApproval({ approver_id: who, intent: id, verdict, at, strong_auth: strong }, KEYS[who]),
    ...(device_bound !== undefined ? { device_bound } : {}),
  }));
}

let historySeq = 0;
/** One earlier intent of the wallet, `age` seconds before NOW. */
function past(amount: string, age: number, over: Partial<HistoryEntry> = {}): HistoryEntry {
  historySeq += 1;
  return {
    intentId: `int_${historySeq.toString(16).padStart(64, '0')}`,
    created_at: NOW - age,
    amount,
    status: 'confirmed',
    initiator: 'operator',
    op: 'transfer',
    ...over,
  };
}

interface Want {
  decision: DecisionKind;
  required_weight?: number;
  current_weight?: number;
  /** Defaults: `now` for allow, 0 for deny; required for delay. */
  not_before?: number;
  /** A substring one of the reasons must contain. */
  reason: string;
}

interface Case {
  name: string;
  rules: Rule[];
  intent?: Partial<IntentRequest>;
  ctx?: Omit<PolicyContext, 'now' | 'approvals'> & { now?: number };
  approvals?: ApprovalSpec[];
  want: Want;
}

function run(c: Pick<Case, 'rules' | 'intent' | 'ctx' | 'approvals'>): { decision: Decision; now: number } {
  const req = request(c.intent);
  const now = c.ctx?.now ?? NOW;
  const ctx: PolicyContext = { ...c.ctx, now, approvals: approvalsFor(req, c.approvals ?? []) };
  return { decision: evaluatePolicy(policy(c.rules), req, ctx), now };
}

const REASON_PREFIX = /^(?:([a-z_]+)\[(\d+)\]|policy|approvals): /;

/** Every non-allow reason names its rule as `<kind>[<index>]:` (the kind at that index) or `policy:` / `approvals:`. */
function expectReasonsNameTheirRule(d: Decision, rules: readonly Rule[]): void {
  if (d.decision === 'allow') return;
  expect(d.reasons.length).toBeGreaterThan(0);
  for (const reason of d.reasons) {
    const m = REASON_PREFIX.exec(reason);
    expect(m, reason).not.toBeNull();
    if (m?.[1] !== undefined) expect(rules[Number(m[2])]?.rule, reason).toBe(m[1]);
  }
}

function check(c: Case): Decision {
  const { decision: d, now } = run(c);
  const w = c.want;
  const notBefore = w.not_before ?? (w.decision === 'deny' ? 0 : now);
  expect({
    decision: d.decision,
    required_weight: d.required_weight,
    current_weight: d.current_weight,
    not_before: d.not_before,
  }).toEqual({
    decision: w.decision,
    required_weight: w.required_weight ?? 0,
    current_weight: w.current_weight ?? 0,
    not_before: notBefore,
  });
  expect(d.reasons.some((r) => r.includes(w.reason)), `no reason contains ${JSON.stringify(w.reason)} in ${JSON.stringify(d.reasons)}`).toBe(true);
  expectReasonsNameTheirRule(d, c.rules);
  return d;
}

const ALLOWED = 'policy: allowed by';

// ---------------------------------------------------------------------------------------------
// The fourteen rules, each at and one past its threshold
// ---------------------------------------------------------------------------------------------

const ruleCases: Record<string, Case[]> = {
  always_allow: [
    { name: 'allows on its own', rules: [{ rule: 'always_allow' }], want: { decision: 'allow', reason: 'policy: allowed by 1 rule(s) of policy v1' } },
    {
      name: 'accepts extra properties on a rule',
      rules: [{ rule: 'always_allow', note: 'explicit' } as Rule],
      want: { decision: 'allow', reason: ALLOWED },
    },
  ],
  require_compliance_clearance: [
    {
      name: 'cleared: allows',
      rules: [{ rule: 'require_compliance_clearance' }],
      ctx: { compliance_cleared: true },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'not cleared: denies',
      rules: [{ rule: 'require_compliance_clearance' }],
      ctx: { compliance_cleared: false },
      want: { decision: 'deny', reason: 'require_compliance_clearance[0]: compliance clearance is required' },
    },
    {
      name: 'absent flag counts as not cleared',
      rules: [{ rule: 'always_allow' }, { rule: 'require_compliance_clearance' }],
      want: { decision: 'deny', reason: 'require_compliance_clearance[1]:' },
    },
  ],
  destination_allowlist: [
    {
      name: 'listed destination: allows',
      rules: [{ rule: 'destination_allowlist', addresses: ['rOther', DEST] }],
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'unlisted destination: denies and counts the list',
      rules: [{ rule: 'destination_allowlist', addresses: ['rOther', 'rThird'] }],
      want: { decision: 'deny', reason: `destination_allowlist[0]: destination ${DEST} is not among the 2 allowed address(es)` },
    },
    {
      name: 'non-EVM addresses compare exactly (case matters)',
      rules: [{ rule: 'destination_allowlist', addresses: [DEST.toLowerCase()] }],
      want: { decision: 'deny', reason: 'destination_allowlist[0]:' },
    },
    {
      name: 'EVM addresses compare case-insensitively',
      rules: [{ rule: 'destination_allowlist', addresses: ['0xabcdefabcdefabcdefabcdefabcdefabcdefabcd'] }],
      intent: { destination: '0xABCDEFabcdefABCDEFabcdefABCDEFabcdefABCD' },
      want: { decision: 'allow', reason: ALLOWED },
    },
  ],
  destination_blocklist: [
    {
      name: 'unlisted destination: allows',
      rules: [{ rule: 'destination_blocklist', addresses: ['rBad'] }],
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'listed destination: denies',
      rules: [{ rule: 'destination_blocklist', addresses: ['rBad', DEST] }],
      want: { decision: 'deny', reason: `destination_blocklist[0]: destination ${DEST} is blocked` },
    },
    {
      name: 'EVM checksum casing does not evade the blocklist',
      rules: [{ rule: 'destination_blocklist', addresses: ['0xABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD'] }],
      intent: { destination: '0xabcdefabcdefabcdefabcdefabcdefabcdefabcd' },
      want: { decision: 'deny', reason: 'destination_blocklist[0]: destination 0xabcdefabcdefabcdefabcdefabcdefabcdefabcd is blocked' },
    },
  ],
  daily_velocity_cap: [
    {
      name: 'spent + amount equal to the limit: allows',
      rules: [{ rule: 'daily_velocity_cap', limit: '1000' }],
      intent: { amount: '400' },
      ctx: { history: [past('600', 3600)] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'one over the limit: denies with spent, amount, total and limit',
      rules: [{ rule: 'daily_velocity_cap', limit: '1000' }],
      intent: { amount: '401' },
      ctx: { history: [past('600', 3600)] },
      want: { decision: 'deny', reason: 'daily_velocity_cap[0]: in the last 86400s 600 executed + 0 pending (intents not yet executed) + 401 = 1001 exceeds limit 1000' },
    },
    {
      name: 'bigint: a total of exactly 2^64 is allowed',
      rules: [{ rule: 'daily_velocity_cap', limit: TWO_64 }],
      intent: { amount: '1' },
      ctx: { history: [past('18446744073709551615', 60)] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'bigint: a total of 2^64 + 1 is denied',
      rules: [{ rule: 'daily_velocity_cap', limit: TWO_64 }],
      intent: { amount: '2' },
      ctx: { history: [past('18446744073709551615', 60)] },
      want: { decision: 'deny', reason: `in the last 86400s 18446744073709551615 executed + 0 pending (intents not yet executed) + 2 = ${TWO_64_PLUS_1} exceeds limit ${TWO_64}` },
    },
    {
      name: 'a single amount above the limit with no history: denies',
      rules: [{ rule: 'daily_velocity_cap', limit: TWO_64 }],
      intent: { amount: TWO_64_PLUS_1 },
      want: { decision: 'deny', reason: `in the last 86400s 0 executed + 0 pending (intents not yet executed) + ${TWO_64_PLUS_1} = ${TWO_64_PLUS_1} exceeds limit ${TWO_64}` },
    },
  ],
  approval_threshold: [
    {
      name: 'amount equal to `above` (2^64): needs no approvals',
      rules: [{ rule: 'approval_threshold', above: TWO_64, required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }] }],
      intent: { amount: TWO_64 },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'one above (2^64 + 1): requires the weight',
      rules: [{ rule: 'approval_threshold', above: TWO_64, required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }] }],
      intent: { amount: TWO_64_PLUS_1 },
      want: {
        decision: 'require_approvals',
        required_weight: 2,
        current_weight: 0,
        reason: `approval_threshold[0]: amount ${TWO_64_PLUS_1} is above ${TWO_64}; approval weight 0 of 2 required`,
      },
    },
    {
      name: 'one above with one of two approvals: weight 1 of 2',
      rules: [{ rule: 'approval_threshold', above: TWO_64, required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }] }],
      intent: { amount: TWO_64_PLUS_1 },
      approvals: [{ who: 'alice' }],
      want: { decision: 'require_approvals', required_weight: 2, current_weight: 1, reason: 'approval weight 1 of 2 required' },
    },
    {
      name: 'one above with the full weight: allows',
      rules: [{ rule: 'approval_threshold', above: TWO_64, required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }] }],
      intent: { amount: TWO_64_PLUS_1 },
      approvals: [{ who: 'alice' }, { who: 'bob' }],
      want: { decision: 'allow', required_weight: 2, current_weight: 2, reason: ALLOWED },
    },
  ],
  timelock_above: [
    {
      name: 'amount equal to `above`: no timelock',
      rules: [{ rule: 'timelock_above', above: TWO_64, seconds: 3600 }],
      intent: { amount: TWO_64 },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'one above: delays until created_at + seconds',
      rules: [{ rule: 'timelock_above', above: TWO_64, seconds: 3600 }],
      intent: { amount: TWO_64_PLUS_1 },
      want: {
        decision: 'delay',
        not_before: NOW + 3600,
        reason: `timelock_above[0]: amount ${TWO_64_PLUS_1} is above ${TWO_64}; timelocked 3600s until ${NOW + 3600} (2026-01-01T13:00:00.000Z)`,
      },
    },
    {
      name: 'counts from created_at, not now: one second left',
      rules: [{ rule: 'timelock_above', above: '1000', seconds: 3600 }],
      intent: { amount: '1001' },
      ctx: { created_at: NOW - 3599 },
      want: { decision: 'delay', not_before: NOW + 1, reason: `until ${NOW + 1}` },
    },
    {
      name: 'released exactly at created_at + seconds',
      rules: [{ rule: 'timelock_above', above: '1000', seconds: 3600 }],
      intent: { amount: '1001' },
      ctx: { created_at: NOW - 3600 },
      want: { decision: 'allow', reason: ALLOWED },
    },
  ],
  hard_ceiling: [
    { name: 'at max: allows', rules: [{ rule: 'hard_ceiling', max: '1000' }], intent: { amount: '1000' }, want: { decision: 'allow', reason: ALLOWED } },
    {
      name: 'one above max: denies',
      rules: [{ rule: 'hard_ceiling', max: '1000' }],
      intent: { amount: '1001' },
      want: { decision: 'deny', reason: 'hard_ceiling[0]: amount 1001 exceeds the hard ceiling 1000' },
    },
    { name: 'at 2^64: allows', rules: [{ rule: 'hard_ceiling', max: TWO_64 }], intent: { amount: TWO_64 }, want: { decision: 'allow', reason: ALLOWED } },
    {
      name: 'at 2^64 + 1: denies (no float rounding)',
      rules: [{ rule: 'hard_ceiling', max: TWO_64 }],
      intent: { amount: TWO_64_PLUS_1 },
      want: { decision: 'deny', reason: `hard_ceiling[0]: amount ${TWO_64_PLUS_1} exceeds the hard ceiling ${TWO_64}` },
    },
    {
      name: 'a 78-digit amount against a 77-digit max',
      rules: [{ rule: 'hard_ceiling', max: '9'.repeat(77) }],
      intent: { amount: '1' + '0'.repeat(77) },
      want: { decision: 'deny', reason: `exceeds the hard ceiling ${'9'.repeat(77)}` },
    },
  ],
  require_attestation: [
    {
      name: 'valid attestation: allows',
      rules: [{ rule: 'require_attestation', attesters: ['11'.repeat(32)] }],
      ctx: { attestation_valid: true },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'no valid attestation: denies and counts the attester keys',
      rules: [{ rule: 'require_attestation', attesters: ['11'.repeat(32), '22'.repeat(32)] }],
      want: { decision: 'deny', reason: 'require_attestation[0]: a valid attestation from one of 2 attester key(s) is required' },
    },
  ],
  require_human_approver_for_agent_initiated: [
    {
      name: 'operator-initiated: not applicable',
      rules: [{ rule: 'require_human_approver_for_agent_initiated' }],
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'device-initiated: not applicable',
      rules: [{ rule: 'require_human_approver_for_agent_initiated' }],
      intent: { initiator: 'device:ab12' },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'a device whose id merely says "agent" is not an agent',
      rules: [{ rule: 'require_human_approver_for_agent_initiated' }],
      intent: { initiator: 'device:agent' },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'app-initiated (an API key holder, like an agent): needs 1 strong approval',
      rules: [{ rule: 'require_human_approver_for_agent_initiated' }],
      intent: { initiator: 'app:billing' },
      want: { decision: 'require_approvals', required_weight: 1, current_weight: 0, reason: 'initiated by app:billing; 0 of 1 strong-auth' },
    },
    {
      name: 'agent with no approval: needs 1 strong approval (default min_strong)',
      rules: [{ rule: 'require_human_approver_for_agent_initiated' }],
      intent: { initiator: 'agent:bot' },
      want: {
        decision: 'require_approvals',
        required_weight: 1,
        current_weight: 0,
        reason: 'require_human_approver_for_agent_initiated[0]: initiated by agent:bot; 0 of 1 strong-auth human approval(s)',
      },
    },
    {
      name: 'agent with a weak (strong_auth false) approval: still 0 of 1',
      rules: [{ rule: 'require_human_approver_for_agent_initiated' }],
      intent: { initiator: 'agent:bot' },
      approvals: [{ who: 'alice', strong: false }],
      want: { decision: 'require_approvals', required_weight: 1, current_weight: 0, reason: '0 of 1 strong-auth' },
    },
    {
      name: 'agent with one strong approval: allows',
      rules: [{ rule: 'require_human_approver_for_agent_initiated' }],
      intent: { initiator: 'agent:bot' },
      approvals: [{ who: 'alice', strong: true }],
      want: { decision: 'allow', required_weight: 1, current_weight: 1, reason: ALLOWED },
    },
    {
      name: 'min_strong 2 with one strong approver given twice: 1 of 2',
      rules: [{ rule: 'require_human_approver_for_agent_initiated', min_strong: 2 }],
      intent: { initiator: 'agent:bot' },
      approvals: [{ who: 'alice', strong: true }, { who: 'alice', strong: true }],
      want: { decision: 'require_approvals', required_weight: 2, current_weight: 1, reason: '1 of 2 strong-auth human approval(s)' },
    },
    {
      name: 'min_strong 2 with two distinct strong approvers: allows',
      rules: [{ rule: 'require_human_approver_for_agent_initiated', min_strong: 2 }],
      intent: { initiator: 'agent:bot' },
      approvals: [{ who: 'alice', strong: true }, { who: 'bob', strong: true }],
      want: { decision: 'allow', required_weight: 2, current_weight: 2, reason: ALLOWED },
    },
    {
      name: 'device_bound_above: at the amount, a synced passkey approval counts',
      rules: [{ rule: 'require_human_approver_for_agent_initiated', device_bound_above: '1000' }],
      intent: { initiator: 'agent:bot', amount: '1000' },
      approvals: [{ who: 'alice', strong: true, device_bound: false }],
      want: { decision: 'allow', required_weight: 1, current_weight: 1, reason: ALLOWED },
    },
    {
      name: 'attack: a synced passkey where device-bound is required',
      rules: [{ rule: 'require_human_approver_for_agent_initiated', device_bound_above: '1000' }],
      intent: { initiator: 'agent:bot', amount: '1001' },
      approvals: [{ who: 'alice', strong: true, device_bound: false }],
      want: {
        decision: 'require_approvals',
        required_weight: 1,
        current_weight: 0,
        reason: 'require_human_approver_for_agent_initiated[0]: initiated by agent:bot; 0 of 1 device-bound passkey approval(s) (amount 1001 is above 1000)',
      },
    },
    {
      name: 'device_bound_above: an approval with no passkey proof is not device-bound',
      rules: [{ rule: 'require_human_approver_for_agent_initiated', device_bound_above: '0' }],
      intent: { initiator: 'agent:bot', amount: '5' },
      approvals: [{ who: 'alice', strong: true }],
      want: { decision: 'require_approvals', required_weight: 1, current_weight: 0, reason: '0 of 1 device-bound passkey' },
    },
    {
      name: 'device_bound_above: a device-bound passkey approval counts above it',
      rules: [{ rule: 'require_human_approver_for_agent_initiated', min_strong: 2, device_bound_above: '0' }],
      intent: { initiator: 'agent:bot', amount: '5' },
      approvals: [{ who: 'alice', strong: true, device_bound: true }, { who: 'bob', strong: true, device_bound: false }],
      want: { decision: 'require_approvals', required_weight: 2, current_weight: 1, reason: '1 of 2 device-bound passkey' },
    },
    {
      name: 'device_bound_above: device_bound without strong_auth does not count',
      rules: [{ rule: 'require_human_approver_for_agent_initiated', device_bound_above: '0' }],
      intent: { initiator: 'agent:bot', amount: '5' },
      approvals: [{ who: 'alice', strong: false, device_bound: true }],
      want: { decision: 'require_approvals', required_weight: 1, current_weight: 0, reason: '0 of 1 device-bound passkey' },
    },
  ],
  agent_budget_ceiling: [
    {
      name: 'operator-initiated: not applicable however large',
      rules: [{ rule: 'agent_budget_ceiling', budget: '10' }],
      intent: { amount: TWO_64 },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'agent spend + amount equal to the budget (2^64): allows',
      rules: [{ rule: 'agent_budget_ceiling', budget: TWO_64 }],
      intent: { initiator: 'agent:bot', amount: TWO_63 },
      ctx: { history: [past(TWO_63, 100 * DAY, { initiator: 'agent:bot' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'one over the budget: denies with spent, span, amount, total and budget',
      rules: [{ rule: 'agent_budget_ceiling', budget: TWO_64 }],
      intent: { initiator: 'agent:bot', amount: '9223372036854775809' },
      ctx: { history: [past(TWO_63, 100 * DAY, { initiator: 'agent:bot' })] },
      want: {
        decision: 'deny',
        reason: `agent_budget_ceiling[0]: agent:bot spent ${TWO_63} (lifetime) + 9223372036854775809 = ${TWO_64_PLUS_1} exceeds budget ${TWO_64}`,
      },
    },
    {
      name: 'an app is budgeted like an agent, on its own spend',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000', window_seconds: null }],
      intent: { initiator: 'app:billing', amount: '1' },
      ctx: { history: [past('1000', DAY, { initiator: 'app:billing' }), past('1000', DAY, { initiator: 'agent:billing' })] },
      want: { decision: 'deny', reason: 'app:billing spent 1000 (lifetime) + 1 = 1001 exceeds budget 1000' },
    },
    {
      name: 'a rule naming agent:billing does not apply to app:billing',
      rules: [{ rule: 'agent_budget_ceiling', budget: '10', agent: 'agent:billing' }],
      intent: { initiator: 'app:billing', amount: '1000' },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'window_seconds null is lifetime: a year-old spend counts',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000', window_seconds: null }],
      intent: { initiator: 'agent:bot', amount: '1' },
      ctx: { history: [past('1000', 365 * DAY, { initiator: 'agent:bot' })] },
      want: { decision: 'deny', reason: 'agent:bot spent 1000 (lifetime) + 1 = 1001 exceeds budget 1000' },
    },
    {
      name: 'window_seconds 86400: an entry exactly 86400s old is outside',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000', window_seconds: DAY }],
      intent: { initiator: 'agent:bot', amount: '1' },
      ctx: { history: [past('1000', DAY, { initiator: 'agent:bot' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'window_seconds 86400: an entry 86399s old is inside',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000', window_seconds: DAY }],
      intent: { initiator: 'agent:bot', amount: '1' },
      ctx: { history: [past('1000', DAY - 1, { initiator: 'agent:bot' })] },
      want: { decision: 'deny', reason: 'agent:bot spent 1000 (last 86400s) + 1 = 1001 exceeds budget 1000' },
    },
    {
      name: 'each agent has its own budget: another agent’s and the operator’s spend do not count',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000' }],
      intent: { initiator: 'agent:bot', amount: '1000' },
      ctx: { history: [past('900', 60, { initiator: 'agent:other' }), past('900', 60)] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: '`agent` filter: applies to the named agent',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000', agent: 'agent:trader' }],
      intent: { initiator: 'agent:trader', amount: '1001' },
      want: { decision: 'deny', reason: 'agent_budget_ceiling[0]: agent:trader spent 0 (lifetime) + 1001 = 1001 exceeds budget 1000' },
    },
    {
      name: '`agent` filter: other agents pass',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000', agent: 'agent:trader' }],
      intent: { initiator: 'agent:other', amount: '1001' },
      want: { decision: 'allow', reason: ALLOWED },
    },
  ],
  operating_window_utc: [
    {
      name: 'one second before opening: delays to the opening',
      rules: [{ rule: 'operating_window_utc', start: '09:00', end: '17:00' }],
      ctx: { now: utc('2026-01-01T08:59:59Z') },
      want: {
        decision: 'delay',
        not_before: utc('2026-01-01T09:00:00Z'),
        reason: `operating_window_utc[0]: outside 09:00-17:00 UTC (every day); opens at ${utc('2026-01-01T09:00:00Z')} (2026-01-01T09:00:00.000Z)`,
      },
    },
    {
      name: 'at the opening: allows',
      rules: [{ rule: 'operating_window_utc', start: '09:00', end: '17:00' }],
      ctx: { now: utc('2026-01-01T09:00:00Z') },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'last second before closing: allows',
      rules: [{ rule: 'operating_window_utc', start: '09:00', end: '17:00' }],
      ctx: { now: utc('2026-01-01T16:59:59Z') },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'at the closing: delays to the next day’s opening',
      rules: [{ rule: 'operating_window_utc', start: '09:00', end: '17:00' }],
      ctx: { now: utc('2026-01-01T17:00:00Z') },
      want: { decision: 'delay', not_before: utc('2026-01-02T09:00:00Z'), reason: `opens at ${utc('2026-01-02T09:00:00Z')}` },
    },
  ],
  require_tag: [
    {
      name: 'key only: any value passes',
      rules: [{ rule: 'require_tag', key: 'purpose' }],
      intent: { tags: [['purpose', 'anything']] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'key only: empty value passes',
      rules: [{ rule: 'require_tag', key: 'purpose' }],
      intent: { tags: [['purpose', '']] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'key only: missing tag denies',
      rules: [{ rule: 'require_tag', key: 'purpose' }],
      intent: { tags: [['other', 'x']] },
      want: { decision: 'deny', reason: 'require_tag[0]: tag "purpose" is required (intent has 1 tag(s))' },
    },
    {
      name: 'key only: no tags at all denies',
      rules: [{ rule: 'require_tag', key: 'purpose' }],
      want: { decision: 'deny', reason: 'require_tag[0]: tag "purpose" is required (intent has 0 tag(s))' },
    },
    {
      name: 'key + value: the right value passes',
      rules: [{ rule: 'require_tag', key: 'purpose', value: 'payroll' }],
      intent: { tags: [['memo', 'x'], ['purpose', 'payroll']] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'key + value: a wrong value denies',
      rules: [{ rule: 'require_tag', key: 'purpose', value: 'payroll' }],
      intent: { tags: [['purpose', 'Payroll']] },
      want: { decision: 'deny', reason: 'require_tag[0]: tag "purpose"="payroll" is required (intent has 1 tag(s))' },
    },
    {
      name: 'the value of another key does not satisfy it',
      rules: [{ rule: 'require_tag', key: 'purpose', value: 'payroll' }],
      intent: { tags: [['category', 'payroll']] },
      want: { decision: 'deny', reason: 'require_tag[0]:' },
    },
  ],
  allow_operations: [
    {
      name: 'a listed operation passes',
      rules: [{ rule: 'allow_operations', ops: ['transfer', 'issue'] }],
      intent: { operation: { op: 'issue' } },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'an unlisted operation denies and lists the allowed ones',
      rules: [{ rule: 'allow_operations', ops: ['transfer', 'issue'] }],
      intent: { operation: { op: 'clawback' } },
      want: { decision: 'deny', reason: 'allow_operations[0]: operation clawback is not among the allowed [transfer, issue]' },
    },
    {
      name: 'a rule without transfer denies transfer too',
      rules: [{ rule: 'allow_operations', ops: ['issue'] }],
      want: { decision: 'deny', reason: 'allow_operations[0]: operation transfer is not among the allowed [issue]' },
    },
    {
      name: 'without the rule, only transfer: issue is denied',
      rules: [{ rule: 'always_allow' }],
      intent: { operation: { op: 'issue' } },
      want: { decision: 'deny', reason: 'policy: operation issue needs an allow_operations rule (only transfer is allowed by default)' },
    },
    {
      name: 'without the rule, only transfer: an explicit transfer is allowed',
      rules: [{ rule: 'always_allow' }],
      intent: { operation: { op: 'transfer' } },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'without the rule, contract_call is denied',
      rules: [{ rule: 'always_allow' }],
      intent: { operation: { op: 'contract_call', data_hex: '0xa9059cbb' } },
      want: { decision: 'deny', reason: 'policy: operation contract_call needs an allow_operations rule' },
    },
    {
      name: 'with the rule, mpt_create is allowed',
      rules: [{ rule: 'allow_operations', ops: ['mpt_create'] }],
      intent: { operation: { op: 'mpt_create', asset_scale: 2, flags: 0x20 } },
      want: { decision: 'allow', reason: ALLOWED },
    },
  ],
};

describe('evaluatePolicy: each rule', () => {
  it('covers all fourteen rule kinds', () => {
    expect(Object.keys(ruleCases).sort()).toEqual(
      [
        'always_allow',
        'require_compliance_clearance',
        'destination_allowlist',
        'destination_blocklist',
        'daily_velocity_cap',
        'approval_threshold',
        'timelock_above',
        'hard_ceiling',
        'require_attestation',
        'require_human_approver_for_agent_initiated',
        'agent_budget_ceiling',
        'operating_window_utc',
        'require_tag',
        'allow_operations',
      ].sort(),
    );
  });

  describe.each(Object.entries(ruleCases))('%s', (_kind, cases) => {
    it.each(cases)('$name', (c) => {
      check(c);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Velocity caps and budgets: what counts, and the rolling window
// ---------------------------------------------------------------------------------------------

describe('daily_velocity_cap: what the window counts', () => {
  const cap = (over: Partial<Extract<Rule, { rule: 'daily_velocity_cap' }>> = {}): Rule[] => [
    { rule: 'daily_velocity_cap', limit: '1000', ...over },
  ];
  const cases: Case[] = [
    {
      name: 'an entry exactly 86400s old is outside the default window',
      rules: cap(),
      intent: { amount: '1' },
      ctx: { history: [past('1000', DAY)] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'an entry 86399s old is inside the default window',
      rules: cap(),
      intent: { amount: '1' },
      ctx: { history: [past('1000', DAY - 1)] },
      want: { decision: 'deny', reason: 'daily_velocity_cap[0]: in the last 86400s 1000 executed + 0 pending (intents not yet executed) + 1 = 1001 exceeds limit 1000' },
    },
    {
      name: 'an entry created at now is inside',
      rules: cap(),
      intent: { amount: '1' },
      ctx: { history: [past('1000', 0)] },
      want: { decision: 'deny', reason: '1000 executed + 0 pending' },
    },
    {
      name: 'an entry dated after now (clock skew) still counts: fail closed',
      rules: cap(),
      intent: { amount: '1' },
      ctx: { history: [past('1000', -1)] },
      want: { decision: 'deny', reason: '1000 executed + 0 pending' },
    },
    {
      name: 'custom window_seconds 3600: 3600s old is outside',
      rules: cap({ window_seconds: 3600 }),
      intent: { amount: '1' },
      ctx: { history: [past('1000', 3600)] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'custom window_seconds 3600: 3599s old is inside, and the reason names the window',
      rules: cap({ window_seconds: 3600 }),
      intent: { amount: '1' },
      ctx: { history: [past('1000', 3599)] },
      want: { decision: 'deny', reason: 'daily_velocity_cap[0]: in the last 3600s 1000 executed + 0 pending (intents not yet executed) + 1 = 1001 exceeds limit 1000' },
    },
    {
      name: 'denied and failed entries are not counted',
      rules: cap(),
      intent: { amount: '1000' },
      ctx: { history: [past('500', 60, { status: 'denied' }), past('500', 60, { status: 'failed' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'allowed, pending, timelocked, submitted and confirmed entries are all counted; the reason says which are executed and which pending',
      rules: cap({ limit: '5' }),
      intent: { amount: '1' },
      ctx: {
        history: (['allowed', 'pending_approvals', 'timelocked', 'submitted', 'confirmed'] as const).map((status) => past('1', 60, { status })),
      },
      want: { decision: 'deny', reason: 'in the last 86400s 2 executed + 3 pending (intents not yet executed) + 1 = 6 exceeds limit 5' },
    },
    {
      name: 'a velocity-cap denial by intents not yet executed says pending, not "already spent"',
      rules: cap(),
      intent: { amount: '401' },
      ctx: { history: [past('350', 60, { status: 'allowed' }), past('250', 30, { status: 'timelocked' })] },
      want: { decision: 'deny', reason: 'daily_velocity_cap[0]: in the last 86400s 0 executed + 600 pending (intents not yet executed) + 401 = 1001 exceeds limit 1000' },
    },
    {
      name: 'the intent’s own history entry is not counted twice',
      rules: cap(),
      intent: { amount: '1000' },
      ctx: { intentId: 'int_self', history: [past('1000', 0, { intentId: 'int_self', status: 'pending_approvals' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'only outflow ops count: authorize_holder, clawback, mpt_create and account_flags entries do not',
      rules: cap(),
      intent: { amount: '1000' },
      ctx: {
        history: (['authorize_holder', 'clawback', 'mpt_create', 'account_flags'] as const).map((op) => past('999', 60, { op })),
      },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'issue and contract_call entries count as outflows',
      rules: cap({ limit: '2' }),
      intent: { amount: '1' },
      ctx: { history: [past('1', 60, { op: 'issue' }), past('1', 60, { op: 'contract_call' })] },
      want: { decision: 'deny', reason: 'in the last 86400s 2 executed + 0 pending (intents not yet executed) + 1 = 3 exceeds limit 2' },
    },
    {
      name: 'a non-outflow intent is not capped',
      rules: [...cap(), { rule: 'allow_operations', ops: ['authorize_holder'] }],
      intent: { amount: '5000', operation: { op: 'authorize_holder' } },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'without `asset`, another asset’s spend is not counted (native intent, USD history)',
      rules: cap(),
      intent: { amount: '1000' },
      ctx: { history: [past('1000', 60, { asset_symbol: 'USD', asset_issuer: 'rIssuer' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'without `asset`, the same symbol from another issuer is another asset',
      rules: cap(),
      intent: { amount: '1000', asset_symbol: 'USD', asset_issuer: 'rIssuerA' },
      ctx: { history: [past('1000', 60, { asset_symbol: 'USD', asset_issuer: 'rIssuerB' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'without `asset`, the same asset counts',
      rules: cap(),
      intent: { amount: '1', asset_symbol: 'USD', asset_issuer: 'rIssuerA' },
      ctx: { history: [past('1000', 60, { asset_symbol: 'USD', asset_issuer: 'rIssuerA' })] },
      want: { decision: 'deny', reason: '1000 executed + 0 pending' },
    },
    {
      name: 'with `asset: USD`, an intent in another asset is not capped',
      rules: cap({ asset: 'USD' }),
      intent: { amount: '5000' },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'with `asset: USD`, USD from any issuer counts',
      rules: cap({ asset: 'USD' }),
      intent: { amount: '1', asset_symbol: 'USD', asset_issuer: 'rIssuerA' },
      ctx: { history: [past('600', 60, { asset_symbol: 'USD', asset_issuer: 'rIssuerB' }), past('400', 60, { asset_symbol: 'USD' }), past('900', 60)] },
      want: { decision: 'deny', reason: 'in the last 86400s 1000 executed + 0 pending (intents not yet executed) + 1 = 1001 exceeds limit 1000' },
    },
    {
      name: 'with `asset: native`, only intents naming no asset count',
      rules: cap({ asset: 'native' }),
      intent: { amount: '1' },
      ctx: { history: [past('1000', 60, { asset_symbol: 'USD' }), past('999', 60)] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'sums many entries in bigint',
      rules: cap({ limit: TWO_64 }),
      intent: { amount: '1' },
      ctx: { history: [past(TWO_63, 10), past(TWO_63, 20)] },
      want: { decision: 'deny', reason: `in the last 86400s ${TWO_64} executed + 0 pending (intents not yet executed) + 1 = ${TWO_64_PLUS_1} exceeds limit ${TWO_64}` },
    },
  ];
  it.each(cases)('$name', (c) => {
    check(c);
  });
});

describe('agent_budget_ceiling: what the budget counts', () => {
  const cases: Case[] = [
    {
      name: 'a denied entry of the agent is not counted',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000' }],
      intent: { initiator: 'agent:bot', amount: '1000' },
      ctx: { history: [past('1000', 60, { initiator: 'agent:bot', status: 'denied' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'the intent’s own entry is not counted',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000' }],
      intent: { initiator: 'agent:bot', amount: '1000' },
      ctx: { intentId: 'int_self', history: [past('1000', 0, { initiator: 'agent:bot', intentId: 'int_self' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'another asset is not counted without `asset`',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000' }],
      intent: { initiator: 'agent:bot', amount: '1000' },
      ctx: { history: [past('1000', 60, { initiator: 'agent:bot', asset_symbol: 'USD' })] },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'with `asset`, an intent in another asset is not budgeted',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000', asset: 'USD' }],
      intent: { initiator: 'agent:bot', amount: '5000' },
      want: { decision: 'allow', reason: ALLOWED },
    },
    {
      name: 'custom window 3600: 3599s old counts, 3600s old does not',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1000', window_seconds: 3600 }],
      intent: { initiator: 'agent:bot', amount: '1' },
      ctx: { history: [past('500', 3600, { initiator: 'agent:bot' }), past('1000', 3599, { initiator: 'agent:bot' })] },
      want: { decision: 'deny', reason: 'agent:bot spent 1000 (last 3600s) + 1 = 1001 exceeds budget 1000' },
    },
    {
      name: 'a non-outflow agent intent is not budgeted',
      rules: [{ rule: 'agent_budget_ceiling', budget: '1' }, { rule: 'allow_operations', ops: ['clawback'] }],
      intent: { initiator: 'agent:bot', amount: '1000', operation: { op: 'clawback' } },
      want: { decision: 'allow', reason: ALLOWED },
    },
  ];
  it.each(cases)('$name', (c) => {
    check(c);
  });
});

// ---------------------------------------------------------------------------------------------
// Operating windows: UTC midnight, overnight windows, days
// ---------------------------------------------------------------------------------------------

describe('operating_window_utc: UTC midnight and days', () => {
  // 2026-01-01 is a Thursday; 2026-01-03 a Saturday; 2026-01-04 a Sunday.
  const w = (start: string, end: string, days?: number[]): Rule[] => [
    days === undefined ? { rule: 'operating_window_utc', start, end } : { rule: 'operating_window_utc', start, end, days },
  ];
  const open = (name: string, rules: Rule[], iso: string): Case => ({ name, rules, ctx: { now: utc(iso) }, want: { decision: 'allow', reason: ALLOWED } });
  const closed = (name: string, rules: Rule[], iso: string, opensIso: string): Case => ({
    name,
    rules,
    ctx: { now: utc(iso) },
    want: { decision: 'delay', not_before: utc(opensIso), reason: `opens at ${utc(opensIso)} (${new Date(utc(opensIso) * 1000).toISOString()})` },
  });

  const cases: Case[] = [
    closed('00:00-06:00 at 23:59 (closed) opens at the next UTC midnight', w('00:00', '06:00'), '2026-01-01T23:59:00Z', '2026-01-02T00:00:00Z'),
    closed('00:00-06:00 at 23:59:59 opens one second later', w('00:00', '06:00'), '2026-01-01T23:59:59Z', '2026-01-02T00:00:00Z'),
    open('00:00-06:00 at 00:00 is open', w('00:00', '06:00'), '2026-01-02T00:00:00Z'),
    open('09:00-23:59 at 23:58:59 is open', w('09:00', '23:59'), '2026-01-01T23:58:59Z'),
    closed('09:00-23:59 at 23:59 is closed (end is exclusive)', w('09:00', '23:59'), '2026-01-01T23:59:00Z', '2026-01-02T09:00:00Z'),
    open('09:00-00:00 runs to midnight: 23:59:59 is open', w('09:00', '00:00'), '2026-01-01T23:59:59Z'),
    closed('09:00-00:00 runs to midnight: 00:00 is closed', w('09:00', '00:00'), '2026-01-02T00:00:00Z', '2026-01-02T09:00:00Z'),
    // Overnight 22:00-06:00, Fridays only (day 5): Fri 22:00 .. Sat 06:00.
    open('22:00-06:00 Fri: Fri 22:00 is open', w('22:00', '06:00', [5]), '2026-01-02T22:00:00Z'),
    open('22:00-06:00 Fri: Sat 05:59 belongs to Friday, open', w('22:00', '06:00', [5]), '2026-01-03T05:59:00Z'),
    closed('22:00-06:00 Fri: Sat 06:00 is closed until next Friday', w('22:00', '06:00', [5]), '2026-01-03T06:00:00Z', '2026-01-09T22:00:00Z'),
    closed('22:00-06:00 Fri: Fri 05:00 belongs to Thursday, closed', w('22:00', '06:00', [5]), '2026-01-02T05:00:00Z', '2026-01-02T22:00:00Z'),
    closed('22:00-06:00 Fri: Sat 22:00 is closed', w('22:00', '06:00', [5]), '2026-01-03T22:00:00Z', '2026-01-09T22:00:00Z'),
    // Day-of-week rollover Saturday (6) -> Sunday (0).
    open('22:00-06:00 Sat: Sun 05:59:59 belongs to Saturday, open', w('22:00', '06:00', [6]), '2026-01-04T05:59:59Z'),
    open('22:00-06:00 Sat: Sun 00:00 (midnight rollover) is open', w('22:00', '06:00', [6]), '2026-01-04T00:00:00Z'),
    closed('22:00-06:00 Sat: Sun 06:00 is closed', w('22:00', '06:00', [6]), '2026-01-04T06:00:00Z', '2026-01-10T22:00:00Z'),
    closed('22:00-06:00 Sat: Sun 22:00 is closed until next Saturday', w('22:00', '06:00', [6]), '2026-01-04T22:00:00Z', '2026-01-10T22:00:00Z'),
    closed('22:00-06:00 Sat: Sat 02:00 belongs to Friday, closed', w('22:00', '06:00', [6]), '2026-01-03T02:00:00Z', '2026-01-03T22:00:00Z'),
    closed('22:00-06:00 Sun: Sat 23:00 is closed until Sunday 22:00', w('22:00', '06:00', [0]), '2026-01-03T23:00:00Z', '2026-01-04T22:00:00Z'),
    open('22:00-06:00 Sun: Mon 03:00 belongs to Sunday, open', w('22:00', '06:00', [0]), '2026-01-05T03:00:00Z'),
    // Days filter, weekdays only.
    closed('09:00-17:00 Mon-Fri: Saturday 10:00 waits for Monday 09:00', w('09:00', '17:00', [1, 2, 3, 4, 5]), '2026-01-03T10:00:00Z', '2026-01-05T09:00:00Z'),
    closed('09:00-17:00 Mon-Fri: Friday 17:00 waits for Monday 09:00', w('09:00', '17:00', [1, 2, 3, 4, 5]), '2026-01-02T17:00:00Z', '2026-01-05T09:00:00Z'),
    open('09:00-17:00 Mon-Fri: Thursday noon is open', w('09:00', '17:00', [1, 2, 3, 4, 5]), '2026-01-01T12:00:00Z'),
    // Whole day.
    open('00:00-00:00 every day: any instant is open', w('00:00', '00:00'), '2026-01-03T23:59:59Z'),
    open('00:00-00:00 Sun: Sun 00:00 is open', w('00:00', '00:00', [0]), '2026-01-04T00:00:00Z'),
    open('00:00-00:00 Sun: Sun 23:59:59 is open', w('00:00', '00:00', [0]), '2026-01-04T23:59:59Z'),
    closed('00:00-00:00 Sun: Sat 23:59:59 opens at Sunday midnight', w('00:00', '00:00', [0]), '2026-01-03T23:59:59Z', '2026-01-04T00:00:00Z'),
    closed('00:00-00:00 Sun: Mon 00:00 waits a week', w('00:00', '00:00', [0]), '2026-01-05T00:00:00Z', '2026-01-11T00:00:00Z'),
    open('09:00-09:00 runs 24 hours from its opening day: next day 08:59 is open', w('09:00', '09:00', [4]), '2026-01-02T08:59:00Z'),
    closed('09:00-09:00 Thu: Friday 09:00 is closed', w('09:00', '09:00', [4]), '2026-01-02T09:00:00Z', '2026-01-08T09:00:00Z'),
  ];
  it.each(cases)('$name', (c) => {
    check(c);
  });

  it('names the days in the reason', () => {
    const d = check(closed('days', w('22:00', '06:00', [5, 6]), '2026-01-01T12:00:00Z', '2026-01-02T22:00:00Z'));
    expect(d.reasons[0]).toContain('22:00-06:00 UTC (Fri,Sat)');
  });
});

describe('timelocks and operating windows together', () => {
  const window: Rule = { rule: 'operating_window_utc', start: '09:00', end: '17:00' };
  const lock = (seconds: number): Rule => ({ rule: 'timelock_above', above: '0', seconds });

  it('a timelock ending inside a closed window: not_before is the next opening, and a reason says so', () => {
    // Thu 10:00 (open) + 8h = Thu 18:00, closed -> Fri 09:00.
    const now = utc('2026-01-01T10:00:00Z');
    const d = check({
      name: '',
      rules: [lock(8 * 3600), window],
      ctx: { now },
      want: { decision: 'delay', not_before: utc('2026-01-02T09:00:00Z'), reason: `timelock_above[0]: amount 100 is above 0; timelocked 28800s until ${now + 28800}` },
    });
    expect(d.reasons.some((r) => r.startsWith('operating_window_utc[1]:') && r.includes(String(utc('2026-01-02T09:00:00Z')))), JSON.stringify(d.reasons)).toBe(true);
  });

  it('a window closed now and a timelock past its opening: the later of the two, then the next opening', () => {
    // Thu 08:00 (closed, opens 09:00) + 10h = 18:00, closed -> Fri 09:00.
    const now = utc('2026-01-01T08:00:00Z');
    const d = check({
      name: '',
      rules: [window, lock(10 * 3600)],
      ctx: { now },
      want: { decision: 'delay', not_before: utc('2026-01-02T09:00:00Z'), reason: 'timelock_above[1]:' },
    });
    expect(d.reasons.some((r) => r.startsWith('operating_window_utc[0]:') && r.includes(String(utc('2026-01-02T09:00:00Z')))), JSON.stringify(d.reasons)).toBe(true);
  });

  it('a timelock ending inside an open window: not_before is the timelock', () => {
    const now = utc('2026-01-01T10:00:00Z');
    check({ name: '', rules: [lock(3600), window], ctx: { now }, want: { decision: 'delay', not_before: now + 3600, reason: `until ${now + 3600}` } });
  });

  it('a timelock ending exactly at the closing waits for the next opening', () => {
    const now = utc('2026-01-01T16:00:00Z');
    check({ name: '', rules: [lock(3600), window], ctx: { now }, want: { decision: 'delay', not_before: utc('2026-01-02T09:00:00Z'), reason: 'timelock_above[0]:' } });
  });

  it('a timelock ending exactly at the opening needs no extra wait', () => {
    const now = utc('2026-01-01T08:00:00Z');
    check({ name: '', rules: [lock(3600), window], ctx: { now }, want: { decision: 'delay', not_before: utc('2026-01-01T09:00:00Z'), reason: 'operating_window_utc[1]:' } });
  });

  it('two windows: the first instant both are open', () => {
    const now = utc('2026-01-01T08:00:00Z');
    check({
      name: '',
      rules: [window, { rule: 'operating_window_utc', start: '12:00', end: '13:00' }],
      ctx: { now },
      want: { decision: 'delay', not_before: utc('2026-01-01T12:00:00Z'), reason: 'operating_window_utc[1]:' },
    });
  });

  it('a timelock that crosses a weekend with a weekday window', () => {
    // Fri 2026-01-02 16:30 + 1h = 17:30 -> Monday 09:00.
    const now = utc('2026-01-02T16:30:00Z');
    check({
      name: '',
      rules: [lock(3600), { rule: 'operating_window_utc', start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5] }],
      ctx: { now },
      want: { decision: 'delay', not_before: utc('2026-01-05T09:00:00Z'), reason: 'timelock_above[0]:' },
    });
  });

  it('windows that never overlap deny, naming the search bound', () => {
    check({
      name: '',
      rules: [
        { rule: 'operating_window_utc', start: '09:00', end: '10:00' },
        { rule: 'operating_window_utc', start: '11:00', end: '12:00' },
      ],
      ctx: { now: utc('2026-01-01T08:00:00Z') },
      want: { decision: 'deny', reason: 'policy: the operating windows have no common opening within 8 days after' },
    });
  });

  it('windows on disjoint days deny', () => {
    check({
      name: '',
      rules: [
        { rule: 'operating_window_utc', start: '00:00', end: '00:00', days: [1] },
        { rule: 'operating_window_utc', start: '00:00', end: '00:00', days: [2] },
      ],
      want: { decision: 'deny', reason: 'no common opening' },
    });
  });

  it('approvals pending and a window closed: require_approvals carries the window’s not_before', () => {
    check({
      name: '',
      rules: [window, { rule: 'approval_threshold', above: '0', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] }],
      ctx: { now: utc('2026-01-01T08:00:00Z') },
      want: { decision: 'require_approvals', required_weight: 1, current_weight: 0, not_before: utc('2026-01-01T09:00:00Z'), reason: 'operating_window_utc[0]:' },
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Combination of several rules
// ---------------------------------------------------------------------------------------------

describe('combination: deny > require_approvals > delay > allow', () => {
  const approval2: Rule = { rule: 'approval_threshold', above: '0', required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }] };
  const lock: Rule = { rule: 'timelock_above', above: '0', seconds: 600 };

  it('several denies: every reason is listed, and pending and delay reasons too', () => {
    const rules: Rule[] = [
      { rule: 'hard_ceiling', max: '10' },
      approval2,
      { rule: 'destination_blocklist', addresses: [DEST] },
      lock,
      { rule: 'require_tag', key: 'purpose' },
    ];
    const d = check({ name: '', rules, intent: { amount: '11' }, want: { decision: 'deny', reason: 'hard_ceiling[0]: amount 11 exceeds the hard ceiling 10' } });
    expect(d.reasons).toEqual([
      'hard_ceiling[0]: amount 11 exceeds the hard ceiling 10',
      `destination_blocklist[2]: destination ${DEST} is blocked`,
      'require_tag[4]: tag "purpose" is required (intent has 0 tag(s))',
      'approval_threshold[1]: amount 11 is above 0; approval weight 0 of 2 required',
      expect.stringMatching(/^timelock_above\[3\]: amount 11 is above 0; timelocked 600s until \d+/),
    ]);
  });

  it('deny beats require_approvals and delay', () => {
    check({
      name: '',
      rules: [approval2, lock, { rule: 'require_compliance_clearance' }],
      want: { decision: 'deny', reason: 'require_compliance_clearance[2]:' },
    });
  });

  it('require_approvals beats delay, keeps the timelock’s not_before and lists both reasons', () => {
    const d = check({
      name: '',
      rules: [lock, approval2],
      approvals: [{ who: 'bob' }],
      want: { decision: 'require_approvals', required_weight: 2, current_weight: 1, not_before: NOW + 600, reason: 'approval_threshold[1]: amount 100 is above 0; approval weight 1 of 2 required' },
    });
    expect(d.reasons.some((r) => r.startsWith('timelock_above[0]:'))).toBe(true);
  });

  it('met approvals and a pending timelock: delay', () => {
    check({
      name: '',
      rules: [lock, approval2],
      approvals: [{ who: 'alice' }, { who: 'bob' }],
      want: { decision: 'delay', required_weight: 2, current_weight: 2, not_before: NOW + 600, reason: `timelock_above[0]: amount 100 is above 0; timelocked 600s until ${NOW + 600}` },
    });
  });

  it('two approval_threshold rules: required_weight is the larger', () => {
    const d = check({
      name: '',
      rules: [
        approval2,
        { rule: 'approval_threshold', above: '50', required_weight: 3, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }, { id: 'carol', weight: 1 }] },
      ],
      approvals: [{ who: 'alice' }],
      want: { decision: 'require_approvals', required_weight: 3, current_weight: 1, reason: 'approval_threshold[1]: amount 100 is above 50; approval weight 1 of 3 required' },
    });
    expect(d.reasons).toHaveLength(2);
    expect(d.reasons[0]).toBe('approval_threshold[0]: amount 100 is above 0; approval weight 1 of 2 required');
  });

  it('a larger rule that is already met does not count; the unmet one binds', () => {
    check({
      name: '',
      rules: [
        { rule: 'approval_threshold', above: '0', required_weight: 1, approvers: [{ id: 'carol', weight: 1 }] },
        { rule: 'approval_threshold', above: '0', required_weight: 2, approvers: [{ id: 'alice', weight: 2 }] },
      ],
      approvals: [{ who: 'alice' }],
      want: { decision: 'require_approvals', required_weight: 1, current_weight: 0, reason: 'approval_threshold[0]: amount 100 is above 0; approval weight 0 of 1 required' },
    });
  });

  it('approval_threshold and the human-approver rule: the larger requirement binds', () => {
    check({
      name: '',
      rules: [approval2, { rule: 'require_human_approver_for_agent_initiated', min_strong: 1 }],
      intent: { initiator: 'agent:bot' },
      approvals: [{ who: 'alice', strong: true }],
      want: { decision: 'require_approvals', required_weight: 2, current_weight: 1, reason: 'approval_threshold[0]:' },
    });
  });

  it('the allow reason counts the rules and names the version', () => {
    const d = evaluatePolicy(policy([{ rule: 'always_allow' }, { rule: 'hard_ceiling', max: '1000' }], { version: 7 }), request(), { now: NOW });
    expect(d).toEqual({ decision: 'allow', reasons: ['policy: allowed by 2 rule(s) of policy v7'], required_weight: 0, current_weight: 0, not_before: NOW });
  });
});

// ---------------------------------------------------------------------------------------------
// Approvals
// ---------------------------------------------------------------------------------------------

describe('approval counting', () => {
  const weighted: Rule = {
    rule: 'approval_threshold',
    above: '0',
    required_weight: 3,
    approvers: [
      { id: 'alice', weight: 2 },
      { id: 'bob', weight: 1 },
      { id: 'carol', weight: 1 },
    ],
  };
  const cases: Case[] = [
    { name: 'weights add up: alice (2) + bob (1) = 3 allows', rules: [weighted], approvals: [{ who: 'alice' }, { who: 'bob' }], want: { decision: 'allow', required_weight: 3, current_weight: 3, reason: ALLOWED } },
    {
      name: 'a duplicate approval counts once',
      rules: [weighted],
      approvals: [{ who: 'alice' }, { who: 'alice' }],
      want: { decision: 'require_approvals', required_weight: 3, current_weight: 2, reason: 'approval weight 2 of 3 required' },
    },
    {
      name: 'an unlisted approver weighs 0',
      rules: [weighted],
      approvals: [{ who: 'mallory' }, { who: 'bob' }],
      want: { decision: 'require_approvals', required_weight: 3, current_weight: 1, reason: 'approval weight 1 of 3 required' },
    },
    {
      name: 'strong_auth does not matter for approval_threshold',
      rules: [weighted],
      approvals: [{ who: 'alice', strong: true }, { who: 'carol', strong: false }],
      want: { decision: 'allow', required_weight: 3, current_weight: 3, reason: ALLOWED },
    },
    {
      name: 'a reject verdict denies even when the weight is met',
      rules: [weighted],
      approvals: [{ who: 'alice' }, { who: 'bob' }, { who: 'carol', verdict: 'reject' }],
      want: { decision: 'deny', reason: `approvals: rejected by carol at ${NOW - 60}` },
    },
    {
      name: 'a reject verdict denies a policy with no approval rule',
      rules: [{ rule: 'always_allow' }],
      approvals: [{ who: 'mallory', verdict: 'reject' }],
      want: { decision: 'deny', reason: 'approvals: rejected by mallory' },
    },
    {
      name: 'a reject does not count toward the weight',
      rules: [{ rule: 'approval_threshold', above: '0', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] }],
      approvals: [{ who: 'alice', verdict: 'reject' }],
      want: { decision: 'deny', reason: 'approvals: rejected by alice' },
    },
  ];
  it.each(cases)('$name', (c) => {
    check(c);
  });

  it('an approver listed twice in one rule is a validation error, never double weight', () => {
    const rules = [
      { rule: 'approval_threshold', above: '0', required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }, { id: 'alice', weight: 1 }] },
    ];
    const req = request();
    let err: unknown;
    try {
      evaluatePolicy({ wallet: WALLET, version: 1, rules }, req, { now: NOW, approvals: approvalsFor(req, [{ who: 'alice' }]) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).path).toBe('rules.0.approvers.2.id');
  });

  it('counts only what verifyApprovals lets through (forged, unknown and duplicate approvals dropped)', () => {
    const req = request({ amount: '5000' });
    const id = intentId(req);
    const good = approvalsFor(req, [{ who: 'alice' }, { who: 'bob' }]);
    const forged = signApproval({ approver_id: 'carol', intent: id, verdict: 'approve', at: NOW, strong_auth: false }, KEYS.mallory);
    const unknown = signApproval({ approver_id: 'mallory', intent: id, verdict: 'approve', at: NOW, strong_auth: false }, KEYS.mallory);
    const approvers = new Map(
      (['alice', 'bob', 'carol'] as const).map((who) => [who, { publicKey: ed25519PublicKey(KEYS[who]) }]),
    );
    const { valid, problems } = verifyApprovals([...good, forged, unknown, good[0]], { intentId: id, approvers, window: { createdAt: NOW, now: NOW } });
    expect(problems.map((p) => p.reason)).toEqual(['bad_signature', 'unknown_approver', 'duplicate']);
    const d = evaluatePolicy(policy([weighted]), req, { now: NOW, approvals: valid });
    expect(d).toMatchObject({ decision: 'allow', required_weight: 3, current_weight: 3 });
    const short = evaluatePolicy(policy([weighted]), req, { now: NOW, approvals: valid.filter((a) => a.approver_id !== 'alice') });
    expect(short).toMatchObject({ decision: 'require_approvals', required_weight: 3, current_weight: 1 });
  });
});

// ---------------------------------------------------------------------------------------------
// Policy-level rules and validation
// ---------------------------------------------------------------------------------------------

describe('policy-level outcomes', () => {
  it('an empty policy denies', () => {
    const d = evaluatePolicy(policy([]), request(), { now: NOW });
    expect(d).toEqual({
      decision: 'deny',
      reasons: ['policy: policy v1 of w1 has no rules; denied by default'],
      required_weight: 0,
      current_weight: 0,
      not_before: 0,
    });
  });

  it('a policy for another wallet denies', () => {
    const d = evaluatePolicy(policy([{ rule: 'always_allow' }]), request({ wallet: 'w2' }), { now: NOW });
    expect(d).toEqual({
      decision: 'deny',
      reasons: ['policy: policy is for wallet w1, intent is for wallet w2'],
      required_weight: 0,
      current_weight: 0,
      not_before: 0,
    });
  });

  it('is a pure function: same inputs, same decision', () => {
    const rules: Rule[] = [{ rule: 'timelock_above', above: '0', seconds: 60 }, { rule: 'daily_velocity_cap', limit: '1000' }];
    const ctx: PolicyContext = { now: NOW, history: [past('10', 10)] };
    expect(evaluatePolicy(policy(rules), request(), ctx)).toEqual(evaluatePolicy(policy(rules), request(), ctx));
  });

  it('accepts a normalised intent as well as a request', () => {
    const d = evaluatePolicy(policy([{ rule: 'hard_ceiling', max: '100' }]), { ...request(), asset_decimals: 6, initiator: 'operator', operation: { op: 'transfer' } }, { now: NOW });
    expect(d.decision).toBe('allow');
  });
});

describe('STATUS_BY_DECISION', () => {
  it.each<[DecisionKind, IntentStatus]>([
    ['allow', 'allowed'],
    ['deny', 'denied'],
    ['require_approvals', 'pending_approvals'],
    ['delay', 'timelocked'],
  ])('%s -> %s', (decision, status) => {
    expect(STATUS_BY_DECISION[decision]).toBe(status);
  });

  it('maps exactly the four decisions', () => {
    expect(Object.keys(STATUS_BY_DECISION).sort()).toEqual(['allow', 'delay', 'deny', 'require_approvals']);
  });
});

describe('validation', () => {
  function thrown(fn: () => unknown): unknown {
    try {
      fn();
    } catch (e) {
      return e;
    }
    throw new Error('expected a throw');
  }

  it('an unknown rule tag is UnknownRuleError (4000) naming rules.<i>.rule', () => {
    const bad = { wallet: WALLET, version: 1, rules: [{ rule: 'always_allow' }, { rule: 'hard_ceiling', max: '1' }, { rule: 'no_such_rule' }] };
    const e = thrown(() => evaluatePolicy(bad, request(), { now: NOW }));
    expect(e).toBeInstanceOf(UnknownRuleError);
    expect(e).toBeInstanceOf(ValidationError);
    const err = e as UnknownRuleError;
    expect(err.code).toBe(ErrorCode.BadRequest);
    expect(err.code).toBe(4000);
    expect(err.path).toBe('rules.2.rule');
    expect(err.data).toMatchObject({ path: 'rules.2.rule' });
    expect(err.message).toContain('no_such_rule');
    expect(err.toBody().error.code).toBe(4000);
  });

  it('a rule with no tag is an unknown rule too', () => {
    const e = thrown(() => parsePolicy({ wallet: WALLET, version: 1, rules: [{ max: '1' }] })) as UnknownRuleError;
    expect(e).toBeInstanceOf(UnknownRuleError);
    expect(e.path).toBe('rules.0.rule');
  });

  it('the unknown tag is reported even when an earlier rule is malformed', () => {
    const e = thrown(() => parsePolicy({ wallet: WALLET, version: 1, rules: [{ rule: 'hard_ceiling', max: 'x' }, { rule: 'bogus' }] })) as UnknownRuleError;
    expect(e).toBeInstanceOf(UnknownRuleError);
    expect(e.path).toBe('rules.1.rule');
  });

  it.each<[string, string, unknown]>([
    ['negative limit', 'rules.0.limit', { rule: 'daily_velocity_cap', limit: '-1' }],
    ['decimal max', 'rules.0.max', { rule: 'hard_ceiling', max: '1.5' }],
    ['numeric max', 'rules.0.max', { rule: 'hard_ceiling', max: 1000 }],
    ['leading-zero above', 'rules.0.above', { rule: 'timelock_above', above: '007', seconds: 60 }],
    ['missing max', 'rules.0.max', { rule: 'hard_ceiling' }],
    ['start 24:00', 'rules.0.start', { rule: 'operating_window_utc', start: '24:00', end: '06:00' }],
    ['end 9:00 (one hour digit)', 'rules.0.end', { rule: 'operating_window_utc', start: '08:00', end: '9:00' }],
    ['days [7]', 'rules.0.days.0', { rule: 'operating_window_utc', start: '08:00', end: '09:00', days: [7] }],
    ['days [-1]', 'rules.0.days.1', { rule: 'operating_window_utc', start: '08:00', end: '09:00', days: [1, -1] }],
    ['days []', 'rules.0.days', { rule: 'operating_window_utc', start: '08:00', end: '09:00', days: [] }],
    ['window_seconds 0', 'rules.0.window_seconds', { rule: 'daily_velocity_cap', limit: '1', window_seconds: 0 }],
    ['velocity window_seconds null', 'rules.0.window_seconds', { rule: 'daily_velocity_cap', limit: '1', window_seconds: null }],
    ['timelock seconds 0', 'rules.0.seconds', { rule: 'timelock_above', above: '1', seconds: 0 }],
    ['no approvers', 'rules.0.approvers', { rule: 'approval_threshold', above: '1', required_weight: 1, approvers: [] }],
    ['approver weight 0', 'rules.0.approvers.0.weight', { rule: 'approval_threshold', above: '1', required_weight: 1, approvers: [{ id: 'a', weight: 0 }] }],
    ['required_weight 0', 'rules.0.required_weight', { rule: 'approval_threshold', above: '1', required_weight: 0, approvers: [{ id: 'a', weight: 1 }] }],
    ['attester not 32-byte hex', 'rules.0.attesters.0', { rule: 'require_attestation', attesters: ['abcd'] }],
    ['unknown op', 'rules.0.ops.1', { rule: 'allow_operations', ops: ['transfer', 'swap'] }],
    ['min_strong 0', 'rules.0.min_strong', { rule: 'require_human_approver_for_agent_initiated', min_strong: 0 }],
    ['device_bound_above not an amount', 'rules.0.device_bound_above', { rule: 'require_human_approver_for_agent_initiated', device_bound_above: '-1' }],
    ['empty tag key', 'rules.0.key', { rule: 'require_tag', key: '' }],
  ])('%s: ValidationError naming %s', (_name, path, rule) => {
    const e = thrown(() => evaluatePolicy({ wallet: WALLET, version: 1, rules: [rule] }, request(), { now: NOW }));
    expect(e).toBeInstanceOf(ValidationError);
    expect(e).not.toBeInstanceOf(UnknownRuleError);
    const err = e as ValidationError;
    expect(err.code).toBe(4000);
    expect(err.path).toBe(path);
    expect(err.message).toContain(`policy.${path}`);
  });

  it('the path names the index of the bad rule', () => {
    const e = thrown(() => parsePolicy({ wallet: WALLET, version: 1, rules: [{ rule: 'always_allow' }, { rule: 'always_allow' }, { rule: 'daily_velocity_cap', limit: '-1' }] })) as ValidationError;
    expect(e.path).toBe('rules.2.limit');
  });

  it.each<[string, unknown, string]>([
    ['unknown top-level field', { wallet: WALLET, version: 1, rules: [], extra: true }, ''],
    ['missing version', { wallet: WALLET, rules: [] }, 'version'],
    ['rules not an array', { wallet: WALLET, version: 1, rules: {} }, 'rules'],
  ])('policy shape: %s', (_name, p, path) => {
    const e = thrown(() => parsePolicy(p)) as ValidationError;
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.path).toBe(path);
  });

  it('an invalid intent is a ValidationError naming its field (asset_scale out of range)', () => {
    const e = thrown(() =>
      evaluatePolicy(policy([{ rule: 'allow_operations', ops: ['mpt_create'] }]), request({ operation: { op: 'mpt_create', asset_scale: 20, flags: 0 } }), { now: NOW }),
    ) as ValidationError;
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.path).toBe('operation.asset_scale');
  });

  it('an invalid amount in the intent names amount', () => {
    const e = thrown(() => evaluatePolicy(policy([{ rule: 'always_allow' }]), request({ amount: '-5' }), { now: NOW })) as ValidationError;
    expect(e.path).toBe('amount');
  });

  it.each<[string, PolicyContext, string]>([
    ['negative now', { now: -1 }, 'now'],
    ['fractional now', { now: 1.5 }, 'now'],
    ['fractional created_at', { now: NOW, created_at: NOW - 0.5 }, 'created_at'],
  ])('context: %s', (_name, ctx, path) => {
    const e = thrown(() => evaluatePolicy(policy([{ rule: 'always_allow' }]), request(), ctx)) as ValidationError;
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.path).toBe(path);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: timelocks and windows combine to the earliest instant a brute-force scan finds
// ---------------------------------------------------------------------------------------------

describe('property: not_before is the first instant every window is open, at or after every timelock', () => {
  /** Fast openness check with precomputed fields (cross-checked against Date in operating-window-utc.test.ts). */
  function openFn(rule: Extract<Rule, { rule: 'operating_window_utc' }>): (t: number) => boolean {
    const sec = (s: string) => Number(s.slice(0, 2)) * 3600 + Number(s.slice(3)) * 60;
    const s = sec(rule.start);
    const e = sec(rule.end);
    const ok = [0, 1, 2, 3, 4, 5, 6].map((d) => rule.days === undefined || rule.days.includes(d));
    return (t) => {
      const day = Math.floor(t / DAY);
      const x = t - day * DAY;
      const wd = (day + 4) % 7;
      if (s < e) return ok[wd] === true && x >= s && x < e;
      return (ok[wd] === true && x >= s) || (ok[(wd + 6) % 7] === true && x < e);
    };
  }

  let state = 0x2026_0101;
  const rand = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 4294967296;
  };
  const pick = (n: number) => Math.floor(rand() * n);
  const hhmm = () => `${String(pick(24)).padStart(2, '0')}:${String([0, 15, 30, 59][pick(4)]).padStart(2, '0')}`;

  it('agrees with a minute scan on 300 pseudo-random policies', () => {
    let delayed = 0;
    let denied = 0;
    for (let k = 0; k < 300; k++) {
      const windows = Array.from({ length: 1 + pick(3) }, (): Extract<Rule, { rule: 'operating_window_utc' }> => {
        const days = rand() < 0.5 ? undefined : [0, 1, 2, 3, 4, 5, 6].filter(() => rand() < 0.5);
        return days === undefined || days.length === 0
          ? { rule: 'operating_window_utc', start: hhmm(), end: hhmm() }
          : { rule: 'operating_window_utc', start: hhmm(), end: hhmm(), days };
      });
      const lockSeconds = rand() < 0.5 ? 0 : 1 + pick(3 * DAY);
      const rules: Rule[] = lockSeconds > 0 ? [{ rule: 'timelock_above', above: '0', seconds: lockSeconds }, ...windows] : windows;
      const now = utc('2026-01-01T00:00:00Z') + pick(28 * DAY);
      const opens = windows.map(openFn);
      const all = (t: number) => opens.every((f) => f(t));

      const start = now + lockSeconds;
      let expected: number | null = all(start) ? start : null;
      for (let m = start - (start % 60) + 60; expected === null && m <= start + 8 * DAY; m += 60) {
        if (all(m)) expected = m;
      }

      const d = evaluatePolicy(policy(rules), request(), { now });
      const ctx = JSON.stringify({ rules, now, d });
      if (expected === null) {
        denied++;
        expect(d.decision, ctx).toBe('deny');
        expect(d.reasons.some((r) => r.includes('no common opening')), ctx).toBe(true);
      } else if (expected === now) {
        expect(d.decision, ctx).toBe('allow');
      } else {
        delayed++;
        expect(d.decision, ctx).toBe('delay');
        expect(d.not_before, ctx).toBe(expected);
        expect(d.reasons.some((r) => r.includes(String(expected))), ctx).toBe(true);
      }
    }
    expect(delayed).toBeGreaterThan(50);
    expect(denied).toBeGreaterThan(5);
  }, 60_000);
});

describe('decision weights and bad history', () => {
  it('with several approval rules the Decision shows the one furthest from met', () => {
    const a = { rule: 'approval_threshold', above: '0', required_weight: 3, approvers: [{ id: 'alice', weight: 2 }, { id: 'bob', weight: 1 }] } as Rule;
    const b = { rule: 'approval_threshold', above: '0', required_weight: 2, approvers: [{ id: 'carol', weight: 1 }, { id: 'dave', weight: 1 }] } as Rule;
    const approval = (approver_id: string) => signApproval({ approver_id, intent: intentId(request()), verdict: 'approve', at: NOW, strong_auth: true }, new Uint8Array(32).fill(1));
    const d = evaluatePolicy(policy([a, b]), request(), { now: NOW, approvals: [approval('alice')] });
    // rule a: 2 of 3 (1 short); rule b: 0 of 2 (2 short) -> b is shown.
    expect(d).toMatchObject({ decision: 'require_approvals', required_weight: 2, current_weight: 0 });
    expect(d.reasons).toHaveLength(2);
  });

  it('a history entry with a malformed amount is a ValidationError, not a crash', () => {
    const history: HistoryEntry[] = [{ intentId: 'int_bad', created_at: NOW - 10, amount: '1.5', status: 'confirmed', initiator: 'operator', op: 'transfer' }];
    expect(() => evaluatePolicy(policy([{ rule: 'daily_velocity_cap', limit: '10' } as Rule]), request({ amount: '1' }), { now: NOW, history })).toThrow(ValidationError);
  });

  it('PolicySetSchema itself refuses an approver listed twice, so policyDigest does too', () => {
    const dup = policy([{ rule: 'approval_threshold', above: '0', required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'alice', weight: 1 }] } as Rule]);
    expect(() => parsePolicy(dup)).toThrow(/rules\.0\.approvers\.1\.id/);
  });
});

describe('preparePolicy and sealed intents (validate once, evaluate many)', () => {
  const policy = { wallet: 'w1', version: 3, rules: [{ rule: 'hard_ceiling', max: '1000' }, { rule: 'require_tag', key: 'desk' }] };
  const request = { wallet: 'w1', destination: 'rDest', amount: '10', tags: [['desk', 'ops']] as [string, string][] };

  it('a prepared policy gives the same decision and digest as the plain one, and is frozen', () => {
    const prepared = preparePolicy(policy);
    expect(Object.isFrozen(prepared) && Object.isFrozen(prepared.rules) && Object.isFrozen(prepared.rules[0])).toBe(true);
    expect(policyDigest(prepared)).toBe(policyDigest(policy));
    expect(policyDigest(prepared)).toBe(policyDigest(prepared));
    expect(evaluatePolicy(prepared, request, { now: 1 })).toEqual(evaluatePolicy(policy, request, { now: 1 }));
    expect(preparePolicy(prepared)).toBe(prepared);
  });

  it('an invalid policy is refused when prepared, naming the field', () => {
    expect(() => preparePolicy({ ...policy, rules: [{ rule: 'hard_ceiling', max: 'lots' }] })).toThrow(/rules\.0\.max/);
  });

  it('a look-alike of a prepared policy (same shape, not prepared) is still validated', () => {
    const lookalike = JSON.parse(JSON.stringify(preparePolicy(policy)));
    lookalike.rules[0].max = '-5';
    expect(() => evaluatePolicy(lookalike, request, { now: 1 })).toThrow(/rules\.0\.max/);
  });

  it('a normalised intent is frozen, and normalising it again returns it; a copy is validated again', () => {
    const n = normalizeIntent(request);
    expect(Object.isFrozen(n) && Object.isFrozen(n.operation) && Object.isFrozen(n.tags)).toBe(true);
    expect(normalizeIntent(n)).toBe(n);
    expect(() => {
      (n as { amount: string }).amount = '999999';
    }).toThrow(TypeError);
    const copy = { ...n, amount: 'ten' };
    expect(() => normalizeIntent(copy)).toThrow(/amount/);
    expect(() => evaluatePolicy(policy, copy, { now: 1 })).toThrow(/amount/);
  });
});

describe('policyLookback', () => {
  const base = { wallet: 'w1', version: 1 };
  it('policyWindows: every distinct history window, ascending, lifetime (null) last', () => {
    expect(policyWindows({ ...base, rules: [{ rule: 'hard_ceiling', max: '5' }] })).toEqual([]);
    expect(policyWindows({ ...base, rules: [{ rule: 'daily_velocity_cap', limit: '5' }] })).toEqual([86400]);
    expect(
      policyWindows({
        ...base,
        rules: [
          { rule: 'agent_budget_ceiling', budget: '9' },
          { rule: 'daily_velocity_cap', limit: '5', window_seconds: 7200 },
          { rule: 'agent_budget_ceiling', budget: '9', window_seconds: 60 },
          { rule: 'daily_velocity_cap', limit: '6', window_seconds: 60 },
        ],
      }),
    ).toEqual([60, 7200, null]);
  });

  it('is the longest history window; null for a lifetime budget; 0 when no rule reads history', () => {
    expect(policyLookback({ ...base, rules: [{ rule: 'hard_ceiling', max: '5' }] })).toBe(0);
    expect(policyLookback({ ...base, rules: [{ rule: 'daily_velocity_cap', limit: '5' }] })).toBe(86400);
    expect(policyLookback({ ...base, rules: [{ rule: 'daily_velocity_cap', limit: '5', window_seconds: 60 }, { rule: 'agent_budget_ceiling', budget: '9', window_seconds: 7200 }] })).toBe(7200);
    expect(policyLookback({ ...base, rules: [{ rule: 'daily_velocity_cap', limit: '5' }, { rule: 'agent_budget_ceiling', budget: '9' }] })).toBeNull();
  });

  it('history older than the lookback cannot change a decision', () => {
    const policy = preparePolicy({ ...base, rules: [{ rule: 'daily_velocity_cap', limit: '100', window_seconds: 3600 }] });
    const now = 1_767_225_600;
    const old = { intentId: 'int_old', created_at: now - 3601, amount: '100', status: 'confirmed' as const, initiator: 'operator', op: 'transfer' as const };
    const recent = { ...old, intentId: 'int_new', created_at: now - 3599, amount: '50' };
    const request = { wallet: 'w1', destination: 'rDest', amount: '60' };
    const since = now - (policyLookback(policy) ?? now);
    const all = [old, recent];
    expect(evaluatePolicy(policy, request, { now, history: all })).toEqual(evaluatePolicy(policy, request, { now, history: all.filter((e) => e.created_at >= since) }));
    expect(evaluatePolicy(policy, request, { now, history: all }).decision).toBe('deny');
  });
});

describe('destination lists and the account behind a tagged address', () => {
  const tagged = 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi';
  const account = 'rBlockedAccount';
  const request = { wallet: 'w', destination: tagged, amount: '5' };

  it('attack: a tagged X-address of a blocked account passes the blocklist', () => {
    const policy = { wallet: 'w', version: 1, rules: [{ rule: 'destination_blocklist', addresses: [account] }, { rule: 'always_allow' }] };
    expect(evaluatePolicy(policy, request, { now: 1, destination_account: account })).toMatchObject({ decision: 'deny', reasons: [`destination_blocklist[0]: destination ${tagged} (account ${account}) is blocked`] });
    // Without the account (a driver that reads no tags), only the address as written is compared.
    expect(evaluatePolicy(policy, request, { now: 1 }).decision).toBe('allow');
  });

  it('an allowlisted account allows its tagged addresses; a listed tagged address is that tag only', () => {
    const byAccount = { wallet: 'w', version: 1, rules: [{ rule: 'destination_allowlist', addresses: [account] }, { rule: 'always_allow' }] };
    expect(evaluatePolicy(byAccount, request, { now: 1, destination_account: account }).decision).toBe('allow');
    const byTag = { wallet: 'w', version: 1, rules: [{ rule: 'destination_allowlist', addresses: [tagged] }, { rule: 'always_allow' }] };
    expect(evaluatePolicy(byTag, { ...request, destination: account }, { now: 1 }).decision).toBe('deny');
  });
});
