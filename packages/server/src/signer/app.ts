/**
 * @module signer/app
 * The signer's HTTP routes on the shared edge (loopback Host check, error bodies, body limits):
 * GET /health (no auth), and GET /keys, POST /sign, POST /observe, GET /receipts, POST and GET
 * /restrictions, POST /governance/changes and GET /governance behind `x-vault-signer-token`.
 */
import { GovernancePushSchema, ObserveRequestSchema, RestrictionSetSchema, SessionError, SIGNER_TOKEN_HEADER, SignRequestSchema, ValidationError } from '@vault/sdk';
import type { Hono, MiddlewareHandler } from 'hono';
import { createServiceApp, readJson, secretMatches } from '../http/index.js';
import { applyChangeSet, describeGovernance } from './governance.js';
import { applyRestrictions, describeRestrictions } from './restrictions.js';
import { observeIntent } from './observe.js';
import { describeKeys, verifyAndSign, type SignerDeps } from './sign.js';

/** Largest /sign body: a policy may carry long address lists. */
export const SIGN_BODY_LIMIT = 1024 * 1024;
export const DEFAULT_RECEIPTS_LIMIT = 20;
export const MAX_RECEIPTS_LIMIT = 1000;

export interface SignerAppDeps extends SignerDeps {
  /** The signer token every route but /health requires. */
  token: string;
  /** Host names accepted besides loopback (only when deliberately bound elsewhere). */
  extraHosts?: readonly string[];
}

function requireToken(token: string): MiddlewareHandler {
  if (token.length < 16) throw new ValidationError('token', [{ path: '', message: 'the signer token must be at least 16 characters' }]);
  return async (c, next) => {
    if (!secretMatches(c.req.header(SIGNER_TOKEN_HEADER), token)) {
      throw new SessionError(`missing or wrong ${SIGNER_TOKEN_HEADER}`);
    }
    await next();
  };
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_RECEIPTS_LIMIT;
  if (!/^[0-9]{1,7}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_RECEIPTS_LIMIT) {
    throw new ValidationError('query', [{ path: 'limit', message: `limit must be an integer 1..${MAX_RECEIPTS_LIMIT}` }]);
  }
  return Number(raw);
}

/**
 * The signer service as a Hono app. Serve it with `listen(app)` from `@vault/server`.
 *
 * @example
 * const app = createSignerApp({ now, drivers, signers, trust, keys, state, token })
 * const server = await listen(app, { port: 7333 })
 */
export function createSignerApp(deps: SignerAppDeps): Hono {
  const app = createServiceApp({ bodyLimit: SIGN_BODY_LIMIT, ...(deps.extraHosts ? { extraHosts: deps.extraHosts } : {}) });
  const auth = requireToken(deps.token);

  app.get('/health', (c) =>
    c.json({
      ok: true,
      service: 'vault-signer',
      backend: deps.keys.name,
      receipt_head: deps.state.head,
      receipts: deps.state.length,
      receipt_public_key: deps.state.receiptPublicKey,
      chains: deps.signers.chains().filter((ch) => deps.drivers.has(ch)),
    }),
  );

  app.get('/keys', auth, (c) => c.json({ backend: deps.keys.name, keys: describeKeys(deps) }));

  app.get('/receipts', auth, (c) => {
    const limit = parseLimit(c.req.query('limit'));
    return c.json({
      receipt_head: deps.state.head,
      total: deps.state.length,
      receipt_public_key: deps.state.receiptPublicKey,
      receipts: deps.state.recent(limit),
    });
  });

  app.post('/sign', auth, async (c) => {
    const request = await readJson(c, SignRequestSchema, 'sign request', SIGN_BODY_LIMIT);
    const outcome = await verifyAndSign(request, deps);
    return outcome.ok ? c.json(outcome.response, 200) : c.json(outcome.refusal, 403);
  });

  // First sight of an intent (its timelock clock), for a control plane that just created it.
  // Signs nothing: observeIntent is given no keys.
  app.post('/observe', auth, async (c) => {
    const request = await readJson(c, ObserveRequestSchema, 'observe request', SIGN_BODY_LIMIT);
    const { now, drivers, trust, state } = deps;
    const outcome = await observeIntent(request, { now, drivers, trust, state });
    return outcome.ok ? c.json(outcome.response, 200) : c.json(outcome.refusal, 403);
  });

  // Restrictions only remove power, so the control plane may push them; nothing here lifts one
  // (that is the operator's `vault-signer lift`, on the signer host).
  app.post('/restrictions', auth, async (c) => {
    const body = await readJson(c, RestrictionSetSchema, 'restrictions', SIGN_BODY_LIMIT);
    return c.json(await applyRestrictions(body.restrictions, deps));
  });

  app.get('/restrictions', auth, (c) => c.json(describeRestrictions(deps.state)));

  // A change set can add power, so the token proves nothing about it: the signer takes it on only
  // when its own admin quorum signed it (governance.ts). A stale or replayed one is a conflict
  // (409, the signer's version in the body), anything else the admins did not sign 403.
  app.post('/governance/changes', auth, async (c) => {
    const body = await readJson(c, GovernancePushSchema, 'governance change', SIGN_BODY_LIMIT);
    const outcome = await applyChangeSet(body, deps);
    if (outcome.ok) return c.json(outcome, 200);
    const conflict = outcome.reason === 'stale_base' || outcome.reason === 'replayed' || outcome.reason === 'future_base';
    return c.json(outcome, conflict ? 409 : 403);
  });

  app.get('/governance', auth, (c) => c.json(describeGovernance(deps.trust, deps.state)));

  return app;
}
