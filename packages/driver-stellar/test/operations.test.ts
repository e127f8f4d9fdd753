/**
 * Every operation the driver builds, end to end on the devnet, checked through the devnet's own
 * state (devnet.ledger), never through the driver.
 */
import { Asset, Keypair, Operation } from '@stellar/stellar-base';
import { afterAll, describe, expect, it } from 'vitest';
import { RefusedError, ValidationError, normalizeIntent, protectChainFacts } from '@vault/sdk';
import { ACCOUNT_FLAGS, TRUSTLINE_FLAGS } from '../src/index.js';
import { startDevnet } from '../src/devnet/index.js';
import { CHAIN, buildSignAssemble, driverFor, multisigWallet, plainAccount, signerFor, submitClassic, trust } from './helpers.js';

const devnet = await startDevnet();
afterAll(() => devnet.close());
const driver = driverFor(devnet);
const signer = signerFor(devnet);
const D = { asset_decimals: 7 } as const;

async function run(w: Awaited<ReturnType<typeof multisigWallet>>, request: Parameters<typeof buildSignAssemble>[3], indexes = [0, 1]) {
  const r = await buildSignAssemble(driver, signer, w, request, indexes);
  if (!r.assembled.ok) throw new Error(`short: ${JSON.stringify(r.assembled)}`);
  const submitted = await driver.submit({ chain: CHAIN, blob: r.assembled.blob });
  const confirmed = await driver.confirm({ chain: CHAIN, txHash: r.assembled.txHash, built: r.built });
  return { ...r, submitted, confirmed };
}

const issuerFlags = ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_revocable | ACCOUNT_FLAGS.auth_clawback_enabled;

describe('transfer', () => {
  it('moves a credit asset CODE:ISSUER from a 2-of-3 wallet', async () => {
    const issuer = await plainAccount(devnet);
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, trust: [{ code: 'USD', issuer: issuer.publicKey() }] });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'USD', issuer.publicKey());
    const pay = await submitClassic(devnet, issuer.publicKey(), [Operation.payment({ destination: w.address, asset: new Asset('USD', issuer.publicKey()), amount: '50' })], [issuer]);
    expect(pay.status).toBe(200);
    const out = await run(w, { destination: holder.publicKey(), amount: '200000000', asset_symbol: 'USD', asset_issuer: issuer.publicKey(), ...D });
    expect(out.submitted).toMatchObject({ status: 'submitted', code: 'tx_success' });
    expect(out.confirmed).toMatchObject({ status: 'confirmed' });
    expect(devnet.ledger.trustLine(holder.publicKey(), 'USD', issuer.publicKey())?.balance).toBe(200_000_000n);
    expect(devnet.ledger.trustLine(w.address, 'USD', issuer.publicKey())?.balance).toBe(300_000_000n);
    const balances = await driver.balances({ wallet: w.wallet });
    expect(balances.find((b) => b.asset === `USD:${issuer.publicKey()}`)).toMatchObject({ amount: '300000000', symbol: 'USD', decimals: 7, flags: { authorized: true } });
  });

  it('accepts CODE:ISSUER in asset_issuer and a muxed M… destination (credited to its G… account)', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const muxed = `${dest.publicKey()}`;
    const { MuxedAccount, Account } = await import('@stellar/stellar-base');
    const m = new MuxedAccount(new Account(muxed, '0'), '42').accountId();
    const before = devnet.ledger.nativeBalance(dest.publicKey());
    const out = await run(w, { destination: m, amount: '777' });
    expect(out.confirmed.status).toBe('confirmed');
    expect(devnet.ledger.nativeBalance(dest.publicKey()) - before).toBe(777n);
    const params = await driver.fetchParams({ wallet: w.wallet });
    const b1 = driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount: '1', asset_symbol: 'USD', asset_issuer: `USD:${dest.publicKey()}`, ...D }), wallet: w.wallet, params });
    const b2 = driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount: '1', asset_symbol: 'USD', asset_issuer: dest.publicKey(), ...D }), wallet: w.wallet, params });
    expect(b1.digest).toBe(b2.digest);
  });

  it('refuses decimals other than 7 for credit assets, an issuer-less credit asset and a self transfer', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1], quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const build = (req: object) => () => driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: Keypair.random().publicKey(), amount: '5', ...req }), wallet: w.wallet, params });
    expect(build({ asset_symbol: 'USD', asset_issuer: Keypair.random().publicKey() })).toThrow(/asset_decimals must be 7/);
    expect(build({ asset_symbol: 'USD' })).toThrow(/needs asset_issuer/);
    expect(build({ asset_symbol: 'XLM', asset_decimals: 6 })).toThrow(/stroops/);
    expect(build({ amount: '0' })).toThrow(ValidationError);
    expect(() => driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: w.address, amount: '5' }), wallet: w.wallet, params })).toThrow(/wallet itself/);
  });
});

describe('issue, authorize_holder, clawback (the wallet is the issuer)', () => {
  it('authorize_holder (low threshold) lets an auth_required asset be issued; revoke deauthorizes', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, flags: issuerFlags });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'GOLD', w.address);
    expect(devnet.ledger.trustLine(holder.publicKey(), 'GOLD', w.address)?.flags).toBe(TRUSTLINE_FLAGS.clawback_enabled); // unauthorized
    const asset = { asset_symbol: 'GOLD', asset_issuer: w.address, ...D };

    const refused = await run(w, { destination: holder.publicKey(), amount: '10', ...asset, operation: { op: 'issue' } });
    expect(refused.submitted).toMatchObject({ status: 'rejected', code: 'tx_failed:op_not_authorized', retriable: false });
    expect(refused.confirmed).toMatchObject({ status: 'failed', code: 'tx_failed:op_not_authorized', dead: true });

    const auth = await run(w, { destination: holder.publicKey(), amount: '0', ...asset, operation: { op: 'authorize_holder' } });
    expect(auth.built.payload).toMatchObject({ threshold: 'low', op: 'authorize_holder' });
    expect(auth.confirmed.status).toBe('confirmed');
    expect(devnet.ledger.trustLine(holder.publicKey(), 'GOLD', w.address)?.flags).toBe(TRUSTLINE_FLAGS.authorized | TRUSTLINE_FLAGS.clawback_enabled);

    const issued = await run(w, { destination: holder.publicKey(), amount: '1000', ...asset, operation: { op: 'issue' } });
    expect(issued.confirmed.status).toBe('confirmed');
    expect(devnet.ledger.trustLine(holder.publicKey(), 'GOLD', w.address)?.balance).toBe(1000n);

    const clawed = await run(w, { destination: holder.publicKey(), amount: '300', ...asset, operation: { op: 'clawback' } });
    expect(clawed.confirmed.status).toBe('confirmed');
    expect(devnet.ledger.trustLine(holder.publicKey(), 'GOLD', w.address)?.balance).toBe(700n);

    const revoked = await run(w, { destination: holder.publicKey(), amount: '0', ...asset, operation: { op: 'authorize_holder', revoke: true } });
    expect(revoked.confirmed.status).toBe('confirmed');
    expect((devnet.ledger.trustLine(holder.publicKey(), 'GOLD', w.address)?.flags ?? 0) & TRUSTLINE_FLAGS.authorized).toBe(0);
    // A deauthorized holder cannot send the asset on: the ledger's own code.
    const back = await submitClassic(devnet, holder.publicKey(), [Operation.payment({ destination: w.address, asset: new Asset('GOLD', w.address), amount: '0.0000001' })], [holder]);
    expect(back.status).toBe(400);
    expect((back.body['extras'] as { result_codes: unknown }).result_codes).toEqual({ transaction: 'tx_failed', operations: ['op_src_not_authorized'] });

    // Horizon's /assets buckets and the issuer facts agree with the ledger.
    const assets = (await (await fetch(`${devnet.url}/assets?asset_code=GOLD&asset_issuer=${w.address}`)).json()) as { _embedded: { records: Record<string, unknown>[] } };
    expect(assets._embedded.records[0]).toMatchObject({ asset_code: 'GOLD', accounts: { unauthorized: 1 }, balances: { unauthorized: '0.0000700' }, flags: { auth_required: true, auth_clawback_enabled: true } });
    expect(await driver.issuerState({ chain: CHAIN, issuer: w.address })).toMatchObject({ exists: true, locked: false });
    const ops = (await (await fetch(`${devnet.url}/accounts/${w.address}/operations?order=asc&limit=200`)).json()) as { _embedded: { records: { type: string }[] } };
    expect(ops._embedded.records.map((o) => o.type)).toEqual(['create_account', 'set_options', 'set_options', 'set_options', 'set_options', 'set_options', 'set_trust_line_flags', 'payment', 'clawback', 'set_trust_line_flags']);
  });

  it('clawback fails closed on a trust line created before clawback was enabled', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'SILV', w.address);
    const asset = { asset_symbol: 'SILV', asset_issuer: w.address, ...D };
    expect((await run(w, { destination: holder.publicKey(), amount: '50', ...asset, operation: { op: 'issue' } })).confirmed.status).toBe('confirmed');
    const c = await run(w, { destination: holder.publicKey(), amount: '5', ...asset, operation: { op: 'clawback' } });
    expect(c.submitted).toMatchObject({ status: 'rejected', code: 'tx_failed:op_not_clawback_enabled' });
    expect(devnet.ledger.trustLine(holder.publicKey(), 'SILV', w.address)?.balance).toBe(50n);
  });

  it('issue, authorize_holder and clawback need the wallet to be the issuer', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1], quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const other = Keypair.random().publicKey();
    for (const op of ['issue', 'authorize_holder', 'clawback'] as const) {
      expect(() =>
        driver.buildPayload({
          intent: normalizeIntent({ wallet: w.wallet.wallet, destination: Keypair.random().publicKey(), amount: '1', asset_symbol: 'X', asset_issuer: other, ...D, operation: { op } }),
          wallet: w.wallet,
          params,
        }),
      ).toThrow(/must be the issuer/);
    }
  });
});

describe('account_flags (setOptions set/clear, medium threshold)', () => {
  it('sets and clears flags; the ledger refuses clawback without revocable and any change once immutable', async () => {
    const w = await multisigWallet(devnet, { weights: [2, 1, 1], quorum: 3 });
    const dest = w.address;
    const set = await run(w, { destination: dest, amount: '0', operation: { op: 'account_flags', set: ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_revocable } }, [0, 1]);
    expect(set.built.payload).toMatchObject({ threshold: 'medium' });
    expect(set.confirmed.status).toBe('confirmed');
    expect(devnet.ledger.account(w.address)?.flags).toBe(3);
    const clear = await run(w, { destination: dest, amount: '0', operation: { op: 'account_flags', clear: ACCOUNT_FLAGS.auth_revocable } }, [0, 2]);
    expect(clear.confirmed.status).toBe('confirmed');
    expect(devnet.ledger.account(w.address)?.flags).toBe(1);
    const clawback = await run(w, { destination: dest, amount: '0', operation: { op: 'account_flags', set: ACCOUNT_FLAGS.auth_clawback_enabled } }, [0, 1]);
    expect(clawback.submitted).toMatchObject({ status: 'rejected', code: 'tx_failed:op_auth_revocable_required' });
    const immutable = await run(w, { destination: dest, amount: '0', operation: { op: 'account_flags', set: ACCOUNT_FLAGS.auth_immutable } }, [0, 1]);
    expect(immutable.confirmed.status).toBe('confirmed');
    const locked = await run(w, { destination: dest, amount: '0', operation: { op: 'account_flags', clear: ACCOUNT_FLAGS.auth_required } }, [0, 1]);
    expect(locked.submitted).toMatchObject({ status: 'rejected', code: 'tx_failed:op_cant_change' });
    expect(devnet.ledger.account(w.address)?.flags).toBe(ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_immutable);
  });

  it('refuses unknown bits, overlapping set/clear and an empty change', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1], quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const build = (operation: { op: 'account_flags'; set?: number; clear?: number }) => () =>
      driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: w.address, amount: '0', operation }), wallet: w.wallet, params });
    expect(build({ op: 'account_flags', set: 0x10 })).toThrow(ValidationError);
    expect(build({ op: 'account_flags', clear: 0x20 })).toThrow(ValidationError);
    expect(build({ op: 'account_flags', set: 1, clear: 1 })).toThrow(/both set and cleared/);
    expect(build({ op: 'account_flags', set: 0 })).toThrow(/non-zero/);
  });
});

describe('memo and refused operations', () => {
  it('carries a text memo of up to 28 UTF-8 bytes and refuses 29', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const memo = 'é'.repeat(14); // 28 bytes, 14 characters
    const out = await run(w, { destination: dest.publicKey(), amount: '10', memo });
    expect(out.confirmed.status).toBe('confirmed');
    expect(devnet.ledger.transaction(out.built.digest)).toMatchObject({ memoType: 'text', memo });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const tooLong = () => driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount: '10', memo: `${memo}a` }), wallet: w.wallet, params });
    expect(tooLong).toThrow(/at most 28 bytes/);
    try {
      tooLong();
    } catch (e) {
      expect((e as ValidationError).path).toBe('memo');
    }
  });

  it('refuses mpt_create and contract_call with a RefusedError that says why', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1], quorum: 2 });
    const params = await driver.fetchParams({ wallet: w.wallet });
    const build = (operation: object) => () =>
      driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: w.address, amount: '1', operation: operation as never }), wallet: w.wallet, params });
    expect(build({ op: 'mpt_create', asset_scale: 2, flags: 0x20 })).toThrow(RefusedError);
    expect(build({ op: 'mpt_create', asset_scale: 2, flags: 0x20 })).toThrow(/no multi-purpose tokens/);
    expect(build({ op: 'contract_call', data_hex: '0xa9059cbb' })).toThrow(/Soroban invocations are not modelled/);
  });
});

describe('guard facts', () => {
  it('issuerKeyBurned (token_owner_burned on the wire): a locked issuer (master weight 0, no signers) and a missing issuer', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1], quorum: 2 });
    const locked = await plainAccount(devnet);
    await submitClassic(devnet, locked.publicKey(), [Operation.setOptions({ masterWeight: 0 })], [locked]);
    const facts = (issuer: string) =>
      driver.fetchProtectInputs({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: w.address, amount: '1', asset_symbol: 'LCK', asset_issuer: issuer, ...D }), wallet: w.wallet });
    expect(await facts(locked.publicKey())).toEqual({
      destination: { address: w.address, hasCode: null, codeHash: null },
      issuer: { address: locked.publicKey(), hasCode: null, codeHash: null },
      assetSymbol: null,
      issuerKeyBurned: true,
    });
    expect(protectChainFacts(await facts(locked.publicKey()))).toEqual({ evm_code: [], onchain_symbol: null, token_owner_burned: true });
    expect((await facts(Keypair.random().publicKey())).issuerKeyBurned).toBe(true);
    expect((await facts(w.address)).issuerKeyBurned).toBe(false);
    expect((await driver.fetchProtectInputs({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: w.address, amount: '1' }), wallet: w.wallet })).issuerKeyBurned).toBe(false);
    expect(await driver.issuerState({ chain: CHAIN, issuer: locked.publicKey() })).toMatchObject({ exists: true, locked: true });
    expect(await driver.issuerState({ chain: CHAIN, issuer: Keypair.random().publicKey() })).toEqual({ exists: false, locked: true, flags: null });
  });
});

describe('devnet.createWallet', () => {
  it('gives a wallet the driver accepts, with the ledger agreeing on control', async () => {
    const { createSoftwareKey } = await import('@vault/sdk/testing');
    const { gOf } = await import('./helpers.js');
    const keys = [createSoftwareKey(), createSoftwareKey(), createSoftwareKey()];
    const wallet = await devnet.createWallet({ wallet: 'ops-treasury', signers: keys.map((k, i) => ({ address: gOf(k), weight: [2, 1, 1][i] as number })), quorum: 3, high: 4 });
    expect(devnet.ledger.account(wallet.control.kind === 'native_multisig' ? wallet.control.address : '')).toMatchObject({ masterWeight: 0, thresholds: { low: 3, med: 3, high: 4 } });
    const params = await driver.fetchParams({ wallet });
    expect(params).toMatchObject({ kind: 'stellar', sequence: expect.stringMatching(/^[0-9]{17}$/) });
    expect(await driver.controlState({ wallet })).toMatchObject({ quorum: 3, masterKeyEnabled: false, extra: { thresholds: { high: 4 } } });
    await expect(devnet.createWallet({ wallet: 'bad', signers: [{ address: gOf(keys[0]!), weight: 1 }], quorum: 1, flags: 0x8 })).rejects.toThrow(/op_auth_revocable_required/);
  });
});
