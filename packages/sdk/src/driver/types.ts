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
 *
 * One calling convention: every method takes one object argument, named `<Method>Input`
 * (`validateAddress({ chain, address })`, `buildPayload({ intent, wallet, params })`), so a
 * member can be added to an argument without breaking a driver, and a call reads the same in a
 * driver, in the servers and in the conformance suite. Expected outcomes (an invalid address, a
 * short quorum, a rejected submission, a pending payload) are values; a throw is a fault (a
 * `ValidationError` for a caller's mistake, a `TransportError` for an unreachable ledger).
 */
import type { NormalizedIntent, OperationKind } from '../schemas/intent.js';
import type { Contribution } from '../schemas/sign.js';
import type { ChainParams, ChainParamsKind, Curve, WalletDescriptor } from '../schemas/index.js';
import type { ContributionMemo, InvalidContribution } from './tally.js';

/** What {@link ChainDriver.validateAddress} takes. */
export interface ValidateAddressInput {
  /** One of the driver's `chains`. */
  chain: string;
  /** As a caller wrote it: anything a string can hold. */
  address: string;
}

/**
 * Result of checking an address against a chain. `normalized` is the one form the vault stores and
 * hashes (`normalizeDestination`): it must name exactly what the input names (an XRPL X-address
 * with a destination tag stays an X-address: the tag is part of where funds go), and normalising
 * it again must give it back.
 *
 * `network` is the chain the address is bound to when the address itself says so (an XRPL
 * X-address carries a test flag: `xrpl:testnet` or `xrpl:mainnet`), else null (a classic XRPL
 * address, a StrKey, an EVM address: valid on every network of the family). The network_separation
 * guard and `normalizeDestination` refuse a valid address whose `network` is another chain than
 * the wallet's.
 */
export type AddressCheck =
  | {
      valid: true;
      /** normalised form (checksummed EVM address, classic XRPL address) */
      normalized: string;
      /** The chain the address names itself, or null when its encoding names none. */
      network: string | null;
      /**
       * The account funds sent to `normalized` reach, when `normalized` names more than an account
       * (an XRPL X-address with a destination tag: its classic address). Absent: `normalized` is
       * the account. Policy lists and the burned check compare this too, so a tag cannot walk a
       * payment around a blocked account.
       */
      account?: string;
    }
  | { valid: false; reason: string };

/** What {@link ChainDriver.fetchParams}, {@link ChainDriver.balances} and {@link ChainDriver.controlState} take. */
export interface WalletInput {
  /** A wallet on one of the driver's `chains`. */
  wallet: WalletDescriptor;
}
export type FetchParamsInput = WalletInput;
export type BalancesInput = WalletInput;
export type ControlStateInput = WalletInput;

/** What {@link ChainDriver.fetchProtectInputs} takes. */
export interface FetchProtectInputsInput {
  intent: NormalizedIntent;
  wallet: WalletDescriptor;
}

/**
 * What the ledger says about one address an intent names (its destination, its asset's issuer or
 * contract), in terms every ledger can answer.
 */
export interface AddressLedgerFacts {
  /** The address as the driver writes it (its `normalized` form). */
  address: string;
  /**
   * Whether code is deployed at the address: true or false on a ledger where an address can hold
   * code (EVM: a contract, or an account with none); null on a ledger whose accounts hold no code
   * (XRPL, Stellar classic accounts), where the question does not arise.
   */
  hasCode: boolean | null;
  /**
   * The ledger's own hash of that code as lowercase 0x-hex (EVM: keccak256 of the runtime
   * bytecode, what EXTCODEHASH returns) when `hasCode` is true; null otherwise.
   */
  codeHash: string | null;
}

/**
 * Ledger facts the guards need that only the chain can tell (the rest, known destinations and
 * burned keys, come from the vault). Ledger-neutral: no EVM or XRPL notion appears here; the SDK's
 * `protectChainFacts` writes them in the wire form of SignRequest.protect, and a signer compares
 * the `protect` it was sent with its own read through `chainFactsDisagreement`.
 */
export interface ChainProtectFacts {
  /** The intent's destination. */
  destination: AddressLedgerFacts;
  /**
   * The account that issues the asset, or its contract, when the intent names an `asset_issuer`
   * the driver resolves to one (an ERC-20 contract, the account of `ACCOUNT.CODE`, `CODE:ISSUER` or
   * an MPT issuance); null for the native asset and for an issuer the driver cannot resolve.
   */
  issuer: AddressLedgerFacts | null;
  /**
   * The asset's symbol as the ledger itself records it (an ERC-20's `symbol()`, an MPT metadata
   * ticker, an XRPL IOU currency code), or null when the ledger records none (native asset,
   * Stellar, a contract without `symbol()`).
   */
  assetSymbol: string | null;
  /**
   * The key that could issue more of the asset is burned: an ERC-20 whose owner is the zero or
   * dead address, a blackholed XRPL issuer, a Stellar issuer that is missing or locked. False for
   * the native asset.
   */
  issuerKeyBurned: boolean;
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

/** What {@link ChainDriver.buildPayload} takes. */
export interface BuildPayloadInput {
  intent: NormalizedIntent;
  wallet: WalletDescriptor;
  /** From `fetchParams` (the control plane), or from a SignRequest (a signer rebuilding). */
  params: ChainParams;
}
/** @deprecated Renamed {@link BuildPayloadInput}; this alias goes in the next major release. */
export type BuildInput = BuildPayloadInput;

/** What {@link ChainDriver.assemble} takes. */
export interface AssembleInput {
  /** The payload the contributions sign, as `buildPayload` returned it. */
  built: BuiltPayload;
  /**
   * As received from signers over the network: typed as Contribution, but a driver must treat each
   * as unknown (null, wrong types, extra members), as `assembleContributions` does.
   */
  contributions: readonly Contribution[];
  wallet: WalletDescriptor;
  /**
   * Optional: verification results kept from earlier `assemble` calls of this same payload (the
   * control plane assembles the contributions so far as each signer answers, and submits the
   * first result that reaches the quorum). A driver
   * passes it to `assembleContributions` with the payload's digest as `memoKey`, once it has
   * checked that digest against the payload; a driver that ignores it verifies every contribution
   * each time, which is as correct and only slower.
   */
  memo?: ContributionMemo;
}

/** The blob at quorum, or a short quorum with who is missing and which contributions did not count. */
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

/** What {@link ChainDriver.submit} takes. */
export interface SubmitInput {
  chain: string;
  /** `AssembleResult.blob`. */
  blob: string;
}

/** What the ledger said to a blob: taken (`submitted`), or refused with its own code. */
export type SubmitResult =
  | {
      status: 'submitted';
      txHash: string;
      code: string;
      message?: string;
      /**
       * Only when the ledger's answer to the submission already shows the transaction final
       * (Stellar: Horizon answers 200 once it is in a closed ledger): what `confirm` would answer.
       * The control plane then settles without asking again. The conformance suite checks that it
       * is exactly `confirm`'s answer.
       */
      confirmed?: Extract<ConfirmResult, { status: 'confirmed' }>;
    }
  | { status: 'rejected'; txHash: string; code: string; message: string; retriable: boolean };

/** What {@link ChainDriver.confirm} takes. */
export interface ConfirmInput {
  chain: string;
  /** The hash `assemble` (or `submit`) gave. */
  txHash: string;
  /** The payload behind it: its expiry tells a dropped transaction (dead) from a slow one (pending). */
  built: BuiltPayload;
}

/** Final (`confirmed`, `failed`) or not yet (`pending`); `dead` only when the payload can never land. */
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

/** One holding of a wallet, as the ledger reports it. */
export interface Balance {
  /** `native` or the asset id in the ledger's own notation (ACCOUNT.CODE, CODE:ISSUER, 0x…). */
  asset: string;
  /** The ticker the ledger gives it (XRP, an IOU code, an ERC-20 symbol). */
  symbol: string;
  /** Integer minor units as a decimal string. */
  amount: string;
  /** Minor units per unit, as a power of ten. */
  decimals: number;
  /** Ledger-specific states (`authorized`, `frozen`…); the control plane adds canonical/counterfeit. */
  flags?: Record<string, boolean>;
}

/** The wallet's control as the ledger itself records it (signer list / owners and quorum). */
export interface ControlState {
  /** The account (or Safe) the ledger holds. */
  address: string;
  /** Who can sign for it, with their weights (signer list entries, Safe owners at weight 1). */
  members: { address: string; weight: number }[];
  /** The weight a transaction needs. */
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

/** What {@link ChainDriver.payloadFate} takes. */
export interface PayloadFateInput {
  chain: string;
  /** A payload this driver built (a signer passes the one it signed, as it rebuilt it). */
  built: BuiltPayload;
}

/**
 * What became of a signed payload, looked up by the payload itself (its account and sequence,
 * its Safe nonce) rather than by a transaction hash, which depends on every co-signer's
 * signature and on the assembled form.
 *
 * - `applied`: this payload is on the ledger;
 * - `dead`: it can never land (its sequence or nonce was used by another transaction, or it is
 *   past LastLedgerSequence / max_time on a ledger that has closed past it);
 * - `live`: it could still land.
 */
export interface PayloadFate {
  fate: 'applied' | 'dead' | 'live';
  /** Short machine code: `applied`, `expired`, `sequence_consumed`, `nonce_consumed`, `pending`… */
  code: string;
  message?: string;
  /**
   * With `applied`: the transaction that carried it, as `confirm` takes it (what `assemble` gave as
   * `txHash`). A control plane that finds an attempt applied with no record of its submission (a
   * crash, a restored backup) settles the intent through it; without it, it can only refuse.
   * The conformance suite requires it.
   */
  txHash?: string;
}

/** What {@link ChainDriver.fee} takes. */
export interface FeeInput {
  built: BuiltPayload;
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

/**
 * Everything a keyless control plane needs from a ledger family. Implement it with
 * `defineChainDriver` and run `describeChainDriver` from `@vault/sdk/testing` against it: the
 * suite checks every guarantee written here through an independent read of the ledger.
 *
 * @example
 * export const driver = defineChainDriver({
 *   name: 'toy-driver', family: 'toy', chains: ['toy:devnet'], paramsKind: 'xrpl', operations: ['transfer'],
 *   validateAddress: ({ chain, address }) => …,
 *   fetchParams: async ({ wallet }) => …,
 *   // … one object argument for every method below
 * })
 */
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

  /**
   * Is `address` an address of `chain`? Pure and total: never throws for any string (a bad
   * address is `{ valid: false, reason }`), reads no ledger, and gives the same answer every time.
   * A valid result's `normalized` form validates again to itself; its `network` is the chain the
   * address names itself (see {@link AddressCheck}). The control plane calls it at intent creation
   * (`normalizeDestination`), both services before each guard run.
   *
   * @example
   * driver.validateAddress({ chain: 'xrpl:mainnet', address: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi' })
   * // { valid: true, normalized: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi', network: 'xrpl:mainnet' } (an X-address with a tag keeps it)
   * driver.validateAddress({ chain: 'xrpl:mainnet', address: 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf' }) // { valid: true, normalized: 'rGWr…', network: null }
   * driver.validateAddress({ chain: 'xrpl:testnet', address: '0xabc' }) // { valid: false, reason: 'not an XRPL address (classic r… or X-address)' }
   */
  validateAddress(input: ValidateAddressInput): AddressCheck;

  /**
   * The parameters a payload for `wallet` is built with, read from the ledger now: sequence or
   * nonce, fee, expiry. The control plane stores them with the execution and sends them to every
   * signer, who rebuilds the payload from them; so they must be all `buildPayload` needs.
   *
   * @example
   * const params = await driver.fetchParams({ wallet }) // { kind: 'xrpl', sequence: 7, base_fee_drops: 10, last_ledger_sequence: 1020, network_id: null }
   */
  fetchParams(input: FetchParamsInput): Promise<ChainParams>;

  /**
   * The ledger facts the guards need about an intent (see {@link ChainProtectFacts}): code at the
   * destination and at the asset's contract, the asset's on-chain symbol, whether its issuing key
   * is burned. Read from the ledger now; never from the intent's own claims. Both services call it:
   * the control plane fills SignRequest.protect from it, and each signer reads it again through its
   * own driver and refuses a `protect` that disagrees.
   *
   * @example
   * const facts = await driver.fetchProtectInputs({ intent, wallet })
   * // { destination: { address: '0x…', hasCode: false, codeHash: null }, issuer: null, assetSymbol: null, issuerKeyBurned: false }
   * const wire = protectChainFacts(facts) // { evm_code: [['0x…', '0x']], onchain_symbol: null, token_owner_burned: false }
   */
  fetchProtectInputs(input: FetchProtectInputsInput): Promise<ChainProtectFacts>;

  /**
   * The payload the signers sign. Deterministic and pure: the same intent, wallet and params give
   * the same bytes and the same digest on any machine, at any time, with no ledger read (a signer
   * rebuilds it from the SignRequest and refuses on any difference, `digest_mismatch`). `digest`
   * is the ledger's own signing hash, so what a signer signs is what the ledger executes.
   * Throws a `ValidationError` naming the field for an intent it cannot build (an operation not in
   * `operations`, an asset the ledger cannot hold, params of another kind or chain).
   *
   * @example
   * const a = driver.buildPayload({ intent, wallet, params })
   * const b = driver.buildPayload({ intent, wallet, params })
   * a.digest === b.digest && canonicalize(a.payload) === canonicalize(b.payload) // always true
   */
  buildPayload(input: BuildPayloadInput): BuiltPayload;

  /**
   * Counts the contributions and encodes the blob at quorum. Verifies every signature against the
   * payload and the wallet's record of the member (never the contribution's own claim of who it
   * is), counts each member once, and never throws on a bad contribution: contributions come from
   * signers over the network, so a null, a wrong type, a non-member, a duplicate or a signature
   * that does not verify is listed in `invalid` with its reason. Implement it with the SDK tally
   * `assembleContributions` (membership, one count per member, weights, `missing`, `invalid`) plus
   * the ledger's own check of one contribution and its encoding; throw only for a payload or
   * wallet that is not this driver's (a caller's fault).
   *
   * @example
   * const r = driver.assemble({ built, contributions: [c1, null, c1], wallet })
   * // short of a 2-of-3 quorum: { ok: false, reason: 'short_of_quorum', weight: 1, quorum: 2,
   * //   missing: [{ address: 'rB…', weight: 1 }, …], invalid: [{ index: 1, reason: 'malformed', … }, { index: 2, reason: 'duplicate', … }] }
   */
  assemble(input: AssembleInput): AssembleResult;

  /**
   * Sends an assembled blob to the ledger. A ledger's refusal is a value (`rejected`, with its own
   * code and whether a retry can help); only an unreachable ledger throws (`TransportError`).
   * Submitting the same blob twice is harmless: the second answer is the first one's or `submitted`.
   *
   * @example
   * const s = await driver.submit({ chain: wallet.chain, blob: assembled.blob }) // { status: 'submitted', txHash, code: 'tesSUCCESS' }
   */
  submit(input: SubmitInput): Promise<SubmitResult>;

  /**
   * What became of a submitted transaction: `confirmed` once final on the ledger, `failed` with the
   * ledger's code (and `dead: true` only when this payload can never land), or `pending`. Never
   * `failed` with `dead: true` for a payload that could still land.
   *
   * @example
   * const c = await driver.confirm({ chain: wallet.chain, txHash: assembled.txHash, built }) // { status: 'confirmed', txHash, code: 'tesSUCCESS', ledger: 1012 }
   */
  confirm(input: ConfirmInput): Promise<ConfirmResult>;

  /**
   * The wallet's balances as the ledger holds them, native first, amounts in minor units.
   *
   * @example
   * await driver.balances({ wallet }) // [{ asset: 'native', symbol: 'XRP', amount: '99999964', decimals: 6 }]
   */
  balances(input: BalancesInput): Promise<Balance[]>;

  /**
   * Who controls the wallet according to the ledger itself (signer list or Safe owners, quorum,
   * master key): what `compareControl` checks a descriptor against for reconcile and provisioning.
   *
   * @example
   * const { clean, drift } = compareControl(wallet, await driver.controlState({ wallet }))
   */
  controlState(input: ControlStateInput): Promise<ControlState>;

  /**
   * The fate of a payload this driver built, looked up by the payload itself (account and
   * sequence, Safe nonce), never by a transaction hash. Required: it is the double-spend rule.
   * A signer signs a second payload for one intent only when every payload it signed earlier for
   * it is provably `dead`, so this must never answer `dead` for a payload that was applied (nor
   * for one that can still land). When the ledger cannot tell (history pruned, a node that has not
   * closed past the expiry, an unreadable answer) it throws (`TransportError`) rather than guess:
   * the signer then refuses, which is safe.
   *
   * @example
   * await driver.payloadFate({ chain: wallet.chain, built: first })
   * // { fate: 'dead', code: 'sequence_consumed' } once another transaction used its sequence: a new payload may be signed
   * // { fate: 'applied', code: 'applied', txHash }  it landed (as txHash): the intent is done, never sign again
   * // { fate: 'live', code: 'pending' }             it could still land: signing another would risk paying twice
   */
  payloadFate(input: PayloadFateInput): Promise<PayloadFate>;

  /**
   * Optional for now, required in a later release: the most `built` can take from the wallet in
   * fees, read from the payload itself (the bytes that get signed), never from the params it was
   * built from. The control plane chooses params and their digest together, so the payload is
   * the only honest source. A pure function of `built`; throws a `ValidationError` for a payload
   * whose fee it cannot bound (the reference signer then refuses, `chain`). The reference signer
   * refuses to sign for a driver without it: it cannot cap what it cannot measure.
   *
   * @example
   * driver.fee({ built }) // { amount: 40n, unit: 'drops' } for an XRPL payload with 3 signers at 10 drops
   */
  fee?(input: FeeInput): FeeQuote;
  /**
   * Optional for now, required with `fee`: the fee cap, in `fee`'s unit, a signer applies when its
   * trust file sets no `max_fee` for the wallet. Conservative: well above what the driver's own
   * `fetchParams` picks on a working network for the wallets it serves, far below a loss anyone
   * would accept. A signer's explicit `max_fee` always wins, higher or lower.
   *
   * @example
   * defaultMaxFee: 2_000_000n // 2 XRP in drops
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
   *
   * @example
   * const signature = await key.sign(fromHex(built.digest)) // 64 bytes (ed25519)
   */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

/** What {@link ChainSigner.deriveAddress} takes. */
export interface DeriveAddressInput {
  chain: string;
  /** ed25519: 32 bytes; secp256k1: 33-byte compressed point (as `SigningKey.publicKey`). */
  publicKey: Uint8Array;
  curve: Curve;
}

/** What {@link ChainSigner.signPayload} takes. */
export interface SignPayloadInput {
  /** The payload the signer rebuilt itself and whose digest it checked: never one it was sent. */
  built: BuiltPayload;
  key: SigningKey;
  /** The member address `key` controls (from `deriveAddress`), written into the contribution. */
  signerAddress: string;
}

/**
 * What only a signer needs from a ledger family: the signing half of a plugin, loaded by signer
 * processes only (the control plane never imports it). Implement it with `defineChainSigner`.
 *
 * @example
 * export const signer = defineChainSigner({
 *   name: 'toy-driver/signer', family: 'toy', chains: ['toy:devnet'],
 *   deriveAddress: ({ chain, publicKey, curve }) => …,
 *   signPayload: async ({ built, key, signerAddress }) => …,
 * })
 */
export interface ChainSigner {
  /** As the driver's `name`, with a suffix when separate (e.g. "@vault/driver-xrpl/signer"). */
  readonly name: string;
  /** The driver's `family`. */
  readonly family: string;
  /** Exact chain names served; a signer is asked only about these. */
  readonly chains: readonly string[];
  /**
   * The address a public key controls on `chain`. A pure function of its arguments: no ledger
   * read, no clock, no state; the same arguments always give the same address, or always throw a
   * `ValidationError` (a curve the chain does not use, a malformed key). The reference signer
   * service remembers the answer for each of its keys, a throw included.
   *
   * @example
   * signer.deriveAddress({ chain: 'xrpl:testnet', publicKey: key.publicKey, curve: 'ed25519' }) // 'rN7n…' (the same every call)
   */
  deriveAddress(input: DeriveAddressInput): string;
  /**
   * One signer's contribution over a payload the signer rebuilt itself: the ledger's own signature
   * over `built.digest` (or the bytes it stands for) made through `key`, which never hands out its
   * private key. The result must verify in the driver's `assemble` for the member `signerAddress`.
   * Throws a `ValidationError` for a payload or key this signer cannot sign (another chain, a
   * curve the ledger does not accept).
   *
   * @example
   * const contribution = await signer.signPayload({ built, key, signerAddress })
   * driver.assemble({ built, contributions: [contribution, …], wallet }) // counts it
   */
  signPayload(input: SignPayloadInput): Promise<Contribution>;
}

/**
 * What a driver package exports so the reference servers can load it from configuration
 * (`{ "module": "@vault/driver-xrpl", "options": {…} }`): both factories take the same JSON
 * options, so one configuration entry gives the control plane its driver and a signer its
 * driver and signer. Keep the signer and provisioner behind a dynamic import in `createSigner` /
 * `createProvisioner`, so a control plane that loads the package's root entry loads no signing
 * code (`reachableModules` in `@vault/sdk/testing` checks it).
 *
 * @example
 * const plugin: DriverPlugin<{ url: string }> = {
 *   createDriver: (options) => createToyDriver(options),
 *   createSigner: async (options) => (await import('./signer.js')).createToySigner(options),
 * }
 */
export interface DriverPlugin<Options = Record<string, unknown>> {
  /**
   * The keyless driver. Validates `options` (unknown JSON) and throws a `ValidationError` naming
   * the path of a bad one; may read nothing from the ledger (it runs at start-up).
   *
   * @example
   * const driver = await plugin.createDriver({ chains: { 'xrpl:testnet': { url: 'http://127.0.0.1:5005' } } })
   */
  createDriver(options: Options): ChainDriver | Promise<ChainDriver>;
  /**
   * The signing half for the same chains, from the same options.
   *
   * @example
   * const signer = await plugin.createSigner(options)
   */
  createSigner(options: Options): ChainSigner | Promise<ChainSigner>;
  /**
   * Optional: sets wallets up on the ledger (`vault provision`). Same options.
   *
   * @example
   * const provisioner = await plugin.createProvisioner?.(options)
   */
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
  /** Exact chain names it can set wallets up on. */
  readonly chains: readonly string[];
  /**
   * Sets up (or checks and completes) one wallet; see the interface's guarantees. Safe to re-run
   * after a crash at any point: with `existing`, it finishes what is missing and sends nothing
   * when the ledger already matches (`changed: false`).
   *
   * @example
   * const { descriptor, changed, transactions } = await provisioner.provision({
   *   wallet: 'treasury', chain: 'xrpl:testnet', quorum: 2,
   *   members: [{ address: 'rA…', weight: 1, curve: 'ed25519' }, { address: 'rB…', weight: 1, curve: 'ed25519' }, { address: 'rC…', weight: 1, curve: 'ed25519' }],
   *   funding: { kind: 'faucet', url: 'https://faucet.altnet.rippletest.net/accounts' },
   * })
   */
  provision(request: ProvisionRequest): Promise<ProvisionResult>;
}
