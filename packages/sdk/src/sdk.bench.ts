import { bench, describe } from 'vitest';
import { canonicalize } from './canonical.js';
import { intentId, normalizeIntent } from './digest.js';
import { signApproval, verifyApproval } from './approvals.js';
import { ed25519PublicKey } from './ed25519.js';
import { toHex } from './encoding.js';
import { evaluatePolicy } from './policy/engine.js';
import type { HistoryEntry } from './policy/types.js';
import { ReceiptChain } from './receipts.js';

const request = { wallet: 'treasury', destination: 'rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY', amount: '2500000', memo: 'invoice', tags: [['cost-center', 'ops']] as [string, string][] };
const id = intentId(request);
const sk = new Uint8Array(32).fill(9);
const pk = toHex(ed25519PublicKey(sk));
const approval = signApproval({ approver_id: 'alice', intent: id, verdict: 'approve', at: 1767225600, strong_auth: true }, sk);
const policy = {
  wallet: 'treasury',
  version: 3,
  rules: [
    { rule: 'hard_ceiling', max: '1000000000' },
    { rule: 'daily_velocity_cap', limit: '50000000000' },
    { rule: 'approval_threshold', above: '1000000', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] },
    { rule: 'timelock_above', above: '100000000', seconds: 3600 },
    { rule: 'operating_window_utc', start: '00:00', end: '00:00' },
    { rule: 'destination_blocklist', addresses: ['rBAD'] },
    { rule: 'require_tag', key: 'cost-center' },
  ],
};
const history: HistoryEntry[] = Array.from({ length: 1000 }, (_, i) => ({
  intentId: `int_${i.toString(16).padStart(64, '0')}`,
  created_at: 1767225600 - i * 60,
  amount: '1000',
  status: 'confirmed',
  initiator: 'operator',
  op: 'transfer',
}));

describe('digests', () => {
  bench('canonicalize a normalised intent', () => {
    canonicalize(normalizeIntent(request));
  });
  bench('intentId', () => {
    intentId(request);
  });
});

describe('policy', () => {
  bench('evaluatePolicy, 7 rules, 1000 history entries, 1 approval', () => {
    evaluatePolicy(policy, request, { now: 1767225600, intentId: id, history, approvals: [approval] });
  });
});

describe('approvals (strict RFC 8032, @noble/curves)', () => {
  bench('signApproval', () => {
    signApproval({ approver_id: 'alice', intent: id, verdict: 'approve', at: 1767225600, strong_auth: true }, sk);
  });
  bench('verifyApproval', () => {
    verifyApproval(approval, pk, { intentId: id });
  });
});

describe('receipts', () => {
  const chain = new ReceiptChain(sk);
  for (let i = 0; i < 100; i++) chain.append({ at: 1767225600 + i, kind: 'intent.created', intentId: id, body: { i } });
  bench('append one receipt', () => {
    chain.append({ at: 1767225600, kind: 'intent.created', intentId: id, body: { x: 1 } });
  });
  bench('verify a 100-receipt chain', () => {
    new ReceiptChain(sk, chain.records().slice(0, 100));
  });
});
