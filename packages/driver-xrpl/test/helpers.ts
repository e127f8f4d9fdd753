/**
 * Test helpers: software SigningKeys for both curves, devnet fixtures (a funded multisig wallet
 * whose on-ledger signer list matches its descriptor), single-signed setup transactions through
 * the devnet's RPC, and a full intent -> confirmed run through the driver and the signer.
 */
import { createRequire } from 'node:module';
import {
  normalizeIntent,
  type ChainDriver,
  type ConfirmResult,
  type IntentRequest,
  type SigningKey,
  type WalletDescriptor,
} from '@vault/sdk';
import { createSoftwareKey, type ConformanceFixture, type OperationCase } from '@vault/sdk/testing';
import { classicAddressToXAddress } from 'ripple-address-codec';
import { Wallet } from 'xrpl';
import { ACCOUNT_ROOT_FLAGS, ACCOUNT_SET_FLAGS } from '../src/constants.js';
import type { XrplDevnet } from '../src/devnet/index.js';
import { createXrplSigner, xrplAddressOf } from '../src/signer.js';
import { rpcCall } from '../src/rpc.js';

// @noble/curves is ripple-keypairs' own dependency; tests reach it through ripple-keypairs so the
// package declares no extra dependency. It only backs the test secp256k1 SigningKey.
const requireFromHere = createRequire(import.meta.url);
const requireFromKeypairs = createRequire(requireFromHere.resolve('ripple-keypairs'));
const { secp256k1 } = requireFromKeypairs('@noble/curves/secp256k1.js') as {
  secp256k1: {
    getPublicKey(sk: Uint8Array, compressed?: boolean): Uint8Array;
    sign(msg: Uint8Array, sk: Uint8Array, opts: Record<string, unknown>): Uint8Array;
  };
};

let counter = 0;
/** Deterministic secret bytes, distinct per call within a test file. */
export function nextSecret(label = 'key'): Uint8Array {
  counter += 1;
  const bytes = new Uint8Array(32);
  const text = Buffer.from(`${label}:${counter}`);
  for (let i = 0; i < 32; i++) bytes[i] = ((text[i % text.length] as number) + i * 31 + counter * 7) & 0xff;
  bytes[0] = 1; // keeps the secp256k1 scalar well below the group order
  return bytes;
}

/** A secp256k1 SigningKey: signs a 32-byte digest, returns r || s || v with low s (v unused here). */
export function createSecpKey(secret: Uint8Array = nextSecret('secp')): SigningKey {
  const sk = Uint8Array.from(secret);
  const publicKey = secp256k1.getPublicKey(sk, true);
  return Object.freeze({
    curve: 'secp256k1' as const,
    get publicKey() {
      return Uint8Array.from(publicKey);
    },
    async sign(digest: Uint8Array) {
      if (digest.length !== 32) throw new Error('secp256k1 keys sign 32-byte digests');
      const compact = secp256k1.sign(digest, sk, { prehash: false, lowS: true, format: 'compact' });
      return Uint8Array.from([...compact, 0]);
    },
  });
}

export function createKey(curve: 'ed25519' | 'secp256k1'): SigningKey {
  return curve === 'ed25519' ? createSoftwareKey(nextSecret('ed')) : createSecpKey();
}

export const signer = createXrplSigner();

export interface WalletSetup {
  chain: string;
  curves: ('ed25519' | 'secp256k1')[];
  weights?: number[];
  quorum: number;
  balance?: bigint;
  flags?: number;
}

let walletCounter = 0;

/** A funded multisig account (master key disabled) set up in the devnet's genesis state. */
export function genesisWallet(devnet: XrplDevnet, setup: WalletSetup): { wallet: WalletDescriptor; keys: SigningKey[]; address: string } {
  const keys = setup.curves.map((c) => createKey(c));
  const weights = setup.weights ?? keys.map(() => 1);
  const members = keys.map((k, i) => ({ address: xrplAddressOf(k.publicKey, k.curve), curve: k.curve, weight: weights[i] as number, label: `m${i + 1}` }));
  const address = xrplAddressOf(createSoftwareKey(nextSecret('acct')).publicKey, 'ed25519');
  devnet.ledger.genesisAccount(address, setup.balance ?? 100_000_000n, {
    signers: members.map((m) => ({ account: m.address, weight: m.weight })),
    quorum: setup.quorum,
    flags: ACCOUNT_ROOT_FLAGS.lsfDisableMaster | (setup.flags ?? 0),
  });
  const wallet: WalletDescriptor = {
    wallet: `xrpl-wallet-${++walletCounter}`,
    chain: setup.chain,
    control: { kind: 'native_multisig', address, signers: members, quorum: setup.quorum },
  };
  return { wallet, keys, address };
}

/** The conformance fixture: a fresh wallet, a funded destination and invalid addresses. */
export function conformanceFixture(devnet: XrplDevnet, setup: WalletSetup, outsider?: SigningKey): ConformanceFixture {
  const { wallet, keys, address } = genesisWallet(devnet, setup);
  const destination = xrplAddressOf(createSoftwareKey(nextSecret('dest')).publicKey, 'ed25519');
  devnet.ledger.genesisAccount(destination, 50_000_000n);
  const f: ConformanceFixture = {
    chain: setup.chain,
    wallet,
    keys,
    destination,
    invalidAddresses: [
      `${destination.slice(0, -1)}${destination.endsWith('a') ? 'b' : 'a'}`, // bad checksum
      destination.slice(0, 20), // too short
      '0x52908400098527886E0F7030069857D2E4169EE7', // an EVM address
      'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7', // a Stellar account
      // The destination as a mainnet X-address: the wrong network for a test chain.
      classicAddressToXAddress(destination, false, false),
    ],
    fundedAmount: devnet.ledger.xrpBalance(address).toString(),
    ledger: devnet.reader(),
    transferAmount: '1234',
  };
  if (outsider) f.outsider = outsider;
  return f;
}

/** Signs and submits a single-signed transaction from `wallet` (setup steps: trust lines, flags). */
export async function submitSingle(devnet: XrplDevnet, wallet: Wallet, tx: Record<string, unknown>): Promise<Record<string, unknown>> {
  const transport = { url: devnet.url, fetch: fetch as never };
  const info = await rpcCall(transport, 'account_info', { account: wallet.classicAddress });
  const seq = Number((info['account_data'] as Record<string, unknown>)['Sequence']);
  const full: Record<string, unknown> = {
    Account: wallet.classicAddress,
    Fee: String(devnet.ledger.baseFee),
    Sequence: seq,
    LastLedgerSequence: devnet.ledger.currentLedgerIndex + 10,
    ...tx,
  };
  if (devnet.networkId > 1024) full['NetworkID'] = devnet.networkId;
  const signed = wallet.sign(full as never);
  return rpcCall(transport, 'submit', { tx_blob: signed.tx_blob });
}

/** A faucet-funded single-sig account. */
export function fundedWallet(devnet: XrplDevnet): Wallet {
  const w = Wallet.generate();
  devnet.faucet(w.classicAddress);
  return w;
}

/** Member indexes in wallet order until quorum. */
export function quorumIndexes(wallet: WalletDescriptor): number[] {
  if (wallet.control.kind !== 'native_multisig') throw new Error('native only');
  const out: number[] = [];
  let w = 0;
  for (const [i, s] of wallet.control.signers.entries()) {
    if (w >= wallet.control.quorum) break;
    out.push(i);
    w += s.weight;
  }
  return out;
}

/** Builds, signs at quorum, assembles, submits, closes the ledger and confirms. */
export async function runIntent(
  devnet: XrplDevnet,
  driver: ChainDriver,
  wallet: WalletDescriptor,
  keys: SigningKey[],
  request: Omit<IntentRequest, 'wallet'>,
): Promise<{ confirm: ConfirmResult; submit: Awaited<ReturnType<ChainDriver['submit']>>; txHash: string; tx: Record<string, unknown> }> {
  if (wallet.control.kind !== 'native_multisig') throw new Error('native only');
  const params = await driver.fetchParams({ wallet });
  const built = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, ...request }), wallet, params });
  const control = wallet.control;
  const contributions = await Promise.all(quorumIndexes(wallet).map((i) => signer.signPayload({ built, key: keys[i] as SigningKey, signerAddress: control.signers[i]?.address ?? '' })));
  const assembled = driver.assemble({ built, contributions, wallet });
  if (!assembled.ok) throw new Error(`short of quorum: ${JSON.stringify(assembled)}`);
  const submit = await driver.submit({ chain: wallet.chain, blob: assembled.blob });
  devnet.closeLedger();
  const confirm = await driver.confirm({ chain: wallet.chain, txHash: assembled.txHash, built });
  return { confirm, submit, txHash: assembled.txHash, tx: (built.payload as { tx_json: Record<string, unknown> }).tx_json };
}

/** Per-operation conformance cases with their own context (see the SDK). */
export { operationCase as opCase } from '@vault/sdk/testing';

/** Expects a single-signed setup transaction to succeed on the devnet. */
export async function setupTx(devnet: XrplDevnet, wallet: Wallet, tx: Record<string, unknown>): Promise<void> {
  const r = await submitSingle(devnet, wallet, tx);
  if (r['engine_result'] !== 'tesSUCCESS') throw new Error(`setup ${String(tx['TransactionType'])} failed: ${JSON.stringify(r)}`);
}

/**
 * A conformance fixture whose wallet is made the way an operator would: a faucet-funded account
 * runs `before` (trust lines, issuances, flags — single-signed with its master key), then sets the
 * signer list of `setup` and disables its master key. The destination is `destination` or a fresh
 * genesis-funded account.
 */
export async function realWalletFixture(
  devnet: XrplDevnet,
  setup: WalletSetup,
  before: (master: Wallet) => Promise<void> = async () => {},
  destination?: string,
): Promise<ConformanceFixture & { address: string }> {
  const master = fundedWallet(devnet);
  await before(master);
  const keys = setup.curves.map((c) => createKey(c));
  const weights = setup.weights ?? keys.map(() => 1);
  const members = keys.map((k, i) => ({ address: xrplAddressOf(k.publicKey, k.curve), curve: k.curve, weight: weights[i] as number, label: `m${i + 1}` }));
  await setupTx(devnet, master, {
    TransactionType: 'SignerListSet',
    SignerQuorum: setup.quorum,
    SignerEntries: members.map((m) => ({ SignerEntry: { Account: m.address, SignerWeight: m.weight } })),
  });
  await setupTx(devnet, master, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDisableMaster });
  devnet.closeLedger();
  const address = master.classicAddress;
  let dest = destination;
  if (!dest) {
    dest = xrplAddressOf(createSoftwareKey(nextSecret('dest')).publicKey, 'ed25519');
    devnet.ledger.genesisAccount(dest, 50_000_000n);
  }
  return {
    chain: setup.chain,
    wallet: { wallet: `xrpl-wallet-${++walletCounter}`, chain: setup.chain, control: { kind: 'native_multisig', address, signers: members, quorum: setup.quorum } },
    keys,
    destination: dest,
    invalidAddresses: [dest.slice(0, 20)],
    fundedAmount: devnet.ledger.xrpBalance(address).toString(),
    ledger: devnet.reader(),
    address,
  };
}
