/**
 * What the ledger refuses, each with the ledger's own result code, and what the driver and signer
 * refuse before anything reaches it.
 */
import { Account, Asset, FeeBumpTransaction, Keypair, Operation, Transaction, TransactionBuilder, xdr } from '@stellar/stellar-base';
import { afterAll, describe, expect, it } from 'vitest';
import { RefusedError, SignerRefusedError, ValidationError, normalizeIntent, type Contribution } from '@vault/sdk';
import { createSoftwareKey } from '@vault/sdk/testing';
import { STELLAR_NETWORKS, createStellarDriver } from '../src/index.js';
import { createStellarSigner } from '../src/signer.js';
import { startDevnet } from '../src/devnet/index.js';
import { CHAIN, buildSignAssemble, driverFor, gOf, multisigWallet, plainAccount, signerFor, submitClassic, trust } from './helpers.js';

let clock = Math.floor(Date.now() / 1000);
const devnet = await startDevnet({ clock: () => clock });
afterAll(() => devnet.close());
const driver = driverFor(devnet, { timeoutPolls: 3 });
const signer = signerFor(devnet);

/** Envelope of `built` with the given decorated signatures attached, in that order. */
function withSignatures(txXdr: string, sigs: { hint: string; hex: string }[]): string {
  const env = xdr.TransactionEnvelope.fromXDR(txXdr, 'base64');
  env.v1().signatures(sigs.map((s) => new xdr.DecoratedSignature({ hint: Buffer.from(s.hint, 'hex'), signature: Buffer.from(s.hex, 'hex') })));
  return env.toXDR('base64');
}
const sigOf = (c: Contribution) => ({ hint: String((c.signature as { hint?: string }).hint), hex: c.signature.hex });

describe('signatures the ledger refuses', () => {
  it('wrong network passphrase: the driver refuses the Horizon, and signatures made under it fail as tx_bad_auth', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const wrongConfig = { horizonUrl: devnet.url, networkPassphrase: STELLAR_NETWORKS['stellar:testnet'] };
    const wrong = createStellarDriver({ chains: { [CHAIN]: wrongConfig } });
    await expect(wrong.fetchParams({ wallet: w.wallet })).rejects.toThrow(RefusedError);
    await expect(wrong.fetchParams({ wallet: w.wallet })).rejects.toThrow(/configured for "Test SDF Network/);
    // Bypass the driver's check: build and sign under the testnet passphrase, submit to the devnet.
    const params = await driver.fetchParams({ wallet: w.wallet });
    const built = wrong.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount: '5' }), wallet: w.wallet, params });
    const wrongSigner = createStellarSigner({ chains: { [CHAIN]: { networkPassphrase: wrongConfig.networkPassphrase } } });
    const cs = await Promise.all([0, 1].map((i) => wrongSigner.signPayload({ built, key: w.keys[i]!, signerAddress: w.wallet.control.kind === 'native_multisig' ? w.wallet.control.signers[i]!.address : '' })));
    const assembled = wrong.assemble({ built, contributions: cs, wallet: w.wallet });
    expect(assembled.ok).toBe(true);
    if (!assembled.ok) return;
    const out = await driver.submit({ chain: CHAIN, blob: assembled.blob });
    expect(out).toMatchObject({ status: 'rejected', code: 'tx_bad_auth', retriable: false });
    // And our own signer will not sign a payload for another network than its chain's.
    await expect(signer.signPayload({ built, key: w.keys[0]!, signerAddress: gOf(w.keys[0]!) })).rejects.toMatchObject({ reason: 'chain' });
  });

  it('an extra signature (a third member, or an outsider) fails the whole transaction as tx_bad_auth_extra', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const r = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '5' }, [0, 1, 2]);
    // All three are valid and counted, but the driver attaches only what the ledger will use.
    expect(r.assembled).toMatchObject({ ok: true, weight: 3, quorum: 2 });
    if (r.assembled.ok) expect(xdr.TransactionEnvelope.fromXDR(r.assembled.blob, 'base64').v1().signatures()).toHaveLength(2);
    const all = withSignatures((r.built.payload as { tx_xdr: string }).tx_xdr, r.contributions.map(sigOf));
    expect(await driver.submit({ chain: CHAIN, blob: all })).toMatchObject({ status: 'rejected', code: 'tx_bad_auth_extra' });
    const outsider = createSoftwareKey();
    const stranger = await signer.signPayload({ built: r.built, key: outsider, signerAddress: gOf(outsider) });
    const plusStranger = withSignatures((r.built.payload as { tx_xdr: string }).tx_xdr, [...r.contributions.slice(0, 2).map(sigOf), sigOf(stranger)]);
    expect(await driver.submit({ chain: CHAIN, blob: plusStranger })).toMatchObject({ status: 'rejected', code: 'tx_bad_auth_extra' });
    expect(devnet.ledger.transaction(r.built.digest)).toBeUndefined();
    if (!r.assembled.ok) return;
    expect(await driver.submit({ chain: CHAIN, blob: r.assembled.blob })).toMatchObject({ status: 'submitted' });
  });

  it('under threshold: tx_bad_auth at the source low threshold, op_bad_auth at the operation threshold', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const r = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '5' }, [0]);
    expect(r.assembled).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: 1, quorum: 2 });
    const one = withSignatures((r.built.payload as { tx_xdr: string }).tx_xdr, [sigOf(r.contributions[0]!)]);
    expect(await driver.submit({ chain: CHAIN, blob: one })).toMatchObject({ status: 'rejected', code: 'tx_bad_auth' });
    // A looser account (low 1, medium 2): one signature passes the transaction check, not the payment's.
    const loose = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, low: 1 });
    const looseParams = await driver.fetchParams({ wallet: loose.wallet });
    expect(looseParams).toMatchObject({ thresholds: { low: 1, med: 2, high: 2 } });
    // The driver knows a payment needs the medium threshold: one signature is short of it.
    const pay = await buildSignAssemble(driver, signer, loose, { destination: dest.publicKey(), amount: '5' }, [0]);
    expect(pay.built.payload).toMatchObject({ threshold: 'medium', needed_weight: 2 });
    expect(pay.assembled).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: 1, quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const src = loose.address;
    const tx = new TransactionBuilder(new Account(src, devnet.ledger.account(src)!.seq.toString()), { fee: '100', networkPassphrase: devnet.networkPassphrase, timebounds: { minTime: 0, maxTime: (params as { max_time: number }).max_time } })
      .addOperation(Operation.payment({ destination: dest.publicKey(), asset: Asset.native(), amount: '1' }))
      .build();
    const sig = await loose.keys[0]!.sign(tx.hash());
    tx.signatures.push(new xdr.DecoratedSignature({ hint: Buffer.from(loose.keys[0]!.publicKey.subarray(28)), signature: Buffer.from(sig) }));
    const res = await driver.submit({ chain: CHAIN, blob: tx.toEnvelope().toXDR('base64') });
    expect(res).toMatchObject({ status: 'rejected', code: 'tx_failed:op_bad_auth' });
  });

  it('with low 1 < medium 2, a low-class op carrying the quorum\'s two signatures is tx_bad_auth_extra; the driver attaches one', async () => {
    const loose = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, low: 1, flags: 0x3 });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'LOW', loose.address);
    const build = () =>
      new TransactionBuilder(new Account(loose.address, devnet.ledger.account(loose.address)!.seq.toString()), { fee: '100', networkPassphrase: devnet.networkPassphrase })
        .addOperation(Operation.setTrustLineFlags({ trustor: holder.publicKey(), asset: new Asset('LOW', loose.address), flags: { authorized: true } }))
        .setTimeout(0)
        .build();
    const two = build();
    for (const k of loose.keys.slice(0, 2)) two.signatures.push(new xdr.DecoratedSignature({ hint: Buffer.from(k.publicKey.subarray(28)), signature: Buffer.from(await k.sign(two.hash())) }));
    expect(await driver.submit({ chain: CHAIN, blob: two.toEnvelope().toXDR('base64') })).toMatchObject({ status: 'rejected', code: 'tx_bad_auth_extra' });
    const one = build();
    const k = loose.keys[0]!;
    one.signatures.push(new xdr.DecoratedSignature({ hint: Buffer.from(k.publicKey.subarray(28)), signature: Buffer.from(await k.sign(one.hash())) }));
    expect(await driver.submit({ chain: CHAIN, blob: one.toEnvelope().toXDR('base64') })).toMatchObject({ status: 'submitted' });
    expect(devnet.ledger.trustLine(holder.publicKey(), 'LOW', loose.address)?.flags).toBe(1);
    // Through the driver: given the quorum's two contributions, assemble attaches only the one the
    // low threshold needs, and the ledger takes it.
    const revoke = await buildSignAssemble(
      driver,
      signer,
      loose,
      { destination: holder.publicKey(), amount: '0', asset_symbol: 'LOW', asset_issuer: loose.address, asset_decimals: 7, operation: { op: 'authorize_holder', revoke: true } },
      [0, 1],
    );
    expect(revoke.built.payload).toMatchObject({ threshold: 'low', needed_weight: 1 });
    expect(revoke.assembled).toMatchObject({ ok: true, weight: 2, quorum: 1 });
    if (!revoke.assembled.ok) return;
    expect(xdr.TransactionEnvelope.fromXDR(revoke.assembled.blob, 'base64').v1().signatures()).toHaveLength(1);
    expect(await driver.submit({ chain: CHAIN, blob: revoke.assembled.blob })).toMatchObject({ status: 'submitted' });
    expect(devnet.ledger.trustLine(holder.publicKey(), 'LOW', loose.address)?.flags).toBe(0);
  });

  it('a high-threshold operation (adding a signer) signed at medium weight fails as op_bad_auth', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, high: 3 });
    const src = w.address;
    const tx = new TransactionBuilder(new Account(src, devnet.ledger.account(src)!.seq.toString()), { fee: '100', networkPassphrase: devnet.networkPassphrase })
      .addOperation(Operation.setOptions({ signer: { ed25519PublicKey: Keypair.random().publicKey(), weight: 1 } }))
      .setTimeout(0)
      .build();
    for (const k of w.keys.slice(0, 2)) {
      tx.signatures.push(new xdr.DecoratedSignature({ hint: Buffer.from(k.publicKey.subarray(28)), signature: Buffer.from(await k.sign(tx.hash())) }));
    }
    expect(await driver.submit({ chain: CHAIN, blob: tx.toEnvelope().toXDR('base64') })).toMatchObject({ status: 'rejected', code: 'tx_failed:op_bad_auth' });
    expect(devnet.ledger.account(src)!.signers).toHaveLength(3);
  });

  it('a signature with the right hint but wrong bytes is not counted (hint, then bytes)', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const r = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '5' }, [0, 1]);
    const forged = r.contributions.map(sigOf);
    forged[1] = { hint: forged[1]!.hint, hex: forged[0]!.hex };
    const blob = withSignatures((r.built.payload as { tx_xdr: string }).tx_xdr, forged);
    expect(await driver.submit({ chain: CHAIN, blob })).toMatchObject({ status: 'rejected', code: 'tx_bad_auth' });
    const badHint = { ...r.contributions[1]!, signature: { ...r.contributions[1]!.signature, hint: '00000000' } };
    const a = driver.assemble({ built: r.built, contributions: [r.contributions[0]!, badHint], wallet: w.wallet });
    expect(a).toMatchObject({ ok: false, invalid: [{ index: 1, reason: 'bad_signature', detail: expect.stringMatching(/hint/) }] });
  });

  it('a descriptor whose signer weighs more than the ledger allows (256) is refused at assembly, not counted as 255', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const r = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '5' }, [0, 1]);
    if (w.wallet.control.kind !== 'native_multisig') throw new Error('native only');
    const heavy = { ...w.wallet, control: { ...w.wallet.control, signers: w.wallet.control.signers.map((m, i) => (i === 0 ? { ...m, weight: 256 } : m)) } };
    expect(() => driver.assemble({ built: r.built, contributions: r.contributions, wallet: heavy })).toThrow(ValidationError);
    expect(() => driver.assemble({ built: r.built, contributions: r.contributions, wallet: heavy })).toThrow(/at most 255/);
  });
});

describe('sequence, time bounds, fees and what the devnet does not model', () => {
  it('bad sequence: a second transaction on the same sequence is tx_bad_seq, and confirm calls it dead', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const params = await driver.fetchParams({ wallet: w.wallet });
    const mk = async (amount: string) => {
      const built = driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount }), wallet: w.wallet, params });
      const cs = await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: w.keys[i]!, signerAddress: gOf(w.keys[i]!) })));
      const a = driver.assemble({ built, contributions: cs, wallet: w.wallet });
      if (!a.ok) throw new Error('short');
      return { built, a };
    };
    const first = await mk('10');
    const second = await mk('11');
    expect(await driver.submit({ chain: CHAIN, blob: first.a.blob })).toMatchObject({ status: 'submitted' });
    expect(await driver.submit({ chain: CHAIN, blob: second.a.blob })).toMatchObject({ status: 'rejected', code: 'tx_bad_seq', retriable: false });
    expect(await driver.confirm({ chain: CHAIN, txHash: second.a.txHash, built: second.built })).toMatchObject({ status: 'failed', code: 'tx_bad_seq', dead: true });
  });

  it('expired time bounds: tx_too_late; a transaction lost after a 504 is dead once the ledger passes max_time', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const params = await driver.fetchParams({ wallet: w.wallet });
    const stale = { ...params, max_time: clock - 1 };
    const built = driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount: '10' }), wallet: w.wallet, params: stale });
    const cs = await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: w.keys[i]!, signerAddress: gOf(w.keys[i]!) })));
    const a = driver.assemble({ built, contributions: cs, wallet: w.wallet });
    if (!a.ok) throw new Error('short');
    expect(await driver.submit({ chain: CHAIN, blob: a.blob })).toMatchObject({ status: 'rejected', code: 'tx_too_late' });

    const fresh = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '12' }, [0, 1]);
    if (!fresh.assembled.ok) throw new Error('short');
    devnet.faults.submitDrop = 1;
    expect(await driver.submit({ chain: CHAIN, blob: fresh.assembled.blob })).toMatchObject({ status: 'submitted', code: 'tx_pending' });
    expect(await driver.confirm({ chain: CHAIN, txHash: fresh.assembled.txHash, built: fresh.built })).toMatchObject({ status: 'pending' });
    clock += 10_000; // the ledger moves past max_time without it
    await submitClassic(devnet, dest.publicKey(), [Operation.bumpSequence({ bumpTo: '0' })], [dest]).catch(() => undefined);
    const friend = Keypair.random();
    await devnet.fund(friend.publicKey()); // closes a ledger at the new time
    expect(await driver.confirm({ chain: CHAIN, txHash: fresh.assembled.txHash, built: fresh.built })).toMatchObject({ status: 'failed', code: 'tx_too_late', dead: true });
    expect(devnet.ledger.transaction(fresh.assembled.txHash)).toBeUndefined();
    clock -= 10_000;
  });

  it('a 504 that the ledger did apply is looked up by hash and reported submitted', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const r = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '13' }, [0, 1]);
    if (!r.assembled.ok) throw new Error('short');
    devnet.faults.submitTimeout = 1;
    expect(await driver.submit({ chain: CHAIN, blob: r.assembled.blob })).toMatchObject({ status: 'submitted', code: 'tx_success' });
    expect(devnet.ledger.transaction(r.assembled.txHash)?.successful).toBe(true);
  });

  it('unauthorized trust line: op_not_authorized when paying into it', async () => {
    const issuer = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, flags: 0x3 });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'AUTH', issuer.address);
    const r = await buildSignAssemble(driver, signer, issuer, { destination: holder.publicKey(), amount: '1', asset_symbol: 'AUTH', asset_issuer: issuer.address, asset_decimals: 7, operation: { op: 'issue' } }, [0, 1]);
    if (!r.assembled.ok) throw new Error('short');
    expect(await driver.submit({ chain: CHAIN, blob: r.assembled.blob })).toMatchObject({ status: 'rejected', code: 'tx_failed:op_not_authorized' });
    // Failed at apply: the fee and the sequence are consumed and the failure is on the ledger.
    expect(devnet.ledger.transaction(r.assembled.txHash)).toMatchObject({ successful: false, resultCodes: { transaction: 'tx_failed', operations: ['op_not_authorized'] } });
    expect(devnet.ledger.trustLine(holder.publicKey(), 'AUTH', issuer.address)?.balance).toBe(0n);
  });

  it('fails closed: fee bumps (tx_not_supported), unmodelled operations (op_not_supported), low fees, garbage', async () => {
    const a = await plainAccount(devnet);
    const data = await submitClassic(devnet, a.publicKey(), [Operation.manageData({ name: 'k', value: 'v' })], [a]);
    expect((data.body['extras'] as { result_codes: unknown }).result_codes).toEqual({ transaction: 'tx_failed', operations: ['op_not_supported'] });
    const inner = new TransactionBuilder(new Account(a.publicKey(), devnet.ledger.account(a.publicKey())!.seq.toString()), { fee: '100', networkPassphrase: devnet.networkPassphrase })
      .addOperation(Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: '1' }))
      .setTimeout(0)
      .build();
    inner.sign(a);
    const bump = TransactionBuilder.buildFeeBumpTransaction(a, '200', inner, devnet.networkPassphrase) as FeeBumpTransaction;
    bump.sign(a);
    expect(await driver.submit({ chain: CHAIN, blob: bump.toEnvelope().toXDR('base64') })).toMatchObject({ status: 'rejected', code: 'tx_not_supported' });
    const cheap = new TransactionBuilder(new Account(a.publicKey(), devnet.ledger.account(a.publicKey())!.seq.toString()), { fee: '99', networkPassphrase: devnet.networkPassphrase })
      .addOperation(Operation.payment({ destination: a.publicKey(), asset: Asset.native(), amount: '1' }))
      .setTimeout(0)
      .build();
    cheap.sign(a);
    expect(await driver.submit({ chain: CHAIN, blob: cheap.toEnvelope().toXDR('base64') })).toMatchObject({ status: 'rejected', code: 'tx_insufficient_fee', retriable: true });
    const res = await fetch(`${devnet.url}/transactions`, { method: 'POST', body: 'tx=AAAA', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'https://stellar.org/horizon-errors/transaction_malformed' });
    expect(() => new Transaction('AAAA', devnet.networkPassphrase)).toThrow();
    await expect(driver.submit({ chain: CHAIN, blob: 'AAAA' })).rejects.toThrow(ValidationError);
  });
});

describe('driver and signer refusals', () => {
  it('fetchParams refuses a descriptor the ledger does not match (weights, members, quorum)', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const control = w.wallet.control as { signers: { address: string; weight: number }[]; quorum: number };
    const variants = [
      { ...w.wallet, control: { ...w.wallet.control, quorum: 3 } },
      { ...w.wallet, control: { ...w.wallet.control, signers: control.signers.map((s, i) => (i === 0 ? { ...s, weight: 2 } : s)) } },
      { ...w.wallet, control: { ...w.wallet.control, signers: control.signers.slice(0, 2) } },
    ];
    for (const v of variants) await expect(driver.fetchParams({ wallet: v as typeof w.wallet })).rejects.toMatchObject({ data: { reason: 'control_mismatch' } });
    await expect(driver.fetchParams({ wallet: { ...w.wallet, control: { ...w.wallet.control, address: Keypair.random().publicKey() } } as typeof w.wallet })).rejects.toThrow(/not found/);
  });

  it('the signer refuses a tampered digest, a foreign chain and a key that is not the signer', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const built = driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: Keypair.random().publicKey(), amount: '5' }), wallet: w.wallet, params });
    const tampered = { ...built, digest: '00'.repeat(32) };
    await expect(signer.signPayload({ built: tampered, key: w.keys[0]!, signerAddress: gOf(w.keys[0]!) })).rejects.toMatchObject({ reason: 'digest_mismatch' });
    const other = createStellarSigner({ chains: { 'stellar:testnet': { networkPassphrase: STELLAR_NETWORKS['stellar:testnet'] } } });
    await expect(other.signPayload({ built, key: w.keys[0]!, signerAddress: gOf(w.keys[0]!) })).rejects.toMatchObject({ reason: 'chain' });
    await expect(signer.signPayload({ built, key: w.keys[0]!, signerAddress: gOf(w.keys[1]!) })).rejects.toBeInstanceOf(SignerRefusedError);
    expect(() => driver.assemble({ built: tampered, contributions: [], wallet: w.wallet })).toThrow(ValidationError);
  });
});
