/**
 * The mutation test: from one valid SignRequest, thousands of generated single- and multi-field
 * tamperings (amount, destination, asset, operation, memo, params, policy, approvals, protect,
 * digest, signer_address), each sent to verifyAndSign in-process. For every one:
 *
 * - a tampering of the intent, policy, approvals, params, digest or signer_address is refused with
 *   the reason of the first check it fails (the order is the contract's: intent_tampered,
 *   policy_mismatch, approvals, rejected, policy_denied, protected, digest_mismatch, not_a_signer);
 * - a protect change is refused exactly when it turns a guard (protected) or a rule
 *   (policy_denied) against the request, and otherwise signs with any warnings. The signer reads
 *   chain facts itself, so a protect that states them otherwise is refused (protected) whichever
 *   way it errs; known destinations and the two policy flags are not read at all (only verified
 *   statements count); burned addresses only add;
 * - the ChainSigner is never asked to sign anything but the payload rebuilt from the untampered
 *   request, and every signature produced verifies over exactly that digest.
 *
 * Two changes are not tamperings the signer can see, and are generated as benign on purpose:
 * reordering approvals, and moving created_at (not covered by the intent id) for an amount no
 * timelock applies to, as long as the approvals are not then dated before the claimed creation
 * (stale: refused at the approvals step) and the claim is not a time to live back (expired:
 * policy_denied, the claim only ever makes the intent older). A destination that is not an address of the chain is
 * not an intent the control plane could have created: intent_tampered, re-hashed or not. `network_id` is not generated: the memory ledger's payload has no network
 * id, so the memory driver ignores it (a real XRPL driver puts NetworkID in the payload).
 */
import { APPROVAL_CLOCK_SKEW_SECONDS, DEFAULT_INTENT_TTL_SECONDS, earliestKnownAt, fromHex, intentExpiresAt, intentId, isExpired, policyDigest, signApproval, verifyEd25519, verifyReceiptChain, type RefusalReason, type SignRequest } from '@vault/sdk';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAndSign } from '../../src/signer/sign.js';
import { memoryAddressProblem } from '@vault/sdk/testing';
import { approver, makeWorld, type World } from './helpers.js';

const MEM_ADDR = fc.stringMatching(/^mem1[0-9a-f]{40}$/);
const HEX64 = fc.stringMatching(/^[0-9a-f]{64}$/);

const FIELDS = ['amount', 'destination', 'asset', 'operation', 'memo', 'created_at', 'policy', 'approvals', 'protect', 'params', 'digest', 'signer_address'] as const;
type Field = (typeof FIELDS)[number];

const APPROVAL_KINDS = ['forge', 'unknown', 'duplicate', 'at', 'verdict', 'strong_auth', 'reject', 'drop', 'reorder'] as const;
const PROTECT_KINDS = [
  'burn_destination',
  'lookalike',
  'impersonate_usdc',
  'no_compliance',
  'uncleared_flag',
  'forged_clearance',
  'forget_destinations',
  'attested',
  'owner_burned',
  'mem_symbol',
  'evm_code',
  'burn_other',
] as const;
const PROTECT_EFFECT: Record<(typeof PROTECT_KINDS)[number], RefusalReason | null> = {
  burn_destination: 'protected',
  lookalike: null,
  impersonate_usdc: 'protected',
  no_compliance: 'policy_denied',
  uncleared_flag: null,
  forged_clearance: 'policy_denied',
  forget_destinations: null,
  attested: null,
  owner_burned: 'protected',
  mem_symbol: 'protected',
  evm_code: 'protected',
  burn_other: null,
};

const params = fc.record({
  amount: fc.bigInt({ min: 1n, max: 10n ** 15n }).filter((a) => a !== 5_000_000n).map(String),
  destination: fc.oneof(MEM_ADDR, fc.string({ minLength: 1, maxLength: 60 })),
  asset: fc.oneof(
    fc.record({ asset_symbol: fc.constantFrom('USD', 'MEM', 'EUR', 'USDC') }),
    fc.record({ asset_issuer: MEM_ADDR }),
    fc.record({ asset_decimals: fc.integer({ min: 0, max: 36 }).filter((d) => d !== 6) }),
  ),
  operation: fc.constantFrom<SignRequest['intent']['request']['operation']>({ op: 'issue' }, { op: 'clawback' }, { op: 'authorize_holder' }, { op: 'contract_call', data_hex: '0xdeadbeef' }),
  memo: fc.string({ maxLength: 40 }),
  created_at: fc.integer({ min: 0, max: 2_000_000_000 }),
  rehash: fc.boolean(),
  policy: fc.record({ kind: fc.constantFrom('ceiling', 'drop_rule', 'version', 'digest_only', 'loosen_threshold'), n: fc.nat({ max: 1000 }), redigest: fc.boolean() }),
  approvals: fc.record({ kind: fc.constantFrom(...APPROVAL_KINDS), index: fc.nat({ max: 2 }), nibble: fc.nat({ max: 127 }) }),
  protect: fc.constantFrom(...PROTECT_KINDS),
  params: fc.record({ kind: fc.constantFrom('sequence', 'fee', 'last_ledger', 'stellar', 'evm'), delta: fc.integer({ min: 1, max: 1000 }) }),
  digest: HEX64,
  signer_address: fc.oneof(fc.constantFrom('member1', 'member2'), MEM_ADDR, fc.string({ minLength: 1, maxLength: 80 })),
});
type Params = typeof params extends fc.Arbitrary<infer T> ? T : never;

let w: World;
let base: SignRequest;
let baseDigest: string;
const mallory = approver('mallory', 9);

beforeAll(async () => {
  w = await makeWorld();
  base = await w.request();
  baseDigest = base.expected_payload_digest;
  const first = await verifyAndSign(structuredClone(base), w.deps);
  expect(first.ok).toBe(true);
});
afterAll(() => w.cleanup());

/** Applies the chosen tamperings and returns the reason the contract says must come back (null: sign). */
function tamper(req: SignRequest, fields: readonly Field[], p: Params): RefusalReason | null {
  const has = (f: Field) => fields.includes(f);
  const r = req.intent.request;
  let intentChanged = false;
  if (has('amount')) ((r.amount = p.amount), (intentChanged = true));
  if (has('destination') && p.destination !== r.destination) ((r.destination = p.destination), (intentChanged = true));
  if (has('asset')) (Object.assign(r, p.asset), (intentChanged = true));
  if (has('operation')) ((r.operation = p.operation), (intentChanged = true));
  if (has('memo')) ((r.memo = p.memo), (intentChanged = true));
  if (has('created_at')) req.intent.created_at = p.created_at;
  const notAnAddress = r.destination !== base.intent.request.destination && memoryAddressProblem(r.destination) !== null;
  if (intentChanged && p.rehash && !notAnAddress) req.intent.id = intentId(r);

  if (has('policy')) {
    const rules = [...req.policy.rules];
    if (p.policy.kind === 'ceiling') rules[0] = { rule: 'hard_ceiling', max: String(900_000_001 + p.policy.n) };
    if (p.policy.kind === 'drop_rule') rules.splice(p.policy.n % rules.length, 1);
    if (p.policy.kind === 'loosen_threshold') rules[2] = { rule: 'approval_threshold', above: '1000000', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] };
    req.policy = { ...req.policy, rules, version: p.policy.kind === 'version' ? req.policy.version + 1 + p.policy.n : req.policy.version };
    if (p.policy.kind === 'digest_only') req.policy_digest = policyDigest({ ...req.policy, version: 7777 + p.policy.n });
    else if (p.policy.redigest) req.policy_digest = policyDigest(req.policy);
  }

  let approvalsEffect: RefusalReason | null = null;
  if (has('approvals')) {
    const a = req.approvals;
    const i = p.approvals.index;
    const target = a[i]!;
    switch (p.approvals.kind) {
      case 'forge': {
        const pos = p.approvals.nibble;
        const c = target.signature.sig[pos]!;
        const sig = target.signature.sig.slice(0, pos) + (c === '0' ? '1' : '0') + target.signature.sig.slice(pos + 1);
        a[i] = { ...target, signature: { curve: 'ed25519', sig } };
        approvalsEffect = 'approvals';
        break;
      }
      case 'unknown':
        a.push(signApproval({ approver_id: 'mallory', intent: base.intent.id, verdict: 'approve', at: w.clock.now, strong_auth: true }, mallory.secret));
        approvalsEffect = 'approvals';
        break;
      case 'duplicate':
        a.push(structuredClone(target));
        approvalsEffect = 'approvals';
        break;
      case 'at':
        a[i] = { ...target, at: target.at + 1 + p.approvals.nibble };
        approvalsEffect = 'approvals';
        break;
      case 'verdict':
        a[i] = { ...target, verdict: 'reject' };
        approvalsEffect = 'approvals';
        break;
      case 'strong_auth':
        a[i] = { ...target, strong_auth: !target.strong_auth };
        approvalsEffect = 'approvals';
        break;
      case 'reject':
        a[i] = w.approve(base.intent.id, target.approver_id, 'reject');
        approvalsEffect = 'rejected';
        break;
      case 'drop':
        a.splice(0, a.length, target);
        approvalsEffect = 'policy_denied';
        break;
      case 'reorder':
        a.reverse();
        break;
    }
  }

  const protectEffect = has('protect') ? PROTECT_EFFECT[p.protect] : null;
  if (has('protect')) {
    const pr = req.protect;
    const dest = req.intent.request.destination;
    switch (p.protect) {
      case 'burn_destination':
        pr.burned = [...pr.burned, dest];
        break;
      case 'lookalike':
        pr.known_destinations = [`${dest.slice(0, 8)}${'0'.repeat(32)}${dest.slice(-4)}`];
        break;
      case 'impersonate_usdc':
        pr.onchain_symbol = 'USDC';
        break;
      case 'no_compliance':
        delete pr.statements;
        break;
      case 'uncleared_flag':
        pr.compliance_cleared = false;
        break;
      case 'forged_clearance':
        pr.statements = (pr.statements ?? []).map((st) => ({ ...st, expires_at: st.expires_at + 1 }));
        break;
      case 'forget_destinations':
        pr.known_destinations = [];
        break;
      case 'attested':
        pr.attestation_valid = true;
        break;
      case 'owner_burned':
        pr.token_owner_burned = true;
        break;
      case 'mem_symbol':
        pr.onchain_symbol = 'MEM';
        break;
      case 'evm_code':
        pr.evm_code = [[dest, '0x']];
        break;
      case 'burn_other':
        pr.burned = [`mem1${'77'.repeat(20)}`];
        break;
    }
  }

  let digestChanged = false;
  if (has('params')) {
    const pp = req.params;
    if (pp.kind !== 'xrpl') throw new Error('unexpected');
    const d = p.params.delta;
    if (p.params.kind === 'sequence') req.params = { ...pp, sequence: pp.sequence + d };
    if (p.params.kind === 'fee') req.params = { ...pp, base_fee_drops: pp.base_fee_drops + d };
    if (p.params.kind === 'last_ledger') req.params = { ...pp, last_ledger_sequence: pp.last_ledger_sequence + d };
    if (p.params.kind === 'stellar') req.params = { kind: 'stellar', sequence: d, base_fee_stroops: 100, max_time: d };
    if (p.params.kind === 'evm') req.params = { kind: 'evm_safe', chain_id: d, safe_nonce: String(d) };
    digestChanged = true;
  }
  if (has('digest') && p.digest !== baseDigest) ((req.expected_payload_digest = p.digest), (digestChanged = true));

  let signerChanged = false;
  if (has('signer_address')) {
    const members = w.wallet.control.kind === 'native_multisig' ? w.wallet.control.signers : [];
    const s = p.signer_address;
    const addr = s === 'member1' ? members[1]!.address : s === 'member2' ? members[2]!.address : s;
    if (addr !== req.signer_address) ((req.signer_address = addr), (signerChanged = true));
  }

  // Approvals dated before the claimed creation (beyond the skew) are stale.
  const stale = req.approvals.some((a) => a.at < req.intent.created_at - APPROVAL_CLOCK_SKEW_SECONDS);
  // A claimed creation a time to live back is expired, whatever else holds: the signer counts the
  // time to live from the earliest fact it has (the claim, its first sight, the approvals' dates).
  const since = earliestKnownAt({ claimed: req.intent.created_at, firstSeen: w.state.firstSeen(req.intent.id), approvals: req.approvals });
  const expired = isExpired(intentExpiresAt(since, DEFAULT_INTENT_TTL_SECONDS), w.clock.now);

  // The contract's order.
  if (intentChanged && (!p.rehash || notAnAddress)) return 'intent_tampered';
  if (has('policy')) return 'policy_mismatch';
  if (intentChanged) return 'approvals'; // re-hashed: every approval is for the original intent
  if (approvalsEffect === 'approvals' || stale) return 'approvals';
  if (approvalsEffect === 'rejected') return 'rejected';
  if (expired) return 'policy_denied';
  if (approvalsEffect === 'policy_denied' || protectEffect === 'policy_denied') return 'policy_denied';
  if (protectEffect === 'protected') return 'protected';
  if (digestChanged) return 'digest_mismatch';
  if (signerChanged) return 'not_a_signer';
  return null;
}

async function runOne(fields: readonly Field[], p: Params): Promise<void> {
  const req = structuredClone(base);
  const expected = tamper(req, fields, p);
  const before = w.signedDigests.length;
  const outcome = await verifyAndSign(req, w.deps);
  // Nothing but the payload rebuilt from the untampered request is ever handed to the ChainSigner.
  for (const d of w.signedDigests.slice(before)) expect(d).toBe(baseDigest);
  if (expected === null) {
    expect(outcome.ok, `fields ${fields.join(',')}: ${outcome.ok ? '' : outcome.refusal.message}`).toBe(true);
    if (outcome.ok) {
      const sig = outcome.response.signature;
      expect(verifyEd25519(fromHex(sig.signature.hex, 'sig', 64), fromHex(baseDigest, 'd', 32), fromHex(sig.public_key.hex, 'pk', 32))).toBe(true);
    }
  } else {
    expect(outcome.ok ? 'signed' : outcome.refusal.refused.reason, `fields ${fields.join(',')} ${JSON.stringify(p)}`).toBe(expected);
  }
}

describe('mutation test: tampered SignRequests', () => {
  it('single-field tamperings are refused with the reason of their first failed check', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIELDS), params, async (field, p) => runOne([field], p)),
      { numRuns: 1200 },
    );
  }, 120_000);

  it('multi-field tamperings are refused with the reason of the earliest failed check', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.constantFrom(...FIELDS), { minLength: 2, maxLength: 6 }), params, async (fields, p) => runOne(fields, p)),
      { numRuns: 1300 },
    );
  }, 120_000);

  it('left a receipt for every request and a chain that verifies', { timeout: 30_000 }, () => {
    expect(w.state.length).toBeGreaterThanOrEqual(2501);
    expect(w.state.verify().verified).toBe(true);
    // And the SDK's own verifier (pure-JS, ~3 ms a record) over the newest 300.
    const records = w.state.records();
    const tail = records.slice(-300);
    const anchor = records[records.length - 301]!;
    expect(verifyReceiptChain(tail, w.state.receiptPublicKey, { startPrev: anchor.hash, startSeq: anchor.seq + 1, head: w.state.head }).verified).toBe(true);
    // Only one payload was ever signed for the intent.
    expect(new Set(w.signedDigests)).toEqual(new Set([baseDigest]));
  });
});
