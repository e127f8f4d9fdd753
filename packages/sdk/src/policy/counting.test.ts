import { describe, expect, it } from 'vitest';
import { parsePolicy } from './engine.js';
import { rulesCountingApprover } from './counting.js';

describe('rulesCountingApprover', () => {
  const policy = parsePolicy({
    wallet: 'ops',
    version: 1,
    rules: [
      { rule: 'hard_ceiling', max: '1000' },
      { rule: 'approval_threshold', above: '10', required_weight: 2, approvers: [{ id: 'dev_a', weight: 2 }, { id: 'dev_b', weight: 1 }] },
      { rule: 'approval_threshold', above: '500', required_weight: 1, approvers: [{ id: 'dev_b', weight: 1 }] },
    ],
  });

  it('lists each approval_threshold naming the approver, with its weight', () => {
    expect(rulesCountingApprover(policy, 'dev_a')).toEqual([{ index: 1, rule: 'approval_threshold', weight: 2 }]);
    expect(rulesCountingApprover(policy, 'dev_b').map((r) => r.index)).toEqual([1, 2]);
  });

  it('is empty for an approver no rule names: its approval would count for nothing', () => {
    expect(rulesCountingApprover(policy, 'dev_c')).toEqual([]);
    expect(rulesCountingApprover(policy, 'DEV_A')).toEqual([]);
  });

  it('require_human_approver counts any approver', () => {
    const p = parsePolicy({ wallet: 'ops', version: 1, rules: [{ rule: 'require_human_approver_for_agent_initiated' }] });
    expect(rulesCountingApprover(p, 'dev_z')).toEqual([{ index: 0, rule: 'require_human_approver_for_agent_initiated', weight: null }]);
  });
});
