/**
 * @module client/control-plane
 * Typed client of the vault control plane (interface.md "Endpoints → Control plane").
 */
import { z } from 'zod';
import { SessionError } from '../errors.js';
import { PasskeyRegistrationSchema, SignedApprovalSchema, type SignedApproval } from '../schemas/approval.js';
import { labelString } from '../schemas/common.js';
import {
  ApproveResultSchema,
  CancelRequestSchema,
  CancelResultSchema,
  CreateIntentResultSchema,
  ExecuteOutcomeSchema,
  LedgerVerifyResultSchema,
  ProtectResultSchema,
  ReconcileResultSchema,
  SessionUnlockResultSchema,
  StoredIntentSchema,
  type ApproveResult,
  type CancelRequest,
  type CancelResult,
  type CreateIntentResult,
  type ExecuteOutcome,
  type LedgerVerifyResult,
  type ProtectResult,
  type ReconcileResult,
  type SessionUnlockResult,
  type StoredIntent,
} from '../schemas/control-plane.js';
import { parseWith } from '../schemas/index.js';
import { IntentRequestSchema, type IntentRequest } from '../schemas/intent.js';
import { PolicySetSchema, type PolicySet } from '../schemas/policy.js';
import { createEventsClient, type EventsClient } from './events.js';
import {
  createHttp,
  isHeaderSafeToken,
  limitParam,
  pathParam,
  type FetchLike,
  type RequestSpec,
} from './http.js';

/** A JSON object whose fields the spec does not name (the † endpoints). */
export type JsonObject = Record<string, unknown>;

const LooseObject = z.record(z.string(), z.unknown());
const LooseArray = z.array(LooseObject);
const AnyBody = z.unknown();

/** Roles a paired device may take (DESIGN.md §8). */
export const PAIR_ROLES = ['approver', 'initiator', 'viewer'] as const;
export type PairRole = (typeof PAIR_ROLES)[number];

/** Body of POST /pair/create. */
export const PairCreateRequestSchema = z.strictObject({
  role: z.enum(PAIR_ROLES),
  label: labelString(128, 1),
});
export type PairCreateRequest = z.infer<typeof PairCreateRequestSchema>;

/** Reply of POST /pair/create: a single-use code, the challenge the device signs, its expiry. */
export const PairCreateResultSchema = z.looseObject({
  code: z.string().min(1),
  challenge: z.string().min(1),
  expires_at: z.int().min(0).optional(),
});
export type PairCreateResult = z.infer<typeof PairCreateResultSchema>;

/**
 * Body of POST /pair/claim: the code, the device key, its signature over the challenge, a label,
 * and optionally the passkey registered over the same challenge (strong approvals need one).
 */
export const PairClaimRequestSchema = z.looseObject({
  code: z.string().min(1),
  public_key: z.string().min(1),
  signature: z.string().min(1),
  label: labelString(128),
  passkey: PasskeyRegistrationSchema.optional(),
});
export type PairClaimRequest = z.infer<typeof PairClaimRequestSchema>;

/** Options of {@link createControlPlaneClient}. */
export interface ControlPlaneClientOptions {
  /** Base URL of the control plane, e.g. `http://127.0.0.1:7331`. */
  baseUrl: string;
  /** A session token from an earlier unlock; `unlock()` sets one. */
  token?: string | undefined;
  /** A `fetch` implementation; defaults to the global `fetch`. */
  fetch?: FetchLike | undefined;
  /** Per-request timeout in milliseconds (default 15 000). */
  timeoutMs?: number | undefined;
  /** Largest accepted response body in bytes (default 8 MiB). */
  maxResponseBytes?: number | undefined;
}

/**
 * The control-plane client. Methods marked "session" send `Authorization: Bearer <token>` and
 * throw SessionError before any request when the client holds no token. Every reply is checked
 * against its schema; a malformed reply is a TransportError naming the field. Wire errors come
 * back as typed VaultErrors (code and `data` kept).
 */
export interface ControlPlaneClient {
  /** The normalised base URL. */
  readonly baseUrl: string;
  /** True when the client holds a session token. */
  hasSession(): boolean;
  /** The session token held, for callers that persist it; `undefined` when locked. */
  getToken(): string | undefined;
  /** Replaces (or with `undefined`, forgets) the session token. */
  setToken(token: string | undefined): void;

  /** GET /health (no auth): liveness and receipt-chain state. */
  health(): Promise<JsonObject>;
  /**
   * POST /session/unlock (no auth): stores the returned token on the client. `options.name` is a
   * named operator account; without it, the vault's first passphrase (the first admin).
   */
  unlock(passphrase: string, options?: { name?: string | undefined }): Promise<SessionUnlockResult>;
  /** POST /session/lock (session): ends the session and forgets the token. */
  lock(): Promise<void>;
  /** GET /wallets (session). */
  wallets(): Promise<JsonObject[]>;
  /** GET /policy/{wallet} (session). */
  policy(wallet: string): Promise<PolicySet>;
  /** GET /assets (session): canonical asset registry and reserved tickers. */
  assets(): Promise<JsonObject>;
  /** POST /intent (session): creates (or replays) an intent. The request is validated first. */
  createIntent(request: IntentRequest): Promise<CreateIntentResult>;
  /** GET /intents (session): newest first, at most 100. */
  intents(): Promise<JsonObject[]>;
  /** GET /intent/{id} (session). */
  intent(id: string): Promise<StoredIntent>;
  /** GET /intent/{id}/protect (session): runs the guards on live inputs without executing. */
  protect(id: string): Promise<ProtectResult>;
  /** POST /intent/{id}/approve-signed (session). The approval is validated first. */
  approveSigned(id: string, approval: SignedApproval): Promise<ApproveResult>;
  /**
   * POST /intent/{id}/approve (session): an unsigned approval that signers do not count.
   * @deprecated Signers ignore unsigned approvals; use {@link ControlPlaneClient.approveSigned}.
   */
  approveUnsigned(id: string): Promise<unknown>;
  /**
   * POST /intent/{id}/cancel (session): the intent becomes `cancelled`, final, and every signer is
   * told to refuse it. Without `statement` the operator cancels; an initiator device passes the
   * statement it signed with `signCancel`. Refused (403) after submit or while an earlier payload
   * may still land.
   */
  cancel(id: string, statement?: CancelRequest): Promise<CancelResult>;
  /**
   * POST /intent/{id}/execute (session). A refusal by a guard, a signer or the ledger arrives as
   * HTTP 500 and is thrown as the typed error of its wire code, `data.stage`/`data.reason` kept.
   */
  execute(id: string): Promise<ExecuteOutcome>;
  /** GET /estate (session): balances per wallet with canonical flags. */
  estate(): Promise<JsonObject>;
  /** GET /wallets/{id}/reconcile (session). */
  reconcile(walletId: string): Promise<ReconcileResult>;
  /** GET /ledger/verify (session): recomputes the control plane's receipt chain. */
  ledgerVerify(): Promise<LedgerVerifyResult>;
  /** GET /ledger/recent?limit= (session), default limit 50. */
  ledgerRecent(limit?: number): Promise<unknown>;
  /** POST /admin/reload (session): re-reads the state file. */
  reload(): Promise<unknown>;
  /** POST /snapshot (session): what a browser-extension popup needs. */
  snapshot(body?: JsonObject): Promise<JsonObject>;
  /** GET /recovery/status (session): recovery tier and proof per wallet. */
  recoveryStatus(): Promise<JsonObject>;
  /** POST /pair/create (session): a pairing code for a device of the given role. */
  pairCreate(request: PairCreateRequest): Promise<PairCreateResult>;
  /** URL of GET /pair/qr/{code} (no auth), an SVG image. No request is made. */
  pairQrUrl(code: string): string;
  /** POST /pair/claim (no auth, by design): registers the device. No session token is sent. */
  pairClaim(body: PairClaimRequest): Promise<unknown>;
  /** GET /devices (session): paired devices. */
  devices(): Promise<unknown>;
  /** POST /devices/{id}/revoke (session). */
  revokeDevice(id: string): Promise<unknown>;
  /** The event log (GET /events, GET /events/stream) with this client's session. */
  events(options?: { maxLineBytes?: number }): EventsClient;
}

/**
 * Creates a typed client of the control plane.
 *
 * @example
 * const cp = createControlPlaneClient({ baseUrl: 'http://127.0.0.1:7331' })
 * await cp.unlock(process.env.VAULT_PASSPHRASE!)
 * const { intentId, status } = await cp.createIntent({ wallet: 'ops', destination: 'rDest…', amount: '1000000' })
 * if (status === 'allowed') {
 *   const outcome = await cp.execute(intentId)
 *   console.log(outcome.status, outcome.txHash)
 * }
 */
export function createControlPlaneClient(options: ControlPlaneClientOptions): ControlPlaneClient {
  const http = createHttp(options);
  let token: string | undefined;
  let eventsClient: EventsClient | undefined;

  function setToken(next: string | undefined): void {
    if (next !== undefined && !isHeaderSafeToken(next)) {
      throw new SessionError('invalid session token: expected printable ASCII without surrounding spaces');
    }
    token = next;
  }
  setToken(options.token);

  function open(spec: Omit<RequestSpec, 'secrets'>): RequestSpec {
    return { ...spec, secrets: token === undefined ? [] : [token] };
  }

  function session(spec: Omit<RequestSpec, 'secrets' | 'headers'>): RequestSpec {
    if (token === undefined) throw new SessionError(`${spec.label}: no session token; call unlock() first`);
    return { ...spec, headers: { authorization: `Bearer ${token}` }, secrets: [token] };
  }

  async function withSession<S extends z.ZodType>(
    spec: Omit<RequestSpec, 'secrets' | 'headers'>,
    schema: S,
  ): Promise<z.infer<S>> {
    return http.request(session(spec), schema);
  }

  const client: ControlPlaneClient = {
    baseUrl: http.baseUrl,
    hasSession: () => token !== undefined,
    getToken: () => token,
    setToken,

    health: async () => http.request(open({ method: 'GET', path: '/health', label: 'GET /health' }), LooseObject),

    async unlock(passphrase, options = {}) {
      if (typeof passphrase !== 'string' || passphrase === '') {
        throw new SessionError('unlock needs a non-empty passphrase');
      }
      const spec = open({
        method: 'POST',
        path: '/session/unlock',
        label: 'POST /session/unlock',
        body: options.name === undefined ? { passphrase } : { name: options.name, passphrase },
      });
      const secrets = [...(spec.secrets ?? []), passphrase];
      const result = await http.request({ ...spec, secrets }, SessionUnlockResultSchema);
      setToken(result.token);
      return result;
    },

    async lock() {
      const spec = session({ method: 'POST', path: '/session/lock', label: 'POST /session/lock' });
      try {
        await http.request(spec, AnyBody);
      } catch (err) {
        // A session the server no longer knows is as good as locked.
        if (err instanceof SessionError) token = undefined;
        throw err;
      }
      token = undefined;
    },

    wallets: async () => withSession({ method: 'GET', path: '/wallets', label: 'GET /wallets' }, LooseArray),

    policy: async (wallet) =>
      withSession(
        { method: 'GET', path: `/policy/${pathParam(wallet, 'wallet')}`, label: 'GET /policy/{wallet}' },
        PolicySetSchema,
      ),

    assets: async () => withSession({ method: 'GET', path: '/assets', label: 'GET /assets' }, LooseObject),

    async createIntent(request) {
      parseWith(IntentRequestSchema, request, 'intent');
      return withSession(
        { method: 'POST', path: '/intent', label: 'POST /intent', body: request },
        CreateIntentResultSchema,
      );
    },

    intents: async () => withSession({ method: 'GET', path: '/intents', label: 'GET /intents' }, LooseArray),

    intent: async (id) =>
      withSession(
        { method: 'GET', path: `/intent/${pathParam(id, 'id')}`, label: 'GET /intent/{id}' },
        StoredIntentSchema,
      ),

    protect: async (id) =>
      withSession(
        { method: 'GET', path: `/intent/${pathParam(id, 'id')}/protect`, label: 'GET /intent/{id}/protect' },
        ProtectResultSchema,
      ),

    async approveSigned(id, approval) {
      const path = `/intent/${pathParam(id, 'id')}/approve-signed`;
      parseWith(SignedApprovalSchema, approval, 'approval');
      return withSession(
        { method: 'POST', path, label: 'POST /intent/{id}/approve-signed', body: approval },
        ApproveResultSchema,
      );
    },

    approveUnsigned: async (id) =>
      withSession(
        { method: 'POST', path: `/intent/${pathParam(id, 'id')}/approve`, label: 'POST /intent/{id}/approve' },
        AnyBody,
      ),

    execute: async (id) =>
      withSession(
        { method: 'POST', path: `/intent/${pathParam(id, 'id')}/execute`, label: 'POST /intent/{id}/execute' },
        ExecuteOutcomeSchema,
      ),

    estate: async () => withSession({ method: 'GET', path: '/estate', label: 'GET /estate' }, LooseObject),

    reconcile: async (walletId) =>
      withSession(
        {
          method: 'GET',
          path: `/wallets/${pathParam(walletId, 'walletId')}/reconcile`,
          label: 'GET /wallets/{id}/reconcile',
        },
        ReconcileResultSchema,
      ),

    ledgerVerify: async () =>
      withSession({ method: 'GET', path: '/ledger/verify', label: 'GET /ledger/verify' }, LedgerVerifyResultSchema),

    ledgerRecent: async (limit = 50) =>
      withSession(
        { method: 'GET', path: `/ledger/recent?limit=${limitParam(limit)}`, label: 'GET /ledger/recent' },
        AnyBody,
      ),

    reload: async () => withSession({ method: 'POST', path: '/admin/reload', label: 'POST /admin/reload' }, AnyBody),

    async snapshot(body) {
      if (body !== undefined) parseWith(LooseObject, body, 'snapshot');
      return withSession({ method: 'POST', path: '/snapshot', label: 'POST /snapshot', body }, LooseObject);
    },

    recoveryStatus: async () =>
      withSession({ method: 'GET', path: '/recovery/status', label: 'GET /recovery/status' }, LooseObject),

    async pairCreate(request) {
      parseWith(PairCreateRequestSchema, request, 'pairing');
      return withSession(
        { method: 'POST', path: '/pair/create', label: 'POST /pair/create', body: request },
        PairCreateResultSchema,
      );
    },

    pairQrUrl: (code) => `${http.baseUrl}/pair/qr/${pathParam(code, 'code')}`,

    async pairClaim(body) {
      parseWith(PairClaimRequestSchema, body, 'claim');
      return http.request(
        open({ method: 'POST', path: '/pair/claim', label: 'POST /pair/claim', body }),
        AnyBody,
      );
    },

    devices: async () => withSession({ method: 'GET', path: '/devices', label: 'GET /devices' }, AnyBody),

    events(opts = {}) {
      if (opts.maxLineBytes === undefined && eventsClient) return eventsClient;
      const c = createEventsClient({ baseUrl: http.baseUrl, token: () => token, fetch: options.fetch, timeoutMs: options.timeoutMs, maxLineBytes: opts.maxLineBytes });
      if (opts.maxLineBytes === undefined) eventsClient = c;
      return c;
    },

    async cancel(id, statement) {
      const body = statement === undefined ? {} : parseWith(CancelRequestSchema, statement, 'cancel');
      return withSession({ method: 'POST', path: `/intent/${pathParam(id, 'id')}/cancel`, label: 'POST /intent/{id}/cancel', body }, CancelResultSchema);
    },

    revokeDevice: async (id) =>
      withSession(
        { method: 'POST', path: `/devices/${pathParam(id, 'id')}/revoke`, label: 'POST /devices/{id}/revoke' },
        AnyBody,
      ),
  };
  return client;
}
