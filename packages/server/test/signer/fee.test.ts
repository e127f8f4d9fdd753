/**
 * Issue #20 item 8: a signer signed a 2 XRP fee because the trust file set no max_fee. The fee cap
 * at the signer, against the three real drivers (their pure build and sign halves; no ledger is
 * needed to build; EVM alone starts its devnet, since the signer reads the destination's code from
 * its own ledger before it signs): the driver's own conservative default applies when the trust
 * file is silent, an explicit max_fee wins, and a fee nobody can bound is never signed.
 */
import {
  DriverRegistry,
  defineChainDriver,
  intentId,
  normalizeIntent,
  policyDigest,
  protectChainFacts,
  type BuiltPayload,
  type ChainDriver,
  type ChainParams,
  type ChainSigner,
  type Curve,
  type IntentRequest,
  type PolicySet,
  type SignRequest,
  type WalletDescriptor,
} from '@vault/sdk';
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import * as evm from '@vault/driver-evm-safe';
import { startEvmDevnet, type EvmDevnet } from '@vault/driver-evm-safe/devnet';
import * as stellar from '@vault/driver-stellar';
import * as xrpl from '@vault/driver-xrpl';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createKey, generateSecret, SoftwareKeystore } from '../../src/signer/keystore.js';
import { verifyAndSign, type SignerDeps, type SignOutcome } from '../../src/signer/sign.js';
import { SignerState } from '../../src/signer/state.js';
import { parseTrust, type TrustFile } from '../../src/signer/trust.js';
import { countingSigner, makeWorld, PASSPHRASE, T0, TEST_KDF, tempDir } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A public key of a fresh secret, for addresses nobody in the test signs for. */
function generateKeyPublic(curve: Curve): Uint8Array {
  const secret = generateSecret(curve);
  return curve === 'ed25519' ? ed25519Public(secret) : secp256k1Public(secret);
}

const ed25519Public = (s: Uint8Array) => ed25519.getPublicKey(s);
const secp256k1Public = (s: Uint8Array) => secp256k1.getPublicKey(s, true);

/** Where the drivers would reach a ledger; building and signing never do. */
const NOWHERE = 'http://127.0.0.1:9';

interface Chain {
  chain: string;
  curve: Curve;
  driver: ChainDriver;
  signer: ChainSigner;
  /** The wallet descriptor for these member addresses (and a fresh account / Safe address). */
  wallet(members: string[]): WalletDescriptor;
  destination: string;
  /** ChainParams a control plane would send, paying `fee` in the params' own fee field. */
  params(fee?: number): ChainParams;
}

async function xrplChain(): Promise<Chain> {
  const options = { chains: [{ chain: 'xrpl:testnet', url: NOWHERE }] };
  const signer = await xrpl.createSigner(options);
  const account = () => signer.deriveAddress({ chain: 'xrpl:testnet', publicKey: generateKeyPublic('ed25519'), curve: 'ed25519' });
  const destination = account();
  const address = account();
  return {
    chain: 'xrpl:testnet',
    curve: 'ed25519',
    driver: xrpl.createDriver(options),
    signer,
    destination,
    wallet: (members) => ({
      wallet: 'xrpl-treasury',
      chain: 'xrpl:testnet',
      control: { kind: 'native_multisig', address, quorum: 2, signers: members.map((m, i) => ({ address: m, curve: 'ed25519', weight: 1, label: `m${i}` })) },
    }),
    params: (fee = 12) => ({ kind: 'xrpl', sequence: 7, base_fee_drops: fee, last_ledger_sequence: 1000, network_id: null }),
  };
}

async function stellarChain(): Promise<Chain> {
  const options = { chains: [{ chain: 'stellar:testnet', horizonUrl: NOWHERE }] };
  const signer = await stellar.createSigner(options);
  const account = () => signer.deriveAddress({ chain: 'stellar:testnet', publicKey: generateKeyPublic('ed25519'), curve: 'ed25519' });
  const destination = account();
  const address = account();
  return {
    chain: 'stellar:testnet',
    curve: 'ed25519',
    driver: stellar.createDriver(options),
    signer,
    destination,
    wallet: (members) => ({
      wallet: 'stellar-treasury',
      chain: 'stellar:testnet',
      control: { kind: 'native_multisig', address, quorum: 2, signers: members.map((m, i) => ({ address: m, curve: 'ed25519', weight: 1, label: `m${i}` })) },
    }),
    params: (fee = 100) => ({ kind: 'stellar', sequence: '4294967297', base_fee_stroops: fee, max_time: T0 + 300 }),
  };
}

const SAFE = '0x5afe000000000000000000000000000000005afe';

/** One EVM devnet for the file, started by the first test that needs it. */
let devnet: Promise<EvmDevnet> | undefined;
afterAll(async () => {
  await (await devnet)?.stop();
});

async function evmChain(): Promise<Chain> {
  devnet ??= startEvmDevnet();
  const options = { chains: [{ chain_id: 31337, rpc_url: (await devnet).rpcUrl, finality: 'latest' as const }] };
  const signer = await evm.createSigner(options);
  const destination = signer.deriveAddress({ chain: 'eip155:31337', publicKey: generateKeyPublic('secp256k1'), curve: 'secp256k1' });
  return {
    chain: 'eip155:31337',
    curve: 'secp256k1',
    driver: evm.createDriver(options),
    signer,
    destination,
    wallet: (members) => ({
      wallet: 'evm-treasury',
      chain: 'eip155:31337',
      control: { kind: 'evm_safe', safe: SAFE, threshold: 2, owners: members.map((m, i) => ({ address: m, curve: 'secp256k1', weight: 1, label: `m${i}` })) },
    }),
    // Safe params carry no fee: the control plane's only lever is the SafeTx's refund fields.
    params: () => ({ kind: 'evm_safe', chain_id: 31337, safe_nonce: '3' }),
  };
}


const policyFor = (wallet: string): PolicySet => ({ wallet, version: 1, rules: [{ rule: 'hard_ceiling', max: '1000000000' }] });

interface Signer {
  deps: SignerDeps;
  wallet: WalletDescriptor;
  signerAddress: string;
  /** Digests the ChainSigner was asked to sign. */
  signed: string[];
  request(params: ChainParams, expectedDigest?: string): SignRequest;
  /** The payload the signer itself would build from `params`. */
  build(params: ChainParams): BuiltPayload;
}

/** A signer holding one member key of a 2-of-3 wallet on `c`, with `max_fee` in its trust file when given. */
async function signerFor(c: Chain, maxFee?: number | string): Promise<Signer> {
  const root = tempDir('vault-signer-fee-');
  const keystoreDir = join(root, 'keys');
  const held = generateSecret(c.curve);
  await createKey(keystoreDir, { curve: c.curve, passphrase: PASSPHRASE, kdf: TEST_KDF, secret: held });
  const publicKeys = [c.curve === 'ed25519' ? ed25519Public(held) : secp256k1Public(held), generateKeyPublic(c.curve), generateKeyPublic(c.curve)];
  const members = publicKeys.map((pk) => c.signer.deriveAddress({ chain: c.chain, publicKey: pk, curve: c.curve }));
  const wallet = c.wallet(members);
  const policy = policyFor(wallet.wallet);
  const trustFile: TrustFile = {
    format: 'vault-signer-trust',
    version: 1,
    wallets: [{ descriptor: wallet, policy_digest: policyDigest(policy), ...(maxFee !== undefined ? { max_fee: maxFee } : {}) }],
    approvers: [],
  };
  const state = SignerState.open(join(mkdtempSync(join(root, 'state-')), 'state'), new Uint8Array(32).fill(7));
  cleanups.push(() => {
    state.close();
    rmSync(root, { recursive: true, force: true });
  });
  const signed: string[] = [];
  const counting = countingSigner(c.signer, signed);
  const deps: SignerDeps = {
    now: () => T0,
    drivers: new DriverRegistry<ChainDriver>([c.driver]),
    signers: new DriverRegistry<ChainSigner>([counting]),
    trust: parseTrust(trustFile),
    keys: await SoftwareKeystore.unlock(keystoreDir, PASSPHRASE),
    state,
  };
  const intent: IntentRequest = { wallet: wallet.wallet, destination: c.destination, amount: '1000', ...(c.chain.startsWith('stellar') ? { asset_decimals: 7 } : {}) };
  const build = (params: ChainParams) => c.driver.buildPayload({ intent: normalizeIntent(intent), wallet, params });
  // What an honest control plane reads from the ledger (the signer reads the same and compares).
  const facts = await c.driver.fetchProtectInputs({ intent: normalizeIntent(intent), wallet });
  return {
    deps,
    wallet,
    signerAddress: members[0] as string,
    signed,
    build,
    request: (params, expectedDigest) => ({
      intent: { id: intentId(intent), created_at: T0 - 10, request: intent },
      wallet,
      policy,
      policy_digest: policyDigest(policy),
      approvals: [],
      params,
      protect: { known_destinations: [c.destination], burned: [], ...protectChainFacts(facts), compliance_cleared: true, attestation_valid: false },
      expected_payload_digest: expectedDigest ?? build(params).digest,
      signer_address: members[0] as string,
    }),
  };
}

function refusal(outcome: SignOutcome): { reason: string; message: string } {
  if (outcome.ok) throw new Error(`expected a refusal, got a signature: ${outcome.response.summary}`);
  return { reason: outcome.refusal.refused.reason, message: outcome.refusal.message };
}

describe('fee cap at the signer (issue #20)', () => {
  it('signs an ordinary fee on every chain with no max_fee in the trust file (the defaults are usable)', async () => {
    for (const c of [await xrplChain(), await stellarChain(), await evmChain()]) {
      const s = await signerFor(c);
      const outcome = await verifyAndSign(s.request(c.params()), s.deps);
      expect(outcome.ok, `${c.chain}: ${outcome.ok ? '' : outcome.refusal.message}`).toBe(true);
    }
  });

  it('attack: a control plane that picks a 2 XRP fee gets no signature', async () => {
    const c = await xrplChain();
    const s = await signerFor(c);
    // 500,000 drops x (1 + 3 signers) = 2,000,000 drops: within the driver's 2 XRP build cap, so the
    // signer rebuilds the very payload the control plane hashed.
    const params = c.params(500_000);
    expect(c.driver.fee?.({ built: s.build(params) })).toEqual({ amount: 2_000_000n, unit: 'drops' });
    const r = refusal(await verifyAndSign(s.request(params), s.deps));
    expect(r.reason).toBe('chain');
    expect(r.message).toMatch(/pays up to 2000000 drops in fees, above @vault\/driver-xrpl's default cap 10000 \(the trust file sets no max_fee\)/);
    expect(s.signed).toEqual([]);
  });

  it('attack: an XRPL fee just over the default cap is refused, one at the cap is signed (the total, not the base fee, is capped)', async () => {
    const c = await xrplChain();
    const s = await signerFor(c);
    // 2,500 x 4 = 10,000 drops: exactly xrpl.SIGNER_DEFAULT_MAX_FEE_DROPS.
    expect(BigInt(2_500 * 4)).toBe(xrpl.SIGNER_DEFAULT_MAX_FEE_DROPS);
    expect(refusal(await verifyAndSign(s.request(c.params(2_501)), s.deps)).reason).toBe('chain');
    expect((await verifyAndSign(s.request(c.params(2_500)), s.deps)).ok).toBe(true);
  });

  it('an explicit max_fee above the default wins: the same 2 XRP fee is signed', async () => {
    const c = await xrplChain();
    const s = await signerFor(c, 2_000_000);
    const outcome = await verifyAndSign(s.request(c.params(500_000)), s.deps);
    expect(outcome.ok).toBe(true);
    // ...and it is still a cap: one drop less in the trust file and the same fee is refused.
    const tighter = await signerFor(c, 1_999_999);
    const over = refusal(await verifyAndSign(tighter.request(c.params(500_000)), tighter.deps));
    expect(over.message).toMatch(/2000000 drops in fees, above the trust file's max_fee 1999999/);
  });

  it('an explicit max_fee below the default wins too: an ordinary fee above it is refused', async () => {
    const c = await xrplChain();
    const s = await signerFor(c, 40);
    expect((await verifyAndSign(s.request(c.params(10)), s.deps)).ok).toBe(true);
    expect(refusal(await verifyAndSign(s.request(c.params(12)), s.deps)).message).toMatch(/48 drops .*max_fee 40/);
  });

  it('attack: a control plane that picks a 2 XLM fee gets no signature', async () => {
    const c = await stellarChain();
    const s = await signerFor(c);
    const params = c.params(20_000_000);
    expect(c.driver.fee?.({ built: s.build(params) })).toEqual({ amount: 20_000_000n, unit: 'stroops' });
    const r = refusal(await verifyAndSign(s.request(params), s.deps));
    expect(r.reason).toBe('chain');
    expect(r.message).toMatch(/20000000 stroops .*default cap 10000/);
    expect(s.signed).toEqual([]);
    // At the cap it signs: the default refuses only what is above it.
    expect((await verifyAndSign(s.request(c.params(Number(stellar.SIGNER_DEFAULT_MAX_FEE_STROOPS))), s.deps)).ok).toBe(true);
  });

  it('an explicit Stellar max_fee above the default wins (given as a decimal string)', async () => {
    const c = await stellarChain();
    const s = await signerFor(c, '20000000');
    expect((await verifyAndSign(s.request(c.params(20_000_000)), s.deps)).ok).toBe(true);
  });

  it('attack: a control plane that asks for a Safe gas refund to itself gets no signature', async () => {
    const c = await evmChain();
    const s = await signerFor(c, '1000000000000000000');
    const honest = s.build(c.params());
    const payload = honest.payload as evm.SafePayload;
    // The "fee" a Safe can pay: a refund of gas at 1,000 gwei to the control plane's own account.
    const refund: evm.SafePayload = { ...payload, tx: { ...payload.tx, baseGas: '100000', gasPrice: '1000000000000', refundReceiver: c.destination as evm.SafeTx['refundReceiver'] } };
    const refundBuilt = { payload: refund, digest: evm.payloadDigest(refund), summary: 'refund' };
    // Even a generous explicit max_fee (1 ETH) cannot cap a refund: its size is not in the payload.
    expect(() => c.driver.fee?.({ built: refundBuilt })).toThrow(/unbounded fee/);
    // The signer builds only refund-free SafeTxs, so asking for the refund's digest is refused...
    const r = refusal(await verifyAndSign(s.request(c.params(), refundBuilt.digest), s.deps));
    expect(r.reason).toBe('digest_mismatch');
    // ...and a signer whose build were subverted into adding one still refuses, at the fee cap.
    const subverted = defineChainDriver({ ...c.driver, buildPayload: () => refundBuilt });
    s.deps.drivers = new DriverRegistry<ChainDriver>([subverted]);
    const r2 = refusal(await verifyAndSign(s.request(c.params(), refundBuilt.digest), s.deps));
    expect(r2.reason).toBe('chain');
    expect(r2.message).toMatch(/cannot bound the fee of this payload: .*gasPrice/);
    expect(s.signed).toEqual([]);
  });

  it('attack: a signer whose driver cannot state its fee signs nothing, whatever max_fee says (fail closed)', async () => {
    const w = await makeWorld();
    cleanups.push(() => w.cleanup());
    const { fee: _fee, defaultMaxFee: _cap, ...mute } = w.driver;
    w.deps.drivers = new DriverRegistry<ChainDriver>([defineChainDriver(mute as ChainDriver)]);
    w.deps.trust = parseTrust({ ...w.trustFile, wallets: [{ ...w.trustFile.wallets[0]!, max_fee: '1000000000000' }] });
    const r = refusal(await verifyAndSign(await w.request(), w.deps));
    expect(r.reason).toBe('chain');
    expect(r.message).toMatch(/cannot state the fee of its payloads/);
    expect(w.signedDigests).toEqual([]);
  });
});
