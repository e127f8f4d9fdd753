/**
 * @module device-session
 * How a paired device proves its key to the control plane: it asks for a single-use challenge and
 * signs this message with its ed25519 key; the control plane verifies it against the key it paired
 * and answers a short-lived device session. The domain keeps the signature from being valid as
 * anything else (an approval, a pairing claim).
 */
import { canonicalize } from './canonical.js';
import { utf8Bytes } from './encoding.js';

export const DEVICE_SESSION_DOMAIN = 'vault-device-session/v1';

/**
 * The bytes a device signs to open a session: JCS `{"challenge":…,"device":…,"domain":…}`.
 *
 * @example
 * const sig = await signEd25519(deviceSessionMessage({ device: 'dev_0123456789abcdef', challenge }), seed)
 */
export function deviceSessionMessage(input: { device: string; challenge: string }): Uint8Array {
  return utf8Bytes(canonicalize({ challenge: input.challenge, device: input.device, domain: DEVICE_SESSION_DOMAIN }));
}
