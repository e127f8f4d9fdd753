/**
 * @module control-plane/webhooks/config
 * The `webhooks` section of state.json: the endpoints (their secrets sealed, see secret-box.ts) and
 * the delivery settings an operator may change (SSRF allowances, retry horizon, concurrency).
 */
import { EventTypeSchema } from '@vault/sdk';
import { z } from 'zod';
import { isNetwork } from './address.js';

export const WEBHOOK_ID_RE = /^wh_[0-9a-f]{24}$/;
export const WebhookIdSchema = z.string().regex(WEBHOOK_ID_RE, 'expected wh_ and 24 hex digits');

/** An event type, or a family of them (`intent.*`), or `*` for every type. */
export const EventTypeFilterSchema = z.union([EventTypeSchema, z.string().max(64).regex(/^([a-z][a-z_]*\.)*\*$/, 'expected an event type, a family (intent.*) or *')]);

/** `https://host[:port]/path[?query]`: http(s) only, no credentials, no fragment, bounded. */
export const WebhookUrlSchema = z
  .string()
  .max(2048, 'url: at most 2048 characters')
  .superRefine((text, ctx) => {
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'url is not a URL' });
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'url must be http(s)' });
    if (u.username !== '' || u.password !== '') ctx.addIssue({ code: 'custom', message: 'url must not carry credentials (the signature authenticates the sender)' });
    if (u.hash !== '' || text.includes('#')) ctx.addIssue({ code: 'custom', message: 'url must not have a fragment' });
    if (u.hostname === '') ctx.addIssue({ code: 'custom', message: 'url has no host' });
  });

/** One endpoint as stored. `secret` is sealed (never the secret itself). */
export const WebhookEndpointSchema = z.strictObject({
  id: WebhookIdSchema,
  url: WebhookUrlSchema,
  /** Empty: every type. */
  types: z.array(EventTypeFilterSchema).max(64).default([]),
  description: z.string().max(256).default(''),
  /** The secret sealed under the state directory's webhooks.key (secret-box.ts). */
  secret: z.string().regex(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{40,400}$/, 'expected a sealed secret (v1.<iv>.<ciphertext>)'),
  created_at: z.int().min(0),
  /** The event log position when it was created: delivery starts after it. */
  start_seq: z.int().min(-1),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

export const DEFAULT_RETRY_HORIZON_SECONDS = 24 * 60 * 60;

export const WebhooksConfigSchema = z.strictObject({
  endpoints: z.array(WebhookEndpointSchema).max(64).default([]),
  /**
   * Allow loopback, private (RFC 1918, fc00::/7), link-local, CGNAT and reserved targets. Off by
   * default (SSRF): turn on only for receivers on the operator's own network.
   */
  allow_private: z.boolean().default(false),
  /** CIDR ranges allowed besides public addresses, checked on the resolved address (`10.1.2.0/24`). */
  allow_networks: z
    .array(z.string().max(64).refine(isNetwork, 'expected a CIDR range (10.0.0.0/8, fd00::/8) or an address'))
    .max(64)
    .default([]),
  /** After this long since its first attempt, a failing delivery goes to the dead letters. */
  retry_horizon_seconds: z.int().min(60).max(30 * 24 * 60 * 60).default(DEFAULT_RETRY_HORIZON_SECONDS),
  /** One attempt's time limit: connect, send, and the response. */
  attempt_timeout_seconds: z.int().min(1).max(60).default(10),
  /** Attempts in flight at once, across all endpoints. */
  max_concurrency: z.int().min(1).max(256).default(16),
});
export type WebhooksConfig = z.infer<typeof WebhooksConfigSchema>;

/** Whether an endpoint's filter lets an event type through. */
export function typeMatches(filters: readonly string[], type: string): boolean {
  if (filters.length === 0) return true;
  return filters.some((f) => f === type || f === '*' || (f.endsWith('.*') && type.startsWith(f.slice(0, -1))));
}
