/**
 * @module driver
 * The keyless EVM ChainDriver over a Safe v1.4.1 multi-owner contract.
 */
import {
  DriverRegistryError,
  NotFoundError,
  TransportError,
  ValidationError,
  VaultError,
  assembleContributions,
  canonicalize,
  defineChainDriver,
  fromHex,
  type AddressCheck,
  type AddressLedgerFacts,
  type AssembleInput,
  type AssembleResult,
  type Balance,
  type BalancesInput,
  type BuildPayloadInput,
  type BuiltPayload,
  type ChainDriver,
  type ChainParams,
  type ChainProtectFacts,
  type ConfirmInput,
  type ConfirmResult,
  type Contribution,
  type ContributionProblem,
  type ControlState,
  type ControlStateInput,
  type FeeInput,
  type FeeQuote,
  type FetchParamsInput,
  type FetchProtectInputsInput,
  type PayloadFate,
  type PayloadFateInput,
  type SignerDesc,
  type SubmitInput,
  type SubmitResult,
  type ValidateAddressInput,
  type WalletDescriptor,
} from '@vault/sdk';
import {
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  decodeFunctionData,
  defineChain,
  encodeFunctionData,
  formatUnits,
  getAddress,
  hexToString,
  http,
  keccak256,
  parseAbi,
  toFunctionSelector,
  toHex,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
} from 'viem';
import { chainIdOf, checkChains, checksum, evmAddressProblem, EVM_FAMILY, shortAddress } from './chains.js';
import {
  compareAddresses,
  encodeExecTransaction,
  parseSafeBlob,
  payloadDigest,
  SAFE_ABI,
  SAFE_BLOB_FORMAT,
  SAFE_SIGNATURE_ENCODING,
  SAFE_TX_FORMAT,
  ZERO_ADDRESS,
  checkedPayload,
  safeTxHash,
  type SafeBlob,
  type SafePayload,
  type SafePayloadOp,
  type SafeTx,
} from './safe-tx.js';
import { publicKeyToEvmAddress, recoverEvmAddress } from './secp256k1.js';
import { readSafeConfig } from './safe-config.js';
import { EXECUTION_FAILURE, EXECUTION_SUCCESS, executionEvent, nonceRecord, type ExecutionLog, type NonceRecord, type SafeHistory } from './fate.js';

/** ERC-20 calls the driver makes (and mint, which `issue` builds). */
export const ERC20_ABI = parseAbi([
  'function transfer(address to, uint256 amount) returns (bool)',
  'function mint(address to, uint256 amount)',
  'function balanceOf(address owner) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function owner() view returns (address)',
]);
const SYMBOL_SELECTOR = '0x95d89b41';
const NONCE_SELECTOR = toFunctionSelector('nonce()');

/** Owners that can never sign again: a token whose owner() is one of these is burned. */
export const BURNED_OWNERS: readonly Address[] = [
  ZERO_ADDRESS,
  '0x000000000000000000000000000000000000dEaD',
  '0xdEAD000000000000000042069420694206942069',
];

/**
 * Who sends execTransaction and pays its gas. The Safe does not care who sends it: the owner
 * signatures authorise the SafeTx, the executor only carries it. So the executor is never an
 * owner key and needs no authority over the Safe's funds; the worst a compromised executor can do
 * is not submit, or waste its own gas.
 *
 * - a viem `Account`: a local account (software key in the signer's process), or any custom
 *   account whose `signTransaction` reaches a remote key (e.g. an HSM or the signer service). The
 *   control plane only ever holds this object, never a raw key, when it is wired that way.
 * - `{ relayerUrl }`: an external relayer. The driver POSTs
 *   `{chain, chain_id, to, data, safe_tx_hash}` as JSON and expects `{tx_hash}` back (2xx).
 */
export type EvmExecutor = Account | { relayerUrl: string; headers?: Record<string, string> };

export interface EvmChainConfig {
  /** JSON-RPC endpoint (a public testnet RPC or the local devnet). */
  rpcUrl: string;
  /** Gas payer for this chain; overrides the driver-wide `executor`. */
  executor?: EvmExecutor;
  /** Native asset symbol. Default `ETH`. */
  nativeSymbol?: string;
  /** ERC-20 contracts whose balances `balances()` reports. */
  tokens?: readonly string[];
  /**
   * Which head `payloadFate` treats as settled: `finalized` (default), `safe`, or `latest`. Only a
   * nonce consumed at or below this head can make a payload `dead`; a reorg above it could undo
   * the transaction that consumed it. `latest` suits a single-node chain that never reorgs (the
   * local anvil devnet), nothing public.
   */
  finality?: EvmFinality;
  /** viem polling interval, ms. Default 4000 (viem's); set it low for local chains. */
  pollingInterval?: number;
}

/** A block tag `payloadFate` reads the Safe at. */
export type EvmFinality = 'finalized' | 'safe' | 'latest';
export const EVM_FINALITIES: readonly EvmFinality[] = ['finalized', 'safe', 'latest'];

export interface EvmSafeDriverOptions {
  /** One entry per served chain, keyed `eip155:<chain id>`. */
  chains: Record<string, EvmChainConfig>;
  /** Default gas payer for submit. Without one, submit reports `no_executor`. */
  executor?: EvmExecutor;
  /** fetch for JSON-RPC and the relayer (tests, proxies). Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Plugin name. Default `@vault/driver-evm-safe`. */
  name?: string;
}

export type EvmSafeDriver = ChainDriver & {
  readonly family: 'evm';
  readonly paramsKind: 'evm_safe';
};

const NATIVE_DECIMALS = 18;

/**
 * The fee cap (wei the Safe itself pays out) a signer applies when its trust file sets no max_fee:
 * nothing. Gas for execTransaction is paid by whoever sends it (the executor), never by the Safe,
 * unless the SafeTx asks for a refund (gasPrice > 0 pays (gas used + baseGas) x gasPrice to
 * refundReceiver, or tx.origin). This driver builds every SafeTx without one, so 0 refuses only
 * a refund, which is how a control plane could drain a Safe in "fees".
 */
export const SIGNER_DEFAULT_MAX_FEE_WEI = 0n;

/** Safe revert reasons (GS codes) and what they mean, for messages. */
export const SAFE_REVERT_CODES: Readonly<Record<string, string>> = {
  GS010: 'not enough gas to execute the Safe transaction',
  GS013: 'the inner call failed (safeTxGas and gasPrice are 0, so the whole transaction reverts)',
  GS020: 'signatures data too short for the threshold',
  GS021: 'invalid contract signature location',
  GS024: 'invalid contract signature provided',
  GS025: 'hash has not been approved',
  GS026: 'invalid owner provided (a signature that is not an owner’s, out of order, or over another hash)',
};

/** One served chain: its config, viem client and transport (shared by the driver and the provisioner). */
export interface ChainCtx {
  chain: string;
  chainId: number;
  config: EvmChainConfig;
  client: PublicClient<Transport, Chain>;
  viemChain: Chain;
  transport: Transport;
  executor: EvmExecutor | undefined;
}

/** One viem client per chain, validated; throws a DriverRegistryError naming a bad chain entry. */
export function chainContexts(
  name: string,
  chains: readonly string[],
  configs: Record<string, EvmChainConfig>,
  fetchFn: typeof fetch,
  executor?: EvmExecutor,
): Map<string, ChainCtx> {
  const ctxs = new Map<string, ChainCtx>();
  for (const chain of chains) {
    const config = configs[chain] as EvmChainConfig;
    const chainId = chainIdOf(chain) as number;
    if (typeof config?.rpcUrl !== 'string' || !/^https?:\/\//.test(config.rpcUrl)) {
      throw new DriverRegistryError('invalid_driver', `${name}: chains["${chain}"].rpcUrl must be an http(s) URL`);
    }
    if (config.finality !== undefined && !EVM_FINALITIES.includes(config.finality)) {
      throw new DriverRegistryError('invalid_driver', `${name}: chains["${chain}"].finality must be one of ${EVM_FINALITIES.join(', ')}`);
    }
    for (const t of config.tokens ?? []) {
      if (evmAddressProblem(t)) throw new DriverRegistryError('invalid_driver', `${name}: chains["${chain}"].tokens has a bad address ${t}`);
    }
    const viemChain = defineChain({
      id: chainId,
      name: chain,
      nativeCurrency: { name: config.nativeSymbol ?? 'ETH', symbol: config.nativeSymbol ?? 'ETH', decimals: NATIVE_DECIMALS },
      rpcUrls: { default: { http: [config.rpcUrl] } },
    });
    const transport = http(config.rpcUrl, { fetchFn, retryCount: 1 });
    const pollingInterval = config.pollingInterval ?? 4000;
    const client = createPublicClient({ chain: viemChain, transport, pollingInterval }) as PublicClient<Transport, Chain>;
    ctxs.set(chain, { chain, chainId, config, client, viemChain, transport, executor: config.executor ?? executor });
  }
  return ctxs;
}

/** Runs one RPC read; any fault that is not already a VaultError becomes a TransportError naming it. */
export async function rpcCall<T>(ctx: ChainCtx, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (cause) {
    if (cause instanceof VaultError) throw cause;
    throw new TransportError(`${ctx.chain}: ${what} failed`, { cause, details: (cause as Error)?.message?.split('\n')[0] });
  }
}

/** Owners of a Safe descriptor, each of weight 1 (a Safe has no weights). */
function safeControl(wallet: WalletDescriptor) {
  if (wallet.control.kind !== 'evm_safe') {
    throw new ValidationError('wallet', [{ path: 'control.kind', message: 'the EVM Safe driver serves evm_safe wallets only' }]);
  }
  const c = wallet.control;
  const problem = evmAddressProblem(c.safe);
  if (problem) throw new ValidationError('wallet', [{ path: 'control.safe', message: problem }]);
  for (const [i, o] of c.owners.entries()) {
    const p = evmAddressProblem(o.address);
    if (p) throw new ValidationError('wallet', [{ path: `control.owners.${i}.address`, message: p }]);
    if (o.weight !== 1) throw new ValidationError('wallet', [{ path: `control.owners.${i}.weight`, message: 'each Safe owner counts 1' }]);
    if (o.curve !== 'secp256k1') throw new ValidationError('wallet', [{ path: `control.owners.${i}.curve`, message: 'Safe owners are secp256k1 keys' }]);
  }
  return { safe: checksum(c.safe), owners: c.owners, threshold: c.threshold };
}

/** The GS code (or other revert string) in a viem error's cause chain, if any. */
export function revertReason(err: unknown): string | null {
  const seen: string[] = [];
  let e: unknown = err;
  for (let i = 0; i < 12 && e; i++) {
    const data = (e as { data?: unknown }).data;
    const hex = typeof data === 'string' ? data : typeof (data as { data?: unknown })?.data === 'string' ? (data as { data: string }).data : undefined;
    if (hex && /^0x08c379a0/.test(hex)) {
      try {
        const decoded = decodeErrorResult({ abi: parseAbi(['error Error(string)']), data: hex as Hex });
        return String(decoded.args[0]);
      } catch {
        // fall through to the messages
      }
    }
    for (const k of ['details', 'shortMessage', 'message'] as const) {
      const m = (e as Record<string, unknown>)[k];
      if (typeof m === 'string') seen.push(m);
    }
    e = (e as { cause?: unknown }).cause;
  }
  for (const m of seen) {
    const gs = /\bGS\d{3}\b/.exec(m);
    if (gs) return gs[0];
  }
  for (const m of seen) {
    const r = /execution reverted(?::\s*([^\n]+))?/i.exec(m);
    if (r) return r[1]?.trim() || 'reverted';
  }
  return null;
}

/**
 * A keyless ChainDriver for Safe v1.4.1 wallets on EVM chains.
 *
 * @example
 * const driver = createEvmSafeDriver({
 *   chains: { 'eip155:11155111': { rpcUrl: 'https://ethereum-sepolia-rpc.publicnode.com' } },
 *   executor: { relayerUrl: 'http://127.0.0.1:8080/relay' },
 * })
 * const params = await driver.fetchParams({ wallet }) // { kind: 'evm_safe', chain_id: 11155111, safe_nonce: '4' }
 */
export function createEvmSafeDriver(options: EvmSafeDriverOptions): EvmSafeDriver {
  const name = options.name ?? '@vault/driver-evm-safe';
  const chains = checkChains(name, Object.keys(options.chains));
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const ctxs = chainContexts(name, chains, options.chains, fetchFn, options.executor);

  /** Ethereum tx hash of each execTransaction this driver sent, by `${chain} ${safeTxHash}`. */
  const sent = new Map<string, Hex>();

  const served = (chain: string): ChainCtx => {
    const ctx = ctxs.get(chain);
    if (!ctx) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(chain)} (serves ${chains.join(', ')})`);
    return ctx;
  };

  const rpc = rpcCall;

  const readSafe = async <F extends 'nonce' | 'getThreshold' | 'getOwners' | 'VERSION'>(ctx: ChainCtx, safe: Address, functionName: F) => {
    // Both reads at once (one round trip's wait); the code decides first: with none at the address,
    // it is NotFound whatever the call answered.
    const [code, value] = await Promise.allSettled([
      rpc(ctx, 'eth_getCode', () => ctx.client.getCode({ address: safe })),
      rpc(ctx, `Safe.${functionName}()`, () => ctx.client.readContract({ address: safe, abi: SAFE_ABI, functionName })),
    ]);
    if (code.status === 'rejected') throw code.reason;
    if (code.value === undefined || code.value === '0x') throw new NotFoundError('safe', safe, { data: { chain: ctx.chain } });
    if (value.status === 'rejected') throw value.reason;
    return value.value;
  };

  const checkRpcChain = async (ctx: ChainCtx): Promise<number> => {
    const id = await rpc(ctx, 'eth_chainId', () => ctx.client.getChainId());
    return id;
  };

  /** Refuses an RPC that serves another chain: the same Safe address can exist on many chains. */
  const sameChain = async (ctx: ChainCtx): Promise<void> => {
    const id = await checkRpcChain(ctx);
    if (id !== ctx.chainId) {
      throw new TransportError(`${ctx.chain}: the RPC at ${ctx.config.rpcUrl} serves chain ${id}, not ${ctx.chainId}`, { data: { chain: ctx.chain, rpc_chain_id: id } });
    }
  };

  /** The number of the block a tag names (`latest`, `safe`, `finalized`). */
  const headOf = async (ctx: ChainCtx, tag: EvmFinality): Promise<bigint> => {
    // Not viem's getBlockNumber: it caches the number for a polling interval, and a stale head
    // would hide an execution that confirm or the caller has just seen.
    if (tag === 'latest') return BigInt(await rpc(ctx, 'eth_blockNumber', () => ctx.client.request({ method: 'eth_blockNumber' })));
    const block = await rpc(ctx, `eth_getBlockByNumber(${tag})`, () => ctx.client.request({ method: 'eth_getBlockByNumber', params: [tag, false] }));
    if (!block || typeof block.number !== 'string') throw new TransportError(`${ctx.chain}: the RPC has no ${tag} block`);
    return BigInt(block.number);
  };

  /** The Safe's nonce and execution events at fixed block numbers, for nonceRecord. */
  const history = (ctx: ChainCtx, safe: Address): SafeHistory => ({
    async nonceAt(block) {
      const at = toHex(block);
      const out = await rpc(ctx, `Safe.nonce() at block ${block}`, () => ctx.client.request({ method: 'eth_call', params: [{ to: safe, data: NONCE_SELECTOR }, at] }));
      if (typeof out === 'string' && /^0x[0-9a-fA-F]{64}$/.test(out)) return BigInt(out);
      if (out === '0x') {
        // No code yet: nothing had executed. Anything else answering empty is not a Safe we can read.
        const code = await rpc(ctx, `eth_getCode at block ${block}`, () => ctx.client.request({ method: 'eth_getCode', params: [safe, at] }));
        if (code === '0x') return 0n;
      }
      throw new TransportError(`${ctx.chain}: Safe.nonce() at block ${block} answered ${String(out).slice(0, 80)}, not a uint256`);
    },
    async executionLogs(block) {
      const logs = await rpc(ctx, `eth_getLogs at block ${block}`, () =>
        ctx.client.request({ method: 'eth_getLogs', params: [{ address: safe, topics: [[EXECUTION_SUCCESS, EXECUTION_FAILURE]], fromBlock: toHex(block), toBlock: toHex(block) }] }),
      );
      if (!Array.isArray(logs)) throw new TransportError(`${ctx.chain}: eth_getLogs answered no list`);
      return logs
        .filter((l) => typeof l?.address === 'string' && l.address.toLowerCase() === safe.toLowerCase() && !l.removed && Array.isArray(l.topics))
        .map((l): ExecutionLog => ({ topics: l.topics as Hex[], data: l.data as Hex, transactionHash: l.transactionHash }));
    },
  });

  /** The Safe's record for a payload's nonce at `tag`. */
  const recordOf = async (ctx: ChainCtx, payload: SafePayload, digest: string, tag: EvmFinality): Promise<NonceRecord> => {
    await sameChain(ctx);
    const head = await headOf(ctx, tag);
    return nonceRecord(history(ctx, payload.safe), { nonce: BigInt(payload.tx.nonce), safeTxHash: `0x${digest}`, head });
  };

  /** ERC-20 symbol(): a string, or a bytes32 (old tokens); null when there is none. */
  const tokenSymbol = async (ctx: ChainCtx, token: Address): Promise<string | null> => {
    let data: Hex | undefined;
    try {
      data = (await ctx.client.call({ to: token, data: SYMBOL_SELECTOR })).data;
    } catch {
      return null;
    }
    return decodeSymbol(data);
  };

  const tokenOwner = async (ctx: ChainCtx, token: Address): Promise<Address | null> => {
    try {
      return await ctx.client.readContract({ address: token, abi: ERC20_ABI, functionName: 'owner' });
    } catch {
      return null;
    }
  };

  const driver: EvmSafeDriver = {
    name,
    family: EVM_FAMILY,
    chains,
    paramsKind: 'evm_safe',
    operations: Object.freeze(['transfer', 'issue', 'contract_call'] as const),

    validateAddress({ chain, address }: ValidateAddressInput): AddressCheck {
      if (!ctxs.has(chain)) return { valid: false, reason: `${name} does not serve chain ${chain}` };
      const problem = evmAddressProblem(address);
      // An EVM address is the same on every chain: it never says which network it belongs to.
      return problem ? { valid: false, reason: problem } : { valid: true, normalized: checksum(address), network: null };
    },

    async fetchParams({ wallet }: FetchParamsInput): Promise<ChainParams> {
      const ctx = served(wallet.chain);
      const { safe } = safeControl(wallet);
      // The chain check and the read at once; the chain is judged first, as when read in turn.
      const [chain, read] = await Promise.allSettled([sameChain(ctx), readSafe(ctx, safe, 'nonce')]);
      if (chain.status === 'rejected') throw chain.reason;
      if (read.status === 'rejected') throw read.reason;
      const nonce = read.value;
      return { kind: 'evm_safe', chain_id: ctx.chainId, safe_nonce: nonce.toString() };
    },

    async fetchProtectInputs({ intent, wallet }: FetchProtectInputsInput): Promise<ChainProtectFacts> {
      const ctx = served(wallet.chain);
      safeControl(wallet);
      // Code at an address, named by its hash (EXTCODEHASH's keccak256 of the runtime bytecode):
      // the guards need only whether there is any, and a hash keeps SignRequest.protect small.
      const codeOf = async (address: string): Promise<AddressLedgerFacts> => {
        if (evmAddressProblem(address)) return { address, hasCode: null, codeHash: null };
        const code = (await rpc(ctx, 'eth_getCode', () => ctx.client.getCode({ address: checksum(address) }))) ?? '0x';
        return code === '0x' ? { address: checksum(address), hasCode: false, codeHash: null } : { address: checksum(address), hasCode: true, codeHash: keccak256(code) };
      };
      const issuerAddress = intent.asset_issuer;
      if (issuerAddress === undefined || evmAddressProblem(issuerAddress)) {
        return { destination: await codeOf(intent.destination), issuer: null, assetSymbol: null, issuerKeyBurned: false };
      }
      // Independent reads, each pair at once (symbol and owner answer null rather than throw).
      const [dest, iss] = await Promise.allSettled([codeOf(intent.destination), codeOf(issuerAddress)]);
      if (dest.status === 'rejected') throw dest.reason;
      if (iss.status === 'rejected') throw iss.reason;
      const destination = dest.value;
      const issuer = iss.value;
      if (issuer.hasCode !== true) return { destination, issuer, assetSymbol: null, issuerKeyBurned: false };
      const [assetSymbol, owner] = await Promise.all([tokenSymbol(ctx, checksum(issuerAddress)), tokenOwner(ctx, checksum(issuerAddress))]);
      const issuerKeyBurned = owner !== null && BURNED_OWNERS.some((b) => b.toLowerCase() === owner.toLowerCase());
      return { destination, issuer, assetSymbol, issuerKeyBurned };
    },

    buildPayload({ intent, wallet, params }: BuildPayloadInput): BuiltPayload {
      const ctx = served(wallet.chain);
      const { safe } = safeControl(wallet);
      const bad = (path: string, message: string): never => {
        throw new ValidationError('intent', [{ path, message }]);
      };
      if (params.kind !== 'evm_safe') throw new ValidationError('params', [{ path: 'kind', message: `the EVM Safe driver takes evm_safe params, got ${params.kind}` }]);
      if (params.chain_id !== ctx.chainId) {
        throw new ValidationError('params', [{ path: 'chain_id', message: `chain_id ${params.chain_id} is not the id of ${ctx.chain} (${ctx.chainId})` }]);
      }
      if (!/^(0|[1-9][0-9]{0,77})$/.test(params.safe_nonce)) throw new ValidationError('params', [{ path: 'safe_nonce', message: 'must be a decimal integer string' }]);
      const destProblem = evmAddressProblem(intent.destination);
      if (destProblem) bad('destination', destProblem);
      const destination = checksum(intent.destination);
      const amount = BigInt(intent.amount);
      if (amount >= 1n << 256n) bad('amount', 'amount does not fit in uint256');
      const issuer = (): Address => {
        if (intent.asset_issuer === undefined) return bad('asset_issuer', `${intent.operation.op} needs the token contract address in asset_issuer`);
        const p = evmAddressProblem(intent.asset_issuer);
        if (p) bad('asset_issuer', p);
        return checksum(intent.asset_issuer);
      };

      let op: SafePayloadOp;
      let to: Address;
      let value = 0n;
      let data: Hex = '0x';
      let what: string;
      const op0 = intent.operation;
      switch (op0.op) {
        case 'transfer': {
          if (amount === 0n) bad('amount', 'amount must be positive');
          if (intent.asset_issuer === undefined) {
            const native = ctx.config.nativeSymbol ?? 'ETH';
            if (intent.asset_symbol !== undefined && intent.asset_symbol.toUpperCase() !== native.toUpperCase()) {
              bad('asset_symbol', `a transfer without asset_issuer moves the native ${native}; name the token contract in asset_issuer`);
            }
            if (intent.asset_symbol !== undefined && intent.asset_decimals !== NATIVE_DECIMALS) bad('asset_decimals', `${native} has ${NATIVE_DECIMALS} decimals`);
            if (destination === safe) bad('destination', 'a Safe cannot transfer to itself');
            op = 'transfer';
            to = destination;
            value = amount;
            what = `transfer ${formatUnits(amount, NATIVE_DECIMALS)} ${native} -> ${destination}`;
          } else {
            const token = issuer();
            op = 'erc20_transfer';
            to = token;
            data = encodeFunctionData({ abi: ERC20_ABI, functionName: 'transfer', args: [destination, amount] });
            what = `ERC-20 transfer ${formatUnits(amount, intent.asset_decimals)} ${intent.asset_symbol ?? 'tokens'} (${shortAddress(token)}) -> ${destination}`;
          }
          break;
        }
        case 'issue': {
          if (amount === 0n) bad('amount', 'amount must be positive');
          const token = issuer();
          op = 'issue';
          to = token;
          data = encodeFunctionData({ abi: ERC20_ABI, functionName: 'mint', args: [destination, amount] });
          what = `issue (mint) ${formatUnits(amount, intent.asset_decimals)} ${intent.asset_symbol ?? 'tokens'} on ${shortAddress(token)} -> ${destination}`;
          break;
        }
        case 'contract_call': {
          if (intent.asset_issuer !== undefined) bad('asset_issuer', 'contract_call sends native value only: put the token call itself in data_hex');
          op = 'contract_call';
          to = destination;
          value = amount;
          data = op0.data_hex.toLowerCase() as Hex;
          what = `contract_call ${destination} selector ${data.slice(0, 10)} (${(data.length - 2) / 2} bytes), value ${formatUnits(amount, NATIVE_DECIMALS)} ${ctx.config.nativeSymbol ?? 'ETH'}`;
          break;
        }
        default:
          return bad('operation.op', refusal(op0.op));
      }
      const tx: SafeTx = {
        to,
        value: value.toString(),
        data,
        operation: 0,
        safeTxGas: '0',
        baseGas: '0',
        gasPrice: '0',
        gasToken: ZERO_ADDRESS,
        refundReceiver: ZERO_ADDRESS,
        nonce: params.safe_nonce,
      };
      const payload: SafePayload = { format: SAFE_TX_FORMAT, chain: ctx.chain, chain_id: ctx.chainId, safe, op, tx };
      return {
        payload,
        digest: payloadDigest(payload),
        summary: `Safe ${safe} on ${ctx.chain}: ${what}, Safe nonce ${tx.nonce}`,
      };
    },

    // What the Safe pays besides the transfer: a gas refund, and only when gasPrice > 0. Its size
    // is gas used x price, which the payload does not bound (safeTxGas 0 lets the call use all the
    // gas the sender gives it), so a refund is a fee nobody can cap: it is refused, not measured.
    fee({ built }: FeeInput): FeeQuote {
      const { tx } = checkedPayload(built);
      if (BigInt(tx.gasPrice) !== 0n) {
        throw new ValidationError('built', [
          { path: 'payload.tx.gasPrice', message: `the SafeTx refunds gas at ${tx.gasPrice} per unit (gasToken ${tx.gasToken}) to ${tx.refundReceiver}: the Safe would pay an unbounded fee` },
        ]);
      }
      return { amount: 0n, unit: 'wei' };
    },
    defaultMaxFee: SIGNER_DEFAULT_MAX_FEE_WEI,

    assemble({ built, contributions, wallet, memo }: AssembleInput): AssembleResult {
      served(wallet.chain);
      const { safe } = safeControl(wallet);
      const payload = checkedPayload(built);
      if (payload.safe !== safe || payload.chain !== wallet.chain) {
        throw new ValidationError('built', [{ path: 'payload.safe', message: `payload is for ${payload.chain} ${payload.safe}, not this wallet` }]);
      }
      const digest = fromHex(built.digest, 'built.digest', 32);
      return assembleContributions({
        contributions,
        wallet,
        verify: (c, owner) => contributionProblem(c, owner, digest),
        // verify reads only the digest, checked above to be the payload's safeTxHash.
        memo,
        memoKey: built.digest,
        // An address's checksum is only its spelling: owners match case-insensitively.
        addressKey: (address) => address.toLowerCase(),
        encode: (counted) => {
          // Safe's checkNSignatures demands owners in strictly ascending order; extra valid signatures
          // past the threshold are ignored by the contract and harmless.
          const sorted = [...counted].sort((x, y) => compareAddresses(x.member.address, y.member.address));
          const signatures = `0x${sorted.map(({ contribution: c }) => c.signature.hex).join('')}` as Hex;
          const txHash = `0x${built.digest}` as Hex;
          const blob: SafeBlob = {
            format: SAFE_BLOB_FORMAT,
            chain_id: payload.chain_id,
            safe,
            nonce: payload.tx.nonce,
            safe_tx_hash: txHash,
            data: encodeExecTransaction(payload.tx, signatures),
          };
          return { blob: canonicalize(blob), txHash };
        },
      });
    },

    async submit({ chain, blob: blobText }: SubmitInput): Promise<SubmitResult> {
      const ctx = served(chain);
      let blob: SafeBlob;
      try {
        blob = parseSafeBlob(JSON.parse(blobText));
      } catch (e) {
        return { status: 'rejected', txHash: '', code: 'malformed', message: `not a ${SAFE_BLOB_FORMAT} blob: ${(e as Error).message}`, retriable: false };
      }
      const txHash = blob.safe_tx_hash;
      const reject = (code: string, message: string, retriable: boolean): SubmitResult => ({ status: 'rejected', txHash, code, message, retriable });
      if (blob.chain_id !== ctx.chainId) return reject('wrong_chain', `the blob is for chain ${blob.chain_id}, not ${ctx.chain}`, false);
      const carried = safeTxOfCalldata(blob);
      if (!carried || safeTxHash({ chainId: blob.chain_id, safe: blob.safe, tx: carried }) !== txHash) {
        return reject('malformed', 'the calldata is not execTransaction of the SafeTx whose hash the blob names', false);
      }
      const rpcChain = await checkRpcChain(ctx);
      if (rpcChain !== ctx.chainId) return reject('wrong_chain', `the RPC serves chain ${rpcChain}, not ${ctx.chainId}`, false);
      const executor = ctx.executor;
      if (!executor) return reject('no_executor', `no executor is configured for ${ctx.chain}: nobody pays gas for execTransaction`, false);
      const from = 'relayerUrl' in executor ? undefined : executor.address;

      // Simulate first: the Safe itself says whether these signatures execute at this nonce.
      try {
        await ctx.client.call({ account: from, to: blob.safe, data: blob.data });
      } catch (err) {
        const reason = revertReason(err);
        if (reason === null) throw new TransportError(`${ctx.chain}: eth_call execTransaction failed`, { cause: err });
        const nonce = await readSafe(ctx, blob.safe, 'nonce');
        const want = BigInt(blob.nonce);
        if (nonce > want) {
          return reject(reason, `Safe nonce ${want} is already consumed (the Safe is at ${nonce}): this payload can never execute`, false);
        }
        if (nonce < want) return reject(reason, `Safe nonce ${want} is ahead of the Safe (at ${nonce}): earlier transactions must execute first`, true);
        return reject(reason, `execTransaction reverts with ${reason}${SAFE_REVERT_CODES[reason] ? `: ${SAFE_REVERT_CODES[reason]}` : ''}`, false);
      }

      let ethTx: Hex;
      if ('relayerUrl' in executor) {
        const relayed = await relay(fetchFn, executor, { chain: ctx.chain, chain_id: ctx.chainId, to: blob.safe, data: blob.data, safe_tx_hash: txHash });
        if (!relayed.ok) return reject('relayer_error', relayed.message, relayed.retriable);
        ethTx = relayed.txHash;
      } else {
        const wallet = createWalletClient({ account: executor, chain: ctx.viemChain, transport: ctx.transport });
        try {
          ethTx = await wallet.sendTransaction({ to: blob.safe, data: blob.data });
        } catch (err) {
          const reason = revertReason(err);
          const message = (err as { shortMessage?: string })?.shortMessage ?? (err as Error)?.message ?? String(err);
          return reject(reason ?? 'send_failed', `the executor ${executor.address} could not send execTransaction: ${message}`, reason === null);
        }
      }
      sent.set(`${ctx.chain} ${txHash}`, ethTx);
      return { status: 'submitted', txHash, code: 'sent', message: `execTransaction sent in Ethereum transaction ${ethTx}` };
    },

    async confirm({ chain, txHash, built }: ConfirmInput): Promise<ConfirmResult> {
      const ctx = served(chain);
      const payload = checkedPayload(built);
      const safeTxHash = `0x${built.digest}` as Hex;
      if (txHash.toLowerCase() !== safeTxHash) {
        throw new ValidationError('confirm', [{ path: 'txHash', message: `txHash ${txHash} is not the safeTxHash ${safeTxHash} of the payload` }]);
      }
      const ethTx = sent.get(`${ctx.chain} ${safeTxHash}`);
      if (ethTx) {
        const receipt = await rpc(ctx, 'eth_getTransactionReceipt', async () => {
          try {
            return await ctx.client.getTransactionReceipt({ hash: ethTx });
          } catch (e) {
            if ((e as Error)?.name === 'TransactionReceiptNotFoundError') return null;
            throw e;
          }
        });
        if (receipt) {
          // Final either way: forget the hash (a later confirm reads the Safe's events instead).
          sent.delete(`${ctx.chain} ${safeTxHash}`);
          const ev = safeEvent(receipt.logs, payload.safe, safeTxHash);
          if (receipt.status === 'success' && ev === 'ExecutionSuccess') {
            return { status: 'confirmed', txHash, code: 'ExecutionSuccess', ledger: Number(receipt.blockNumber), outcome: { ethTxHash: ethTx } };
          }
          if (ev === 'ExecutionFailure') {
            return { status: 'failed', txHash, code: 'ExecutionFailure', message: `the Safe consumed nonce ${payload.tx.nonce} but the call failed (Ethereum tx ${ethTx})`, dead: true };
          }
          // No event for this SafeTx in our transaction (it reverted, or carried nothing): the
          // Safe's record for the nonce says what became of it. Someone else may have carried
          // the same SafeTx first, and then it is applied, not dead.
          const rec = await recordOf(ctx, payload, built.digest, 'latest');
          if (rec.state === 'applied' || rec.state === 'failed') return settled(txHash, payload, rec);
          if (rec.state === 'unproven' || (rec.state === 'unused' && receipt.status === 'success')) return { status: 'pending', txHash };
          return {
            status: 'failed',
            txHash,
            code: receipt.status === 'success' ? 'nonce_consumed' : 'reverted',
            message: `Ethereum tx ${ethTx} ${receipt.status === 'success' ? 'did not execute this SafeTx' : 'reverted'}${rec.state === 'consumed' ? `; another SafeTx consumed nonce ${payload.tx.nonce} in block ${rec.block}` : ''}`,
            dead: rec.state === 'consumed',
          };
        }
      }
      // Not (or no longer) tracked here: the Safe's nonce and events are the record.
      await readSafe(ctx, payload.safe, 'nonce'); // NotFound when there is no Safe at the address
      const rec = await recordOf(ctx, payload, built.digest, 'latest');
      // unproven: the head's state ran ahead of its events (or something else wrote the nonce): ask again.
      if (rec.state === 'unused' || rec.state === 'unproven') return { status: 'pending', txHash };
      return settled(txHash, payload, rec);
    },

    /**
     * What became of a SafeTx, from the Safe's own record at the chain's `finality` head: its
     * nonce still unused there is `live`; consumed, the block that consumed it decides:
     * ExecutionSuccess for this safeTxHash is `applied`, ExecutionFailure `dead`
     * (`execution_failure`), neither `dead` (`nonce_consumed`). Any RPC fault, missing history,
     * or a block whose events do not account for its nonce increase throws a TransportError.
     */
    async payloadFate({ chain, built }: PayloadFateInput): Promise<PayloadFate> {
      const ctx = served(chain);
      const payload = checkedPayload(built);
      if (payload.chain !== ctx.chain || payload.chain_id !== ctx.chainId) {
        throw new ValidationError('built', [{ path: 'payload.chain', message: `payload is for ${payload.chain} (chain_id ${payload.chain_id}), not ${ctx.chain}` }]);
      }
      // Looked up by the Safe and nonce the payload names, never by an Ethereum tx hash.
      const tag = ctx.config.finality ?? 'finalized';
      const rec = await recordOf(ctx, payload, built.digest, tag);
      const n = payload.tx.nonce;
      switch (rec.state) {
        case 'applied':
          // confirm takes the safeTxHash, as assemble gives it.
          return { fate: 'applied', code: 'applied', message: `ExecutionSuccess for this SafeTx in block ${rec.block} (Ethereum tx ${rec.ethTxHash})`, txHash: `0x${built.digest}` };
        case 'failed':
          // Safe to call dead: the Safe consumed nonce n and the inner call reverted, undoing
          // everything it did. The refund fields are zero in every SafeTx this driver builds and
          // the signer signs, so nothing left the Safe, and nonce n can never execute again.
          return { fate: 'dead', code: 'execution_failure', message: `ExecutionFailure for this SafeTx in block ${rec.block}: nonce ${n} consumed, the call had no effect` };
        case 'unproven':
          // Never live nor dead on a record that proves neither: ask again once the head moved on.
          throw new TransportError(`block ${rec.block}, the ${tag} head, moved the Safe nonce to ${rec.safeNonce} but carries no execution event that accounts for it (yet): cannot attribute nonce ${n}`);
        case 'consumed':
          return { fate: 'dead', code: 'nonce_consumed', message: `another SafeTx consumed Safe nonce ${n} in block ${rec.block} (${tag} head ${rec.head})` };
        default: {
          if (tag !== 'latest') {
            const latest = await recordOf(ctx, payload, built.digest, 'latest').catch(() => null);
            if (latest && latest.state !== 'unused') {
              return { fate: 'live', code: 'unfinalized', message: `nonce ${n} was consumed in block ${latest.block}, above the ${tag} head ${rec.head}: wait for finality` };
            }
          }
          return { fate: 'live', code: 'pending', message: `Safe nonce is ${rec.safeNonce} at the ${tag} head ${rec.head}; this SafeTx uses nonce ${n}` };
        }
      }
    },

    async balances({ wallet }: BalancesInput): Promise<Balance[]> {
      const ctx = served(wallet.chain);
      const { safe } = safeControl(wallet);
      const native = await rpc(ctx, 'eth_getBalance', () => ctx.client.getBalance({ address: safe }));
      const out: Balance[] = [{ asset: 'native', symbol: ctx.config.nativeSymbol ?? 'ETH', amount: native.toString(), decimals: NATIVE_DECIMALS }];
      for (const t of ctx.config.tokens ?? []) {
        const token = checksum(t);
        const amount = await rpc(ctx, `balanceOf on ${token}`, () => ctx.client.readContract({ address: token, abi: ERC20_ABI, functionName: 'balanceOf', args: [safe] }));
        const decimals = await rpc(ctx, `decimals on ${token}`, () => ctx.client.readContract({ address: token, abi: ERC20_ABI, functionName: 'decimals' }));
        out.push({ asset: token, symbol: (await tokenSymbol(ctx, token)) ?? '', amount: amount.toString(), decimals });
      }
      return out;
    },

    async controlState({ wallet }: ControlStateInput): Promise<ControlState> {
      const ctx = served(wallet.chain);
      const { safe } = safeControl(wallet);
      const owners = await readSafe(ctx, safe, 'getOwners');
      const threshold = await readSafe(ctx, safe, 'getThreshold');
      const nonce = await readSafe(ctx, safe, 'nonce');
      const config = await readSafeConfig(ctx.client, safe, (what, fn) => rpc(ctx, what, fn));
      return {
        address: safe,
        members: owners.map((o) => ({ address: getAddress(o), weight: 1 })),
        quorum: Number(threshold),
        extra: { nonce: nonce.toString(), version: config.claimedVersion },
        // version is null when the singleton's code is no official Safe's: reconcile shows it.
        settings: {
          version: config.version,
          singleton: config.singleton,
          fallback_handler: config.fallbackHandler,
          modules: config.modules,
          guard: config.guard,
          module_guard: config.moduleGuard,
        },
        bypasses: config.modules.map((address) => ({ kind: 'module', address })),
      };
    },
  };
  return defineChainDriver(driver);
}

function refusal(op: string): string {
  switch (op) {
    case 'authorize_holder':
      return 'authorize_holder is refused: ERC-20 has no holder authorisation; a token with an allowlist is driven by contract_call';
    case 'clawback':
      return 'clawback is refused: ERC-20 has no clawback; a token that supports one is driven by contract_call';
    case 'mpt_create':
      return 'mpt_create is refused: multi-purpose tokens are an XRPL feature; deploy an EVM token by contract_call';
    case 'account_flags':
      return 'account_flags is refused: a Safe has no account flags; change its owners or threshold by contract_call to the Safe itself';
    default:
      return `operation ${op} is not supported by the EVM Safe driver`;
  }
}

/** confirm's answer for a nonce the Safe's record has settled. */
function settled(txHash: string, payload: SafePayload, rec: Extract<NonceRecord, { state: 'applied' | 'failed' | 'consumed' }>): ConfirmResult {
  if (rec.state === 'applied') {
    return { status: 'confirmed', txHash, code: 'ExecutionSuccess', ledger: Number(rec.block), outcome: { ethTxHash: rec.ethTxHash ?? '' } };
  }
  if (rec.state === 'failed') {
    return { status: 'failed', txHash, code: 'ExecutionFailure', message: `the Safe consumed nonce ${payload.tx.nonce} but the call failed (Ethereum tx ${rec.ethTxHash})`, dead: true };
  }
  return {
    status: 'failed',
    txHash,
    code: 'nonce_consumed',
    message: `Safe nonce ${payload.tx.nonce} was consumed by another transaction (block ${rec.block}; the Safe is at ${rec.safeNonce}): this payload can never execute`,
    dead: true,
  };
}

/** The Safe's check of one contribution from `owner`: an ECDSA owner signature (v 27/28) over the safeTxHash by that owner's key. */
function contributionProblem(c: Contribution, owner: SignerDesc, digest: Uint8Array): ContributionProblem | null {
  const address = owner.address.toLowerCase();
  if (c.public_key.curve !== 'secp256k1') return { reason: 'wrong_key', detail: `curve ${c.public_key.curve} is not secp256k1` };
  if (!/^[0-9a-f]{66}$/.test(c.public_key.hex)) return { reason: 'wrong_key', detail: 'public key is not 33 bytes of lowercase hex' };
  const keyAddress = publicKeyToEvmAddress(fromHex(c.public_key.hex, 'public_key', 33));
  if (!keyAddress || keyAddress.toLowerCase() !== address) return { reason: 'wrong_key', detail: `public key does not control ${owner.address}` };
  if (c.signature.encoding !== SAFE_SIGNATURE_ENCODING) return { reason: 'bad_signature', detail: `signature encoding ${c.signature.encoding} is not ${SAFE_SIGNATURE_ENCODING}` };
  if (!/^[0-9a-f]{130}$/.test(c.signature.hex)) return { reason: 'bad_signature', detail: 'signature is not 65 bytes of lowercase hex' };
  const v = Number.parseInt(c.signature.hex.slice(128), 16);
  if (v !== 27 && v !== 28) return { reason: 'bad_signature', detail: `v = ${v}: only ECDSA owner signatures (v 27/28) are accepted` };
  const r = BigInt(`0x${c.signature.hex.slice(0, 64)}`);
  const s = BigInt(`0x${c.signature.hex.slice(64, 128)}`);
  const recovered = recoverEvmAddress(digest, r, s, v - 27);
  if (!recovered || recovered.toLowerCase() !== address) return { reason: 'bad_signature', detail: 'signature does not recover to the owner over this safeTxHash' };
  return null;
}

/** The SafeTx an execTransaction calldata carries (with the blob's nonce), or null. */
function safeTxOfCalldata(blob: SafeBlob): SafeTx | null {
  try {
    const { functionName, args } = decodeFunctionData({ abi: SAFE_ABI, data: blob.data });
    if (functionName !== 'execTransaction') return null;
    const [to, value, data, operation, safeTxGas, baseGas, gasPrice, gasToken, refundReceiver] = args;
    if (operation !== 0 && operation !== 1) return null;
    return {
      to,
      value: value.toString(),
      data: data.toLowerCase() as Hex,
      operation,
      safeTxGas: safeTxGas.toString(),
      baseGas: baseGas.toString(),
      gasPrice: gasPrice.toString(),
      gasToken,
      refundReceiver,
      nonce: blob.nonce,
    };
  } catch {
    return null;
  }
}

/** Which Safe execution event, if any, the logs carry for `safeTxHash`. */
function safeEvent(logs: readonly { address: string; data: Hex; topics: readonly Hex[] }[], safe: Address, safeTxHash: Hex): 'ExecutionSuccess' | 'ExecutionFailure' | null {
  for (const log of logs) {
    if (log.address.toLowerCase() !== safe.toLowerCase()) continue;
    const ev = executionEvent(log);
    if (ev && ev.txHash === safeTxHash.toLowerCase()) return ev.kind === 'success' ? 'ExecutionSuccess' : 'ExecutionFailure';
  }
  return null;
}

/** Decodes symbol() output: an ABI string, or a bytes32 (right-padded); null when neither. */
export function decodeSymbol(data: Hex | undefined): string | null {
  if (!data || data === '0x') return null;
  const bytes = (data.length - 2) / 2;
  if (bytes === 32) {
    const text = hexToString(data).replace(/\0+$/, '');
    return text === '' || /[\0-\x1f]/.test(text) ? null : text;
  }
  if (bytes >= 64) {
    try {
      const offset = Number(BigInt(`0x${data.slice(2, 66)}`));
      const len = Number(BigInt(`0x${data.slice(2 + offset * 2, 2 + offset * 2 + 64)}`));
      if (offset + 32 + len > bytes || len > 64) return null;
      const start = 2 + (offset + 32) * 2;
      return hexToString(`0x${data.slice(start, start + len * 2)}`);
    } catch {
      return null;
    }
  }
  return null;
}

async function relay(
  fetchFn: typeof fetch,
  executor: { relayerUrl: string; headers?: Record<string, string> },
  body: Record<string, unknown>,
): Promise<{ ok: true; txHash: Hex } | { ok: false; message: string; retriable: boolean }> {
  let res: Response;
  try {
    res = await fetchFn(executor.relayerUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...executor.headers },
      body: JSON.stringify(body),
    });
  } catch (e) {
    return { ok: false, message: `relayer ${executor.relayerUrl} unreachable: ${(e as Error).message}`, retriable: true };
  }
  const text = await res.text();
  if (!res.ok) return { ok: false, message: `relayer answered HTTP ${res.status}: ${text.slice(0, 300)}`, retriable: res.status >= 500 || res.status === 429 };
  try {
    const parsed = JSON.parse(text) as { tx_hash?: unknown };
    if (typeof parsed.tx_hash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(parsed.tx_hash)) return { ok: true, txHash: parsed.tx_hash.toLowerCase() as Hex };
  } catch {
    // fall through
  }
  return { ok: false, message: `relayer reply has no tx_hash: ${text.slice(0, 300)}`, retriable: false };
}
