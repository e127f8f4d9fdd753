/**
 * @module control-plane/lifecycle
 * How an intent ends without being executed: cancelled (POST /intent/{id}/cancel, by the operator
 * or by the initiator that created it) or expired (its wallet's time to live passed). Both are
 * final, both only for an intent not submitted whose payloads, if any were signed, are provably
 * dead on the ledger: an intent that may still land is not closed as if nothing happened.
 *
 * Expiry is written when the intent is next read, approved or executed after its expires_at, and
 * by a periodic sweep (bounded per run, stopped with the server) so that it is on record, with its
 * `intent.expired` receipt, without anyone asking. A cancellation reaches the signers as a
 * `cancel_intent` restriction (restrictions.ts), which they keep: a control plane compromised
 * later cannot have them sign for the intent again.
 */
import {
  formatIdentity,
  intentExpiresAt,
  isExpired,
  parseInitiator,
  RefusedError,
  sameIdentity,
  ValidationError,
  VaultError,
  verifyCancel,
  type CancelRequest,
  type CancelResult,
  type Identity,
} from '@vault/sdk';
import { SYSTEM_ACTOR, withActor } from './actor.js';
import type { Core } from './core.js';
import type { Restrictions } from './restrictions.js';
import { EXPIRABLE_STATUSES, transition } from './status.js';
import type { IntentRecord } from './store.js';

/** Most intents one sweep expires: a backlog (a control plane down for a week) clears over several runs. */
export const EXPIRY_SWEEP_BATCH = 256;
/** How often the sweep runs unless configured (ControlPlaneOptions.expirySweepMs). */
export const EXPIRY_SWEEP_MS = 60_000;
/**
 * Most due intents one sweep looks at. Those whose payload may still land are skipped for
 * EXPIRY_RETRY_SECONDS, so a run of them at the front of the index cannot starve the rest.
 */
export const EXPIRY_SWEEP_SCAN = 4096;
const EXPIRY_RETRY_SECONDS = 60;

export class Lifecycle {
  readonly #core: Core;
  readonly #restrictions: Restrictions;
  #timer: NodeJS.Timeout | null = null;
  #sweeping: Promise<number> | null = null;
  /** Due intents left as they were (a payload that may land) -> when the sweep tries them again. */
  readonly #deferred = new Map<string, number>();

  constructor(core: Core, restrictions: Restrictions) {
    this.#core = core;
    this.#restrictions = restrictions;
  }

  /** When the intent expires: as stored, or (a record older than expiry) created_at + its wallet's ttl now. */
  expiresAt(record: Pick<IntentRecord, 'created_at' | 'expires_at' | 'intent'>): number {
    return record.expires_at ?? intentExpiresAt(record.created_at, this.#core.lifetime(record.intent.wallet).ttl_seconds);
  }

  /**
   * The record expired (written, with its `intent.expired` receipt) when its time to live has
   * passed and it can expire, else the record unchanged. Leaves an intent whose signed payload may
   * still land as it is (it is tried again on the next read or sweep). Call under the intent's lock.
   */
  async expireIfDue(cur: IntentRecord): Promise<IntentRecord> {
    if (!EXPIRABLE_STATUSES.has(cur.status)) return cur;
    const expiresAt = this.expiresAt(cur);
    if (!isExpired(expiresAt, this.#core.now())) return cur;
    const landing = await this.#payloadMayLand(cur).catch(() => 'the ledger cannot say whether its signed payload is dead');
    if (landing !== null) {
      this.#core.log({ event: 'expiry_deferred', reason: 'payload_may_land' });
      return cur;
    }
    const next = transition(cur, 'expired', this.#core.now(), { expires_at: expiresAt });
    // The clock expired it, whoever's read or sweep noticed.
    const receipt = withActor(SYSTEM_ACTOR, () => this.#core.writer.receipt('intent.expired', { expires_at: expiresAt, intentId: cur.intentId }, cur.intentId));
    await this.#core.writer.commit(cur, next, receipt);
    return next;
  }

  /** The intent `id` expired if due (taking its lock), else as stored. */
  async expire(id: string): Promise<IntentRecord> {
    return this.#core.intentLocks.run(id, () => this.expireIfDue(this.#core.writer.get(id)));
  }

  /**
   * POST /intent/{id}/cancel. Who cancels is established before anything is read under the lock
   * or written: the operator (the session), or the initiator that created the intent proving it
   * with a cancel statement signed by its paired device key. Idempotent: a cancelled intent answers
   * its cancellation (and the signers are told again).
   */
  async cancel(id: string, body: CancelRequest): Promise<CancelResult> {
    const initial = this.#core.writer.getForWrite(id);
    const by = formatIdentity(this.#authenticate(initial, body));
    const { record, head } = await this.#core.intentLocks.run(id, async () => {
      const cur = await this.expireIfDue(this.#core.writer.get(id));
      if (cur.status === 'cancelled') return { record: cur, head: this.#core.writer.head };
      if (!EXPIRABLE_STATUSES.has(cur.status)) {
        throw new RefusedError(
          cur.status === 'submitted' || cur.status === 'confirmed'
            ? `intent is ${cur.status}: its transaction went to the ledger; only an intent not yet submitted can be cancelled`
            : `intent is ${cur.status}, which is final`,
          { data: { reason: 'not_cancellable', status: cur.status } },
        );
      }
      let landing: string | null;
      try {
        landing = await this.#payloadMayLand(cur);
      } catch (e) {
        landing = `the ledger cannot say whether its signed payload is dead (${e instanceof VaultError ? e.shortMessage : 'fault'})`;
      }
      if (landing !== null) {
        throw new RefusedError(`intent cannot be cancelled: ${landing}; execute it to settle, or cancel once that payload is dead`, {
          data: { reason: 'payload_may_land', status: cur.status },
        });
      }
      const at = this.#core.now();
      const next = transition(cur, 'cancelled', at, { cancelled: { by, at }, expires_at: this.expiresAt(cur) });
      const receipt = this.#core.writer.receipt('intent.cancelled', { at, by, intentId: id }, id);
      await this.#core.writer.commit(cur, next, receipt);
      this.#core.log({ event: 'cancelled', by: by === 'operator' ? 'operator' : by.slice(0, by.indexOf(':')) });
      return { record: next, head: receipt.hash };
    });
    this.#restrictions.noteCancelled(id, this.expiresAt(record));
    // Committed: every signer learns it now; one that misses it learns it before it is next asked to sign.
    const signers = await this.#restrictions.pushRestrictions();
    const cancelled = record.cancelled as { by: string; at: number };
    return { intentId: id, status: 'cancelled', by: cancelled.by, cancelled_at: cancelled.at, receipt_head: head, signers };
  }

  /**
   * Who is cancelling: the operator (no statement, or `by: "operator"` with nothing else), or the
   * intent's own initiator device with a valid statement. Refuses anyone else, naming why.
   */
  #authenticate(record: IntentRecord, body: CancelRequest): Identity {
    const by = body.by === undefined ? { kind: 'operator' as const } : (parseInitiator(body.by) as Identity);
    if (body.intentId !== undefined && body.intentId !== record.intentId) {
      throw new ValidationError('cancel', [{ path: 'intentId', message: `the statement cancels ${body.intentId}, not ${record.intentId}` }]);
    }
    if (by.kind === 'operator') {
      if (body.at !== undefined || body.signature !== undefined) {
        throw new ValidationError('cancel', [{ path: body.signature !== undefined ? 'signature' : 'at', message: 'the operator cancels with the session; a signed statement is for an initiator device' }]);
      }
      return by;
    }
    const initiator = parseInitiator(record.intent.initiator);
    if (initiator === null || !sameIdentity(initiator, by)) {
      throw new RefusedError(`${formatIdentity(by)} did not create this intent (${record.intent.initiator} did): only its initiator or the operator may cancel it`, {
        data: { reason: 'not_initiator' },
      });
    }
    if (by.kind === 'agent') {
      throw new RefusedError(`${formatIdentity(by)} holds no key this control plane knows, so it cannot prove who it is: the operator cancels for it`, {
        data: { reason: 'unauthenticated_initiator' },
      });
    }
    if (body.at === undefined || body.signature === undefined) {
      throw new ValidationError('cancel', [{ path: body.at === undefined ? 'at' : 'signature', message: `${formatIdentity(by)} cancels with a cancel statement signed by its device key (at and signature)` }]);
    }
    const device = this.#core.state.devices.find((d) => d.id === by.id);
    if (device === undefined) throw new RefusedError(`device ${by.id} is not paired`, { data: { reason: 'unknown_device' } });
    if (device.revoked_at !== null) throw new RefusedError(`device ${by.id} was revoked`, { data: { reason: 'device_revoked' } });
    const check = verifyCancel({ by: body.by as string, at: body.at, signature: body.signature, intentId: body.intentId }, device.public_key, { intentId: record.intentId, now: this.#core.now() });
    if (!check.ok) throw new RefusedError(`cancel statement refused: ${check.message}`, { data: { reason: check.reason } });
    return by;
  }

  /**
   * Why a payload signed for the intent may still land, or null when none can: no payload was put
   * to the signers, or the last one is dead on the ledger. Throws when the ledger cannot answer.
   */
  async #payloadMayLand(record: IntentRecord): Promise<string | null> {
    const built = record.attempt?.built;
    if (built === undefined) {
      // A failed intent written before failures kept their payload: its last payload is unknown.
      return record.status === 'failed' ? 'its last payload is not on record, so it cannot be shown dead' : null;
    }
    const wallet = this.#core.wallet(record.intent.wallet);
    const { fate, code } = await this.#core.driverFor(wallet).payloadFate({ chain: wallet.chain, built: { payload: built.payload, digest: built.digest, summary: built.summary } });
    return fate === 'dead' ? null : `payload ${built.digest} signed for it is ${fate} on the ledger (${code})`;
  }

  /**
   * Expires intents due, trying at most EXPIRY_SWEEP_BATCH a run (one whose payload may still land
   * is tried again a minute later). Runs one at a time; a run in progress is shared. Resolves with
   * how many it expired.
   */
  sweep(): Promise<number> {
    if (this.#sweeping !== null) return this.#sweeping;
    const run = this.#sweepOnce().finally(() => {
      if (this.#sweeping === run) this.#sweeping = null;
    });
    this.#sweeping = run;
    return run;
  }

  async #sweepOnce(): Promise<number> {
    let n = 0;
    let tried = 0;
    const now = this.#core.now();
    const due = this.#core.store.dueForExpiry(now, EXPIRY_SWEEP_SCAN);
    const scanned = new Set(due);
    for (const [id, at] of this.#deferred) if (at <= now || !scanned.has(id)) this.#deferred.delete(id);
    for (const id of due) {
      if (this.#core.closed || tried >= EXPIRY_SWEEP_BATCH) break;
      if (this.#deferred.has(id)) continue;
      tried += 1;
      const r = await this.expire(id).catch((e: unknown) => {
        this.#core.log({ event: 'expiry_failed', error: e instanceof VaultError ? e.shortMessage : 'fault' });
        return null;
      });
      if (r?.status === 'expired') n += 1;
      else this.#deferred.set(id, now + EXPIRY_RETRY_SECONDS);
    }
    if (n > 0) this.#core.log({ event: 'expired', intents: n });
    return n;
  }

  /** Starts the periodic sweep (every `ms`; 0 never). The timer does not keep the process alive. */
  start(ms: number): void {
    if (ms <= 0 || this.#timer !== null) return;
    this.#timer = setInterval(() => void this.sweep(), ms);
    this.#timer.unref();
  }

  /** Stops the sweep and waits for a run in progress. */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#sweeping;
  }
}
