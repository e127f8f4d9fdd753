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

  it('AccountSet Domain is stored and returned by account_info as hex, an empty Domain removes it, over 256 bytes is temMALFORMED', async () => {
    const { address, seed } = devnet.faucet();
    const w = Wallet.fromSeed(seed as string);
    const set = async (Domain: string) => {
      const seq = devnet.ledger.account(address)?.sequence as number;
      const signed = w.sign({ TransactionType: 'AccountSet', Account: address, Domain, Fee: '12', Sequence: seq } as never);
      return (await rpc('submit', { tx_blob: signed.tx_blob }))['engine_result'];
    };
    const hex = Buffer.from('example.com', 'ascii').toString('hex').toUpperCase();
    expect(await set(hex)).toBe('tesSUCCESS');
    devnet.closeLedger();
    expect((await rpc('account_info', { account: address, ledger_index: 'validated' }))['account_data'].Domain).toBe(hex);
    expect(await set('AB'.repeat(257))).toBe('temMALFORMED');
    expect(await set('')).toBe('tesSUCCESS');
    expect((await rpc('account_info', { account: address }))['account_data']).not.toHaveProperty('Domain');
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

  it('account_info answers from the open or the last validated ledger, in rippled\'s shape', async () => {
    const { address } = devnet.faucet();
    const open = await rpc('account_info', { account: address, ledger_index: 'current' });
    expect(open).toMatchObject({ validated: false, ledger_current_index: devnet.ledger.currentLedgerIndex });
    // Funded in the open ledger only: not in the validated one yet.
    expect(await rpc('account_info', { account: address, ledger_index: 'validated' })).toMatchObject({ error: 'actNotFound', validated: true });
    devnet.closeLedger();
    const validated = await rpc('account_info', { account: address, ledger_index: 'validated' });
    expect(validated).toMatchObject({ validated: true, ledger_index: devnet.ledger.validatedLedgerIndex, account_data: { Account: address } });
    expect(validated['ledger_hash']).toMatch(/^[0-9A-F]{64}$/);
    expect(await rpc('account_info', { account: address, ledger_index: devnet.ledger.validatedLedgerIndex })).toMatchObject({ validated: true });
    expect(await rpc('account_info', { account: address, ledger_index: devnet.ledger.currentLedgerIndex })).toMatchObject({ validated: false });
    expect(await rpc('account_info', { account: address, ledger_index: 1 })).toMatchObject({ error: 'notImpl' });
    expect(await rpc('account_info', { account: address, ledger_index: 'nope' })).toMatchObject({ error: 'invalidParams' });
  });

  it('gateway_balances asked with ledger_index "validated" sums the validated ledger and names it (index, hash, validated: true), like rippled', async () => {
    const { address: issuerAddress, seed } = devnet.faucet();
    const issuer = Wallet.fromSeed(seed as string);
    const holder = Wallet.generate();
    devnet.faucet(holder.classicAddress);
    const seq = (a: string) => devnet.ledger.account(a)?.sequence as number;
    const trust = holder.sign({ TransactionType: 'TrustSet', Account: holder.classicAddress, Fee: '12', Sequence: seq(holder.classicAddress), LimitAmount: { currency: 'USD', issuer: issuerAddress, value: '100' } } as never);
    expect((await rpc('submit', { tx_blob: trust.tx_blob }))['engine_result']).toBe('tesSUCCESS');
    // The issuer exists in the open ledger only: the validated ledger does not know it yet.
    expect(await rpc('gateway_balances', { account: issuerAddress, ledger_index: 'validated' })).toMatchObject({ error: 'actNotFound', validated: true, ledger_index: devnet.ledger.validatedLedgerIndex });
    devnet.closeLedger();
    const pay = issuer.sign({ TransactionType: 'Payment', Account: issuerAddress, Destination: holder.classicAddress, Fee: '12', Sequence: seq(issuerAddress), Amount: { currency: 'USD', issuer: issuerAddress, value: '5.25' } } as never);
    expect((await rpc('submit', { tx_blob: pay.tx_blob }))['engine_result']).toBe('tesSUCCESS');

    // Payment applied to the open ledger only: the validated answer has no obligations yet.
    const before = await rpc('gateway_balances', { account: issuerAddress, ledger_index: 'validated' });
    expect(before).toMatchObject({ account: issuerAddress, status: 'success', validated: true, ledger_index: devnet.ledger.validatedLedgerIndex });
    expect(before['ledger_hash']).toMatch(/^[0-9A-F]{64}$/);
    expect(before).not.toHaveProperty('obligations');
    expect(before).not.toHaveProperty('ledger_current_index');
    const open = await rpc('gateway_balances', { account: issuerAddress });
    expect(open).toMatchObject({ obligations: { USD: '5.25' }, validated: false, ledger_current_index: devnet.ledger.currentLedgerIndex });
    expect(open).not.toHaveProperty('ledger_hash');
    expect(await rpc('gateway_balances', { account: issuerAddress, ledger_index: 'current' })).toMatchObject({ obligations: { USD: '5.25' }, validated: false });

    devnet.closeLedger();
    const after = await rpc('gateway_balances', { account: issuerAddress, ledger_index: 'validated' });
    expect(after).toMatchObject({ obligations: { USD: '5.25' }, validated: true, ledger_index: devnet.ledger.validatedLedgerIndex });
    expect(after['ledger_index']).toBe((before['ledger_index'] as number) + 1);
    // Devnet model: a deterministic hash per validated ledger: a new ledger, a new hash; the same
    // ledger asked again (or through account_info or by its index), the same hash.
    expect(after['ledger_hash']).toMatch(/^[0-9A-F]{64}$/);
    expect(after['ledger_hash']).not.toBe(before['ledger_hash']);
    expect((await rpc('gateway_balances', { account: issuerAddress, ledger_index: devnet.ledger.validatedLedgerIndex }))['ledger_hash']).toBe(after['ledger_hash']);
    expect((await rpc('account_info', { account: issuerAddress, ledger_index: 'validated' }))['ledger_hash']).toBe(after['ledger_hash']);

    // Later edits to the open ledger do not leak into the validated answer (it is a copy).
    const pay2 = issuer.sign({ TransactionType: 'Payment', Account: issuerAddress, Destination: holder.classicAddress, Fee: '12', Sequence: seq(issuerAddress), Amount: { currency: 'USD', issuer: issuerAddress, value: '1' } } as never);
    expect((await rpc('submit', { tx_blob: pay2.tx_blob }))['engine_result']).toBe('tesSUCCESS');
    expect((await rpc('gateway_balances', { account: issuerAddress, ledger_index: 'validated' }))['obligations']).toEqual({ USD: '5.25' });
    expect((await rpc('gateway_balances', { account: issuerAddress }))['obligations']).toEqual({ USD: '6.25' });

    // Refusals, as for account_info.
    expect(await rpc('gateway_balances', { account: issuerAddress, ledger_index: 1 })).toMatchObject({ error: 'notImpl' });
    expect(await rpc('gateway_balances', { account: issuerAddress, ledger_index: 'nope' })).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('gateway_balances', { ledger_index: 'validated' })).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('gateway_balances', { account: 'nope', ledger_index: 'validated' })).toMatchObject({ error: 'actMalformed' });
  });

  it('account_tx: validated ledgers only, ranges, newest first or forward, limit and marker, v1 and v2 entries', async () => {
    const { address } = devnet.faucet();
    devnet.closeLedger();
    const hashes = [devnet.faucet(address, 1_000_000n).hash];
    devnet.closeLedger();
    hashes.push(devnet.faucet(address, 1_000_000n).hash, devnet.faucet(address, 1_000_000n).hash);
    devnet.closeLedger();
    const pending = devnet.faucet(address, 1_000_000n).hash; // open ledger: never listed
    const all = await rpc('account_tx', { account: address, api_version: 2 });
    expect(all).toMatchObject({ account: address, ledger_index_min: 1, ledger_index_max: devnet.ledger.validatedLedgerIndex, validated: true, limit: 200 });
    const listed = all['transactions'].map((e: Record<string, any>) => e.hash);
    expect(listed).toHaveLength(4);
    expect(listed).not.toContain(pending);
    expect(listed.slice(0, 3)).toEqual([hashes[2], hashes[1], hashes[0]]);
    const v2 = all['transactions'][0];
    expect(Object.keys(v2).sort()).toEqual(['close_time_iso', 'hash', 'ledger_hash', 'ledger_index', 'meta', 'tx_json', 'validated']);
    expect(v2['tx_json']).toMatchObject({ TransactionType: 'Payment', DeliverMax: '1000000' });
    const v1 = (await rpc('account_tx', { account: address, limit: 1 }))['transactions'][0];
    expect(Object.keys(v1).sort()).toEqual(['meta', 'tx', 'validated']);
    expect(v1['tx']).toMatchObject({ hash: hashes[2], Amount: '1000000', inLedger: devnet.ledger.validatedLedgerIndex, ledger_index: devnet.ledger.validatedLedgerIndex });
    // Paging: a marker resumes where the page stopped, whatever the direction.
    for (const forward of [false, true]) {
      const seen: string[] = [];
      let marker: unknown;
      let pages = 0;
      do {
        const page = await rpc('account_tx', { account: address, api_version: 2, limit: 1, forward, ...(marker ? { marker } : {}) });
        seen.push(...page['transactions'].map((e: Record<string, any>) => e.hash));
        marker = page['marker'];
        pages += 1;
      } while (marker && pages < 10);
      expect(seen).toEqual(forward ? [...listed].reverse() : listed);
    }
    const last = devnet.ledger.validatedLedgerIndex;
    const one = await rpc('account_tx', { account: address, api_version: 2, ledger_index_min: last, ledger_index_max: last });
    expect(one['transactions'].map((e: Record<string, any>) => e.hash).sort()).toEqual([hashes[1], hashes[2]].sort());
    expect((await rpc('account_tx', { account: address, ledger_index: last }))['transactions']).toHaveLength(2);
    expect((await rpc('account_tx', { account: address, ledger_index: 'validated' }))['transactions']).toHaveLength(2);
    expect(await rpc('account_tx', { account: address, ledger_index: last + 5 })).toMatchObject({ error: 'lgrNotFound' });
    expect(await rpc('account_tx', { account: address, ledger_index: 'x' })).toMatchObject({ error: 'invalidParams' });
    // API v2 refuses ranges outside the validated ledgers; v1 clamps them.
    expect(await rpc('account_tx', { account: address, api_version: 2, ledger_index_max: last + 1 })).toMatchObject({ error: 'lgrIdxsInvalid', error_code: 57 });
    expect(await rpc('account_tx', { account: address, api_version: 2, ledger_index_min: last, ledger_index_max: last - 1 })).toMatchObject({ error: 'lgrIdxMalformed', error_code: 58 });
    expect(await rpc('account_tx', { account: address, ledger_index_max: last + 1 })).toMatchObject({ ledger_index_max: last });
    expect(await rpc('account_tx', { account: address, ledger_index_min: last + 1 })).toMatchObject({ error: 'lgrIdxsInvalid' });
    expect(await rpc('account_tx', { account: address, ledger_index_min: 'a' })).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('account_tx', { account: address, limit: 0 })).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('account_tx', { account: address, marker: { ledger: 1, seq: 99 } })).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('account_tx', { account: address, marker: 'x' })).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('account_tx', { account: address, binary: true })).toMatchObject({ error: 'notImpl' });
    expect(await rpc('account_tx', { account: address, tx_type: 'Payment' })).toMatchObject({ error: 'notImpl' });
    expect(await rpc('account_tx', {})).toMatchObject({ error: 'invalidParams' });
    expect(await rpc('account_tx', { account: 'nope' })).toMatchObject({ error: 'actMalformed' });
    expect(await rpc('account_tx', { account: Wallet.generate().classicAddress })).toMatchObject({ error: 'actNotFound' });
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
