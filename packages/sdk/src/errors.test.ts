import { describe, expect, it } from 'vitest';
import {
  DriverRegistryError,
  ErrorCode,
  errorFromBody,
  HTTP_STATUS_BY_CODE,
  httpStatusOf,
  InternalError,
  isErrorCode,
  isRefusalReason,
  NotFoundError,
  RefusedError,
  REFUSAL_REASONS,
  SessionError,
  SignerRefusedError,
  toErrorBody,
  TransportError,
  UnknownRuleError,
  ValidationError,
  VaultError,
} from './errors.js';

describe('wire codes are a contract', () => {
  it('has exactly the spec codes and their HTTP statuses', () => {
    expect(ErrorCode).toEqual({ BadRequest: 4000, Session: 4100, NotFound: 4040, Refused: -32602, Internal: -32603 });
    expect(HTTP_STATUS_BY_CODE).toEqual({ 4000: 400, 4100: 401, 4040: 404, [-32602]: 403, [-32603]: 500 });
  });
  it('has exactly the spec refusal reasons in check order', () => {
    expect(REFUSAL_REASONS).toEqual(['intent_tampered', 'policy_mismatch', 'approvals', 'rejected', 'policy_denied', 'protected', 'digest_mismatch', 'not_a_signer', 'key', 'chain']);
    expect(isRefusalReason('key')).toBe(true);
    expect(isRefusalReason('nope')).toBe(false);
    expect(isErrorCode(4040)).toBe(true);
    expect(isErrorCode(4041)).toBe(false);
  });
});

describe('error classes', () => {
  it.each([
    [new ValidationError('intent', [{ path: 'amount', message: 'bad' }]), 4000, 400, 'ValidationError'],
    [new UnknownRuleError(2, 'fly'), 4000, 400, 'UnknownRuleError'],
    [new SessionError(), 4100, 401, 'SessionError'],
    [new NotFoundError('intent', 'int_x'), 4040, 404, 'NotFoundError'],
    [new RefusedError('no'), -32602, 403, 'RefusedError'],
    [new SignerRefusedError('digest_mismatch', 'rebuilt digest differs'), -32602, 403, 'SignerRefusedError'],
    [new InternalError('boom'), -32603, 500, 'InternalError'],
    [new DriverRegistryError('duplicate_chain', 'dup'), -32603, 500, 'DriverRegistryError'],
    [new DriverRegistryError('unknown_chain', 'unknown'), 4000, 400, 'DriverRegistryError'],
    [new TransportError('down', { status: 502 }), -32603, 500, 'TransportError'],
  ])('%s has its code, status and name', (err, code, status, name) => {
    expect(err).toBeInstanceOf(VaultError);
    expect(err.code).toBe(code);
    expect(httpStatusOf(err)).toBe(status);
    expect(err.name).toBe(name);
    expect(toErrorBody(err).error.code).toBe(code);
  });

  it('ValidationError names the path in message and data', () => {
    const e = new ValidationError('intent', [{ path: 'operation.asset_scale', message: 'must be 0..19' }]);
    expect(e.message).toBe('invalid intent.operation.asset_scale: must be 0..19');
    expect(e.path).toBe('operation.asset_scale');
    expect(e.toBody()).toEqual({ error: { code: 4000, message: e.message, data: { path: 'operation.asset_scale', issues: [{ path: 'operation.asset_scale', message: 'must be 0..19' }] } } });
    expect(new UnknownRuleError(3, 'x').path).toBe('rules.3.rule');
  });

  it('details and cause are kept; walk finds the root cause', () => {
    const root = new Error('socket hang up');
    const e = new TransportError('request failed', { details: 'POST /sign', cause: new InternalError('wrapped', { cause: root }) });
    expect(e.message).toContain('Details: POST /sign');
    expect(e.walk()).toBe(root);
    expect(e.walk((x) => x instanceof InternalError)).toBeInstanceOf(InternalError);
    expect(e.walk((x) => x instanceof SessionError)).toBeNull();
  });

  it('unknown faults become -32603 without leaking their message', () => {
    expect(toErrorBody(new Error('db password is hunter2'))).toEqual({ error: { code: -32603, message: 'internal error', data: null } });
    expect(httpStatusOf('weird')).toBe(500);
  });

  it('SignerRefusedError renders the signer 403 body', () => {
    expect(new SignerRefusedError('protected', 'guard blocked').toRefusal()).toEqual({ refused: { reason: 'protected' }, message: 'guard blocked' });
  });
});

describe('errorFromBody', () => {
  it.each([
    [4000, { path: 'amount' }, VaultError],
    [4100, null, SessionError],
    [4040, null, VaultError],
    [-32602, { reason: 'approvals' }, SignerRefusedError],
    [-32602, { stage: 'guards' }, RefusedError],
    [-32603, null, InternalError],
    [9999, null, TransportError],
  ])('code %i becomes a typed error', (code, data, cls) => {
    const e = errorFromBody({ error: { code, message: 'm', data } }, 500);
    expect(e).toBeInstanceOf(cls);
    if (code !== 9999) expect(e.code).toBe(code);
    if (code === 4000) expect((e as unknown as { path: string }).path).toBe('amount');
    if (data) expect(e.data).toMatchObject(data);
  });
});

describe('errorFromBody keeps the classes callers branch on', () => {
  it('4000 is a ValidationError with the wire path and issues', () => {
    const e = errorFromBody({ error: { code: 4000, message: 'invalid intent.amount: bad', data: { path: 'amount', issues: [{ path: 'amount', message: 'bad' }] } } }, 400);
    expect(e).toBeInstanceOf(ValidationError);
    expect((e as ValidationError).path).toBe('amount');
    expect(e.shortMessage).toBe('invalid intent.amount: bad');
    expect(e.status).toBe(400);
  });
  it('4040 is a NotFoundError', () => {
    const e = errorFromBody({ error: { code: 4040, message: 'intent not found: int_x', data: { what: 'intent', id: 'int_x' } } }, 404);
    expect(e).toBeInstanceOf(NotFoundError);
    expect(e.shortMessage).toBe('intent not found: int_x');
  });
  it('a signer refusal does not get its prefix twice', () => {
    const sent = new SignerRefusedError('digest_mismatch', 'rebuilt digest differs');
    const e = errorFromBody(sent.toBody(), 403) as SignerRefusedError;
    expect(e).toBeInstanceOf(SignerRefusedError);
    expect(e.shortMessage).toBe(sent.shortMessage);
    expect(e.toRefusal()).toEqual(sent.toRefusal());
  });
  it('a guard refusal at another stage is not mistaken for a signer refusal', () => {
    const e = errorFromBody({ error: { code: -32602, message: 'blocked', data: { stage: 'protections', reason: 'protected' } } }, 500);
    expect(e).toBeInstanceOf(RefusedError);
    expect(e).not.toBeInstanceOf(SignerRefusedError);
    const relayed = errorFromBody({ error: { code: -32602, message: 'signer s1 refused', data: { stage: 'signers', reason: 'policy_mismatch' } } }, 500);
    expect(relayed).toBeInstanceOf(SignerRefusedError);
  });
});
