import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Wallet } from 'xrpl';
import { startXrplDevnet, type XrplDevnet } from './index.js';

let devnet: XrplDevnet;
const post = async (body: unknown, path = '') => {
  const res = await fetch(new URL(path, devnet.url), { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const rpc = async (method: string, params: Record<string, unknown> = {}) => (await post({ method, params: [params] })).body['result'] as Record<string, any>;

beforeAll(async () => {
  devnet = await startXrplDevnet({ networkId: 0, closeIntervalMs: 0, baseFee: 12 });
});
afterAll(() => devnet.close());

describe('devnet JSON-RPC shapes', () => {
  it('server_info without network_id on network 0, fee, ledger_current, ledger_accept', async () => {
    const info = await rpc('server_info');
    expect(info['info']).not.toHaveProperty('network_id');
    expect(info['info'].validated_ledger.seq).toBe(devnet.ledger.validatedLedgerIndex);
    expect((await rpc('fee'))['drops'].base_fee).toBe('12');
    const before = (await rpc('ledger_current'))['ledger_current_index'];
    expect((await rpc('ledger_accept'))['ledger_current_index']).toBe(before + 1);
    expect(await rpc('server_info', { api_version: 3 })).toMatchObject({ error: 'invalid_API_version', status: 'error' });
  });

  it('account_info puts signer_lists at the root in v2 and inside account_data in v1', async () => {
    const w = Wallet.generate();
    devnet.ledger.genesisAccount(w.classicAddress, 50_000_000n, { signers: [{ account: 'rsA2LpzuawewSBQXkiju3YQTMzW13pAAdW', weight: 1 }], quorum: 1 });
    const v2 = await rpc('account_info', { account: w.classicAddress, signer_lists: true, api_version: 2 });
    expect(v2['signer_lists'][0]).toMatchObject({ LedgerEntryType: 'SignerList', SignerQuorum: 1 });
    const v1 = await rpc('account_info', { account: w.classicAddress, signer_lists: true });
    expect(v1['account_data'].signer_lists[0].SignerEntries[0].SignerEntry.Account).toBe('rsA2LpzuawewSBQXkiju3YQTMzW13pAAdW');
    expect(await rpc('account_info', {})).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('account_info', { account: 'nope' })).toMatchObject({ error: 'actMalformed' });
    const objects = await rpc('account_objects', { account: w.classicAddress });
    expect(objects['account_objects'][0].LedgerEntryType).toBe('SignerList');
    expect(await rpc('ledger_entry', { account_root: w.classicAddress })).toMatchObject({ node: { Balance: '50000000' } });
    expect(await rpc('ledger_entry', { account_root: 'rsA2LpzuawewSBQXkiju3YQTMzW13pAAdW' })).toMatchObject({ error: 'entryNotFound' });
    expect(await rpc('ledger_entry', { offer: 'x' })).toMatchObject({ error: 'notImpl' });
  });

  it('faucet payments show up in tx (v1 and v2), account_tx, account_lines and gateway_balances', async () => {
    const { address, hash } = devnet.faucet();
    const holder = Wallet.generate();
    devnet.faucet(holder.classicAddress);
    const trust = holder.sign({
      TransactionType: 'TrustSet', Account: holder.classicAddress, Fee: '12', Sequence: devnet.ledger.account(holder.classicAddress)?.sequence as number,
      LimitAmount: { currency: 'USD', issuer: address, value: '10' },
    } as never);
    expect((await rpc('submit', { tx_blob: trust.tx_blob }))['engine_result']).toBe('tesSUCCESS');
    expect((await rpc('tx', { transaction: hash, api_version: 2 }))['validated']).toBe(false);
    devnet.closeLedger();
    const v2 = await rpc('tx', { transaction: hash, api_version: 2 });
    expect(v2).toMatchObject({ hash, validated: true, tx_json: { TransactionType: 'Payment', DeliverMax: '1000000000' }, meta: { TransactionResult: 'tesSUCCESS' } });
    expect(v2['tx_json']).not.toHaveProperty('Amount');
    const v1 = await rpc('tx', { transaction: hash });
    expect(v1).toMatchObject({ hash, Amount: '1000000000', validated: true });
    expect(await rpc('tx', { transaction: hash, binary: true })).toMatchObject({ error: 'notImpl' });
    expect(await rpc('tx', { transaction: 'x' })).toMatchObject({ error: 'notImpl' });
    const atx = await rpc('account_tx', { account: address, api_version: 2 });
    expect(atx['transactions'][0]).toMatchObject({ hash, validated: true });
    const atx1 = await rpc('account_tx', { account: address });
    expect(atx1['transactions'][0].tx.hash).toBe(hash);
    const lines = await rpc('account_lines', { account: holder.classicAddress });
    expect(lines['lines'][0]).toMatchObject({ account: address, currency: 'USD', limit: '10', balance: '0' });
    const issuerLines = await rpc('account_lines', { account: address });
    expect(issuerLines['lines'][0]).toMatchObject({ account: holder.classicAddress, limit_peer: '10' });
    const state = await rpc('account_objects', { account: holder.classicAddress, type: 'state' });
    expect(state['account_objects'][0]).toMatchObject({ LedgerEntryType: 'RippleState' });
    expect(await rpc('gateway_balances', { account: address })).toMatchObject({ account: address });
  });

  it('submit_multisigned refuses a SigningPubKey and a missing Signers; HTTP errors are rippled-like', async () => {
    expect(await rpc('submit_multisigned', { tx_json: { SigningPubKey: 'AB' } })).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('submit_multisigned', { tx_json: { SigningPubKey: '' } })).toMatchObject({ error: 'invalidParams', error_message: "Missing field 'tx_json.Signers'." });
    expect(await rpc('submit_multisigned', {})).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('submit', {})).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('nope')).toMatchObject({ error: 'unknownCmd', error_code: 32 });
    expect((await post('{not json')).status).toBe(400);
    expect((await post({ destination: 'bad' }, 'accounts')).status).toBe(400);
    const health = await fetch(new URL('health', devnet.url));
    expect(health.status).toBe(200);
    expect((await fetch(devnet.url)).status).toBe(405);
  });
});
