// The SDK demo (README quick start): build an intent, evaluate a policy, sign and verify
// approvals, re-evaluate, and keep a signed receipt chain. Runs offline against the built SDK.
import {
  evaluatePolicy,
  generateEd25519KeyPair,
  intentId,
  normalizeIntent,
  policyDigest,
  ReceiptChain,
  signApproval,
  STATUS_BY_DECISION,
  verifyApprovals,
} from '@vault/sdk';

const now = Math.floor(Date.now() / 1000);
const line = (label, value) => console.log(`${label.padEnd(22)} ${value}`);

const alice = generateEd25519KeyPair();
const bob = generateEd25519KeyPair();

const policy = {
  wallet: 'treasury',
  version: 1,
  rules: [
    { rule: 'hard_ceiling', max: '1000000000' },
    { rule: 'daily_velocity_cap', limit: '50000000' },
    {
      rule: 'approval_threshold',
      above: '1000000',
      required_weight: 2,
      approvers: [
        { id: 'alice', weight: 1 },
        { id: 'bob', weight: 1 },
      ],
    },
  ],
};

const request = {
  wallet: 'treasury',
  destination: 'rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY',
  amount: '2500000',
  memo: 'invoice 1042',
};

const id = intentId(request);
console.log('== intent');
line('intent id', id);
line('normalised', JSON.stringify(normalizeIntent(request)));
line('policy digest', policyDigest(policy));

const first = evaluatePolicy(policy, request, { now, intentId: id });
console.log('\n== first evaluation');
line('decision', `${first.decision} -> status ${STATUS_BY_DECISION[first.decision]}`);
line('weight', `${first.current_weight} of ${first.required_weight}`);
for (const r of first.reasons) line('reason', r);

console.log('\n== approvals');
const approvals = [
  signApproval({ approver_id: 'alice', intent: id, verdict: 'approve', at: now, strong_auth: true }, alice.secretKey),
  signApproval({ approver_id: 'bob', intent: id, verdict: 'approve', at: now, strong_auth: false }, bob.secretKey),
  // A forged approval: claims to be bob but is signed with alice's key.
  signApproval({ approver_id: 'bob', intent: id, verdict: 'approve', at: now, strong_auth: true }, alice.secretKey),
];
const approvers = new Map([
  ['alice', { publicKey: alice.publicKeyHex }],
  ['bob', { publicKey: bob.publicKeyHex }],
]);
const { valid, counted, problems } = verifyApprovals(approvals, { intentId: id, approvers, window: { createdAt: now, now } });
line('valid', valid.map((a) => a.approver_id).join(', '));
for (const p of problems) line(`refused #${p.index}`, `${p.reason}: ${p.message}`);

// The policy counts `counted`: a strong_auth without a passkey assertion counts as weak there.
const second = evaluatePolicy(policy, request, { now, intentId: id, approvals: counted });
console.log('\n== re-evaluation');
line('decision', `${second.decision} -> status ${STATUS_BY_DECISION[second.decision]}`);
line('weight', `${second.current_weight} of ${second.required_weight}`);
for (const r of second.reasons) line('reason', r);

console.log('\n== receipts');
const receiptKey = generateEd25519KeyPair();
const chain = new ReceiptChain(receiptKey.secretKey);
chain.append({ at: now, kind: 'intent.created', intentId: id, body: first });
chain.append({ at: now, kind: 'intent.approved', intentId: id, body: second });
const check = chain.verify();
line('receipt head', chain.head);
line('chain verified', `${check.verified} (${check.receipts} receipts)`);

if (first.decision !== 'require_approvals' || second.decision !== 'allow' || problems.length !== 1 || !check.verified) {
  console.error('\ndemo: unexpected result');
  process.exit(1);
}
console.log('\nDecision: allow — the intent may be executed.');
