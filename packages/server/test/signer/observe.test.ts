/**
 * POST /observe: a control plane shows the signer an intent a timelock holds back when it creates
 * it, so the signer's clock starts then. The signer checks the intent, wallet and policy as /sign
 * does, records first sight, and signs nothing. Over a real loopback socket with the SDK client.
 */
import { ObserveResponseSchema, SIGNER_TOKEN_HEADER, type ObserveRequest, type SignerClient, type SignRequest } from '@vault/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Listening } from '../../src/http/index.js';
import type { KeyBackend } from '../../src/signer/keystore.js';
import { observeIntent } from '../../src/signer/observe.js';
import { verifyAndSign } from '../../src/signer/sign.js';
import { makeWorld, serveWorld, type World } from './helpers.js';

const TOKEN = 'observe-token-0123456789abcdef-0123456789';
/** Above timelock_above (100 MEM, 3600 s) in the helpers' base policy. */
const HELD = '200000000';

let w: World;
let server: Listening;
let signer: SignerClient;
/** Every call the signer app made to its keystore. */
let keyCalls: string[];

beforeEach(async () => {
  w = await makeWorld();
  keyCalls = [];
  const keys = w.deps.keys;
  const spied: KeyBackend = {
    name: keys.name,
    list: () => (keyCalls.push('list'), keys.list()),
    signingKey: (hex) => (keyCalls.push('signingKey'), keys.signingKey(hex)),
  };
  ({ server, client: signer } = await serveWorld(w, TOKEN, { keys: spied }));
});
afterEach(async () => {
  await server.close();
  w.cleanup();
});

function envelope(req: SignRequest): ObserveRequest {
  return { intent: req.intent, wallet: req.wallet, policy: req.policy, policy_digest: req.policy_digest };
}

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { [SIGNER_TOKEN_HEADER]: TOKEN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const kinds = () => w.state.records().map((r) => r.kind);

describe('POST /observe', () => {
  it('records first sight once, durably, under an intent.observed receipt, and answers when the timelock counts from', async () => {
    const req = await w.request({ amount: HELD }, { approvers: [], createdAt: w.clock.now });
    const first = await signer.observe(envelope(req));
    expect(first).toEqual({ ok: true, response: { intentId: req.intent.id, first_seen_at: w.clock.now, timelock_from: w.clock.now, receipt_head: w.state.head } });
    expect(w.state.firstSeen(req.intent.id)).toBe(w.clock.now);
    expect(kinds()).toEqual(['intent.observed']);
    const seenAt = w.clock.now;
    // Again later: nothing written, the first sight stands.
    w.clock.now += 600;
    const again = await signer.observe(envelope(req));
    expect(again.ok && again.response.first_seen_at).toBe(seenAt);
    expect(kinds()).toEqual(['intent.observed']);
    // It survives a restart: the journal holds it.
    w.reopen();
    expect(w.state.firstSeen(req.intent.id)).toBe(seenAt);
    expect(w.state.verify().verified).toBe(true);
  });

  it('attack: an observe request cannot produce a signature', async () => {
    // An intent /sign would sign at once: fully approved, no timelock.
    const req = await w.request();
    // The whole SignRequest posted to /observe is not an observe request: 400, nothing recorded.
    const smuggled = await post('/observe', req);
    expect(smuggled.status).toBe(400);
    expect(w.state.length).toBe(0);
    // Its intent, wallet and policy are observed: the answer carries no signature, the keystore
    // was never touched, no payload was built or signed, and the journal says so.
    const observed = await post('/observe', envelope(req));
    expect(observed.status).toBe(200);
    expect(Object.keys(observed.body).sort()).toEqual(['first_seen_at', 'intentId', 'receipt_head', 'timelock_from']);
    expect(ObserveResponseSchema.safeParse(observed.body).success).toBe(true);
    expect(keyCalls).toEqual([]);
    expect(w.signedDigests).toEqual([]);
    expect(w.state.signedFor(req.intent.id)).toEqual([]);
    expect(kinds()).toEqual(['intent.observed']);
    // Even in-process with the full deps, observing reads nothing but the intent, wallet and policy.
    const direct = await observeIntent(req, w.deps);
    expect(direct.ok && Object.keys(direct.response).sort()).toEqual(['first_seen_at', 'intentId', 'receipt_head', 'timelock_from']);
    expect(w.signedDigests).toEqual([]);
    // The same intent is signed only through /sign, which checks everything.
    const signed = await signer.sign(req);
    expect(signed.ok).toBe(true);
    expect(keyCalls.length).toBeGreaterThan(0);
  });

  it('a timelocked intent observed at creation is signed at its not_before, not a second timelock later', async () => {
    const createdAt = w.clock.now;
    const req = await w.request({ amount: HELD }, { approvers: [], createdAt });
    expect((await signer.observe(envelope(req))).ok).toBe(true);
    w.clock.now += 3599;
    const early = await signer.sign(await w.request({ amount: HELD }, { createdAt }));
    expect(early.ok || early.refusal.refused.reason).toBe('policy_denied');
    w.clock.now += 1;
    const due = await signer.sign(await w.request({ amount: HELD }, { createdAt }));
    expect(due.ok).toBe(true);
  });

  it('a backdated created_at gains nothing: the timelock counts from the observation', async () => {
    const backdated = w.clock.now - 2 * 86400;
    const req = await w.request({ amount: HELD }, { approvers: [], createdAt: backdated });
    const seen = await signer.observe(envelope(req));
    expect(seen.ok && [seen.response.first_seen_at, seen.response.timelock_from]).toEqual([w.clock.now, w.clock.now]);
    w.clock.now += 3599;
    const early = await verifyAndSign(await w.request({ amount: HELD }, { createdAt: backdated }), w.deps);
    expect(early.ok || early.refusal.message).toMatch(/timelock/);
    w.clock.now += 1;
    expect((await verifyAndSign(await w.request({ amount: HELD }, { createdAt: backdated }), w.deps)).ok).toBe(true);
  });

  it('an intent this signer already saw at /sign keeps that first sight', async () => {
    const req = await w.request({ amount: HELD }, { approvers: [] });
    expect((await signer.sign(req)).ok).toBe(false); // refused (approvals, timelock), first sight recorded
    const seenAt = w.clock.now;
    w.clock.now += 100;
    const observed = await signer.observe(envelope(req));
    expect(observed.ok && observed.response.first_seen_at).toBe(seenAt);
    expect(kinds()).toEqual(['sign.refused']);
  });
});

describe('POST /observe refusals record no first sight', () => {
  async function expectRefused(body: ObserveRequest, reason: string, message: RegExp): Promise<void> {
    const before = w.state.length;
    const r = await signer.observe(body);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.refusal.refused.reason).toBe(reason);
    expect(r.refusal.message).toMatch(message);
    expect(w.state.firstSeen(body.intent.id)).toBeUndefined();
    // The refusal is on the record, and nothing else is.
    expect(w.state.records().slice(before).map((x) => x.kind)).toEqual(['observe.refused']);
  }

  it('intent_tampered: the id is not the content address of the request', async () => {
    const req = envelope(await w.request({ amount: HELD }));
    await expectRefused({ ...req, intent: { ...req.intent, request: { ...req.intent.request, amount: '200000001' } } }, 'intent_tampered', /content address/);
  });

  it('policy_mismatch: a policy other than the pinned one, or a changed wallet descriptor', async () => {
    const req = envelope(await w.request({ amount: HELD }));
    const loose = { ...req.policy, rules: [{ rule: 'always_allow' as const }] };
    await expectRefused({ ...req, policy: loose, policy_digest: req.policy_digest }, 'policy_mismatch', /policy_digest/);
    const wallet = JSON.parse(JSON.stringify(req.wallet)) as typeof req.wallet;
    if (wallet.control.kind === 'native_multisig') wallet.control.quorum = 1;
    await expectRefused({ ...req, wallet }, 'policy_mismatch', /trusted copy/);
  });

  it('policy_mismatch: a wallet this signer does not serve', async () => {
    const req = envelope(await w.request({ amount: HELD, wallet: 'elsewhere' }));
    await expectRefused(req, 'policy_mismatch', /does not serve wallet elsewhere/);
  });

  it('policy_denied: a frozen wallet (nothing about it is recorded, as on /sign)', async () => {
    await signer.restrict([{ restriction: 'freeze_wallet', wallet: w.wallet.wallet }]);
    await expectRefused(envelope(await w.request({ amount: HELD })), 'policy_denied', /frozen/);
  });

  it('a malformed body is a 400 naming the field, and nothing is written', async () => {
    const req = envelope(await w.request({ amount: HELD }));
    const r = await post('/observe', { ...req, policy_digest: 'nope' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('policy_digest');
    expect(w.state.length).toBe(0);
    const noToken = await fetch(`${server.url}/observe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(req) });
    expect(noToken.status).toBe(401);
  });
});
