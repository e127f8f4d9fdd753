/**
 * @module control-plane/identities
 * Named operator accounts and API keys (issue #23). Each account has its own scrypt-hashed
 * passphrase and its own unlock queue (UnlockQueue), so guesses against one account never delay
 * another; the legacy passphrase (operator.json) is the first admin, `operator`. An API key
 * (`vk_<id>_<secret>`) is looked up by its id and its secret compared as a SHA-256 digest in
 * constant time; only the digest is stored. Each change of state.json is built and checked before
 * anything is written, under the state lock, with its receipt (as devices.ts does).
 */
import { NotFoundError, SessionError, sha256Hex, timingSafeEqual, ValidationError } from '@vault/sdk';
import { createHash, randomBytes } from 'node:crypto';
import { STATE_FILE, type Core } from './core.js';
import { hashPassphrase, verifyPassphrase, type PassphraseFile } from './secrets.js';
import { LEGACY_OPERATOR_PRINCIPAL, UnlockQueue, type Principal, type SessionStore } from './sessions.js';
import { encodeState, LEGACY_OPERATOR, type ApiKey, type OperatorAccount, type OperatorRole } from './state.js';

export const API_KEY_PREFIX = 'vk_';
/** Bytes of randomness in a key's secret (base64url: 43 characters). */
export const API_KEY_SECRET_BYTES = 32;
/** The longest an API key may live: keys expire, and a forgotten one should not outlive a year. */
export const API_KEY_MAX_SECONDS = 366 * 24 * 60 * 60;

/**
 * Passphrase checks running at once across all accounts. Each account's queue has at most one
 * check in flight, so this gate sees at most one waiter per account and serves them in arrival
 * order: a flood on several accounts delays another by a few checks, never refuses it, and
 * memory stays at this many scrypts (32 MiB each at the default cost), not one per account.
 */
export const SCRYPT_CONCURRENCY = 2;

/** A FIFO counting semaphore (see SCRYPT_CONCURRENCY). */
class Gate {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(readonly size: number) {
    this.#free = size;
  }
  /** Checks running now. */
  get running(): number {
    return this.size - this.#free;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter, or is freed.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    }
  }
}

const API_KEY_RE = /^vk_([0-9a-f]{16})_([A-Za-z0-9_-]{43,128})$/;

/** The id and secret of a presented key, or null when it is not shaped like one. */
export function parseApiKey(token: string): { id: string; secret: string } | null {
  if (token.length > 160) return null;
  const m = API_KEY_RE.exec(token);
  return m ? { id: m[1] as string, secret: m[2] as string } : null;
}

function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** A key's public view: never its digest. */
export function publicApiKey(k: ApiKey, now: number): Record<string, unknown> {
  return {
    id: k.id,
    bound_to: k.bound_to,
    wallets: k.wallets ?? null,
    label: k.label,
    created_at: k.created_at,
    expires_at: k.expires_at,
    revoked_at: k.revoked_at,
    revoked: k.revoked_at !== null,
    expired: now >= k.expires_at,
  };
}

/** An account's public view: never its passphrase hash. */
export function publicOperator(o: Pick<OperatorAccount, 'name' | 'role' | 'disabled_at'> & { created_at: number | null }, legacy = false): Record<string, unknown> {
  return { name: o.name, role: o.role, created_at: o.created_at, disabled_at: o.disabled_at, disabled: o.disabled_at !== null, ...(legacy ? { legacy: true } : {}) };
}

export class Identities {
  readonly #core: Core;
  readonly #sessions: SessionStore;
  readonly #legacy: PassphraseFile;
  readonly #queueMax: number | undefined;
  /** The legacy passphrase's queue (ControlPlane.unlockQueue). */
  readonly legacyQueue: UnlockQueue;
  /** One queue per account name, made on first use; bounded by the accounts state.json may hold. */
  readonly #queues = new Map<string, UnlockQueue>();
  /** Names no account has share one queue: a flood of made-up names delays only made-up names. */
  readonly #unknownQueue: UnlockQueue;
  /** What a name without a live account is checked against, so its answer costs one scrypt too. */
  readonly #decoy: PassphraseFile;
  readonly #gate = new Gate(SCRYPT_CONCURRENCY);
  /** Compared against when a key id is unknown, so the answer takes the same path. */
  readonly #decoyDigest = randomBytes(32);

  constructor(core: Core, sessions: SessionStore, legacy: PassphraseFile, queueMax?: number) {
    this.#core = core;
    this.#sessions = sessions;
    this.#legacy = legacy;
    this.#queueMax = queueMax;
    this.legacyQueue = new UnlockQueue(queueMax);
    this.#unknownQueue = new UnlockQueue(queueMax);
    this.#decoy = { ...legacy, salt: randomBytes(16).toString('hex'), hash: randomBytes(32).toString('hex') };
  }

  /** Passphrase checks running now, across every account (at most SCRYPT_CONCURRENCY). */
  get checksRunning(): number {
    return this.#gate.running;
  }

  /** The unlock queue of account `name` (the legacy one for `operator`). */
  queueOf(name: string): UnlockQueue {
    if (name === LEGACY_OPERATOR) return this.legacyQueue;
    if (!this.#core.state.operators.some((o) => o.name === name)) return this.#unknownQueue;
    let q = this.#queues.get(name);
    if (!q) {
      q = new UnlockQueue(this.#queueMax);
      this.#queues.set(name, q);
    }
    return q;
  }

  /**
   * POST /session/unlock: `name` absent (or `operator`) is the legacy passphrase. An unknown or
   * disabled account is refused exactly as a wrong passphrase, after the same scrypt, so the
   * answer does not tell which names exist.
   */
  async unlock(name: string | undefined, passphrase: string, signal?: AbortSignal): Promise<Principal> {
    const who = name ?? LEGACY_OPERATOR;
    if (who === LEGACY_OPERATOR) {
      if (!(await this.legacyQueue.run(() => this.#gate.run(() => verifyPassphrase(passphrase, this.#legacy)), signal))) throw wrongPassphrase();
      return LEGACY_OPERATOR_PRINCIPAL;
    }
    const account = this.#live(who);
    const stored = account?.passphrase ?? this.#decoy;
    const ok = await this.queueOf(who).run(() => this.#gate.run(() => verifyPassphrase(passphrase, stored)), signal);
    // Checked again after the wait: an account disabled meanwhile does not unlock.
    const now = this.#live(who);
    if (!ok || account === undefined || now === undefined || now.passphrase.hash !== stored.hash) throw wrongPassphrase();
    return { kind: 'operator', name: now.name, role: now.role };
  }

  #live(name: string): OperatorAccount | undefined {
    return this.#core.state.operators.find((o) => o.name === name && o.disabled_at === null);
  }

  /**
   * The principal of an API key presented as a bearer token: looked up by id, its secret's digest
   * compared in constant time (against a decoy when the id is unknown), then refused if revoked or
   * expired. Throws SessionError (401) with the reason.
   */
  authenticateKey(token: string): Extract<Principal, { kind: 'apikey' }> {
    const parsed = parseApiKey(token);
    if (parsed === null) throw new SessionError('api key invalid', { data: { reason: 'invalid' } });
    const key = this.#core.state.api_keys.find((k) => k.id === parsed.id);
    const expected = key ? Buffer.from(key.digest, 'hex') : this.#decoyDigest;
    if (!timingSafeEqual(secretDigest(parsed.secret), expected) || key === undefined) throw new SessionError('api key invalid', { data: { reason: 'invalid' } });
    if (key.revoked_at !== null) throw new SessionError('api key revoked', { data: { reason: 'revoked' } });
    if (this.#core.now() >= key.expires_at) throw new SessionError('api key expired', { data: { reason: 'expired' } });
    return { kind: 'apikey', id: key.id, bound_to: key.bound_to, wallets: key.wallets ?? null };
  }

  // ---------------------------------------------------------------- operator accounts

  operators(): Record<string, unknown>[] {
    // The legacy passphrase predates accounts: its creation time is init's, not recorded here.
    return [publicOperator({ name: LEGACY_OPERATOR, role: 'admin', created_at: null, disabled_at: null }, true), ...this.#core.state.operators.map((o) => publicOperator(o))];
  }

  /**
   * POST /operators: hashed with the legacy passphrase's scrypt cost (the cost this vault was
   * initialised with). Crash order: the receipt, then the state (as pairing): a crash between
   * leaves a receipt for an account that never took effect, never an account without a receipt.
   */
  async createOperator(req: { name: string; role: OperatorRole; passphrase: string }): Promise<Record<string, unknown>> {
    this.#core.writer.assertWritable();
    if (req.name === LEGACY_OPERATOR) throw new ValidationError('operator', [{ path: 'name', message: `"${LEGACY_OPERATOR}" is the legacy passphrase` }], { data: { reason: 'duplicate' } });
    // Hashed before the lock: scrypt is slow and the lock orders every change of state.json.
    const passphrase = await hashPassphrase(req.passphrase, { N: this.#legacy.N, r: this.#legacy.r, p: this.#legacy.p });
    return this.#core.stateLock.run(STATE_FILE, async () => {
      if (this.#core.state.operators.some((o) => o.name === req.name)) {
        throw new ValidationError('operator', [{ path: 'name', message: `operator ${req.name} exists` }], { data: { reason: 'duplicate' } });
      }
      const account: OperatorAccount = { name: req.name, role: req.role, passphrase, created_at: this.#core.now(), disabled_at: null };
      const next = encodeState({ ...this.#core.state, operators: [...this.#core.state.operators, account] });
      const receipt = this.#core.writer.draftReceipt('operator.created', { name: account.name, role: account.role, created_at: account.created_at });
      await this.#core.writer.appendReceipt(receipt);
      await this.#core.writeState(next);
      this.#core.log({ event: 'operator_created', role: account.role });
      return { ...publicOperator(account), receipt_head: receipt.hash };
    });
  }

  /** POST /operators/{name}/disable: the state, then the receipt (authority lost, never kept); its sessions end at once. */
  async disableOperator(name: string): Promise<Record<string, unknown>> {
    if (name === LEGACY_OPERATOR) throw new ValidationError('name', [{ path: '', message: `"${LEGACY_OPERATOR}" is the legacy passphrase (operator.json); it cannot be disabled here` }]);
    return this.#core.stateLock.run(STATE_FILE, async () => {
      const o = this.#core.state.operators.find((x) => x.name === name);
      if (!o) throw new NotFoundError('operator', name);
      if (o.disabled_at !== null) return publicOperator(o);
      const disabled: OperatorAccount = { ...o, disabled_at: this.#core.now() };
      const next = encodeState({ ...this.#core.state, operators: this.#core.state.operators.map((x) => (x.name === name ? disabled : x)) });
      const receipt = this.#core.writer.draftReceipt('operator.disabled', { name, disabled_at: disabled.disabled_at });
      const written = this.#core.writeState(next, receipt);
      this.#sessions.revokeOperator(name);
      await written;
      this.#core.log({ event: 'operator_disabled' });
      return { ...publicOperator(disabled), receipt_head: receipt.hash };
    });
  }

  // ---------------------------------------------------------------- API keys

  apiKeys(): Record<string, unknown>[] {
    const now = this.#core.now();
    return this.#core.state.api_keys.map((k) => publicApiKey(k, now));
  }

  /** POST /api-keys: the key is in the answer once; only its digest is kept. */
  async createApiKey(req: { bound_to: string; wallets?: string[] | undefined; expires_at: number; label?: string | undefined }): Promise<Record<string, unknown>> {
    this.#core.writer.assertWritable();
    const now = this.#core.now();
    if (req.expires_at <= now || req.expires_at > now + API_KEY_MAX_SECONDS) {
      throw new ValidationError('api_key', [{ path: 'expires_at', message: `must be after now (${now}) and at most ${API_KEY_MAX_SECONDS} s ahead` }]);
    }
    req.wallets?.forEach((w, i) => {
      if (!this.#core.state.wallets.some((x) => x.wallet === w)) throw new ValidationError('api_key', [{ path: `wallets.${i}`, message: `unknown wallet ${w}` }]);
    });
    return this.#core.stateLock.run(STATE_FILE, async () => {
      const id = randomBytes(8).toString('hex');
      const secret = randomBytes(API_KEY_SECRET_BYTES).toString('base64url');
      const key: ApiKey = {
        id,
        digest: sha256Hex(secret),
        bound_to: req.bound_to,
        ...(req.wallets !== undefined ? { wallets: [...new Set(req.wallets)] } : {}),
        label: req.label ?? '',
        created_at: now,
        expires_at: req.expires_at,
        revoked_at: null,
      };
      const next = encodeState({ ...this.#core.state, api_keys: [...this.#core.state.api_keys, key] });
      const receipt = this.#core.writer.draftReceipt('apikey.created', { id, bound_to: key.bound_to, wallets: key.wallets ?? null, expires_at: key.expires_at, label: key.label, created_at: now });
      await this.#core.writer.appendReceipt(receipt);
      await this.#core.writeState(next);
      this.#core.log({ event: 'apikey_created' });
      return { ...publicApiKey(key, now), key: `${API_KEY_PREFIX}${id}_${secret}`, receipt_head: receipt.hash };
    });
  }

  /** POST /api-keys/{id}/revoke: the state, then the receipt; the key stops working at once. */
  async revokeApiKey(id: string): Promise<Record<string, unknown>> {
    return this.#core.stateLock.run(STATE_FILE, async () => {
      const k = this.#core.state.api_keys.find((x) => x.id === id);
      if (!k) throw new NotFoundError('api_key', id);
      const now = this.#core.now();
      if (k.revoked_at !== null) return publicApiKey(k, now);
      const revoked: ApiKey = { ...k, revoked_at: now };
      const next = encodeState({ ...this.#core.state, api_keys: this.#core.state.api_keys.map((x) => (x.id === id ? revoked : x)) });
      const receipt = this.#core.writer.draftReceipt('apikey.revoked', { id, revoked_at: now });
      await this.#core.writeState(next, receipt);
      this.#core.log({ event: 'apikey_revoked' });
      return { ...publicApiKey(revoked, now), receipt_head: receipt.hash };
    });
  }
}

function wrongPassphrase(): SessionError {
  return new SessionError('wrong passphrase', { data: { reason: 'passphrase' } });
}
