/**
 * @module control-plane/device-auth
 * A paired device authenticates with its own key, never with the operator's passphrase:
 * POST /device/challenge gives a single-use challenge (60 s), POST /device/session takes the
 * device's ed25519 signature over `deviceSessionMessage` and answers a device session (the same
 * token store as the operator's, shorter lived, carrying the device id and role). A revoked device
 * gets no challenge and its open sessions end at revocation.
 */
import { deviceSessionMessage, fromHex, RefusedError, SessionError, verifyEd25519 } from '@vault/sdk';
import { randomBytes } from 'node:crypto';
import type { Core } from './core.js';
import type { SessionStore } from './sessions.js';

export const DEVICE_CHALLENGE_TTL_SECONDS = 60;
/** Open challenges at most: each is 32 random bytes, so a flood only evicts the oldest. */
export const MAX_DEVICE_CHALLENGES = 1024;
/**
 * Open challenges of one device at most: asking costs nothing, so past this the device's own
 * oldest goes, and asking for one device never evicts another's challenge.
 */
export const MAX_CHALLENGES_PER_DEVICE = 4;

interface Challenge {
  device: string;
  expires_at: number;
}

export class DeviceAuth {
  readonly #core: Core;
  readonly #sessions: SessionStore;
  readonly #challenges = new Map<string, Challenge>();

  constructor(core: Core, sessions: SessionStore) {
    this.#core = core;
    this.#sessions = sessions;
  }

  #device(id: string) {
    const d = this.#core.state.devices.find((x) => x.id === id);
    // One answer for unknown and revoked: the caller learns nothing it could not learn by pairing.
    if (!d || d.revoked_at !== null) throw new SessionError('device unknown or revoked', { data: { reason: 'device' } });
    return d;
  }

  /** POST /device/challenge: a single-use challenge for a paired, unrevoked device. */
  challenge(deviceId: string): { challenge: string; expires_at: number } {
    this.#device(deviceId);
    const now = this.#core.now();
    for (const [k, c] of this.#challenges) if (c.expires_at <= now) this.#challenges.delete(k);
    const own = [...this.#challenges].filter(([, c]) => c.device === deviceId);
    // Insertion order: the first is this device's oldest.
    if (own.length >= MAX_CHALLENGES_PER_DEVICE) this.#challenges.delete((own[0] as [string, Challenge])[0]);
    if (this.#challenges.size >= MAX_DEVICE_CHALLENGES) {
      const oldest = this.#challenges.keys().next().value;
      if (oldest !== undefined) this.#challenges.delete(oldest);
    }
    const challenge = randomBytes(32).toString('hex');
    const c = { device: deviceId, expires_at: now + DEVICE_CHALLENGE_TTL_SECONDS };
    this.#challenges.set(challenge, c);
    return { challenge, expires_at: c.expires_at };
  }

  /** POST /device/session: the device's signature over its challenge opens a device session. */
  session(body: { device_id: string; challenge: string; signature: string }): { token: string; expires_at: number; device: { id: string; role: string } } {
    const c = this.#challenges.get(body.challenge);
    // Single use whatever happens next: a wrong signature burns the challenge too.
    this.#challenges.delete(body.challenge);
    if (!c || c.expires_at <= this.#core.now() || c.device !== body.device_id) {
      throw new SessionError('device challenge invalid, used or expired', { data: { reason: 'challenge' } });
    }
    const d = this.#device(body.device_id);
    const ok = verifyEd25519(fromHex(body.signature, 'signature', 64), deviceSessionMessage({ device: d.id, challenge: body.challenge }), fromHex(d.public_key, 'public_key', 32));
    if (!ok) {
      this.#core.log({ event: 'device_session_refused', reason: 'bad_signature' });
      throw new SessionError('device signature does not verify', { data: { reason: 'bad_signature' } });
    }
    const s = this.#sessions.create({ kind: 'device', id: d.id, role: d.role, public_key: d.public_key });
    this.#core.log({ event: 'device_session', role: d.role });
    return { ...s, device: { id: d.id, role: d.role } };
  }

  /** Called when a device is revoked: its sessions end now. */
  revoked(id: string): void {
    this.#sessions.revokeDevice(id);
    for (const [k, c] of this.#challenges) if (c.device === id) this.#challenges.delete(k);
  }
}

/** A refusal for a principal that may not call a route (403, reason `forbidden`). */
export function forbidden(message: string): RefusedError {
  return new RefusedError(message, { data: { reason: 'forbidden' } });
}
