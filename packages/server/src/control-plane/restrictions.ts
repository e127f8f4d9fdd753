/**
 * @module control-plane/restrictions
 * What every signer must hold before it is asked to sign: the restriction set derived from the
 * state file (a revoke_approver per revoked device) and from the store (a cancel_intent per
 * cancelled intent that has not expired yet), pushed to a signer whenever it has not acknowledged
 * the current set lately, and to every signer at once when a device is revoked or an intent
 * cancelled.
 */
import { InternalError, MAX_RESTRICTIONS_PER_SET, normalizeRestrictions, restrictionDigest, VaultError, type Restriction, type SignerClient } from '@vault/sdk';
import type { Core } from './core.js';
import { signerClient, signerServices } from './signers.js';
import type { StateFile } from './state.js';

/**
 * How long a signer's acknowledgement of the restriction set stands before the next sign request
 * to it pushes the set again (idempotent at the signer): a signer whose state was replaced, or
 * whose operator lifted a restriction this control plane still holds, gets it back within this.
 */
export const RESTRICTION_ACK_SECONDS = 60;

/**
 * How long past its expires_at a cancelled intent's restriction is still pushed: clock skew
 * between the services. After that a signer refuses the intent as expired on its own facts (taking
 * a cancel_intent on marks the intent seen, so its time to live runs from then at the latest), and
 * the set stays bounded by the cancellations of one time to live.
 */
export const CANCEL_PUSH_GRACE_SECONDS = 86_400;

export class Restrictions {
  readonly #core: Core;
  /** The set last derived, from which state object and cancellations (the state is replaced, never mutated). */
  #cached: { state: StateFile; version: number; until: number; set: Restriction[]; digest: string } | null = null;
  /** Cancelled intents still pushed -> when they expire; loaded from the store on first use. */
  #cancelled: Map<string, number> | null = null;
  #version = 0;
  /** Signer URL -> the restriction digest it last acknowledged, and when (in memory: a restart pushes again). */
  readonly #acks = new Map<string, { digest: string; at: number }>();
  /** Pushes in flight, by signer URL and digest: concurrent sign requests share one. */
  readonly #pushes = new Map<string, Promise<void>>();

  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * What every signer must hold before it is asked to sign: a revoke_approver per revoked device,
   * a cancel_intent per cancelled intent not expired (CANCEL_PUSH_GRACE_SECONDS). Derived from the
   * state file and the store, so a restart or a reload never loses one; the signers keep every
   * restriction they were given until their operator lifts it, so un-revoking here lifts nothing.
   */
  restrictions(): { set: Restriction[]; digest: string } {
    const now = this.#core.now();
    const c = this.#cached;
    if (c !== null && c.state === this.#core.state && c.version === this.#version && now < c.until) return c;
    const revoked = this.#core.state.devices.filter((d) => d.revoked_at !== null).map((d): Restriction => ({ restriction: 'revoke_approver', approver_id: d.id, public_key: d.public_key }));
    const cancelled = this.#cancellations(now);
    // Newest expiry first; a set past the wire limit keeps the revocations and the newest
    // cancellations (an older one is still refused by this control plane, which never asks).
    const room = Math.max(0, MAX_RESTRICTIONS_PER_SET - revoked.length);
    if (cancelled.length > room) this.#core.log({ event: 'cancellations_truncated', kept: room, of: cancelled.length });
    const kept = cancelled.slice(0, room);
    const set = normalizeRestrictions([...revoked, ...kept.map(([id]): Restriction => ({ restriction: 'cancel_intent', intent_id: id }))]);
    // Derived again once the soonest cancellation here drops out.
    const until = kept.reduce((m, [, exp]) => Math.min(m, exp + CANCEL_PUSH_GRACE_SECONDS), Number.POSITIVE_INFINITY);
    const next = { state: this.#core.state, version: this.#version, until, set, digest: restrictionDigest(set) };
    this.#cached = next;
    return next;
  }

  /** Records a cancellation just committed: the next set carries it. */
  noteCancelled(intentId: string, expiresAt: number): void {
    const known = this.#loaded(this.#core.now());
    if (known.get(intentId) === expiresAt) return;
    known.set(intentId, expiresAt);
    this.#version += 1;
  }

  /** The cancellations still pushed at `now` (loaded from the store on first use), lapsed ones dropped. */
  #loaded(now: number): Map<string, number> {
    const since = now - CANCEL_PUSH_GRACE_SECONDS;
    this.#cancelled ??= new Map(this.#core.store.cancelledSince(since, MAX_RESTRICTIONS_PER_SET).map((c) => [c.intentId, c.expires_at]));
    for (const [id, exp] of this.#cancelled) if (exp < since) this.#cancelled.delete(id);
    return this.#cancelled;
  }

  /** The cancellations still pushed at `now`, newest expiry first. */
  #cancellations(now: number): [string, number][] {
    return [...this.#loaded(now)].sort((a, b) => b[1] - a[1]);
  }

  /**
   * Makes sure the signer at `url` (`name` in the log) has acknowledged the current restriction
   * set, pushing it when it has not (or not within RESTRICTION_ACK_SECONDS). Throws when the
   * signer does not acknowledge it: the caller then treats the signer as unreachable.
   */
  async restrictSigner(url: string, name: string, client: SignerClient): Promise<void> {
    const { set, digest } = this.restrictions();
    if (set.length === 0) return;
    const ack = this.#acks.get(url);
    if (ack !== undefined && ack.digest === digest && this.#core.now() - ack.at < RESTRICTION_ACK_SECONDS) return;
    const key = `${digest} ${url}`;
    let push = this.#pushes.get(key);
    if (push === undefined) {
      push = (async () => {
        try {
          const res = await client.restrict(set);
          if (res.received !== digest) throw new InternalError(`the signer acknowledged restriction set ${res.received}, not ${digest}`);
          this.#acks.set(url, { digest, at: this.#core.now() });
          this.#core.log({ event: 'restrictions_acknowledged', signer: name, digest, count: res.count });
        } catch (e) {
          this.#core.log({ event: 'restrictions_not_acknowledged', signer: name, digest, error: e instanceof Error ? e.name : 'unknown' });
          throw new InternalError(`restrictions not acknowledged: ${e instanceof VaultError ? e.shortMessage : 'fault'}`, { cause: e });
        }
      })().finally(() => this.#pushes.delete(key));
      this.#pushes.set(key, push);
    }
    await push;
  }

  /** Pushes the restriction set to every configured signer service (each URL once), now. */
  async pushRestrictions(): Promise<{ signer: string; ok: boolean; detail: string }[]> {
    const { digest } = this.restrictions();
    return Promise.all(
      signerServices(this.#core.state.signers, Object.keys(this.#core.state.signers)).map(async ({ name, endpoint }) => {
        const s = signerClient(endpoint, this.#core.signerTimeoutMs);
        if (!s.client) return { signer: name, ok: false, detail: s.detail };
        try {
          await this.restrictSigner(endpoint.url, name, s.client);
          return { signer: name, ok: true, detail: `restrictions ${digest} acknowledged` };
        } catch (e) {
          const msg = e instanceof VaultError ? e.shortMessage : 'fault';
          return { signer: name, ok: false, detail: `${msg}; pushed again before it is next asked to sign`.replaceAll(s.token, '[redacted]') };
        }
      }),
    );
  }

  /** Forgets the signer at `url`'s acknowledgement (it may have restarted on another state): the next request pushes again. */
  forget(url: string): void {
    this.#acks.delete(url);
  }
}
