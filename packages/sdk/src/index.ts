/**
 * @module @vault/sdk
 * The wire contract of the vault (runtime schemas, canonical JSON, content-addressed ids), the
 * policy engine, the protection guards, signed approvals, hash-chained receipts, the ChainDriver
 * plugin interface with its registry, and typed HTTP clients for the control plane and the signer.
 * The driver conformance suite and an in-memory reference driver live in `@vault/sdk/testing`.
 */
export * from './errors.js';
export * from './schemas/index.js';
export { canonicalize, MAX_CANONICAL_DEPTH } from './canonical.js';
export { sha256Hex, toHex, fromHex, utf8Bytes, timingSafeEqual } from './encoding.js';
export { deepFreeze } from './validated.js';
export {
  normalizeIntent,
  intentId,
  policyDigest,
  approvalMessage,
  APPROVAL_DOMAIN,
  DEFAULT_ASSET_DECIMALS,
  DEFAULT_INITIATOR,
  type ApprovalStatement,
} from './digest.js';
export { verifyEd25519, verifyEd25519Async, signEd25519, ed25519Signer, ed25519PublicKey, generateEd25519KeyPair } from './ed25519.js';
export * from './approvals.js';
export {
  passkeyChallenge,
  verifyPasskeyAssertion,
  parseRegistration,
  registeredPasskeyProblem,
  RegisteredPasskeySchema,
  ApproverPasskeySchema,
  WebAuthnOriginSchema,
  type PasskeyAssertion,
  type PasskeyFailure,
  type PasskeyProblem,
  type PasskeyRegistration,
  type RegisteredPasskey,
} from './webauthn.js';
export * from './statements.js';
export * from './restrictions.js';
export * from './governance.js';
export * from './lifetime.js';
export * from './cancel.js';
export { parseInitiator, formatIdentity, sameIdentity, isInitiator, approverIdentity, INITIATOR_RE, KEY_BINDING_RE, ACTOR_RE, type Identity } from './identity.js';
export { destinationAccount, normalizeDestination } from './destination.js';
export { deviceSessionMessage, DEVICE_SESSION_DOMAIN } from './device-session.js';
export { formatUnits } from './units.js';
export * from './receipts.js';
export * from './events.js';
export * from './webhooks.js';
export * from './policy/index.js';
export * from './guards.js';
export * from './driver/index.js';
export * from './client/index.js';
export * from './sql.js';
