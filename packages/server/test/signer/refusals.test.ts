/**
 * One test per refusal reason (and per attack within it), named after the attack it stops.
 * verifyAndSign runs in-process against the memory ledger; every outcome must leave a receipt.
 */
import { DriverRegistry, intentId, normalizeIntent, policyDigest, signApproval, verifyEd25519, fromHex, type ChainSigner, type SignRequest } from '@vault/sdk';
import { memoryAddress, createSoftwareKey } from '@vault/sdk/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyAndSign, summarize, type SignOutcome } from '../../src/signer/sign.js';
import { createKey, SoftwareKeystore } from '../../src/signer/keystore.js';
import { parseTrust } from '../../src/signer/trust.js';
import { approver, basePolicy, makeWorld, PASSPHRASE, TEST_KDF, UNKNOWN_DEST, type World } from './helpers.js';

function refusedWith(outcome: SignOutcome): string {
  if (outcome.ok) throw new Error(`expected a refusal, got a signature: ${outcome.response.summary}`);
  return outcome.refusal.refused.reason;
}

let w: World;
beforeEach(async () => {
  w = await makeWorld();
});
afterEach(() => w.cleanup());

async function expectRefusal(req: SignRequest, reason: string, message?: RegExp): Promise<void> {
  const before = w.state.length;
  const outcome = await verifyAndSign(req, w.deps);
  expect(refusedWith(outcome)).toBe(reason);
  if (message && !outcome.ok) expect(outcome.refusal.message).toMatch(message);
  // Every refusal is a receipt, and the chain still verifies.
  expect(w.state.length).toBe(before + 1);
  expect(w.state.recent(1)[0]?.kind).toBe('sign.refused');
  expect(w.state.verify().verified).toBe(true);
  expect(w.signedDigests).toEqual([]);
}

describe('a valid request', () => {
  it('is signed over the payload the signer rebuilt, with a receipt and a one-line summary', async () => {
    const req = await w.request();
    const outcome = await verifyAndSign(req, w.deps);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const r = outcome.response;
    expect(r.backend).toBe('software');
    expect(r.signature.signer_address).toBe(w.signerAddress);
    expect(r.summary).toBe(`send 5 native to ${UNKNOWN_DEST} on memory:devnet`);
    expect(r.receipt_head).toBe(w.state.head);
    expect(w.state.recent(1)[0]?.kind).toBe('sign.signed');
    expect(verifyEd25519(fromHex(r.signature.signature.hex, 'sig', 64), fromHex(req.expected_payload_digest, 'd', 32), fromHex(r.signature.public_key.hex, 'pk', 32))).toBe(true);
    expect(w.signedDigests).toEqual([req.expected_payload_digest]);
  });

  it('re-signing the identical payload is idempotent: same signature, a new receipt', async () => {
    const req = await w.request();
    const a = await verifyAndSign(req, w.deps);
    const b = await verifyAndSign(req, w.deps);
    expect(a.ok && b.ok).toBe(true);
    if (!a.ok || !b.ok) return;
    expect(b.response.signature).toEqual(a.response.signature);
    expect(w.state.recent(1)[0]?.kind).toBe('sign.repeated');
  });

  it('accepts the expected digest with a 0x prefix (EVM style)', async () => {
    const req = await w.request();
    req.expected_payload_digest = `0x${req.expected_payload_digest}`;
    expect((await verifyAndSign(req, w.deps)).ok).toBe(true);
  });

  it('returns warn findings as warnings (first transfer to a new destination)', async () => {
    const req = await w.request({ destination: `mem1${'cd'.repeat(20)}` });
    const outcome = await verifyAndSign(req, w.deps);
    expect(outcome.ok).toBe(true);
    if (outcome.ok) expect(outcome.response.warnings.map((f) => f.guard)).toEqual(['address_poisoning']);
  });

  it('summarises issued assets with issuer and decimals', () => {
    const intent = normalizeIntent({ wallet: 'w', destination: 'rYYY', amount: '1250', asset_symbol: 'USD', asset_issuer: 'rXXX', asset_decimals: 2 });
    expect(summarize(intent, 'xrpl:testnet')).toBe('send 12.5 USD.rXXX to rYYY on xrpl:testnet');
  });
});

describe('intent_tampered', () => {
  it('refuses a control plane that rewrites the amount after the intent was approved', async () => {
    const req = await w.request();
    req.intent.request.amount = '900000000';
    await expectRefusal(req, 'intent_tampered', /content address/);
  });

  it('refuses a redirected destination under the original intent id', async () => {
    const req = await w.request();
    req.intent.request.destination = `mem1${'ee'.repeat(20)}`;
    await expectRefusal(req, 'intent_tampered');
  });
});

describe('policy_mismatch', () => {
  it('refuses a laxer policy even when it carries its own correct digest', async () => {
    const req = await w.request();
    req.policy = { ...req.policy, rules: [{ rule: 'always_allow' }] };
    req.policy_digest = policyDigest(req.policy);
    await expectRefusal(req, 'policy_mismatch', /not the policy pinned/);
  });

  it('refuses a policy that does not hash to the digest it is sent with', async () => {
    const req = await w.request();
    req.policy = { ...req.policy, version: 2 };
    await expectRefusal(req, 'policy_mismatch', /hashes to/);
  });

  it('refuses a wallet descriptor whose signer set was swapped by the control plane', async () => {
    const req = await w.request();
    if (req.wallet.control.kind !== 'native_multisig') throw new Error('unexpected');
    req.wallet = { ...req.wallet, control: { ...req.wallet.control, quorum: 1 } };
    await expectRefusal(req, 'policy_mismatch', /trusted copy/);
  });

  it('refuses an intent for a wallet this signer does not serve', async () => {
    const req = await w.request();
    const request = { ...req.intent.request, wallet: 'other-wallet' };
    req.intent = { ...req.intent, request, id: intentId(request) };
    await expectRefusal(req, 'policy_mismatch', /does not serve/);
  });
});

describe('approvals', () => {
  it('refuses a forged approval signature', async () => {
    const req = await w.request();
    const a = req.approvals[0]!;
    req.approvals[0] = { ...a, signature: { curve: 'ed25519', sig: (a.signature.sig[0] === '0' ? '1' : '0') + a.signature.sig.slice(1) } };
    await expectRefusal(req, 'approvals', /bad_signature/);
  });

  it('refuses an approval by an approver the trust file does not know', async () => {
    const req = await w.request();
    const mallory = approver('mallory', 9);
    req.approvals.push(signApproval({ approver_id: 'mallory', intent: req.intent.id, verdict: 'approve', at: w.clock.now, strong_auth: true }, mallory.secret));
    await expectRefusal(req, 'approvals', /unknown_approver/);
  });

  it('refuses an approval replayed from another intent', async () => {
    const req = await w.request();
    req.approvals[1] = w.approve(intentId({ wallet: 'treasury', destination: UNKNOWN_DEST, amount: '1' }), 'bob');
    await expectRefusal(req, 'approvals', /wrong_intent/);
  });

  it('refuses the same approver counted twice', async () => {
    const req = await w.request(undefined, { approvers: ['alice', 'alice'] });
    await expectRefusal(req, 'approvals', /duplicate/);
  });

  it('refuses an approval by a revoked approver', async () => {
    w.deps.trust = parseTrust({ ...w.trustFile, approvers: w.trustFile.approvers.map((a) => (a.id === 'carol' ? { ...a, revoked: true } : a)) });
    const req = await w.request();
    await expectRefusal(req, 'approvals', /revoked/);
  });

  it('refuses an initiator approving their own intent', async () => {
    const req = await w.request({ initiator: 'device:alice' });
    await expectRefusal(req, 'approvals', /self_approval/);
  });
});

describe('rejected', () => {
  it('refuses when a reject verdict is hidden among enough approvals', async () => {
    const req = await w.request();
    req.approvals[2] = w.approve(req.intent.id, 'carol', 'reject');
    await expectRefusal(req, 'rejected', /carol rejected/);
  });
});

describe('policy_denied', () => {
  it('refuses a request sent without enough approvals', async () => {
    const req = await w.request(undefined, { approvers: ['alice'] });
    await expectRefusal(req, 'policy_denied', /require_approvals/);
  });

  it('refuses an amount above the hard ceiling even with every approval', async () => {
    const req = await w.request({ amount: '950000000' });
    await expectRefusal(req, 'policy_denied', /hard_ceiling/);
  });

  it('refuses without a clearance of the destination by a clearer the policy names', async () => {
    const req = await w.request();
    req.protect.statements = [];
    await expectRefusal(req, 'policy_denied', /compliance/);
  });

  it('a backdated created_at does not defeat the timelock: the lock counts from when this signer first saw the intent', async () => {
    // 200 MEM is above timelock_above (100 MEM, 3600 s). The control plane claims the intent is 2 days old.
    const req = await w.request({ amount: '200000000' }, { createdAt: w.clock.now - 2 * 86400 });
    await expectRefusal(req, 'policy_denied', /this signer counts from 1767225600/);
    w.clock.now += 3599;
    const fresh = await w.request({ amount: '200000000' }, { createdAt: w.clock.now - 2 * 86400 });
    expect(fresh.intent.id).toBe(req.intent.id);
    await expectRefusal(fresh, 'policy_denied', /timelock/);
    // First sight survives a restart: the journal holds it.
    w.reopen();
    w.clock.now += 1;
    const later = await w.request({ amount: '200000000' }, { createdAt: w.clock.now - 2 * 86400 });
    const outcome = await verifyAndSign(later, w.deps);
    expect(outcome.ok).toBe(true);
  });

  it('a control plane that presents a timelocked intent at creation (no approvals yet) starts the signer clock then', async () => {
    const createdAt = w.clock.now - 1;
    const announce = await w.request({ amount: '200000000' }, { approvers: [], createdAt });
    await expectRefusal(announce, 'policy_denied', /require_approvals/);
    expect(w.state.firstSeen(announce.intent.id)).toBe(w.clock.now);
    w.clock.now += 3600;
    const ok = await verifyAndSign(await w.request({ amount: '200000000' }, { createdAt }), w.deps);
    expect(ok.ok).toBe(true);
  });

  it('the velocity cap counts what this signer signed, not what the control plane says it signed', async () => {
    // Two intents of 500 MEM would pass any control plane that under-reports history; the cap is 950.
    const first = await verifyAndSign(await w.request({ amount: '90000000', memo: 'a' }), w.deps);
    expect(first.ok).toBe(true);
    for (let i = 0; i < 9; i++) {
      const ok = await verifyAndSign(await w.request({ amount: '90000000', memo: `b${i}` }), w.deps);
      expect(ok.ok).toBe(true);
    }
    w.signedDigests.length = 0;
    await expectRefusal(await w.request({ amount: '90000000', memo: 'c' }), 'policy_denied', /daily_velocity_cap/);
  });
});

describe('protected', () => {
  it('refuses to send to a burned address', async () => {
    const req = await w.request();
    req.protect.burned = [UNKNOWN_DEST];
    await expectRefusal(req, 'protected', /burned_key/);
  });

  it('refuses a poisoned look-alike of a destination its trust file knows', async () => {
    const req = await w.request({ destination: `mem1${'00'.repeat(18)}abab` });
    await expectRefusal(req, 'protected', /address_poisoning/);
  });

  it('refuses a protect whose chain facts its own ledger does not report (an on-chain symbol here)', async () => {
    const req = await w.request();
    req.protect.onchain_symbol = 'USDC';
    await expectRefusal(req, 'protected', /protect disagrees with this signer's ledger: onchain_symbol/);
  });
});

describe('digest_mismatch', () => {
  it('refuses an expected digest of a different payload (a raised fee, a changed sequence)', async () => {
    const req = await w.request();
    if (req.params.kind !== 'xrpl') throw new Error('unexpected');
    req.params = { ...req.params, base_fee_drops: 5_000_000 };
    await expectRefusal(req, 'digest_mismatch', /rebuilt payload/);
  });

  it('refuses a digest the control plane made up', async () => {
    const req = await w.request();
    req.expected_payload_digest = 'ab'.repeat(32);
    await expectRefusal(req, 'digest_mismatch');
  });

  it('refuses params the driver cannot build from', async () => {
    const req = await w.request();
    req.params = { kind: 'stellar', sequence: 1, base_fee_stroops: 100, max_time: 2 };
    await expectRefusal(req, 'digest_mismatch', /cannot build/);
  });
});

describe('not_a_signer', () => {
  it('refuses to sign as a co-signer whose key it does not hold', async () => {
    const req = await w.request();
    req.signer_address = w.wallet.control.kind === 'native_multisig' ? w.wallet.control.signers[1]!.address : '';
    await expectRefusal(req, 'not_a_signer', /no key of this signer/);
  });

  it('refuses an address outside the wallet signer set', async () => {
    const req = await w.request();
    req.signer_address = memoryAddress(createSoftwareKey().publicKey);
    await expectRefusal(req, 'not_a_signer', /not a signer of/);
  });

  it('a key whose address derivation fails never controls an address, on any request (the failure is remembered, not retried into a yes)', async () => {
    const failing: ChainSigner = { ...w.chainSigner, deriveAddress: () => { throw new Error('this family does not take the key'); } };
    w.deps.signers = new DriverRegistry<ChainSigner>([failing]);
    await expectRefusal(await w.request({ memo: 'one' }), 'not_a_signer', /no key of this signer controls/);
    await expectRefusal(await w.request({ memo: 'two' }), 'not_a_signer', /no key of this signer controls/);
  });

  it('derives the address of each of its keys once per chain signer, not on every request', async () => {
    let calls = 0;
    const counting: ChainSigner = {
      ...w.chainSigner,
      deriveAddress: ({ chain, publicKey, curve }) => {
        calls += 1;
        return w.chainSigner.deriveAddress({ chain, publicKey, curve });
      },
    };
    w.deps.signers = new DriverRegistry<ChainSigner>([counting]);
    for (const memo of ['a', 'b', 'c']) expect((await verifyAndSign(await w.request({ memo }), w.deps)).ok).toBe(true);
    expect(calls).toBe(w.keys.list().length);
  });
});

describe('key', () => {
  it('refuses a key used outside its scope', async () => {
    w.cleanup();
    w = await makeWorld({ scope: { wallets: ['payroll'] } });
    await expectRefusal(await w.request(), 'key', /out of scope/);
  });

  it('refuses when the trust file narrows the key scope to another chain', async () => {
    const pk = w.keys.list()[0]!.publicKeyHex;
    w.deps.trust = parseTrust({ ...w.trustFile, keys: [{ public_key: pk, scope: { chains: ['xrpl:testnet'] } }] });
    await expectRefusal(await w.request(), 'key', /out of scope/);
  });

  it('refuses a key that stayed locked (another passphrase)', async () => {
    // A second keystore whose member key was sealed under a different passphrase.
    const dir = `${w.keystoreDir}-locked`;
    const other = await createKey(dir, { curve: 'ed25519', passphrase: 'another passphrase!', kdf: TEST_KDF });
    await createKey(dir, { curve: 'ed25519', passphrase: PASSPHRASE, kdf: TEST_KDF });
    const keys = await SoftwareKeystore.unlock(dir, PASSPHRASE);
    expect(keys.list().find((k) => k.id === other.id)?.unlocked).toBe(false);
    // The wallet names the locked key's address as member 1.
    const lockedAddress = memoryAddress(Buffer.from(other.publicKeyHex, 'hex'));
    if (w.wallet.control.kind !== 'native_multisig') throw new Error('unexpected');
    const wallet = { ...w.wallet, control: { ...w.wallet.control, signers: w.wallet.control.signers.map((s, i) => (i === 1 ? { ...s, address: lockedAddress } : s)) } };
    w.deps.trust = parseTrust({ ...w.trustFile, wallets: [{ descriptor: wallet, policy_digest: w.trustFile.wallets[0]!.policy_digest }] });
    w.deps.keys = keys;
    const req = await w.request();
    req.wallet = wallet;
    req.signer_address = lockedAddress;
    req.expected_payload_digest = w.driver.buildPayload({ intent: normalizeIntent(req.intent.request), wallet, params: req.params }).digest;
    await expectRefusal(req, 'key', /locked/);
  });

  it('refuses a key whose curve is not the one the wallet names for that signer', async () => {
    if (w.wallet.control.kind !== 'native_multisig') throw new Error('unexpected');
    const wallet = { ...w.wallet, control: { ...w.wallet.control, signers: w.wallet.control.signers.map((s, i) => (i === 0 ? { ...s, curve: 'secp256k1' as const } : s)) } };
    w.deps.trust = parseTrust({ ...w.trustFile, wallets: [{ descriptor: wallet, policy_digest: w.trustFile.wallets[0]!.policy_digest }] });
    const req = await w.request();
    req.wallet = wallet;
    await expectRefusal(req, 'key', /secp256k1 signer/);
  });
});

describe('chain', () => {
  it('refuses a second, different payload for an intent whose first payload is still live', async () => {
    const first = await w.request();
    expect((await verifyAndSign(first, w.deps)).ok).toBe(true);
    w.signedDigests.length = 0;
    const second = await w.request();
    if (second.params.kind !== 'xrpl') throw new Error('unexpected');
    second.params = { ...second.params, last_ledger_sequence: second.params.last_ledger_sequence + 5 };
    second.expected_payload_digest = w.driver.buildPayload({ intent: normalizeIntent(second.intent.request), wallet: w.wallet, params: second.params }).digest;
    await expectRefusal(second, 'chain', /live on the ledger/);
  });

  it('signs a new payload once the first is provably dead (expired on the ledger)', async () => {
    const first = await w.request();
    expect((await verifyAndSign(first, w.deps)).ok).toBe(true);
    w.ledger.close(30);
    const second = await w.request();
    expect(second.expected_payload_digest).not.toBe(first.expected_payload_digest);
    const outcome = await verifyAndSign(second, w.deps);
    expect(outcome.ok).toBe(true);
    // The death is on the record: after a restart the first payload stays dead.
    w.reopen();
    expect(w.state.signedFor(first.intent.id).map((p) => p.dead)).toEqual([true, false]);
  });

  it('refuses a new payload for an intent whose first payload was applied, even after it would have expired (double spend)', async () => {
    const first = await w.request();
    const a = await verifyAndSign(first, w.deps);
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    // The second member co-signs and the control plane submits: the intent has executed.
    const built = w.driver.buildPayload({ intent: normalizeIntent(first.intent.request), wallet: w.wallet, params: first.params });
    const second = await w.chainSigner.signPayload({ built, key: w.mw.keys[1]!, signerAddress: w.wallet.control.kind === 'native_multisig' ? w.wallet.control.signers[1]!.address : '' });
    const blob = w.driver.assemble({ built, contributions: [a.response.signature, second], wallet: w.wallet });
    if (!blob.ok) throw new Error('short of quorum');
    expect((await w.driver.submit({ chain: w.wallet.chain, blob: blob.blob })).status).toBe('submitted');
    w.ledger.close(30);
    w.signedDigests.length = 0;
    await expectRefusal(await w.request(), 'chain', /applied/);
  });

  it('refuses a fee above the trust file cap, even when params and digest agree (fee burning)', async () => {
    w.deps.trust = parseTrust({ ...w.trustFile, wallets: [{ ...w.trustFile.wallets[0]!, max_fee: 1000 }] });
    const req = await w.request();
    if (req.params.kind !== 'xrpl') throw new Error('unexpected');
    req.params = { ...req.params, base_fee_drops: 5_000_000 };
    req.expected_payload_digest = w.driver.buildPayload({ intent: normalizeIntent(req.intent.request), wallet: w.wallet, params: req.params }).digest;
    await expectRefusal(req, 'chain', /max_fee 1000/);
    expect((await verifyAndSign(await w.request(), w.deps)).ok).toBe(true);
  });

  it('refuses a chain it has no driver for', async () => {
    w.deps.drivers = new DriverRegistry();
    await expectRefusal(await w.request(), 'chain', /no driver/);
  });
});

describe('policy consistency', () => {
  it('refuses a pinned policy whose approver weights disagree with the trust file', async () => {
    const policy = basePolicy('treasury');
    const rules = policy.rules.map((r) => (r.rule === 'approval_threshold' ? { ...r, approvers: [{ id: 'alice', weight: 5 }] } : r));
    const lax = { ...policy, rules };
    w.deps.trust = parseTrust({ ...w.trustFile, wallets: [{ descriptor: w.wallet, policy_digest: policyDigest(lax) }] });
    const req = await w.request();
    req.policy = lax;
    req.policy_digest = policyDigest(lax);
    await expectRefusal(req, 'policy_mismatch', /weight 5/);
  });
});
