/**
 * @module client
 * Typed HTTP clients of the control plane and of a signer.
 *
 * @example
 * import { createControlPlaneClient, createSignerClient } from '@vault/sdk'
 * const cp = createControlPlaneClient({ baseUrl: 'http://127.0.0.1:7331' })
 * await cp.unlock(passphrase)
 * const signer = createSignerClient({ baseUrl: 'http://127.0.0.1:7333', token: signerToken })
 */
export {
  createControlPlaneClient,
  PAIR_ROLES,
  PairClaimRequestSchema,
  PairCreateRequestSchema,
  PairCreateResultSchema,
  type ControlPlaneClient,
  type ControlPlaneClientOptions,
  type JsonObject,
  type PairClaimRequest,
  type PairCreateRequest,
  type PairCreateResult,
  type PairRole,
} from './control-plane.js';
export {
  createSignerClient,
  SIGNER_TOKEN_HEADER,
  type SignerClient,
  type SignerClientOptions,
  type SignResult,
  type ObserveResult,
} from './signer.js';
export {
  createEventsClient,
  parseSse,
  DEFAULT_MAX_SSE_LINE_BYTES,
  type EventsClient,
  type EventsClientOptions,
  type EventsQuery,
  type FollowOptions,
} from './events.js';
export { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, type FetchLike } from './http.js';
