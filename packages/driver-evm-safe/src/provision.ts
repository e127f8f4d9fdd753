/**
 * @module provision
 * `vault provision` for Safe wallets: deploys a Safe v1.4.1 proxy whose owners and threshold are
 * the request's members and quorum, at a CREATE2 address fixed by (chain, wallet id, owners,
 * threshold), optionally funds it, and returns its WalletDescriptor. A re-run finds the Safe at
 * that address (or at `existing.control.safe`), compares it with the request and sends nothing;
 * a Safe that differs is an error naming each difference, never fixed silently.
 */
import {
  endpointUrlProblem,
  RefusedError,
  TransportError,
  ValidationError,
  VaultError,
  WalletDescriptorSchema,
  type ProvisionFunding,
  type ProvisionRequest,
  type ProvisionResult,
  type WalletDescriptor,
  type WalletProvisioner,
} from '@vault/sdk';
import { createWalletClient, getAddress, isHex, parseAbi, type Account, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainContexts, createEvmSafeDriver, revertReason, rpcCall, type ChainCtx, type EvmChainConfig } from './driver.js';
import { createdProxy, encodeSetup, predictSafeAddress, provisionSaltNonce, SAFE_FACTORY_ABI, SAFE_V141_ADDRESSES } from './safe-deploy.js';

export interface EvmSafeProvisionerOptions {
  /** One entry per served chain, keyed `eip155:<chain id>` (as the driver's; executors are ignored). */
  chains: Record<string, EvmChainConfig>;
  /** fetch for JSON-RPC (tests, proxies). Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Where `key_env` funding keys are read from. Default process.env. */
  env?: Record<string, string | undefined>;
  /** Name used in messages. Default `@vault/driver-evm-safe`. */
  name?: string;
}

/** Gas money a throwaway faucet deployer gets on top of fundAmount (devnet ETH, set by anvil_setBalance). */
export const FAUCET_GAS_BUDGET_WEI = 10n ** 18n;

const ENV_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEY_RE = /^(0x)?[0-9a-fA-F]{64}$/;
const UINT_RE = /^(0|[1-9][0-9]{0,77})$/;
const SENTINEL = '0x0000000000000000000000000000000000000001';
const GUARD_SLOT = '0x4a204f620c8c5ccdca3fd54d003badd85ba500436a431f0cbda4f558c93c34c8';
const MODULES_ABI = parseAbi(['function getModulesPaginated(address start, uint256 pageSize) view returns (address[] array, address next)']);

interface Wanted {
  wallet: string;
  chain: string;
  owners: { address: Address; label: string }[];
  threshold: number;
  funding: ProvisionFunding;
  fundAmount: bigint;
  existing?: { safe: Address };
}

/** What the ledger says about a Safe, for comparison with the request. */
interface SafeState {
  owners: Address[];
  threshold: number;
  version: string;
  singleton: Address;
  modules: Address[];
  guard: Address;
}

function invalid(path: string, message: string): never {
  throw new ValidationError('provision', [{ path, message }]);
}

/** Whether `fn` accepts `err` or anything in its cause chain. */
function walk(err: unknown, fn: (e: unknown) => boolean): boolean {
  for (let e = err, i = 0; e && i < 16; e = (e as { cause?: unknown }).cause, i++) if (fn(e)) return true;
  return false;
}

/** A failed set-up step: a TransportError for a fault, a RefusedError for the ledger's own refusal. */
function stepError(step: string, err: unknown): VaultError {
  const reason = revertReason(err);
  const first = (err as { shortMessage?: string })?.shortMessage ?? (err as Error)?.message?.split('\n')[0] ?? String(err);
  if (reason !== null) return new RefusedError(`provision step ${step}: reverted (${reason})`, { cause: err, data: { step, reason } });
  if (walk(err, (e) => (e as Error)?.name === 'InsufficientFundsError' || /insufficient funds/i.test(String((e as Error)?.message)))) return new RefusedError(`provision step ${step}: the deployer cannot pay: ${first}`, { cause: err, data: { step } });
  return new TransportError(`provision step ${step}: ${first}`, { cause: err, data: { step } });
}

/**
 * A WalletProvisioner for Safe v1.4.1 wallets on the configured EVM chains.
 *
 * @example
 * const provisioner = createEvmSafeProvisioner({ chains: { 'eip155:31337': { rpcUrl: devnet.rpcUrl, pollingInterval: 50 } } })
 * const { descriptor } = await provisioner.provision({
 *   wallet: 'treasury', chain: 'eip155:31337', quorum: 2,
 *   members: owners.map((address) => ({ address, weight: 1, curve: 'secp256k1' })),
 *   funding: { kind: 'faucet', url: devnet.rpcUrl },
 * })
 */
export function createEvmSafeProvisioner(options: EvmSafeProvisionerOptions): WalletProvisioner {
  const name = options.name ?? '@vault/driver-evm-safe';
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  // The driver validates the chain configs and reads Safes; the provisioner shares its transport.
  const driver = createEvmSafeDriver({ chains: options.chains, fetch: fetchFn, name });
  const ctxs = chainContexts(name, driver.chains, options.chains, fetchFn);
  const env = options.env ?? process.env;

  const validate = (request: ProvisionRequest): Wanted => {
    if (typeof request !== 'object' || request === null) invalid('', 'must be an object');
    const { wallet, chain } = request;
    if (typeof wallet !== 'string' || wallet === '' || wallet.length > 128) invalid('wallet', 'must be a wallet id of 1 to 128 characters');
    if (typeof chain !== 'string' || !ctxs.has(chain)) invalid('chain', `${name} provisions on ${driver.chains.join(', ')}, not ${JSON.stringify(chain)}`);
    if (!Array.isArray(request.members) || request.members.length === 0) invalid('members', 'must be a non-empty list of owners');
    if (request.members.length > 64) invalid('members', 'a Safe descriptor holds at most 64 owners');
    const seen = new Set<string>();
    const owners = request.members.map((m, i) => {
      const at = `members.${i}`;
      if (typeof m !== 'object' || m === null) invalid(at, 'must be an object');
      const check = typeof m.address === 'string' ? driver.validateAddress({ chain, address: m.address }) : { valid: false as const, reason: 'must be a string' };
      if (!check.valid) invalid(`${at}.address`, check.reason);
      const address = check.normalized as Address;
      if (BigInt(address) <= 1n) invalid(`${at}.address`, 'the zero address and the owner-list sentinel 0x…01 cannot own a Safe');
      if (seen.has(address)) invalid(`${at}.address`, `owner ${address} is listed twice`);
      seen.add(address);
      if (m.curve !== 'secp256k1') invalid(`${at}.curve`, `Safe owners are secp256k1 EVM addresses, not ${String(m.curve)}`);
      if (m.weight !== 1) invalid(`${at}.weight`, `each Safe owner counts 1 (a Safe has no weights), not ${String(m.weight)}`);
      if (m.label !== undefined && (typeof m.label !== 'string' || m.label.length > 128)) invalid(`${at}.label`, 'must be a string of at most 128 characters');
      return { address, label: m.label ?? `member-${i + 1}` };
    });
    const q = request.quorum;
    if (typeof q !== 'number' || !Number.isInteger(q) || q < 1 || q > owners.length) invalid('quorum', `the threshold must be an integer from 1 to ${owners.length} (the number of owners)`);
    const funding = request.funding as ProvisionFunding | undefined;
    if (typeof funding !== 'object' || funding === null) invalid('funding', 'must be {kind: "faucet", url} or {kind: "key_env", env}');
    if (funding.kind === 'faucet') {
      const problem = endpointUrlProblem(funding.url);
      if (problem?.startsWith('must not carry credentials')) invalid('funding.url', problem);
      if (problem !== null) invalid('funding.url', 'must be the http(s) URL of an RPC that honours anvil_setBalance');
    } else if (funding.kind === 'key_env') {
      if (typeof funding.env !== 'string' || !ENV_RE.test(funding.env)) invalid('funding.env', 'must be the NAME of an environment variable (letters, digits, _), not a key');
    } else {
      invalid('funding.kind', `must be "faucet" or "key_env", not ${JSON.stringify((funding as { kind?: unknown }).kind)}`);
    }
    const amount = request.fundAmount;
    if (amount !== undefined && (typeof amount !== 'string' || !UINT_RE.test(amount) || BigInt(amount) >= 1n << 256n)) {
      invalid('fundAmount', 'must be a decimal integer string of wei');
    }
    const out: Wanted = { wallet, chain, owners, threshold: q, funding, fundAmount: BigInt(amount ?? '0') };
    if (request.existing !== undefined) {
      const parsed = WalletDescriptorSchema.safeParse(request.existing);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        invalid(['existing', ...(issue?.path ?? []).map(String)].join('.'), issue?.message ?? 'not a WalletDescriptor');
      }
      const e = parsed.data;
      if (e.wallet !== wallet) invalid('existing.wallet', `the existing descriptor is wallet ${JSON.stringify(e.wallet)}, the request ${JSON.stringify(wallet)}`);
      if (e.chain !== chain) invalid('existing.chain', `the existing descriptor is on ${e.chain}, the request on ${chain}`);
      if (e.control.kind !== 'evm_safe') invalid('existing.control.kind', `the EVM Safe provisioner takes evm_safe descriptors, not ${e.control.kind}`);
      const safe = driver.validateAddress({ chain, address: e.control.safe });
      if (!safe.valid) invalid('existing.control.safe', safe.reason);
      out.existing = { safe: safe.normalized as Address };
    }
    return out;
  };

  /** The funded account that deploys: a throwaway key funded by the faucet, or the operator's key. */
  const deployerOf = async (ctx: ChainCtx, w: Wanted): Promise<Account> => {
    if (w.funding.kind === 'key_env') {
      const raw = env[w.funding.env];
      // Never echo the value: it is a private key.
      if (raw === undefined || raw === '') invalid('funding.env', `environment variable ${w.funding.env} is not set`);
      const key = raw.trim();
      if (!KEY_RE.test(key)) invalid('funding.env', `environment variable ${w.funding.env} does not hold a secp256k1 private key (0x + 64 hex digits)`);
      try {
        return privateKeyToAccount((key.startsWith('0x') ? key : `0x${key}`) as Hex);
      } catch {
        return invalid('funding.env', `environment variable ${w.funding.env} does not hold a valid secp256k1 private key`);
      }
    }
    // A key made for this call only: it pays for the deployment and is then forgotten.
    const account = privateKeyToAccount(generatePrivateKey());
    const url = w.funding.url;
    const faucet = async <T>(method: string, params: unknown[]): Promise<T> => {
      let body: { result?: T; error?: { message?: string } };
      try {
        const res = await fetchFn(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
        body = (await res.json()) as typeof body;
      } catch (cause) {
        throw new TransportError(`provision step fund_deployer: the faucet RPC ${url} did not answer ${method}`, { cause, data: { step: 'fund_deployer' } });
      }
      if (body.error) throw new TransportError(`provision step fund_deployer: the faucet RPC ${url} refused ${method}: ${body.error.message ?? 'error'}`, { data: { step: 'fund_deployer' } });
      return body.result as T;
    };
    const id = await faucet<string>('eth_chainId', []);
    if (typeof id !== 'string' || !isHex(id) || Number(BigInt(id)) !== ctx.chainId) {
      invalid('funding.url', `the faucet RPC serves chain ${String(id)}, not ${ctx.chain} (chain id ${ctx.chainId})`);
    }
    await faucet('anvil_setBalance', [account.address, `0x${(w.fundAmount + FAUCET_GAS_BUDGET_WEI).toString(16)}`]);
    return account;
  };

  const readState = async (ctx: ChainCtx, safe: Address): Promise<SafeState> => {
    const wallet: WalletDescriptor = { wallet: 'provision', chain: ctx.chain, control: { kind: 'evm_safe', safe, owners: [], threshold: 1 } };
    const control = await driver.controlState({ wallet });
    const singletonWord = await rpcCall(ctx, 'eth_getStorageAt(0)', () => ctx.client.getStorageAt({ address: safe, slot: '0x0' }));
    const guardWord = await rpcCall(ctx, 'eth_getStorageAt(guard)', () => ctx.client.getStorageAt({ address: safe, slot: GUARD_SLOT }));
    const [modules] = await rpcCall(ctx, 'Safe.getModulesPaginated()', () =>
      ctx.client.readContract({ address: safe, abi: MODULES_ABI, functionName: 'getModulesPaginated', args: [SENTINEL, 10n] }),
    );
    const word = (w: Hex | undefined) => getAddress(`0x${(w ?? '0x').slice(2).padStart(64, '0').slice(24)}`);
    return {
      owners: control.members.map((m) => getAddress(m.address)),
      threshold: control.quorum,
      version: String(control.extra?.['version'] ?? ''),
      singleton: word(singletonWord),
      modules: modules.map((m) => getAddress(m)),
      guard: word(guardWord),
    };
  };

  /** Every way the Safe on the ledger differs from the request; empty when it matches. */
  const differences = (state: SafeState, w: Wanted): string[] => {
    const out: string[] = [];
    const onChain = new Set(state.owners);
    const wanted = new Set(w.owners.map((o) => o.address));
    const extra = state.owners.filter((o) => !wanted.has(o));
    const missing = [...wanted].filter((o) => !onChain.has(o));
    if (missing.length > 0) out.push(`owners requested but not on chain: ${missing.join(', ')}`);
    if (extra.length > 0) out.push(`owners on chain but not requested: ${extra.join(', ')}`);
    if (state.threshold !== w.threshold) out.push(`threshold on chain ${state.threshold}, requested ${w.threshold}`);
    if (state.version !== '1.4.1') out.push(`Safe version on chain ${state.version}, expected 1.4.1`);
    if (state.singleton !== SAFE_V141_ADDRESSES.safe && state.singleton !== SAFE_V141_ADDRESSES.safeL2) {
      out.push(`singleton on chain ${state.singleton}, expected Safe v1.4.1 ${SAFE_V141_ADDRESSES.safe} or SafeL2 ${SAFE_V141_ADDRESSES.safeL2}`);
    }
    // Modules and a guard are other ways to move (or block) funds than the owners' signatures.
    if (state.modules.length > 0) out.push(`modules enabled on chain: ${state.modules.join(', ')} (requested none)`);
    if (BigInt(state.guard) !== 0n) out.push(`guard on chain ${state.guard}, requested none`);
    return out;
  };

  /** The descriptor, owners in the Safe's own order (what controlState reports), labels from the request. */
  const descriptorOf = (w: Wanted, safe: Address, state: SafeState): WalletDescriptor => {
    const labels = new Map(w.owners.map((o) => [o.address, o.label]));
    return {
      wallet: w.wallet,
      chain: w.chain,
      control: {
        kind: 'evm_safe',
        safe,
        owners: state.owners.map((address) => ({ address, curve: 'secp256k1' as const, weight: 1, label: labels.get(address) as string })),
        threshold: state.threshold,
      },
    };
  };

  const hasCode = async (ctx: ChainCtx, address: Address, step: string): Promise<boolean> => {
    const code = await rpcCall(ctx, `eth_getCode ${address}`, () => ctx.client.getCode({ address })).catch((e: unknown) => {
      throw stepError(step, e);
    });
    return code !== undefined && code !== '0x';
  };

  const matchOrFail = async (ctx: ChainCtx, w: Wanted, safe: Address): Promise<{ descriptor: WalletDescriptor; state: SafeState }> => {
    const state = await readState(ctx, safe);
    const diffs = differences(state, w);
    if (diffs.length > 0) {
      throw new RefusedError(`Safe ${safe} on ${ctx.chain} differs from the request: ${diffs.join('; ')}`, {
        data: { safe, chain: ctx.chain, differences: diffs },
        details: 'provision never changes a live Safe: change its owners or threshold through a signed SafeTx, or provision another wallet id',
      });
    }
    return { descriptor: descriptorOf(w, safe, state), state };
  };

  return {
    chains: driver.chains,

    async provision(request: ProvisionRequest): Promise<ProvisionResult> {
      const w = validate(request);
      const ctx = ctxs.get(w.chain) as ChainCtx;

      // check: the RPC serves this chain and Safe v1.4.1 is deployed at its official addresses.
      const rpcId = await rpcCall(ctx, 'eth_chainId', () => ctx.client.getChainId()).catch((e: unknown) => {
        throw stepError('check', e);
      });
      if (rpcId !== ctx.chainId) throw new TransportError(`provision step check: the RPC at ${ctx.config.rpcUrl} serves chain ${rpcId}, not ${ctx.chainId}`, { data: { step: 'check' } });
      for (const [what, address] of [
        ['SafeProxyFactory', SAFE_V141_ADDRESSES.safeProxyFactory],
        ['Safe singleton', SAFE_V141_ADDRESSES.safe],
        ['CompatibilityFallbackHandler', SAFE_V141_ADDRESSES.compatibilityFallbackHandler],
      ] as const) {
        if (!(await hasCode(ctx, address, 'check'))) {
          throw new RefusedError(`provision step check: Safe v1.4.1 ${what} is not deployed on ${ctx.chain} at its official address ${address}`, { data: { step: 'check' } });
        }
      }
      const initializer = encodeSetup(
        w.owners.map((o) => o.address),
        w.threshold,
      );
      const saltNonce = provisionSaltNonce(w.chain, w.wallet);
      const proxyCreationCode = await rpcCall(ctx, 'SafeProxyFactory.proxyCreationCode()', () =>
        ctx.client.readContract({ address: SAFE_V141_ADDRESSES.safeProxyFactory, abi: SAFE_FACTORY_ABI, functionName: 'proxyCreationCode' }),
      ).catch((e: unknown) => {
        throw stepError('check', e);
      });
      const predicted = predictSafeAddress({ proxyCreationCode, initializer, saltNonce });

      // A Safe already there (this wallet's earlier run, or the one `existing` names): compare, send nothing.
      const target = w.existing?.safe ?? predicted;
      if (await hasCode(ctx, target, 'check')) {
        const { descriptor } = await matchOrFail(ctx, w, target);
        return { descriptor, changed: false, transactions: [] };
      }
      if (w.existing && w.existing.safe !== predicted) {
        throw new RefusedError(
          `no Safe at existing.control.safe ${w.existing.safe} on ${ctx.chain}; these owners and threshold for wallet ${w.wallet} deploy to ${predicted}, so the existing descriptor was not made by this request`,
          { data: { safe: w.existing.safe, predicted, chain: ctx.chain } },
        );
      }

      // deploy (and fund): a new Safe at the predicted address.
      const deployer = await deployerOf(ctx, w);
      const sender = createWalletClient({ account: deployer, chain: ctx.viemChain, transport: ctx.transport });
      const transactions: { txHash: string; what: string }[] = [];
      const send = async (step: string, what: string, tx: () => Promise<Hex>) => {
        let hash: Hex;
        try {
          hash = await tx();
        } catch (e) {
          throw stepError(step, e);
        }
        let receipt;
        try {
          receipt = await ctx.client.waitForTransactionReceipt({ hash, timeout: 300_000 });
        } catch (e) {
          throw stepError(step, e);
        }
        if (receipt.status !== 'success') throw new RefusedError(`provision step ${step}: reverted in transaction ${hash}`, { data: { step, txHash: hash } });
        transactions.push({ txHash: hash, what });
        return receipt;
      };
      const ownerList = w.owners.map((o) => o.address).join(', ');
      const receipt = await send('deploy', `deploy Safe v1.4.1 proxy ${predicted}: owners ${ownerList}, threshold ${w.threshold} (SafeProxyFactory.createProxyWithNonce, saltNonce ${saltNonce})`, () =>
        sender.writeContract({
          address: SAFE_V141_ADDRESSES.safeProxyFactory,
          abi: SAFE_FACTORY_ABI,
          functionName: 'createProxyWithNonce',
          args: [SAFE_V141_ADDRESSES.safe, initializer, saltNonce],
        }),
      );
      const proxy = createdProxy(receipt.logs);
      if (proxy !== predicted) {
        throw new RefusedError(`provision step deploy: the factory created ${String(proxy)}, not the predicted ${predicted}`, { data: { step: 'deploy', txHash: receipt.transactionHash } });
      }
      if (w.fundAmount > 0n) {
        await send('fund', `fund Safe ${predicted} with ${w.fundAmount} wei`, () => sender.sendTransaction({ to: predicted, value: w.fundAmount }));
      }
      // verify: read the new Safe back; it must be exactly what was asked.
      const { descriptor } = await matchOrFail(ctx, w, predicted).catch((e: unknown) => {
        if (e instanceof RefusedError) throw new RefusedError(`provision step verify: ${e.shortMessage}`, { cause: e, data: { step: 'verify', ...e.data } });
        throw stepError('verify', e);
      });
      return { descriptor, changed: true, transactions };
    },
  };
}
