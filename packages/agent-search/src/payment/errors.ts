/**
 * @module payment/errors
 * Error classes and the short failure codes the payment layer sends to callers.
 *
 * Expected refusals (no payment, a bad signature, a replay) are values the middleware turns into a
 * 402 with a code; exceptions are for faults and for configuration that cannot work. Codes are a
 * wire contract: a client branches on them, so they are constants here and tested.
 */

/** Codes in the JSON error body of a 402/400/503 answered by the payment layer itself. */
export const PAYMENT_CODES = {
  /** No PAYMENT-SIGNATURE header: the normal first step of the flow. */
  paymentRequired: 'payment_required',
  /** The header is not base64 JSON of an x402 v2 payment payload with an EIP-3009 authorization. */
  invalidPaymentHeader: 'invalid_payment_header',
  /** The payload was signed for other terms (route, price, asset, payee, network) than this call's. */
  requirementsMismatch: 'payment_requirements_mismatch',
  /** The payload names another resource (route, or search mode) than the one called. */
  resourceMismatch: 'payment_resource_mismatch',
  /** Another request carrying the same authorization is being served right now. */
  inProgress: 'payment_in_progress',
  /** This authorization was already settled (or its settlement was attempted): sign a new one. */
  alreadyUsed: 'payment_already_used',
  /** The facilitator could not be reached or answered garbage; nothing was run or charged. */
  facilitatorUnavailable: 'facilitator_unavailable',
  /** The answer was ready but the transfer failed; the answer is withheld and nothing was charged. */
  settlementFailed: 'settlement_failed',
  /** Too many authorizations in flight to track safely; retry later. */
  busy: 'payment_busy',
  /** Payment is not configured: the paid routes are not live (descriptor status ABSENT). */
  paymentAbsent: 'payment_absent',
  /** A query parameter that sets the price (search `mode`) is invalid: refused before any payment. */
  invalidParameter: 'invalid_parameter',
} as const;

export type PaymentCode = (typeof PAYMENT_CODES)[keyof typeof PAYMENT_CODES];

/** Base class: a stable `code`, a one-line `shortMessage`, and the field at fault when there is one. */
export class AgentSearchError extends Error {
  override name = 'AgentSearchError';
  readonly code: string;
  readonly field: string | undefined;
  readonly shortMessage: string;
  constructor(code: string, message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.field = options.field;
    this.shortMessage = message;
  }
}

/** A configuration value (flag, env var or option) is missing or malformed. Never carries the value of a secret. */
export class ConfigError extends AgentSearchError {
  override name = 'ConfigError';
  constructor(field: string, message: string) {
    super('invalid_config', `${field}: ${message}`, { field });
  }
}

/** The paying client refused to sign: over the per-call maximum, the total budget, or an asset it does not trust. */
export class SpendLimitError extends AgentSearchError {
  override name = 'SpendLimitError';
}

const MAX_CODE = 64;
const MAX_MESSAGE = 200;

/**
 * Reduces a failure reason from a facilitator or a chain client to something safe to show a caller:
 * a snake_case code of at most 64 characters and one line of at most 200 characters.
 *
 * Why: viem errors run to kilobytes and quote the full calldata (signature included) and the RPC
 * URL; a caller needs the reason, not the transcript. Long hex runs (signatures, calldata, keys)
 * are cut out; addresses (40 hex digits) stay because they say whose balance or which token.
 *
 * @example
 * trimReason('invalid_exact_evm_payload_signature', 'The signature ... 0xabc...')
 * // => { code: 'invalid_exact_evm_payload_signature', message: 'The signature ... 0x…' }
 */
export function trimReason(code: unknown, message?: unknown, fallback = 'payment_failed'): { code: string; message: string } {
  let c = typeof code === 'string' ? code.trim().toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '') : '';
  if (c.length === 0) c = fallback;
  c = c.slice(0, MAX_CODE);
  let m = typeof message === 'string' ? message : message instanceof Error ? message.message : '';
  m = (m.split(/\r?\n/).find((line) => line.trim().length > 0) ?? '').trim();
  // 64+ hex digits: hashes, signatures, calldata, private keys. None of them helps the caller.
  m = m.replace(/0x[0-9a-fA-F]{64,}/g, '0x…').replace(/\b[0-9a-fA-F]{64,}\b/g, '…');
  // URLs may carry RPC credentials in their path or query.
  m = m.replace(/\bhttps?:\/\/\S+/g, '<url>');
  m = m.replace(/\s+/g, ' ');
  if (m.length === 0) m = c.replace(/_/g, ' ');
  if (m.length > MAX_MESSAGE) m = `${m.slice(0, MAX_MESSAGE - 1)}…`;
  return { code: c, message: m };
}
