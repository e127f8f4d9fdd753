/**
 * @module @vault/driver-evm-safe/devnet
 * A local EVM chain for tests and examples: anvil (from the npm registry, pinned) started as a
 * child process on 127.0.0.1, the Safe v1.4.1 contracts deployed from
 * @safe-global/safe-contracts at their official addresses through the deterministic deployment
 * factory of @safe-global/safe-singleton-factory (and v1.3.0 and v1.5.0 from their own npm
 * artifacts, at the addresses @safe-global/safe-deployments names), a Safe with 3 owners and
 * threshold 2, and a test ERC-20 owned by that Safe. Accounts are funded with anvil's own methods. Stopped by PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  getContractAddress,
  http,
  toHex,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type TestClient,
  type WalletClient,
  type Account,
  type Transport,
} from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { balanceSlotOf, tokenDeployData, TEST_TOKEN_ABI, type TestTokenOptions } from './token.js';
import { createdProxy, encodeSetup, SAFE_FACTORY_ABI, SAFE_V141_ADDRESSES } from '../safe-deploy.js';
import { DEFAULT_SAFE_VERSION, safeContracts, SAFE_VERSIONS, type SafeContracts, type SafeVersion } from '../versions.js';

export { SAFE_V141_ADDRESSES, encodeSetup } from '../safe-deploy.js';

export { TEST_TOKEN_ABI, tokenDeployData, tokenRuntime, balanceSlotOf, assembleEvm, type AsmItem, type TestTokenOptions } from './token.js';

const require = createRequire(import.meta.url);

/** anvil's well-known development mnemonic (its default): test funds only. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

export type SafeContractName = keyof typeof SAFE_V141_ADDRESSES;

const ARTIFACTS: Record<SafeContractName, string> = {
  safe: 'Safe.sol/Safe.json',
  safeL2: 'SafeL2.sol/SafeL2.json',
  safeProxyFactory: 'proxies/SafeProxyFactory.sol/SafeProxyFactory.json',
  compatibilityFallbackHandler: 'handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json',
  multiSend: 'libraries/MultiSend.sol/MultiSend.json',
  multiSendCallOnly: 'libraries/MultiSendCallOnly.sol/MultiSendCallOnly.json',
  signMessageLib: 'libraries/SignMessageLib.sol/SignMessageLib.json',
  createCall: 'libraries/CreateCall.sol/CreateCall.json',
  simulateTxAccessor: 'accessors/SimulateTxAccessor.sol/SimulateTxAccessor.json',
};

/** Creation bytecode of a Safe v1.4.1 contract from @safe-global/safe-contracts. */
export function safeArtifactBytecode(name: SafeContractName): Hex {
  return artifactBytecode('@safe-global/safe-contracts', ARTIFACTS[name]);
}

function artifactBytecode(pkg: string, path: string): Hex {
  const root = dirname(require.resolve(`${pkg}/package.json`));
  const artifact = JSON.parse(readFileSync(join(root, 'build/artifacts/contracts', path), 'utf8')) as { bytecode: Hex };
  return artifact.bytecode;
}

type CoreContract = 'singleton' | 'singletonL2' | 'proxyFactory' | 'fallbackHandler';

/** Where each version's contracts come from: the artifacts Safe published on npm for that version. */
const VERSION_ARTIFACTS: Record<SafeVersion, { pkg: string; paths: Record<CoreContract, string> }> = {
  '1.3.0': {
    pkg: '@gnosis.pm/safe-contracts',
    paths: {
      singleton: 'GnosisSafe.sol/GnosisSafe.json',
      singletonL2: 'GnosisSafeL2.sol/GnosisSafeL2.json',
      proxyFactory: 'proxies/GnosisSafeProxyFactory.sol/GnosisSafeProxyFactory.json',
      fallbackHandler: 'handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json',
    },
  },
  '1.4.1': { pkg: '@safe-global/safe-contracts', paths: { singleton: ARTIFACTS.safe, singletonL2: ARTIFACTS.safeL2, proxyFactory: ARTIFACTS.safeProxyFactory, fallbackHandler: ARTIFACTS.compatibilityFallbackHandler } },
  '1.5.0': {
    pkg: '@safe-global/safe-smart-account',
    paths: {
      singleton: 'Safe.sol/Safe.json',
      singletonL2: 'SafeL2.sol/SafeL2.json',
      proxyFactory: 'proxies/SafeProxyFactory.sol/SafeProxyFactory.json',
      fallbackHandler: 'handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json',
    },
  },
};

/** Creation bytecode of one of a Safe version's core contracts, from that version's npm artifacts. */
export function safeVersionBytecode(version: SafeVersion, contract: CoreContract): Hex {
  const v = VERSION_ARTIFACTS[version];
  return artifactBytecode(v.pkg, v.paths[contract]);
}

/**
 * The deterministic deployment proxy anvil pre-deploys (Arachnid's CREATE2 factory): Safe v1.3.0's
 * canonical addresses came from it; v1.4.1 and v1.5.0 came from Safe's singleton factory.
 */
export const DETERMINISTIC_DEPLOYMENT_PROXY: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';

/**
 * The anvil binary: `options.anvilPath`, else `VAULT_ANVIL_PATH`, else the pinned
 * @foundry-rs/anvil-linux-amd64 package's binary (Linux x64), else `anvil` on PATH.
 */
export function resolveAnvilPath(explicit?: string): string {
  if (explicit) return explicit;
  const fromEnv = process.env['VAULT_ANVIL_PATH'];
  if (fromEnv) return fromEnv;
  if (process.platform === 'linux' && process.arch === 'x64') {
    try {
      const bin = join(dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');
      if (existsSync(bin)) return bin;
    } catch {
      // optional dependency not installed: fall through to PATH
    }
  }
  return 'anvil';
}

export interface DevnetAccount {
  address: Address;
  /** Test key from anvil's public development mnemonic or freshly generated. Never use for real funds. */
  privateKey: Hex;
}

export interface StartEvmDevnetOptions {
  /** TCP port on 127.0.0.1; 0 (default) lets the OS pick a free one. */
  port?: number;
  /** Default 31337 (the chain the singleton factory's pre-signed deployment targets). */
  chainId?: number;
  anvilPath?: string;
  /** Owners of the default Safe: count (fresh keys) or explicit private keys. Default 3. */
  owners?: number | readonly Hex[];
  /** Threshold of the default Safe. Default 2. */
  threshold?: number;
  /** Native balance of the default Safe, wei. Default 10 ETH. */
  safeBalance?: bigint;
  /** Token balance the devnet gives the default Safe (via anvil_setStorageAt), minor units. Default 1_000_000_000. */
  tokenBalance?: bigint;
  /** Milliseconds to wait for anvil to listen. Default 20000. */
  startTimeoutMs?: number;
  /** Polling interval of the devnet's own viem clients. Default 50 ms. */
  pollingInterval?: number;
  /**
   * Safe versions deployed at their official addresses besides v1.4.1 (always deployed: the
   * default Safe runs it). Default: every supported version (1.3.0, 1.4.1, 1.5.0).
   */
  safeVersions?: readonly SafeVersion[];
}

export interface DevnetSafe {
  address: Address;
  owners: DevnetAccount[];
  threshold: number;
}

export interface CreateSafeOptions {
  owners: readonly Address[];
  threshold: number;
  /** Native balance to set on the new Safe, wei. Default 0. */
  balance?: bigint;
  /** CREATE2 salt nonce. Default: a counter. */
  saltNonce?: bigint;
  /** Safe version (deployed by the devnet, see `safeVersions`). Default 1.4.1. */
  version?: SafeVersion;
  /** The L2 singleton (emits SafeMultiSigTransaction) instead of the plain one. Default false. */
  l2?: boolean;
}

export interface EvmDevnet {
  rpcUrl: string;
  chainId: number;
  /** `eip155:<chainId>`. */
  chain: string;
  /** anvil's PID. */
  pid: number;
  accounts: {
    /** Deploys the Safe contracts and the token. */
    deployer: DevnetAccount;
    /** Pays gas for execTransaction (holds no Safe authority). */
    executor: DevnetAccount;
    /** Further funded accounts (anvil's dev accounts 2..9). */
    funded: DevnetAccount[];
  };
  safeAddresses: typeof SAFE_V141_ADDRESSES;
  /** The official contracts of every Safe version the devnet deployed. */
  safeVersions: Partial<Record<SafeVersion, SafeContracts>>;
  /** The default Safe and its owner keys. */
  safe: DevnetSafe;
  /** The test ERC-20, owned by the default Safe. */
  token: { address: Address; symbol: string; decimals: number; owner: Address };
  /** Deploys a Safe proxy (v1.4.1 unless `version`; plain unless `l2`; the version's compatibility fallback handler). */
  createSafe(options: CreateSafeOptions): Promise<Address>;
  /** Deploys another test token owned by `owner`. */
  deployToken(owner: Address, options?: TestTokenOptions): Promise<Address>;
  /** anvil_setBalance. */
  setBalance(address: Address, wei: bigint): Promise<void>;
  /** Sets a test-token balance directly in storage (and does not touch totalSupply). */
  setTokenBalance(token: Address, holder: Address, amount: bigint): Promise<void>;
  publicClient: PublicClient<Transport, Chain>;
  /** Stops anvil (SIGTERM, then SIGKILL after 3 s). Idempotent. */
  stop(): Promise<void>;
}

/** Spawns anvil and resolves with its URL once it listens. Kills it on failure. */
async function spawnAnvil(bin: string, port: number, chainId: number, timeoutMs: number): Promise<{ child: ChildProcess; rpcUrl: string }> {
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), '--accounts', '10'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`anvil did not listen within ${timeoutMs} ms: ${out.slice(-500)}`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Listening on (127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        // Keep draining so a full pipe never blocks anvil.
        child.stdout?.resume();
        resolve({ child, rpcUrl: `http://${m[1]}` });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.once('error', (err) => fail(new Error(`cannot start anvil (${bin}): ${err.message}`)));
    child.once('exit', (code) => fail(new Error(`anvil exited with ${code} before listening: ${out.slice(-500)}`)));
  });
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // A crashed test run must not leave anvil behind.
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
}

/** Stops a child by PID: SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    }, graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
  });
}

const toAccount = (a: PrivateKeyAccount, privateKey: Hex): DevnetAccount => ({ address: a.address, privateKey });

function hdAccount(index: number): DevnetAccount {
  const a = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index });
  const key = a.getHdKey().privateKey;
  if (!key) throw new Error('no private key');
  return { address: a.address, privateKey: toHex(key) };
}

/**
 * Starts anvil and deploys Safe v1.4.1, a 2-of-3 Safe and a test ERC-20 owned by it.
 *
 * @example
 * const devnet = await startEvmDevnet()
 * console.log(devnet.rpcUrl, devnet.safe.address, devnet.token.address)
 * await devnet.stop()
 */
export async function startEvmDevnet(options: StartEvmDevnetOptions = {}): Promise<EvmDevnet> {
  const chainId = options.chainId ?? 31337;
  const { child, rpcUrl } = await spawnAnvil(resolveAnvilPath(options.anvilPath), options.port ?? 0, chainId, options.startTimeoutMs ?? 20_000);
  track(child);
  const stop = () => stopProcess(child);
  try {
    return await deploy(child, rpcUrl, chainId, options, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}

async function deploy(child: ChildProcess, rpcUrl: string, chainId: number, options: StartEvmDevnetOptions, stop: () => Promise<void>): Promise<EvmDevnet> {
  const chain = defineChain({
    id: chainId,
    name: `anvil-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const pollingInterval = options.pollingInterval ?? 50;
  const transport = http(rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval }) as PublicClient<Transport, Chain>;
  const testClient: TestClient = createTestClient({ chain, transport, mode: 'anvil', pollingInterval });
  const deployer = hdAccount(0);
  const executor = hdAccount(1);
  const funded = Array.from({ length: 8 }, (_, i) => hdAccount(i + 2));
  const wallet: WalletClient<Transport, Chain, Account> = createWalletClient({
    chain,
    transport,
    account: privateKeyToAccount(deployer.privateKey),
    pollingInterval,
  });

  const mined = async (hash: Hex) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval });
    if (receipt.status !== 'success') throw new Error(`devnet transaction ${hash} reverted`);
    return receipt;
  };

  // 1. The deterministic deployment factory: fund its one-time signer, broadcast its pre-signed tx.
  const factoryModule = require('@safe-global/safe-singleton-factory') as {
    getSingletonFactoryInfo(id: number): { gasPrice: number; gasLimit: number; signerAddress: string; transaction: Hex; address: Address } | undefined;
  };
  const info = factoryModule.getSingletonFactoryInfo(chainId);
  if (!info) throw new Error(`@safe-global/safe-singleton-factory has no deployment for chain ${chainId}`);
  if ((await publicClient.getCode({ address: info.address })) === undefined) {
    await testClient.setBalance({ address: getAddress(info.signerAddress), value: BigInt(info.gasPrice) * BigInt(info.gasLimit) });
    await mined(await publicClient.request({ method: 'eth_sendRawTransaction', params: [info.transaction] }));
  }

  // 2. Safe v1.4.1 through the factory (salt 0), which reproduces the official addresses.
  for (const name of Object.keys(SAFE_V141_ADDRESSES) as SafeContractName[]) {
    const expected = SAFE_V141_ADDRESSES[name];
    if ((await publicClient.getCode({ address: expected })) !== undefined) continue;
    const data = `0x${'00'.repeat(32)}${safeArtifactBytecode(name).slice(2)}` as Hex;
    await mined(await wallet.sendTransaction({ to: info.address, data, gas: 8_000_000n }));
    if ((await publicClient.getCode({ address: expected })) === undefined) {
      throw new Error(`${name} did not land at its official address ${expected}`);
    }
  }

  // 2b. Other versions' core contracts at the addresses Safe's registry names, each through the
  // CREATE2 factory that reproduces them (checked: a wrong artifact would land elsewhere).
  const versions: Partial<Record<SafeVersion, SafeContracts>> = {};
  for (const version of new Set<SafeVersion>([DEFAULT_SAFE_VERSION, ...(options.safeVersions ?? SAFE_VERSIONS)])) {
    const contracts = safeContracts(version, chainId);
    for (const contract of ['singleton', 'singletonL2', 'proxyFactory', 'fallbackHandler'] as const) {
      const expected = contracts[contract];
      if ((await publicClient.getCode({ address: expected })) !== undefined) continue;
      const bytecode = safeVersionBytecode(version, contract);
      const salt0 = `0x${'00'.repeat(32)}` as Hex;
      const factory = [info.address, DETERMINISTIC_DEPLOYMENT_PROXY].find((f) => getContractAddress({ opcode: 'CREATE2', from: f, salt: salt0, bytecode }) === expected);
      if (!factory) throw new Error(`Safe v${version} ${contract}: the npm artifact does not deploy to the official address ${expected}`);
      await mined(await wallet.sendTransaction({ to: factory, data: `${salt0}${bytecode.slice(2)}` as Hex, gas: 8_000_000n }));
      if ((await publicClient.getCode({ address: expected })) === undefined) throw new Error(`Safe v${version} ${contract} did not land at ${expected}`);
    }
    versions[version] = contracts;
  }

  let salt = 0n;
  const createSafe = async (o: CreateSafeOptions): Promise<Address> => {
    const version = o.version ?? DEFAULT_SAFE_VERSION;
    const contracts = versions[version];
    if (!contracts) throw new Error(`Safe v${version} is not deployed on this devnet (safeVersions)`);
    const initializer = encodeSetup(o.owners, o.threshold, contracts.fallbackHandler);
    const saltNonce = o.saltNonce ?? BigInt(Date.now()) * 1000n + salt++;
    const hash = await wallet.writeContract({
      address: contracts.proxyFactory,
      abi: SAFE_FACTORY_ABI,
      functionName: 'createProxyWithNonce',
      args: [o.l2 ? contracts.singletonL2 : contracts.singleton, initializer, saltNonce],
    });
    const receipt = await mined(hash);
    const proxy = createdProxy(receipt.logs, contracts.proxyFactory);
    if (!proxy) throw new Error('ProxyCreation event missing');
    if (o.balance) await testClient.setBalance({ address: proxy, value: o.balance });
    return proxy;
  };

  const deployToken = async (owner: Address, tokenOptions: TestTokenOptions = {}): Promise<Address> => {
    const receipt = await mined(await wallet.sendTransaction({ data: tokenDeployData(owner, tokenOptions), gas: 1_000_000n }));
    if (!receipt.contractAddress) throw new Error('token deployment created no contract');
    return getAddress(receipt.contractAddress);
  };

  const setTokenBalance = async (token: Address, holder: Address, amount: bigint) => {
    await testClient.setStorageAt({ address: token, index: balanceSlotOf(holder), value: toHex(amount, { size: 32 }) });
  };

  // 3. The default Safe: fresh owner keys (or the caller's), threshold 2 of 3.
  const ownerKeys: Hex[] =
    typeof options.owners === 'object' ? [...options.owners] : Array.from({ length: options.owners ?? 3 }, () => generatePrivateKey());
  const owners = ownerKeys.map((k) => toAccount(privateKeyToAccount(k), k));
  const threshold = options.threshold ?? 2;
  const safeAddress = await createSafe({
    owners: owners.map((o) => o.address),
    threshold,
    balance: options.safeBalance ?? 10n ** 19n,
    saltNonce: 0n,
  });

  // 4. The test token, owned by the Safe, with a balance for the Safe set in storage.
  const tokenAddress = await deployToken(safeAddress);
  const tokenBalance = options.tokenBalance ?? 1_000_000_000n;
  await setTokenBalance(tokenAddress, safeAddress, tokenBalance);
  await testClient.setStorageAt({ address: tokenAddress, index: toHex(1n, { size: 32 }), value: toHex(tokenBalance, { size: 32 }) });
  const tokenOwner = await publicClient.readContract({ address: tokenAddress, abi: TEST_TOKEN_ABI, functionName: 'owner' });

  if (child.pid === undefined) throw new Error('anvil has no pid');
  return {
    rpcUrl,
    chainId,
    chain: `eip155:${chainId}`,
    pid: child.pid,
    accounts: { deployer, executor, funded },
    safeAddresses: SAFE_V141_ADDRESSES,
    safeVersions: versions,
    safe: { address: safeAddress, owners, threshold },
    token: { address: tokenAddress, symbol: 'VTT', decimals: 6, owner: getAddress(tokenOwner) },
    createSafe,
    deployToken,
    setBalance: async (address, wei) => testClient.setBalance({ address, value: wei }),
    setTokenBalance,
    publicClient,
    stop,
  };
}
