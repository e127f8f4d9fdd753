/**
 * @module @vault/supply-report
 * The re-runnable supply report: `runReport` builds the document (every row with the query that
 * produced it, the ledger/slot/block it saw and the SHA-256 of the reply), `verifyReport` re-runs the
 * queries and measures drift exactly, `serveReport` publishes it with a /namespaces listing.
 */
export { parseConfig, resolveEndpoints, DEFAULT_HTTP, DEFAULT_STABLECOIN_CODES, DEFAULT_POLYGON_NOTE, CHAINS, type ReportConfig, type HttpConfig, type RateLimit, type EndpointConfig, type ChainName } from './config.js';
export { runReport, DEFAULT_RULE, type RunLog, type RunOptions } from './report.js';
export { verifyReport, verifyExitCode, formatVerdicts, parseReport, type RowVerdict, type VerifyResult, type VerifyOptions } from './verify.js';
export { serveReport, namespacesListing, DOCUMENT_PATH, type NamespacesListing, type NamespaceEntry, type ServeOptions, type RunningServer } from './serve.js';
export { SupplyReportError, type SupplyReportErrorCode } from './errors.js';
export { HttpClient, TokenBucket, Semaphore, retryAfterMs, type HttpReply, type Logger, type RequestSpec } from './http.js';
export { resolveEndpoint, scrub, stripUrl, type ResolvedEndpoint } from './redact.js';
export { parseDecimal, formatDecimal, normalizeDecimal, addDecimal, subDecimal, compareDecimal, decimalDelta, unitsToDecimal, type Decimal } from './decimal.js';
export { parseJsonExact, stringifyExact, sha256Hex } from './json.js';
export type { Change, Omission, Provenance } from './chains/common.js';
export { decodeCurrency, parseObligations, decodeDomain, countMemos, rippledResult } from './chains/xrpl.js';
export { assetSupply, assetRecords, isLocked, mergeDate, issuerAssets, groupLabel } from './chains/stellar.js';
export { parseTokenSupply, parseMintAccount, mintDelta } from './chains/solana.js';
export { decodeName, parseContractBatch, contractQuery, SELECTORS } from './chains/polygon.js';
export type { SupplyReport, XrplIssuerRow, StellarIssuerRow, SolanaMintRow, PolygonContractRow } from './report-types.js';
