/**
 * @module @vault/driver-stellar
 * The Stellar-family ChainDriver (native multisig): Horizon reads over an injected fetch,
 * deterministic transaction building, assembly with real signature checks, submission and
 * confirmation, payload fate. The signing half is `@vault/driver-stellar/signer`; the local Horizon
 * devnet is `@vault/driver-stellar/devnet`. `createDriver` / `createSigner` are the plugin entry the
 * reference servers load from configuration (JSON options, see plugin.ts); `createProvisioner` sets
 * wallets up on the ledger (`vault provision`, see provision.ts).
 */
export { createDriver, createProvisioner, createSigner, parsePluginOptions, type StellarPluginChain, type StellarPluginOptions } from './plugin.js';
export { createStellarDriver, controlMismatch, type StellarChainConfig, type StellarDriver, type StellarDriverOptions } from './driver.js';
export { OPERATION_THRESHOLDS, STELLAR_OPERATIONS, assetOfIntent, type StellarOperationKind } from './build.js';
export {
  ACCOUNT_FLAGS,
  MEMO_TEXT_MAX_BYTES,
  NATIVE_SYMBOL,
  PROVISION_DEFAULT_FUND_STROOPS,
  SIGNER_DEFAULT_MAX_FEE_STROOPS,
  STELLAR_DECIMALS,
  STELLAR_FAMILY,
  STELLAR_NETWORKS,
  STELLAR_SIGNATURE_ENCODING,
  STELLAR_TX_FORMAT,
  TRUSTLINE_FLAGS,
  type ThresholdClass,
} from './constants.js';
// Types only: the provisioning code is loaded by createProvisioner when called.
export type { StellarProvisionerOptions } from './provision.js';
export { addressProblem, baseAccount } from './address.js';
export { fromDecimal, toDecimal } from './amounts.js';
export { issuerLocked, parseAccount, type AccountBalance, type AccountFacts, type AccountSigner, type FetchLike } from './horizon.js';
export { openPayload, parsePayload, type StellarPayload } from './payload.js';
export { opCodeString, primaryCode, resultCodesOf, resultCodesOfXdr, txCodeString, type ResultCodes } from './result-codes.js';
