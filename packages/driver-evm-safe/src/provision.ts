/**
 * @module provision
 * `vault provision` for Safe wallets: deploys a Safe proxy (v1.4.1 unless `options.safe_version`
 * says v1.3.0 or v1.5.0; the L2 singleton with `options.l2`) whose owners and threshold are the
 * request's members and quorum, at a CREATE2 address fixed by (chain, wallet id, version, owners,
 * threshold), optionally funds it, and returns its WalletDescriptor. A re-run finds the Safe at
 * that address (or at `existing.control.safe`), compares it with the request and sends nothing;
 * a Safe that differs is an error naming each difference, never fixed silently.
 *
 * `options.adopt` takes a Safe a team already has: it reads owners, threshold, version (by the
 * singleton's code), modules, guard and fallback handler, sends nothing, and refuses a Safe with
 * an enabled module or a guard unless the operator names each in `allow_modules` / `allow_guard`:
 * a module moves funds without any owner's signature.
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
import { createWalletClient, getAddress, isHex, type Account, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainContexts, createEvmSafeDriver, revertReason, rpcCall, type ChainCtx, type EvmChainConfig } from './driver.js';
import { createdProxy, encodeSetup, predictSafeAddress, provisionSaltNonce, SAFE_FACTORY_ABI } from './safe-deploy.js';
import { readSafeConfig, type SafeConfig } from './safe-config.js';
import { DEFAULT_SAFE_VERSION, parseSafeVersion, safeContracts, SAFE_VERSIONS, type SafeVersion } from './versions.js';

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
const OPTION_KEYS = ['safe_version', 'l2', 'adopt', 'allow_modules', 'allow_guard'] as const;

interface Wanted {
  wallet: string;
  chain: string;
  owners: { address: Address; label: string }[];
  threshold: number;
  funding: ProvisionFunding;
  fundAmount: bigint;
  existing?: { safe: Address; version?: string; singleton?: Address; modules: Address[]; guard?: Address };
  /** The version and singleton variant to deploy. */
  version: SafeVersion;
  l2: boolean;
  /** A Safe to take as it is (no transaction is sent). */
  adopt?: Address;
  allowModules: Address[];
  allowGuard?: Address;
}

/** What the ledger says about a Safe, for comparison with the request. */
interface SafeState {
  owners: Address[];
  threshold: number;
  config: SafeConfig;
}

/** What a Safe must be besides its owners and threshold: a version (null: any official one), the modules and guard allowed. */
interface Expected {
  version: SafeVersion | null;
  singleton?: Address;
  modules: readonly Address[];
  guard?: Address;
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
 * A WalletProvisioner for Safe wallets (v1.3.0, v1.4.1, v1.5.0) on the configured EVM chains.
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
    const opts = request.options ?? {};
    if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) invalid('options', 'must be an object');
    for (const key of Object.keys(opts)) {
      if (!(OPTION_KEYS as readonly string[]).includes(key)) invalid(`options.${key}`, `unknown option; the Safe provisioner takes ${OPTION_KEYS.join(', ')}`);
    }
    const address = (at: string, v: unknown): Address => {
      const check = typeof v === 'string' ? driver.validateAddress({ chain, address: v }) : { valid: false as const, reason: 'must be a string' };
      if (!check.valid) invalid(at, check.reason);
      if (BigInt(check.normalized) <= 1n) invalid(at, 'must not be the zero address or the sentinel 0x…01');
      return check.normalized as Address;
    };
    const version = opts['safe_version'] === undefined ? DEFAULT_SAFE_VERSION : parseSafeVersion(opts['safe_version']);
    if (version === null) invalid('options.safe_version', `must be one of ${SAFE_VERSIONS.join(', ')}`);
    const l2 = opts['l2'] ?? false;
    if (typeof l2 !== 'boolean') invalid('options.l2', 'must be true or false');
    const adopt = opts['adopt'] === undefined ? undefined : address('options.adopt', opts['adopt']);
    if (adopt && (opts['safe_version'] !== undefined || opts['l2'] !== undefined)) {
      invalid('options.adopt', 'an adopted Safe keeps the version and singleton it runs: drop safe_version and l2');
    }
    const allowList = opts['allow_modules'] ?? [];
    if (!Array.isArray(allowList) || allowList.length > 64) invalid('options.allow_modules', 'must be a list of at most 64 module addresses');
    const allowModules = allowList.map((m, i) => address(`options.allow_modules.${i}`, m));
    const allowGuard = opts['allow_guard'] === undefined ? undefined : address('options.allow_guard', opts['allow_guard']);
    if (!adopt && (allowModules.length > 0 || allowGuard)) invalid(adopt === undefined && allowGuard ? 'options.allow_guard' : 'options.allow_modules', 'only an adopted Safe (options.adopt) may have modules or a guard; vault deploys Safes without them');
    const out: Wanted = { wallet, chain, owners, threshold: q, funding, fundAmount: BigInt(amount ?? '0'), version, l2, allowModules, ...(adopt ? { adopt } : {}), ...(allowGuard ? { allowGuard } : {}) };
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
      out.existing = {
        safe: safe.normalized as Address,
        modules: (e.control.modules ?? []).map((m, i) => address(`existing.control.modules.${i}`, m)),
        ...(e.control.version !== undefined ? { version: e.control.version } : {}),
        ...(e.control.singleton !== undefined ? { singleton: address('existing.control.singleton', e.control.singleton) } : {}),
        ...(e.control.guard !== undefined ? { guard: address('existing.control.guard', e.control.guard) } : {}),
      };
      if (adopt && adopt !== out.existing.safe) invalid('options.adopt', `the existing descriptor is Safe ${out.existing.safe}, not ${adopt}`);
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
    return {
      owners: control.members.map((m) => getAddress(m.address)),
      threshold: control.quorum,
      config: await readSafeConfig(ctx.client, safe, (what, fn) => rpcCall(ctx, what, fn)),
    };
  };

  /** Every way the Safe on the ledger differs from the request; empty when it matches. */
  const differences = (state: SafeState, w: Wanted, expected: Expected): string[] => {
    const out: string[] = [];
    const onChain = new Set(state.owners);
    const wanted = new Set(w.owners.map((o) => o.address));
    const extra = state.owners.filter((o) => !wanted.has(o));
    const missing = [...wanted].filter((o) => !onChain.has(o));
    if (missing.length > 0) out.push(`owners requested but not on chain: ${missing.join(', ')}`);
    if (extra.length > 0) out.push(`owners on chain but not requested: ${extra.join(', ')}`);
    if (state.threshold !== w.threshold) out.push(`threshold on chain ${state.threshold}, requested ${w.threshold}`);
    const c = state.config;
    if (c.version === null) {
      out.push(`singleton ${c.singleton} runs code that is not an official Safe ${SAFE_VERSIONS.map((v) => `v${v}`).join(', ')} (VERSION() says ${JSON.stringify(c.claimedVersion)})`);
    } else if (expected.version !== null && c.version !== expected.version) {
      out.push(`Safe version on chain ${c.version}, expected ${expected.version}`);
    }
    if (expected.singleton && c.singleton !== expected.singleton) out.push(`singleton on chain ${c.singleton}, expected ${expected.singleton}`);
    // Modules and a guard are other ways to move (or block) funds than the owners' signatures.
    const allowed = new Set(expected.modules);
    const unnamed = c.modules.filter((m) => !allowed.has(m));
    if (unnamed.length > 0) {
      out.push(`module(s) enabled on chain and not allowed: ${unnamed.join(', ')} (a module moves funds without any owner's signature; name each in options.allow_modules to accept it)`);
    }
    if (BigInt(c.guard) !== 0n && c.guard !== expected.guard) out.push(`guard on chain ${c.guard}, not allowed (name it in options.allow_guard to accept it)`);
    if (BigInt(c.moduleGuard) !== 0n) out.push(`module guard on chain ${c.moduleGuard}: not supported`);
    return out;
  };

  /**
   * The descriptor, owners in the Safe's own order (what controlState reports), labels from the
   * request, and the version, singleton, fallback handler, modules and guard it runs with, so
   * reconcile reports any later change (an upgrade, a new module) as drift.
   */
  const descriptorOf = (w: Wanted, safe: Address, state: SafeState): WalletDescriptor => {
    const labels = new Map(w.owners.map((o) => [o.address, o.label]));
    const c = state.config;
    return {
      wallet: w.wallet,
      chain: w.chain,
      control: {
        kind: 'evm_safe',
        safe,
        owners: state.owners.map((address) => ({ address, curve: 'secp256k1' as const, weight: 1, label: labels.get(address) as string })),
        threshold: state.threshold,
        ...(c.version !== null ? { version: c.version } : {}),
        singleton: c.singleton,
        fallback_handler: c.fallbackHandler,
        ...(c.modules.length > 0 ? { modules: c.modules } : {}),
        ...(BigInt(c.guard) !== 0n ? { guard: c.guard } : {}),
      },
    };
  };

  const hasCode = async (ctx: ChainCtx, address: Address, step: string): Promise<boolean> => {
    const code = await rpcCall(ctx, `eth_getCode ${address}`, () => ctx.client.getCode({ address })).catch((e: unknown) => {
      throw stepError(step, e);
    });
    return code !== undefined && code !== '0x';
  };

  const matchOrFail = async (ctx: ChainCtx, w: Wanted, safe: Address, expected: Expected): Promise<{ descriptor: WalletDescriptor; state: SafeState }> => {
    const state = await readState(ctx, safe);
    const diffs = differences(state, w, expected);
    if (diffs.length > 0) {
      throw new RefusedError(`Safe ${safe} on ${ctx.chain} differs from the request: ${diffs.join('; ')}`, {
        data: { safe, chain: ctx.chain, differences: diffs },
        details: 'provision never changes a live Safe: change its owners or threshold through a signed SafeTx, or provision another wallet id',
      });
    }
    return { descriptor: descriptorOf(w, safe, state), state };
  };

  /** What a Safe found at the target must be: as the earlier run recorded it, or as this run deploys it. */
  const expectedOf = (w: Wanted, contracts: { singleton: Address; singletonL2: Address }): Expected => {
    if (w.existing) {
      const v = w.existing.version === undefined ? DEFAULT_SAFE_VERSION : parseSafeVersion(w.existing.version);
      return {
        // A version the descriptor names that this driver does not run still has to match: null would accept any.
        version: v ?? (w.existing.version as SafeVersion),
        ...(w.existing.singleton ? { singleton: w.existing.singleton } : {}),
        modules: w.existing.modules,
        ...(w.existing.guard ? { guard: w.existing.guard } : {}),
      };
    }
    return { version: w.version, singleton: w.l2 ? contracts.singletonL2 : contracts.singleton, modules: [] };
  };

  return {
    chains: driver.chains,

    async provision(request: ProvisionRequest): Promise<ProvisionResult> {
      const w = validate(request);
      const ctx = ctxs.get(w.chain) as ChainCtx;

      const rpcId = await rpcCall(ctx, 'eth_chainId', () => ctx.client.getChainId()).catch((e: unknown) => {
        throw stepError('check', e);
      });
      if (rpcId !== ctx.chainId) throw new TransportError(`provision step check: the RPC at ${ctx.config.rpcUrl} serves chain ${rpcId}, not ${ctx.chainId}`, { data: { step: 'check' } });

      // adopt: a Safe the team already has, taken as the chain shows it; nothing is sent.
      if (w.adopt) {
        if (!(await hasCode(ctx, w.adopt, 'check'))) throw new RefusedError(`provision step check: no contract at options.adopt ${w.adopt} on ${ctx.chain}`, { data: { step: 'check' } });
        const { descriptor } = await matchOrFail(ctx, w, w.adopt, {
          version: w.existing ? expectedOf(w, { singleton: w.adopt, singletonL2: w.adopt }).version : null,
          ...(w.existing?.singleton ? { singleton: w.existing.singleton } : {}),
          modules: w.allowModules,
          ...(w.allowGuard ? { guard: w.allowGuard } : {}),
        });
        return { descriptor, changed: false, transactions: [] };
      }

      // check: the RPC serves this chain and the chosen version is deployed at its official addresses.
      let contracts;
      try {
        contracts = safeContracts(w.version, ctx.chainId);
      } catch (e) {
        throw new RefusedError(`provision step check: ${(e as Error).message}`, { data: { step: 'check' } });
      }
      for (const [what, address] of [
        ['SafeProxyFactory', contracts.proxyFactory],
        [w.l2 ? 'SafeL2 singleton' : 'Safe singleton', w.l2 ? contracts.singletonL2 : contracts.singleton],
        ['CompatibilityFallbackHandler', contracts.fallbackHandler],
      ] as const) {
        if (!(await hasCode(ctx, address, 'check'))) {
          throw new RefusedError(`provision step check: Safe v${w.version} ${what} is not deployed on ${ctx.chain} at its official address ${address}`, { data: { step: 'check' } });
        }
      }
      const singleton = w.l2 ? contracts.singletonL2 : contracts.singleton;
      const initializer = encodeSetup(
        w.owners.map((o) => o.address),
        w.threshold,
        contracts.fallbackHandler,
      );
      const saltNonce = provisionSaltNonce(w.chain, w.wallet);
      const proxyCreationCode = await rpcCall(ctx, 'SafeProxyFactory.proxyCreationCode()', () =>
        ctx.client.readContract({ address: contracts.proxyFactory, abi: SAFE_FACTORY_ABI, functionName: 'proxyCreationCode' }),
      ).catch((e: unknown) => {
        throw stepError('check', e);
      });
      const predicted = predictSafeAddress({ proxyCreationCode, initializer, saltNonce, singleton, factory: contracts.proxyFactory });

      // A Safe already there (this wallet's earlier run, or the one `existing` names): compare, send nothing.
      const target = w.existing?.safe ?? predicted;
      if (await hasCode(ctx, target, 'check')) {
        const { descriptor } = await matchOrFail(ctx, w, target, expectedOf(w, contracts));
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
      const receipt = await send('deploy', `deploy Safe${w.l2 ? 'L2' : ''} v${w.version} proxy ${predicted}: owners ${ownerList}, threshold ${w.threshold} (SafeProxyFactory.createProxyWithNonce, saltNonce ${saltNonce})`, () =>
        sender.writeContract({
          address: contracts.proxyFactory,
          abi: SAFE_FACTORY_ABI,
          functionName: 'createProxyWithNonce',
          args: [singleton, initializer, saltNonce],
        }),
      );
      const proxy = createdProxy(receipt.logs, contracts.proxyFactory);
      if (proxy !== predicted) {
        throw new RefusedError(`provision step deploy: the factory created ${String(proxy)}, not the predicted ${predicted}`, { data: { step: 'deploy', txHash: receipt.transactionHash } });
      }
      if (w.fundAmount > 0n) {
        await send('fund', `fund Safe ${predicted} with ${w.fundAmount} wei`, () => sender.sendTransaction({ to: predicted, value: w.fundAmount }));
      }
      // verify: read the new Safe back; it must be exactly what was asked.
      const { descriptor } = await matchOrFail(ctx, w, predicted, expectedOf(w, contracts)).catch((e: unknown) => {
        if (e instanceof RefusedError) throw new RefusedError(`provision step verify: ${e.shortMessage}`, { cause: e, data: { step: 'verify', ...e.data } });
        throw stepError('verify', e);
      });
      return { descriptor, changed: true, transactions };
    },
  };
}
