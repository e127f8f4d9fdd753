/**
 * A refused request changes nothing (issue #20, finding 3). A pairing claim whose label held a lone
 * UTF-16 surrogate was answered 400, yet the device was paired, written to state.json without a
 * receipt, and every later reload failed. Every state-changing operation now builds and checks its
 * complete new state (against the loader) and its receipt before anything is written.
 */
import { fromHex, generateEd25519KeyPair, signApproval, signCancel, signEd25519, toHex, ValidationError } from '@vault/sdk';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ROUTES } from '../../src/control-plane/openapi.js';
import { raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const LONE = '\ud800'; // a high surrogate with no low one after it
/** JSON text keeps a lone surrogate as an escape; JSON.stringify of the string would do the same. */
const json = (v: unknown) => JSON.stringify(v);

/** Everything a refused request must leave as it was. */
async function snapshot(h: Harness, intentId: string) {
  const health = await h.client.health();
  return {
    stateFile: readFileSync(join(h.dir, 'state.json')).toString('base64'),
    devices: (await raw(h, 'GET', '/devices')).body,
    receipts: health['receipts'],
    head: health['receipt_head'],
    intents: health['intents'],
    intent: (await raw(h, 'GET', `/intent/${intentId}`)).body,
    memory: JSON.stringify(h.running.cp.state),
  };
}

function claimBody(code: string, challenge: string, opts: { key?: ReturnType<typeof generateEd25519KeyPair> | { publicKeyHex: string; secretKey: Uint8Array }; label?: string } = {}) {
  const key = opts.key ?? generateEd25519KeyPair();
  return json({ code, public_key: key.publicKeyHex, signature: toHex(signEd25519(fromHex(challenge, 'challenge', 32), key.secretKey)), label: opts.label ?? 'phone' });
}

interface Refused {
  method: 'GET' | 'POST';
  /** The route template in ROUTES this case covers. */
  route: string;
  path: string;
  body?: string;
  /** undefined: the operator's session; null: none; a string: that token. */
  token?: string | null;
  status: number;
  /** For 400s: the field the error names (a body field), or its message (a path parameter). */
  field?: string;
  message?: RegExp;
  /** Runs before the request (and is undone by `after`). */
  before?: () => void;
  after?: () => void;
}

describe('attack: refused requests change state', () => {
  it('a refused request to any state-changing endpoint leaves state.json, devices and the receipt chain as they were; reload and restart still work', async () => {
    h = await setup({
      rules: [{ rule: 'always_allow' }, { rule: 'approval_threshold', above: '0', required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }, { id: 'carol', weight: 1 }] }],
    });
    const { intentId, status } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5' });
    expect(status).toBe('pending_approvals');
    const code = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    const expiring = await h.client.pairCreate({ role: 'viewer', label: 'tablet' });
    const statePath = join(h.dir, 'state.json');
    const original = readFileSync(statePath);
    const alice = h.approvers['alice']!;
    const otherIntent = `int_${'ab'.repeat(32)}`;
    const unknownIntent = `int_${'00'.repeat(32)}`;
    const forged = Buffer.alloc(32, 7).toString('base64url');
    const withLabel = (label: string) => {
      const doc = JSON.parse(original.toString('utf8'));
      doc.devices[0].label = label;
      return `${JSON.stringify(doc, null, 2)}\n`; // JSON.stringify escapes the lone surrogate: the file is valid UTF-8
    };
    const replaceState = (text: string) => () => writeFileSync(statePath, text);
    const restoreState = () => writeFileSync(statePath, original);
    const mallory = generateEd25519KeyPair();

    const cases: Refused[] = [
      // /session/unlock (no session)
      { method: 'POST', route: '/session/unlock', path: '/session/unlock', token: null, body: json({ passphrase: 'wrong passphrase' }), status: 401 },
      { method: 'POST', route: '/session/unlock', path: '/session/unlock', token: null, body: json({ passphrase: `x${LONE}` }), status: 401 },
      { method: 'POST', route: '/session/unlock', path: '/session/unlock', token: null, body: json({}), status: 400, field: 'passphrase' },
      { method: 'POST', route: '/session/unlock', path: '/session/unlock', token: null, body: 'not json', status: 400 },
      // /session/lock: a refused lock must not end the operator's session (the snapshot reads with it)
      { method: 'POST', route: '/session/lock', path: '/session/lock', token: null, status: 401 },
      { method: 'POST', route: '/session/lock', path: '/session/lock', token: forged, status: 401 },
      // /pair/create
      { method: 'POST', route: '/pair/create', path: '/pair/create', body: json({ role: 'approver', label: `phone${LONE}` }), status: 400, field: 'label' },
      { method: 'POST', route: '/pair/create', path: '/pair/create', body: json({ role: 'approver', label: 'a\u0000b' }), status: 400, field: 'label' },
      { method: 'POST', route: '/pair/create', path: '/pair/create', body: json({ role: 'approver', label: 'evil\u202etxt' }), status: 400, field: 'label' },
      { method: 'POST', route: '/pair/create', path: '/pair/create', body: json({ role: 'admin', label: 'x' }), status: 400, field: 'role' },
      { method: 'POST', route: '/pair/create', path: '/pair/create', body: json({ role: 'viewer', label: '' }), status: 400, field: 'label' },
      { method: 'POST', route: '/pair/create', path: '/pair/create', token: null, body: json({ role: 'viewer', label: 'x' }), status: 401 },
      // /pair/claim (no session): the finding itself, then every other refusal
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: claimBody(code.code, code.challenge, { label: `x${LONE}` }), status: 400, field: 'label' },
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: claimBody(code.code, code.challenge, { label: `\udc00` }), status: 400, field: 'label' },
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: claimBody(code.code, code.challenge, { label: 'line\nbreak' }), status: 400, field: 'label' },
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: claimBody(code.code, code.challenge, { label: 'x'.repeat(129) }), status: 400, field: 'label' },
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: claimBody(code.code, 'ff'.repeat(32)), status: 400, field: 'signature' }, // 1 of 3 allowed
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: claimBody(code.code, code.challenge, { key: { publicKeyHex: alice.publicKeyHex, secretKey: alice.secretKey } }), status: 400, field: 'public_key' },
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: claimBody('no-such-code', code.challenge), status: 403 },
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: json({ code: code.code, public_key: 'zz', signature: '00', label: 'x' }), status: 400, field: 'public_key' },
      { method: 'POST', route: '/pair/claim', path: '/pair/claim', token: null, body: json({ code: code.code }), status: 400 },
      // /device/challenge and /device/session (no session): malformed, unknown device, no challenge
      { method: 'POST', route: '/device/challenge', path: '/device/challenge', token: null, body: json({ device_id: 'a b' }), status: 400, field: 'device_id' },
      { method: 'POST', route: '/device/challenge', path: '/device/challenge', token: null, body: json({ device_id: 'alice', extra: 1 }), status: 400 },
      { method: 'POST', route: '/device/challenge', path: '/device/challenge', token: null, body: json({ device_id: 'nobody' }), status: 401 },
      { method: 'POST', route: '/device/session', path: '/device/session', token: null, body: json({ device_id: 'alice', challenge: 'zz', signature: '00'.repeat(64) }), status: 400, field: 'challenge' },
      { method: 'POST', route: '/device/session', path: '/device/session', token: null, body: json({ device_id: 'alice', challenge: 'ab'.repeat(32), signature: '00' }), status: 400, field: 'signature' },
      { method: 'POST', route: '/device/session', path: '/device/session', token: null, body: json({ device_id: 'alice', challenge: 'ab'.repeat(32), signature: '00'.repeat(64) }), status: 401 },
      // /devices/{id}/revoke
      { method: 'POST', route: '/devices/{id}/revoke', path: '/devices/dev_0000000000000000/revoke', status: 404 },
      { method: 'POST', route: '/devices/{id}/revoke', path: `/devices/${encodeURIComponent('a b')}/revoke`, status: 400, message: /^invalid id/ },
      { method: 'POST', route: '/devices/{id}/revoke', path: '/devices/alice/revoke', token: null, status: 401 },
      { method: 'POST', route: '/devices/{id}/revoke', path: '/devices/alice/revoke', token: forged, status: 401 },
      // operator accounts and API keys (identities.ts)
      { method: 'POST', route: '/operators', path: '/operators', body: json({ name: 'Olga', role: 'operator', passphrase: 'long enough 1' }), status: 400, field: 'name' },
      { method: 'POST', route: '/operators', path: '/operators', body: json({ name: 'operator', role: 'admin', passphrase: 'long enough 1' }), status: 400, field: 'name' },
      { method: 'POST', route: '/operators', path: '/operators', body: json({ name: 'olga', role: 'root', passphrase: 'long enough 1' }), status: 400, field: 'role' },
      { method: 'POST', route: '/operators', path: '/operators', body: json({ name: 'olga', role: 'auditor', passphrase: 'short' }), status: 400, field: 'passphrase' },
      { method: 'POST', route: '/operators', path: '/operators', token: null, body: json({ name: 'olga', role: 'admin', passphrase: 'long enough 1' }), status: 401 },
      { method: 'POST', route: '/operators/{name}/disable', path: '/operators/nobody/disable', status: 404 },
      { method: 'POST', route: '/operators/{name}/disable', path: '/operators/operator/disable', status: 400 },
      { method: 'POST', route: '/operators/{name}/disable', path: '/operators/No!/disable', status: 400, message: /^invalid name/ },
      { method: 'POST', route: '/operators/{name}/disable', path: '/operators/nobody/disable', token: null, status: 401 },
      { method: 'POST', route: '/api-keys', path: '/api-keys', body: json({ bound_to: 'operator', expires_at: 1_767_229_200 }), status: 400, field: 'bound_to' },
      { method: 'POST', route: '/api-keys', path: '/api-keys', body: json({ bound_to: 'agent:bot', expires_at: 1_767_225_600 }), status: 400, field: 'expires_at' },
      { method: 'POST', route: '/api-keys', path: '/api-keys', body: json({ bound_to: 'agent:bot', wallets: ['nowhere'], expires_at: 1_767_229_200 }), status: 400, field: 'wallets.0' },
      { method: 'POST', route: '/api-keys', path: '/api-keys', token: null, body: json({ bound_to: 'agent:bot', expires_at: 1_767_229_200 }), status: 401 },
      { method: 'POST', route: '/api-keys/{id}/revoke', path: `/api-keys/${'0'.repeat(16)}/revoke`, status: 404 },
      { method: 'POST', route: '/api-keys/{id}/revoke', path: '/api-keys/xyz/revoke', status: 400, message: /^invalid id/ },
      { method: 'POST', route: '/api-keys/{id}/revoke', path: `/api-keys/${'0'.repeat(16)}/revoke`, token: `vk_${'0'.repeat(16)}_${'A'.repeat(43)}`, status: 401 },
      // /intent
      { method: 'POST', route: '/intent', path: '/intent', body: json({}), status: 400, field: 'wallet' },
      { method: 'POST', route: '/intent', path: '/intent', body: json({ wallet: 'ops', destination: h.dest(), amount: '1', memo: `m${LONE}` }), status: 400, field: 'memo' },
      { method: 'POST', route: '/intent', path: '/intent', body: json({ wallet: 'nope', destination: h.dest(), amount: '1' }), status: 404 },
      { method: 'POST', route: '/intent', path: '/intent', body: json({ wallet: 'ops', destination: h.dest(), amount: '-1' }), status: 400, field: 'amount' },
      { method: 'POST', route: '/intent', path: '/intent', token: null, body: json({ wallet: 'ops', destination: h.dest(), amount: '1' }), status: 401 },
      // /intent/{id}/approve-signed
      { method: 'POST', route: '/intent/{id}/approve-signed', path: `/intent/${intentId}/approve-signed`, body: json(signApproval({ approver_id: 'mallory', intent: intentId, verdict: 'approve', at: h.clock.now, strong_auth: true }, mallory.secretKey)), status: 400, field: 'approver_id' },
      { method: 'POST', route: '/intent/{id}/approve-signed', path: `/intent/${intentId}/approve-signed`, body: json(h.approve(otherIntent, 'alice')), status: 400, field: 'intent' },
      { method: 'POST', route: '/intent/{id}/approve-signed', path: `/intent/${intentId}/approve-signed`, body: json({ ...h.approve(intentId, 'alice'), verdict: 'reject' }), status: 400, field: 'signature.sig' },
      { method: 'POST', route: '/intent/{id}/approve-signed', path: `/intent/${intentId}/approve-signed`, body: json({ ...h.approve(intentId, 'alice'), approver_id: `alice${LONE}` }), status: 400 },
      { method: 'POST', route: '/intent/{id}/approve-signed', path: `/intent/${intentId}/approve-signed`, body: json({ approver_id: 'alice' }), status: 400 },
      { method: 'POST', route: '/intent/{id}/approve-signed', path: `/intent/${unknownIntent}/approve-signed`, body: json(h.approve(unknownIntent, 'alice')), status: 404 },
      { method: 'POST', route: '/intent/{id}/approve-signed', path: '/intent/xyz/approve-signed', body: json(h.approve(intentId, 'alice')), status: 400, message: /^invalid id/ },
      { method: 'POST', route: '/intent/{id}/approve-signed', path: `/intent/${intentId}/approve-signed`, token: null, body: json(h.approve(intentId, 'alice')), status: 401 },
      // /intent/{id}/approve (deprecated)
      { method: 'POST', route: '/intent/{id}/approve', path: `/intent/${unknownIntent}/approve`, status: 404 },
      { method: 'POST', route: '/intent/{id}/approve', path: '/intent/xyz/approve', status: 400, message: /^invalid id/ },
      { method: 'POST', route: '/intent/{id}/approve', path: `/intent/${intentId}/approve`, token: null, status: 401 },
      // /intent/{id}/cancel: a device that did not create it, a bad body, unknown, malformed, no session
      { method: 'POST', route: '/intent/{id}/cancel', path: `/intent/${intentId}/cancel`, body: json(signCancel({ intentId, by: 'device:alice', at: h.clock.now }, alice.secretKey)), status: 403 },
      { method: 'POST', route: '/intent/{id}/cancel', path: `/intent/${intentId}/cancel`, body: json({ signature: { curve: 'ed25519', sig: '00'.repeat(64) } }), status: 400, field: 'signature' },
      { method: 'POST', route: '/intent/{id}/cancel', path: `/intent/${intentId}/cancel`, body: json({ by: `device:alice${LONE}` }), status: 400, field: 'by' },
      { method: 'POST', route: '/intent/{id}/cancel', path: `/intent/${intentId}/cancel`, body: json({ by: 'operator', at: 1.5 }), status: 400, field: 'at' },
      { method: 'POST', route: '/intent/{id}/cancel', path: `/intent/${unknownIntent}/cancel`, status: 404 },
      { method: 'POST', route: '/intent/{id}/cancel', path: '/intent/xyz/cancel', status: 400, message: /^invalid id/ },
      { method: 'POST', route: '/intent/{id}/cancel', path: `/intent/${intentId}/cancel`, token: null, status: 401 },
      // /intent/{id}/execute: short of approvals, unknown, malformed, no session
      { method: 'POST', route: '/intent/{id}/execute', path: `/intent/${intentId}/execute`, status: 403 },
      { method: 'POST', route: '/intent/{id}/execute', path: `/intent/${unknownIntent}/execute`, status: 404 },
      { method: 'POST', route: '/intent/{id}/execute', path: '/intent/xyz/execute', status: 400, message: /^invalid id/ },
      { method: 'POST', route: '/intent/{id}/execute', path: `/intent/${intentId}/execute`, token: null, status: 401 },
      // /admin/reload: a file the loader refuses (a lone surrogate, broken JSON, a bad field), no session
      { method: 'POST', route: '/admin/reload', path: '/admin/reload', status: 400, field: 'devices.0.label', before: replaceState(withLabel(`x${LONE}`)), after: restoreState },
      { method: 'POST', route: '/admin/reload', path: '/admin/reload', status: 400, before: replaceState('{ not json'), after: restoreState },
      { method: 'POST', route: '/admin/reload', path: '/admin/reload', status: 400, field: 'version', before: replaceState(json({ version: 2 })), after: restoreState },
      { method: 'POST', route: '/admin/reload', path: '/admin/reload', token: null, status: 401 },
      // /policy/{wallet}/simulate: a policy for another wallet, a bad rule, an unknown wallet, no session
      { method: 'POST', route: '/policy/{wallet}/simulate', path: '/policy/ops/simulate', body: json({ policy: { wallet: 'other', version: 1, rules: [] } }), status: 400, field: 'policy.wallet' },
      { method: 'POST', route: '/policy/{wallet}/simulate', path: '/policy/ops/simulate', body: json({ policy: { wallet: 'ops', version: 1, rules: [{ rule: 'hard_ceiling', max: 'x' }] } }), status: 400, field: 'policy.rules.0.max' },
      { method: 'POST', route: '/policy/{wallet}/simulate', path: '/policy/nope/simulate', body: json({ policy: { wallet: 'nope', version: 1, rules: [] } }), status: 404 },
      { method: 'POST', route: '/policy/{wallet}/simulate', path: '/policy/ops/simulate', token: null, body: json({ policy: { wallet: 'ops', version: 1, rules: [] } }), status: 401 },
      // /snapshot
      { method: 'POST', route: '/snapshot', path: '/snapshot', body: json({ wallet: 5 }), status: 400, field: 'wallet' },
      { method: 'POST', route: '/snapshot', path: '/snapshot', token: null, body: json({}), status: 401 },
      // /webhooks: a bad URL, an SSRF target (no allow configured here), no session
      { method: 'POST', route: '/webhooks', path: '/webhooks', body: json({ url: 'ftp://example.com/' }), status: 400, field: 'url' },
      { method: 'POST', route: '/webhooks', path: '/webhooks', body: json({ url: 'http://127.0.0.1:9/hook' }), status: 400, field: 'url' },
      { method: 'POST', route: '/webhooks', path: '/webhooks', body: json({ url: 'https://example.com/', types: ['*', 'Bad'] }), status: 400, field: 'types.1' },
      { method: 'POST', route: '/webhooks', path: '/webhooks', token: null, body: json({ url: 'https://example.com/' }), status: 401 },
      // /webhooks/{id}/deliveries/{delivery}/resend
      { method: 'POST', route: '/webhooks/{id}/deliveries/{delivery}/resend', path: `/webhooks/wh_${'0'.repeat(24)}/deliveries/evt_0000000000000000/resend`, status: 404 },
      { method: 'POST', route: '/webhooks/{id}/deliveries/{delivery}/resend', path: `/webhooks/wh_${'0'.repeat(24)}/deliveries/evt_0/resend`, status: 400, message: /^invalid delivery/ },
      { method: 'POST', route: '/webhooks/{id}/deliveries/{delivery}/resend', path: '/webhooks/x/deliveries/evt_0000000000000000/resend', status: 400, message: /^invalid id/ },
      { method: 'POST', route: '/webhooks/{id}/deliveries/{delivery}/resend', path: `/webhooks/wh_${'0'.repeat(24)}/deliveries/evt_0000000000000000/resend`, token: null, status: 401 },
      // /changes: no admin policy here (403), malformed, no session (change sets: integration/change-sets)
      { method: 'POST', route: '/changes', path: '/changes', body: json({ base_version: 0, ops: [{ op: 'set_device_role', device: 'alice', role: 'viewer' }] }), status: 403 },
      { method: 'POST', route: '/changes', path: '/changes', body: 'not json', status: 400 },
      { method: 'POST', route: '/changes', path: '/changes', token: null, body: json({ base_version: 0, ops: [] }), status: 401 },
      { method: 'POST', route: '/changes/{id}/approve', path: `/changes/chg_${'0'.repeat(32)}/approve`, body: json({ admin_id: 'a1' }), status: 400, field: 'change' },
      { method: 'POST', route: '/changes/{id}/approve', path: '/changes/xyz/approve', body: json({}), status: 400, message: /^invalid id/ },
      { method: 'POST', route: '/changes/{id}/approve', path: `/changes/chg_${'0'.repeat(32)}/approve`, token: null, body: json({}), status: 401 },
      { method: 'POST', route: '/changes/{id}/apply', path: `/changes/chg_${'0'.repeat(32)}/apply`, status: 403 },
      { method: 'POST', route: '/changes/{id}/apply', path: `/changes/chg_${'0'.repeat(32)}/apply`, token: null, status: 401 },
      // reads that may write (GET /intent/{id} re-evaluates an open intent)
      { method: 'GET', route: '/intent/{id}', path: `/intent/${unknownIntent}`, status: 404 },
      { method: 'GET', route: '/intent/{id}', path: '/intent/xyz', status: 400, message: /^invalid id/ },
      { method: 'GET', route: '/intent/{id}', path: `/intent/${intentId}`, token: null, status: 401 },
    ];

    // Every endpoint that can change anything is covered: a new POST route fails here until it is.
    const covered = new Set(cases.map((c) => `${c.method} ${c.route}`));
    const writers = ROUTES.filter((r) => r.method === 'post' || r.path === '/intent/{id}').map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(writers.filter((w) => !covered.has(w))).toEqual([]);

    const before = await snapshot(h, intentId);
    for (const c of cases) {
      c.before?.();
      let r;
      try {
        r = await raw(h, c.method, c.path, { ...(c.body !== undefined ? { body: c.body } : {}), ...(c.token !== undefined ? { token: c.token } : {}) });
      } finally {
        c.after?.();
      }
      const what = `${c.method} ${c.path} ${c.body?.slice(0, 80) ?? ''}`;
      expect(r.status, `${what}: ${r.text}`).toBe(c.status);
      if (c.field !== undefined) expect(r.body.error.data.path, what).toBe(c.field);
      if (c.message !== undefined) expect(r.body.error.message, what).toMatch(c.message);
      expect(await snapshot(h, intentId), what).toEqual(before);
    }

    // An expired code: refused, and nothing changes.
    h.clock.now += 5 * 60 + 1;
    const late = await raw(h, 'POST', '/pair/claim', { token: null, body: claimBody(expiring.code, expiring.challenge) });
    expect(late.status).toBe(403);
    h.clock.now -= 5 * 60 + 1;
    expect(await snapshot(h, intentId)).toEqual(before);

    // Reload and restart still work, the chain verifies, and the code the refused claims used is
    // still open to its device.
    const reloaded = await raw(h, 'POST', '/admin/reload');
    expect(reloaded.status).toBe(200);
    await h.restart();
    expect((await raw(h, 'POST', '/admin/reload')).status).toBe(200);
    expect((await raw(h, 'GET', '/ledger/verify')).body).toMatchObject({ verified: true, receipts: (before.receipts as number) + 2 });
    // (a restart voids open codes by design: pair again)
    const fresh = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    const ok = await raw(h, 'POST', '/pair/claim', { token: null, body: claimBody(fresh.code, fresh.challenge, { label: 'Zoë’s phone 📱' }) });
    expect(ok.status).toBe(200);
    expect((await raw(h, 'POST', '/admin/reload')).status).toBe(200);
    await h.restart();
    expect((await raw(h, 'GET', '/devices')).body.devices.map((d: { label: string }) => d.label)).toContain('Zoë’s phone 📱');
  });

  it('the same claim inside the process (past the HTTP schema) is refused before anything is written, and the code stays usable', async () => {
    h = await setup();
    const p = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    const key = generateEd25519KeyPair();
    const signature = toHex(signEd25519(fromHex(p.challenge, 'challenge', 32), key.secretKey));
    const file = readFileSync(join(h.dir, 'state.json'));
    const health = await h.client.health();
    const memory = JSON.stringify(h.running.cp.state);
    const err = await h.running.cp.pairClaim({ code: p.code, public_key: key.publicKeyHex, signature, label: `phone${LONE}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues[0]?.path).toBe('devices.3.label');
    expect(readFileSync(join(h.dir, 'state.json')).equals(file)).toBe(true);
    expect(JSON.stringify(h.running.cp.state)).toBe(memory);
    expect(await h.client.health()).toMatchObject({ receipts: health['receipts'], receipt_head: health['receipt_head'] });
    const ok = await raw(h, 'POST', '/pair/claim', { token: null, body: json({ code: p.code, public_key: key.publicKeyHex, signature, label: 'phone' }) });
    expect(ok.status).toBe(200);
    expect((await raw(h, 'POST', '/admin/reload')).status).toBe(200);
  });

  it('state.json cannot be written: a revocation changes nothing; a pairing leaves its receipt but no device (receipt first, by design)', async () => {
    h = await setup();
    const statePath = join(h.dir, 'state.json');
    const original = readFileSync(statePath);
    const health = await h.client.health();
    const receipts = health['receipts'] as number;
    const p = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    // A directory where the file was: the atomic rename over it fails (even for root).
    renameSync(statePath, `${statePath}.saved`);
    mkdirSync(statePath);
    writeFileSync(join(statePath, 'keep'), 'x');
    try {
      const revoke = await raw(h, 'POST', '/devices/alice/revoke');
      expect(revoke.status).toBe(500);
      expect(h.running.cp.state.devices.find((d) => d.id === 'alice')?.revoked_at).toBeNull();
      expect((await h.client.health())['receipts']).toBe(receipts);

      const claim = await raw(h, 'POST', '/pair/claim', { token: null, body: claimBody(p.code, p.challenge) });
      expect(claim.status).toBe(500);
      expect(h.running.cp.state.devices).toHaveLength(3);
      const recent = (await raw(h, 'GET', '/ledger/recent?limit=1')).body.receipts[0];
      expect(recent.kind).toBe('device.paired');
      expect((await h.client.health())['receipts']).toBe(receipts + 1);
    } finally {
      rmSync(statePath, { recursive: true, force: true });
      renameSync(`${statePath}.saved`, statePath);
    }
    expect(readFileSync(statePath).equals(original)).toBe(true);
    // Writes go on once the file can be written again; the chain still verifies after a restart.
    expect((await raw(h, 'POST', '/devices/alice/revoke')).status).toBe(200);
    await h.restart();
    expect((await raw(h, 'GET', '/ledger/verify')).body).toMatchObject({ verified: true, receipts: receipts + 2 });
    expect(h.running.cp.state.devices.find((d) => d.id === 'alice')?.revoked_at).not.toBeNull();
  });

  it('concurrent pairings and revocations all land: each builds on the last (none lost from state.json)', async () => {
    h = await setup();
    const codes = await Promise.all(Array.from({ length: 6 }, (_, i) => h!.client.pairCreate({ role: 'approver', label: `d${i}` })));
    const results = await Promise.all([
      ...codes.map((c) => raw(h!, 'POST', '/pair/claim', { token: null, body: claimBody(c.code, c.challenge) })),
      raw(h, 'POST', '/devices/alice/revoke'),
      raw(h, 'POST', '/devices/bob/revoke'),
    ]);
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const onDisk = JSON.parse(readFileSync(join(h.dir, 'state.json'), 'utf8')) as { devices: { id: string; revoked_at: number | null }[] };
    expect(onDisk.devices).toHaveLength(9);
    expect(onDisk.devices.filter((d) => d.revoked_at !== null).map((d) => d.id).sort()).toEqual(['alice', 'bob']);
    expect(JSON.stringify(h.running.cp.state.devices)).toBe(JSON.stringify(onDisk.devices));
    await h.restart();
    expect((await raw(h, 'GET', '/ledger/verify')).body).toMatchObject({ verified: true, receipts: 8 });
  });
});
