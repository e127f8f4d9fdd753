/**
 * @module web/app/device
 * This browser as a paired approver device: its ed25519 key (WebCrypto, generated here and never
 * extractable: the private half cannot leave the browser, not even to this page's own script),
 * kept in IndexedDB with what pairing answered; the device session (a signed challenge); the
 * control plane's JSON API, same origin only (the CSP allows nothing else).
 */
import { deviceSessionMessage } from '@vault/sdk';

export interface StoredDevice {
  device_id: string;
  role: string;
  label: string;
  public_key: string;
  /** The non-extractable key pair: IndexedDB stores the CryptoKey objects themselves. */
  keys: CryptoKeyPair;
  /** The passkey registered at pairing (base64url credential id), or null without one. */
  passkey: { credential_id: string } | null;
  paired_at: number;
}

const DB = 'vault-approver';
const STORE = 'device';
const SELF = 'self';

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function tx<T>(mode: IDBTransactionMode, run: (s: IDBObjectStore) => IDBRequest): Promise<T> {
  const db = await openDb();
  try {
    return await new Promise<T>((resolve, reject) => {
      const t = db.transaction(STORE, mode);
      const req = run(t.objectStore(STORE));
      t.oncomplete = () => resolve(req.result as T);
      t.onerror = () => reject(t.error);
      t.onabort = () => reject(t.error);
    });
  } finally {
    db.close();
  }
}

export const loadDevice = (): Promise<StoredDevice | undefined> => tx('readonly', (s) => s.get(SELF));
export const saveDevice = (d: StoredDevice): Promise<unknown> => tx('readwrite', (s) => s.put(d, SELF));
export const forgetDevice = (): Promise<unknown> => tx('readwrite', (s) => s.delete(SELF));

export const toHex = (b: ArrayBuffer | Uint8Array): string => Array.from(b instanceof Uint8Array ? b : new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');
export function fromHex(h: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** A fresh ed25519 key pair whose private key cannot be exported. */
export async function generateDeviceKey(): Promise<{ keys: CryptoKeyPair; publicKeyHex: string }> {
  const keys = (await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify'])) as CryptoKeyPair;
  return { keys, publicKeyHex: toHex(await crypto.subtle.exportKey('raw', keys.publicKey)) };
}

export async function signBytes(keys: CryptoKeyPair, message: Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.sign({ name: 'Ed25519' }, keys.privateKey, message as Uint8Array<ArrayBuffer>));
}

/** A refusal from the control plane: its status, error code and message, and the field it names. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

async function call<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers['authorization'] = `Bearer ${token}`;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const err = (json as { error?: { message?: string; data?: { issues?: { path: string; message: string }[] } } } | null)?.error;
    const issue = err?.data?.issues?.[0];
    throw new ApiError(res.status, `${err?.message ?? `HTTP ${res.status}`}${issue ? ` (${issue.path}: ${issue.message})` : ''}`, json);
  }
  return json as T;
}

/** POST /pair/claim without a session: the pairing code, this device's key, its signature over the challenge. */
export const claim = (body: Record<string, unknown>) =>
  call<{ paired: boolean; device: { id: string; role: string; label: string }; counted_by: unknown[]; note?: string }>('POST', '/pair/claim', body);

/** A device session: the control plane's challenge, signed with the device key. */
export class Session {
  #token: string | null = null;
  constructor(readonly device: StoredDevice) {}

  async signIn(): Promise<string> {
    const { challenge } = await call<{ challenge: string }>('POST', '/device/challenge', { device_id: this.device.device_id });
    const signature = await signBytes(this.device.keys, deviceSessionMessage({ device: this.device.device_id, challenge }));
    const s = await call<{ token: string }>('POST', '/device/session', { device_id: this.device.device_id, challenge, signature });
    this.#token = s.token;
    return s.token;
  }

  async token(): Promise<string> {
    return this.#token ?? this.signIn();
  }

  /** An API call in the session; an expired session (401) is renewed once with a fresh challenge. */
  async api<T>(method: string, path: string, body?: unknown): Promise<T> {
    try {
      return await call<T>(method, path, body, await this.token());
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401) throw e;
      this.#token = null;
      return call<T>(method, path, body, await this.signIn());
    }
  }

  /**
   * Follows GET /device/events/stream (the server filters it to this device) and calls `onEvent`
   * per event, reconnecting after a drop from the last event seen. EventSource cannot send an
   * Authorization header, so the stream is read with fetch. Stops when `signal` aborts.
   */
  async follow(onEvent: (e: { id: string; type: string; subject: Record<string, string> }) => void, signal: AbortSignal): Promise<void> {
    let last = '';
    while (!signal.aborted) {
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${await this.token()}`, accept: 'text/event-stream' };
        if (last) headers['last-event-id'] = last;
        const res = await fetch('/device/events/stream', { headers, signal, cache: 'no-store' });
        if (res.status === 401) this.#token = null;
        if (!res.ok || !res.body) throw new ApiError(res.status, `event stream: HTTP ${res.status}`, null);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let end: number;
          while ((end = buf.indexOf('\n\n')) >= 0) {
            const frame = buf.slice(0, end);
            buf = buf.slice(end + 2);
            let data = '';
            for (const line of frame.split('\n')) {
              if (line.startsWith('id: ')) last = line.slice(4);
              else if (line.startsWith('data: ')) data += line.slice(6);
            }
            if (data) onEvent(JSON.parse(data));
          }
        }
      } catch {
        if (signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
