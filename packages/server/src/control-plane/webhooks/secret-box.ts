/**
 * @module control-plane/webhooks/secret-box
 * Endpoint secrets at rest. state.json is a file operators read, diff, back up and paste into
 * tickets, so it holds each secret sealed (AES-256-GCM, the endpoint id as associated data, so a
 * sealed secret copied onto another endpoint does not open) under a key of its own in a 0600 file
 * beside it (`webhooks.key`, created with the first endpoint), as the receipt key is.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readOrCreateSecretFile, readSecretFile } from '../../http/files.js';

export const WEBHOOK_KEY_FILE = 'webhooks.key';

export class SecretBox {
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    if (key.length !== 32) throw new Error(`${WEBHOOK_KEY_FILE} must hold 32 bytes as 64 hex digits`);
    this.#key = key;
  }

  /** The state directory's box, creating its key file (0600) when `create` and it does not exist. */
  static open(stateDir: string, create: boolean): SecretBox {
    const path = join(stateDir, WEBHOOK_KEY_FILE);
    const hex = create ? readOrCreateSecretFile(path, () => randomBytes(32).toString('hex')) : readSecretFile(path).trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${WEBHOOK_KEY_FILE} must hold 32 bytes as 64 hex digits`);
    return new SecretBox(Buffer.from(hex, 'hex'));
  }

  seal(secret: string, endpointId: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.#key, iv);
    c.setAAD(Buffer.from(endpointId, 'utf8'));
    const ct = Buffer.concat([c.update(secret, 'utf8'), c.final(), c.getAuthTag()]);
    return `v1.${iv.toString('base64url')}.${ct.toString('base64url')}`;
  }

  /** The secret, or null when the sealed text was not sealed by this key for this endpoint. */
  open(sealed: string, endpointId: string): string | null {
    const [v, ivText, ctText] = sealed.split('.');
    if (v !== 'v1' || !ivText || !ctText) return null;
    const iv = Buffer.from(ivText, 'base64url');
    const all = Buffer.from(ctText, 'base64url');
    if (iv.length !== 12 || all.length < 17) return null;
    try {
      const d = createDecipheriv('aes-256-gcm', this.#key, iv);
      d.setAAD(Buffer.from(endpointId, 'utf8'));
      d.setAuthTag(all.subarray(all.length - 16));
      return Buffer.concat([d.update(all.subarray(0, all.length - 16)), d.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
