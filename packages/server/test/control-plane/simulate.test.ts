/**
 * POST /policy/{wallet}/simulate (issue #23): a proposed policy evaluated against the wallet's
 * newest intents beside the policy in force, by the evaluation POST /intent uses, over real sockets.
 */
import type { PolicySet, Rule } from '@vault/sdk';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readStateFile, writeStateFile } from '../../src/control-plane/state.js';
import { raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const CURRENT: Rule[] = [{ rule: 'approval_threshold', above: '1000', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] }, { rule: 'always_allow' }];
const PROPOSED: PolicySet = {
  wallet: 'ops',
  version: 2,
  rules: [{ rule: 'hard_ceiling', max: '100' }, { rule: 'approval_threshold', above: '10', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] }, { rule: 'always_allow' }],
};

const simulate = (t: Harness, body: unknown, wallet = 'ops') => raw(t, 'POST', `/policy/${wallet}/simulate`, { body: typeof body === 'string' ? body : JSON.stringify(body) });

/** Four intents: 5, 50 (approved by alice), 60, 500. */
async function fourIntents(t: Harness): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const amount of ['5', '50', '60', '500']) {
    t.clock.now += 1;
    ids[amount] = (await t.client.createIntent({ wallet: 'ops', destination: t.dest(), amount })).intentId;
  }
  await t.client.approveSigned(ids['50'] as string, t.approve(ids['50'] as string, 'alice'));
  return ids;
}

describe('POST /policy/{wallet}/simulate', () => {
  it('lists the decisions the proposed policy would change, newest first, with both decisions; approvals count as in POST /intent', async () => {
    h = await setup({ rules: CURRENT });
    const ids = await fourIntents(h);
    const r = await simulate(h, { policy: PROPOSED });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ wallet: 'ops', current: { version: 1 }, proposed: { version: 2 }, evaluated: 4, at: h.clock.now });
    expect(r.body.current.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.proposed.digest).not.toBe(r.body.current.digest);
    // 5: allowed either way. 50: above the new threshold, but alice approved it: still allowed.
    expect(r.body.changed.map((c: { intentId: string }) => c.intentId)).toEqual([ids['500'], ids['60']]);
    expect(r.body.changed[0]).toMatchObject({ amount: '500', status: 'allowed', operation: 'transfer', initiator: 'operator', current: { decision: 'allow' }, proposed: { decision: 'deny' } });
    expect(r.body.changed[1]).toMatchObject({ amount: '60', current: { decision: 'allow' }, proposed: { decision: 'require_approvals', required_weight: 1, current_weight: 0 } });
  });

  it('writes nothing: no receipt, no status change', async () => {
    h = await setup({ rules: CURRENT });
    const ids = await fourIntents(h);
    const before = await h.client.health();
    expect((await simulate(h, { policy: PROPOSED })).status).toBe(200);
    expect((await h.client.health()).receipt_head).toBe(before.receipt_head);
    expect((await h.client.intent(ids['500'] as string)).status).toBe('allowed');
  });

  it('predicts what the control plane decides once the policy is in force (the same evaluation)', async () => {
    h = await setup({ rules: CURRENT });
    const ids = await fourIntents(h);
    const predicted = (await simulate(h, { policy: PROPOSED })).body;
    const path = join(h.dir, 'state.json');
    writeStateFile(path, { ...readStateFile(path), policies: [PROPOSED] });
    await h.client.reload();
    for (const c of predicted.changed) expect((await h.client.intent(c.intentId)).decision).toEqual(c.proposed);
    // And with the proposed policy in force, simulating it changes nothing.
    expect((await simulate(h, { policy: PROPOSED })).body).toMatchObject({ evaluated: 4, changed: [] });
    expect((await h.client.intent(ids['5'] as string)).decision.decision).toBe('allow');
  });

  it("limit: only the wallet's newest intents, at most 200", async () => {
    h = await setup({ rules: CURRENT });
    const ids = await fourIntents(h);
    const r = await simulate(h, { policy: PROPOSED, limit: 1 });
    expect(r.body).toMatchObject({ evaluated: 1, changed: [{ intentId: ids['500'] }] });
    expect((await simulate(h, { policy: PROPOSED, limit: 201 })).body.error.data.path).toBe('limit');
  });

  it('refusals name the field: the wallet, the policy and its rules, unknown members, limit; 404 for an unknown wallet', async () => {
    h = await setup({ rules: CURRENT });
    const cases: [unknown, string][] = [
      [{ policy: { ...PROPOSED, wallet: 'other' } }, 'policy.wallet'],
      [{ policy: { ...PROPOSED, rules: [{ rule: 'no_such_rule' }] } }, 'policy.rules.0.rule'],
      [{ policy: { ...PROPOSED, rules: [{ rule: 'hard_ceiling', max: '-1' }] } }, 'policy.rules.0.max'],
      [{ policy: { ...PROPOSED, version: 'two' } }, 'policy.version'],
      [{}, 'policy'],
      [{ policy: PROPOSED, extra: 1 }, ''],
      [{ policy: PROPOSED, limit: 0 }, 'limit'],
      [{ policy: PROPOSED, limit: '5' }, 'limit'],
      ['[]', ''],
    ];
    for (const [body, path] of cases) {
      const r = await simulate(h, body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).toBe(400);
      expect(r.body.error.code).toBe(4000);
      expect(r.body.error.data.path, JSON.stringify(body)).toBe(path);
    }
    expect((await simulate(h, { policy: PROPOSED }, 'nope')).status).toBe(404);
  });

  it('attack: an oversized body is refused before it is parsed, and malformed JSON is a 400', async () => {
    h = await setup({ rules: CURRENT });
    const huge = JSON.stringify({ policy: { ...PROPOSED, rules: [{ rule: 'destination_blocklist', addresses: Array.from({ length: 20_000 }, (_, i) => `mem1${String(i).padStart(40, '0')}`) }] } });
    expect(huge.length).toBeGreaterThan(256 * 1024);
    const big = await simulate(h, huge);
    expect(big.status).toBe(400);
    expect(big.body.error.message).toMatch(/body larger than 262144 bytes/);
    expect((await simulate(h, '{"policy":')).status).toBe(400);
  });

  it('needs a session (which roles may: access.test.ts, cell by cell)', async () => {
    h = await setup({ rules: CURRENT });
    const r = await raw(h, 'POST', '/policy/ops/simulate', { body: JSON.stringify({ policy: PROPOSED }), token: null });
    expect(r.status).toBe(401);
  });
});
