/**
 * @module @vault/sdk/testing
 * The ChainDriver conformance suite every driver package runs, the in-memory reference ledger,
 * driver and signer (with fault injection) that the toolkit's own tests use, and `entryGraph` /
 * `expectLoadedLazily`, which check that a built driver entry loads no signing code eagerly.
 * Needs vitest (an optional peer dependency) for `describeChainDriver` and `expectLoadedLazily`.
 */
export {
  conformanceChecks,
  describeChainDriver,
  type ConformanceCapabilities,
  type ConformanceCheck,
  type ConformanceFixture,
  type ConformanceGroup,
  type ConformanceOptions,
  type OperationCase,
  operationCase,
  type IndependentReader,
} from './conformance.js';
export { entryGraph, expectLoadedLazily, type EntryGraph } from './entry-graph.js';
export {
  MEMORY_FAMILY,
  createMemoryDriver,
  createMemorySigner,
  createSoftwareKey,
  memoryWallet,
  type MemoryDriver,
  type MemoryDriverOptions,
  type MemorySigner,
  type MemorySignerOptions,
  type MemoryWallet,
  type MemoryWalletOptions,
} from './memory-driver.js';
export {
  MEMORY_BASE_FEE,
  MEMORY_DEFAULT_MAX_FEE,
  MEMORY_EXPIRY_LEDGERS,
  MEMORY_NATIVE,
  MEMORY_REJECT_CODES,
  MEMORY_SIGNATURE_ENCODING,
  MEMORY_TX_FORMAT,
  MemoryLedger,
  decodeMemoryBlob,
  encodeMemoryBlob,
  memoryAddress,
  memoryAddressProblem,
  memoryDigest,
  txHashOfBlob,
  type MemoryAccount,
  type MemoryEnvelope,
  type MemoryLedgerFaults,
  type MemoryLedgerOptions,
  type MemoryParamsInfo,
  type MemoryPayload,
  type MemoryRejectCode,
  type MemoryRpc,
  type MemorySignature,
  type MemorySubmitOutcome,
  type MemoryTxRecord,
  type MemoryTxStatus,
  type SignerList,
} from './memory-ledger.js';
export { createSoftwarePasskey, type CeremonyOptions, type SoftwarePasskey, type SoftwarePasskeyOptions } from './passkey.js';
