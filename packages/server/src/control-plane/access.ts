/**
 * @module control-plane/access
 * Who may call what: one table from route to the principals allowed, enforced by one middleware on
 * every route that needs a session, and rendered into the README (a test keeps them equal). A
 * route not in the table needs no session; a principal not listed for a route gets 403 `forbidden`
 * before the handler runs. Scoping inside a route (a device sees only its own intents, approves
 * only as itself) is the handler's, with the principal the middleware put on the request.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bearerToken } from '../http/auth.js';
import { forbidden } from './device-auth.js';
import type { Principal, SessionStore } from './sessions.js';

/** A principal's column in the table. */
export type Role = 'admin' | 'device:viewer' | 'device:approver' | 'device:initiator';
export const ROLES: readonly Role[] = ['admin', 'device:viewer', 'device:approver', 'device:initiator'];

export function roleOf(p: Principal): Role {
  return p.kind === 'operator' ? 'admin' : `device:${p.role}`;
}

const ALL: readonly Role[] = ROLES;
const READERS: readonly Role[] = ['admin', 'device:viewer'];
const ADMIN: readonly Role[] = ['admin'];

/**
 * Route -> roles allowed. `admin` is the operator's passphrase session (the first admin). Devices:
 * a viewer reads; an approver reads its queue and the intents its approvals count toward, and
 * posts its own signed approvals; an initiator creates intents as `device:<id>` and reads its own.
 */
export const ACCESS = {
  'POST /session/lock': ALL,
  'GET /wallets': ALL,
  'GET /policy/{wallet}': ALL,
  'GET /assets': ALL,
  'POST /intent': ['admin', 'device:initiator'],
  'GET /intents': READERS,
  'GET /device/intents': ['device:viewer', 'device:approver', 'device:initiator'],
  'GET /intent/{id}': ALL,
  'GET /intent/{id}/protect': ['admin', 'device:viewer', 'device:approver'],
  'POST /intent/{id}/approve-signed': ['admin', 'device:approver'],
  'POST /intent/{id}/approve': ADMIN,
  'POST /intent/{id}/cancel': ADMIN,
  'POST /intent/{id}/execute': ADMIN,
  'GET /events': READERS,
  'GET /events/stream': READERS,
  'GET /estate': READERS,
  'GET /wallets/{id}/reconcile': READERS,
  'GET /ledger/verify': READERS,
  'GET /ledger/recent': READERS,
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
  'POST /changes': ADMIN,
  'GET /changes': ADMIN,
  'GET /changes/{id}': ADMIN,
  'POST /changes/{id}/approve': ADMIN,
  'POST /changes/{id}/apply': ADMIN,
} as const satisfies Record<string, readonly Role[]>;
export type RouteKey = keyof typeof ACCESS;

/** Whether `role` may call `route` (the table, nothing else). */
export function allowed(route: RouteKey, role: Role): boolean {
  return (ACCESS[route] as readonly Role[]).includes(role);
}

/** The middleware of `route`: a live session whose principal the table allows, put on the request. */
export function allow(sessions: SessionStore, route: RouteKey): MiddlewareHandler {
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    const { principal } = sessions.touch(token);
    const role = roleOf(principal);
    if (!allowed(route, role)) throw forbidden(`${route} is not open to ${role}`);
    c.set('principal' as never, principal as never);
    // Long-lived routes (the event stream) check the session again while they run.
    c.set('token' as never, token as never);
    await next();
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
