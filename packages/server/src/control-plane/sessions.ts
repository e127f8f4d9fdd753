/**
 * @module control-plane/sessions
 * Operator sessions (DESIGN §8): a token of 32 random bytes, base64url, valid for 15 minutes idle
 * and 8 hours at most; lock revokes it. Tokens are kept only as SHA-256 digests, so a lookup
 * compares digests, never the token, and a memory dump does not reveal a live token.
 */
import { SessionError } from '@vault/sdk';
import { createHash, randomBytes } from 'node:crypto';
import { actorOf } from './actor.js';

export const SESSION_IDLE_SECONDS = 15 * 60;
export const SESSION_ABSOLUTE_SECONDS = 8 * 60 * 60;
export const MAX_SESSIONS = 64;
/**
 * Sessions one principal (an account, a device) holds at most: past that its own least recently
 * used one makes room, so no single principal can fill the store and evict everyone else's.
 */
export const MAX_SESSIONS_PER_PRINCIPAL = 8;
/** Passphrase checks waiting for their turn, at most (see UnlockQueue). */
export const UNLOCK_QUEUE_MAX = 4096;

/**
 * Who a request speaks for: an operator (the legacy passphrase, `operator`, the first admin; or a
 * named account with its role), a paired device that proved its key (POST /device/session), with
 * its role, or an API key (no session: it authenticates each request; identities.ts).
 */
export type Principal =
  | { kind: 'operator'; name: string; role: 'admin' | 'operator' | 'auditor' }
  | {
      kind: 'device';
      id: string;
      role: 'approver' | 'initiator' | 'viewer';
      /** The key the device proved at sign-in (hex); a session without it is refused (service.ts authenticate). */
      public_key?: string;
    }
  | { kind: 'apikey'; id: string; bound_to: string; wallets: readonly string[] | null };

interface Session {
  created: number;
  last: number;
  principal: Principal;
}

export const LEGACY_OPERATOR_PRINCIPAL: Principal = Object.freeze({ kind: 'operator', name: 'operator', role: 'admin' });

function digest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  constructor(
    private readonly now: () => number,
    readonly idleSeconds = SESSION_IDLE_SECONDS,
    readonly absoluteSeconds = SESSION_ABSOLUTE_SECONDS,
  ) {}

  /** A new session for `principal` (the operator unless given): the token and when it expires if left idle. */
  create(principal: Principal = LEGACY_OPERATOR_PRINCIPAL): { token: string; expires_at: number } {
    const t = this.now();
    this.#prune(t);
    const owner = actorOf(principal);
    const own = [...this.#sessions].filter(([, s]) => actorOf(s.principal) === owner);
    if (own.length >= MAX_SESSIONS_PER_PRINCIPAL) this.#dropLeastRecent(own);
    // Drop the least recently used session rather than refuse the operator.
    if (this.#sessions.size >= MAX_SESSIONS) this.#dropLeastRecent(this.#sessions);
    const token = randomBytes(32).toString('base64url');
    this.#sessions.set(digest(token), { created: t, last: t, principal });
    return { token, expires_at: this.#expiry({ created: t, last: t, principal }) };
  }

  #dropLeastRecent(entries: Iterable<[string, Session]>): void {
    let oldest: [string, Session] | undefined;
    for (const e of entries) if (!oldest || e[1].last < oldest[1].last) oldest = e;
    if (oldest) this.#sessions.delete(oldest[0]);
  }

  #expiry(s: Session): number {
    return Math.min(s.last + this.idleSeconds, s.created + this.absoluteSeconds);
  }

  /** Checks a token and slides its idle expiry. Throws SessionError (4100) when absent or expired. */
  touch(token: string | null): { expires_at: number; principal: Principal } {
    if (token === null) throw new SessionError('session required: send Authorization: Bearer <token> from POST /session/unlock');
    const key = digest(token);
    const s = this.#sessions.get(key);
    const t = this.now();
    if (!s) throw new SessionError('session invalid or expired', { data: { reason: 'invalid' } });
    if (t >= s.created + this.absoluteSeconds) {
      this.#sessions.delete(key);
      throw new SessionError('session expired (absolute lifetime reached)', { data: { reason: 'expired_absolute' } });
    }
    if (t >= s.last + this.idleSeconds) {
      this.#sessions.delete(key);
      throw new SessionError('session expired (idle)', { data: { reason: 'expired_idle' } });
    }
    s.last = t;
    return { expires_at: this.#expiry(s), principal: s.principal };
  }

  /** Ends every session of a device (it was revoked): its token stops working at once. */
  revokeDevice(id: string): number {
    return this.#revokeWhere((p) => p.kind === 'device' && p.id === id);
  }

  /** Ends every session of a named operator account (it was disabled). */
  revokeOperator(name: string): number {
    return this.#revokeWhere((p) => p.kind === 'operator' && p.name === name);
  }

  #revokeWhere(match: (p: Principal) => boolean): number {
    let n = 0;
    for (const [k, s] of this.#sessions) {
      if (match(s.principal)) {
        this.#sessions.delete(k);
        n += 1;
      }
    }
    return n;
  }

  revoke(token: string): boolean {
    return this.#sessions.delete(digest(token));
  }

  get size(): number {
    return this.#sessions.size;
  }

  #prune(t: number): void {
    for (const [k, s] of this.#sessions) {
      if (t >= s.created + this.absoluteSeconds || t >= s.last + this.idleSeconds) this.#sessions.delete(k);
    }
  }
}

/**
 * Passphrase checks, one at a time, in arrival order. All clients share loopback, so there is no
 * client to count attempts by; a counter that refused attempts once full would let any local
 * process lock the operator out, and one that let the right passphrase through while refusing
 * others would be an oracle. Instead every attempt is checked and the checks are serialised: the
 * guess rate is bounded by one scrypt at a time, whoever sends them, and the operator's attempt
 * waits only for the attempts queued before it. Successful attempts count toward nothing.
 * A waiting attempt holds no scrypt memory and no thread, only its place in line; one whose client
 * has gone away is dropped without being checked.
 */
export class UnlockQueue {
  #waiting: { start: () => void; dropped: boolean }[] = [];
  #queued = 0;
  #busy = false;

  constructor(readonly maxWaiting = UNLOCK_QUEUE_MAX) {}

  /** Attempts waiting for their turn (not counting the one being checked). */
  get waiting(): number {
    return this.#queued;
  }

  /** Runs `check` once every attempt queued before it has finished; `signal` withdraws it while it waits. */
  async run<T>(check: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw abandoned();
    if (this.#busy) {
      if (this.#queued >= this.maxWaiting) {
        // Reached only with thousands of attempts held open at once, when the wait is already
        // minutes long. Refused as busy (503), never as a wrong or rate-limited passphrase.
        throw Object.assign(new SessionError('unlock is busy: too many attempts waiting; retry', { data: { reason: 'busy' } }), { httpStatus: 503 });
      }
      await new Promise<void>((resolve, reject) => {
        const entry = { start: resolve, dropped: false };
        const drop = () => {
          entry.dropped = true;
          this.#queued -= 1;
          reject(abandoned());
        };
        entry.start = () => {
          signal?.removeEventListener('abort', drop);
          resolve();
        };
        if (this.#waiting.length >= 2 * this.maxWaiting) this.#waiting = this.#waiting.filter((e) => !e.dropped);
        this.#waiting.push(entry);
        this.#queued += 1;
        signal?.addEventListener('abort', drop, { once: true });
      });
    } else {
      this.#busy = true;
    }
    try {
      return await check();
    } finally {
      this.#next();
    }
  }

  /** Hands the turn to the oldest attempt still waiting, or frees it. */
  #next(): void {
    for (let e = this.#waiting.shift(); e; e = this.#waiting.shift()) {
      if (e.dropped) continue;
      this.#queued -= 1;
      e.start();
      return;
    }
    this.#busy = false;
  }
}

function abandoned(): SessionError {
  return new SessionError('unlock attempt abandoned by its client', { data: { reason: 'aborted' } });
}
