/**
 * Configuration from flags and env: defaults, named-field errors, payment all-or-nothing, and
 * secrets that never appear in an error message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadFacilitatorConfig, loadQueryConfig, loadServeConfig, readSecretKey } from '../src/config.js';
import { ConfigError } from '../src/payment/errors.js';

const KEY = `0x${'ab'.repeat(32)}`;
const ASSET = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const PAYEE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const dir = mkdtempSync(join(tmpdir(), 'agent-search-cfg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const payEnv = { X402_NETWORK: 'eip155:31337', X402_ASSET: ASSET, X402_PAY_TO: PAYEE };

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('serve', () => {
  test('without any payment setting: defaults, payment null (ABSENT)', () => {
    const c = loadServeConfig({}, {});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8402, baseUrl: 'http://127.0.0.1:8402', payment: null });
  });

  test('flags win over env', () => {
    const c = loadServeConfig({ port: '9000' }, { AGENT_SEARCH_PORT: '9100', AGENT_SEARCH_OPERATOR: 'Ops' });
    expect(c.port).toBe(9000);
    expect(c.operator).toBe('Ops');
  });

  test('with an HTTP facilitator', () => {
    const c = loadServeConfig({}, { ...payEnv, X402_FACILITATOR_URL: 'http://127.0.0.1:8403/' });
    expect(c.payment?.facilitator).toEqual({ kind: 'http', url: 'http://127.0.0.1:8403', timeoutMs: 30_000 });
    expect(c.payment?.terms).toMatchObject({ network: 'eip155:31337', assetName: 'USD Coin', assetVersion: '2', decimals: 6, maxTimeoutSeconds: 60 });
  });

  test('X402_DATABASE_URL: the shared store, env only; never echoed; not with a charge-log file', () => {
    const fac = { ...payEnv, X402_FACILITATOR_URL: 'http://127.0.0.1:8403' };
    const url = 'postgres://api:s3cret-pw@db.internal:5432/x402';
    expect(loadServeConfig({}, { ...fac, X402_DATABASE_URL: url }).payment?.databaseUrl).toBe(url);
    expect(loadServeConfig({}, fac).payment?.databaseUrl).toBeUndefined();
    for (const bad of ['mysql://api:s3cret-pw@db/x', 's3cret-pw not a url']) {
      const e = errorOf(() => loadServeConfig({}, { ...fac, X402_DATABASE_URL: bad }));
      expect(e.message).toMatch(/X402_DATABASE_URL/);
      expect(e.message).not.toContain('s3cret');
    }
    const both = errorOf(() => loadServeConfig({ 'charge-log': '/tmp/c.jsonl' }, { ...fac, X402_DATABASE_URL: url }));
    expect(both.message).toMatch(/X402_CHARGE_LOG.*X402_DATABASE_URL|one place/);
    expect(both.message).not.toContain('s3cret');
  });

  test('with the in-process facilitator and a gas key file', () => {
    const f = join(dir, 'gas.key');
    writeFileSync(f, `${KEY}\n`);
    const c = loadServeConfig({ 'rpc-url': 'http://127.0.0.1:8545', 'gas-key-file': f }, payEnv);
    expect(c.payment?.facilitator).toMatchObject({ kind: 'local', rpcUrl: 'http://127.0.0.1:8545', gasPrivateKey: KEY });
  });

  test('the answer timeout: 10 s by default, from flag or env, bounded', () => {
    expect(loadServeConfig({}, {}).answerTimeoutMs).toBe(10_000);
    expect(loadServeConfig({ 'answer-timeout-ms': '2500' }, {}).answerTimeoutMs).toBe(2500);
    expect(loadServeConfig({}, { AGENT_SEARCH_ANSWER_TIMEOUT_MS: '700' }).answerTimeoutMs).toBe(700);
    expect(errorOf(() => loadServeConfig({}, { AGENT_SEARCH_ANSWER_TIMEOUT_MS: '5' })).message).toMatch(/AGENT_SEARCH_ANSWER_TIMEOUT_MS/);
  });

  test('attack: credentials in an endpoint URL are refused and not echoed (URLs reach logs)', () => {
    const e = errorOf(() => loadServeConfig({}, { ...payEnv, X402_FACILITATOR_URL: 'https://user:hunter2@fac.example' }));
    expect(e.message).toMatch(/X402_FACILITATOR_URL/);
    expect(e.message).toMatch(/credentials/);
    expect(e.message).not.toContain('hunter2');
    expect(errorOf(() => loadServeConfig({}, { ...payEnv, X402_RPC_URL: 'ftp://rpc.example', X402_GAS_KEY: KEY })).message).toMatch(/X402_RPC_URL/);
  });

  test('a half-configured payment is an error naming the missing setting', () => {
    expect(errorOf(() => loadServeConfig({}, { X402_NETWORK: 'eip155:1' })).message).toMatch(/X402_ASSET/);
    expect(errorOf(() => loadServeConfig({}, payEnv)).message).toMatch(/X402_FACILITATOR_URL.*X402_RPC_URL/);
    expect(errorOf(() => loadServeConfig({}, { ...payEnv, X402_RPC_URL: 'http://127.0.0.1:1' })).message).toMatch(/X402_GAS_KEY/);
    expect(errorOf(() => loadServeConfig({}, { ...payEnv, X402_RPC_URL: 'http://a', X402_FACILITATOR_URL: 'http://b' })).message).toMatch(/not both/);
  });

  test('malformed values are named', () => {
    expect(errorOf(() => loadServeConfig({ port: 'x' }, {})).field).toMatch(/--port/);
    expect(errorOf(() => loadServeConfig({}, { ...payEnv, X402_NETWORK: 'base-sepolia', X402_FACILITATOR_URL: 'http://b' })).field).toMatch(/X402_NETWORK/);
    expect(errorOf(() => loadServeConfig({}, { ...payEnv, X402_PAY_TO: '0x1', X402_FACILITATOR_URL: 'http://b' })).field).toMatch(/X402_PAY_TO/);
    expect(errorOf(() => loadServeConfig({}, { ...payEnv, X402_FACILITATOR_URL: 'ftp://b' })).field).toMatch(/X402_FACILITATOR_URL/);
    expect(errorOf(() => loadServeConfig({}, { ...payEnv, X402_FACILITATOR_URL: 'http://b', X402_MAX_TIMEOUT_SECONDS: '1' })).field).toMatch(/X402_MAX_TIMEOUT_SECONDS/);
  });
});

describe('secrets', () => {
  test('a malformed key is refused without showing it', () => {
    const secret = 'cd'.repeat(31); // 62 hex digits: not a key, but close to one
    const e = errorOf(() => readSecretKey('gasKeyFile', 'gasKey', {}, { X402_GAS_KEY: secret }));
    expect(e.message).toMatch(/X402_GAS_KEY/);
    expect(e.message).not.toContain(secret);
    const f = join(dir, 'bad.key');
    writeFileSync(f, `${secret}zz`);
    const e2 = errorOf(() => readSecretKey('gasKeyFile', 'gasKey', { 'gas-key-file': f }, {}));
    expect(e2.message).not.toContain(secret);
  });

  test('an unreadable key file is named by its setting, not its content', () => {
    expect(errorOf(() => readSecretKey('payerKeyFile', 'payerKey', {}, { X402_PAYER_KEY_FILE: join(dir, 'missing') })).message).toMatch(/X402_PAYER_KEY_FILE.*ENOENT/);
  });

  test('keys without 0x are accepted and normalized', () => {
    expect(readSecretKey('gasKeyFile', 'gasKey', {}, { X402_GAS_KEY: 'AB'.repeat(32) })).toBe(KEY);
  });
});

describe('facilitator', () => {
  test('requires its payees (an open facilitator pays gas for anyone)', () => {
    const f = join(dir, 'gas2.key');
    writeFileSync(f, KEY);
    const base = { 'rpc-url': 'http://127.0.0.1:8545', 'gas-key-file': f, network: 'eip155:31337', asset: ASSET };
    expect(errorOf(() => loadFacilitatorConfig(base, {})).field).toMatch(/X402_PAY_TO/);
    // attack: an unauthenticated, gas-paying facilitator reachable from other hosts
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'example.org', '127.0.0.1.evil.example']) {
      expect(errorOf(() => loadFacilitatorConfig({ ...base, 'pay-to': PAYEE, host }, {})).message).toMatch(/not loopback/);
    }
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) expect(loadFacilitatorConfig({ ...base, 'pay-to': PAYEE, host }, {}).host).toBe(host);
    const c = loadFacilitatorConfig({ ...base, 'pay-to': `${PAYEE},${ASSET}` }, {});
    expect(c.payTo).toEqual([PAYEE, ASSET]);
    expect(c.port).toBe(8403);
  });
});

describe('query', () => {
  test('requires a key, a max price and a trusted asset (or an explicit "any")', () => {
    const f = join(dir, 'payer.key');
    writeFileSync(f, KEY);
    expect(errorOf(() => loadQueryConfig({ 'max-price': '0.05', asset: ASSET }, {})).message).toMatch(/--key-file/);
    expect(errorOf(() => loadQueryConfig({ 'key-file': f, asset: ASSET }, {})).message).toMatch(/--max-price/);
    expect(errorOf(() => loadQueryConfig({ 'key-file': f, 'max-price': '0.05' }, {})).message).toMatch(/--asset/);
    expect(errorOf(() => loadQueryConfig({ 'key-file': f, 'max-price': '0.0000001', asset: ASSET }, {})).message).toMatch(/--max-price/);
    const c = loadQueryConfig({ 'key-file': f, 'max-price': '0.05', asset: 'any' }, {});
    expect(c).toMatchObject({ maxPrice: '0.05', budget: '0.05', asset: undefined, baseUrl: 'http://127.0.0.1:8402' });
  });
});
