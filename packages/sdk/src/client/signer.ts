/**
 * @module client/signer
 * Typed client of one signer service (interface.md "Endpoints → Signer").
 */
import { z } from 'zod';
import { SessionError } from '../errors.js';
import { parseWith } from '../schemas/index.js';
import {
  RestrictionSetSchema,
  RestrictionsInForceSchema,
  RestrictionsResultSchema,
  type Restriction,
  type RestrictionsInForce,
  type RestrictionsResult,
} from '../schemas/restriction.js';
import { GovernanceOutcomeSchema, GovernancePushSchema, GovernanceStatusSchema, type ChangeApproval, type ChangeSet, type GovernanceOutcome, type GovernanceStatus } from '../schemas/governance.js';
import {
  ObserveRequestSchema,
  ObserveResponseSchema,
  SignRequestSchema,
  SignResponseSchema,
  SignerRefusalSchema,
  type ObserveRequest,
  type ObserveResponse,
  type SignRequest,
  type SignResponse,
  type SignerRefusal,
} from '../schemas/sign.js';
import { createHttp, isHeaderSafeToken, limitParam, type FetchLike, type RequestSpec } from './http.js';

/** The header carrying the signer token (interface.md "Authentication"). */
export const SIGNER_TOKEN_HEADER = 'x-vault-signer-token';

/** Options of {@link createSignerClient}. */
export interface SignerClientOptions {
  /** Base URL of the signer, e.g. `http://127.0.0.1:7333`. */
  baseUrl: string;
  /** The signer token, sent as `x-vault-signer-token` on every route but /health. */
  token: string;
  /** A `fetch` implementation; defaults to the global `fetch`. */
  fetch?: FetchLike | undefined;
  /** Per-request timeout in milliseconds (default 15 000). */
  timeoutMs?: number | undefined;
  /** Largest accepted response body in bytes (default 8 MiB). */
  maxResponseBytes?: number | undefined;
}

/**
 * Outcome of a sign call. A refusal (HTTP 403 with a SignerRefusal body) is an expected answer,
 * not an exception: branch on `ok`.
 */
export type SignResult = { ok: true; response: SignResponse } | { ok: false; refusal: SignerRefusal };

/** Outcome of an observe call: as for sign, a refusal is an answer (`ok: false`), not an exception. */
export type ObserveResult = { ok: true; response: ObserveResponse } | { ok: false; refusal: SignerRefusal };

/** The signer client. Replies are checked against their schemas. */
export interface SignerClient {
  /** The normalised base URL. */
  readonly baseUrl: string;
  /** GET /health (no auth): liveness and receipt-chain state. */
  health(): Promise<Record<string, unknown>>;
  /** GET /keys (signer token): keys held with their scope. */
  keys(): Promise<unknown>;
  /** GET /receipts?limit= (signer token), default limit 20. */
  receipts(limit?: number): Promise<unknown>;
  /**
   * POST /sign (signer token). The request is validated first (ValidationError naming the
   * field). Resolves `{ok: true, response}` on 200 and `{ok: false, refusal}` on a 403 refusal;
   * any other failure throws (typed VaultError for an Error body, TransportError otherwise).
   */
  sign(request: SignRequest): Promise<SignResult>;
  /**
   * POST /observe (signer token): shows the signer an intent (its id, created_at, request, wallet
   * and policy) so that it records when it first saw it, from which it counts any timelock; it
   * signs nothing. A control plane calls it when it creates an intent a timelock holds back.
   * Validated first; resolves `{ok: true, response}` on 200 and `{ok: false, refusal}` on a 403
   * refusal (intent_tampered, policy_mismatch, policy_denied for a frozen wallet).
   */
  observe(request: ObserveRequest): Promise<ObserveResult>;
  /**
   * POST /restrictions (signer token): restrictions that only remove power (revoke or drop an
   * approver, freeze a wallet). Resolves once every one is in force at the signer and on its disk;
   * the reply's `received` is `restrictionDigest(restrictions)`. Validated first.
   */
  restrict(restrictions: readonly Restriction[]): Promise<RestrictionsResult>;
  /** GET /restrictions (signer token): the restrictions in force. */
  restrictions(): Promise<RestrictionsInForce>;
  /**
   * POST /governance/changes (signer token): an applied change set with the admin approvals that
   * carried it. The signer judges it against its own admin policy; a refusal (403, 409) is an
   * answer (`ok: false` with the reason and the signer's version), not an error.
   */
  pushChange(change: ChangeSet, approvals: readonly ChangeApproval[]): Promise<GovernanceOutcome>;
  /** GET /governance (signer token): the signer's admin policy and version. */
  governance(): Promise<GovernanceStatus>;
}

/**
 * Creates a typed client of one signer.
 *
 * @example
 * const signer = createSignerClient({ baseUrl: 'http://127.0.0.1:7333', token: process.env.VAULT_SIGNER_TOKEN! })
 * const result = await signer.sign(signRequest)
 * if (result.ok) contributions.push(result.response.signature)
 * else console.warn(`refused: ${result.refusal.refused.reason}: ${result.refusal.message}`)
 */
export function createSignerClient(options: SignerClientOptions): SignerClient {
  const http = createHttp(options);
  const token = options.token;
  if (!isHeaderSafeToken(token)) {
    throw new SessionError('invalid signer token: expected printable ASCII without surrounding spaces');
  }

  function authed(spec: Omit<RequestSpec, 'secrets' | 'headers'>): RequestSpec {
    return { ...spec, headers: { [SIGNER_TOKEN_HEADER]: token }, secrets: [token] };
  }

  /** A route whose 403 may be a SignerRefusal (an answer); any other failure throws. */
  async function refusable<T>(spec: RequestSpec, schema: z.ZodType<T>): Promise<{ ok: true; response: T } | { ok: false; refusal: SignerRefusal }> {
    const reply = await http.send(spec);
    if (reply.status === 403) {
      const refusal = SignerRefusalSchema.safeParse(reply.body);
      if (refusal.success) return { ok: false, refusal: refusal.data };
    }
    if (reply.status < 200 || reply.status >= 300) throw http.errorFor(spec, reply);
    return { ok: true, response: http.parseReply(spec, reply, schema) };
  }

  return {
    baseUrl: http.baseUrl,

    health: async () =>
      http.request(
        { method: 'GET', path: '/health', label: 'GET /health', secrets: [token] },
        z.record(z.string(), z.unknown()),
      ),

    keys: async () => http.request(authed({ method: 'GET', path: '/keys', label: 'GET /keys' }), z.unknown()),

    receipts: async (limit = 20) =>
      http.request(
        authed({ method: 'GET', path: `/receipts?limit=${limitParam(limit)}`, label: 'GET /receipts' }),
        z.unknown(),
      ),

    async sign(request) {
      parseWith(SignRequestSchema, request, 'sign request');
      return refusable(authed({ method: 'POST', path: '/sign', label: 'POST /sign', body: request }), SignResponseSchema);
    },

    async observe(request) {
      parseWith(ObserveRequestSchema, request, 'observe request');
      return refusable(authed({ method: 'POST', path: '/observe', label: 'POST /observe', body: request }), ObserveResponseSchema);
    },

    async restrict(restrictions) {
      const body = parseWith(RestrictionSetSchema, { restrictions }, 'restrictions');
      return http.request(authed({ method: 'POST', path: '/restrictions', label: 'POST /restrictions', body }), RestrictionsResultSchema);
    },

    restrictions: async () => http.request(authed({ method: 'GET', path: '/restrictions', label: 'GET /restrictions' }), RestrictionsInForceSchema),

    async pushChange(change, approvals) {
      const body = parseWith(GovernancePushSchema, { change, approvals }, 'governance change');
      const spec = authed({ method: 'POST', path: '/governance/changes', label: 'POST /governance/changes', body });
      const reply = await http.send(spec);
      if (reply.status === 200 || reply.status === 403 || reply.status === 409) {
        const outcome = GovernanceOutcomeSchema.safeParse(reply.body);
        if (outcome.success) return outcome.data;
      }
      if (reply.status < 200 || reply.status >= 300) throw http.errorFor(spec, reply);
      return http.parseReply(spec, reply, GovernanceOutcomeSchema);
    },

    governance: async () => http.request(authed({ method: 'GET', path: '/governance', label: 'GET /governance' }), GovernanceStatusSchema),
  };
}
