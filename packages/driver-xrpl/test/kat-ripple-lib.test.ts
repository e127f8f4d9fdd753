/**
 * Known-answer tests that always run: recorded rippled data shipped in the dev dependency
 * `kat-ripple-lib` (npm alias of ripple-lib@0.17.9, ISC license, by Ripple): its
 * `test/fixtures/` JSON files only — recorded rippled responses, a real multisigned AccountSet
 * combined from two single-signer blobs, and a real multisign (sign-as) Payment. None of
 * ripple-lib's JavaScript is loaded: every check runs the driver's own functions over the JSON.
 *
 * The recorded responses are WebSocket replies (`{id, status, type, result}`); a loopback HTTP
 * server answers JSON-RPC with their `result` (an error reply, whose fields sit at the top level
 * over WebSocket, becomes the `result` object as JSON-RPC carries it).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError, type BuiltPayload, type Contribution, type WalletDescriptor } from '@vault/sdk';
import { decode } from 'ripple-binary-codec';
import {
  XRPL_DER_ENCODING,
  XRPL_PAYLOAD_FORMAT,
  assembleMultisig,
  classifySubmit,
  compareAccountIds,
  contributionProblem,
  createXrplDriver,
  parseTxResult,
  resultClass,
  signersArray,
  signingHash,
  type XrplDriver,
} from '../src/index.js';
import { fateOfUsed, ledgerTxOf } from '../src/fate.js';

const FIXTURES = join(dirname(createRequire(import.meta.url).resolve('kat-ripple-lib/package.json')), 'test', 'fixtures');
type Json = Record<string, any>;
const read = (path: string): any => JSON.parse(readFileSync(join(FIXTURES, path), 'utf8'));
/** A recorded WebSocket reply as the JSON-RPC `result` object. */
const resultOf = (path: string): Json => {
  const r = read(path) as Json;
  if (r['result'] !== undefined) return r['result'] as Json;
  const { id: _id, type: _type, ...rest } = r;
  return rest;
};

/** A multisig payload for `tx` (Signers dropped, SigningPubKey empty), as buildPayload makes one. */
function builtOf(tx: Json, chain = 'xrpl:mainnet'): BuiltPayload {
  const { Signers: _s, TxnSignature: _t, ...rest } = tx;
  const tx_json = { ...rest, SigningPubKey: '' };
  return { payload: { format: XRPL_PAYLOAD_FORMAT, chain, tx_json }, digest: signingHash(tx_json), summary: 'recorded' } as unknown as BuiltPayload;
}

/** The Signer entries of a signed blob, as the Contributions the driver assembles. */
function contributionsOf(blob: string): Contribution[] {
  const tx = decode(blob) as Json;
  return (tx['Signers'] as { Signer: Json }[]).map(({ Signer: s }) => ({
    signer_address: s['Account'],
    public_key: { curve: 'secp256k1', hex: String(s['SigningPubKey']).toLowerCase() },
    signature: { encoding: XRPL_DER_ENCODING, hex: String(s['TxnSignature']).toLowerCase() },
  }));
}

function walletOf(account: string, members: string[], quorum: number): WalletDescriptor {
  return {
    wallet: 'kat',
    chain: 'xrpl:mainnet',
    control: { kind: 'native_multisig', address: account, signers: members.map((a) => ({ address: a, curve: 'secp256k1', weight: 1 })), quorum },
  } as WalletDescriptor;
}

describe('ripple-lib 0.17.9 fixtures: multisig', () => {
  it('combine: two single-signer blobs assemble to the recorded blob and id (Signers sorted by AccountID)', () => {
    const [a, b] = read('requests/combine.json') as string[];
    const expected = read('responses/combine.json') as { signedTransaction: string; id: string };
    const tx = decode(a as string) as Json;
    const built = builtOf(tx);
    // Each blob's unsigned transaction is the same payload.
    expect(signingHash({ ...(decode(b as string) as Json), Signers: undefined, SigningPubKey: '' })).toBe(built.digest);
    const contributions = [...contributionsOf(a as string), ...contributionsOf(b as string)];
    for (const c of contributions) expect(contributionProblem((built.payload as Json)['tx_json'], c, c.signer_address), c.signer_address).toBeNull();
    const wallet = walletOf(String(tx['Account']), contributions.map((c) => c.signer_address), 2);
    for (const order of [contributions, [...contributions].reverse()]) {
      const r = assembleMultisig(built, order, wallet);
      expect(r).toMatchObject({ ok: true, weight: 2, quorum: 2 });
      if (!r.ok) return;
      expect(r.blob).toBe(expected.signedTransaction);
      expect(r.txHash).toBe(expected.id);
    }
    // The recorded order is the AccountID byte order the driver sorts by, from either input order.
    const recorded = (decode(expected.signedTransaction) as Json)['Signers'].map((s: Json) => s['Signer']['Account']);
    expect(signersArray(contributions).map((s) => (s['Signer'] as Json)['Account'])).toEqual(recorded);
    expect(signersArray([...contributions].reverse()).map((s) => (s['Signer'] as Json)['Account'])).toEqual(recorded);
    expect(compareAccountIds(recorded[0], recorded[1])).toBeLessThan(0);
  });

  it('combine: a signature over other bytes, or from another key, does not verify', () => {
    const [a] = read('requests/combine.json') as string[];
    const tx = decode(a as string) as Json;
    const [c] = contributionsOf(a as string) as [Contribution];
    const other = { ...(builtOf(tx).payload as Json)['tx_json'], Sequence: Number(tx['Sequence']) + 1 };
    expect(contributionProblem(other, c, c.signer_address)).toEqual({ reason: 'bad_signature', detail: 'signature does not verify over the multisigning data' });
    const [, d] = [...contributionsOf(a as string), ...contributionsOf((read('requests/combine.json') as string[])[1] as string)] as Contribution[];
    expect(contributionProblem((builtOf(tx).payload as Json)['tx_json'], { ...c, public_key: (d as Contribution).public_key }, c.signer_address)).toEqual({
      reason: 'wrong_key',
      detail: `public key does not control ${c.signer_address}`,
    });
  });

  it('sign-as: the recorded multisign signature verifies and assembles to the recorded blob and id', () => {
    const request = read('requests/sign-as.json') as Json;
    const expected = read('responses/sign-as.json') as { signedTransaction: string; id: string };
    const signed = decode(expected.signedTransaction) as Json;
    const built = builtOf(signed);
    const tx_json = (built.payload as Json)['tx_json'];
    expect(tx_json).toEqual({ ...request, SigningPubKey: '' });
    const contributions = contributionsOf(expected.signedTransaction);
    expect(contributions).toHaveLength(1);
    expect(contributionProblem(tx_json, contributions[0] as Contribution, (contributions[0] as Contribution).signer_address)).toBeNull();
    const r = assembleMultisig(built, contributions, walletOf(request['Account'], [(contributions[0] as Contribution).signer_address], 1));
    expect(r).toMatchObject({ ok: true, blob: expected.signedTransaction, txHash: expected.id });
  });
});

/** tx fixtures whose recorded hash is the transaction's real hash. */
const GENUINE = [
  'account-set-tracking-off', 'account-set-tracking-on', 'account-set', 'amendment', 'escrow-cancellation', 'offer-cancel',
  'offer-create-sell', 'offer-create', 'order-with-expiration', 'payment-channel-claim', 'payment-channel-create',
  'payment-channel-fund', 'set-fee', 'set-regular-key', 'trust-set-frozen-off', 'trust-set-no-quality', 'trust-set',
];
/** Copies of account-set.json whose `hash` ripple-lib's tests edited (last digit): the driver must notice. */
const EDITED_COPIES = ['ledger-without-time', 'ledger-zero', 'no-ledger-found', 'no-ledger-index', 'not-validated'];

describe('ripple-lib 0.17.9 fixtures: recorded transactions', () => {
  it('the driver recomputes the recorded hash of every genuine recorded transaction', () => {
    const all = readdirSync(join(FIXTURES, 'rippled', 'tx')).map((f) => f.replace(/\.json$/, ''));
    for (const name of GENUINE) expect(all).toContain(name);
    for (const name of GENUINE) {
      const r = resultOf(`rippled/tx/${name}.json`);
      const t = ledgerTxOf(r);
      expect(t.hash, name).toBe(String(r['hash']).toUpperCase());
      expect(t.account, name).toBe(r['Account']);
      expect(t.sequence, name).toBe(r['Sequence']);
    }
  });

  it('a reply whose hash is not the hash of its transaction is refused (TransportError), whatever else it says', () => {
    const real = ledgerTxOf(resultOf('rippled/tx/account-set.json'));
    for (const name of EDITED_COPIES) {
      const r = resultOf(`rippled/tx/${name}.json`);
      expect(() => ledgerTxOf(r), name).toThrow(TransportError);
      expect(() => ledgerTxOf(r), name).toThrow(new RegExp(`computed ${real.hash}`));
    }
    expect(() => ledgerTxOf(resultOf('rippled/tx/unrecognized.json'))).toThrow(/does not re-encode/);
  });

  it('parseTxResult reads the recorded v1 shape: validated, ledger, result, fields at the root', () => {
    const trust = parseTxResult(resultOf('rippled/tx/trust-set.json'));
    expect(trust).toMatchObject({ validated: true, ledgerIndex: 14640523, result: 'tesSUCCESS' });
    expect(trust.tx['TransactionType']).toBe('TrustSet');
    expect(trust.hash).toMatch(/^635A0769/);
    const sell = parseTxResult(resultOf('rippled/tx/offer-create-sell.json'));
    expect(sell.result).toBe('tecUNFUNDED_OFFER');
    expect(resultClass(sell.result as string)).toBe('tec');
    const pending = parseTxResult(resultOf('rippled/tx/not-validated.json'));
    expect(pending.validated).toBe(false);
    expect(parseTxResult(resultOf('rippled/tx/no-meta.json')).result).toBeNull();
  });

  it('fate over recorded transactions: the same payload applied (tes) or dead (tec), another payload dead', () => {
    const trustReply = resultOf('rippled/tx/trust-set.json');
    const trust = ledgerTxOf(trustReply);
    expect(fateOfUsed(builtOf(trustReply).digest, trust, trust.sequence)).toMatchObject({ fate: 'applied', code: 'applied' });
    const sellReply = resultOf('rippled/tx/offer-create-sell.json');
    const sell = ledgerTxOf(sellReply);
    expect(fateOfUsed(builtOf(sellReply).digest, sell, sell.sequence)).toMatchObject({ fate: 'dead', code: 'tecUNFUNDED_OFFER' });
    const rival = builtOf({ ...trustReply, Fee: '13' });
    expect(fateOfUsed(rival.digest, trust, trust.sequence)).toMatchObject({ fate: 'dead', code: 'sequence_consumed' });
  });

  it('classifySubmit on the recorded submit results', () => {
    expect(classifySubmit(resultOf('rippled/submit.json')['engine_result'])).toEqual({ accepted: true, retriable: false });
    expect(classifySubmit(resultOf('rippled/submit-failed.json')['engine_result'])).toEqual({ accepted: false, retriable: false });
  });
});

describe('ripple-lib 0.17.9 fixtures: the driver over JSON-RPC replaying recorded replies', () => {
  let server: Server;
  let driver: XrplDriver;
  const replies: Record<string, string> = {
    server_info: 'rippled/server-info.json',
    gateway_balances: 'rippled/gateway-balances.json',
  };
  let accountInfo = 'rippled/account-info.json';
  let submit = 'rippled/submit.json';
  let txReply = 'rippled/tx/trust-set.json';

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const { method } = JSON.parse(body) as { method: string };
        const file = method === 'account_info' ? accountInfo : method === 'submit' ? submit : method === 'tx' ? txReply : replies[method];
        const result = file ? resultOf(file) : { error: 'unknownCmd', status: 'error' };
        const text = JSON.stringify({ result });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    driver = createXrplDriver({ chains: { 'xrpl:mainnet': { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` } } });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const account = 'r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59';

  it('server_info of rippled 0.24 has no network_id: networkId is null', async () => {
    expect(await driver.networkId({ chain: 'xrpl:mainnet' })).toBeNull();
  });

  it('account_info (v1: signer_lists inside account_data) gives the control state', async () => {
    accountInfo = 'rippled/account-info.json';
    const recorded = resultOf(accountInfo)['account_data'];
    const state = await driver.controlState({ wallet: walletOf(account, [], 1) });
    expect(state).toMatchObject({
      address: account,
      quorum: recorded['signer_lists'][0]['SignerQuorum'],
      masterKeyEnabled: true,
      extra: { sequence: 23, flags: 655360, regularKey: null },
    });
    expect(state.members).toEqual(recorded['signer_lists'][0]['SignerEntries'].map((e: Json) => ({ address: e['SignerEntry']['Account'], weight: e['SignerEntry']['SignerWeight'] })));
    // A reply that does not say it is from a validated ledger is not proof of a payload's fate.
    const built = builtOf({ TransactionType: 'AccountSet', Account: account, Fee: '12', Sequence: 23, LastLedgerSequence: 9592230 }, 'xrpl:mainnet');
    await expect(driver.payloadFate({ chain: 'xrpl:mainnet', built })).rejects.toThrow(/not a validated ledger answer/);
  });

  it('gateway_balances obligations and account_info flags give the issuer facts; actNotFound means no issuer', async () => {
    accountInfo = 'rippled/account-info.json';
    const facts = await driver.issuerFacts({ chain: 'xrpl:mainnet', issuer: account });
    expect(facts).toMatchObject({ exists: true, blackholed: false, requireAuth: false, globalFreeze: false, obligations: resultOf('rippled/gateway-balances.json')['obligations'] });
    accountInfo = 'rippled/account-info-not-found.json';
    expect(await driver.issuerFacts({ chain: 'xrpl:mainnet', issuer: 'rajTAg3hon5Lcu1RxQQPxTgHvqfhc1EaUS' })).toMatchObject({ exists: false });
    await expect(driver.controlState({ wallet: walletOf('rajTAg3hon5Lcu1RxQQPxTgHvqfhc1EaUS', [], 1) })).rejects.toThrow(/account/);
    accountInfo = 'rippled/account-info.json';
  });

  it('submit: the recorded tesSUCCESS is submitted with the blob hash; temBAD_FEE is rejected for good', async () => {
    const blob = resultOf('rippled/submit.json')['tx_blob'] as string;
    submit = 'rippled/submit.json';
    const ok = await driver.submit({ chain: 'xrpl:mainnet', blob });
    expect(ok).toMatchObject({ status: 'submitted', code: 'tesSUCCESS' });
    expect(ok.txHash).toMatch(/^[0-9A-F]{64}$/);
    submit = 'rippled/submit-failed.json';
    expect(await driver.submit({ chain: 'xrpl:mainnet', blob })).toMatchObject({ status: 'rejected', code: 'temBAD_FEE', retriable: false, txHash: ok.txHash });
  });

  it('confirm reads recorded tx replies: tesSUCCESS confirmed, tec failed and dead, not validated pending', async () => {
    txReply = 'rippled/tx/trust-set.json';
    const trust = resultOf(txReply);
    expect(await driver.confirm({ chain: 'xrpl:mainnet', txHash: trust['hash'], built: builtOf(trust) })).toMatchObject({ status: 'confirmed', code: 'tesSUCCESS', ledger: 14640523 });
    txReply = 'rippled/tx/offer-create-sell.json';
    const sell = resultOf(txReply);
    expect(await driver.confirm({ chain: 'xrpl:mainnet', txHash: sell['hash'], built: builtOf(sell) })).toMatchObject({ status: 'failed', code: 'tecUNFUNDED_OFFER', dead: true });
    txReply = 'rippled/tx/not-validated.json';
    const pending = resultOf(txReply);
    expect(await driver.confirm({ chain: 'xrpl:mainnet', txHash: pending['hash'], built: builtOf(pending) })).toMatchObject({ status: 'pending' });
  });
});
