/**
 * @module signer/app
 * The signer's HTTP routes on the shared edge (loopback Host check, error bodies, body limits):
 * GET /health, GET /ready and GET /metrics (no signer token; /metrics may want VAULT_METRICS_TOKEN), and GET /keys, POST /sign, POST /observe, GET /receipts, POST and GET
 * /restrictions, POST /governance/changes and GET /governance behind `x-vault-signer-token`.
 */
import { GovernancePushSchema, ObserveRequestSchema, RestrictionSetSchema, SessionError, SIGNER_TOKEN_HEADER, SignRequestSchema, ValidationError } from '@vault/sdk';
import type { Hono, MiddlewareHandler } from 'hono';
import { createServiceApp, readJson, secretMatches } from '../http/index.js';
import { httpMetricFamilies, httpMetrics, MetricsRegistry, metricsHandler, readyResponse, type ReadyCheck } from '../http/metrics.js';
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
  /** When set, GET /metrics wants it as a bearer token (VAULT_METRICS_TOKEN); absent, /metrics is open (loopback). */
  metricsToken?: string;
}

/**
 * GET /ready for a signer. Ready means it can sign:
 * - `keys`: at least one key is unlocked (software keystore opened, or PKCS#11 session logged in);
 * - `state`: the receipt journal is open and no write to it has failed (every signature is a
 *   durable receipt first, so without it nothing is signed);
 * - `chains`: at least one chain has both its driver and its signing module loaded.
 * Ledgers are not checked: a ledger a sign request needs and cannot reach is that request's
 * refusal (`ledger`), and one chain's outage must not take the signer out for every other chain.
 */
export function signerReadiness(deps: SignerDeps): ReadyCheck[] {
  const unlocked = deps.keys.list().filter((k) => k.unlocked).length;
  const fault = deps.state.fault;
  const chains = deps.signers.chains().filter((ch) => deps.drivers.has(ch)).length;
  return [
    unlocked > 0 ? { name: 'keys', ok: true } : { name: 'keys', ok: false, detail: 'no key is unlocked' },
    fault === null ? { name: 'state', ok: true } : { name: 'state', ok: false, detail: fault },
    chains > 0 ? { name: 'chains', ok: true } : { name: 'chains', ok: false, detail: 'no chain has both a driver and a signing module' },
  ];
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
  const metrics = new MetricsRegistry();
  app.use('*', httpMetrics(httpMetricFamilies(metrics)));
  const signed = metrics.counter('vault_signer_signatures_total', 'Sign requests answered with a signature.');
  // Reasons come from the SDK's closed list (REFUSAL_REASONS); the cap is a second fence.
  const refusals = metrics.counter('vault_signer_refusals_total', 'Sign requests refused, by refusal reason.', ['reason'], { maxSeries: 64 });
  metrics.collectGauge('vault_receipts', "Receipts in the signer's chain.", [], () => [[{}, deps.state.length]]);

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

  app.get('/ready', (c) => readyResponse(c, 'vault-signer', signerReadiness(deps)));
  app.get('/metrics', metricsHandler(metrics, deps.metricsToken));

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
    if (outcome.ok) signed.inc();
    else refusals.inc({ reason: outcome.refusal.refused.reason });
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
