/**
 * Negative tests: each attack or mistake gets the ledger's real code from the devnet (which
 * verifies signatures, sorting, quorum, network, expiry and sequence itself) and a clear error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefusedError, normalizeIntent, type BuiltPayload, type ChainParams, type SigningKey, type WalletDescriptor } from '@vault/sdk';
import { decode, encode } from 'ripple-binary-codec';
import { startXrplDevnet, type XrplDevnet } from '../src/devnet/index.js';
import { confirmUntilFinal, createXrplDriver, type XrplDriver } from '../src/index.js';
import { rpcCall } from '../src/rpc.js';
import { genesisWallet, signer } from './helpers.js';

let devnet: XrplDevnet;
let legacy: XrplDevnet;
let driver: XrplDriver;
const CHAIN = 'xrpl:local';

beforeAll(async () => {
  devnet = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 0 });
  legacy = await startXrplDevnet({ networkId: 1, closeIntervalMs: 0 });
  driver = createXrplDriver({
    chains: {
      [CHAIN]: { url: devnet.url, networkId: 21337 },
      'xrpl:testnet': { url: legacy.url, networkId: 1 },
    },
  });
});
afterAll(async () => {
  await devnet.close();
  await legacy.close();
});

const DEST = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';

async function setup(target = () => devnet, chain = CHAIN) {
  const { wallet, keys, address } = genesisWallet(target(), { chain, curves: ['ed25519', 'secp256k1', 'ed25519'], quorum: 2 });
  const params = await driver.fetchParams({ wallet });
  return { wallet, keys, address, params };
}

function buildWith(wallet: WalletDescriptor, params: ChainParams, amount = '1000000'): BuiltPayload {
  return driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: DEST, amount }), wallet, params });
}

async function sign(built: BuiltPayload, wallet: WalletDescriptor, keys: SigningKey[], indexes = [0, 1]) {
  if (wallet.control.kind !== 'native_multisig') throw new Error('native');
  const c = wallet.control;
  return Promise.all(indexes.map((i) => signer.signPayload({ built, key: keys[i] as SigningKey, signerAddress: c.signers[i]?.address ?? '' })));
}

async function assembled(wallet: WalletDescriptor, keys: SigningKey[], params: ChainParams) {
  const built = buildWith(wallet, params);
  const result = driver.assemble({ built, contributions: await sign(built, wallet, keys), wallet });
  if (!result.ok) throw new Error('short');
  return { built, blob: result.blob, txHash: result.txHash };
}

describe('negative: the ledger refuses with its own codes', () => {
  it('tampered amount after signing: invalidTransaction, Invalid signature on account …', async () => {
    const { wallet, keys, params } = await setup();
    const { blob } = await assembled(wallet, keys, params);
    const tx = decode(blob) as Record<string, unknown>;
    const tampered = encode({ ...tx, Amount: '9000000' });
    const r = await driver.submit({ chain: CHAIN, blob: tampered });
    expect(r).toMatchObject({ status: 'rejected', code: 'invalidTransaction', retriable: false });
    expect(r.status === 'rejected' && r.message).toMatch(/^fails local checks: Invalid signature on account r/);
    expect(devnet.ledger.xrpBalance(DEST)).toBeGreaterThan(0n);
  });

  it('signatures over another amount do not count at assembly', async () => {
    const { wallet, keys, params } = await setup();
    const signedFor = buildWith(wallet, params, '1000000');
    const other = buildWith(wallet, params, '1000001');
    const result = driver.assemble({ built: other, contributions: await sign(signedFor, wallet, keys), wallet });
    expect(result).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: 0, quorum: 2 });
    if (!result.ok) expect(result.invalid.map((i) => [i.reason, i.detail])).toEqual(Array(2).fill(['bad_signature', 'signature does not verify over the multisigning data']));
  });

  it('unsorted Signers: invalidTransaction, Unsorted Signers array.', async () => {
    const { wallet, keys, params } = await setup();
    const { blob } = await assembled(wallet, keys, params);
    const tx = decode(blob) as Record<string, unknown>;
    const reversed = encode({ ...tx, Signers: [...(tx['Signers'] as unknown[])].reverse() });
    const r = await driver.submit({ chain: CHAIN, blob: reversed });
    expect(r).toMatchObject({ status: 'rejected', code: 'invalidTransaction', message: 'fails local checks: Unsorted Signers array.' });
  });

  it('duplicate Signers: invalidTransaction via submit, invalidParams via submit_multisigned', async () => {
    const { wallet, keys, params } = await setup();
    const { blob } = await assembled(wallet, keys, params);
    const tx = decode(blob) as Record<string, unknown>;
    const signers = tx['Signers'] as unknown[];
    const dup = encode({ ...tx, Signers: [signers[0], signers[0], signers[1]] });
    const r = await driver.submit({ chain: CHAIN, blob: dup });
    expect(r).toMatchObject({ status: 'rejected', code: 'invalidTransaction', message: 'fails local checks: Duplicate Signers not allowed.' });
    const ms = await rpcCall({ url: devnet.url, fetch: fetch as never }, 'submit_multisigned', { tx_json: { ...tx, Signers: [signers[1], signers[0], signers[0]] } });
    expect(ms).toMatchObject({ status: 'error', error: 'invalidParams' });
    expect(ms['error_message']).toMatch(/^Duplicate Signers:Signer:Account entries \(r\w+\) are not allowed\.$/);
    // submit_multisigned sorts for the caller: the same signatures in reverse order are applied.
    const ok = await rpcCall({ url: devnet.url, fetch: fetch as never }, 'submit_multisigned', { tx_json: { ...tx, Signers: [...signers].reverse() } });
    expect(ok['engine_result']).toBe('tesSUCCESS');
  });

  it('short quorum: a blob with one signature is tefBAD_QUORUM; assemble reports the shortfall', async () => {
    const { wallet, keys, params } = await setup();
    const built = buildWith(wallet, params);
    const [one] = await sign(built, wallet, keys, [0]);
    const short = driver.assemble({ built, contributions: [one as never], wallet });
    expect(short).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: 1, quorum: 2 });
    if (!short.ok) expect(short.missing).toHaveLength(2);
    const { signersArray } = await import('../src/multisig.js');
    const blob = encode({ ...(built.payload as { tx_json: Record<string, unknown> }).tx_json, Signers: signersArray([one as never]) });
    const r = await driver.submit({ chain: CHAIN, blob });
    expect(r).toMatchObject({ status: 'rejected', code: 'tefBAD_QUORUM', message: 'Signatures provided do not meet the quorum.', retriable: false });
  });

  it('a valid signature from a key not on the signer list is tefBAD_SIGNATURE', async () => {
    const { wallet, keys, params } = await setup();
    const { wallet: stranger, keys: strangerKeys } = genesisWallet(devnet, { chain: CHAIN, curves: ['ed25519'], quorum: 1 });
    if (wallet.control.kind !== 'native_multisig' || stranger.control.kind !== 'native_multisig') throw new Error('native');
    // The descriptor claims a member the ledger's list does not hold.
    const lying: WalletDescriptor = { ...wallet, control: { ...wallet.control, signers: [...wallet.control.signers, stranger.control.signers[0] as never], quorum: 1 } };
    const built = buildWith(lying, params);
    const c = await signer.signPayload({ built, key: strangerKeys[0] as SigningKey, signerAddress: stranger.control.signers[0]?.address ?? '' });
    const result = driver.assemble({ built, contributions: [c], wallet: lying });
    if (!result.ok) throw new Error('assemble');
    expect(await driver.submit({ chain: CHAIN, blob: result.blob })).toMatchObject({ status: 'rejected', code: 'tefBAD_SIGNATURE' });
    void keys;
  });

  it('an account without a signer list: tefNOT_MULTI_SIGNING', async () => {
    const { wallet, keys, params } = await setup();
    if (wallet.control.kind !== 'native_multisig') throw new Error('native');
    const plain = devnet.faucet();
    const w2: WalletDescriptor = { ...wallet, control: { ...wallet.control, address: plain.address } };
    const p2 = await driver.fetchParams({ wallet: w2 });
    const { blob } = await assembled(w2, keys, p2);
    expect(await driver.submit({ chain: CHAIN, blob })).toMatchObject({ status: 'rejected', code: 'tefNOT_MULTI_SIGNING' });
    void params;
  });

  it('wrong network: telWRONG_NETWORK, telREQUIRES_NETWORK_ID, telNETWORK_ID_MAKES_TX_NON_CANONICAL', async () => {
    const { wallet, keys, params } = await setup();
    const wrong = await assembled(wallet, keys, { ...params, network_id: 21338 } as ChainParams);
    expect(await driver.submit({ chain: CHAIN, blob: wrong.blob })).toMatchObject({ status: 'rejected', code: 'telWRONG_NETWORK', retriable: false });
    const missing = await assembled(wallet, keys, { ...params, network_id: null } as ChainParams);
    expect(await driver.submit({ chain: CHAIN, blob: missing.blob })).toMatchObject({ status: 'rejected', code: 'telREQUIRES_NETWORK_ID' });
    const low = await setup(() => legacy, 'xrpl:testnet');
    expect(low.params.network_id).toBe(1);
    const extra = await assembled(low.wallet, low.keys, { ...low.params, network_id: 5000 } as ChainParams);
    expect(await driver.submit({ chain: 'xrpl:testnet', blob: extra.blob })).toMatchObject({ status: 'rejected', code: 'telNETWORK_ID_MAKES_TX_NON_CANONICAL' });
  });

  it('wrong network at fetchParams: a server reporting another network id is refused', async () => {
    const misconfigured = createXrplDriver({ chains: { [CHAIN]: { url: legacy.url, networkId: 21337 } } });
    const { wallet } = genesisWallet(legacy, { chain: CHAIN, curves: ['ed25519'], quorum: 1 });
    await expect(misconfigured.fetchParams({ wallet })).rejects.toThrow(RefusedError);
    await expect(misconfigured.fetchParams({ wallet })).rejects.toThrow(/wrong network: .* reports network id 1/);
  });

  it('expired LastLedgerSequence: tefMAX_LEDGER at submit, and confirm says the payload is dead', async () => {
    const { wallet, keys, params } = await setup();
    const { built, blob, txHash } = await assembled(wallet, keys, params);
    while (devnet.ledger.currentLedgerIndex <= params.last_ledger_sequence) devnet.closeLedger();
    expect(await driver.submit({ chain: CHAIN, blob })).toMatchObject({ status: 'rejected', code: 'tefMAX_LEDGER', message: 'Ledger sequence too high.', retriable: false });
    expect(await driver.confirm({ chain: CHAIN, txHash, built })).toMatchObject({ status: 'failed', code: 'tefMAX_LEDGER', dead: true });
    expect(await confirmUntilFinal(driver, CHAIN, txHash, built, { attempts: 3, intervalMs: 1 })).toMatchObject({ status: 'failed', dead: true });
  });

  it('confirmUntilFinal keeps polling while pending and gives up with the last pending', async () => {
    const { wallet, keys, params } = await setup();
    const { built, blob, txHash } = await assembled(wallet, keys, params);
    await driver.submit({ chain: CHAIN, blob });
    expect(await confirmUntilFinal(driver, CHAIN, txHash, built, { attempts: 2, intervalMs: 1 })).toEqual({ status: 'pending', txHash });
    setTimeout(() => devnet.closeLedger(), 5);
    expect(await confirmUntilFinal(driver, CHAIN, txHash, built, { attempts: 50, intervalMs: 5 })).toMatchObject({ status: 'confirmed' });
  });

  it('bad sequence: tefPAST_SEQ below, terPRE_SEQ (retriable) above', async () => {
    const { wallet, keys, params } = await setup();
    const past = await assembled(wallet, keys, { ...params, sequence: params.sequence - 1 });
    expect(await driver.submit({ chain: CHAIN, blob: past.blob })).toMatchObject({ status: 'rejected', code: 'tefPAST_SEQ', retriable: false });
    const future = await assembled(wallet, keys, { ...params, sequence: params.sequence + 1 });
    expect(await driver.submit({ chain: CHAIN, blob: future.blob })).toMatchObject({ status: 'rejected', code: 'terPRE_SEQ', retriable: true });
    // The sequence is consumed by another transaction: confirm reports the first one dead.
    const first = await assembled(wallet, keys, params);
    const other = await assembled(wallet, keys, { ...params, last_ledger_sequence: params.last_ledger_sequence + 1 });
    expect(await driver.submit({ chain: CHAIN, blob: other.blob })).toMatchObject({ status: 'submitted', code: 'tesSUCCESS' });
    devnet.closeLedger();
    expect(await driver.confirm({ chain: CHAIN, txHash: first.txHash, built: first.built })).toMatchObject({ status: 'failed', code: 'tefPAST_SEQ', dead: true });
  });

  it('attack: a malleated high-s secp256k1 signature is not counted and the ledger refuses it', async () => {
    const { wallet, keys, params } = await setup();
    const built = buildWith(wallet, params);
    const [ed, secp] = await sign(built, wallet, keys, [0, 1]);
    const der = Buffer.from(secp?.signature.hex ?? '', 'hex');
    const rLen = der[3] as number;
    const r = der.subarray(4, 4 + rLen);
    const s = BigInt(`0x${der.subarray(6 + rLen).toString('hex')}`);
    const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const { derSignature } = await import('../src/signer.js');
    const high = Buffer.from(derSignature(r, Buffer.from((N - s).toString(16).padStart(64, '0'), 'hex'))).toString('hex');
    const malleated = { ...(secp as NonNullable<typeof secp>), signature: { ...(secp as NonNullable<typeof secp>).signature, hex: high } };
    // Control: the same parse and re-encoding with the original s still verifies.
    const same = Buffer.from(derSignature(r, Buffer.from(s.toString(16).padStart(64, '0'), 'hex'))).toString('hex');
    const control = { ...(secp as NonNullable<typeof secp>), signature: { ...(secp as NonNullable<typeof secp>).signature, hex: same } };
    expect(driver.assemble({ built, contributions: [ed as never, control], wallet })).toMatchObject({ ok: true, weight: 2 });
    const result = driver.assemble({ built, contributions: [ed as never, malleated], wallet });
    expect(result).toMatchObject({ ok: false, weight: 1 });
    const { signersArray } = await import('../src/multisig.js');
    const blob = encode({ ...(built.payload as { tx_json: Record<string, unknown> }).tx_json, Signers: signersArray([ed as never, malleated]) });
    const r2 = await driver.submit({ chain: CHAIN, blob });
    expect(r2).toMatchObject({ status: 'rejected', code: 'invalidTransaction' });
    expect(r2.status === 'rejected' && r2.message).toMatch(/Invalid signature on account/);
  });

  it('a fee below base x (1 + signatures) is telINSUF_FEE_P', async () => {
    const { wallet, keys, params } = await setup();
    const cheap = await assembled(wallet, keys, { ...params, base_fee_drops: 5 });
    expect(await driver.submit({ chain: CHAIN, blob: cheap.blob })).toMatchObject({ status: 'rejected', code: 'telINSUF_FEE_P', retriable: true });
  });

  it('a replay of an applied blob is tefPAST_SEQ and moves nothing', async () => {
    const { wallet, keys, params } = await setup();
    const before = devnet.ledger.xrpBalance(DEST);
    const { blob, built, txHash } = await assembled(wallet, keys, params);
    expect(await driver.submit({ chain: CHAIN, blob })).toMatchObject({ status: 'submitted', code: 'tesSUCCESS', txHash });
    expect(await driver.confirm({ chain: CHAIN, txHash, built })).toEqual({ status: 'pending', txHash });
    devnet.closeLedger();
    expect(await driver.confirm({ chain: CHAIN, txHash, built })).toMatchObject({ status: 'confirmed', code: 'tesSUCCESS' });
    expect(await driver.submit({ chain: CHAIN, blob })).toMatchObject({ status: 'rejected', code: 'tefPAST_SEQ' });
    expect(devnet.ledger.xrpBalance(DEST) - before).toBe(1_000_000n);
  });

  it('what the devnet does not model fails closed', async () => {
    const { Wallet } = await import('xrpl');
    const w = Wallet.generate();
    devnet.faucet(w.classicAddress);
    const base = { Account: w.classicAddress, Fee: '10', Sequence: devnet.ledger.account(w.classicAddress)?.sequence, NetworkID: 21337 };
    const offer = w.sign({ ...base, TransactionType: 'OfferCreate', TakerGets: '1000', TakerPays: { currency: 'USD', issuer: DEST, value: '1' } } as never);
    expect(await driver.submit({ chain: CHAIN, blob: offer.tx_blob })).toMatchObject({ status: 'rejected', code: 'temUNKNOWN' });
    const paths = w.sign({ ...base, TransactionType: 'Payment', Destination: DEST, Amount: '1000000', SendMax: '2000000' } as never);
    expect(await driver.submit({ chain: CHAIN, blob: paths.tx_blob })).toMatchObject({ status: 'rejected', code: 'notImpl' });
    const t = { url: devnet.url, fetch: fetch as never };
    expect(await rpcCall(t, 'book_offers', {})).toMatchObject({ error: 'unknownCmd', status: 'error' });
    expect(await rpcCall(t, 'tx', { transaction: 'AB'.repeat(32) })).toMatchObject({ error: 'txnNotFound' });
    expect(await rpcCall(t, 'account_info', { account: 'rsA2LpzuawewSBQXkiju3YQTMzW13pAAdW' })).toMatchObject({ error: 'actNotFound' });
    expect(await driver.submit({ chain: CHAIN, blob: 'zz' })).toMatchObject({ status: 'rejected', code: 'invalidTransaction' });
  });
});
