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

describe('devnet accountMerge and the Latest-Ledger header', () => {
  it('merges an account into another (balance moves, the account is gone, Horizon shows an account_merge operation); refuses sub-entries, a missing destination and a self-merge', async () => {
    const { Account, Asset, Operation, TransactionBuilder } = await import('@stellar/stellar-base');
    const { startDevnet } = await import('./index.js');
    const devnet = await startDevnet({ clock: () => 1_750_000_000 });
    try {
      const gone = Keypair.random();
      const into = Keypair.random();
      const holder = Keypair.random();
      for (const k of [gone, into, holder]) await devnet.fund(k.publicKey());
      const send = (k: Keypair, op: ReturnType<typeof Operation.accountMerge>) => {
        const acct = devnet.ledger.account(k.publicKey()) as { seq: bigint };
        const tx = new TransactionBuilder(new Account(k.publicKey(), acct.seq.toString()), { fee: '100', networkPassphrase: devnet.networkPassphrase }).setTimeout(0).addOperation(op).build();
        tx.sign(k);
        return devnet.ledger.submit(tx.toEnvelope().toXDR('base64'));
      };
      const opCodes = (r: ReturnType<typeof send>) => (r.kind === 'failed' ? r.record.resultCodes.operations : r.kind === 'rejected' ? r.resultCodes.operations : undefined);
      expect(opCodes(send(gone, Operation.accountMerge({ destination: gone.publicKey() })))).toEqual(['op_malformed']);
      expect(opCodes(send(gone, Operation.accountMerge({ destination: Keypair.random().publicKey() })))).toEqual(['op_no_account']);
      // A trust line is a sub-entry: the merge fails until it is removed.
      expect(send(holder, Operation.changeTrust({ asset: new Asset('ABC', gone.publicKey()) })).kind).toBe('applied');
      expect(opCodes(send(holder, Operation.accountMerge({ destination: into.publicKey() })))).toEqual(['op_has_sub_entries']);

      const before = devnet.ledger.nativeBalance(into.publicKey());
      const left = devnet.ledger.nativeBalance(gone.publicKey());
      const merged = send(gone, Operation.accountMerge({ destination: into.publicKey() }));
      expect(merged.kind).toBe('applied');
      expect(devnet.ledger.account(gone.publicKey())).toBeUndefined();
      expect(devnet.ledger.nativeBalance(into.publicKey())).toBe(before + left - 100n);

      const res = await fetch(`${devnet.url}/accounts/${gone.publicKey()}/operations?order=asc&limit=200`);
      expect(res.headers.get('latest-ledger')).toBe(String(devnet.ledger.ledger));
      const ops = (await res.json()) as { _embedded: { records: { type: string; type_i: number; account?: string; into?: string; created_at: string }[] } };
      const mergeOp = ops._embedded.records.find((r) => r.type === 'account_merge');
      expect(mergeOp).toMatchObject({ type_i: 8, account: gone.publicKey(), into: into.publicKey(), created_at: '2025-06-15T15:06:40Z' });
      expect((await fetch(`${devnet.url}/accounts/${gone.publicKey()}`)).status).toBe(404);
    } finally {
      await devnet.close();
    }
  });
});
