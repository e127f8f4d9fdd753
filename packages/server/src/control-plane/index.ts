/**
 * @module @vault/server/control-plane
 * The keyless vault control plane: state file, durable intent and receipt store, sessions,
 * pairing, the execute pipeline, and its HTTP app. Drivers are injected or loaded by module name
 * from the state file; this code never imports a driver by name.
 */
export { ControlPlane, loadDrivers, publicIntent, STATE_FILE, STATE_SCHEMA_FILE, PASSPHRASE_FILE, RECEIPT_KEY_FILE, STORE_DIR, PAIRING_TTL_SECONDS, type ControlPlaneOptions } from './service.js';
export { createControlPlaneApp, logPath, type ControlPlaneAppOptions } from './app.js';
export { openApiDocument, ROUTES } from './openapi.js';
export { initStateDir, startControlPlane, type InitOptions, type RunningControlPlane } from './run.js';
export {
  StateFileSchema,
  DeviceSchema,
  SignerEndpointSchema,
  DriverEntrySchema,
  parseState,
  readStateFile,
  writeStateFile,
  stateJsonSchema,
  emptyState,
  type StateFile,
  type StateFileInput,
  type Device,
} from './state.js';
export { SessionStore, SESSION_IDLE_SECONDS, SESSION_ABSOLUTE_SECONDS } from './sessions.js';
export { IntentStore, type IntentRecord } from './store.js';
export { ExecuteRefusedError, EXECUTE_STAGES, type ExecuteStage } from './errors.js';
export { hashPassphrase, verifyPassphrase, ReceiptSigner } from './secrets.js';
export type { EventFeed } from './webhooks/feed.js';
export type { WebhooksConfig, WebhookEndpoint } from './webhooks/config.js';
