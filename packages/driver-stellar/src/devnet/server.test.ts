import { Keypair } from '@stellar/stellar-base';
import { describe, expect, it } from 'vitest';
import { StellarLedger } from './ledger.js';
import { route } from './server.js';

describe('devnet routes (Horizon shapes)', () => {
  const ledger = new StellarLedger({ clock: () => 1_750_000_000 });
  const faults = { submitTimeout: 0, submitDrop: 0 };
  const get = (path: string) => route(ledger, faults, 'GET', path, '', 'http://x');
  it('root, fee_stats, 404s and 400s', () => {
    expect(get('/').body).toMatchObject({ network_passphrase: 'Standalone Network ; February 2017', history_latest_ledger: 2_600_000, history_latest_ledger_closed_at: '2025-06-15T15:06:40Z' });
    expect(get('/fee_stats').body).toMatchObject({ last_ledger_base_fee: '100', fee_charged: { p50: '100' } });
    expect(get('/nope').status).toBe(404);
    expect(get(`/accounts/${Keypair.random().publicKey()}`)).toMatchObject({ status: 404, body: { title: 'Resource Missing' } });
    expect(get('/accounts/not-an-account')).toMatchObject({ status: 400, body: { extras: { invalid_field: 'account_id' } } });
    expect(get(`/transactions/${'ab'.repeat(32)}`).status).toBe(404);
    expect(get('/friendbot?addr=nope').status).toBe(400);
    expect(route(ledger, faults, 'POST', '/transactions', 'x=1', 'http://x')).toMatchObject({ status: 400, body: { extras: { invalid_field: 'tx' } } });
  });
  it('friendbot, account resource, operations paging, JSON submit and a repeated friendbot', () => {
    const a = Keypair.random().publicKey();
    const funded = get(`/friendbot?addr=${a}`);
    expect(funded).toMatchObject({ status: 200, body: { successful: true, operation_count: 1, fee_charged: '100' } });
    const acct = get(`/accounts/${a}`).body as Record<string, unknown>;
    expect(acct).toMatchObject({ account_id: a, sequence: (2_600_001n << 32n).toString(), thresholds: { low_threshold: 0 }, signers: [{ key: a, weight: 1 }] });
    expect(get(`/friendbot?addr=${a}`)).toMatchObject({ status: 400, body: { extras: { result_codes: { transaction: 'tx_failed', operations: ['op_already_exists'] } } } });
    const b = Keypair.random().publicKey();
    get(`/friendbot?addr=${b}`);
    const root = ledger.root.publicKey();
    const asc = get(`/accounts/${root}/operations?order=asc&limit=1`).body as { _embedded: { records: { paging_token: string; account: string }[] } };
    expect(asc._embedded.records).toHaveLength(1);
    expect(asc._embedded.records[0]?.account).toBe(a);
    const next = get(`/accounts/${root}/operations?order=asc&limit=5&cursor=${asc._embedded.records[0]?.paging_token}`).body as { _embedded: { records: { account: string }[] } };
    expect(next._embedded.records.map((r) => r.account)).toEqual([b]);
    const desc = get(`/accounts/${root}/operations?order=desc`).body as { _embedded: { records: { account: string }[] } };
    expect(desc._embedded.records.map((r) => r.account)).toEqual([b, a]);
    const failed = get(`/accounts/${root}/operations?include_failed=true`).body as { _embedded: { records: unknown[] } };
    expect(failed._embedded.records).toHaveLength(2); // the failed friendbot created no operation record
    expect(get(`/accounts/${Keypair.random().publicKey()}/operations`).status).toBe(404);
    const envelope = (get(`/transactions/${(funded.body as { hash: string }).hash}`).body as { envelope_xdr: string }).envelope_xdr;
    expect(route(ledger, faults, 'POST', '/transactions', JSON.stringify({ tx: envelope }), 'http://x')).toMatchObject({ status: 200, body: { hash: (funded.body as { hash: string }).hash } });
    expect(get('/assets?asset_code=NONE').body).toMatchObject({ _embedded: { records: [] } });
  });
});
