import { xdr } from '@stellar/stellar-base';
import { describe, expect, it } from 'vitest';
import { opCodeString, primaryCode, resultCodesOfXdr, txCodeString } from './result-codes.js';

const inner = (type: string, code: string) =>
  xdr.OperationResult.opInner((xdr.OperationResultTr as any)[type]((xdr as any)[`${type[0]!.toUpperCase()}${type.slice(1)}Result`][code]()));

describe('Horizon result-code strings', () => {
  it('maps transaction codes, including the irregular ones', () => {
    expect(txCodeString('txBadAuthExtra')).toBe('tx_bad_auth_extra');
    expect(txCodeString('txNoAccount')).toBe('tx_no_source_account');
    expect(txCodeString('txBadMinSeqAgeOrGap')).toBe('tx_bad_minseq_age_or_gap');
  });
  it('maps operation codes as Horizon does', () => {
    expect(opCodeString(xdr.OperationResult.opBadAuth())).toBe('op_bad_auth');
    expect(opCodeString(xdr.OperationResult.opNoAccount())).toBe('op_no_source_account');
    expect(opCodeString(inner('payment', 'paymentSrcNotAuthorized'))).toBe('op_src_not_authorized');
    expect(opCodeString(inner('createAccount', 'createAccountAlreadyExist'))).toBe('op_already_exists');
    expect(opCodeString(inner('setTrustLineFlags', 'setTrustLineFlagsNoTrustLine'))).toBe('op_no_trust');
    expect(opCodeString(inner('setTrustLineFlags', 'setTrustLineFlagsCantRevoke'))).toBe('op_cant_revoke');
    expect(opCodeString(inner('clawback', 'clawbackNotClawbackEnabled'))).toBe('op_not_clawback_enabled');
    expect(opCodeString(inner('setOptions', 'setOptionsAuthRevocableRequired'))).toBe('op_auth_revocable_required');
    expect(opCodeString(inner('changeTrust', 'changeTrustLowReserve'))).toBe('op_low_reserve');
  });
  it('gives one branchable code and survives garbage', () => {
    expect(primaryCode({ transaction: 'tx_failed', operations: ['op_success', 'op_underfunded'] })).toBe('tx_failed:op_underfunded');
    expect(primaryCode({ transaction: 'tx_failed' })).toBe('tx_failed');
    expect(primaryCode({ transaction: 'tx_bad_seq' })).toBe('tx_bad_seq');
    expect(resultCodesOfXdr('not xdr')).toBeNull();
    expect(resultCodesOfXdr('AAAAAAAAAGT////7AAAAAA==')).toEqual({ transaction: 'tx_bad_seq' });
  });
});
