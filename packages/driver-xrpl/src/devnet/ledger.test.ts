import { describe, expect, it } from 'vitest';
import { encode, encodeForMultisigning, encodeForSigning } from 'ripple-binary-codec';
import { sign as keypairSign } from 'ripple-keypairs';
import { Wallet } from 'xrpl';
import { ACCOUNT_SET_FLAGS } from '../constants.js';
import { XrplLedger } from './ledger.js';

/** A ledger on network 0 (no NetworkID) with a few funded single-sig accounts. */
function world(n = 3) {
  const ledger = new XrplLedger({ networkId: 0 });
  const wallets = Array.from({ length: n }, () => Wallet.generate());
  for (const w of wallets) ledger.genesisAccount(w.classicAddress, 100_000_000n);
  const submit = (w: Wallet, tx: Record<string, unknown>, fee = '10') => {
    const seq = ledger.account(w.classicAddress)?.sequence ?? 1;
    // Signed with ripple-keypairs directly, so xrpl.js's own validation cannot pre-empt the ledger.
    const unsigned = { Account: w.classicAddress, Fee: fee, Sequence: seq, SigningPubKey: w.publicKey, ...tx };
    const out = ledger.submit(encode({ ...unsigned, TxnSignature: keypairSign(encodeForSigning(unsigned), w.privateKey) }));
    return out.kind === 'engine' ? out.result : out.error;
  };
  return { ledger, wallets, submit };
}

describe('devnet engine', () => {
  it('SignerListSet validation, deletion and the alternative-key rule', () => {
    const { wallets, submit, ledger } = world();
    const [a, b, c] = wallets as [Wallet, Wallet, Wallet];
    const entries = (list: [string, number][]) => list.map(([Account, SignerWeight]) => ({ SignerEntry: { Account, SignerWeight } }));
    expect(submit(a, { TransactionType: 'SignerListSet', SignerQuorum: 3, SignerEntries: entries([[b.classicAddress, 1], [c.classicAddress, 1]]) })).toBe('temBAD_QUORUM');
    expect(submit(a, { TransactionType: 'SignerListSet', SignerQuorum: 1, SignerEntries: entries([[a.classicAddress, 1]]) })).toBe('temBAD_SIGNER');
    expect(submit(a, { TransactionType: 'SignerListSet', SignerQuorum: 1, SignerEntries: entries([[b.classicAddress, 1], [b.classicAddress, 1]]) })).toBe('temBAD_SIGNER');
    expect(submit(a, { TransactionType: 'SignerListSet', SignerQuorum: 1, SignerEntries: entries([[b.classicAddress, 0]]) })).toBe('temBAD_WEIGHT');
    expect(submit(a, { TransactionType: 'SignerListSet', SignerQuorum: 0 })).toBe('tecNO_ALTERNATIVE_KEY');
    expect(submit(a, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDisableMaster })).toBe('tecNO_ALTERNATIVE_KEY');
    expect(submit(a, { TransactionType: 'SignerListSet', SignerQuorum: 1, SignerEntries: entries([[b.classicAddress, 1]]) })).toBe('tesSUCCESS');
    expect(ledger.account(a.classicAddress)?.ownerCount).toBe(1);
    expect(submit(a, { TransactionType: 'SignerListSet', SignerQuorum: 0 })).toBe('tesSUCCESS');
    expect(ledger.account(a.classicAddress)?.signerList).toBeUndefined();
    expect(ledger.account(a.classicAddress)?.ownerCount).toBe(0);
  });

  it('regular keys sign for an account and for a multisigner; wrong keys are tefBAD_AUTH / tefBAD_SIGNATURE', () => {
    const { wallets, submit, ledger } = world();
    const [a, b] = wallets as [Wallet, Wallet];
    const regular = Wallet.generate();
    expect(submit(a, { TransactionType: 'SetRegularKey', RegularKey: regular.classicAddress })).toBe('tesSUCCESS');
    const seq = ledger.account(a.classicAddress)?.sequence as number;
    const viaRegular = regular.sign({ TransactionType: 'AccountSet', Account: a.classicAddress, Fee: '10', Sequence: seq } as never);
    expect(ledger.submit(viaRegular.tx_blob)).toMatchObject({ kind: 'engine', result: 'tesSUCCESS' });
    const stranger = Wallet.generate().sign({ TransactionType: 'AccountSet', Account: a.classicAddress, Fee: '10', Sequence: seq + 1 } as never);
    expect(ledger.submit(stranger.tx_blob)).toMatchObject({ result: 'tefBAD_AUTH' });

    // b's list names a; a signs with its regular key.
    expect(submit(b, { TransactionType: 'SignerListSet', SignerQuorum: 1, SignerEntries: [{ SignerEntry: { Account: a.classicAddress, SignerWeight: 1 } }] })).toBe('tesSUCCESS');
    const bSeq = ledger.account(b.classicAddress)?.sequence as number;
    const tx = { TransactionType: 'AccountSet', Account: b.classicAddress, Fee: '20', Sequence: bSeq, SigningPubKey: '' };
    const msig = (w: Wallet, account: string) => ({ Signer: { Account: account, SigningPubKey: w.publicKey, TxnSignature: keypairSign(encodeForMultisigning(tx, account), w.privateKey) } });
    // A valid signature by a key that is neither a's master nor its regular key.
    expect(ledger.submit(encode({ ...tx, Signers: [msig(Wallet.generate(), a.classicAddress)] }))).toMatchObject({ kind: 'engine', result: 'tefBAD_SIGNATURE' });
    expect(ledger.submit(encode({ ...tx, Signers: [msig(regular, a.classicAddress)] }))).toMatchObject({ result: 'tesSUCCESS' });
    // a disables its master key: its master can no longer multisign.
    expect(submit(a, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDisableMaster })).toBe('tesSUCCESS');
    const tx2 = { ...tx, Sequence: bSeq + 1 };
    const sig2 = { Signer: { Account: a.classicAddress, SigningPubKey: a.publicKey, TxnSignature: keypairSign(encodeForMultisigning(tx2, a.classicAddress), a.privateKey) } };
    expect(ledger.submit(encode({ ...tx2, Signers: [sig2] }))).toMatchObject({ result: 'tefMASTER_DISABLED' });
    // A signer that is not on the list.
    const c = Wallet.generate();
    const sig3 = { Signer: { Account: c.classicAddress, SigningPubKey: c.publicKey, TxnSignature: keypairSign(encodeForMultisigning(tx2, c.classicAddress), c.privateKey) } };
    expect(ledger.submit(encode({ ...tx2, Signers: [sig3] }))).toMatchObject({ result: 'tefBAD_SIGNATURE' });
    expect(ledger.submit(encode({ ...tx2, Signers: [{ Signer: { ...sig3.Signer, Account: b.classicAddress } }] }))).toMatchObject({ error: 'invalidTransaction', message: 'fails local checks: Invalid multisigner.' });
    expect(ledger.submit(encode({ ...tx2, SigningPubKey: a.publicKey, Signers: [sig3] }))).toMatchObject({ message: 'fails local checks: Cannot both single- and multi-sign.' });
  });

  it('XRP payments: reserve, new accounts, destination tags, fees and balance', () => {
    const { wallets, submit, ledger } = world();
    const [a, b] = wallets as [Wallet, Wallet];
    const fresh = Wallet.generate().classicAddress;
    expect(submit(a, { TransactionType: 'Payment', Destination: fresh, Amount: '999999' })).toBe('tecNO_DST_INSUF_XRP');
    expect(submit(a, { TransactionType: 'Payment', Destination: fresh, Amount: '1000000' })).toBe('tesSUCCESS');
    expect(ledger.account(fresh)?.sequence).toBe(ledger.currentLedgerIndex);
    expect(submit(a, { TransactionType: 'Payment', Destination: b.classicAddress, Amount: '99000000' })).toBe('tecUNFUNDED_PAYMENT');
    expect(submit(a, { TransactionType: 'Payment', Destination: a.classicAddress, Amount: '1' })).toBe('temREDUNDANT');
    expect(submit(b, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfRequireDest })).toBe('tesSUCCESS');
    expect(submit(a, { TransactionType: 'Payment', Destination: b.classicAddress, Amount: '1' })).toBe('tecDST_TAG_NEEDED');
    expect(submit(a, { TransactionType: 'Payment', Destination: b.classicAddress, Amount: '1', DestinationTag: 9 })).toBe('tesSUCCESS');
    expect(submit(b, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDepositAuth })).toBe('tesSUCCESS');
    expect(submit(a, { TransactionType: 'Payment', Destination: b.classicAddress, Amount: '1', DestinationTag: 9 })).toBe('notImpl');
    expect(submit(a, { TransactionType: 'AccountSet' }, '9')).toBe('telINSUF_FEE_P');
    expect(submit(a, { TransactionType: 'AccountSet', SetFlag: 10 })).toBe('notImpl');
    expect(submit(a, { TransactionType: 'AccountSet', SetFlag: 8, ClearFlag: 8 })).toBe('temINVALID_FLAG');
    expect(submit(a, { TransactionType: 'AccountSet', Flags: 0x00010000 })).toBe('temINVALID_FLAG');
    expect(submit(a, { TransactionType: 'Payment', Destination: b.classicAddress, Amount: '1', DestinationTag: 9, Flags: 0x00020000 })).toBe('notImpl');
    const big = 'ab'.repeat(1100);
    expect(submit(a, { TransactionType: 'AccountSet', Memos: [{ Memo: { MemoData: big } }] })).toBe('invalidTransaction');
    const poor = Wallet.generate();
    ledger.genesisAccount(poor.classicAddress, 5n);
    expect(submit(poor, { TransactionType: 'AccountSet' })).toBe('terINSUF_FEE_B');
    expect(ledger.submit(Wallet.generate().sign({ TransactionType: 'AccountSet', Account: Wallet.generate().classicAddress, Fee: '10', Sequence: 1 } as never).tx_blob)).toMatchObject({ kind: 'engine' });
  });

  it('trust lines: freeze, global freeze, reserve, clawback flags and limits', () => {
    const { wallets, submit, ledger } = world(4);
    const [issuer, holder, other, poor] = wallets as [Wallet, Wallet, Wallet, Wallet];
    const USD = (value: string, iss = issuer.classicAddress) => ({ currency: 'USD', issuer: iss, value });
    expect(submit(holder, { TransactionType: 'TrustSet', LimitAmount: USD('100') })).toBe('tesSUCCESS');
    expect(submit(issuer, { TransactionType: 'TrustSet', LimitAmount: USD('0', holder.classicAddress), Flags: 0x00010000 })).toBe('tefNO_AUTH_REQUIRED');
    expect(submit(issuer, { TransactionType: 'Payment', Destination: holder.classicAddress, Amount: USD('10') })).toBe('tesSUCCESS');
    expect(submit(issuer, { TransactionType: 'TrustSet', LimitAmount: USD('0', holder.classicAddress), Flags: 0x00100000 })).toBe('tesSUCCESS');
    expect(ledger.trustLine(holder.classicAddress, issuer.classicAddress, 'USD')?.frozen).toBe(true);
    expect(submit(issuer, { TransactionType: 'Payment', Destination: holder.classicAddress, Amount: USD('1') })).toBe('tecPATH_DRY');
    expect(submit(issuer, { TransactionType: 'TrustSet', LimitAmount: USD('0', holder.classicAddress), Flags: 0x00200000 })).toBe('tesSUCCESS');
    expect(submit(issuer, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfGlobalFreeze })).toBe('tesSUCCESS');
    expect(submit(holder, { TransactionType: 'Payment', Destination: issuer.classicAddress, Amount: USD('1') })).toBe('tecPATH_DRY');
    expect(submit(issuer, { TransactionType: 'AccountSet', ClearFlag: ACCOUNT_SET_FLAGS.asfGlobalFreeze })).toBe('tesSUCCESS');
    expect(submit(holder, { TransactionType: 'Payment', Destination: issuer.classicAddress, Amount: USD('1') })).toBe('tesSUCCESS');
    expect(submit(holder, { TransactionType: 'Payment', Destination: issuer.classicAddress, Amount: USD('100') })).toBe('tecPATH_PARTIAL');
    expect(submit(issuer, { TransactionType: 'Payment', Destination: holder.classicAddress, Amount: USD('1000') })).toBe('tecPATH_PARTIAL');
    // Without DefaultRipple a holder cannot pay another holder through the issuer.
    expect(submit(other, { TransactionType: 'TrustSet', LimitAmount: USD('100') })).toBe('tesSUCCESS');
    expect(submit(holder, { TransactionType: 'Payment', Destination: other.classicAddress, Amount: USD('1') })).toBe('tecPATH_DRY');
    expect(submit(holder, { TransactionType: 'TrustSet', LimitAmount: USD('50') })).toBe('tesSUCCESS');
    expect(submit(holder, { TransactionType: 'TrustSet', LimitAmount: USD('1') })).toBe('notImpl');
    expect(submit(issuer, { TransactionType: 'Clawback', Amount: USD('1', holder.classicAddress) })).toBe('tecNO_PERMISSION');
    expect(submit(issuer, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback })).toBe('tesSUCCESS');
    expect(submit(issuer, { TransactionType: 'AccountSet', ClearFlag: ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback })).toBe('tecNO_PERMISSION');
    // Owners: the holder has trust lines, so it cannot turn on RequireAuth or clawback.
    expect(submit(holder, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfRequireAuth })).toBe('tecOWNERS');
    expect(submit(holder, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback })).toBe('tecOWNERS');
    expect(submit(other, { TransactionType: 'Payment', Destination: holder.classicAddress, Amount: USD('1', other.classicAddress) })).toBe('tecPATH_DRY');
    ledger.genesisAccount(poor.classicAddress, -99_000_000n);
    expect(submit(poor, { TransactionType: 'TrustSet', LimitAmount: USD('5') })).toBe('tecNO_LINE_INSUF_RESERVE');
    expect(submit(holder, { TransactionType: 'TrustSet', LimitAmount: USD('5', Wallet.generate().classicAddress) })).toBe('tecNO_DST');
  });

  it('MPT rules: opt-in twice, unauthorize with a balance, transfers without CanTransfer, malformed creates', () => {
    const { wallets, submit, ledger } = world();
    const [issuer, h1, h2] = wallets as [Wallet, Wallet, Wallet];
    expect(submit(issuer, { TransactionType: 'MPTokenIssuanceCreate', AssetScale: 0, TransferFee: 10 })).toBe('temMALFORMED');
    const seq = ledger.account(issuer.classicAddress)?.sequence as number;
    expect(submit(issuer, { TransactionType: 'MPTokenIssuanceCreate', AssetScale: 0, MaximumAmount: '100' })).toBe('tesSUCCESS');
    const id = ledger.issuancesOf(issuer.classicAddress)[0]?.id as string;
    expect(id.slice(0, 8)).toBe(seq.toString(16).padStart(8, '0').toUpperCase());
    for (const h of [h1, h2]) expect(submit(h, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: id })).toBe('tesSUCCESS');
    expect(submit(h1, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: id })).toBe('tecDUPLICATE');
    expect(submit(issuer, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: id, Holder: h1.classicAddress })).toBe('tecNO_AUTH');
    expect(submit(issuer, { TransactionType: 'Payment', Destination: h1.classicAddress, Amount: { mpt_issuance_id: id, value: '10' } })).toBe('tesSUCCESS');
    expect(submit(h1, { TransactionType: 'Payment', Destination: h2.classicAddress, Amount: { mpt_issuance_id: id, value: '1' } })).toBe('tecNO_AUTH');
    expect(submit(h1, { TransactionType: 'Payment', Destination: issuer.classicAddress, Amount: { mpt_issuance_id: id, value: '4' } })).toBe('tesSUCCESS');
    expect(ledger.mptIssuance(id)?.outstanding).toBe(6n);
    expect(submit(h1, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: id, Flags: 1 })).toBe('tecHAS_OBLIGATIONS');
    expect(submit(h2, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: id, Flags: 1 })).toBe('tesSUCCESS');
    expect(ledger.mpToken(id, h2.classicAddress)).toBeUndefined();
    expect(submit(issuer, { TransactionType: 'Clawback', Amount: { mpt_issuance_id: id, value: '1' }, Holder: h1.classicAddress })).toBe('tecNO_PERMISSION');
    expect(submit(issuer, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: '00'.repeat(24) })).toBe('tecOBJECT_NOT_FOUND');
  });
});
