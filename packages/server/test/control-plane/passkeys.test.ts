/**
 * Passkeys at the control plane (issue #24): a passkey registered at pairing, strong approvals
 * proven by its assertions, and the 400 naming `approval.webauthn` for an unproven strong_auth.
 * Real sockets, real P-256 signatures from a software authenticator that answers as a browser does.
 */
import { fromHex, generateEd25519KeyPair, signApproval, signEd25519, toHex, ValidationError, type SignedApproval } from '@vault/sdk';
import { createSoftwarePasskey, type SoftwarePasskey } from '@vault/sdk/testing';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectError, setup, type Harness } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Edits state.json and reloads it, as an operator does. */
async function editState(harness: Harness, edit: (state: Record<string, unknown>) => void): Promise<void> {
  const path = join(harness.dir, 'state.json');
  const state = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  edit(state);
  writeFileSync(path, JSON.stringify(state));
  await harness.client.reload();
}

/** Pairs an approver device with a passkey, as the browser app does; returns its id and keys. */
async function pairWithPasskey(harness: Harness, passkey: SoftwarePasskey): Promise<{ id: string; secretKey: Uint8Array; device: Record<string, unknown> }> {
  const code = await harness.client.pairCreate({ role: 'approver', label: 'phone' });
  const key = generateEd25519KeyPair();
  const challenge = fromHex(code.challenge, 'challenge', 32);
  const signature = toHex(signEd25519(challenge, key.secretKey));
  const claimed = (await harness.client.pairClaim({ code: code.code, public_key: key.publicKeyHex, signature, label: 'phone', passkey: passkey.register(challenge) })) as { device: Record<string, unknown> & { id: string } };
  return { id: claimed.device.id, secretKey: key.secretKey, device: claimed.device };
}

const originOf = (url: string) => `http://localhost:${new URL(url).port}`;

describe('passkeys at the control plane', () => {
  it('pairing keeps the passkey on the device (default rp_id localhost, origin http://localhost:<port>)', async () => {
    h = await setup({ approverIds: [] });
    const passkey = createSoftwarePasskey({ rp_id: 'localhost', origin: originOf(h.url) });
    const { id, device } = await pairWithPasskey(h, passkey);
    expect(device['passkey']).toEqual({ credential_id: passkey.credential_id, public_key: passkey.public_key, backup_eligible: false, rp_id: 'localhost' });
    const state = JSON.parse(readFileSync(join(h.dir, 'state.json'), 'utf8')) as { devices: { id: string; passkey?: unknown }[] };
    expect(state.devices.find((d) => d.id === id)?.passkey).toEqual(device['passkey']);
  });

  it('pairing refuses a passkey registered for another challenge, origin or rp id, naming claim.passkey', async () => {
    h = await setup({ approverIds: [] });
    const origin = originOf(h.url);
    const cases: [SoftwarePasskey, Parameters<SoftwarePasskey['register']>[1], string][] = [
      [createSoftwarePasskey({ origin: 'https://evil.example' }), {}, 'wrong_origin'],
      [createSoftwarePasskey({ rp_id: 'evil.example', origin }), {}, 'wrong_rp_id'],
      [createSoftwarePasskey({ origin }), { flags: 0x01 | 0x40 }, 'user_not_verified'],
    ];
    for (const [passkey, opts, reason] of cases) {
      const code = await h.client.pairCreate({ role: 'approver', label: 'phone' });
      const key = generateEd25519KeyPair();
      const challenge = fromHex(code.challenge, 'challenge', 32);
      const e = await expectError(
        h.client.pairClaim({ code: code.code, public_key: key.publicKeyHex, signature: toHex(signEd25519(challenge, key.secretKey)), label: 'phone', passkey: passkey.register(challenge, opts) }),
      );
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).issues[0]?.path).toMatch(/^passkey\./);
      expect((e as ValidationError).data).toMatchObject({ reason: 'bad_passkey', passkey: reason });
    }
    // A registration over another pairing code's challenge.
    const code = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    const key = generateEd25519KeyPair();
    const challenge = fromHex(code.challenge, 'challenge', 32);
    const e = await expectError(
      h.client.pairClaim({ code: code.code, public_key: key.publicKeyHex, signature: toHex(signEd25519(challenge, key.secretKey)), label: 'phone', passkey: createSoftwarePasskey({ origin }).register(new Uint8Array(32)) }),
    );
    expect((e as ValidationError).data).toMatchObject({ reason: 'bad_passkey', passkey: 'wrong_challenge' });
    expect(((await h.client.devices()) as { devices: unknown[] }).devices).toEqual([]);
  });

  describe('approvals', () => {
    async function world() {
      h = await setup({ approverIds: [], rules: [{ rule: 'approval_threshold', above: '0', required_weight: 1, approvers: [{ id: 'placeholder', weight: 1 }] }] });
      const passkey = createSoftwarePasskey({ rp_id: 'localhost', origin: originOf(h.url) });
      const dev = await pairWithPasskey(h, passkey);
      // The policy must count the new device (approve-signed refuses an approver no rule counts).
      await editState(h, (s) => {
        s['policies'] = [{ wallet: 'ops', version: 2, rules: [{ rule: 'approval_threshold', above: '0', required_weight: 1, approvers: [{ id: dev.id, weight: 1 }] }] }];
      });
      const { intentId } = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '5' });
      const approval = (strong: boolean): SignedApproval => signApproval({ approver_id: dev.id, intent: intentId, verdict: 'approve', at: h!.clock.now, strong_auth: strong }, dev.secretKey);
      return { harness: h, passkey, dev, intentId, approval };
    }

    it('a strong approval with a verifying assertion is recorded, the assertion kept with it', async () => {
      const { harness, passkey, intentId, approval } = await world();
      const proven = passkey.attach(approval(true));
      const r = await harness.client.approveSigned(intentId, proven);
      expect(r.status).toBe('allowed');
      const stored = (await harness.client.intent(intentId)) as { approvals: SignedApproval[] };
      expect(stored.approvals).toEqual([proven]);
    });

    it("attack: strong_auth true without an assertion is the control plane's 400 naming approval.webauthn", async () => {
      const { harness, passkey, intentId, approval } = await world();
      const bare = approval(true);
      // An assertion over the weak twin, with strong_auth flipped afterwards: the ed25519 signature breaks first.
      const flipped = await expectError(harness.client.approveSigned(intentId, { ...passkey.attach(approval(false)), strong_auth: true }));
      expect((flipped as ValidationError).issues[0]?.path).toBe('signature.sig');
      const e = await expectError(harness.client.approveSigned(intentId, bare));
      expect(e.status).toBe(400);
      expect(e.shortMessage).toMatch(/^invalid approval\.webauthn/);
      expect(e.data).toMatchObject({ path: 'webauthn' });
      expect((e as ValidationError).data).toMatchObject({ reason: 'strong_auth_unproven', webauthn: 'no_assertion' });
      const wrongOrigin = await expectError(harness.client.approveSigned(intentId, passkey.attach(bare, { origin: 'https://evil.example' })));
      expect((wrongOrigin as ValidationError).data).toMatchObject({ reason: 'strong_auth_unproven', webauthn: 'wrong_origin' });
      const highS = await expectError(harness.client.approveSigned(intentId, passkey.attach(bare, { s: 'high' })));
      expect((highS as ValidationError).data).toMatchObject({ reason: 'strong_auth_unproven', webauthn: 'high_s' });
      // Nothing was recorded; a weak approval (no claim to prove) is accepted.
      expect(((await harness.client.intent(intentId)) as { approvals: unknown[] }).approvals).toEqual([]);
      expect((await harness.client.approveSigned(intentId, approval(false))).status).toBe('allowed');
    });

    it('the state webauthn setting replaces the default origin', async () => {
      const { harness, passkey, intentId, approval } = await world();
      await editState(harness, (s) => {
        s['webauthn'] = { rp_id: 'localhost', origins: ['https://vault.example'] };
      });
      const e = await expectError(harness.client.approveSigned(intentId, passkey.attach(approval(true))));
      expect((e as ValidationError).data).toMatchObject({ webauthn: 'wrong_origin' });
      expect((await harness.client.approveSigned(intentId, passkey.attach(approval(true), { origin: 'https://vault.example' }))).status).toBe('allowed');
    });
  });
});
