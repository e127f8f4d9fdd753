/**
 * @module errors
 * One error class with a stable `code`, so callers (and the CLI's exit codes) branch on the code,
 * never on message text.
 */

export type SupplyReportErrorCode =
  | 'bad_config'
  | 'bad_decimal'
  | 'bad_reply'
  | 'http'
  | 'rpc'
  | 'rate_limited'
  | 'timeout'
  | 'unsafe_endpoint'
  | 'bad_report'
  | 'bad_query';

export class SupplyReportError extends Error {
  override readonly name = 'SupplyReportError';
  constructor(
    readonly code: SupplyReportErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
