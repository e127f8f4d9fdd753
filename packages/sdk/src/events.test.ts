import { describe, expect, it } from 'vitest';
import { assertProjectable, EVENT_TYPES, matchesEventFilter, projectReceipt, PROJECTED_RECEIPT_KINDS } from './events.js';
import { InternalError } from './errors.js';
import { eventId, VaultEventSchema } from './schemas/event.js';

const hash = 'ab'.repeat(32);
const at = 1_767_225_600;
const intentId = 'i'.repeat(64);
const decision = { decision: 'allow', not_before: 0 };

function project(kind: string, body: unknown, ctx = {}) {
  return projectReceipt({ kind, at, hash, intentId, body }, ctx);
}

describe('projectReceipt', () => {
  it('every projected event is a valid wire event of a listed type', () => {
    const samples: [string, unknown, object][] = [
      ['intent.created', { decision, intentId, status: 'approved' }, { wallet: 'ops', from: null }],
      ['intent.status', { intentId, from: 'timelocked', to: 'approved', decision }, { wallet: 'ops' }],
      ['intent.approval', { intentId, approval: { approver_id: 'alice', verdict: 'approve', at }, status: 'approved', decision }, { wallet: 'ops', from: 'pending_approvals' }],
      ['intent.approve_unsigned', { intentId, at }, { wallet: 'ops', from: 'approved' }],
      ['intent.signing', { intentId, digest: hash }, { wallet: 'ops', from: 'approved' }],
      ['intent.awaiting_signatures', { intentId, weight: 1, quorum: 2, signers: [{ signer: 's', address: 'a', ok: true, detail: 'signed' }] }, { wallet: 'ops', from: 'approved' }],
      ['intent.submitting', { intentId, txHash: 'T', digest: hash, signers: [{ signer: 's', address: 'a', ok: true, detail: 'signed' }] }, { wallet: 'ops', from: 'approved' }],
      ['intent.confirmed', { intentId, txHash: 'T', code: 'ok', ledger: 3 }, { wallet: 'ops', from: 'submitted' }],
      ['intent.failed', { intentId, stage: 'submit', code: 'x' }, { wallet: 'ops', from: 'submitted' }],
      ['intent.cancelled', { intentId, by: 'operator', at }, { wallet: 'ops', from: 'approved' }],
      ['intent.expired', { intentId, expires_at: at }, { wallet: 'ops', from: 'approved' }],
      ['device.paired', { device: { id: 'dev_1', role: 'approver', label: 'l', public_key: hash, paired_at: at, revoked_at: null } }, {}],
      ['device.revoked', { id: 'dev_1', at }, {}],
      ['state.reloaded', { state_digest: hash }, {}],
      ['state.shared', { state_digest: hash }, {}],
      ['webhook.created', { id: 'wh_0123', origin: 'https://hooks.example', url_digest: hash, types: ['intent.*'] }, {}],
      ['webhook.deleted', { id: 'wh_0123' }, {}],
      ['operator.created', { name: 'olga', role: 'operator', created_at: at }, {}],
      ['operator.disabled', { name: 'olga', disabled_at: at }, {}],
      ['apikey.created', { id: '0123456789abcdef', bound_to: 'agent:bot', wallets: ['ops'], expires_at: at + 60, label: 'bot', created_at: at }, {}],
      ['apikey.revoked', { id: '0123456789abcdef', revoked_at: at }, {}],
      ['change.proposed', { id: 'chg_01', digest: 'ab'.repeat(32), base_version: 0, ops: ['set_policy'], proposed_by: 'a1' }, {}],
      ['change.verdict', { id: 'chg_01', admin_id: 'a1', verdict: 'approve', at: 5 }, {}],
      ['change.applied', { id: 'chg_01', digest: 'ab'.repeat(32), version: 1, ready_at: 5 }, {}],
    ];
    expect(new Set(samples.map((s) => s[0]))).toEqual(new Set(PROJECTED_RECEIPT_KINDS));
    const seen = new Set<string>();
    let seq = 1;
    for (const [kind, body, ctx] of samples) {
      for (const d of project(kind, body, ctx)) {
        expect(Object.keys(EVENT_TYPES)).toContain(d.type);
        expect(VaultEventSchema.safeParse({ ...d, id: eventId(seq), seq }).success).toBe(true);
        expect(d.receipt).toBe(hash);
        expect(d.at).toBe(at);
        seen.add(d.type);
        seq++;
      }
    }
    expect(seen).toEqual(new Set(Object.keys(EVENT_TYPES)));
  });

  it('every event of a receipt names its actor; a receipt from before actors yields none', () => {
    const withActor = projectReceipt({ kind: 'intent.approval', at, hash, intentId, actor: 'device:alice', body: { intentId, approval: { approver_id: 'alice', verdict: 'approve', at }, status: 'approved', decision } }, { wallet: 'ops', from: 'pending_approvals' });
    expect(withActor.map((e) => e.actor)).toEqual(['device:alice', 'device:alice']);
    for (const d of withActor) expect(VaultEventSchema.safeParse({ ...d, id: eventId(1), seq: 1 }).success).toBe(true);
    const old = project('intent.expired', { intentId, expires_at: at }, { wallet: 'ops', from: 'approved' });
    expect(old.map((e) => 'actor' in e)).toEqual([false, false]);
    expect(VaultEventSchema.safeParse({ ...old[0], actor: 'nobody', id: eventId(1), seq: 1 }).success).toBe(false);
  });

  it('a status change yields intent.status_changed after the stage event, only when the status moved', () => {
    const types = project('intent.approval', { intentId, approval: { approver_id: 'bob', verdict: 'approve', at }, status: 'approved', decision }, { wallet: 'ops', from: 'pending_approvals' }).map((e) => e.type);
    expect(types).toEqual(['approval.recorded', 'intent.status_changed']);
    const same = project('intent.approval', { intentId, approval: { approver_id: 'bob', verdict: 'approve', at }, status: 'pending_approvals', decision }, { wallet: 'ops', from: 'pending_approvals' });
    expect(same.map((e) => e.type)).toEqual(['approval.recorded']);
    expect(same[0]!.subject).toEqual({ intent: intentId, wallet: 'ops', device: 'bob' });
  });

  it('each signer line of a stage is its own event, before the stage', () => {
    const signers = [
      { signer: 'a', address: 'ra', ok: true, detail: 'signed' },
      { signer: 'b', address: 'rb', ok: false, detail: 'refused: policy' },
    ];
    const out = project('intent.submitting', { intentId, txHash: 'T', digest: hash, signers }, { wallet: 'ops', from: 'approved' });
    expect(out.map((e) => e.type)).toEqual(['intent.signer_outcome', 'intent.signer_outcome', 'intent.submitting', 'intent.status_changed']);
    expect(out.slice(0, 2).map((e) => e.data)).toEqual(signers);
    expect(out[3]!.data).toMatchObject({ from: 'approved', to: 'submitted' });
  });

  it('fails closed on a receipt kind with no projection', () => {
    expect(() => assertProjectable('intent.mystery')).toThrow(InternalError);
    expect(() => project('intent.mystery', { intentId })).toThrow(/no event projection/);
    expect(() => assertProjectable('__proto__')).toThrow(InternalError);
    expect(() => project('intent.created', null)).toThrow(InternalError);
    expect(() => project('device.revoked', {})).toThrow(InternalError);
  });
});

describe('matchesEventFilter', () => {
  const e = { type: 'intent.created', subject: { intent: 'i1', wallet: 'ops' } };
  it('every member present must match', () => {
    expect(matchesEventFilter(e, undefined)).toBe(true);
    expect(matchesEventFilter(e, { types: ['intent.created', 'device.paired'] })).toBe(true);
    expect(matchesEventFilter(e, { types: ['device.paired'] })).toBe(false);
    expect(matchesEventFilter(e, { wallet: 'ops', intent: 'i1' })).toBe(true);
    expect(matchesEventFilter(e, { wallet: 'other' })).toBe(false);
    expect(matchesEventFilter(e, { intent: 'i2' })).toBe(false);
  });
});
