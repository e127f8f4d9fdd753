/**
 * @module control-plane/app
 * The control plane's HTTP routes (interface.md "Control plane") over the shared edge: loopback
 * Host check, body limits, bodies validated against the SDK schemas, errors mapped in one place.
 * Routes only do I/O and auth; the work is in ControlPlane.
 */
import { IntentIdSchema, PairCreateRequestSchema, SignedApprovalSchema, ValidationError, VaultError, labelString, parseWith, type IntentRequest } from '@vault/sdk';
import type { Context } from 'hono';
import type { Hono } from 'hono';
import QRCode from 'qrcode';
import { z } from 'zod';
import { createServiceApp, errorResponse, readJson } from '../http/app.js';
import { bearerToken } from '../http/auth.js';
import { allow, principalOf, type RouteKey } from './access.js';
import { forbidden } from './device-auth.js';
import { DeviceChallengeRequestSchema, DeviceSessionRequestSchema, openApiDocument, SnapshotRequestSchema, UnlockRequestSchema } from './openapi.js';
import { publicIntent, type ControlPlane } from './service.js';

export const INTENT_BODY_LIMIT = 320 * 1024;
export const SMALL_BODY_LIMIT = 16 * 1024;

const ClaimSchema = z.looseObject({
  code: z.string().min(1).max(64),
  public_key: z.string().regex(/^[0-9a-f]{64}$/, 'public_key must be 32 bytes as 64 lowercase hex digits'),
  signature: z.string().regex(/^[0-9a-f]{128}$/, 'signature must be 64 bytes as 128 lowercase hex digits'),
  label: labelString(128),
});

/** Light modules around the pairing QR code: the quiet zone ISO/IEC 18004 asks for. */
const QR_QUIET_ZONE = 4;
/** The pairing QR code is at least this wide (CSS px): a phone camera reads it off a laptop screen. */
const QR_MIN_WIDTH_PX = 256;
const LimitSchema = z.string().regex(/^[0-9]{1,4}$/, 'limit must be an integer 1..1000').transform(Number).refine((n) => n >= 1 && n <= 1000, 'limit must be an integer 1..1000');
const WalletIdSchema = z.string().min(1).max(128);
const DeviceIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'device id: 1..128 of A-Z a-z 0-9 . _ : -');


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
    .replace(/^\/policy\/.+$/, '/policy/{wallet}')
    .slice(0, 64);
}

export interface ControlPlaneAppOptions {
  /** Per-request access log (method, route template, status, ms). Off when absent. */
  accessLog?: boolean;
}

export function createControlPlaneApp(cp: ControlPlane, options: ControlPlaneAppOptions = {}): Hono {
  const app = createServiceApp({ extraHosts: () => cp.state.extra_hosts });

  if (options.accessLog) {
    app.use('*', async (c, next) => {
      const t0 = performance.now();
      await next();
      cp.log({ method: c.req.method, path: logPath(new URL(c.req.url).pathname), status: c.res.status, ms: Math.round((performance.now() - t0) * 10) / 10 });
    });
  }

  /** The table's check for `route` (access.ts): a live session whose principal may call it. */
  const allowTo = (route: RouteKey) => allow(cp.sessions, route);

  app.onError((err, c) => {
    if (!(err instanceof VaultError) || err.code === -32603) {
      cp.log({ event: 'fault', path: logPath(new URL(c.req.url).pathname), error: err instanceof Error ? err.name : 'unknown', message: err instanceof VaultError ? err.shortMessage : undefined });
    }
    return errorResponse(c, err);
  });

  // -------------------------------------------------------------- no session
  app.get('/health', (c) => c.json(cp.health()));
  app.get('/openapi.json', (c) => c.json(openApiDocument()));

  app.post('/session/unlock', async (c) => {
    const body = await readJson(c, UnlockRequestSchema, 'unlock', SMALL_BODY_LIMIT);
    return c.json(await cp.unlock(body.passphrase, c.req.raw.signal));
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
  app.get('/assets', allowTo('GET /assets'), (c) => c.json({ assets: cp.state.assets.assets, reserved: cp.state.assets.reserved }));

  app.post('/intent', allowTo('POST /intent'), async (c) => {
    // Validated once, by normalizeIntent inside createIntent (same schema, same `intent.<field>` errors).
    let req = await readJson(c, z.unknown(), 'intent', INTENT_BODY_LIMIT);
    const who = principalOf(c);
    if (who.kind === 'device') {
      // A device initiates as itself: its identity is what the session proved, never what the body says.
      const self = `device:${who.id}`;
      const body = (typeof req === 'object' && req !== null && !Array.isArray(req) ? req : {}) as Record<string, unknown>;
      if (body['initiator'] !== undefined && body['initiator'] !== self) throw forbidden(`a device session creates intents as ${self} only`);
      req = { ...body, initiator: self };
    }
    const r = await cp.createIntent(req as IntentRequest);
    return c.json({ intentId: r.intentId, status: r.status, decision: r.decision, receipt_head: r.receipt_head });
  });

  app.get('/intents', allowTo('GET /intents'), (c) => {
    const q = c.req.query('limit');
    const limit = q === undefined ? 100 : Math.min(100, parseWith(LimitSchema, q, 'limit'));
    return c.json(cp.listIntents(limit));
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
    return c.json(publicIntent(await cp.refresh(id)));
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
  app.post('/intent/:id/execute', allowTo('POST /intent/{id}/execute'), async (c) => c.json(await cp.execute(param(c, 'id', IntentIdSchema))));

  app.get('/estate', allowTo('GET /estate'), async (c) => c.json(await cp.estate()));
  app.get('/wallets/:id/reconcile', allowTo('GET /wallets/{id}/reconcile'), async (c) => c.json(await cp.reconcile(param(c, 'id', WalletIdSchema))));
  app.get('/ledger/verify', allowTo('GET /ledger/verify'), (c) => c.json(cp.verifyLedger()));
  app.get('/ledger/recent', allowTo('GET /ledger/recent'), (c) => {
    const q = c.req.query('limit');
    const limit = q === undefined ? 50 : parseWith(LimitSchema, q, 'limit');
    return c.json({ head: cp.head, receipts: cp.store.recentReceipts(limit) });
  });
  app.post('/admin/reload', allowTo('POST /admin/reload'), async (c) => c.json(await cp.reload()));

  app.post('/snapshot', allowTo('POST /snapshot'), async (c) => {
    const hasBody = (c.req.header('content-length') ?? '0') !== '0' || c.req.header('transfer-encoding') !== undefined;
    const body = hasBody ? await readJson(c, SnapshotRequestSchema, 'snapshot', SMALL_BODY_LIMIT) : {};
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

  return app;
}
