/**
 * @module @vault/driver-stellar/devnet
 * A local Horizon-compatible ledger on 127.0.0.1 for tests and examples: real XDR, real signature
 * checks, Horizon's own response shapes. Start it, point a driver at `url` with `networkPassphrase`,
 * fund accounts through `friendbot`, and read the ledger directly through `ledger` (never through a
 * driver) to check what happened.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Account, Asset, Keypair, Operation, TransactionBuilder, type xdr } from '@stellar/stellar-base';
import type { WalletDescriptor } from '@vault/sdk';
import { StellarLedger, type LedgerOptions } from './ledger.js';
import { handle, route, type DevnetFaults } from './server.js';

export { StellarLedger, type LedgerAccount, type LedgerOptions, type OpRecord, type SubmitReply, type TrustLine, type TxRecord } from './ledger.js';
export { route, type DevnetFaults, type Reply } from './server.js';

export interface DevnetOptions extends LedgerOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  host?: string;
}

export interface DevnetWalletOptions {
  wallet: string;
  /** Default `stellar:local`. */
  chain?: string;
  signers: { address: string; weight: number; label?: string }[];
  /** The descriptor's quorum: the account's medium threshold (what a payment needs). */
  quorum: number;
  /** The low threshold (default `quorum`); at most `quorum`, as the driver requires. */
  low?: number;
  /** The high threshold (default `quorum`). */
  high?: number;
  /** Account flags to set (0x1 auth_required, 0x2 auth_revocable, 0x4 auth_immutable, 0x8 auth_clawback_enabled). */
  flags?: number;
  /** Trust lines to open before the master key is disabled. */
  trust?: { code: string; issuer: string }[];
}

export interface StellarDevnet {
  /** Horizon base URL, e.g. http://127.0.0.1:8000 */
  url: string;
  networkPassphrase: string;
  /** Path of friendbot: GET `${url}${friendbotPath}?addr=G…` funds a new account. */
  friendbotPath: string;
  /** The ledger itself: direct, independent reads (account, nativeBalance, trustLine, transaction). */
  ledger: StellarLedger;
  /** Fault switches the tests flip at run time. */
  faults: DevnetFaults;
  /** Funds `address` through friendbot (a real createAccount transaction). */
  fund(address: string): Promise<void>;
  /**
   * A funded account that the driver accepts as a vault wallet: `signers` added with their
   * weights, master key disabled, medium = `quorum`, low = `low` and high = `high` (each default quorum), in one
   * real transaction signed by a throw-away master key. You keep the signers' keys.
   */
  createWallet(options: DevnetWalletOptions): Promise<WalletDescriptor>;
  close(): Promise<void>;
}

/**
 * @example
 * const devnet = await startDevnet()
 * const driver = createStellarDriver({ chains: { 'stellar:local': { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase } } })
 * await devnet.fund(address)
 * devnet.ledger.nativeBalance(address) // 100000000000n
 * await devnet.close()
 */
export async function startDevnet(options: DevnetOptions = {}): Promise<StellarDevnet> {
  const ledger = new StellarLedger(options);
  const faults: DevnetFaults = { submitTimeout: 0, submitDrop: 0 };
  let url = '';
  const server = createServer((req, res) => {
    void handle(ledger, faults, () => url, req, res);
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://${host}:${port}`;
  const fund = async (address: string): Promise<void> => {
    const reply = route(ledger, faults, 'GET', `/friendbot?addr=${encodeURIComponent(address)}`, '', url);
    if (reply.status !== 200) throw new Error(`friendbot could not fund ${address}: ${JSON.stringify(reply.body)}`);
  };
  return {
    url,
    networkPassphrase: ledger.networkPassphrase,
    friendbotPath: '/friendbot',
    ledger,
    faults,
    fund,
    async createWallet(o: DevnetWalletOptions): Promise<WalletDescriptor> {
      const master = Keypair.random();
      await fund(master.publicKey());
      const ops: xdr.Operation[] = o.signers.map((m) => Operation.setOptions({ signer: { ed25519PublicKey: m.address, weight: m.weight } }));
      if (o.flags) ops.push(Operation.setOptions({ setFlags: o.flags as never }));
      for (const t of o.trust ?? []) ops.push(Operation.changeTrust({ asset: new Asset(t.code, t.issuer) }));
      ops.push(Operation.setOptions({ masterWeight: 0, lowThreshold: o.low ?? o.quorum, medThreshold: o.quorum, highThreshold: o.high ?? o.quorum }));
      const seq = (ledger.account(master.publicKey()) as { seq: bigint }).seq;
      let builder = new TransactionBuilder(new Account(master.publicKey(), seq.toString()), { fee: String(ledger.baseFee * ops.length), networkPassphrase: ledger.networkPassphrase }).setTimeout(0);
      for (const op of ops) builder = builder.addOperation(op);
      const tx = builder.build();
      tx.sign(master);
      const reply = ledger.submit(tx.toEnvelope().toXDR('base64'));
      if (reply.kind !== 'applied') throw new Error(`devnet could not set up wallet ${o.wallet}: ${JSON.stringify(reply.kind === 'rejected' ? reply.resultCodes : reply.kind === 'failed' ? reply.record.resultCodes : reply.reason)}`);
      return {
        wallet: o.wallet,
        chain: o.chain ?? 'stellar:local',
        control: {
          kind: 'native_multisig',
          address: master.publicKey(),
          signers: o.signers.map((m, i) => ({ address: m.address, curve: 'ed25519' as const, weight: m.weight, label: m.label ?? `member-${i + 1}` })),
          quorum: o.quorum,
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
