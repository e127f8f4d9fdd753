/**
 * The remaining endpoints of interface.md's control-plane table, over real sockets.
 */
import { ErrorBodySchema, generateEd25519KeyPair, signEd25519, signStatement, fromHex, toHex, NotFoundError, type Rule } from '@vault/sdk';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ROUTES } from '../../src/control-plane/openapi.js';
import { PASSPHRASE, raw, setup, type Harness } from './helpers.js';

// Real sockets, fsync and scrypt on a shared 2-core machine: allow for slow moments.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('control-plane endpoints', () => {
  it('GET /health needs no session and reports the receipt chain', async () => {
    h = await setup({ unlock: false });
    const r = await h.client.health();
    expect(r).toMatchObject({ ok: true, receipts: 0, receipt_head: '0'.repeat(64) });
  });

  it('wallets, policy, assets', async () => {
    h = await setup({ state: { assets: { assets: [{ chain: 'memory:devnet', symbol: 'USDX', decimals: 6, issuer: 'mem1' + 'aa'.repeat(20) }], reserved: ['USDC'] } } });
    const wallets = await h.client.wallets();
    expect(wallets).toHaveLength(1);
    expect(wallets[0]).toMatchObject({ wallet: 'ops', chain: 'memory:devnet', quorum: 2, policy_version: 1 });
    expect(wallets[0]?.['policy_digest']).toMatch(/^[0-9a-f]{64}$/);
    const p = await h.client.policy('ops');
    expect(p.rules[0]?.rule).toBe('always_allow');
    await expect(h.client.policy('nope')).rejects.toBeInstanceOf(NotFoundError);
    const assets = await h.client.assets();
    expect(assets).toMatchObject({ reserved: ['USDC'] });
  });

  it('GET /intents: newest first, at most 100', async () => {
    h = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 105; i++) ids.push((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: String(i + 1) })).intentId);
    const list = await h.client.intents();
    expect(list).toHaveLength(100);
    expect(list[0]?.['intentId']).toBe(ids[104]);
    expect(list[99]?.['intentId']).toBe(ids[5]);
    const small = await raw(h, 'GET', '/intents?limit=3');
    expect(small.body).toHaveLength(3);
  });

  it('GET /intent/{id}: 404 for an unknown id, 400 naming id for a malformed one', async () => {
    h = await setup();
    const unknown = await raw(h, 'GET', `/intent/int_${'0'.repeat(64)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe(4040);
    const bad = await raw(h, 'GET', '/intent/xyz');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^invalid id/);
  });

  it('estate: balances per wallet with canonical flags', async () => {
    h = await setup();
    const e = (await h.client.estate()) as { wallets: { wallet: string; balances: { symbol: string; amount: string; flags: Record<string, boolean> }[] }[] };
    expect(e.wallets[0]?.balances[0]).toMatchObject({ symbol: 'MEM', amount: '1000000000', flags: { canonical: true } });
  });

  it('reconcile: clean, then drift after the ledger signer list changes', async () => {
    h = await setup();
    const clean = await h.client.reconcile('ops');
    expect(clean.clean).toBe(true);
    expect(clean.checked.length).toBeGreaterThanOrEqual(5);
    const members = h.wallet.control.kind === 'native_multisig' ? h.wallet.control.signers : [];
    h.ledger.setSignerList(h.address, { members: members.slice(0, 2).map((m) => ({ address: m.address, weight: 1 })), quorum: 1 });
    const drift = await h.client.reconcile('ops');
    expect(drift.clean).toBe(false);
    expect(drift.drift.map((d) => (d as { field: string }).field)).toEqual(expect.arrayContaining(['quorum', `members.${members[2]?.address}`]));
  });

  it('recovery/status: does quorum survive the loss of any one key, with the ledger proof', async () => {
    h = await setup({ members: 3, quorum: 2 });
    const r = (await h.client.recoveryStatus()) as { wallets: { tier: string; survives_loss_of_any_one_key: boolean; proof: { control_state: { quorum: number } } }[] };
    expect(r.wallets[0]).toMatchObject({ tier: 'resilient', survives_loss_of_any_one_key: true });
    expect(r.wallets[0]?.proof.control_state.quorum).toBe(2);
    const members = h.wallet.control.kind === 'native_multisig' ? h.wallet.control.signers : [];
    h.ledger.setSignerList(h.address, { members: members.map((m) => ({ address: m.address, weight: 1 })), quorum: 3 });
    const r2 = (await h.client.recoveryStatus()) as { wallets: { tier: string; survives_loss_of_any_one_key: boolean; critical_keys: string[] }[] };
    expect(r2.wallets[0]).toMatchObject({ tier: 'fragile', survives_loss_of_any_one_key: false });
    expect(r2.wallets[0]?.critical_keys).toHaveLength(3);
  });

  it('recovery/status: a way around the quorum (a Safe module) is its own tier, listed', async () => {
    const module = { kind: 'module', address: '0x00000000000000000000000000000000000000b1' };
    h = await setup({ members: 3, quorum: 2, wrapDriver: (d) => ({ ...d, controlState: async (w) => ({ ...(await d.controlState(w)), bypasses: [module] }) }) });
    const r = (await h.client.recoveryStatus()) as { wallets: { tier: string; ways_around_quorum: unknown[] }[] };
    expect(r.wallets[0]).toMatchObject({ tier: 'bypassable', ways_around_quorum: [module] });
  });

  it('ledger/recent (default 50, limit) and ledger/verify', async () => {
    h = await setup();
    for (let i = 0; i < 60; i++) await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: String(i + 1) });
    const recent = (await h.client.ledgerRecent()) as { receipts: { seq: number }[] };
    expect(recent.receipts).toHaveLength(50);
    expect(recent.receipts[0]?.seq).toBe(59);
    const five = (await h.client.ledgerRecent(5)) as { receipts: unknown[] };
    expect(five.receipts).toHaveLength(5);
    const bad = await raw(h, 'GET', '/ledger/recent?limit=abc');
    expect(bad.status).toBe(400);
    const v = await h.client.ledgerVerify();
    expect(v).toMatchObject({ verified: true, receipts: 60 });
    expect(v.signerPublicKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ledger/verify detects a changed receipt and a truncated log (anchored head and length)', async () => {
    h = await setup();
    for (let i = 0; i < 5; i++) await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: String(i + 1) });
    expect((await h.client.ledgerVerify()).verified).toBe(true);
    const store = h.running.cp.store;
    const r2 = store.receipts.get(2)!;
    await store.receipts.put(2, { ...r2, at: r2.at + 1 });
    const changed = (await h.client.ledgerVerify()) as { verified: boolean; problem?: string };
    expect(changed).toMatchObject({ verified: false, problem: 'hash_mismatch' });
    await store.receipts.put(2, r2);
    await store.receipts.remove(4);
    const truncated = (await h.client.ledgerVerify()) as { verified: boolean; problem?: string };
    expect(truncated).toMatchObject({ verified: false, problem: 'length_mismatch' });
    await h.restart();
    const health = await h.client.health();
    expect(health['receipt_anchor_ok']).toBe(false);
    expect(h.logs.some((l) => l.includes('receipt_anchor_mismatch'))).toBe(true);
    // writes stop rather than re-anchor a damaged log; reads go on
    const w = await raw(h, 'POST', '/intent', { body: JSON.stringify({ wallet: 'ops', destination: h.dest(), amount: '99' }) });
    expect(w.status).toBe(500);
    expect(w.body.error.code).toBe(-32603);
    expect((await h.client.intents()).length).toBe(5);
  });

  it('admin/reload: a valid file is applied; an invalid one is refused with the reason and the running state kept', async () => {
    h = await setup();
    const path = join(h.dir, 'state.json');
    const state = JSON.parse(readFileSync(path, 'utf8'));
    state.policies[0].rules = [{ rule: 'always_allow' }, { rule: 'hard_ceiling', max: '10' }];
    writeFileSync(path, JSON.stringify(state));
    const ok = (await h.client.reload()) as { reloaded: boolean };
    expect(ok.reloaded).toBe(true);
    expect((await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '11' })).status).toBe('denied');

    state.policies[0].rules = [{ rule: 'hard_ceiling', max: 'ten' }];
    writeFileSync(path, JSON.stringify(state));
    const bad = await raw(h, 'POST', '/admin/reload');
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.path).toBe('policies.0.rules.0.max');
    writeFileSync(path, '{ not json');
    const bad2 = await raw(h, 'POST', '/admin/reload');
    expect(bad2.status).toBe(400);
    state.policies[0].rules = [{ rule: 'always_allow' }];
    state.wallets[0].chain = 'memory:other';
    writeFileSync(path, JSON.stringify(state));
    const bad3 = await raw(h, 'POST', '/admin/reload');
    expect(bad3.status).toBe(400);
    expect(bad3.body.error.message).toMatch(/no driver serves chain memory:other/);
    // the running state is the last good one
    expect((await h.client.policy('ops')).rules).toHaveLength(2);
  });

  it('snapshot: what a popup needs (optionally filtered by wallet)', async () => {
    h = await setup({ rules: [{ rule: 'always_allow' }, { rule: 'timelock_above', above: '5', seconds: 60 }] });
    await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '10' });
    const s = (await h.client.snapshot()) as { pending: unknown[]; wallets: unknown[]; health: { receipts: number } };
    expect(s.pending).toHaveLength(1);
    expect(s.wallets).toHaveLength(1);
    const f = (await h.client.snapshot({ wallet: 'other' })) as { wallets: unknown[] };
    expect(f.wallets).toHaveLength(0);
    const bad = await raw(h, 'POST', '/snapshot', { body: JSON.stringify({ wallet: 5 }) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.path).toBe('wallet');
  });

  it('pairing: create -> QR (real SVG) -> claim with a signature over the challenge -> device listed; approvals count', async () => {
    h = await setup({ approverIds: [], rules: [{ rule: 'always_allow' }, { rule: 'approval_threshold', above: '100', required_weight: 1, approvers: [{ id: 'placeholder', weight: 1 }] }] });
    const p = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    expect(p.code).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(p.challenge).toMatch(/^[0-9a-f]{64}$/);
    const qr = await fetch(h.client.pairQrUrl(p.code));
    expect(qr.status).toBe(200);
    expect(qr.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    const svg = await qr.text();
    expect(svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('<path');
    const key = generateEd25519KeyPair();
    const signature = toHex(signEd25519(fromHex(p.challenge, 'c', 32), key.secretKey));
    const claimed = (await h.client.pairClaim({ code: p.code, public_key: key.publicKeyHex, signature, label: 'my phone' })) as { device: { id: string; role: string } };
    expect(claimed.device.role).toBe('approver');
    const devices = (await h.client.devices()) as { devices: { id: string }[] };
    expect(devices.devices.map((d) => d.id)).toContain(claimed.device.id);
    // persisted in the state file before the reply
    expect(readFileSync(join(h.dir, 'state.json'), 'utf8')).toContain(key.publicKeyHex);
  });

  it('the pairing QR renders at a scannable size (not 53 px) with the 4-module quiet zone the QR standard asks for', async () => {
    h = await setup({ approverIds: [] });
    const p = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    const svg = await (await fetch(h.client.pairQrUrl(p.code))).text();
    const attrs = /^<svg([^>]*)>/.exec(svg)?.[1] ?? '';
    const width = Number(/\swidth="(\d+)"/.exec(attrs)?.[1]);
    const height = Number(/\sheight="(\d+)"/.exec(attrs)?.[1]);
    const viewBox = /\sviewBox="0 0 (\d+) (\d+)"/.exec(attrs);
    const modules = Number(viewBox?.[1]);
    expect(Number(viewBox?.[2])).toBe(modules);
    expect(height).toBe(width);
    expect(width).toBeGreaterThanOrEqual(256);
    // A whole number of pixels per module: every module the same size on screen.
    expect(width % modules).toBe(0);
    // The top-left finder pattern (dark from its first module) starts 4 modules in: the quiet zone.
    const dark = /<path[^>]*stroke="#000000"[^>]*\sd="M(\d+) (\d+(?:\.5)?)/.exec(svg);
    expect([Number(dark?.[1]), Number(dark?.[2]) - 0.5]).toEqual([4, 4]);
    // A QR symbol is 21 + 4k modules wide (version 1 + k): with 4 light modules each side.
    expect((modules - 2 * 4 - 21) % 4).toBe(0);
  });

  it('a signed wallet attestation and a signed compliance clearance feed the policy, and travel to the signers', async () => {
    const attester = generateEd25519KeyPair();
    const clearer = generateEd25519KeyPair();
    const stranger = generateEd25519KeyPair();
    const rules: Rule[] = [{ rule: 'always_allow' }, { rule: 'require_attestation', attesters: [attester.publicKeyHex] }, { rule: 'require_compliance_clearance', clearers: [clearer.publicKeyHex] }];
    const cleared = 'mem1' + 'cc'.repeat(20);
    const strangers = 'mem1' + 'dd'.repeat(20);
    const now = 1_767_225_600;
    const valid = { issued_at: now - 60, expires_at: now + 86400 };
    const attestation = signStatement({ kind: 'attestation', wallet: 'ops', attester: attester.publicKeyHex, ...valid }, attester.secretKey);
    const clearance = signStatement({ kind: 'clearance', destination: cleared, clearer: clearer.publicKeyHex, ...valid }, clearer.secretKey);
    // A clearance by a key the policy does not name clears nothing.
    const unnamed = signStatement({ kind: 'clearance', destination: strangers, clearer: stranger.publicKeyHex, ...valid }, stranger.secretKey);
    h = await setup({ rules, state: { compliance: { clearances: [clearance, unnamed] }, attestation: { attestations: [attestation] } } });
    const allowed = await h.client.createIntent({ wallet: 'ops', destination: cleared, amount: '1' });
    expect(allowed.status).toBe('allowed');
    const other = await h.client.createIntent({ wallet: 'ops', destination: strangers, amount: '1' });
    expect(other.status).toBe('denied');
    expect(other.decision.reasons.join(' ')).toMatch(/compliance/);
    // The test signer decides both flags from the statements it is sent (verifyStatements), as a
    // real signer does: it signs only because the control plane sent them.
    const executed = await h.client.execute(allowed.intentId);
    expect(executed.status, JSON.stringify(executed)).toBe('confirmed');
  });

  it('a state file that still lists cleared_destinations is refused at load, naming the field', async () => {
    await expect(setup({ state: { compliance: { clearances: [], cleared_destinations: ['mem1' + 'cc'.repeat(20)] } } })).rejects.toThrow(/cleared_destinations is no longer honoured/);
  });

  it('/openapi.json is OpenAPI 3.1, covers every route, and its schemas come from the SDK', async () => {
    h = await setup({ unlock: false });
    const r = await raw(h, 'GET', '/openapi.json', { token: null });
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    const spec = [
      'GET /health', 'POST /session/unlock', 'POST /session/lock', 'GET /wallets', 'GET /policy/{wallet}', 'GET /assets', 'POST /intent',
      'GET /intents', 'GET /intent/{id}', 'GET /intent/{id}/protect', 'POST /intent/{id}/approve-signed', 'POST /intent/{id}/approve',
      'POST /intent/{id}/execute', 'GET /estate', 'GET /wallets/{id}/reconcile', 'GET /ledger/verify', 'GET /ledger/recent', 'POST /admin/reload',
      'POST /snapshot', 'GET /recovery/status', 'POST /pair/create', 'GET /pair/qr/{code}', 'POST /pair/claim', 'GET /devices', 'POST /devices/{id}/revoke',
      'GET /events', 'GET /events/stream',
      'POST /webhooks', 'GET /webhooks', 'DELETE /webhooks/{id}', 'GET /webhooks/{id}/deliveries', 'POST /webhooks/{id}/deliveries/{delivery}/resend',
      'POST /device/challenge', 'POST /device/session', 'GET /device/intents',
      'POST /changes', 'GET /changes', 'GET /changes/{id}', 'POST /changes/{id}/approve', 'POST /changes/{id}/apply',
    ];
    for (const line of spec) {
      const [method, path] = line.split(' ') as [string, string];
      expect(r.body.paths[path]?.[method.toLowerCase()], line).toBeDefined();
    }
    // Beyond the spec: this document, cancel (issue #22), accounts and keys and the policy simulation (issue #23), /ready and /metrics (issue #26), the device event stream and one intent's receipts (issue #24).
    for (const line of ['POST /operators', 'GET /operators', 'POST /operators/{name}/disable', 'POST /api-keys', 'GET /api-keys', 'POST /api-keys/{id}/revoke']) {
      const [method, path] = line.split(' ') as [string, string];
      expect(r.body.paths[path]?.[method.toLowerCase()]?.['x-vault-roles'], line).toBeDefined();
    }
    expect(r.body.paths['/intent/{id}/cancel']?.post?.requestBody?.content['application/json'].schema.$ref).toBe('#/components/schemas/CancelRequest');
    expect(r.body.components.schemas.CancelResult).toBeDefined();
    expect(r.body.paths['/policy/{wallet}/simulate']?.post?.requestBody?.content['application/json'].schema.$ref).toBe('#/components/schemas/SimulatePolicyRequest');
    expect(r.body.paths['/policy/{wallet}/simulate'].post['x-vault-roles']).toEqual(['admin', 'operator', 'auditor', 'device:viewer']);
    expect(r.body.components.schemas.SimulatePolicyRequest.properties.limit.maximum).toBe(200);
    expect(r.body.paths['/device/events/stream']?.get).toBeDefined();
    expect(r.body.paths['/intent/{id}/receipts']?.get?.['x-vault-roles']).toEqual(['admin', 'operator', 'auditor', 'device:viewer']);
    expect(ROUTES.length).toBe(spec.length + 7 + 6);
    expect(r.body.components.schemas.IntentRequest.properties.amount).toBeDefined();
    expect(r.body.paths['/intent'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/IntentRequest');
    expect(r.body.paths['/intent/{id}/approve'].post.deprecated).toBe(true);
  });

  it('a ledger fault is -32603 (HTTP 500) without internal detail; estate and recovery report it per wallet', async () => {
    const boom = async () => {
      throw new Error('boom: /internal/path secret');
    };
    h = await setup({ wrapDriver: (d) => ({ ...d, controlState: boom, balances: boom, fetchProtectInputs: boom }) });
    const r = await raw(h, 'GET', '/wallets/ops/reconcile');
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe(-32603);
    expect(r.text).not.toContain('boom');
    const e = (await h.client.estate()) as { wallets: { error?: string }[] };
    expect(e.wallets[0]?.error).toBe('ledger unreachable');
    const rec = (await h.client.recoveryStatus()) as { wallets: { tier: string }[] };
    expect(rec.wallets[0]?.tier).toBe('unknown');
    const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '1' });
    const p = await raw(h, 'GET', `/intent/${intentId}/protect`);
    expect(p.status).toBe(500);
    expect(p.body.error.code).toBe(-32603);
    const x = await raw(h, 'POST', `/intent/${intentId}/execute`);
    expect(x.status).toBe(500);
    expect(x.body.error.data).toMatchObject({ stage: 'protections' });
    expect(h.logs.join('\n')).not.toContain('secret');
  });

  it('an unknown route is a 404 Error body; lock ends the session', async () => {
    h = await setup();
    const r = await raw(h, 'GET', '/nope');
    expect(r.status).toBe(404);
    expect(ErrorBodySchema.parse(r.body).error.code).toBe(4040);
    await h.client.lock();
    expect(h.client.hasSession()).toBe(false);
    await h.client.unlock(PASSPHRASE);
    expect((await h.client.wallets()).length).toBe(1);
  });
});
