/**
 * @module errors
 * One error hierarchy with stable wire codes. The codes and the signer refusal reasons are a
 * contract shared by the control plane, the signer, the clients and third-party drivers: they are
 * defined here once and tested.
 */

/** Control-plane wire error codes (interface.md "Errors"). */
export const ErrorCode = {
  BadRequest: 4000,
  Session: 4100,
  NotFound: 4040,
  Refused: -32602,
  Internal: -32603,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** HTTP status for each wire code (DESIGN.md §7). Execute refusals override -32602 with 500. */
export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.BadRequest]: 400,
  [ErrorCode.Session]: 401,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.Refused]: 403,
  [ErrorCode.Internal]: 500,
};

/** Signer refusal reasons, in the order the signer checks them (interface.md "SignerRefusal"). */
export const REFUSAL_REASONS = [
  'intent_tampered',
  'policy_mismatch',
  'approvals',
  'rejected',
  'policy_denied',
  'protected',
  'digest_mismatch',
  'not_a_signer',
  'key',
  'chain',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'number' && Object.values(ErrorCode).includes(value as ErrorCode);
}

export function isRefusalReason(value: unknown): value is RefusalReason {
  return typeof value === 'string' && (REFUSAL_REASONS as readonly string[]).includes(value);
}

export interface VaultErrorOptions {
  /** Longer explanation appended to the message. */
  details?: string | undefined;
  /** Machine-readable detail that travels as the wire body's `data`. */
  data?: Record<string, unknown> | null | undefined;
  cause?: unknown;
  /** The HTTP status the error arrived with, when it was rebuilt from a wire body. */
  status?: number | undefined;
}

/**
 * Base of every error the toolkit throws on purpose. `code` is the stable wire code a caller
 * branches on; `shortMessage` is the one-line human summary; `data` is what goes on the wire.
 *
 * @example
 * try { parseIntentRequest(body) } catch (e) {
 *   if (e instanceof VaultError && e.code === ErrorCode.BadRequest) console.log(e.data?.path)
 * }
 */
export class VaultError extends Error {
  override name = 'VaultError';
  readonly code: ErrorCode;
  readonly shortMessage: string;
  readonly details: string | undefined;
  readonly data: Record<string, unknown> | null;
  readonly status: number | undefined;

  constructor(code: ErrorCode, shortMessage: string, options: VaultErrorOptions = {}) {
    super(options.details ? `${shortMessage}\n\nDetails: ${options.details}` : shortMessage, {
      cause: options.cause,
    });
    this.code = code;
    this.shortMessage = shortMessage;
    this.details = options.details;
    this.data = options.data ?? null;
    this.status = options.status;
  }

  /** Walks the `cause` chain; returns the first error `fn` accepts, or the deepest one. */
  walk(fn?: (err: unknown) => boolean): unknown {
    let current: unknown = this;
    for (let depth = 0; depth < 32; depth++) {
      if (fn?.(current)) return current;
      const next = current instanceof Error ? current.cause : undefined;
      if (next === undefined) return fn ? null : current;
      current = next;
    }
    return fn ? null : current;
  }

  /** The wire body `{error:{code, message, data}}`. */
  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.shortMessage, data: this.data } };
  }
}

/** 4000: the input is malformed. `path` names the failing field, e.g. `operation.asset_scale`. */
export class ValidationError extends VaultError {
  override name = 'ValidationError';
  readonly path: string;
  readonly issues: readonly ValidationIssue[];

  constructor(
    what: string,
    issues: readonly ValidationIssue[],
    options: VaultErrorOptions & { shortMessage?: string } = {},
  ) {
    const first = issues[0] ?? { path: '', message: 'invalid' };
    const where = first.path === '' ? what : `${what}.${first.path}`;
    super(ErrorCode.BadRequest, options.shortMessage ?? `invalid ${where}: ${first.message}`, {
      ...options,
      data: { path: first.path, issues: issues.map((i) => ({ ...i })), ...options.data },
    });
    this.path = first.path;
    this.issues = issues;
  }
}

export interface ValidationIssue {
  /** Dotted path with numeric indices, e.g. `rules.3.addresses.0`. Empty for the root. */
  path: string;
  message: string;
}

/** 4000: a policy names a rule tag this SDK does not know. */
export class UnknownRuleError extends ValidationError {
  override name = 'UnknownRuleError';
  constructor(index: number, tag: unknown) {
    super('policy', [
      { path: `rules.${index}.rule`, message: `unknown rule ${JSON.stringify(tag)}` },
    ]);
  }
}

/** 4100: no session, an expired session, or a wrong passphrase. */
export class SessionError extends VaultError {
  override name = 'SessionError';
  constructor(shortMessage = 'session required', options: VaultErrorOptions = {}) {
    super(ErrorCode.Session, shortMessage, options);
  }
}

/** 4040: the named resource does not exist. */
export class NotFoundError extends VaultError {
  override name = 'NotFoundError';
  constructor(what: string, id: string, options: VaultErrorOptions & { shortMessage?: string } = {}) {
    super(ErrorCode.NotFound, options.shortMessage ?? `${what} not found: ${id}`, {
      ...options,
      data: { what, id, ...options.data },
    });
  }
}

/** -32602: refused by policy, a guard, a signer or a ledger. */
export class RefusedError extends VaultError {
  override name = 'RefusedError';
  constructor(shortMessage: string, options: VaultErrorOptions = {}) {
    super(ErrorCode.Refused, shortMessage, options);
  }
}

/** -32602 carrying one of the signer's refusal reasons. */
export class SignerRefusedError extends RefusedError {
  override name = 'SignerRefusedError';
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, message: string, options: VaultErrorOptions = {}) {
    super(`signer refused (${reason}): ${message}`, {
      ...options,
      data: { reason, ...options.data },
    });
    this.reason = reason;
  }

  /** The signer's HTTP 403 body `{refused:{reason}, message}`. */
  toRefusal(): SignerRefusalBody {
    return { refused: { reason: this.reason }, message: stripRefusalPrefix(this.shortMessage) };
  }
}

const REFUSAL_PREFIX = /^signer refused \([a-z_]+\): /;
function stripRefusalPrefix(message: string): string {
  return message.replace(REFUSAL_PREFIX, '');
}

/** -32603: a fault (a bug, an unreachable ledger, a corrupt store). */
export class InternalError extends VaultError {
  override name = 'InternalError';
  constructor(shortMessage: string, options: VaultErrorOptions = {}) {
    super(ErrorCode.Internal, shortMessage, options);
  }
}

/** -32603: a driver registry was asked for something it must not do (duplicate, unknown chain). */
export class DriverRegistryError extends VaultError {
  override name = 'DriverRegistryError';
  readonly reason: 'duplicate_chain' | 'unknown_chain' | 'invalid_driver';
  constructor(reason: DriverRegistryError['reason'], shortMessage: string) {
    super(reason === 'unknown_chain' ? ErrorCode.BadRequest : ErrorCode.Internal, shortMessage, {
      data: { reason },
    });
    this.reason = reason;
  }
}

/** -32603 for transport faults of the HTTP clients (connection refused, non-JSON reply). */
export class TransportError extends VaultError {
  override name = 'TransportError';
  constructor(shortMessage: string, options: VaultErrorOptions = {}) {
    super(ErrorCode.Internal, shortMessage, options);
  }
}

export interface ErrorBody {
  error: { code: number; message: string; data: Record<string, unknown> | null };
}

export interface SignerRefusalBody {
  refused: { reason: RefusalReason };
  message: string;
}

/** HTTP status for an error, as both services map it (DESIGN.md §7). Unknown errors are 500. */
export function httpStatusOf(err: unknown): number {
  if (err instanceof VaultError) return HTTP_STATUS_BY_CODE[err.code];
  return 500;
}

/**
 * Maps any thrown value to the wire body without leaking internals: a VaultError keeps its code
 * and data; anything else becomes -32603 "internal error" with no message from the fault.
 */
export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof VaultError) return err.toBody();
  return { error: { code: ErrorCode.Internal, message: 'internal error', data: null } };
}

/**
 * Rebuilds a typed error from a wire body (used by the HTTP clients): each wire code comes back
 * as its own class with `data` and the HTTP `status` kept. A -32602 carrying a signer refusal
 * reason is a SignerRefusedError when it came from a signer: straight from one (no `stage`) or
 * relayed by the control plane's execute at stage `signers`; any other stage is a RefusedError.
 */
export function errorFromBody(body: ErrorBody, status?: number): VaultError {
  const { code, message, data } = body.error;
  const base = { data: data ?? undefined, status };
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  switch (code) {
    case ErrorCode.BadRequest: {
      const raw = Array.isArray(data?.['issues']) ? (data['issues'] as unknown[]) : [];
      const issues = raw
        .filter((i): i is ValidationIssue => typeof (i as ValidationIssue)?.path === 'string' && typeof (i as ValidationIssue)?.message === 'string')
        .map((i) => ({ path: i.path, message: i.message }));
      const path = str(data?.['path']) ?? '';
      return new ValidationError('request', issues.length > 0 ? issues : [{ path, message }], { ...base, shortMessage: message });
    }
    case ErrorCode.Session:
      return new SessionError(message, base);
    case ErrorCode.NotFound:
      return new NotFoundError(str(data?.['what']) ?? 'resource', str(data?.['id']) ?? '', { ...base, shortMessage: message });
    case ErrorCode.Refused: {
      const reason = data?.['reason'];
      const stage = data?.['stage'];
      if (isRefusalReason(reason) && (stage === undefined || stage === 'signers')) {
        return new SignerRefusedError(reason, stripRefusalPrefix(message), base);
      }
      return new RefusedError(message, base);
    }
    case ErrorCode.Internal:
      return new InternalError(message, base);
    default:
      return new TransportError(`unknown error code ${code}: ${message}`, base);
  }
}
