/**
 * @module control-plane/webhooks/service
 * The operator's webhook endpoints: create (the secret is generated here and shown once), list
 * (never a secret), delete, the deliveries of one, and resend. Endpoints live in state.json (their
 * secrets sealed, secret-box.ts), each change under the state lock with its receipt, as pairing
 * and revocation are. Delivery itself is the dispatcher's.
 */
import { eventSeq, generateWebhookSecret, NotFoundError, sha256Hex, ValidationError } from '@vault/sdk';
import { randomBytes } from 'node:crypto';
import { STATE_FILE, type Core } from '../core.js';
import { assertNotGoverned } from '../governance.js';
import { encodeState } from '../state.js';
import type { WebhookEndpoint } from './config.js';
import { WebhookDispatcher, type DeliveryRecord, type DeliveryState, type RetrySchedule } from './dispatcher.js';
import type { DeliveryProgress, EventFeed } from './feed.js';
import { SecretBox, WEBHOOK_KEY_FILE } from './secret-box.js';
import { resolveChecked, systemResolver, type Resolver } from './send.js';

/** How long creation waits for the name to resolve before accepting it unchecked (delivery checks anyway). */
const CREATE_RESOLVE_MS = 5_000;

export interface WebhookOptions {
  /** The event log; without one, endpoints can be managed but there is nothing to deliver. */
  feed?: EventFeed | undefined;
  /** DNS for webhook hosts (tests); the system resolver by default. */
  resolve?: Resolver | undefined;
  retry?: Partial<RetrySchedule> | undefined;
  /** Delivery progress shared by the instances of one database (PostgreSQL); absent on LMDB alone. */
  progress?: DeliveryProgress | undefined;
}

export interface CreateWebhookRequest {
  url: string;
  types?: string[] | undefined;
  description?: string | undefined;
}

function origin(url: string): string {
  return new URL(url).origin;
}

/** An endpoint as GET /webhooks shows it: no secret, sealed or not. */
function publicEndpoint(e: WebhookEndpoint, counts: { pending: number; dead: number }): Record<string, unknown> {
  return { id: e.id, url: e.url, types: e.types, description: e.description, created_at: e.created_at, pending: counts.pending, dead_letters: counts.dead };
}

/** A delivery as GET /webhooks/{id}/deliveries shows it (the body is the event: not repeated). */
export function publicDelivery(r: DeliveryRecord): Record<string, unknown> {
  return {
    id: r.id,
    event_type: r.type,
    state: r.state,
    resend: r.resend,
    created_at: r.created_at,
    attempt_count: r.attempt_count,
    attempts: r.attempts,
    next_attempt_at: r.next_attempt_at,
    finished_at: r.finished_at,
  };
}

export class Webhooks {
  readonly #core: Core;
  readonly #feed: EventFeed | null;
  readonly #resolve: Resolver;
  #dispatcher: WebhookDispatcher;
  readonly #makeDispatcher: () => WebhookDispatcher;
  #box: SecretBox | null = null;

  constructor(core: Core, options: WebhookOptions = {}) {
    this.#core = core;
    this.#feed = options.feed ?? null;
    this.#resolve = options.resolve ?? systemResolver;
    this.#makeDispatcher = () =>
      new WebhookDispatcher({
        store: core.store,
        feed: this.#feed,
        config: () => core.state.webhooks,
        secret: (e) => this.#secret(e),
        now: core.now,
        log: (e) => core.log(e),
        resolve: this.#resolve,
        retry: options.retry,
        progress: options.progress,
      });
    this.#dispatcher = this.#makeDispatcher();
  }

  /**
   * Checks every endpoint's secret opens (a missing or replaced webhooks.key, or an edited sealed
   * secret, refuses the start rather than sending unsigned or wrongly signed deliveries).
   */
  checkSecrets(): void {
    this.#core.state.webhooks.endpoints.forEach((e, i) => {
      if (this.#secret(e) === null) {
        throw new ValidationError('state', [{ path: `webhooks.endpoints.${i}.secret`, message: `the sealed secret does not open with ${WEBHOOK_KEY_FILE}` }]);
      }
    });
  }

  /** Delivery as it runs now (replaced when a writer that lost its lease becomes the writer again). */
  get dispatcher(): WebhookDispatcher {
    return this.#dispatcher;
  }

  start(): void {
    // A lost lease closed the dispatcher; a new term as writer gets a fresh one, which reads the
    // shared progress again rather than trusting what this instance knew before.
    if (this.#core.closed) return;
    if (this.#dispatcher.closed) this.#dispatcher = this.#makeDispatcher();
    this.#dispatcher.start();
  }

  #secret(e: WebhookEndpoint): string | null {
    try {
      this.#box ??= SecretBox.open(this.#core.stateDir, false);
    } catch {
      return null;
    }
    return this.#box.open(e.secret, e.id);
  }

  #endpoint(id: string): WebhookEndpoint {
    const e = this.#core.state.webhooks.endpoints.find((x) => x.id === id);
    if (!e) throw new NotFoundError('webhook', id);
    return e;
  }

  /** POST /webhooks. The answer is the only place the secret ever appears. */
  /**
   * Refuses (400 naming `url`) a URL whose host resolves to an address delivery would refuse
   * (SSRF). Checked when an endpoint is asked for, for an early answer; delivery checks the
   * resolved address again on every attempt (the name may resolve elsewhere by then).
   */
  async assertDeliverable(url: string, field = 'url'): Promise<void> {
    const cfg = this.#core.state.webhooks;
    const u = new URL(url);
    const checked = await Promise.race([
      resolveChecked(u.hostname, { policy: { allowPrivate: cfg.allow_private, allowNetworks: cfg.allow_networks }, resolve: this.#resolve }),
      new Promise<null>((r) => setTimeout(() => r(null), CREATE_RESOLVE_MS).unref()),
    ]);
    if (checked && 'error' in checked && checked.error.startsWith('address_refused:')) {
      const cls = checked.error.slice('address_refused:'.length);
      throw new ValidationError(
        'webhook',
        [{ path: field, message: `url reaches a ${cls} address: refused (SSRF) unless state webhooks.allow_private or webhooks.allow_networks allows it` }],
        { data: { reason: 'address_refused', class: cls } },
      );
    }
  }

  /**
   * A new endpoint with a fresh secret sealed under the state directory's key, and the secret
   * itself (shown once, to whoever asked). Writes nothing: the caller puts it in the state it
   * writes, after the `webhook.created` receipt of `createdReceipt`. Call under the state lock.
   */
  newEndpoint(req: CreateWebhookRequest): { endpoint: WebhookEndpoint; secret: string } {
    const id = `wh_${randomBytes(12).toString('hex')}`;
    const secret = generateWebhookSecret();
    const box = (this.#box = SecretBox.open(this.#core.stateDir, true));
    const endpoint: WebhookEndpoint = {
      id,
      url: req.url,
      types: req.types ?? [],
      description: req.description ?? '',
      secret: box.seal(secret, id),
      created_at: this.#core.now(),
      start_seq: this.#feed ? this.#feed.head() : -1,
    };
    return { endpoint, secret };
  }

  /** The receipt of a new endpoint: where events go (the origin) and a digest of the URL (a path may carry a receiver's own token). */
  createdReceipt(endpoint: WebhookEndpoint) {
    return this.#core.writer.draftReceipt('webhook.created', { id: endpoint.id, origin: origin(endpoint.url), url_digest: sha256Hex(endpoint.url), types: endpoint.types });
  }

  /** Wakes delivery up after endpoints were added. */
  added(ids: readonly string[]): void {
    for (const id of ids) this.#core.log({ event: 'webhook_created', id });
    if (ids.length > 0) this.dispatcher.kick();
  }

  async create(req: CreateWebhookRequest): Promise<Record<string, unknown>> {
    this.#core.writer.assertWritable();
    assertNotGoverned(this.#core, 'POST /webhooks', 'a set_webhook op');
    await this.assertDeliverable(req.url);
    return this.#core.stateLock.run(STATE_FILE, async () => {
      // Again under the lock: governance may have been set up (a reload) while the URL was checked.
      assertNotGoverned(this.#core, 'POST /webhooks', 'a set_webhook op');
      const state = this.#core.state;
      const { endpoint, secret } = this.newEndpoint(req);
      // Built and checked before anything is written (see devices.ts).
      const next = encodeState({ ...state, webhooks: { ...state.webhooks, endpoints: [...state.webhooks.endpoints, endpoint] } });
      // Crash order as for pairing: the receipt, then the state (a crash between leaves a receipt
      // for an endpoint that never existed; its creator got no secret).
      await this.#core.writer.appendReceipt(this.createdReceipt(endpoint));
      // Awaited: on PostgreSQL the answer waits until standbys can have the endpoint too.
      await this.#core.writeState(next);
      this.added([endpoint.id]);
      return { ...publicEndpoint(endpoint, { pending: 0, dead: 0 }), secret };
    });
  }

  /** GET /webhooks. */
  async list(): Promise<Record<string, unknown>[]> {
    await this.dispatcher.settled();
    return this.#core.state.webhooks.endpoints.map((e) => publicEndpoint(e, this.dispatcher.counts(e.id)));
  }

  /** DELETE /webhooks/{id}: out of the state first (no further delivery), then its receipt, then its records. */
  async remove(id: string): Promise<Record<string, unknown>> {
    this.#core.writer.assertWritable();
    await this.#core.stateLock.run(STATE_FILE, async () => {
      assertNotGoverned(this.#core, 'DELETE /webhooks/{id}', 'a remove_webhook op');
      const state = this.#core.state;
      this.#endpoint(id);
      const next = encodeState({ ...state, webhooks: { ...state.webhooks, endpoints: state.webhooks.endpoints.filter((e) => e.id !== id) } });
      const receipt = this.#core.writer.draftReceipt('webhook.deleted', { id });
      // As for revocation: the state, then the receipt (a crash between leaves it removed without
      // its receipt, never a receipt for an endpoint still receiving).
      await this.#core.writeState(next, receipt);
      this.#core.log({ event: 'webhook_deleted', id });
    });
    await this.dispatcher.purge(id);
    return { id, deleted: true };
  }

  /** After a change set removed endpoints (already out of the state): their delivery records go, as DELETE's do. */
  async removed(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      this.#core.log({ event: 'webhook_deleted', id });
      await this.dispatcher.purge(id);
    }
  }

  /** GET /webhooks/{id}/deliveries: newest first. */
  async deliveries(id: string, limit: number, state?: DeliveryState): Promise<Record<string, unknown>> {
    this.#endpoint(id);
    await this.dispatcher.settled();
    return { webhook: id, deliveries: this.dispatcher.deliveries(id, limit, state).map(publicDelivery) };
  }

  /** POST /webhooks/{id}/deliveries/{delivery}/resend. */
  async resend(id: string, delivery: string): Promise<Record<string, unknown>> {
    // Only the writer delivers: a standby says where to send this (503 not_writer) rather than queue it.
    this.#core.store.assertWriter();
    const e = this.#endpoint(id);
    const r = await this.dispatcher.resend(e, eventSeq(delivery));
    if (!r) throw new NotFoundError('delivery', delivery);
    this.#core.log({ event: 'webhook_resend', id, delivery });
    return publicDelivery(r);
  }

  kick(): void {
    this.dispatcher.kick();
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
