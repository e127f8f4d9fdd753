/**
 * @module @vault/driver-xrpl
 * The XRPL-family ChainDriver (native multisig) for the vault toolkit: keyless building, assembly,
 * submission, confirmation, payload fate and reads over JSON-RPC. The signing half is
 * `@vault/driver-xrpl/signer`, the wallet provisioner `@vault/driver-xrpl/provision`, the local
 * ledger `@vault/driver-xrpl/devnet`. `createDriver`, `createSigner` and `createProvisioner` are the
 * plugin entry the reference servers and `vault provision` load from JSON configuration; the last
 * two import their code only when called, so a control plane that loads this entry loads no
 * signing code.
 */
export { createDriver, createProvisioner, createSigner, parsePluginOptions, type XrplPluginChain, type XrplPluginOptions } from './plugin.js';
// Types only: the provisioner (it generates and signs with a set-up key) is `@vault/driver-xrpl/provision`,
// loaded by createProvisioner when called.
export type { XrplProvisionerOptions } from './provision.js';
export { confirmUntilFinal, createXrplDriver, tickerOf, type XrplChainConfig, type XrplChainParams, type XrplDriver, type XrplDriverOptions, type XrplIssuerFacts } from './driver.js';
export { buildTransaction, memosOf, resolveAsset, resolveDestination, signingHash, type TxJson, type XrplAsset, type XrplPayload } from './build.js';
export { assembleMultisig, contributionProblem, ledgerPublicKey, multisigningData, payloadOf, signersArray } from './multisig.js';
export { classifySubmit, parseTxResult, resultClass, type ParsedTx, type ResultClass } from './results.js';
export { rpcCall, rpcError, type FetchLike, type RpcResult, type XrplTransport } from './rpc.js';
export {
  compareAccountIds,
  currencyName,
  minorUnitsToValue,
  mptIssuanceId,
  parseMptIssuanceId,
  sha512Half,
  toCurrencyCode,
} from './util.js';
export * from './constants.js';
