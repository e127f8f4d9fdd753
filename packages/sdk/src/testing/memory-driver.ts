/**
 * @module testing/memory-driver
 * The reference driver over the in-memory ledger: a complete, small ChainDriver / ChainSigner pair
 * that the server's own tests run against, and the worked example of the plugin contract.
 *
 * Params kind: ChainParams is a closed union on the wire (xrpl | stellar | evm_safe) because the
 * signer validates SignRequest.params against it. A test-only `memory` kind would widen that wire
 * contract for every service, so the memory driver reuses the `xrpl` shape, which is exactly its
 * model: account `sequence`, `base_fee_drops` (the fee in minor units), `last_ledger_sequence`
 * (the payload's expiry ledger) and `network_id` (always null).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { canonicalize } from '../canonical.js';
import { ed25519PublicKey, generateEd25519KeyPair, signEd25519, verifyEd25519 } from '../ed25519.js';
import { fromHex, sha256Hex, toHex } from '../encoding.js';
import { DriverRegistryError, NotFoundError, SignerRefusedError, TransportError, ValidationError, VaultError } from '../errors.js';
import { defineChainDriver, defineChainSigner } from '../driver/define.js';
import { assembleContributions, type ContributionProblem } from '../driver/tally.js';
import type {
  AddressCheck,
  AssembleInput,
  AssembleResult,
  Balance,
  BalancesInput,
  BuildPayloadInput,
  BuiltPayload,
  ChainDriver,
  ChainProtectFacts,
  ChainSigner,
  ConfirmInput,
  ConfirmResult,
  ControlState,
  ControlStateInput,
  DeriveAddressInput,
  FeeInput,
  FeeQuote,
  FetchParamsInput,
  FetchProtectInputsInput,
  PayloadFate,
  PayloadFateInput,
  SignPayloadInput,
  SigningKey,
  SubmitInput,
  SubmitResult,
  ValidateAddressInput,
} from '../driver/types.js';
import type { Contribution } from '../schemas/sign.js';
import { WalletDescriptorSchema, type ChainParams, type SignerDesc, type WalletDescriptor } from '../schemas/wallet.js';
import { parseWith } from '../schemas/index.js';
import { formatUnits } from '../units.js';
import type { Curve } from '../schemas/common.js';
import {
  MEMORY_DEFAULT_MAX_FEE,
  MEMORY_EXPIRY_LEDGERS,
  MEMORY_NATIVE,
  MEMORY_SIGNATURE_ENCODING,
  MEMORY_TX_FORMAT,
  MemoryLedger,
  MemoryPayloadSchema,
  encodeMemoryBlob,
  memoryAddress,
  memoryAddressProblem,
  memoryDigest,
  type MemoryPayload,
  type MemorySignature,
} from './memory-ledger.js';

export const MEMORY_FAMILY = 'memory';

export interface MemoryDriverOptions {
  /** One ledger, or several with distinct chains (e.g. `memory:devnet` and `memory:testnet`). */
  ledger: MemoryLedger | readonly MemoryLedger[];
  /** Serve only these chains (each must have a ledger). Default: every ledger's chain. */
  chains?: readonly string[];
  /** Plugin name. Default `@vault/sdk/testing:memory`. */
  name?: string;
}

export type MemoryDriver = ChainDriver & { readonly family: 'memory'; readonly paramsKind: 'xrpl' };
export type MemorySigner = ChainSigner & { readonly family: 'memory' };

/**
 * A keyless ChainDriver over one or more memory ledgers.
 *
 * @example
 * const ledger = new MemoryLedger()
 * const driver = createMemoryDriver({ ledger })
 * const { wallet } = memoryWallet({ ledger, members: 3, quorum: 2 })
 * const params = await driver.fetchParams({ wallet })
 * const built = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination, amount: '5' }), wallet, params })
 */
export function createMemoryDriver(options: MemoryDriverOptions): MemoryDriver {
  const name = options.name ?? '@vault/sdk/testing:memory';
  const all = options.ledger instanceof MemoryLedger ? [options.ledger] : [...options.ledger];
  const byChain = new Map<string, MemoryLedger>();
  for (const l of all) {
    if (byChain.has(l.chain)) throw new DriverRegistryError('invalid_driver', `${name}: two ledgers for ${l.chain}`);
    byChain.set(l.chain, l);
  }
  const chains: readonly string[] = Object.freeze([...(options.chains ?? byChain.keys())]);
  for (const c of chains) {
    if (!byChain.has(c)) throw new DriverRegistryError('invalid_driver', `${name}: no ledger for chain ${c}`);
  }

  const served = (chain: string): MemoryLedger => {
    const l = chains.includes(chain) ? byChain.get(chain) : undefined;
    if (!l) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(chain)} (serves ${chains.join(', ')})`);
    return l;
  };

  const multisig = (wallet: WalletDescriptor) => {
    const ledger = served(wallet.chain);
    if (wallet.control.kind !== 'native_multisig') {
      throw new ValidationError('wallet', [{ path: 'control.kind', message: 'the memory driver serves native_multisig wallets only' }]);
    }
    return { ledger, control: wallet.control };
  };

  /** Reads a ledger over its rpc; a fault that is not already typed becomes a TransportError. */
  const rpc = async <T>(ledger: MemoryLedger, what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (cause) {
      if (cause instanceof VaultError) throw cause;
      throw new TransportError(`memory ledger ${ledger.chain}: ${what} failed`, { cause });
    }
  };

  const driver: MemoryDriver = {
    name,
    family: MEMORY_FAMILY,
    chains,
    paramsKind: 'xrpl',
    operations: Object.freeze(['transfer'] as const),

    validateAddress({ chain, address }: ValidateAddressInput): AddressCheck {
      if (!chains.includes(chain)) return { valid: false, reason: `${name} does not serve chain ${chain}` };
      const problem = memoryAddressProblem(address);
      // Memory addresses carry no network tag: the same address is valid on every memory chain.
      return problem ? { valid: false, reason: problem } : { valid: true, normalized: address, network: null };
    },

    async fetchParams({ wallet }: FetchParamsInput): Promise<ChainParams> {
      const { ledger, control } = multisig(wallet);
      const info = await rpc(ledger, 'params', () => ledger.rpc.params(control.address));
      return {
        kind: 'xrpl',
        sequence: info.sequence,
        base_fee_drops: info.fee,
        last_ledger_sequence: info.ledger + MEMORY_EXPIRY_LEDGERS,
        network_id: null,
      };
    },

    async fetchProtectInputs({ intent, wallet }: FetchProtectInputsInput): Promise<ChainProtectFacts> {
      served(wallet.chain);
      // No code at memory addresses and no issued tokens: nothing for the code or token guards.
      return { destination: { address: intent.destination, hasCode: null, codeHash: null }, issuer: null, assetSymbol: null, issuerKeyBurned: false };
    },

    buildPayload({ intent, wallet, params }: BuildPayloadInput): BuiltPayload {
      const { control } = multisig(wallet);
      const bad = (path: string, message: string): never => {
        throw new ValidationError('intent', [{ path, message }]);
      };
      if (intent.operation.op !== 'transfer') {
        bad('operation.op', `the memory driver builds transfer only, not ${intent.operation.op}`);
      }
      if (params.kind !== 'xrpl') {
        throw new ValidationError('params', [{ path: 'kind', message: `the memory driver takes xrpl-shaped params, got ${params.kind}` }]);
      }
      if (intent.asset_issuer !== undefined) bad('asset_issuer', 'memory ledgers have the native asset only');
      if (intent.asset_symbol !== undefined && intent.asset_symbol !== MEMORY_NATIVE.symbol) {
        bad('asset_symbol', `memory ledgers have the native asset ${MEMORY_NATIVE.symbol} only`);
      }
      if (intent.asset_symbol !== undefined && intent.asset_decimals !== MEMORY_NATIVE.decimals) {
        bad('asset_decimals', `${MEMORY_NATIVE.symbol} has ${MEMORY_NATIVE.decimals} decimals`);
      }
      const problem = memoryAddressProblem(intent.destination);
      if (problem) bad('destination', problem);
      if (intent.destination === control.address) bad('destination', 'a wallet cannot transfer to itself');
      if (intent.amount === '0') bad('amount', 'amount must be positive');

      const payload: MemoryPayload = {
        format: MEMORY_TX_FORMAT,
        chain: wallet.chain,
        op: 'transfer',
        account: control.address,
        destination: intent.destination,
        amount: intent.amount,
        fee: String(params.base_fee_drops),
        sequence: params.sequence,
        last_ledger: params.last_ledger_sequence,
      };
      if (intent.memo !== undefined) payload.memo = intent.memo;
      const checked = parseWith(MemoryPayloadSchema, payload, 'payload');
      return {
        payload: checked,
        digest: memoryDigest(checked),
        summary:
          `Transfer ${formatUnits(checked.amount, MEMORY_NATIVE.decimals)} ${MEMORY_NATIVE.symbol} ` +
          `${short(checked.account)} -> ${short(checked.destination)}, fee ${checked.fee}, ` +
          `seq ${checked.sequence}, valid through ledger ${checked.last_ledger}`,
      };
    },

    assemble({ built, contributions, wallet, memo }: AssembleInput): AssembleResult {
      const { control } = multisig(wallet);
      const payload = payloadOf(built);
      if (payload.account !== control.address || payload.chain !== wallet.chain) {
        throw new ValidationError('built', [{ path: 'payload.account', message: `payload is for ${payload.chain} ${payload.account}, not this wallet` }]);
      }
      const digest = fromHex(built.digest, 'built.digest', 32);
      return assembleContributions({
        contributions,
        wallet,
        verify: (c, member) => contributionProblem(c, member, digest),
        // verify reads only the digest.
        memo,
        memoKey: built.digest,
        encode: (counted) => {
          // Sorted so the blob (and so the tx hash) does not depend on the order signatures arrived in.
          const signatures: MemorySignature[] = counted
            .map(({ contribution: c }) => ({ address: c.signer_address, public_key: c.public_key.hex, signature: c.signature.hex }))
            .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
          const envelope = { payload, signatures };
          return { blob: encodeMemoryBlob(envelope), txHash: sha256Hex(canonicalize(envelope)) };
        },
      });
    },

    async submit({ chain, blob }: SubmitInput): Promise<SubmitResult> {
      const ledger = served(chain);
      const out = await rpc(ledger, 'submit', () => ledger.rpc.submit(blob));
      return out.accepted
        ? { status: 'submitted', txHash: out.hash, code: out.code }
        : { status: 'rejected', txHash: out.hash, code: out.code, message: out.message, retriable: out.retriable };
    },

    async confirm({ chain, txHash, built }: ConfirmInput): Promise<ConfirmResult> {
      const ledger = served(chain);
      const payload = payloadOf(built);
      const status = await rpc(ledger, 'tx', () => ledger.rpc.txStatus(txHash));
      if (status.state === 'applied') return { status: 'confirmed', txHash, code: status.code, ledger: status.ledger };
      if (status.state === 'pending') return { status: 'pending', txHash };
      // Not in any closed ledger: provably dead once past its expiry or once its sequence is used.
      if (status.ledger > payload.last_ledger) {
        return { status: 'failed', txHash, code: 'expired', message: `not applied by ledger ${payload.last_ledger}; ledger ${status.ledger} is open`, dead: true };
      }
      const account = await rpc(ledger, 'account', () => ledger.rpc.account(payload.account));
      if (account && account.sequence > payload.sequence) {
        return { status: 'failed', txHash, code: 'sequence_consumed', message: `sequence ${payload.sequence} was used by another transaction`, dead: true };
      }
      return { status: 'pending', txHash };
    },

    async payloadFate({ chain, built }: PayloadFateInput): Promise<PayloadFate> {
      const ledger = served(chain);
      const payload = payloadOf(built);
      // Looked up by account and sequence, never by a hash: the hash depends on the signatures.
      const used = await rpc(ledger, 'history', () => ledger.rpc.txBySequence(payload.account, payload.sequence));
      if (used) {
        return memoryDigest(used.payload) === built.digest
          ? { fate: 'applied', code: 'applied', message: `applied in ledger ${used.ledger} as ${used.hash}`, txHash: used.hash }
          : { fate: 'dead', code: 'sequence_consumed', message: `sequence ${payload.sequence} was used by ${used.hash}` };
      }
      const index = await rpc(ledger, 'ledger', () => ledger.rpc.ledgerIndex());
      if (index > payload.last_ledger) return { fate: 'dead', code: 'expired', message: `valid through ledger ${payload.last_ledger}; ledger ${index} is open` };
      return { fate: 'live', code: 'pending', message: `sequence ${payload.sequence} unused; valid through ledger ${payload.last_ledger}` };
    },

    // The ledger takes exactly the payload's `fee` from the account, on success or failure.
    fee: ({ built }: FeeInput): FeeQuote => ({ amount: BigInt(payloadOf(built).fee), unit: `minor units of ${MEMORY_NATIVE.symbol}` }),
    defaultMaxFee: MEMORY_DEFAULT_MAX_FEE,

    async balances({ wallet }: BalancesInput): Promise<Balance[]> {
      const { ledger, control } = multisig(wallet);
      const account = await rpc(ledger, 'account', () => ledger.rpc.account(control.address));
      if (!account) throw new NotFoundError('account', control.address, { data: { chain: wallet.chain } });
      return [{ asset: 'native', symbol: MEMORY_NATIVE.symbol, amount: account.balance.toString(), decimals: MEMORY_NATIVE.decimals }];
    },

    async controlState({ wallet }: ControlStateInput): Promise<ControlState> {
      const { ledger, control } = multisig(wallet);
      const account = await rpc(ledger, 'account', () => ledger.rpc.account(control.address));
      if (!account) throw new NotFoundError('account', control.address, { data: { chain: wallet.chain } });
      return {
        address: account.address,
        members: account.signers?.members ?? [],
        quorum: account.signers?.quorum ?? 0,
        masterKeyEnabled: account.masterKey,
        extra: { sequence: account.sequence },
      };
    },
  };
  return defineChainDriver(driver);
}

/** The memory ledger's check of one contribution from `member`: its ed25519 key and signature over the digest. */
function contributionProblem(c: Contribution, member: SignerDesc, digest: Uint8Array): ContributionProblem | null {
  if (c.public_key.curve !== 'ed25519') return { reason: 'wrong_key', detail: `curve ${c.public_key.curve} is not ed25519` };
  if (c.public_key.hex.length !== 64) return { reason: 'wrong_key', detail: 'public key is not 32 bytes' };
  const publicKey = fromHex(c.public_key.hex, 'public_key', 32);
  if (memoryAddress(publicKey) !== member.address) return { reason: 'wrong_key', detail: `public key does not control ${member.address}` };
  if (c.signature.encoding !== MEMORY_SIGNATURE_ENCODING) {
    return { reason: 'bad_signature', detail: `signature encoding ${c.signature.encoding} is not ${MEMORY_SIGNATURE_ENCODING}` };
  }
  if (c.signature.hex.length !== 128) return { reason: 'bad_signature', detail: 'signature is not 64 bytes' };
  if (!verifyEd25519(fromHex(c.signature.hex, 'signature', 64), digest, publicKey)) return { reason: 'bad_signature', detail: 'signature does not verify' };
  return null;
}

/** The payload of a BuiltPayload, checked against its digest (a mismatch is a caller's fault). */
function payloadOf(built: BuiltPayload): MemoryPayload {
  const payload = parseWith(MemoryPayloadSchema, built.payload, 'built.payload');
  if (memoryDigest(payload) !== built.digest) {
    throw new ValidationError('built', [{ path: 'digest', message: 'digest is not sha256(JCS(payload))' }]);
  }
  return payload;
}

export interface MemorySignerOptions {
  /** Chains to serve. Default `['memory:devnet']`. */
  chains?: readonly string[];
  name?: string;
}

/**
 * The signing half: derives addresses and signs through a SigningKey (never a raw key).
 *
 * @example
 * const signer = createMemorySigner()
 * const contribution = await signer.signPayload({ built, key: keys[0], signerAddress: wallet.control.signers[0].address })
 */
export function createMemorySigner(options: MemorySignerOptions = {}): MemorySigner {
  const chains: readonly string[] = Object.freeze([...(options.chains ?? ['memory:devnet'])]);
  const name = options.name ?? '@vault/sdk/testing:memory/signer';
  const signer: MemorySigner = {
    name,
    family: MEMORY_FAMILY,
    chains,
    deriveAddress({ chain, publicKey, curve }: DeriveAddressInput): string {
      if (!chains.includes(chain)) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(chain)}`);
      if (curve !== 'ed25519') throw new ValidationError('key', [{ path: 'curve', message: 'memory keys are ed25519' }]);
      return memoryAddress(publicKey);
    },
    async signPayload({ built, key, signerAddress }: SignPayloadInput): Promise<Contribution> {
      const payload = parseWith(MemoryPayloadSchema, built.payload, 'built.payload');
      if (!chains.includes(payload.chain)) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(payload.chain)}`);
      // Sign only what the payload itself hashes to, never a digest we are merely handed.
      if (memoryDigest(payload) !== built.digest) {
        throw new SignerRefusedError('digest_mismatch', 'the digest is not sha256(JCS(payload))');
      }
      if (key.curve !== 'ed25519') throw new SignerRefusedError('key', `memory ledgers need an ed25519 key, not ${key.curve}`);
      const address = memoryAddress(key.publicKey);
      if (address !== signerAddress) throw new SignerRefusedError('key', `the key controls ${address}, not ${signerAddress}`);
      const sig = await key.sign(fromHex(built.digest, 'built.digest', 32));
      return {
        signer_address: signerAddress,
        public_key: { curve: 'ed25519', hex: toHex(key.publicKey) },
        signature: { encoding: MEMORY_SIGNATURE_ENCODING, hex: toHex(sig) },
      };
    },
  };
  return defineChainSigner(signer);
}

/**
 * A software SigningKey (ed25519 by default, or secp256k1) for tests and examples, following the
 * SigningKey contract: ed25519 signs the message; secp256k1 signs a 32-byte digest and returns
 * `r || s || recovery` with low s. The secret stays in the closure; nothing reads it back. Never
 * use it for real funds.
 *
 * @example
 * const key = createSoftwareKey()
 * const sig = await key.sign(new Uint8Array(32))
 * const evmKey = createSoftwareKey(undefined, 'secp256k1')
 */
export function createSoftwareKey(secretKey?: Uint8Array, curve: Curve = 'ed25519'): SigningKey {
  if (secretKey !== undefined && secretKey.length !== 32) {
    throw new ValidationError('secretKey', [{ path: '', message: `a ${curve} secret key is 32 bytes` }]);
  }
  if (curve === 'secp256k1') {
    const sk = secretKey ? Uint8Array.from(secretKey) : secp256k1.utils.randomSecretKey();
    const publicKey = secp256k1.getPublicKey(sk, true);
    return Object.freeze({
      curve: 'secp256k1' as const,
      get publicKey() {
        return Uint8Array.from(publicKey);
      },
      sign: async (digest: Uint8Array) => {
        if (digest.length !== 32) {
          throw new ValidationError('message', [{ path: '', message: 'secp256k1 signs a 32-byte digest' }]);
        }
        // noble's "recovered" form is recovery || r || s; the SigningKey contract is r || s || recovery.
        const rec = secp256k1.sign(digest, sk, { prehash: false, lowS: true, format: 'recovered' });
        const out = new Uint8Array(65);
        out.set(rec.subarray(1), 0);
        out[64] = rec[0] as number;
        return out;
      },
    });
  }
  const sk = secretKey ? Uint8Array.from(secretKey) : generateEd25519KeyPair().secretKey;
  const publicKey = ed25519PublicKey(sk);
  return Object.freeze({
    curve: 'ed25519' as const,
    get publicKey() {
      return Uint8Array.from(publicKey);
    },
    sign: async (message: Uint8Array) => signEd25519(message, sk),
  });
}

export interface MemoryWalletOptions {
  ledger: MemoryLedger;
  /** Wallet id. Default `mem-wallet-<n>`. */
  wallet?: string;
  /** Member count (weights 1), or explicit weights. Default 3. */
  members?: number | readonly number[];
  /** Default: a simple majority of the total weight. */
  quorum?: number;
  /** Funded native balance in minor units. Default 1_000_000_000 (1000 MEM). */
  balance?: bigint;
  /** Member secret keys, for reproducible tests. Default: fresh random keys. */
  secretKeys?: readonly Uint8Array[];
}

export interface MemoryWallet {
  wallet: WalletDescriptor;
  /** One key per member, in wallet order. */
  keys: SigningKey[];
  address: string;
  ledger: MemoryLedger;
}

let walletCounter = 0;

/**
 * Creates N member keys, a funded on-ledger account whose signer list is those members (master
 * key disabled), and its WalletDescriptor.
 *
 * @example
 * const ledger = new MemoryLedger()
 * const { wallet, keys } = memoryWallet({ ledger, members: 3, quorum: 2 })
 * ledger.balance(wallet.control.kind === 'native_multisig' ? wallet.control.address : '') // 1000000000n
 */
export function memoryWallet(options: MemoryWalletOptions): MemoryWallet {
  const { ledger } = options;
  const weights = typeof options.members === 'object' ? [...options.members] : Array.from({ length: options.members ?? 3 }, () => 1);
  const total = weights.reduce((s, w) => s + w, 0);
  const quorum = options.quorum ?? Math.floor(total / 2) + 1;
  const keys = weights.map((_, i) => createSoftwareKey(options.secretKeys?.[i]));
  // The account's own key is thrown away: only the signer list can move its funds.
  const address = memoryAddress(createSoftwareKey().publicKey);
  const members = keys.map((k, i) => ({ address: memoryAddress(k.publicKey), weight: weights[i] as number }));
  ledger.createAccount({ address, balance: options.balance ?? 1_000_000_000n, signers: { members, quorum }, masterKey: false });
  const wallet = parseWith(
    WalletDescriptorSchema,
    {
      wallet: options.wallet ?? `mem-wallet-${++walletCounter}`,
      chain: ledger.chain,
      control: {
        kind: 'native_multisig',
        address,
        signers: members.map((m, i) => ({ address: m.address, curve: 'ed25519', weight: m.weight, label: `member-${i + 1}` })),
        quorum,
      },
    },
    'wallet',
  );
  return { wallet, keys, address, ledger };
}

function short(address: string): string {
  return `${address.slice(0, 10)}…${address.slice(-4)}`;
}
