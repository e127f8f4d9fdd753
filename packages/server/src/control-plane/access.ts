/**
 * @module control-plane/access
 * Who may call what: one table from route to the principals allowed, enforced by one middleware on
 * every route that needs a session, and rendered into the README (a test keeps them equal). A
 * route not in the table needs no session; a principal not listed for a route gets 403 `forbidden`
 * before the handler runs. Scoping inside a route (a device sees only its own intents, approves
 * only as itself, an API key creates only as its binding and in its wallets) is the handler's,
 * with the principal the middleware put on the request, which also runs the handler as that
 * principal's actor (actor.ts) so every receipt it writes names who did it.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bearerToken } from '../http/auth.js';
import { actorOf, withActor } from './actor.js';
import { forbidden } from './device-auth.js';
import type { Principal } from './sessions.js';

/** A principal's column in the table. */
export type Role = 'admin' | 'operator' | 'auditor' | 'device:viewer' | 'device:approver' | 'device:initiator' | 'apikey';
export const ROLES: readonly Role[] = ['admin', 'operator', 'auditor', 'device:viewer', 'device:approver', 'device:initiator', 'apikey'];

export function roleOf(p: Principal): Role {
  switch (p.kind) {
    case 'operator':
      return p.role;
    case 'device':
      return `device:${p.role}`;
    case 'apikey':
      return 'apikey';
  }
}

/** Every role that holds a session (an API key has none: it may not lock or browse). */
const SESSIONS: readonly Role[] = ['admin', 'operator', 'auditor', 'device:viewer', 'device:approver', 'device:initiator'];
const READERS: readonly Role[] = ['admin', 'operator', 'auditor', 'device:viewer'];
const OPERATE: readonly Role[] = ['admin', 'operator'];
const ADMIN: readonly Role[] = ['admin'];
/** Lists of accounts and keys: the admin manages them, the auditor reads them. */
const ACCOUNT_READERS: readonly Role[] = ['admin', 'auditor'];

/**
 * Route -> roles allowed. `admin` manages (accounts, keys, devices, webhooks, reload) and does what
 * an `operator` does: create, approve, execute, cancel, read. An `auditor` only reads, receipts,
 * events and the ledger check included. The legacy passphrase is the first admin. Devices: a
 * viewer reads; an approver reads its queue and the intents its approvals count toward, and posts
 * its own signed approvals; an initiator creates intents as `device:<id>` and reads its own. An
 * `apikey` creates intents as its binding in its wallets, and reads those intents.
 */
export const ACCESS = {
  'POST /session/lock': SESSIONS,
  'GET /wallets': SESSIONS,
  'GET /policy/{wallet}': SESSIONS,
  // Read-only (nothing is written): whoever reads the intents and the policy may ask.
  'POST /policy/{wallet}/simulate': READERS,
  'GET /assets': SESSIONS,
  'POST /intent': ['admin', 'operator', 'device:initiator', 'apikey'],
  'GET /intents': READERS,
  'GET /device/intents': ['device:viewer', 'device:approver', 'device:initiator'],
  'GET /intent/{id}': [...SESSIONS, 'apikey'],
  'GET /intent/{id}/protect': ['admin', 'operator', 'auditor', 'device:viewer', 'device:approver'],
  'POST /intent/{id}/approve-signed': ['admin', 'operator', 'device:approver'],
  'POST /intent/{id}/approve': OPERATE,
  'POST /intent/{id}/cancel': OPERATE,
  'POST /intent/{id}/execute': OPERATE,
  'GET /events': READERS,
  'GET /events/stream': READERS,
  'GET /device/events/stream': ['device:viewer', 'device:approver', 'device:initiator'],
  'GET /estate': READERS,
  'GET /wallets/{id}/reconcile': READERS,
  'GET /ledger/verify': READERS,
  'GET /ledger/recent': READERS,
  'GET /intent/{id}/receipts': READERS,
  'POST /admin/reload': ADMIN,
  'POST /snapshot': ADMIN,
  'GET /recovery/status': READERS,
  'POST /pair/create': ADMIN,
  'GET /devices': READERS,
  'POST /devices/{id}/revoke': ADMIN,
  'POST /webhooks': ADMIN,
  'GET /webhooks': READERS,
  'DELETE /webhooks/{id}': ADMIN,
  'GET /webhooks/{id}/deliveries': READERS,
  'POST /webhooks/{id}/deliveries/{delivery}/resend': ADMIN,
  'POST /operators': ADMIN,
  'GET /operators': ACCOUNT_READERS,
  'POST /operators/{name}/disable': ADMIN,
  'POST /api-keys': ADMIN,
  'GET /api-keys': ACCOUNT_READERS,
  'POST /api-keys/{id}/revoke': ADMIN,
  'POST /changes': ADMIN,
  'GET /changes': ADMIN,
  'GET /changes/{id}': ADMIN,
  'POST /changes/{id}/approve': ADMIN,
  'POST /changes/{id}/apply': ADMIN,
} as const satisfies Record<string, readonly Role[]>;
export type RouteKey = keyof typeof ACCESS;

/**
 * Routes open without a session, each on purpose: probes (/health, /ready; /metrics may want its
 * own VAULT_METRICS_TOKEN), the API document, the browser apps' files, and the steps that lead to a session. A route in
 * neither list is a test failure (access.test.ts), so no route is public by omission.
 */
export const PUBLIC_ROUTES = [
  'GET /health',
  'GET /ready',
  'GET /metrics',
  'GET /openapi.json',
  'POST /session/unlock',
  'GET /pair/qr/{code}',
  'POST /pair/claim',
  'POST /device/challenge',
  'POST /device/session',
  // The browser apps' static files (web.ts): no data, only the built pages that then sign in.
  'GET /app',
  'GET /app/{file}{.*}',
  'GET /app/console',
  'GET /app/console/{file}{.*}',
] as const;

/** Whether `role` may call `route` (the table, nothing else). */
export function allowed(route: RouteKey, role: Role): boolean {
  return (ACCESS[route] as readonly Role[]).includes(role);
}

/** The principal a bearer token proves (a live session or an API key); throws SessionError (401) otherwise. */
export type Authenticate = (token: string | null) => Principal;

/**
 * The middleware of `route`: a principal the table allows, put on the request, and the handler
 * run as its actor.
 */
export function allow(authenticate: Authenticate, route: RouteKey): MiddlewareHandler {
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    const principal = authenticate(token);
    const role = roleOf(principal);
    if (!allowed(route, role)) throw forbidden(`${route} is not open to ${role}`);
    c.set('principal' as never, principal as never);
    // Long-lived routes (the event stream) check the session again while they run.
    c.set('token' as never, token as never);
    await withActor(actorOf(principal), next);
  };
}

/** The principal `allow` put on this request. */
export function principalOf(c: Context): Principal {
  return c.get('principal' as never) as Principal;
}

/** The table as the README shows it. */
export function accessTableMarkdown(): string {
  const head = `| route | ${ROLES.join(' | ')} |\n|---|${ROLES.map(() => ':-:').join('|')}|`;
  const rows = (Object.keys(ACCESS) as RouteKey[]).map((r) => `| \`${r}\` | ${ROLES.map((role) => (allowed(r, role) ? 'yes' : '')).join(' | ')} |`);
  return [head, ...rows].join('\n');
}
