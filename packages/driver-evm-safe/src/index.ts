/**
 * @module @vault/driver-evm-safe
 * The keyless EVM ChainDriver over a Safe v1.4.1 multi-owner contract: chain params (chain id,
 * Safe nonce), guard facts (code, token symbol, burned token owner), the SafeTx payload whose
 * digest is the EIP-712 safeTxHash, assembly of owner signatures sorted by owner, submission of
 * execTransaction through a gas-paying executor (an injected viem account or an external
 * relayer), confirmation by receipt and the Safe's ExecutionSuccess / ExecutionFailure events,
 * payloadFate by the Safe's nonce history, balances and the Safe's owners, threshold and nonce.
 * `createDriver` / `createSigner` are the plugin entry the reference servers load from JSON
 * configuration; `createProvisioner` deploys a wallet's Safe (`vault provision`). The signing half is
 * `@vault/driver-evm-safe/signer`, the provisioner `@vault/driver-evm-safe/provision`, the local
 * chain `@vault/driver-evm-safe/devnet`; createSigner and createProvisioner import theirs only when
 * called, so a control plane that loads this entry loads no signing code.
 */
export {
  createDriver,
  createProvisioner,
  createSigner,
  parseEvmSafePluginOptions,
  type EvmChainOptions,
  type EvmExecutorOptions,
  type EvmSafePluginOptions,
} from './plugin.js';
export { EXECUTION_FAILURE, EXECUTION_SUCCESS, executionEvent, nonceRecord, type ExecutionLog, type NonceRecord, type SafeHistory } from './fate.js';
export {
  BURNED_OWNERS,
  EVM_FINALITIES,
  ERC20_ABI,
  SAFE_REVERT_CODES,
  SIGNER_DEFAULT_MAX_FEE_WEI,
  createEvmSafeDriver,
  decodeSymbol,
  revertReason,
  type EvmChainConfig,
  type EvmExecutor,
  type EvmFinality,
  type EvmSafeDriver,
  type EvmSafeDriverOptions,
} from './driver.js';
export {
  SAFE_ABI,
  SAFE_BLOB_FORMAT,
  SAFE_SIGNATURE_ENCODING,
  SAFE_TX_FORMAT,
  SAFE_TX_TYPES,
  ZERO_ADDRESS,
  checkedPayload,
  compareAddresses,
  encodeExecTransaction,
  parseSafeBlob,
  parseSafePayload,
  payloadDigest,
  safeTxHash,
  type SafeBlob,
  type SafePayload,
  type SafePayloadOp,
  type SafeTx,
} from './safe-tx.js';
export { EVM_FAMILY, chainIdOf, evmAddressProblem } from './chains.js';
export { compressPublicKey, publicKeyToEvmAddress, recoverEvmAddress } from './secp256k1.js';
// Types only: the provisioner (it generates and signs with a deployer key) is
// `@vault/driver-evm-safe/provision`, loaded by createProvisioner when called.
export type { EvmSafeProvisionerOptions } from './provision.js';
export { PROVISION_SALT_DOMAIN, SAFE_V141_ADDRESSES, encodeSetup, predictSafeAddress, provisionSaltNonce } from './safe-deploy.js';
export {
  DEFAULT_SAFE_VERSION,
  identifySingleton,
  knownSingletons,
  parseSafeVersion,
  safeContracts,
  SAFE_VERSIONS,
  type KnownSingleton,
  type SafeContracts,
  type SafeVersion,
} from './versions.js';
export { FALLBACK_HANDLER_SLOT, GUARD_SLOT, MAX_MODULES, MODULE_GUARD_SLOT, readSafeConfig, type SafeConfig } from './safe-config.js';
