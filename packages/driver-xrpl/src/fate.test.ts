import { describe, expect, it } from 'vitest';
import { TransportError } from '@vault/sdk';
import { decode } from 'ripple-binary-codec';
import { hashes, Wallet } from 'xrpl';
import { signingHash } from './build.js';
import { fateOfUsed, ledgerTxOf, serializableTx } from './fate.js';
import { parseTxResult } from './results.js';

const wallet = Wallet.fromSeed('snoPBrXtMeMyMHUVTgbuqAfg1SUTb');
const tx = { TransactionType: 'Payment', Account: wallet.classicAddress, Destination: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', Amount: '1000', Fee: '12', Sequence: 7, LastLedgerSequence: 30 };
const signed = wallet.sign(tx as never);
const hash = hashes.hashSignedTx(signed.tx_blob);
const { TxnSignature: _sig, SigningPubKey: _key, ...unsigned } = decode(signed.tx_blob) as Record<string, unknown>;
const digest = signingHash({ ...unsigned, SigningPubKey: '' });

describe('fate helpers', () => {
  it('serializableTx maps API v2 DeliverMax back to Amount and drops server fields', () => {
    const v2 = { tx_json: { ...tx, Amount: undefined, DeliverMax: '1000', date: 1, ctid: 'C0' }, hash: 'AB' };
    expect(serializableTx(parseTxResult(v2))).toEqual({ ...tx });
    expect(serializableTx(parseTxResult({ tx_json: { ...tx, DeliverMax: '1000' } }))).toEqual({ ...tx });
    expect(() => serializableTx(parseTxResult({ tx_json: { ...tx, DeliverMax: '999' }, hash: 'AB' }))).toThrow(TransportError);
  });

  it('ledgerTxOf checks the recorded hash and gives the multisig signing hash of the payload', () => {
    const entry = { tx_json: { ...(unsigned as object), SigningPubKey: _key, TxnSignature: _sig }, hash, ledger_index: 9, validated: true, meta: { TransactionResult: 'tesSUCCESS' } };
    const t = ledgerTxOf(entry);
    expect(t).toMatchObject({ hash, ledgerIndex: 9, validated: true, result: 'tesSUCCESS', account: wallet.classicAddress, sequence: 7, digest });
    expect(() => ledgerTxOf({ ...entry, hash: '00'.repeat(32) })).toThrow(/does not re-encode to its hash/);
    expect(() => ledgerTxOf({ ...entry, tx_json: { ...entry.tx_json, Bogus: 1 } })).toThrow(/does not re-encode/);
  });

  it('fateOfUsed: same payload tes applied, tec dead with its code, other result throws; another payload dead', () => {
    const used = { hash, ledgerIndex: 9, result: 'tesSUCCESS', validated: true, account: wallet.classicAddress, sequence: 7, digest };
    expect(fateOfUsed(digest.toUpperCase(), used, 7)).toMatchObject({ fate: 'applied', code: 'applied' });
    expect(fateOfUsed(digest, { ...used, result: 'tecPATH_DRY' }, 7)).toMatchObject({ fate: 'dead', code: 'tecPATH_DRY' });
    expect(() => fateOfUsed(digest, { ...used, result: null }, 7)).toThrow(TransportError);
    expect(() => fateOfUsed(digest, { ...used, result: 'terQUEUED' }, 7)).toThrow(TransportError);
    expect(fateOfUsed('00'.repeat(32), used, 7)).toMatchObject({ fate: 'dead', code: 'sequence_consumed' });
  });
});
