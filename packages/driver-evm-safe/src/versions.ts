/**
 * @module versions
 * The Safe versions this driver executes, provisions and adopts (v1.3.0, v1.4.1, v1.5.0, each
 * plain and L2), with their official contract addresses and runtime code hashes read from
 * `@safe-global/safe-deployments`, Safe's own registry, never from constants of ours.
 *
 * A Safe proxy is identified by the code at its singleton (storage slot 0), not by `VERSION()`:
 * a singleton whose runtime code hash is not one of the official ones is not a Safe this driver
 * can vouch for, whatever it says its version is.
 */
import { createRequire } from 'node:module';
import { getAddress, type Address, type Hex } from 'viem';

type Getter = (filter: { version: string; released?: boolean }) => Deployments | undefined;
type Registry = Record<
  | 'getSafeSingletonDeployments'
  | 'getSafeL2SingletonDeployments'
  | 'getProxyFactoryDeployments'
  | 'getCompatibilityFallbackHandlerDeployments'
  | 'getMultiSendDeployments'
  | 'getMultiSendCallOnlyDeployments'
  | 'getSignMessageLibDeployments'
  | 'getCreateCallDeployments'
  | 'getSimulateTxAccessorDeployments',
  Getter
>;

let loaded: Registry | undefined;
/**
 * The registry, loaded on first use: it parses every chain's addresses (60-160 ms here), which a
 * control plane or signer that never deploys, adopts or reconciles a Safe should not pay at start.
 */
function safeDeployments(): Registry {
  loaded ??= createRequire(import.meta.url)('@safe-global/safe-deployments') as Registry;
  return loaded;
}

export const SAFE_VERSIONS = ['1.3.0', '1.4.1', '1.5.0'] as const;
export type SafeVersion = (typeof SAFE_VERSIONS)[number];
/** What `vault provision` deploys unless told otherwise. */
export const DEFAULT_SAFE_VERSION: SafeVersion = '1.4.1';

/** The contracts a Safe of one version is deployed and run with, on one chain. */
export interface SafeContracts {
  version: SafeVersion;
  /** Which of Safe's deployment sets serves the chain (`canonical` where the chain is unknown). */
  deployment: 'canonical' | 'eip155';
  singleton: Address;
  singletonL2: Address;
  proxyFactory: Address;
  fallbackHandler: Address;
}

/** One official singleton: its version, whether it is the L2 variant, its address and code hash. */
export interface KnownSingleton {
  version: SafeVersion;
  l2: boolean;
  address: Address;
  /** keccak256 of the runtime code, lowercase 0x-hex. */
  codeHash: Hex;
}

type Deployments = {
  deployments: Partial<Record<'canonical' | 'eip155' | 'zksync', { address: string; codeHash: string }>>;
  networkAddresses: Record<string, string | string[]>;
};
function registry(getter: keyof Registry, version: SafeVersion, what: string): Deployments {
  const d = safeDeployments()[getter]({ version, released: true });
  if (!d?.deployments.canonical) throw new Error(`@safe-global/safe-deployments has no ${what} for Safe v${version}`);
  return d;
}

/** The deployment set a chain uses: the registry's choice for a known chain, `canonical` otherwise (a devnet). */
function deploymentFor(d: Deployments, chainId: number): 'canonical' | 'eip155' {
  const listed = d.networkAddresses[String(chainId)];
  const types = listed === undefined ? [] : Array.isArray(listed) ? listed : [listed];
  if (types.length === 0 || types.includes('canonical')) return 'canonical';
  if (types.includes('eip155') && d.deployments.eip155) return 'eip155';
  throw new Error(`Safe is deployed on chain ${chainId} only as ${types.join(', ')}, which this driver does not run`);
}

function addressIn(d: Deployments, type: 'canonical' | 'eip155'): Address {
  const entry = d.deployments[type];
  if (!entry) throw new Error(`no ${type} deployment`);
  return getAddress(entry.address);
}

/**
 * The official contracts of Safe `version` on chain `chainId`.
 *
 * @example
 * safeContracts('1.3.0', 1).singleton // 0xd9Db270c1B5E3Bd161E8c8503c55cEABeE709552
 */
export function safeContracts(version: SafeVersion, chainId: number): SafeContracts {
  if (!SAFE_VERSIONS.includes(version)) throw new Error(`Safe v${String(version)} is not one of ${SAFE_VERSIONS.join(', ')}`);
  const singleton = registry('getSafeSingletonDeployments', version, 'singleton');
  const deployment = deploymentFor(singleton, chainId);
  return {
    version,
    deployment,
    singleton: addressIn(singleton, deployment),
    singletonL2: addressIn(registry('getSafeL2SingletonDeployments', version, 'L2 singleton'), deployment),
    proxyFactory: addressIn(registry('getProxyFactoryDeployments', version, 'proxy factory'), deployment),
    fallbackHandler: addressIn(registry('getCompatibilityFallbackHandlerDeployments', version, 'compatibility fallback handler'), deployment),
  };
}

let known: KnownSingleton[] | undefined;

/** Every official singleton of every supported version (canonical and eip155 sets, plain and L2). */
export function knownSingletons(): readonly KnownSingleton[] {
  if (known) return known;
  const out: KnownSingleton[] = [];
  for (const version of SAFE_VERSIONS) {
    for (const [l2, getter] of [
      [false, 'getSafeSingletonDeployments'],
      [true, 'getSafeL2SingletonDeployments'],
    ] as const) {
      const d = registry(getter, version, l2 ? 'L2 singleton' : 'singleton');
      for (const type of ['canonical', 'eip155'] as const) {
        const e = d.deployments[type];
        if (e) out.push({ version, l2, address: getAddress(e.address), codeHash: e.codeHash.toLowerCase() as Hex });
      }
    }
  }
  known = out;
  return out;
}

/**
 * Which official singleton a Safe proxy runs: matched by the runtime code hash at its singleton
 * address (slot 0). Null for anything else: an unknown version, a modified copy, no code.
 *
 * @example
 * identifySingleton('0x29fc…C762', keccak256(code)) // { version: '1.4.1', l2: true, … }
 */
export function identifySingleton(address: string, codeHash: string): KnownSingleton | null {
  const hash = codeHash.toLowerCase();
  const addr = address.toLowerCase();
  // Both must match an official deployment: the same code elsewhere is harmless, but an address
  // we cannot find in Safe's registry is worth a second look by a person, not silent acceptance.
  return knownSingletons().find((k) => k.codeHash === hash && k.address.toLowerCase() === addr) ?? null;
}

/** The version `vault provision` was asked for, or a ValidationError-ready reason. */
export function parseSafeVersion(value: unknown): SafeVersion | null {
  return typeof value === 'string' && (SAFE_VERSIONS as readonly string[]).includes(value) ? (value as SafeVersion) : null;
}

/**
 * Every canonical Safe v1.4.1 contract the devnet deploys (and `SAFE_V141_ADDRESSES` lists), from
 * the registry: the singletons, factory and handler, and the libraries beside them.
 */
export function safeV141Addresses() {
  const at = (getter: keyof Registry, what: string) => addressIn(registry(getter, '1.4.1', what), 'canonical');
  return {
    safe: at('getSafeSingletonDeployments', 'singleton'),
    safeL2: at('getSafeL2SingletonDeployments', 'L2 singleton'),
    safeProxyFactory: at('getProxyFactoryDeployments', 'proxy factory'),
    compatibilityFallbackHandler: at('getCompatibilityFallbackHandlerDeployments', 'compatibility fallback handler'),
    multiSend: at('getMultiSendDeployments', 'MultiSend'),
    multiSendCallOnly: at('getMultiSendCallOnlyDeployments', 'MultiSendCallOnly'),
    signMessageLib: at('getSignMessageLibDeployments', 'SignMessageLib'),
    createCall: at('getCreateCallDeployments', 'CreateCall'),
    simulateTxAccessor: at('getSimulateTxAccessorDeployments', 'SimulateTxAccessor'),
  };
}
