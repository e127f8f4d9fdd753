/**
 * Every operation the driver builds, end to end on the devnet (multisig wallet set up with real
 * single-signed SignerListSet / AccountSet transactions), with outcomes read from the devnet's own
 * state rather than through the driver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefusedError, ValidationError, normalizeIntent, protectChainFacts, type SigningKey, type WalletDescriptor } from '@vault/sdk';
import { Wallet } from 'xrpl';
import { ACCOUNT_ROOT_FLAGS, ACCOUNT_SET_FLAGS } from '../src/constants.js';
import { startXrplDevnet, type XrplDevnet } from '../src/devnet/index.js';
import { createXrplDriver, mptIssuanceId, type XrplDriver } from '../src/index.js';
import { xrplAddressOf } from '../src/signer.js';
import { createKey, fundedWallet, runIntent, submitSingle } from './helpers.js';

let devnet: XrplDevnet;
let driver: XrplDriver;
const CHAIN = 'xrpl:local';

beforeAll(async () => {
  devnet = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 0 });
  driver = createXrplDriver({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337 } } });
});
afterAll(() => devnet.close());

/**
 * A multisig wallet made the way an operator would: a faucet-funded account sets `flags` first
 * (RequireAuth and AllowTrustLineClawback need an empty owner directory, and a signer list is an
 * owned object), then its signer list, then disables its master key — all single-signed.
 */
async function multisigWallet(opts: { flags?: number[]; trust?: { issuer: string; currency: string; limit: string }[] } = {}) {
  const master = fundedWallet(devnet);
  for (const flag of opts.flags ?? []) expect((await submitSingle(devnet, master, { TransactionType: 'AccountSet', SetFlag: flag }))['engine_result']).toBe('tesSUCCESS');
  for (const t of opts.trust ?? []) {
    const r = await submitSingle(devnet, master, { TransactionType: 'TrustSet', LimitAmount: { currency: t.currency, issuer: t.issuer, value: t.limit } });
    expect(r['engine_result']).toBe('tesSUCCESS');
  }
  const keys: SigningKey[] = [createKey('ed25519'), createKey('secp256k1'), createKey('ed25519')];
  const members = keys.map((k, i) => ({ address: xrplAddressOf(k.publicKey, k.curve), curve: k.curve, weight: i === 1 ? 2 : 1, label: `m${i}` }));
  const list = await submitSingle(devnet, master, {
    TransactionType: 'SignerListSet',
    SignerQuorum: 3,
    SignerEntries: members.map((m) => ({ SignerEntry: { Account: m.address, SignerWeight: m.weight } })),
  });
  expect(list['engine_result']).toBe('tesSUCCESS');
  const disable = await submitSingle(devnet, master, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDisableMaster });
  expect(disable['engine_result']).toBe('tesSUCCESS');
  devnet.closeLedger();
  const wallet: WalletDescriptor = { wallet: `ops-${master.classicAddress}`, chain: CHAIN, control: { kind: 'native_multisig', address: master.classicAddress, signers: members, quorum: 3 } };
  return { wallet, keys, address: master.classicAddress, master };
}

describe('setup through real transactions', () => {
  it('the master key is disabled and the signer list is on the ledger', async () => {
    const { wallet, address, master } = await multisigWallet();
    const acct = devnet.ledger.account(address);
    expect(acct?.flags ?? 0).toSatisfy((f: number) => (f & ACCOUNT_ROOT_FLAGS.lsfDisableMaster) !== 0);
    expect(acct?.signerList?.quorum).toBe(3);
    const state = await driver.controlState({ wallet });
    expect(state.masterKeyEnabled).toBe(false);
    expect(state.quorum).toBe(3);
    // The master key can no longer sign.
    const r = await submitSingle(devnet, master, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDefaultRipple });
    expect(r['engine_result']).toBe('tefMASTER_DISABLED');
  });
});

describe('transfer', () => {
  it('XRP with memo and tags as Memos, to an X-address with a destination tag', async () => {
    const { wallet, keys, address } = await multisigWallet();
    const dest = fundedWallet(devnet);
    const before = devnet.ledger.xrpBalance(dest.classicAddress);
    const xaddr = (await import('ripple-address-codec')).classicAddressToXAddress(dest.classicAddress, 77, true);
    const { confirm, tx } = await runIntent(devnet, driver, wallet, keys, {
      destination: xaddr,
      amount: '2500000',
      memo: 'invoice 42',
      tags: [['purpose', 'rent']],
    });
    expect(confirm).toMatchObject({ status: 'confirmed', code: 'tesSUCCESS' });
    expect(devnet.ledger.xrpBalance(dest.classicAddress) - before).toBe(2_500_000n);
    expect(tx['DestinationTag']).toBe(77);
    expect(tx['NetworkID']).toBe(21337);
    expect(tx['Fee']).toBe(String(10 * (1 + 3)));
    const rec = devnet.ledger.tx(confirm.txHash);
    const memos = rec?.tx['Memos'] as { Memo: { MemoData: string } }[];
    expect(Buffer.from(memos[0]?.Memo.MemoData ?? '', 'hex').toString()).toBe('invoice 42');
    expect(JSON.parse(Buffer.from(memos[1]?.Memo.MemoData ?? '', 'hex').toString())).toEqual(['purpose', 'rent']);
    expect(devnet.ledger.account(address)?.sequence).toBe(Number(tx['Sequence']) + 1);
  });

  it('IOU (ACCOUNT.CODE) held by the wallet ripples through the issuer to another holder', async () => {
    const issuer = fundedWallet(devnet);
    await submitSingle(devnet, issuer, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDefaultRipple });
    const { wallet, keys, address } = await multisigWallet({ trust: [{ issuer: issuer.classicAddress, currency: 'USD', limit: '1000' }] });
    const holder = fundedWallet(devnet);
    await submitSingle(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency: 'USD', issuer: issuer.classicAddress, value: '1000' } });
    await submitSingle(devnet, issuer, { TransactionType: 'Payment', Destination: address, Amount: { currency: 'USD', issuer: issuer.classicAddress, value: '100' } });
    const { confirm, tx } = await runIntent(devnet, driver, wallet, keys, {
      destination: holder.classicAddress,
      amount: '1234',
      asset_decimals: 2,
      asset_issuer: `${issuer.classicAddress}.USD`,
      asset_symbol: 'USD',
    });
    expect(confirm).toMatchObject({ status: 'confirmed' });
    expect(tx['Amount']).toEqual({ currency: 'USD', issuer: issuer.classicAddress, value: '12.34' });
    expect(devnet.ledger.trustLine(holder.classicAddress, issuer.classicAddress, 'USD')?.balance).toBe(1234n * 10n ** 28n);
    expect(devnet.ledger.trustLine(address, issuer.classicAddress, 'USD')?.balance).toBe(8766n * 10n ** 28n);
    const balances = await driver.balances({ wallet });
    expect(balances.find((b) => b.asset === `${issuer.classicAddress}.USD`)).toMatchObject({ symbol: 'USD', amount: '87660000', decimals: 6 });
    const facts = await driver.fetchProtectInputs({ intent: normalizeIntent({ wallet: wallet.wallet, destination: holder.classicAddress, amount: '1', asset_issuer: `${issuer.classicAddress}.USD` }), wallet });
    expect(facts).toEqual({
      destination: { address: holder.classicAddress, hasCode: null, codeHash: null },
      issuer: { address: issuer.classicAddress, hasCode: null, codeHash: null },
      assetSymbol: 'USD',
      issuerKeyBurned: false,
    });
    expect(protectChainFacts(facts)).toEqual({ evm_code: [], onchain_symbol: 'USD', token_owner_burned: false });
  });

  it('an IOU with a 40-hex code built from a long name', async () => {
    const issuer = fundedWallet(devnet);
    const { wallet, keys, address } = await multisigWallet({ trust: [{ issuer: issuer.classicAddress, currency: '524C555344000000000000000000000000000000', limit: '10' }] });
    await submitSingle(devnet, issuer, { TransactionType: 'Payment', Destination: address, Amount: { currency: '524C555344000000000000000000000000000000', issuer: issuer.classicAddress, value: '5' } });
    const { confirm } = await runIntent(devnet, driver, wallet, keys, { destination: issuer.classicAddress, amount: '1500000', asset_issuer: issuer.classicAddress, asset_symbol: 'RLUSD' });
    expect(confirm.status).toBe('confirmed');
    expect(devnet.ledger.trustLine(address, issuer.classicAddress, '524C555344000000000000000000000000000000')?.balance).toBe(35n * 10n ** 29n);
  });
});

describe('API v1 end to end', () => {
  it('a driver asking for API v1 parses account_info (signer_lists in account_data) and tx (fields at the root)', async () => {
    const v1 = createXrplDriver({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337, apiVersion: 1 } } });
    const { wallet, keys } = await multisigWallet();
    const state = await v1.controlState({ wallet });
    expect(state.quorum).toBe(3);
    expect(state.members).toHaveLength(3);
    const dest = fundedWallet(devnet);
    const { confirm } = await runIntent(devnet, v1, wallet, keys, { destination: dest.classicAddress, amount: '1000' });
    expect(confirm).toMatchObject({ status: 'confirmed', code: 'tesSUCCESS' });
  });
});

describe('issuer operations on IOUs', () => {
  it('account_flags needs an empty owner directory for RequireAuth: tecOWNERS once a signer list exists', async () => {
    const { wallet, keys, address } = await multisigWallet();
    const { confirm } = await runIntent(devnet, driver, wallet, keys, { destination: address, amount: '0', operation: { op: 'account_flags', set: ACCOUNT_SET_FLAGS.asfRequireAuth } });
    expect(confirm).toMatchObject({ status: 'failed', code: 'tecOWNERS', dead: true });
  });

  it('account_flags sets and clears DefaultRipple', async () => {
    const { wallet, keys, address } = await multisigWallet();
    expect((await runIntent(devnet, driver, wallet, keys, { destination: address, amount: '0', operation: { op: 'account_flags', set: 8 } })).confirm.status).toBe('confirmed');
    expect((devnet.ledger.account(address)?.flags ?? 0) & ACCOUNT_ROOT_FLAGS.lsfDefaultRipple).not.toBe(0);
    expect((await runIntent(devnet, driver, wallet, keys, { destination: address, amount: '0', operation: { op: 'account_flags', clear: 8 } })).confirm.status).toBe('confirmed');
    expect((devnet.ledger.account(address)?.flags ?? 0) & ACCOUNT_ROOT_FLAGS.lsfDefaultRipple).toBe(0);
  });

  it('authorize_holder (tfSetfAuth), issue, clawback; unauthorised issue is tecPATH_DRY', async () => {
    const { wallet, keys, address } = await multisigWallet({ flags: [ACCOUNT_SET_FLAGS.asfRequireAuth, ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback] });
    const holder = fundedWallet(devnet);
    await submitSingle(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency: 'EUR', issuer: address, value: '500' } });
    const asset = { asset_issuer: `${address}.EUR`, asset_decimals: 0 };
    const early = await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '10', ...asset, operation: { op: 'issue' } });
    expect(early.confirm).toMatchObject({ status: 'failed', code: 'tecPATH_DRY' });

    const auth = await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '0', ...asset, operation: { op: 'authorize_holder' } });
    expect(auth.confirm.status).toBe('confirmed');
    expect(auth.tx).toMatchObject({ TransactionType: 'TrustSet', Flags: 0x00010000, LimitAmount: { currency: 'EUR', issuer: holder.classicAddress, value: '0' } });
    expect(devnet.ledger.trustLine(holder.classicAddress, address, 'EUR')?.authorized).toBe(true);

    const issued = await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '100', ...asset, operation: { op: 'issue' } });
    expect(issued.confirm.status).toBe('confirmed');
    expect(devnet.ledger.trustLine(holder.classicAddress, address, 'EUR')?.balance).toBe(100n * 10n ** 30n);

    const claw = await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '40', ...asset, operation: { op: 'clawback' } });
    expect(claw.confirm.status).toBe('confirmed');
    expect(claw.tx['Amount']).toEqual({ currency: 'EUR', issuer: holder.classicAddress, value: '40' });
    expect(devnet.ledger.trustLine(holder.classicAddress, address, 'EUR')?.balance).toBe(60n * 10n ** 30n);

    const facts = await driver.issuerFacts({ chain: CHAIN, issuer: address });
    expect(facts).toMatchObject({ exists: true, requireAuth: true, clawbackEnabled: true, blackholed: false, obligations: { EUR: '60' } });
    expect(() =>
      driver.buildPayload({
        intent: normalizeIntent({ wallet: wallet.wallet, destination: holder.classicAddress, amount: '0', ...asset, operation: { op: 'authorize_holder', revoke: true } }),
        wallet,
        params: { kind: 'xrpl', sequence: 1, base_fee_drops: 10, last_ledger_sequence: 99, network_id: 21337 },
      }),
    ).toThrow(RefusedError);
  });

  it('clawback without AllowTrustLineClawback is tecNO_PERMISSION', async () => {
    const { wallet, keys, address } = await multisigWallet();
    const holder = fundedWallet(devnet);
    await submitSingle(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency: 'EUR', issuer: address, value: '500' } });
    expect((await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '5', asset_issuer: `${address}.EUR`, asset_decimals: 0, operation: { op: 'issue' } })).confirm.status).toBe('confirmed');
    const claw = await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '5', asset_issuer: `${address}.EUR`, asset_decimals: 0, operation: { op: 'clawback' } });
    expect(claw.confirm).toMatchObject({ status: 'failed', code: 'tecNO_PERMISSION' });
  });
});

describe('MPT operations', () => {
  it('mpt_create returns mptIssuanceId; authorize_holder, issue, transfer, clawback and revoke work', async () => {
    const { wallet, keys, address } = await multisigWallet();
    const metadata = Buffer.from(JSON.stringify({ ticker: 'TBILL', name: 'T-Bill' })).toString('hex');
    const created = await runIntent(devnet, driver, wallet, keys, {
      destination: address,
      amount: '0',
      operation: { op: 'mpt_create', asset_scale: 2, flags: 0x04 | 0x20 | 0x40, maximum_amount: '1000000', transfer_fee: 100, metadata_hex: metadata },
    });
    expect(created.confirm.status).toBe('confirmed');
    const id = mptIssuanceId(Number(created.tx['Sequence']), address);
    expect(created.confirm.status === 'confirmed' && created.confirm.outcome).toEqual({ mptIssuanceId: id });
    expect(devnet.ledger.mptIssuance(id)).toMatchObject({ issuer: address, assetScale: 2, flags: 0x64, maximumAmount: 1000000n, transferFee: 100 });

    const holder = fundedWallet(devnet);
    const other = fundedWallet(devnet);
    for (const h of [holder, other]) expect((await submitSingle(devnet, h, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: id }))['engine_result']).toBe('tesSUCCESS');

    const asset = { asset_issuer: id, asset_decimals: 2 };
    expect((await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '5', ...asset, operation: { op: 'issue' } })).confirm).toMatchObject({ status: 'failed', code: 'tecNO_AUTH' });
    for (const h of [holder, other]) {
      const auth = await runIntent(devnet, driver, wallet, keys, { destination: h.classicAddress, amount: '0', ...asset, operation: { op: 'authorize_holder' } });
      expect(auth.confirm.status).toBe('confirmed');
      expect(auth.tx).toMatchObject({ TransactionType: 'MPTokenAuthorize', Holder: h.classicAddress, MPTokenIssuanceID: id });
    }
    expect(devnet.ledger.mpToken(id, holder.classicAddress)?.authorized).toBe(true);
    expect((await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '700', ...asset, operation: { op: 'issue' } })).confirm.status).toBe('confirmed');
    expect(devnet.ledger.mpToken(id, holder.classicAddress)?.amount).toBe(700n);
    expect(devnet.ledger.mptIssuance(id)?.outstanding).toBe(700n);
    expect((await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '2000000', ...asset, operation: { op: 'issue' } })).confirm).toMatchObject({ status: 'failed', code: 'tecPATH_PARTIAL' });

    const claw = await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '200', ...asset, operation: { op: 'clawback' } });
    expect(claw.confirm.status).toBe('confirmed');
    expect(claw.tx).toMatchObject({ TransactionType: 'Clawback', Holder: holder.classicAddress, Amount: { mpt_issuance_id: id, value: '200' } });
    expect(devnet.ledger.mpToken(id, holder.classicAddress)?.amount).toBe(500n);

    const revoke = await runIntent(devnet, driver, wallet, keys, { destination: holder.classicAddress, amount: '0', ...asset, operation: { op: 'authorize_holder', revoke: true } });
    expect(revoke.confirm.status).toBe('confirmed');
    expect(revoke.tx['Flags']).toBe(1);
    expect(devnet.ledger.mpToken(id, holder.classicAddress)?.authorized).toBe(false);

    const facts = await driver.fetchProtectInputs({ intent: normalizeIntent({ wallet: wallet.wallet, destination: holder.classicAddress, amount: '1', ...asset }), wallet });
    expect(facts.assetSymbol).toBe('TBILL');
    const other2 = await driver.balances({ wallet: { ...wallet, control: { ...wallet.control, address: other.classicAddress } as never } });
    expect(other2.find((b) => b.asset === id)).toMatchObject({ amount: '0', decimals: 2, symbol: 'TBILL' });
  });
});

describe('refusals', () => {
  const params = { kind: 'xrpl' as const, sequence: 5, base_fee_drops: 10, last_ledger_sequence: 100, network_id: 21337 };
  const wallet: WalletDescriptor = {
    wallet: 'w',
    chain: CHAIN,
    control: { kind: 'native_multisig', address: 'rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQC', signers: [{ address: 'rsA2LpzuawewSBQXkiju3YQTMzW13pAAdW', curve: 'secp256k1', weight: 1, label: 'a' }], quorum: 1 },
  };
  const build = (req: Record<string, unknown>) => driver.buildPayload({ intent: normalizeIntent({ wallet: 'w', destination: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', amount: '10', ...req } as never), wallet, params });

  it('contract_call is refused with a clear RefusedError', () => {
    expect(() => build({ operation: { op: 'contract_call', data_hex: '0xa9059cbb' } })).toThrow(/XRPL has no contract calls/);
    expect(() => build({ operation: { op: 'contract_call', data_hex: '0xa9059cbb' } })).toThrow(RefusedError);
  });
  it('bad assets, amounts and flags are ValidationErrors naming the field', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ asset_symbol: 'USD' }, 'asset_issuer'],
      [{ asset_symbol: 'XRP', asset_decimals: 2 }, 'asset_decimals'],
      [{ asset_issuer: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh.XRP' }, 'asset_issuer'],
      [{ asset_issuer: 'notanaddress.USD' }, 'asset_issuer'],
      [{ asset_issuer: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh.USD', asset_symbol: 'EUR' }, 'asset_symbol'],
      [{ asset_issuer: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh' }, 'asset_issuer'],
      [{ amount: '0' }, 'amount'],
      [{ amount: '12345678901234567', asset_issuer: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh.USD' }, 'amount'],
      [{ destination: 'rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQC' }, 'destination'],
      [{ destination: 'rNotAnAddress' }, 'destination'],
      [{ operation: { op: 'issue' } }, 'asset_issuer'],
      [{ operation: { op: 'issue' }, asset_issuer: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh.USD' }, 'asset_issuer'],
      [{ operation: { op: 'account_flags', set: 11 } }, 'operation.set'],
      [{ operation: { op: 'mpt_create', asset_scale: 0, flags: 0, transfer_fee: 5 } }, 'operation.transfer_fee'],
      [{ memo: 'x'.repeat(1000), tags: [['a', 'b'.repeat(200)]] }, 'memo'],
    ];
    for (const [req, path] of cases) {
      let thrown: unknown;
      try {
        build(req);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, JSON.stringify(req)).toBeInstanceOf(ValidationError);
      expect((thrown as ValidationError).path, JSON.stringify(req)).toBe(path);
    }
  });
  it('a fee above the cap is refused before anyone signs', () => {
    expect(() => driver.buildPayload({ intent: normalizeIntent({ wallet: 'w', destination: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', amount: '10' }), wallet, params: { ...params, base_fee_drops: 1_500_000 } })).toThrow(/exceeds the cap/);
  });
  it('NetworkID only above 1024', () => {
    expect((build({}).payload as { tx_json: Record<string, unknown> }).tx_json['NetworkID']).toBe(21337);
    const low = driver.buildPayload({ intent: normalizeIntent({ wallet: 'w', destination: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', amount: '10' }), wallet, params: { ...params, network_id: 1024 } });
    expect((low.payload as { tx_json: Record<string, unknown> }).tx_json).not.toHaveProperty('NetworkID');
  });
  it('unknown chains are refused', async () => {
    expect(() => driver.buildPayload({ intent: normalizeIntent({ wallet: 'w', destination: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', amount: '10' }), wallet: { ...wallet, chain: 'xrpl:mainnet' }, params })).toThrow(/does not serve/);
    expect(driver.validateAddress({ chain: 'xrpl:mainnet', address: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh' }).valid).toBe(false);
    void Wallet;
  });
});
