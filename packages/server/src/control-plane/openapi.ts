/**
 * @module control-plane/openapi
 * The OpenAPI 3.1 document of the control plane, generated from the SDK's wire schemas
 * (`jsonSchemas()`) plus the few request bodies only the server defines.
 */
import { INTENT_STATUSES, KEY_BINDING_RE, PairClaimRequestSchema, PairCreateRequestSchema, jsonSchemas, labelString } from '@vault/sdk';
import { z } from 'zod';
import { ACCESS, type RouteKey } from './access.js';
import { ApiKeyIdSchema, OPERATOR_ROLES, OperatorNameSchema } from './state.js';
import { EventTypeFilterSchema, WebhookUrlSchema } from './webhooks/config.js';

/** POST /session/unlock: `name` absent is the legacy passphrase (the first admin, `operator`). */
export const UnlockRequestSchema = z.strictObject({ name: OperatorNameSchema.optional(), passphrase: z.string().min(1, 'passphrase is required').max(1024) });
/** POST /operators: a named account with its own passphrase (at least 8 characters, as at init). */
export const CreateOperatorRequestSchema = z.strictObject({
  name: OperatorNameSchema,
  role: z.enum(OPERATOR_ROLES),
  passphrase: z.string().min(8, 'passphrase must be at least 8 characters').max(1024),
});
/** POST /api-keys: what the key initiates as, where, and until when. */
export const CreateApiKeyRequestSchema = z.strictObject({
  bound_to: z.string().max(128).regex(KEY_BINDING_RE, 'bound_to must be agent:<name> or app:<id> (1..120 of a-z 0-9 . _ -)'),
  wallets: z.array(z.string().min(1).max(128)).min(1).max(1024).optional(),
  expires_at: z.int().min(0),
  /** Shown to admins in lists: no control, format or bidi characters (as a device label). */
  label: labelString(128).optional(),
});
export { ApiKeyIdSchema, OperatorNameSchema };
export const SnapshotRequestSchema = z.strictObject({ wallet: z.string().min(1).max(128).optional() });
/** POST /webhooks. `types` empty or absent: every event type. */
export const CreateWebhookRequestSchema = z.strictObject({
  url: WebhookUrlSchema,
  types: z.array(EventTypeFilterSchema).max(64).optional(),
  description: z.string().max(256).optional(),
});
/** POST /policy/{wallet}/simulate: a proposed policy (validated as the state file's are) and how many recent intents to replay. */
export const SimulatePolicyRequestSchema = z.strictObject({
  policy: z.unknown().describe('The proposed PolicySet for this wallet (policy.wallet must be the path\'s).'),
  limit: z.int().min(1).max(200).optional().describe('The newest intents of the wallet to evaluate (default and most: 200).'),
});
export const DeviceIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'device id: 1..128 of A-Z a-z 0-9 . _ : -');
export const ChangeIdSchema = z.string().regex(/^chg_[0-9a-f]{32}$/, 'change id: chg_ and 32 lowercase hex digits');
export const DeviceChallengeRequestSchema = z.strictObject({ device_id: DeviceIdSchema });
export const DeviceSessionRequestSchema = z.strictObject({
  device_id: DeviceIdSchema,
  challenge: z.string().regex(/^[0-9a-f]{64}$/, 'challenge must be 32 bytes as 64 lowercase hex digits'),
  signature: z.string().regex(/^[0-9a-f]{128}$/, 'signature must be 64 bytes as 128 lowercase hex digits').describe('ed25519 over deviceSessionMessage({device, challenge})'),
});

interface Op {
  method: 'get' | 'post' | 'delete';
  path: string;
  summary: string;
  auth: boolean;
  body?: string;
  ok: string | null;
  okType?: string;
  errors?: number[];
  /** What an error status means on this route, where that differs from the shared wording. */
  errorNotes?: Record<number, string>;
  /** The body schema of an error status, where it is not ErrorBody. */
  errorSchemas?: Record<number, string>;
  deprecated?: boolean;
  params?: { name: string; in: 'path' | 'query' | 'header'; schema: Record<string, unknown>; description?: string }[];
}

const idParam = (name: string, pattern?: string) => ({ name, in: 'path' as const, schema: pattern ? { type: 'string', pattern } : { type: 'string' } });
const INTENT_ID = idParam('id', '^int_[0-9a-f]{64}$');
const EVENT_ID = { type: 'string', pattern: '^evt_[0-9]{16}$' };
/** The filters GET /events and GET /events/stream share. */
const EVENT_FILTERS = [
  { name: 'after', in: 'query' as const, schema: EVENT_ID, description: 'Events after this id (absent: from the first)' },
  { name: 'types', in: 'query' as const, schema: { type: 'string' }, description: 'Comma-separated event types (at most 32)' },
  { name: 'wallet', in: 'query' as const, schema: { type: 'string' }, description: 'Only events whose subject is this wallet' },
  { name: 'intent', in: 'query' as const, schema: { type: 'string', pattern: '^int_[0-9a-f]{64}$' }, description: 'Only events whose subject is this intent' },
];
const WEBHOOK_ID = idParam('id', '^wh_[0-9a-f]{24}$');
const DELIVERY_ID = idParam('delivery', '^evt_[0-9]{16}$');
const CHANGE_ID = idParam('id', '^chg_[0-9a-f]{32}$');

/** Every endpoint of interface.md's control-plane table. */
export const ROUTES: readonly Op[] = [
  { method: 'get', path: '/health', summary: 'Liveness and receipt-chain state', auth: false, ok: 'Object' },
  { method: 'get', path: '/ready', summary: 'Readiness: 200 when the store takes writes, the receipt chain matches its anchor and the service is not stopping; else 503 naming the failing checks', auth: false, ok: 'Object', errors: [503], errorNotes: { 503: 'not ready: {ready: false, service, checks} with a detail on each failing check' }, errorSchemas: { 503: 'Object' } },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics (text format 0.0.4); wants the bearer token VAULT_METRICS_TOKEN when that is set', auth: false, ok: null, okType: 'text/plain; version=0.0.4', errors: [401], errorNotes: { 401: 'VAULT_METRICS_TOKEN is set and the bearer token is missing or wrong (4100)' } },
  { method: 'post', path: '/session/unlock', summary: 'Unlock with the operator passphrase', auth: false, body: 'UnlockRequest', ok: 'SessionUnlockResult', errors: [400, 401, 503] },
  { method: 'post', path: '/session/lock', summary: 'End the session', auth: true, ok: 'Object' },
  { method: 'get', path: '/wallets', summary: 'Wallets with their policy digest', auth: true, ok: 'ObjectArray' },
  { method: 'get', path: '/policy/{wallet}', summary: 'A wallet\'s policy set', auth: true, ok: 'PolicySet', params: [idParam('wallet')], errors: [404] },
  { method: 'post', path: '/policy/{wallet}/simulate', summary: "Evaluate a proposed policy against the wallet's newest intents (up to 200) beside the policy in force; lists the decisions that would change. Writes nothing", auth: true, body: 'SimulatePolicyRequest', ok: 'Object', params: [idParam('wallet')], errors: [400, 404] },
  { method: 'get', path: '/assets', summary: 'Canonical asset registry and reserved tickers', auth: true, ok: 'Object' },
  { method: 'post', path: '/intent', summary: 'Create (or replay) an intent', auth: true, body: 'IntentRequest', ok: 'CreateIntentResult', errors: [400, 404] },
  {
    method: 'get',
    path: '/intents',
    summary: 'Intents, newest first, at most 100; with wallet or status, those of the newest 10,000 that match',
    auth: true,
    ok: 'ObjectArray',
    params: [
      { name: 'wallet', in: 'query', schema: { type: 'string' }, description: 'Only this wallet\'s intents' },
      { name: 'status', in: 'query', schema: { type: 'string', enum: [...INTENT_STATUSES] }, description: 'Only intents in this status' },
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 100 } },
    ],
    errors: [400],
  },
  { method: 'get', path: '/intent/{id}', summary: 'One intent with decision, approvals and execution', auth: true, ok: 'StoredIntent', params: [INTENT_ID], errors: [400, 404] },
  { method: 'get', path: '/intent/{id}/protect', summary: 'Run the protections on live chain inputs', auth: true, ok: 'ProtectResult', params: [INTENT_ID], errors: [400, 404, 500] },
  { method: 'post', path: '/intent/{id}/approve-signed', summary: 'Add a signed approval or rejection', auth: true, body: 'SignedApproval', ok: 'ApproveResult', params: [INTENT_ID], errors: [400, 403, 404] },
  { method: 'post', path: '/intent/{id}/approve', summary: 'Unsigned approval (recorded, never counted)', auth: true, ok: 'Object', params: [INTENT_ID], deprecated: true, errors: [404] },
  { method: 'post', path: '/intent/{id}/cancel', summary: 'Cancel an intent not yet submitted (operator, or its initiator device with a signed statement); every signer is told to refuse it', auth: true, body: 'CancelRequest', ok: 'CancelResult', params: [INTENT_ID], errors: [400, 403, 404] },
  { method: 'post', path: '/intent/{id}/execute', summary: 'Execute: params, protections, prepare, signers, assemble, submit, confirm, receipts', auth: true, ok: 'ExecuteOutcome', params: [INTENT_ID], errors: [403, 404, 500] },
  { method: 'get', path: '/estate', summary: 'Balances per wallet with canonical flags', auth: true, ok: 'Object' },
  { method: 'get', path: '/wallets/{id}/reconcile', summary: 'Compare the descriptor with the ledger', auth: true, ok: 'ReconcileResult', params: [idParam('id')], errors: [404, 500] },
  { method: 'get', path: '/ledger/verify', summary: 'Recompute the receipt chain', auth: true, ok: 'LedgerVerifyResult' },
  { method: 'get', path: '/ledger/recent', summary: 'Newest receipts', auth: true, ok: 'Object', params: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 50 } }], errors: [400] },
  { method: 'get', path: '/intent/{id}/receipts', summary: "One intent's receipts, oldest first (verify them with the chain: GET /ledger/verify)", auth: true, ok: 'Object', params: [INTENT_ID, { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } }], errors: [400, 404] },
  { method: 'post', path: '/admin/reload', summary: 'Re-read the state file (an invalid one is refused)', auth: true, ok: 'Object', errors: [400] },
  { method: 'post', path: '/snapshot', summary: 'What a browser-extension popup needs', auth: true, body: 'SnapshotRequest', ok: 'Object', errors: [400] },
  { method: 'get', path: '/recovery/status', summary: 'Recovery tier and on-ledger proof per wallet', auth: true, ok: 'Object' },
  { method: 'post', path: '/pair/create', summary: 'A single-use, 5-minute pairing code', auth: true, body: 'PairCreateRequest', ok: 'Object', errors: [400] },
  { method: 'get', path: '/pair/qr/{code}', summary: 'The pairing QR code as SVG', auth: false, ok: null, okType: 'image/svg+xml', params: [idParam('code')], errors: [403] },
  { method: 'post', path: '/pair/claim', summary: 'Register a device (no session, by design)', auth: false, body: 'PairClaimRequest', ok: 'Object', errors: [400, 403] },
  { method: 'post', path: '/device/challenge', summary: 'A single-use challenge for a paired device to sign (60 s)', auth: false, body: 'DeviceChallengeRequest', ok: 'Object', errors: [400, 401] },
  { method: 'post', path: '/device/session', summary: "A device session from the device's signature over its challenge", auth: false, body: 'DeviceSessionRequest', ok: 'Object', errors: [400, 401] },
  { method: 'get', path: '/device/intents', summary: "A device's intents: an approver's queue, an initiator's own, everything for a viewer", auth: true, ok: 'Object' },
  { method: 'get', path: '/devices', summary: 'Paired devices', auth: true, ok: 'Object' },
  { method: 'post', path: '/devices/{id}/revoke', summary: 'Revoke a device: its approvals stop counting at once', auth: true, ok: 'Object', params: [idParam('id')], errors: [404] },
  { method: 'get', path: '/events', summary: 'The event log in order, one page (next is the cursor)', auth: true, ok: 'EventPage', params: [...EVENT_FILTERS, { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } }], errors: [400] },
  {
    method: 'get',
    path: '/events/stream',
    summary: 'The event log as Server-Sent Events: replay after the cursor, then live; id: lines carry event ids; heartbeat comments',
    auth: true,
    ok: null,
    okType: 'text/event-stream',
    params: [...EVENT_FILTERS, { name: 'Last-Event-ID', in: 'header', schema: EVENT_ID, description: 'Resume after this event (wins over after)' }],
    errors: [400, 503],
  },
  {
    method: 'get',
    path: '/device/events/stream',
    summary: "A device's event stream: as GET /events/stream, filtered on the server to the intents it may read and its own device events",
    auth: true,
    ok: null,
    okType: 'text/event-stream',
    params: [...EVENT_FILTERS, { name: 'Last-Event-ID', in: 'header', schema: EVENT_ID, description: 'Resume after this event (wins over after)' }],
    errors: [400, 403, 503],
  },
  { method: 'post', path: '/changes', summary: 'Propose a change set against the current governance version (409 naming both versions on another base)', auth: true, body: 'ChangeSet', ok: 'Object', errors: [400, 403, 409], errorNotes: { 409: 'based on another version: {error, base_version, current_version}' }, errorSchemas: { 409: 'Object' } },
  { method: 'get', path: '/changes', summary: 'The admin policy, its version and every change set', auth: true, ok: 'Object', errors: [403] },
  { method: 'get', path: '/changes/{id}', summary: 'One change set, with what it waits for', auth: true, ok: 'Object', params: [CHANGE_ID], errors: [403, 404] },
  { method: 'post', path: '/changes/{id}/approve', summary: "Record an admin's signed approval or rejection; applies the change set once quorum and delay are met, and pushes it to every signer", auth: true, body: 'ChangeApproval', ok: 'Object', params: [CHANGE_ID], errors: [400, 403, 404] },
  { method: 'post', path: '/changes/{id}/apply', summary: 'Apply a change set whose delay has run since it reached quorum', auth: true, ok: 'Object', params: [CHANGE_ID], errors: [403, 404] },
  { method: 'post', path: '/webhooks', summary: 'Add a webhook endpoint; the answer holds its secret, shown this once (409 under governance: a change set adds it)', auth: true, body: 'CreateWebhookRequest', ok: 'Object', errors: [400, 409] },
  { method: 'get', path: '/webhooks', summary: 'Webhook endpoints (never their secrets)', auth: true, ok: 'Object' },
  { method: 'delete', path: '/webhooks/{id}', summary: 'Remove a webhook endpoint and its delivery records (409 under governance: a change set removes it)', auth: true, ok: 'Object', params: [WEBHOOK_ID], errors: [400, 404, 409] },
  {
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    summary: 'Deliveries newest first: attempts (time, status or error), next attempt, dead letters',
    auth: true,
    ok: 'Object',
    params: [WEBHOOK_ID, { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } }, { name: 'state', in: 'query', schema: { type: 'string', enum: ['pending', 'delivered', 'dead'] } }],
    errors: [400, 404],
  },
  { method: 'post', path: '/webhooks/{id}/deliveries/{delivery}/resend', summary: 'Send a delivery again (same webhook-id), with a fresh retry horizon', auth: true, ok: 'Object', params: [WEBHOOK_ID, DELIVERY_ID], errors: [400, 404] },
  { method: 'post', path: '/operators', summary: 'Create a named operator account (admin, operator or auditor) with its own passphrase', auth: true, body: 'CreateOperatorRequest', ok: 'Object', errors: [400] },
  { method: 'get', path: '/operators', summary: 'Operator accounts (never their passphrase hashes); the legacy passphrase is `operator`', auth: true, ok: 'Object' },
  { method: 'post', path: '/operators/{name}/disable', summary: 'Disable an operator account: it no longer unlocks and its sessions end', auth: true, ok: 'Object', params: [idParam('name', '^[a-z0-9._-]{1,64}$')], errors: [400, 404] },
  { method: 'post', path: '/api-keys', summary: 'Create an API key (initiator only, bound to agent:<name> or app:<id>); the answer holds the key, shown this once', auth: true, body: 'CreateApiKeyRequest', ok: 'Object', errors: [400] },
  { method: 'get', path: '/api-keys', summary: 'API keys (never their secrets or digests)', auth: true, ok: 'Object' },
  { method: 'post', path: '/api-keys/{id}/revoke', summary: 'Revoke an API key: it stops working at once', auth: true, ok: 'Object', params: [idParam('id', '^[0-9a-f]{16}$')], errors: [400, 404] },
  { method: 'get', path: '/openapi.json', summary: 'This document', auth: false, ok: 'Object' },
];

function clean(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _s, ...rest } = schema;
  return rest;
}

export function openApiDocument(): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(jsonSchemas())) schemas[name] = clean(s);
  const extra = { UnlockRequest: UnlockRequestSchema, SnapshotRequest: SnapshotRequestSchema, PairCreateRequest: PairCreateRequestSchema, PairClaimRequest: PairClaimRequestSchema, CreateWebhookRequest: CreateWebhookRequestSchema, DeviceChallengeRequest: DeviceChallengeRequestSchema, DeviceSessionRequest: DeviceSessionRequestSchema, CreateOperatorRequest: CreateOperatorRequestSchema, CreateApiKeyRequest: CreateApiKeyRequestSchema, SimulatePolicyRequest: SimulatePolicyRequestSchema };
  for (const [name, s] of Object.entries(extra)) schemas[name] = clean(z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>);
  schemas['Object'] = { type: 'object', additionalProperties: true };
  schemas['ObjectArray'] = { type: 'array', items: { type: 'object', additionalProperties: true } };
  const errorStatuses: Record<number, string> = { 400: 'bad request (4000), data.path names the field', 401: 'session (4100)', 403: 'refused (-32602)', 404: 'not found (4040)', 409: 'closed under governance: a change set makes this change (-32602, data.reason "governed")', 500: 'execute refused at a stage (-32602, data.stage and data.reason) or internal (-32603)', 503: 'busy: too many unlock attempts waiting (4100), or too many event streams open (-32602); data.reason "busy"' };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) {
    const responses: Record<string, unknown> = {
      '200': r.ok === null
        ? { description: 'OK', content: { [r.okType ?? 'application/json']: { schema: { type: 'string' } } } }
        : { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${r.ok}` } } } },
    };
    const errs = new Set([...(r.errors ?? []), ...(r.auth ? [401, 403] : [])]);
    for (const e of errs) responses[String(e)] = { description: r.errorNotes?.[e] ?? errorStatuses[e] ?? 'error', content: { 'application/json': { schema: { $ref: `#/components/schemas/${r.errorSchemas?.[e] ?? 'ErrorBody'}` } } } };
    const op: Record<string, unknown> = {
      summary: r.summary,
      operationId: `${r.method}${r.path.replace(/[{}]/g, '').replace(/[/.-]+(\w)/g, (_m, c: string) => c.toUpperCase())}`,
      security: r.auth ? [{ session: [] }] : [],
      responses,
    };
    if (r.params) op['parameters'] = r.params.map((p) => ({ ...p, required: p.in === 'path' }));
    if (r.body) op['requestBody'] = { required: r.path !== '/snapshot' && r.path !== '/intent/{id}/cancel', content: { 'application/json': { schema: { $ref: `#/components/schemas/${r.body}` } } } };
    if (r.deprecated) op['deprecated'] = true;
    // Who may call it (access.ts): the same table the server enforces.
    const key = `${r.method.toUpperCase()} ${r.path}` as RouteKey;
    if (r.auth) op['x-vault-roles'] = ACCESS[key] ?? [];
    (paths[r.path] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Vault control plane', version: '1.0.0', description: 'Keyless control plane: intents, policy, signed approvals, protections and execution. Loopback only.' },
    servers: [{ url: 'http://127.0.0.1:7331' }],
    components: { schemas, securitySchemes: { session: { type: 'http', scheme: 'bearer', description: 'Token from POST /session/unlock, or an API key vk_<id>_<secret> (POST /intent, GET /intent/{id})' } } },
    paths,
  };
}
