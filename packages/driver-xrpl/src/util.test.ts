import { describe, expect, it } from 'vitest';
import { classifySubmit, parseTxResult, resultClass } from './results.js';
import { currencyName, dropsToXrpText, formatScaled, minorUnitsToValue, mptIssuanceId, parseMptIssuanceId, parseScaled, shortAddress, toCurrencyCode } from './util.js';

describe('util', () => {
  it('minorUnitsToValue is exact and refuses more than 16 significant digits', () => {
    expect(minorUnitsToValue('1500', 2)).toBe('15');
    expect(minorUnitsToValue('1', 6)).toBe('0.000001');
    expect(minorUnitsToValue('1234', 0)).toBe('1234');
    expect(minorUnitsToValue('1000000000000000000000', 2)).toBe('10000000000000000000');
    expect(() => minorUnitsToValue('12345678901234567', 2)).toThrow(RangeError);
  });
  it('parseScaled and formatScaled round-trip rippled values, including exponents', () => {
    expect(parseScaled('1.5', 2)).toBe(150n);
    expect(parseScaled('-0.25', 2)).toBe(-25n);
    expect(parseScaled('1e-2', 2)).toBe(1n);
    expect(parseScaled('1234567890123456e-30', 30)).toBe(1234567890123456n);
    expect(parseScaled('0.001', 2)).toBeNull();
    expect(parseScaled('abc', 2)).toBeNull();
    expect(parseScaled('.', 2)).toBeNull();
    expect(formatScaled(-150n, 2)).toBe('-1.5');
    expect(formatScaled(100n, 2)).toBe('1');
    expect(dropsToXrpText('1500000')).toBe('1.5');
  });
  it('currency codes: 3 characters, 40 hex, names of 4-20 characters; XRP refused', () => {
    expect(toCurrencyCode('USD')).toBe('USD');
    expect(toCurrencyCode('XRP')).toBeNull();
    expect(toCurrencyCode('RLUSD')).toBe('524C555344000000000000000000000000000000');
    expect(toCurrencyCode('524c555344000000000000000000000000000000')).toBe('524C555344000000000000000000000000000000');
    expect(toCurrencyCode('0000000000000000000000005852500000000000')).toBeNull();
    expect(toCurrencyCode('a b')).toBeNull();
    expect(currencyName('524C555344000000000000000000000000000000')).toBe('RLUSD');
    expect(currencyName('01C3000000000000000000000000000000000000')).toBeNull();
    expect(currencyName('nothex')).toBeNull();
  });
  it('MPT issuance ids round-trip', () => {
    const id = mptIssuanceId(7, 'rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQC');
    expect(parseMptIssuanceId(id)).toEqual({ sequence: 7, issuer: 'rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQC' });
    expect(parseMptIssuanceId('zz')).toBeNull();
    expect(shortAddress('rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQC')).toBe('rEuLyB…GJQC');
    expect(shortAddress('rShort')).toBe('rShort');
  });
  it('engine results are classified by prefix', () => {
    expect(resultClass('tesSUCCESS')).toBe('tes');
    expect(resultClass('invalidTransaction')).toBe('error');
    expect(classifySubmit('tecPATH_DRY')).toEqual({ accepted: true, retriable: false });
    expect(classifySubmit('terQUEUED')).toEqual({ accepted: true, retriable: false });
    expect(classifySubmit('terPRE_SEQ')).toEqual({ accepted: false, retriable: true });
    expect(classifySubmit('telINSUF_FEE_P')).toEqual({ accepted: false, retriable: true });
    expect(classifySubmit('temMALFORMED')).toEqual({ accepted: false, retriable: false });
    expect(classifySubmit('telREQUIRES_NETWORK_ID')).toEqual({ accepted: false, retriable: false });
    expect(parseTxResult({ tx: { hash: 'AB' }, metaData: { TransactionResult: 'tecX' } })).toMatchObject({ hash: 'AB', validated: false, result: 'tecX', ledgerIndex: null });
  });
});
