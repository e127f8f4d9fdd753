/**
 * @module @vault/server/signer
 * The signer service: holds the keys, re-verifies everything a SignRequest carries against its own
 * trust file, clock and history, rebuilds the payload with its own driver, and signs only that.
 * Entry points: `createSignerApp(deps)` (the HTTP routes), `verifyAndSign(request, deps)` (the
 * checks, in-process), `startSigner(options)` (a whole process), the software keystore behind the
 * `KeyBackend` interface, the PKCS#11 backend (`Pkcs11Backend`: keys in a YubiHSM 2, a cloud HSM or
 * SoftHSM2), and the trust-file schema.
 */
export { createSignerApp, SIGN_BODY_LIMIT, DEFAULT_RECEIPTS_LIMIT, MAX_RECEIPTS_LIMIT, type SignerAppDeps } from './app.js';
export { applyRestrictions, describeRestrictions, liftRestrictions, MAX_RESTRICTIONS_IN_FORCE, type LiftSelector } from './restrictions.js';
export { verifyAndSign, summarize, describeKeys, type SignerDeps, type SignOutcome } from './sign.js';
export { observeIntent, type ObserveDeps, type ObserveOutcome } from './observe.js';
/** Re-exported from the SDK (its one minor-units formatter), where it used to be defined. */
export { formatUnits } from '@vault/sdk';
export {
  SoftwareKeystore,
  KeystoreError,
  KeyFileSchema,
  KeyScopeSchema,
  DEFAULT_KDF,
  createKey,
  sealKey,
  openKey,
  softwareSigningKey,
  generateSecret,
  publicKeyOf,
  keyIdOf,
  scopeAllows,
  loadOrCreateReceiptKey,
  type KeyBackend,
  type KeyInfo,
  type KeyScope,
  type KeyFile,
  type KdfParams,
} from './keystore.js';
export {
  Pkcs11Backend,
  Pkcs11ConfigSchema,
  loadPkcs11Config,
  readPin,
  backendNameOf,
  generateTokenKey,
  importTokenKey,
  listTokenKeys,
  privateKeyAttributes,
  finishSecp256k1,
  type Pkcs11Config,
  type Pkcs11BackendName,
  type TokenKey,
} from './pkcs11.js';
export {
  TrustFileSchema,
  DriversConfigSchema,
  DriverModuleSchema,
  parseTrust,
  loadTrust,
  sameDescriptor,
  trustFileJsonSchema,
  restrictedTrust,
  type Trust,
  type TrustFile,
  type DriversConfig,
  type DriverModuleConfig,
} from './trust.js';
export { SignerState, StateEventSchema, type StateEvent, type SignedPayload } from './state.js';
export { loadDriverModules, resolveModule, type LoadedDrivers } from './drivers.js';
export { startSigner, resolveToken, type StartSignerOptions, type RunningSigner } from './serve.js';
