/**
 * @module driver/types
 * The ChainDriver plugin contract (DESIGN.md §2), split at the trust boundary:
 *
 * - `ChainDriver` is everything a keyless control plane needs: address facts, chain parameters,
 *   guard inputs, deterministic payload building, assembly, submission, confirmation and reads.
 *   It never touches a private key.
 * - `ChainSigner` is what only a signer needs: deriving addresses from public keys and producing a
 *   signer's contribution through a `SigningKey`. The control plane never loads it.
 *
 * Both are pure logic over one injected transport per chain, so the same driver reaches a public
 * testnet or a local devnet by configuration alone.
 */
import type { NormalizedIntent, OperationKind } from '../schemas/intent.js';
import type { Contribution } from '../schemas/sign.js';
import type { ChainParams, ChainParamsKind, Curve, WalletDescriptor } from '../schemas/index.js';
import type { EvmCodeEntry } from '../schemas/protect.js';
import type { InvalidContribution } from './tally.js';

/**
 * Result of checking an address against a chain. `normalized` is the one form the vault stores and
 * hashes (`normalizeDestination`): it must name exactly what the input names (an XRPL X-address
 * with a destination tag stays an X-address: the tag is part of where funds go), and normalising
 * it again must give it back.
 */
export type AddressCheck =
  | { valid: true; /** normalised form (checksummed EVM address, classic XRPL address) */ normalized: string }
  | { valid: false; reason: string };

/** Ledger facts the guards need that only the chain can tell (the rest come from the vault). */
export interface ChainProtectFacts {
  /** EVM: `[address, code]` for the destination and the token contract; [] elsewhere. */
  evm_code: EvmCodeEntry[];
  /** The token's own on-chain symbol (ERC-20 symbol()), or null when the ledger has none. */
  onchain_symbol: string | null;
  /** The token contract's owner key is burned (zero/dead owner). */
  token_owner_burned: boolean;
}

/** A deterministic, signable payload. Same inputs, same bytes, same digest. */
export interface BuiltPayload {
  /** JSON-safe payload the signer rebuilds and compares (tx JSON, XDR base64, SafeTx). */
  payload: unknown;
  /** The ledger's own signing hash as lowercase hex (XRPL signing hash, Stellar tx hash, safeTxHash). */
  digest: string;
  /** One line a human can check ("Payment 10 XRP rA… -> rB…, fee 36 drops, seq 7"). */
  summary: string;
}

export type AssembleResult =
  | {
      ok: true;
      /** The submittable blob (hex, base64 XDR, calldata), as the driver's submit takes it. */
      blob: string;
      /** The transaction hash the ledger will know it by. */
      txHash: string;
      weight: number;
      quorum: number;
    }
  | {
      ok: false;
      reason: 'short_of_quorum';
      weight: number;
      quorum: number;
      /** Members without a valid contribution (missing, or listed in `invalid`): they still need to sign. */
      missing: { address: string; weight: number }[];
      /** Contributions that were not counted, and why (one of CONTRIBUTION_REJECTIONS, with a detail). */
      invalid: InvalidContribution[];
    };

export type SubmitResult =
  | { status: 'submitted'; txHash: string; code: string; message?: string }
  | { status: 'rejected'; txHash: string; code: string; message: string; retriable: boolean };

export type ConfirmResult =
  | {
      status: 'confirmed';
      txHash: string;
      code: string;
      ledger?: string | number;
      /** Operation results the ledger produced (e.g. `{ mptIssuanceId }`). */
      outcome?: Record<string, string>;
    }
  | { status: 'failed'; txHash: string; code: string; message: string; /** the payload can never land */ dead: boolean }
  | { status: 'pending'; txHash: string };

export interface Balance {
  /** `native` or the asset id in the ledger's own notation (ACCOUNT.CODE, CODE:ISSUER, 0x…). */
  asset: string;
  symbol: string;
  /** Integer minor units as a decimal string. */
  amount: string;
  decimals: number;
  flags?: Record<string, boolean>;
}

/** The wallet's control as the ledger itself records it (signer list / owners and quorum). */
export interface ControlState {
  address: string;
  members: { address: string; weight: number }[];
  quorum: number;
  /** Native multisig: is the master key still able to sign on its own? */
  masterKeyEnabled?: boolean;
  /** Ledger-specific extras (Stellar thresholds, Safe nonce). */
  extra?: Record<string, unknown>;
  /**
   * Settings beyond members and quorum that decide who can move or block funds, as the ledger
   * holds them (a Safe's `version`, `singleton`, `fallback_handler`, `modules`, `guard`,
   * `module_guard`). Reconcile compares them with what the descriptor pins.
   */
  settings?: Record<string, string | readonly string[] | null>;
  /** Ways to move funds without the quorum (a Safe module): recovery status reports each. */
  bypasses?: readonly { kind: string; address: string }[];
}

/**
 * What became of a signed payload, looked up by the payload itself (its account and sequence,
 * its Safe nonce) rather than by a transaction hash, which depends on every co-signer's
 * signature and on the assembled form.
 *
 * - `applied`: this payload is on the ledger;
 * - `dead`: it can never land (its sequence or nonce was used by another transaction, or it is
 *   past LastLedgerSequence / max_time);
 * - `live`: it could still land.
 */
export interface PayloadFate {
  fate: 'applied' | 'dead' | 'live';
  /** Short machine code: `applied`, `expired`, `sequence_consumed`, `nonce_consumed`, `pending`… */
  code: string;
  message?: string;
}

/**
 * What a payload can take from its wallet in fees, in the ledger's smallest native unit. A bigint:
 * EVM refunds are wei and pass 2^53 at a hundredth of an ether.
 */
export interface FeeQuote {
  /** The most the payload can pay in fees, whatever the network does (Fee, fee bid, gas refund). */
  amount: bigint;
  /** What `amount` counts, for messages: `drops`, `stroops`, `wei`… */
  unit: string;
}

export interface BuildInput {
  intent: NormalizedIntent;
  wallet: WalletDescriptor;
  params: ChainParams;
}

/** Everything a keyless control plane needs from a ledger family. */
export interface ChainDriver {
  /** Package or plugin name, for errors and /health (e.g. "@vault/driver-xrpl"). */
  readonly name: string;
  /** Ledger family (e.g. "xrpl", "stellar", "evm"). */
  readonly family: string;
  /** Exact chain names served (e.g. ["xrpl:testnet"]); the registry never widens this. */
  readonly chains: readonly string[];
  /** ChainParams kind this driver produces and consumes. */
  readonly paramsKind: ChainParamsKind;
  /** Operations the driver can build; others are refused with a clear error. */
  readonly operations: readonly OperationKind[];

  validateAddress(chain: string, address: string): AddressCheck;
  /** The chain an address is bound to when the address says so (X-address test flag), else null. */
  networkOf(chain: string, address: string): string | null;

  fetchParams(wallet: WalletDescriptor): Promise<ChainParams>;
  fetchProtectInputs(intent: NormalizedIntent, wallet: WalletDescriptor): Promise<ChainProtectFacts>;
  buildPayload(input: BuildInput): BuiltPayload;
  /**
   * Counts the contributions and encodes the blob at quorum. Contributions come from signers over
   * the network: whatever their runtime shape, a bad one is listed in `invalid`, never thrown.
   * Implement it with `assembleContributions` (the one tally: membership, one count per member,
   * weights, `missing`, `invalid`) plus the ledger's own checks; throw only for a payload or
   * wallet that is not this driver's (a caller's fault).
   */
  assemble(built: BuiltPayload, contributions: readonly Contribution[], wallet: WalletDescriptor): AssembleResult;
  submit(chain: string, blob: string): Promise<SubmitResult>;
  confirm(chain: string, txHash: string, built: BuiltPayload): Promise<ConfirmResult>;
  balances(wallet: WalletDescriptor): Promise<Balance[]>;
  controlState(wallet: WalletDescriptor): Promise<ControlState>;
  /**
   * Optional, strongly recommended: the fate of a payload built by this driver. A signer uses it
   * before it signs a second payload for one intent: it signs again only when every earlier
   * payload is provably `dead`. Without it a signer falls back to `confirm(chain, digest, built)`
   * and trusts only `dead: true`. Must never answer `dead` for a payload that was applied.
   */
  payloadFate?(chain: string, built: BuiltPayload): Promise<PayloadFate>;
  /**
   * Optional for now, required in a later release: the most `built` can take from the wallet in
   * fees, read from the payload itself (the bytes that get signed), never from the params it was
   * built from. The control plane chooses params and their digest together, so the payload is
   * the only honest source. A pure function of `built`; throws a `ValidationError` for a payload
   * whose fee it cannot bound (the reference signer then refuses, `chain`). The reference signer
   * refuses to sign for a driver without it: it cannot cap what it cannot measure.
   *
   * @example
   * driver.fee(built) // { amount: 40n, unit: 'drops' } for an XRPL payload with 3 signers at 10 drops
   */
  fee?(built: BuiltPayload): FeeQuote;
  /**
   * Optional for now, required with `fee`: the fee cap, in `fee`'s unit, a signer applies when its
   * trust file sets no `max_fee` for the wallet. Conservative: well above what the driver's own
   * `fetchParams` picks on a working network for the wallets it serves, far below a loss anyone
   * would accept. A signer's explicit `max_fee` always wins, higher or lower.
   */
  readonly defaultMaxFee?: bigint;
}

/**
 * A key the signer holds, behind a backend (software keystore, HSM). The private key never leaves
 * the backend: drivers only ask it to sign.
 */
export interface SigningKey {
  readonly curve: Curve;
  /** ed25519: 32 bytes; secp256k1: 33-byte compressed point. */
  readonly publicKey: Uint8Array;
  /**
   * ed25519: signs `message` (any length), returns 64 bytes.
   * secp256k1: `message` MUST be a 32-byte digest; returns 65 bytes `r || s || recovery` with
   * low-s normalisation.
   */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

/** What only a signer needs from a ledger family. */
export interface ChainSigner {
  readonly name: string;
  readonly family: string;
  readonly chains: readonly string[];
  /**
   * The address a public key controls on `chain`. A function of its arguments alone: the same
   * arguments always give the same address, or always throw (the reference signer service
   * remembers the answer for each of its keys, a throw included).
   */
  deriveAddress(chain: string, publicKey: Uint8Array, curve: Curve): string;
  /** One signer's contribution over a payload the signer rebuilt itself. */
  signPayload(built: BuiltPayload, key: SigningKey, signerAddress: string): Promise<Contribution>;
}

/**
 * What a driver package exports so the reference servers can load it from configuration
 * (`{ "module": "@vault/driver-xrpl", "options": {…} }`): both factories take the same JSON
 * options, so one configuration entry gives the control plane its driver and a signer its
 * driver and signer.
 */
export interface DriverPlugin<Options = Record<string, unknown>> {
  createDriver(options: Options): ChainDriver | Promise<ChainDriver>;
  createSigner(options: Options): ChainSigner | Promise<ChainSigner>;
  /** Optional: sets wallets up on the ledger (`vault provision`). Same options. */
  createProvisioner?(options: Options): WalletProvisioner | Promise<WalletProvisioner>;
}

/** Where the coins that create an account (and pay its set-up fees) come from. */
export type ProvisionFunding =
  /** A faucet: the XRPL faucet / Stellar friendbot URL, or an EVM devnet RPC that honours anvil_setBalance. */
  | { kind: 'faucet'; url: string }
  /** A funded key held by the operator, named by the environment variable that holds it (never inline). */
  | { kind: 'key_env'; env: string };

/** A wallet to set up: who controls it and with what weights, and how to pay for it. */
export interface ProvisionRequest {
  /** Wallet id (WalletDescriptor.wallet). */
  wallet: string;
  chain: string;
  /** Signer set: addresses (as the ledger knows them), weights, curves; labels default to `member-<i>`. */
  members: { address: string; weight: number; curve: Curve; label?: string }[];
  /** Weight needed (native quorum, Safe threshold). */
  quorum: number;
  /**
   * The descriptor an earlier run wrote, when re-running: the provisioner checks the ledger against
   * it and changes nothing that already matches. Without it a new account is created.
   */
  existing?: WalletDescriptor;
  funding: ProvisionFunding;
  /** Native amount (minor units) to fund a new account with; the provisioner's default when absent. */
  fundAmount?: string;
  /**
   * The ledger's own set-up choices, validated by the provisioner (which refuses a key it does
   * not know): e.g. a Safe version to deploy, or an existing Safe to adopt and the modules the
   * operator allows on it.
   */
  options?: Record<string, unknown>;
}

export interface ProvisionResult {
  /** The descriptor to store in the control plane's state file and every signer's trust file. */
  descriptor: WalletDescriptor;
  /** False when the ledger already matched (a re-run): nothing was sent. */
  changed: boolean;
  /** Ledger transactions sent, in order, with what each did. */
  transactions: { txHash: string; what: string }[];
}

/**
 * Sets a wallet up on its ledger from a descriptor's members and quorum: creates and funds the
 * account (or deploys the Safe), installs the signer set and quorum, and removes every other way
 * to move funds (XRPL master key disabled, Stellar master weight 0). Idempotent: re-running with
 * `existing` and the same members changes nothing; a ledger whose control differs from what was
 * asked and can no longer be changed by the set-up key is an error naming the difference, never a
 * silent success. The key that creates an account is generated here and never leaves this call.
 */
export interface WalletProvisioner {
  readonly chains: readonly string[];
  provision(request: ProvisionRequest): Promise<ProvisionResult>;
}
