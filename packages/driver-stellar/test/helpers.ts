/**
 * Test helpers: wallets set up on the devnet through real, master-signed transactions, and the
 * driver / signer pointed at it. Everything is checked later through `devnet.ledger` directly.
 */
import { Account, Asset, Keypair, Operation, StrKey, TransactionBuilder, type xdr } from '@stellar/stellar-base';
import { normalizeIntent, type ConfirmResult, type IntentRequest, type SigningKey, type WalletDescriptor } from '@vault/sdk';
import { createSoftwareKey, type ConformanceFixture, type OperationCase } from '@vault/sdk/testing';
import { createStellarDriver, type StellarDriver } from '../src/index.js';
import { createStellarSigner, type StellarSigner } from '../src/signer.js';
import type { StellarDevnet } from '../src/devnet/index.js';

export const CHAIN = 'stellar:local';

export function driverFor(devnet: StellarDevnet, extra: { timeoutPolls?: number; timeoutPollIntervalMs?: number } = {}): StellarDriver {
  return createStellarDriver({ chains: { [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase, timeoutPollIntervalMs: 10, ...extra } } });
}

export function signerFor(devnet: StellarDevnet): StellarSigner {
  return createStellarSigner({ chains: { [CHAIN]: { networkPassphrase: devnet.networkPassphrase } } });
}

export function gOf(key: SigningKey): string {
  return StrKey.encodeEd25519PublicKey(Buffer.from(key.publicKey));
}

/** Submits a transaction signed by `signers` (Keypairs) straight to the devnet's HTTP API. */
export async function submitClassic(
  devnet: StellarDevnet,
  source: string,
  ops: xdr.Operation[],
  signers: Keypair[],
): Promise<{ status: number; body: Record<string, unknown> }> {
  const acc = devnet.ledger.account(source);
  if (!acc) throw new Error(`no account ${source}`);
  let b = new TransactionBuilder(new Account(source, acc.seq.toString()), { fee: String(100 * ops.length), networkPassphrase: devnet.networkPassphrase }).setTimeout(0);
  for (const op of ops) b = b.addOperation(op);
  const tx = b.build();
  for (const k of signers) tx.sign(k);
  const res = await fetch(`${devnet.url}/transactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `tx=${encodeURIComponent(tx.toEnvelope().toXDR('base64'))}`,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export interface WalletSetup {
  wallet: WalletDescriptor;
  keys: SigningKey[];
  address: string;
  master: Keypair;
}

let n = 0;

/**
 * A funded account whose master key is disabled and whose signers are fresh member keys with
 * `weights`; medium threshold = quorum, low = `low` and high = `high` (each default quorum). Optional account
 * flags are set in the same master-signed transaction.
 */
export async function multisigWallet(
  devnet: StellarDevnet,
  opts: {
    weights: number[];
    quorum: number;
    high?: number;
    low?: number;
    flags?: number;
    trust?: { code: string; issuer: string }[];
    masterWeight?: number;
    /** Runs once the account is funded; its operations join the master-signed setup transaction (before the thresholds). */
    prepare?: (master: Keypair) => Promise<xdr.Operation[]>;
  },
): Promise<WalletSetup> {
  const master = Keypair.random();
  await devnet.fund(master.publicKey());
  const prepared = opts.prepare ? await opts.prepare(master) : [];
  // With masterWeight, the account's own key is the last member (its entry in weights is ignored).
  const last = opts.weights.length - 1;
  const keys = opts.weights.map((_, i) => (i === last && opts.masterWeight ? createSoftwareKey(master.rawSecretKey()) : createSoftwareKey()));
  const weights = opts.weights.map((w, i) => (i === last && opts.masterWeight ? opts.masterWeight : w));
  const ops: xdr.Operation[] = keys
    .map((k, i) => ({ k, i }))
    .filter(({ i }) => !(i === last && opts.masterWeight))
    .map(({ k, i }) => Operation.setOptions({ signer: { ed25519PublicKey: gOf(k), weight: weights[i] as number } }));
  if (opts.flags) ops.push(Operation.setOptions({ setFlags: opts.flags as never }));
  for (const t of opts.trust ?? []) ops.push(Operation.changeTrust({ asset: new Asset(t.code, t.issuer) }));
  ops.push(...prepared);
  ops.push(Operation.setOptions({ masterWeight: opts.masterWeight ?? 0, lowThreshold: opts.low ?? opts.quorum, medThreshold: opts.quorum, highThreshold: opts.high ?? opts.quorum }));
  const r = await submitClassic(devnet, master.publicKey(), ops, [master]);
  if (r.status !== 200) throw new Error(`wallet setup failed: ${JSON.stringify(r.body)}`);
  const wallet: WalletDescriptor = {
    wallet: `stellar-wallet-${++n}`,
    chain: CHAIN,
    control: {
      kind: 'native_multisig',
      address: master.publicKey(),
      signers: keys.map((k, i) => ({ address: gOf(k), curve: 'ed25519', weight: weights[i] as number, label: `member-${i + 1}` })),
      quorum: opts.quorum,
    },
  };
  return { wallet, keys, address: master.publicKey(), master };
}

/** A plain funded account with a single master key. */
export async function plainAccount(devnet: StellarDevnet): Promise<Keypair> {
  const kp = Keypair.random();
  await devnet.fund(kp.publicKey());
  return kp;
}

/** `holder` trusts CODE:issuer. */
export async function trust(devnet: StellarDevnet, holder: Keypair, code: string, issuer: string): Promise<void> {
  const r = await submitClassic(devnet, holder.publicKey(), [Operation.changeTrust({ asset: new Asset(code, issuer) })], [holder]);
  if (r.status !== 200) throw new Error(`changeTrust failed: ${JSON.stringify(r.body)}`);
}

/** Builds with fresh params, signs with the members at `indexes`, assembles. */
export async function buildSignAssemble(
  driver: StellarDriver,
  signer: StellarSigner,
  w: WalletSetup,
  request: Omit<IntentRequest, 'wallet'>,
  indexes: number[],
) {
  const params = await driver.fetchParams({ wallet: w.wallet });
  const intent = normalizeIntent({ wallet: w.wallet.wallet, ...request });
  const built = driver.buildPayload({ intent, wallet: w.wallet, params });
  const contributions = await Promise.all(
    indexes.map((i) => signer.signPayload({ built, key: w.keys[i] as SigningKey, signerAddress: (w.wallet.control as { signers: { address: string }[] }).signers[i]!.address })),
  );
  const assembled = driver.assemble({ built, contributions, wallet: w.wallet });
  return { params, intent, built, contributions, assembled };
}

/** Per-operation conformance cases with their own context (see the SDK). */
export { operationCase as opCase } from '@vault/sdk/testing';
