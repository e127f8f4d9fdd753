/**
 * Threshold classes: a wallet whose low / medium / high thresholds differ (1 / 2 / 3, three
 * weight-1 signers). fetchParams carries the ledger's thresholds, buildPayload records the weight
 * the transaction needs (the highest of the low threshold and its operation's class), assemble
 * stops there, and the devnet (stellar-core's rules) takes exactly that many signatures.
 */
import { Account, Keypair, Operation, TransactionBuilder, xdr } from '@stellar/stellar-base';
import { afterAll, describe, expect, it } from 'vitest';
import { normalizeIntent, type ChainParams, type Contribution } from '@vault/sdk';
import { ACCOUNT_FLAGS, controlMismatch, type AccountFacts } from '../src/index.js';
import { neededWeight } from '../src/build.js';
import { startDevnet } from '../src/devnet/index.js';
import { CHAIN, buildSignAssemble, driverFor, multisigWallet, plainAccount, signerFor, trust } from './helpers.js';

const devnet = await startDevnet();
afterAll(() => devnet.close());
const driver = driverFor(devnet);
const signer = signerFor(devnet);
const D = { asset_decimals: 7 } as const;

const signatures = (blob: string) => xdr.TransactionEnvelope.fromXDR(blob, 'base64').v1().signatures();
const wallet = () => multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, low: 1, high: 3 });

/** The payload's envelope with every contribution attached, in order (what a careless assembler would send). */
function allAttached(txXdr: string, cs: Contribution[]): string {
  const env = xdr.TransactionEnvelope.fromXDR(txXdr, 'base64');
  env.v1().signatures(cs.map((c) => new xdr.DecoratedSignature({ hint: Buffer.from(String((c.signature as { hint?: string }).hint), 'hex'), signature: Buffer.from(c.signature.hex, 'hex') })));
  return env.toXDR('base64');
}

describe('neededWeight (stellar-core: the low threshold for the envelope, each operation its class)', () => {
  it('is the highest of low and the classes, and at least 1', () => {
    const t = { low: 1, med: 2, high: 3 };
    expect(neededWeight(['low'], t)).toBe(1);
    expect(neededWeight(['medium'], t)).toBe(2);
    expect(neededWeight(['high'], t)).toBe(3);
    expect(neededWeight(['low', 'high'], t)).toBe(3);
    expect(neededWeight(['low'], { low: 0, med: 0, high: 0 })).toBe(1); // a threshold of 0 still needs one signature
    expect(neededWeight(['medium'], { low: 5, med: 2, high: 9 })).toBe(5); // the envelope's low threshold applies too
    expect(neededWeight([], { low: 2, med: 4, high: 6 })).toBe(2);
  });
});

describe('a wallet with thresholds low 1 / medium 2 / high 3 and three weight-1 signers', () => {
  it('fetchParams carries the thresholds; controlState reports the medium one as the quorum and all three in extra', async () => {
    const w = await wallet();
    const params = await driver.fetchParams({ wallet: w.wallet });
    expect(params).toMatchObject({ kind: 'stellar', thresholds: { low: 1, med: 2, high: 3 } });
    const state = await driver.controlState({ wallet: w.wallet });
    expect(state).toMatchObject({ quorum: 2, masterKeyEnabled: false, extra: { thresholds: { low: 1, med: 2, high: 3 }, master_weight: 0 } });
    // The devnet's own wallet maker sets the same shape.
    const made = await devnet.createWallet({ wallet: 'classes', signers: [0, 1, 2].map(() => ({ address: Keypair.random().publicKey(), weight: 1 })), quorum: 2, low: 1, high: 3 });
    expect(await driver.fetchParams({ wallet: made })).toMatchObject({ thresholds: { low: 1, med: 2, high: 3 } });
  });

  it('a payment (medium) is short with one signature and lands with two', async () => {
    const w = await wallet();
    const dest = await plainAccount(devnet);
    const before = devnet.ledger.nativeBalance(dest.publicKey());
    const one = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '25' }, [0]);
    expect(one.built.payload).toMatchObject({ threshold: 'medium', needed_weight: 2 });
    expect(one.built.summary).toMatch(/medium threshold \(weight 2\)/);
    expect(one.assembled).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: 1, quorum: 2 });
    const all = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '25' }, [0, 1, 2]);
    expect(all.assembled).toMatchObject({ ok: true, weight: 3, quorum: 2 });
    if (!all.assembled.ok) return;
    expect(signatures(all.assembled.blob)).toHaveLength(2);
    expect(await driver.submit({ chain: CHAIN, blob: all.assembled.blob })).toMatchObject({ status: 'submitted' });
    expect(await driver.confirm({ chain: CHAIN, txHash: all.assembled.txHash, built: all.built })).toMatchObject({ status: 'confirmed' });
    expect(devnet.ledger.nativeBalance(dest.publicKey()) - before).toBe(25n);
  });

  it('account_flags (setOptions changing only flags) is MEDIUM on stellar-core: two signatures land, three are tx_bad_auth_extra', async () => {
    const w = await wallet();
    const request = { destination: w.address, amount: '0', operation: { op: 'account_flags' as const, set: ACCOUNT_FLAGS.auth_revocable } };
    const one = await buildSignAssemble(driver, signer, w, request, [0]);
    expect(one.built.payload).toMatchObject({ threshold: 'medium', needed_weight: 2 });
    expect(one.assembled).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: 1, quorum: 2 });
    const r = await buildSignAssemble(driver, signer, w, request, [0, 1, 2]);
    expect(r.assembled).toMatchObject({ ok: true, weight: 3, quorum: 2 });
    if (!r.assembled.ok) return;
    // Waiting for (and attaching) the high threshold's three would be refused by the ledger.
    expect(await driver.submit({ chain: CHAIN, blob: allAttached((r.built.payload as { tx_xdr: string }).tx_xdr, r.contributions) })).toMatchObject({
      status: 'rejected',
      code: 'tx_bad_auth_extra',
    });
    expect(signatures(r.assembled.blob)).toHaveLength(2);
    expect(await driver.submit({ chain: CHAIN, blob: r.assembled.blob })).toMatchObject({ status: 'submitted' });
    expect(devnet.ledger.account(w.address)?.flags).toBe(ACCOUNT_FLAGS.auth_revocable);
  });

  it('authorize_holder (low) assembles and lands with one signature', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, low: 1, high: 3, flags: ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_revocable });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'TIER', w.address);
    const r = await buildSignAssemble(
      driver,
      signer,
      w,
      { destination: holder.publicKey(), amount: '0', asset_symbol: 'TIER', asset_issuer: w.address, ...D, operation: { op: 'authorize_holder' } },
      [2],
    );
    expect(r.built.payload).toMatchObject({ threshold: 'low', needed_weight: 1 });
    expect(r.assembled).toMatchObject({ ok: true, weight: 1, quorum: 1 });
    if (!r.assembled.ok) return;
    expect(await driver.submit({ chain: CHAIN, blob: r.assembled.blob })).toMatchObject({ status: 'submitted' });
    expect(devnet.ledger.trustLine(holder.publicKey(), 'TIER', w.address)?.flags).toBe(1);
  });

  it('the devnet enforces the high class: a setOptions adding a signer fails as op_bad_auth with two signatures and lands with three', async () => {
    const w = await wallet();
    const added = Keypair.random().publicKey();
    const build = () =>
      new TransactionBuilder(new Account(w.address, devnet.ledger.account(w.address)!.seq.toString()), { fee: '100', networkPassphrase: devnet.networkPassphrase })
        .addOperation(Operation.setOptions({ signer: { ed25519PublicKey: added, weight: 1 } }))
        .setTimeout(0)
        .build();
    const signWith = async (n: number) => {
      const tx = build();
      for (const k of w.keys.slice(0, n)) tx.signatures.push(new xdr.DecoratedSignature({ hint: Buffer.from(k.publicKey.subarray(28)), signature: Buffer.from(await k.sign(tx.hash())) }));
      return tx.toEnvelope().toXDR('base64');
    };
    expect(await driver.submit({ chain: CHAIN, blob: await signWith(2) })).toMatchObject({ status: 'rejected', code: 'tx_failed:op_bad_auth' });
    expect(await driver.submit({ chain: CHAIN, blob: await signWith(3) })).toMatchObject({ status: 'submitted' });
    expect(devnet.ledger.account(w.address)!.signers.map((s) => s.key)).toContain(added);
  });

  it('params without thresholds: every class is taken to need the descriptor quorum (the earlier behaviour)', async () => {
    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2, low: 1, high: 3, flags: ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_revocable });
    const holder = await plainAccount(devnet);
    await trust(devnet, holder, 'OLD', w.address);
    const { thresholds: _dropped, ...params } = (await driver.fetchParams({ wallet: w.wallet })) as Extract<ChainParams, { kind: 'stellar' }>;
    const intent = normalizeIntent({ wallet: w.wallet.wallet, destination: holder.publicKey(), amount: '0', asset_symbol: 'OLD', asset_issuer: w.address, ...D, operation: { op: 'authorize_holder' } });
    const built = driver.buildPayload({ intent, wallet: w.wallet, params });
    expect(built.payload).toMatchObject({ threshold: 'low', needed_weight: 2 });
    // Same transaction, same digest: the needed weight is metadata outside the hash.
    const withThresholds = driver.buildPayload({ intent, wallet: w.wallet, params: { ...params, thresholds: { low: 1, med: 2, high: 3 } } });
    expect(withThresholds.digest).toBe(built.digest);
    expect(withThresholds.payload).toMatchObject({ needed_weight: 1 });
    // A payload from before needed_weight existed: assemble falls back to the quorum.
    const { needed_weight: _n, ...legacy } = built.payload as Record<string, unknown>;
    const c = await signer.signPayload({ built, key: w.keys[0]!, signerAddress: (w.wallet.control as { signers: { address: string }[] }).signers[0]!.address });
    expect(driver.assemble({ built: { ...built, payload: legacy }, contributions: [c], wallet: w.wallet })).toMatchObject({ ok: false, reason: 'short_of_quorum', quorum: 2 });
    expect(driver.assemble({ built: withThresholds, contributions: [c], wallet: w.wallet })).toMatchObject({ ok: true, quorum: 1 });
  });
});

describe('controlMismatch with differing thresholds', () => {
  const members = [Keypair.random().publicKey(), Keypair.random().publicKey(), Keypair.random().publicKey()];
  const id = Keypair.random().publicKey();
  const account = (thresholds: AccountFacts['thresholds'], masterWeight = 0): AccountFacts =>
    ({
      id,
      sequence: 1n,
      thresholds,
      masterWeight,
      flags: { auth_required: false, auth_revocable: false, auth_immutable: false, auth_clawback_enabled: false },
      signers: [{ key: id, weight: masterWeight, type: 'ed25519_public_key' }, ...members.map((key) => ({ key, weight: 1, type: 'ed25519_public_key' }))],
      balances: [],
    }) as unknown as AccountFacts;
  const descriptor = {
    wallet: 'w',
    chain: CHAIN,
    control: { kind: 'native_multisig' as const, address: id, signers: members.map((address, i) => ({ address, curve: 'ed25519' as const, weight: 1, label: `m${i}` })), quorum: 2 },
  };

  it('accepts low and high that differ from the quorum (medium)', () => {
    expect(controlMismatch(account({ low: 1, med: 2, high: 3 }), descriptor)).toBeNull();
    expect(controlMismatch(account({ low: 0, med: 2, high: 0 }), descriptor)).toBeNull();
    expect(controlMismatch(account({ low: 2, med: 2, high: 2 }), descriptor)).toBeNull();
  });

  it('refuses a medium threshold other than the quorum, a low above medium, and an enabled master key that is not a member', () => {
    expect(controlMismatch(account({ low: 1, med: 3, high: 3 }), descriptor)).toMatch(/medium threshold 3 .* not the quorum 2/);
    expect(controlMismatch(account({ low: 3, med: 2, high: 3 }), descriptor)).toMatch(/low threshold 3 is above the medium threshold 2/);
    expect(controlMismatch(account({ low: 1, med: 2, high: 3 }, 1), descriptor)).toMatch(/signs on the ledger but is not in the descriptor/);
  });
});
