/**
 * @module control-plane/app
 * The control plane's HTTP routes (interface.md "Control plane") over the shared edge: loopback
 * Host check, body limits, bodies validated against the SDK schemas, errors mapped in one place.
 * Routes only do I/O and auth; the work is in ControlPlane.
 */
import {
  CancelRequestSchema,
  EVENT_TYPES,
  EventIdSchema,
  eventId,
  eventSeq,
  IntentIdSchema,
  IntentStatusSchema,
  PairCreateRequestSchema,
  PasskeyRegistrationSchema,
  SignedApprovalSchema,
  ValidationError,
  VaultError,
  labelString,
  parseWith,
  type EventFilter,
  type ExecuteOutcome,
  type IntentRequest,
  type VaultEvent,
} from '@vault/sdk';
import type { Context } from 'hono';
import type { Hono } from 'hono';
import QRCode from 'qrcode';
import { z } from 'zod';
import { createServiceApp, errorResponse, readJson } from '../http/app.js';
import { bearerToken } from '../http/auth.js';
import { httpMetrics, metricsHandler, readyResponse } from '../http/metrics.js';
import { allow, principalOf, type RouteKey } from './access.js';
import { actorOf } from './actor.js';
import { forbidden } from './device-auth.js';
import { eventStream } from './event-stream.js';
import { controlPlaneMetrics, controlPlaneReadiness } from './metrics.js';
import {
  ApiKeyIdSchema,
  ChangeIdSchema,
  CreateApiKeyRequestSchema,
  CreateOperatorRequestSchema,
  CreateWebhookRequestSchema,
  DeviceChallengeRequestSchema,
  DeviceIdSchema,
  DeviceSessionRequestSchema,
  OperatorNameSchema,
  openApiDocument,
  SimulatePolicyRequestSchema,
  SnapshotRequestSchema,
  UnlockRequestSchema,
} from './openapi.js';
import { publicIntent, type ControlPlane } from './service.js';
import { WebhookIdSchema } from './webhooks/config.js';
import { defaultWebRoot, serveWebApp } from './web.js';

export const INTENT_BODY_LIMIT = 320 * 1024;
export const SMALL_BODY_LIMIT = 16 * 1024;
/** A proposed policy: as large as the state file lets a policy grow in practice (approver lists). */
export const POLICY_BODY_LIMIT = 256 * 1024;
/** Largest POST /changes body: a change set may carry up to 256 policies. */
export const CHANGE_BODY_LIMIT = 1024 * 1024;

const ClaimSchema = z.looseObject({
  code: z.string().min(1).max(64),
  public_key: z.string().regex(/^[0-9a-f]{64}$/, 'public_key must be 32 bytes as 64 lowercase hex digits'),
  signature: z.string().regex(/^[0-9a-f]{128}$/, 'signature must be 64 bytes as 128 lowercase hex digits'),
  label: labelString(128),
  passkey: PasskeyRegistrationSchema.optional(),
});

/** Light modules around the pairing QR code: the quiet zone ISO/IEC 18004 asks for. */
const QR_QUIET_ZONE = 4;
/** The pairing QR code is at least this wide (CSS px): a phone camera reads it off a laptop screen. */
const QR_MIN_WIDTH_PX = 256;
const LimitSchema = z.string().regex(/^[0-9]{1,4}$/, 'limit must be an integer 1..1000').transform(Number).refine((n) => n >= 1 && n <= 1000, 'limit must be an integer 1..1000');
const WalletIdSchema = z.string().min(1).max(128);
const DeliveryStateSchema = z.enum(['pending', 'delivered', 'dead']);

/** GET /events: page size when none is asked for, and the most one page holds. */
export const EVENTS_PAGE_DEFAULT = 100;
export const EVENTS_PAGE_MAX = 1000;
/** Events one page may look at through a filter before it answers (with has_more). */
const EVENTS_SCAN_MAX = 10 * EVENTS_PAGE_MAX;
const EventTypesSchema = z
  .string()
  .max(2048)
  .transform((s) => s.split(','))
  .pipe(z.array(z.enum(Object.keys(EVENT_TYPES) as [string, ...string[]], 'unknown event type')).min(1).max(32));

/** The filters and cursor GET /events and the stream share; each bad value is a 400 naming it. */
function eventQuery(c: Context): { after: number; filter: EventFilter } {
  const q = (name: string) => {
    const v = c.req.query(name);
    return v === undefined || v === '' ? undefined : v;
  };
  const after = q('after');
  const types = q('types');
  const wallet = q('wallet');
  const intent = q('intent');
  const filter: EventFilter = {};
  if (types !== undefined) filter.types = parseWith(EventTypesSchema, types, 'types');
  if (wallet !== undefined) filter.wallet = parseWith(WalletIdSchema, wallet, 'wallet');
  if (intent !== undefined) filter.intent = parseWith(IntentIdSchema, intent, 'intent');
  return { after: after === undefined ? 0 : eventSeq(parseWith(EventIdSchema, after, 'after')), filter };
}

/** Whether the request carries a body (routes whose body is optional). */
function hasBody(c: Context): boolean {
  return (c.req.header('content-length') ?? '0') !== '0' || c.req.header('transfer-encoding') !== undefined;
}

function param<S extends z.ZodType>(c: Context, name: string, schema: S): z.infer<S> {
  return parseWith(schema, c.req.param(name), name);
}

/** Route templates for logs: path parameters (ids, pairing codes) never reach a log line. */
export function logPath(path: string): string {
  return path
    .replace(/^\/intent\/[^/]+/, '/intent/{id}')
    .replace(/^\/pair\/qr\/.+$/, '/pair/qr/{code}')
    .replace(/^\/devices\/[^/]+/, '/devices/{id}')
    .replace(/^\/wallets\/[^/]+\/reconcile$/, '/wallets/{id}/reconcile')
    .replace(/^\/policy\/[^/]+\/simulate$/, '/policy/{wallet}/simulate')
    .replace(/^\/policy\/.+$/, '/policy/{wallet}')
    .replace(/^\/webhooks\/[^/]+\/deliveries\/[^/]+/, '/webhooks/{id}/deliveries/{delivery}')
    .replace(/^\/webhooks\/[^/]+/, '/webhooks/{id}')
    .replace(/^\/operators\/[^/]+/, '/operators/{name}')
    .replace(/^\/api-keys\/[^/]+/, '/api-keys/{id}')
    .slice(0, 64);
}

export interface ControlPlaneAppOptions {
  /** Per-request access log (method, route template, status, ms). Off when absent. */
  accessLog?: boolean;
  /** When set, GET /metrics wants it as a bearer token (VAULT_METRICS_TOKEN); absent, /metrics is open (loopback). */
  metricsToken?: string;
  /** Where the built browser apps are (`dist/web/`); default: found beside this module. */
  webRoot?: string | null;
}

export function createControlPlaneApp(cp: ControlPlane, options: ControlPlaneAppOptions = {}): Hono {
  const app = createServiceApp({ extraHosts: () => cp.state.extra_hosts });
  const metrics = controlPlaneMetrics(cp);
  app.use('*', httpMetrics(metrics.http));

  if (options.accessLog) {
    app.use('*', async (c, next) => {
      const t0 = performance.now();
      await next();
      cp.log({ method: c.req.method, path: logPath(new URL(c.req.url).pathname), status: c.res.status, ms: Math.round((performance.now() - t0) * 10) / 10 });
    });
  }

  /** The table's check for `route` (access.ts): a live session or API key whose principal may call it. */
  const allowTo = (route: RouteKey) => allow((token) => cp.authenticate(token), route);

  app.onError((err, c) => {
    if (!(err instanceof VaultError) || err.code === -32603) {
      cp.log({ event: 'fault', path: logPath(new URL(c.req.url).pathname), error: err instanceof Error ? err.name : 'unknown', message: err instanceof VaultError ? err.shortMessage : undefined });
    }
    return errorResponse(c, err);
  });

  // -------------------------------------------------------------- no session
  app.get('/health', (c) => c.json(cp.health()));
  app.get('/openapi.json', (c) => c.json(openApiDocument()));
  app.get('/ready', (c) => readyResponse(c, 'vault-control-plane', controlPlaneReadiness(cp, c.req.query('role') === 'writer')));
  app.get('/metrics', metricsHandler(metrics.registry, options.metricsToken));
  // The browser apps: static files, no session; the console (/app/console/) unlocks with a
  // passphrase, the approver app (/app/) signs in as its device. The console first: /app/{file}
  // would take its paths otherwise.
  const webRoot = options.webRoot === undefined ? defaultWebRoot() : options.webRoot;
  serveWebApp(app, 'console', webRoot, '/app/console');
  serveWebApp(app, 'app', webRoot);

  app.post('/session/unlock', async (c) => {
    const body = await readJson(c, UnlockRequestSchema, 'unlock', SMALL_BODY_LIMIT);
    return c.json(await cp.unlock(body.passphrase, c.req.raw.signal, body.name));
  });

  app.get('/pair/qr/:code', async (c) => {
    const code = c.req.param('code');
    if (code.length > 64) throw new ValidationError('code', [{ path: '', message: 'pairing code too long' }]);
    const origin = new URL(c.req.url).origin;
    const payload = cp.pairPayload(code, origin);
    // Sized (an SVG without width/height renders at its viewBox, 53 px here: too small for a phone
    // camera) at a whole number of pixels per module, so modules stay crisp; with the 4-module quiet
    // zone ISO/IEC 18004 asks for (a 2-module one makes some scanners miss the code).
    const modules = QRCode.create(payload, { errorCorrectionLevel: 'M' }).modules.size + 2 * QR_QUIET_ZONE;
    const svg = await QRCode.toString(payload, { type: 'svg', errorCorrectionLevel: 'M', margin: QR_QUIET_ZONE, width: modules * Math.max(1, Math.ceil(QR_MIN_WIDTH_PX / modules)) });
    return c.body(svg, 200, { 'content-type': 'image/svg+xml; charset=utf-8', 'cache-control': 'no-store' });
  });

  app.post('/pair/claim', async (c) => {
    const body = await readJson(c, ClaimSchema, 'claim', SMALL_BODY_LIMIT);
    return c.json(await cp.pairClaim(body));
  });

  // A paired device signs in with its own key (device-auth.ts).
  app.post('/device/challenge', async (c) => {
    const body = await readJson(c, DeviceChallengeRequestSchema, 'device', SMALL_BODY_LIMIT);
    return c.json(cp.deviceAuth.challenge(body.device_id));
  });
  app.post('/device/session', async (c) => {
    const body = await readJson(c, DeviceSessionRequestSchema, 'device', SMALL_BODY_LIMIT);
    return c.json(cp.deviceAuth.session(body));
  });

  // -------------------------------------------------------------- session
  app.post('/session/lock', allowTo('POST /session/lock'), (c) => {
    const token = bearerToken(c.req.header('authorization'));
    if (token) cp.sessions.revoke(token);
    return c.json({ locked: true });
  });

  app.get('/wallets', allowTo('GET /wallets'), (c) => c.json(cp.walletsView()));
  app.get('/policy/:wallet', allowTo('GET /policy/{wallet}'), (c) => c.json(cp.policy(param(c, 'wallet', WalletIdSchema))));
  app.post('/policy/:wallet/simulate', allowTo('POST /policy/{wallet}/simulate'), async (c) => {
    const wallet = param(c, 'wallet', WalletIdSchema);
    const body = await readJson(c, SimulatePolicyRequestSchema, 'simulate', POLICY_BODY_LIMIT);
    return c.json(cp.simulatePolicy(wallet, body.policy, body.limit));
  });
  app.get('/assets', allowTo('GET /assets'), (c) => c.json({ assets: cp.state.assets.assets, reserved: cp.state.assets.reserved }));

  app.post('/intent', allowTo('POST /intent'), async (c) => {
    // Validated once, by normalizeIntent inside createIntent (same schema, same `intent.<field>` errors).
    let req = await readJson(c, z.unknown(), 'intent', INTENT_BODY_LIMIT);
    const who = principalOf(c);
    if (who.kind === 'device' || who.kind === 'apikey') {
      // A device or a key initiates as itself: its identity is what it proved, never what the body says.
      const self = who.kind === 'device' ? `device:${who.id}` : who.bound_to;
      const body = (typeof req === 'object' && req !== null && !Array.isArray(req) ? req : {}) as Record<string, unknown>;
      if (body['initiator'] !== undefined && body['initiator'] !== self) throw forbidden(`a ${who.kind === 'device' ? 'device session' : 'API key'} creates intents as ${self} only`);
      // A non-string wallet is left to the intent schema (a 400 naming it); any named wallet must be in scope.
      if (who.kind === 'apikey' && who.wallets !== null && typeof body['wallet'] === 'string' && !who.wallets.includes(body['wallet'])) {
        throw forbidden(`API key ${who.id} may not create intents in wallet ${body['wallet'].slice(0, 128)}`);
      }
      req = { ...body, initiator: self };
    }
    const r = await cp.createIntent(req as IntentRequest);
    return c.json({ intentId: r.intentId, status: r.status, decision: r.decision, receipt_head: r.receipt_head });
  });

  app.get('/intents', allowTo('GET /intents'), (c) => {
    const q = c.req.query('limit');
    const limit = q === undefined ? 100 : Math.min(100, parseWith(LimitSchema, q, 'limit'));
    const wallet = c.req.query('wallet');
    const status = c.req.query('status');
    return c.json(
      cp.listIntents(limit, {
        ...(wallet ? { wallet: parseWith(WalletIdSchema, wallet, 'wallet') } : {}),
        ...(status ? { status: parseWith(IntentStatusSchema, status, 'status') } : {}),
      }),
    );
  });

  app.get('/device/intents', allowTo('GET /device/intents'), (c) => {
    const who = principalOf(c);
    if (who.kind !== 'device') throw forbidden('GET /device/intents is a device route');
    return c.json({ device: { id: who.id, role: who.role }, intents: cp.deviceIntents(who) });
  });

  app.get('/intent/:id', allowTo('GET /intent/{id}'), async (c) => {
    const id = param(c, 'id', IntentIdSchema);
    // Scoped before anything is read out (or written: refresh may re-evaluate and record).
    cp.assertCanSee(principalOf(c), cp.getIntent(id));
    const r = await cp.refresh(id);
    return c.json(publicIntent(r, cp.expiresAt(r)));
  });
  app.get('/intent/:id/protect', allowTo('GET /intent/{id}/protect'), async (c) => {
    const id = param(c, 'id', IntentIdSchema);
    cp.assertCanSee(principalOf(c), cp.getIntent(id));
    return c.json(await cp.protect(id));
  });

  app.post('/intent/:id/approve-signed', allowTo('POST /intent/{id}/approve-signed'), async (c) => {
    const id = param(c, 'id', IntentIdSchema);
    const approval = await readJson(c, SignedApprovalSchema, 'approval', SMALL_BODY_LIMIT);
    const who = principalOf(c);
    // A device posts its own approvals only (the operator relays any device's signed approval).
    if (who.kind === 'device' && approval.approver_id !== who.id) throw forbidden(`a device session posts approvals by ${who.id} only`);
    return c.json(await cp.approveSigned(id, approval));
  });
  app.post('/intent/:id/approve', allowTo('POST /intent/{id}/approve'), async (c) => c.json(await cp.approveUnsigned(param(c, 'id', IntentIdSchema))));
  app.post('/intent/:id/cancel', allowTo('POST /intent/{id}/cancel'), async (c) => {
    const id = param(c, 'id', IntentIdSchema);
    // The operator may send no body at all; an initiator device's signed statement is relayed.
    const body = hasBody(c) ? await readJson(c, CancelRequestSchema, 'cancel', SMALL_BODY_LIMIT) : {};
    return c.json(await cp.cancel(id, body));
  });
  app.post('/intent/:id/execute', allowTo('POST /intent/{id}/execute'), async (c) => {
    const id = param(c, 'id', IntentIdSchema);
    let outcome: ExecuteOutcome;
    try {
      outcome = await cp.execute(id);
    } catch (error) {
      metrics.execute({ error });
      throw error;
    }
    metrics.execute(outcome);
    return c.json(outcome);
  });

  app.get('/intent/:id/receipts', allowTo('GET /intent/{id}/receipts'), (c) => {
    const id = param(c, 'id', IntentIdSchema);
    cp.assertCanSee(principalOf(c), cp.getIntent(id));
    const q = c.req.query('limit');
    const limit = q === undefined ? 100 : parseWith(LimitSchema, q, 'limit');
    return c.json({ intentId: id, head: cp.head, receipts: cp.store.receiptsOf(id, limit) });
  });

  app.get('/estate', allowTo('GET /estate'), async (c) => c.json(await cp.estate()));
  app.get('/wallets/:id/reconcile', allowTo('GET /wallets/{id}/reconcile'), async (c) => c.json(await cp.reconcile(param(c, 'id', WalletIdSchema))));
  app.get('/ledger/verify', allowTo('GET /ledger/verify'), (c) => c.json(cp.verifyLedger()));
  app.get('/ledger/recent', allowTo('GET /ledger/recent'), (c) => {
    const q = c.req.query('limit');
    const limit = q === undefined ? 50 : parseWith(LimitSchema, q, 'limit');
    return c.json({ head: cp.head, receipts: cp.store.recentReceipts(limit) });
  });
  app.get('/events', allowTo('GET /events'), (c) => {
    const { after, filter } = eventQuery(c);
    const q = c.req.query('limit');
    const limit = q === undefined ? EVENTS_PAGE_DEFAULT : Math.min(EVENTS_PAGE_MAX, parseWith(LimitSchema, q, 'limit'));
    const page = cp.store.eventsPage(after, limit, filter, EVENTS_SCAN_MAX);
    return c.json({ events: page.events, next: eventId(page.next), has_more: page.next < cp.store.lastEventSeq });
  });

  /** An SSE stream of the event log for this request's session; `visible` narrows it (a device's scope). */
  const streamEvents = (c: Context, visible?: (e: VaultEvent) => boolean) => {
    const query = eventQuery(c);
    // A reconnecting client resumes after the last event it saw, whatever its URL says.
    const last = c.req.header('last-event-id');
    const after = last === undefined || last === '' ? query.after : eventSeq(parseWith(EventIdSchema, last, 'Last-Event-ID'));
    const token = c.get('token' as never) as string | null;
    const release = cp.openEventStream();
    const env = c.env as { incoming?: { socket?: { destroy(): void } }; outgoing?: { writableLength?: number } } | undefined;
    const body = eventStream(cp.store, {
      after,
      filter: query.filter,
      ...(visible ? { visible } : {}),
      ...cp.eventStreamOptions,
      writeBacklog: () => env?.outgoing?.writableLength ?? 0,
      // The stream lives as long as its session: locked, expired, or its device changed, it ends.
      stillAuthorized: () => (cp.authenticate(token), true),
      disconnect: (reason) => {
        cp.log({ event: 'event_stream_closed', reason });
        const socket = env?.incoming?.socket;
        socket?.destroy();
        return socket !== undefined;
      },
      onClose: release,
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } });
  };
  app.get('/events/stream', allowTo('GET /events/stream'), (c) => streamEvents(c));
  // A device's own stream: filtered here, on the server, to what that device may read.
  app.get('/device/events/stream', allowTo('GET /device/events/stream'), (c) => {
    const who = principalOf(c);
    if (who.kind !== 'device') throw forbidden('GET /device/events/stream is a device route');
    return streamEvents(c, (e) => cp.deviceMaySee(who, e));
  });

  app.post('/admin/reload', allowTo('POST /admin/reload'), async (c) => c.json(await cp.reload()));

  app.post('/snapshot', allowTo('POST /snapshot'), async (c) => {
    const body = hasBody(c) ? await readJson(c, SnapshotRequestSchema, 'snapshot', SMALL_BODY_LIMIT) : {};
    return c.json(cp.snapshot({ wallet: body.wallet }));
  });

  app.get('/recovery/status', allowTo('GET /recovery/status'), async (c) => c.json(await cp.recoveryStatus()));

  app.post('/pair/create', allowTo('POST /pair/create'), async (c) => {
    const body = await readJson(c, PairCreateRequestSchema, 'pairing', SMALL_BODY_LIMIT);
    const p = cp.pairCreate(body.role, body.label);
    return c.json({ ...p, qr: `/pair/qr/${p.code}` });
  });
  app.get('/devices', allowTo('GET /devices'), (c) => c.json({ devices: cp.devices() }));
  app.post('/devices/:id/revoke', allowTo('POST /devices/{id}/revoke'), async (c) => c.json(await cp.revokeDevice(param(c, 'id', DeviceIdSchema))));


  app.post('/operators', allowTo('POST /operators'), async (c) => {
    const body = await readJson(c, CreateOperatorRequestSchema, 'operator', SMALL_BODY_LIMIT);
    return c.json(await cp.identities.createOperator(body));
  });
  app.get('/operators', allowTo('GET /operators'), (c) => c.json({ operators: cp.identities.operators() }));
  app.post('/operators/:name/disable', allowTo('POST /operators/{name}/disable'), async (c) => c.json(await cp.identities.disableOperator(param(c, 'name', OperatorNameSchema))));
  app.post('/api-keys', allowTo('POST /api-keys'), async (c) => {
    const body = await readJson(c, CreateApiKeyRequestSchema, 'api_key', SMALL_BODY_LIMIT);
    return c.json(await cp.identities.createApiKey(body));
  });
  app.get('/api-keys', allowTo('GET /api-keys'), (c) => c.json({ api_keys: cp.identities.apiKeys() }));
  app.post('/api-keys/:id/revoke', allowTo('POST /api-keys/{id}/revoke'), async (c) => c.json(await cp.identities.revokeApiKey(param(c, 'id', ApiKeyIdSchema))));
  // Change sets (governance.ts): admin session; the admins' own signatures are what apply one.
  app.post('/changes', allowTo('POST /changes'), async (c) => {
    const body = await readJson(c, z.unknown(), 'change', CHANGE_BODY_LIMIT);
    const who = principalOf(c);
    const r = await cp.changes.propose(body, actorOf(who));
    return r.ok ? c.json(cp.changes.get(r.change.id), 201) : c.json(r.body, r.status);
  });
  app.get('/changes', allowTo('GET /changes'), (c) => c.json(cp.changes.list()));
  app.get('/changes/:id', allowTo('GET /changes/{id}'), (c) => c.json(cp.changes.get(param(c, 'id', ChangeIdSchema))));
  app.post('/changes/:id/approve', allowTo('POST /changes/{id}/approve'), async (c) => {
    const id = param(c, 'id', ChangeIdSchema);
    const body = await readJson(c, z.unknown(), 'approval', SMALL_BODY_LIMIT);
    return c.json(await cp.changes.approve(id, body));
  });
  app.post('/changes/:id/apply', allowTo('POST /changes/{id}/apply'), async (c) => c.json(await cp.changes.apply(param(c, 'id', ChangeIdSchema))));

  app.post('/webhooks', allowTo('POST /webhooks'), async (c) => {
    const body = await readJson(c, CreateWebhookRequestSchema, 'webhook', SMALL_BODY_LIMIT);
    return c.json(await cp.webhooks.create(body));
  });
  app.get('/webhooks', allowTo('GET /webhooks'), async (c) => c.json({ webhooks: await cp.webhooks.list() }));
  app.delete('/webhooks/:id', allowTo('DELETE /webhooks/{id}'), async (c) => c.json(await cp.webhooks.remove(param(c, 'id', WebhookIdSchema))));
  app.get('/webhooks/:id/deliveries', allowTo('GET /webhooks/{id}/deliveries'), async (c) => {
    const id = param(c, 'id', WebhookIdSchema);
    const q = c.req.query('limit');
    const limit = q === undefined ? 100 : parseWith(LimitSchema, q, 'limit');
    const st = c.req.query('state');
    return c.json(await cp.webhooks.deliveries(id, limit, st === undefined ? undefined : parseWith(DeliveryStateSchema, st, 'state')));
  });
  app.post('/webhooks/:id/deliveries/:delivery/resend', allowTo('POST /webhooks/{id}/deliveries/{delivery}/resend'), async (c) =>
    c.json(await cp.webhooks.resend(param(c, 'id', WebhookIdSchema), param(c, 'delivery', EventIdSchema))),
  );

  return app;
}
