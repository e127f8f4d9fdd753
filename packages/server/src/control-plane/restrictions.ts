/**
 * @module control-plane/restrictions
 * What every signer must hold before it is asked to sign: the restriction set derived from the
 * state file (a revoke_approver per revoked device), pushed to a signer whenever it has not
 * acknowledged the current set lately, and to every signer at once when a device is revoked.
 */
import { InternalError, normalizeRestrictions, restrictionDigest, VaultError, type Restriction, type SignerClient } from '@vault/sdk';
import type { Core } from './core.js';
import { signerClient, signerServices } from './signers.js';
import type { StateFile } from './state.js';

/**
 * How long a signer's acknowledgement of the restriction set stands before the next sign request
 * to it pushes the set again (idempotent at the signer): a signer whose state was replaced, or
 * whose operator lifted a restriction this control plane still holds, gets it back within this.
 */
export const RESTRICTION_ACK_SECONDS = 60;

export class Restrictions {
  readonly #core: Core;
  /** State object -> the restriction set derived from it (the state is replaced, never mutated). */
  readonly #sets = new WeakMap<StateFile, { set: Restriction[]; digest: string }>();
  /** Signer URL -> the restriction digest it last acknowledged, and when (in memory: a restart pushes again). */
  readonly #acks = new Map<string, { digest: string; at: number }>();
  /** Pushes in flight, by signer URL and digest: concurrent sign requests share one. */
  readonly #pushes = new Map<string, Promise<void>>();

  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * What every signer must hold before it is asked to sign: a revoke_approver per revoked device.
   * Derived from the state file, so a restart or a reload never loses one; the signers keep every
   * restriction they were given until their operator lifts it, so un-revoking here lifts nothing.
   */
  restrictions(): { set: Restriction[]; digest: string } {
    let r = this.#sets.get(this.#core.state);
    if (r === undefined) {
      const set = normalizeRestrictions(
        this.#core.state.devices.filter((d) => d.revoked_at !== null).map((d): Restriction => ({ restriction: 'revoke_approver', approver_id: d.id, public_key: d.public_key })),
      );
      r = { set, digest: restrictionDigest(set) };
      this.#sets.set(this.#core.state, r);
    }
    return r;
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
