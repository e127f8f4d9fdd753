/**
 * payloadFate against the devnet over loopback HTTP: looked up by Account + Sequence in validated
 * ledgers only. Live then applied, a rival dead, expiry at LastLedgerSequence, a tec, both API
 * shapes, account_tx paging, and every way the ledger cannot show the answer (it must throw).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError, ValidationError, normalizeIntent, type BuiltPayload, type ChainParams, type SigningKey, type WalletDescriptor } from '@vault/sdk';
import { startXrplDevnet, type XrplDevnet } from '../src/devnet/index.js';
import { createXrplDriver, type XrplChainConfig, type XrplDriver } from '../src/index.js';
import { genesisWallet, signer } from './helpers.js';

const CHAIN = 'xrpl:local';
const DEST = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';
let devnet: XrplDevnet;
let driver: XrplDriver;
let v1: XrplDriver;

/** A driver whose every reply of `method` goes through `edit` first: a faulty or lagging server. */
function editedDriver(method: string, edit: (result: Record<string, any>) => Record<string, any>, extra: Partial<XrplChainConfig> = {}): XrplDriver {
  const fetchEdited = (async (url: string, init: { body: string }) => {
    const res = await fetch(url, init as RequestInit);
    const body = (await res.json()) as { result: Record<string, any> };
    const sent = JSON.parse(init.body) as { method: string };
    const text = JSON.stringify(sent.method === method ? { result: edit(body.result) } : body);
    return { ok: true, status: 200, text: async () => text };
  }) as never;
  return createXrplDriver({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337, fetch: fetchEdited, ...extra } } });
}

beforeAll(async () => {
  devnet = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 0 });
  driver = createXrplDriver({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337 } } });
  v1 = createXrplDriver({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337, apiVersion: 1 } } });
});
afterAll(() => devnet.close());

async function setup(balance?: bigint) {
  const { wallet, keys, address } = genesisWallet(devnet, { chain: CHAIN, curves: ['ed25519', 'secp256k1', 'ed25519'], quorum: 2, ...(balance ? { balance } : {}) });
  devnet.closeLedger();
  const params = await driver.fetchParams({ wallet });
  return { wallet, keys, address, params };
}

function build(wallet: WalletDescriptor, params: ChainParams, amount = '1000000'): BuiltPayload {
  return driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: DEST, amount }), wallet, params });
}

async function blobOf(built: BuiltPayload, wallet: WalletDescriptor, keys: SigningKey[]): Promise<string> {
  if (wallet.control.kind !== 'native_multisig') throw new Error('native');
  const c = wallet.control;
  const contributions = await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: keys[i] as SigningKey, signerAddress: c.signers[i]?.address ?? '' })));
  const r = driver.assemble({ built, contributions, wallet });
  if (!r.ok) throw new Error('short of quorum');
  return r.blob;
}

describe('payloadFate on the devnet', () => {
  it('live while unsubmitted and while only in the open ledger; applied once validated (API v2 and v1)', async () => {
    const { wallet, keys, params } = await setup();
    const built = build(wallet, params);
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'live', code: 'pending' });
    expect(await driver.submit({ chain: CHAIN, blob: await blobOf(built, wallet, keys) })).toMatchObject({ status: 'submitted', code: 'tesSUCCESS' });
    // Applied to the open ledger only: not proof. The validated Sequence is still the payload's.
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'live', code: 'pending' });
    devnet.closeLedger();
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'applied', code: 'applied' });
    expect(await v1.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'applied', code: 'applied' });
    // Later ledgers past LastLedgerSequence never turn an applied payload into a dead one.
    while (devnet.ledger.validatedLedgerIndex <= params.last_ledger_sequence) devnet.closeLedger();
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'applied' });
  });

  it('a rival built from the same params is dead (sequence_consumed) once the first is validated', async () => {
    const { wallet, keys, params } = await setup();
    const first = build(wallet, params, '1000000');
    const rival = build(wallet, params, '1000001');
    await driver.submit({ chain: CHAIN, blob: await blobOf(first, wallet, keys) });
    devnet.closeLedger();
    expect(await driver.payloadFate({ chain: CHAIN, built: first })).toMatchObject({ fate: 'applied' });
    const dead = await driver.payloadFate({ chain: CHAIN, built: rival });
    expect(dead).toMatchObject({ fate: 'dead', code: 'sequence_consumed' });
    expect(dead.message).toMatch(new RegExp(`sequence ${params.sequence} was used by [0-9A-F]{64}`));
    expect(await v1.payloadFate({ chain: CHAIN, built: rival })).toMatchObject({ fate: 'dead', code: 'sequence_consumed' });
  });

  it('expired: dead once a validated ledger reaches LastLedgerSequence with the sequence unused, live one ledger before', async () => {
    const { wallet, params } = await setup();
    const built = build(wallet, params);
    while (devnet.ledger.validatedLedgerIndex < params.last_ledger_sequence - 1) devnet.closeLedger();
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'live', code: 'pending' });
    devnet.closeLedger();
    expect(devnet.ledger.validatedLedgerIndex).toBe(params.last_ledger_sequence);
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'dead', code: 'expired' });
  });

  it('a tec result of this very payload is dead with the tec code (fee claimed, no payment)', async () => {
    const { wallet, keys, address, params } = await setup(20_000_000n);
    const built = build(wallet, params, '19999000');
    const destBefore = devnet.ledger.xrpBalance(DEST);
    expect(await driver.submit({ chain: CHAIN, blob: await blobOf(built, wallet, keys) })).toMatchObject({ status: 'submitted', code: 'tecUNFUNDED_PAYMENT' });
    devnet.closeLedger();
    expect(await driver.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'dead', code: 'tecUNFUNDED_PAYMENT' });
    expect(devnet.ledger.xrpBalance(DEST)).toBe(destBefore);
    expect(devnet.ledger.account(address)?.sequence).toBe(params.sequence + 1);
  });

  it('pages account_tx with its marker, and gives up (throws) when the page budget runs out', async () => {
    const { wallet, keys, address, params } = await setup();
    const built = build(wallet, params);
    await driver.submit({ chain: CHAIN, blob: await blobOf(built, wallet, keys) });
    devnet.closeLedger();
    // Newer history on top of it: incoming payments (Account is not the wallet).
    for (let i = 0; i < 3; i++) {
      devnet.faucet(address, 1_000_000n);
      devnet.closeLedger();
    }
    const paged = createXrplDriver({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337, historyPageSize: 1 } } });
    expect(await paged.payloadFate({ chain: CHAIN, built })).toMatchObject({ fate: 'applied' });
    const short = createXrplDriver({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337, historyPageSize: 1, historyMaxPages: 2 } } });
    await expect(short.payloadFate({ chain: CHAIN, built })).rejects.toThrow(TransportError);
  });
});

describe('payloadFate refuses to guess', () => {
  it('history gap: the sequence was consumed but account_tx does not show the transaction', async () => {
    const { wallet, keys, params } = await setup();
    const built = build(wallet, params);
    await driver.submit({ chain: CHAIN, blob: await blobOf(built, wallet, keys) });
    devnet.closeLedger();
    const gap = editedDriver('account_tx', (r) => ({ ...r, transactions: [] }));
    await expect(gap.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/sequence \d+ was consumed .* no validated transaction with it/);
    await expect(gap.payloadFate({ chain: CHAIN, built: build(wallet, params, '1000001') })).rejects.toThrow(TransportError);
  });

  it('attack: a server reply whose transaction was altered (not its recorded hash) is refused, not read as a rival', async () => {
    const { wallet, keys, params } = await setup();
    const built = build(wallet, params);
    await driver.submit({ chain: CHAIN, blob: await blobOf(built, wallet, keys) });
    devnet.closeLedger();
    const altered = editedDriver('account_tx', (r) => ({
      ...r,
      transactions: r['transactions'].map((e: Record<string, any>) => ({ ...e, tx_json: { ...e['tx_json'], DeliverMax: '1000001' } })),
    }));
    await expect(altered.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/does not re-encode to its hash/);
    const disagree = editedDriver('account_tx', (r) => ({
      ...r,
      transactions: r['transactions'].map((e: Record<string, any>) => ({ ...e, tx_json: { ...e['tx_json'], Amount: '5' } })),
    }));
    await expect(disagree.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/DeliverMax and Amount that disagree/);
    const noResult = editedDriver('account_tx', (r) => ({
      ...r,
      transactions: r['transactions'].map((e: Record<string, any>) => ({ ...e, meta: { ...e['meta'], TransactionResult: 'tefPAST_SEQ' } })),
    }));
    await expect(noResult.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/validated ledger with result tefPAST_SEQ/);
  });

  it('an answer that is not from a validated ledger, an RPC error, an unreachable server: TransportError', async () => {
    const { wallet, params } = await setup();
    const built = build(wallet, params);
    const notValidated = editedDriver('account_info', (r) => ({ ...r, validated: false }));
    await expect(notValidated.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/not a validated ledger answer/);
    const busy = editedDriver('account_info', () => ({ error: 'tooBusy', error_message: 'The server is too busy to help you now.', status: 'error' }));
    await expect(busy.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/tooBusy/);
    const badTx = editedDriver('account_tx', () => ({ status: 'success' }));
    const { wallet: w2, keys: k2, params: p2 } = await setup();
    const b2 = build(w2, p2);
    await driver.submit({ chain: CHAIN, blob: await blobOf(b2, w2, k2) });
    devnet.closeLedger();
    await expect(badTx.payloadFate({ chain: CHAIN, built: b2 })).rejects.toThrow(/no transactions array/);
    const down = createXrplDriver({ chains: { [CHAIN]: { url: 'http://127.0.0.1:9/', networkId: 21337, timeoutMs: 2000 } } });
    await expect(down.payloadFate({ chain: CHAIN, built })).rejects.toThrow(TransportError);
  });

  it('an account missing from the validated ledger cannot be answered for', async () => {
    const { wallet, params } = await setup();
    const built = build(wallet, params);
    const missing = editedDriver('account_info', (r) => ({ ...r, error: 'actNotFound', status: 'error' }));
    await expect(missing.payloadFate({ chain: CHAIN, built })).rejects.toThrow(/not in the validated ledger/);
  });

  it('a payload for another chain, or whose digest is not its signing hash, is a ValidationError', async () => {
    const { wallet, params } = await setup();
    const built = build(wallet, params);
    const two = createXrplDriver({ chains: { [CHAIN]: { url: devnet.url }, 'xrpl:other': { url: devnet.url } } });
    await expect(two.payloadFate({ chain: 'xrpl:other', built })).rejects.toThrow(ValidationError);
    await expect(driver.payloadFate({ chain: CHAIN, built: { ...built, digest: '00'.repeat(32) } })).rejects.toThrow(ValidationError);
    const payload = built.payload as { tx_json: Record<string, unknown> };
    const ticketLike = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: DEST, amount: '1' }), wallet, params: { ...params, sequence: 0 } });
    await expect(driver.payloadFate({ chain: CHAIN, built: ticketLike })).rejects.toThrow(/positive Sequence/);
    expect(payload.tx_json['Sequence']).toBe(params.sequence);
  });
});
