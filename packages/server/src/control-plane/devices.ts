/**
 * @module control-plane/devices
 * Pairing and devices: single-use pairing codes (a QR of `{url, code, challenge}`), a claim signed
 * over the challenge, revocation (pushed to every signer at once). Each change of state.json is
 * built and checked before anything is written, under the state lock, with its receipt.
 */
import { fromHex, NotFoundError, parseRegistration, RefusedError, rulesCountingApprover, sha256Hex, ValidationError, verifyEd25519, type PasskeyRegistration, type RegisteredPasskey } from '@vault/sdk';
import { randomBytes } from 'node:crypto';
import { currentActor, withActor } from './actor.js';
import { STATE_FILE, type Core } from './core.js';
import type { Restrictions } from './restrictions.js';
import { encodeSealed, type Device } from './state.js';

export const PAIRING_TTL_SECONDS = 5 * 60;

interface PairingCode {
  code: string;
  challenge: string;
  role: Device['role'];
  label: string;
  expires_at: number;
  failures: number;
  /** Who opened the code: the pairing it leads to is theirs (the claim itself has no session). */
  actor: string;
}

export function publicDevice(d: Device): Record<string, unknown> {
  return {
    id: d.id,
    role: d.role,
    label: d.label,
    public_key: d.public_key,
    paired_at: d.paired_at,
    revoked_at: d.revoked_at,
    revoked: d.revoked_at !== null,
    ...(d.passkey ? { passkey: d.passkey } : {}),
    ...(d.passkey_origins ? { passkey_origins: d.passkey_origins } : {}),
  };
}

export class Devices {
  readonly #core: Core;
  readonly #restrictions: Restrictions;
  readonly #pairing = new Map<string, PairingCode>();

  constructor(core: Core, restrictions: Restrictions) {
    this.#core = core;
    this.#restrictions = restrictions;
  }

  pairCreate(role: Device['role'], label: string): { code: string; challenge: string; expires_at: number; role: string } {
    const now = this.#core.now();
    for (const [k, p] of this.#pairing) if (p.expires_at <= now) this.#pairing.delete(k);
    if (this.#pairing.size >= 64) throw new RefusedError('too many open pairing codes', { data: { reason: 'pairing_limit' } });
    const code = randomBytes(16).toString('base64url');
    const challenge = randomBytes(32).toString('hex');
    const p: PairingCode = { code, challenge, role, label, expires_at: now + PAIRING_TTL_SECONDS, failures: 0, actor: currentActor() };
    this.#pairing.set(code, p);
    this.#core.log({ event: 'pair_create', role });
    return { code, challenge, expires_at: p.expires_at, role };
  }

  /** The open pairing code, or a refusal that does not say whether it existed. */
  #openCode(code: string): PairingCode {
    const p = this.#pairing.get(code);
    if (!p || p.expires_at <= this.#core.now()) {
      if (p) this.#pairing.delete(code);
      throw new RefusedError('pairing code invalid, used or expired', { data: { reason: 'pairing_code' } });
    }
    return p;
  }

  pairPayload(code: string, baseUrl: string): string {
    const p = this.#openCode(code);
    return JSON.stringify({ url: baseUrl, code: p.code, challenge: p.challenge });
  }

  /**
   * POST /pair/claim (no session). No shared counter: a code is 16 random bytes, so a claim with an
   * unknown code is refused by a map lookup whoever floods them, and failures are counted per code
   * (three bad signatures burn it), which only a holder of that code can spend.
   */
  async pairClaim(body: { code: string; public_key: string; signature: string; label: string; passkey?: PasskeyRegistration | undefined }): Promise<Record<string, unknown>> {
    const p = this.#openCode(body.code);
    const pub = fromHex(body.public_key, 'public_key', 32);
    const sig = fromHex(body.signature, 'signature', 64);
    const challenge = fromHex(p.challenge, 'challenge', 32);
    if (!verifyEd25519(sig, challenge, pub)) {
      p.failures += 1;
      if (p.failures >= 3) this.#pairing.delete(p.code);
      throw new ValidationError('claim', [{ path: 'signature', message: 'signature over the challenge does not verify' }], { data: { reason: 'bad_signature' } });
    }
    const passkey = body.passkey === undefined ? undefined : this.#passkey(body.passkey, challenge, p);
    return this.#core.stateLock.run(STATE_FILE, async () => {
      // Re-checked under the lock: a concurrent claim may have used the code or paired this key.
      if (this.#openCode(body.code) !== p) throw new RefusedError('pairing code invalid, used or expired', { data: { reason: 'pairing_code' } });
      if (this.#core.state.devices.some((d) => d.public_key === body.public_key)) {
        throw new ValidationError('claim', [{ path: 'public_key', message: 'a device with this key is already paired' }], { data: { reason: 'duplicate' } });
      }
      // Under governance a device role is a change set's to give (set_device_role): pairing only
      // proves who holds the key, so the device starts as a viewer whatever the code asked for.
      const governed = this.#core.state.governance !== undefined && p.role !== 'viewer';
      const device: Device = {
        id: `dev_${sha256Hex(body.public_key).slice(0, 16)}`,
        role: governed ? 'viewer' : p.role,
        label: body.label || p.label,
        public_key: body.public_key,
        paired_at: this.#core.now(),
        revoked_at: null,
        ...(passkey ? { passkey } : {}),
      };
      // Everything is built and checked before anything is written: the new state as the loader
      // reads it back, and the receipt. A refusal here leaves the code, the file and the chain as
      // they were.
      const next = encodeSealed({ ...this.#core.state, devices: [...this.#core.state.devices, device] });
      const receipt = withActor(p.actor, () => this.#core.writer.draftReceipt('device.paired', { device }));
      this.#pairing.delete(p.code); // single use, consumed before the first await
      // Crash order: the receipt, then the state. A crash between leaves a receipt for a pairing
      // that never took effect (the device got no answer and pairs again), never a device whose
      // approvals count without a receipt saying so.
      await this.#core.writer.appendReceipt(receipt);
      await this.#core.writeState(next);
      this.#core.log({ event: 'paired', role: device.role });
      const pending = governed
        ? {
            requested_role: p.role,
            note: `paired as a viewer: under governance its role (${p.role}) is given by a change set (POST /changes with {"op": "set_device_role", "device": "${device.id}", "role": "${p.role}"}) the admin quorum approves`,
          }
        : {};
      return { paired: true, device: publicDevice(device), ...this.countedBy(device), ...pending };
    });
  }

  /**
   * The passkey a claim registers over the pairing challenge (parseRegistration: ES256 only, user
   * verified, this rp id and an allowed origin), or a 400 naming `claim.passkey` that burns the
   * code like a bad signature does.
   */
  #passkey(registration: PasskeyRegistration, challenge: Uint8Array, p: PairingCode): RegisteredPasskey {
    const { rp_id, origins } = this.#core.webauthn();
    const r = parseRegistration(registration, { challenge, rp_id, origins });
    if (r.ok) return r.passkey;
    p.failures += 1;
    if (p.failures >= 3) this.#pairing.delete(p.code);
    const field = r.path === 'client_data_json' ? 'client_data_json' : 'attestation_object';
    throw new ValidationError('claim', [{ path: `passkey.${field}`, message: `${r.reason}: ${r.message}` }], { data: { reason: 'bad_passkey', passkey: r.reason } });
  }

  /**
   * Which wallets' policies count this device's approvals (an approver's), with the rules: the
   * truth a pairing answer owes its device, instead of approvals that answer 200 and count 0.
   */
  countedBy(device: Device): { counted_by: { wallet: string; rules: { index: number; rule: string; weight: number | null }[] }[]; note?: string } {
    if (device.role !== 'approver') return { counted_by: [] };
    const counted_by = this.#core.state.wallets
      .map((w) => ({ wallet: w.wallet, rules: rulesCountingApprover(this.#core.policy(w.wallet), device.id) }))
      .filter((x) => x.rules.length > 0);
    return counted_by.length > 0
      ? { counted_by }
      : { counted_by, note: `no wallet's policy counts ${device.id} yet: its approvals will be refused until a policy lists it in an approval_threshold` };
  }

  devices(): Record<string, unknown>[] {
    return this.#core.state.devices.map(publicDevice);
  }

  async revokeDevice(id: string): Promise<Record<string, unknown>> {
    const outcome = await this.#core.stateLock.run(STATE_FILE, async () => {
      const d = this.#core.state.devices.find((x) => x.id === id);
      if (!d) throw new NotFoundError('device', id);
      if (d.revoked_at !== null) return { id, revoked: true, revoked_at: d.revoked_at };
      const revoked: Device = { ...d, revoked_at: this.#core.now() };
      // Built and checked before anything is written (see pairClaim).
      // Direct under governance too: a revocation only removes power.
      const next = encodeSealed({ ...this.#core.state, devices: this.#core.state.devices.map((x) => (x.id === id ? revoked : x)) });
      const receipt = this.#core.writer.draftReceipt('device.revoked', { id, at: revoked.revoked_at });
      // Crash order: the state, then the receipt (the reverse of pairing). A crash between leaves
      // the device revoked without its receipt (authority lost, never kept), rather than a receipt
      // for a revocation that the next start would not apply. No await until the receipt is chained.
      await this.#core.writeState(next, receipt);
      this.#core.log({ event: 'revoked' });
      return { id, revoked: true, revoked_at: revoked.revoked_at };
    });
    // Committed (or a repeat, so an operator can retry signers that missed it): every signer learns
    // it now, outside the state lock; one that misses it learns it before it is next asked to sign.
    return { ...outcome, signers: await this.#restrictions.pushRestrictions() };
  }
}
