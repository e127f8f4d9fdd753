/**
 * @module safe-deploy
 * How a Safe v1.4.1 proxy is deployed: the official contract addresses, the `setup` initializer,
 * `SafeProxyFactory.createProxyWithNonce`, the CREATE2 address it will land at, and the
 * deterministic salt nonce the provisioner derives from (chain, wallet id). Shared by the
 * provisioner and the local devnet, so both deploy Safes the same way.
 */
import { canonicalize, sha256Hex, utf8Bytes } from '@vault/sdk';
import { safeV141Addresses } from './versions.js';
import {
  concat,
  decodeEventLog,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getAddress,
  getContractAddress,
  keccak256,
  parseAbi,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';

const V141_NAMES = [
  'safe',
  'safeL2',
  'safeProxyFactory',
  'compatibilityFallbackHandler',
  'multiSend',
  'multiSendCallOnly',
  'signMessageLib',
  'createCall',
  'simulateTxAccessor',
] as const;

/**
 * Official Safe v1.4.1 addresses (the same on every chain deployed through the singleton factory),
 * read from `@safe-global/safe-deployments` when first used, so loading the driver does not parse
 * the registry.
 */
export const SAFE_V141_ADDRESSES: Readonly<Record<(typeof V141_NAMES)[number], Address>> = (() => {
  let values: Record<string, Address> | undefined;
  const out = {} as Record<(typeof V141_NAMES)[number], Address>;
  for (const name of V141_NAMES) {
    Object.defineProperty(out, name, {
      enumerable: true,
      get: () => (values ??= safeV141Addresses())[name] as Address,
    });
  }
  return Object.freeze(out);
})();

export const SAFE_FACTORY_ABI = parseAbi([
  'function createProxyWithNonce(address _singleton, bytes initializer, uint256 saltNonce) returns (address proxy)',
  'function proxyCreationCode() pure returns (bytes)',
  'event ProxyCreation(address indexed proxy, address singleton)',
]);

/** GnosisSafeProxyFactory v1.3.0 emits ProxyCreation with the proxy unindexed (it became indexed in v1.4.0). */
const PROXY_CREATION_V130_ABI = parseAbi(['event ProxyCreation(address proxy, address singleton)']);

const SETUP_ABI = parseAbi([
  'function setup(address[] _owners, uint256 _threshold, address to, bytes data, address fallbackHandler, address paymentToken, uint256 payment, address paymentReceiver)',
]);

/**
 * Safe.setup calldata: owners, threshold, a compatibility fallback handler (v1.4.1's unless
 * given: each version has its own), no modules, no payment. The same in v1.3.0, v1.4.1, v1.5.0.
 */
export function encodeSetup(owners: readonly Address[], threshold: number, fallbackHandler: Address = SAFE_V141_ADDRESSES.compatibilityFallbackHandler): Hex {
  return encodeFunctionData({
    abi: SETUP_ABI,
    functionName: 'setup',
    args: [owners, BigInt(threshold), zeroAddress, '0x', fallbackHandler, zeroAddress, 0n, zeroAddress],
  });
}

/** Domain tag of the provisioner's salt nonce; changing it moves every provisioned address. */
export const PROVISION_SALT_DOMAIN = 'vault/evm-safe/provision/v1';

/**
 * The saltNonce `vault provision` deploys a wallet's Safe with: the uint256 whose big-endian bytes
 * are sha256 of the JCS JSON `{"chain":…,"domain":"vault/evm-safe/provision/v1","wallet":…}`.
 * The same (chain, wallet id) always gives the same nonce, so with the same owners and threshold
 * the CREATE2 address is the same on every run.
 *
 * @example
 * provisionSaltNonce('eip155:31337', 'treasury') // 0x… as a bigint
 */
export function provisionSaltNonce(chain: string, wallet: string): bigint {
  return BigInt(`0x${sha256Hex(utf8Bytes(canonicalize({ chain, domain: PROVISION_SALT_DOMAIN, wallet })))}`);
}

/**
 * Where `createProxyWithNonce(singleton, initializer, saltNonce)` deploys the proxy (CREATE2 by the
 * factory, salt `keccak256(keccak256(initializer) ‖ saltNonce)`, init code
 * `proxyCreationCode ‖ uint256(singleton)`), as SafeProxyFactory v1.3.0, v1.4.1 and v1.5.0 compute it.
 */
export function predictSafeAddress(input: { proxyCreationCode: Hex; initializer: Hex; saltNonce: bigint; singleton?: Address; factory?: Address }): Address {
  const salt = keccak256(encodePacked(['bytes32', 'uint256'], [keccak256(input.initializer), input.saltNonce]));
  const bytecode = concat([input.proxyCreationCode, encodeAbiParameters([{ type: 'uint256' }], [BigInt(input.singleton ?? SAFE_V141_ADDRESSES.safe)])]);
  return getContractAddress({ opcode: 'CREATE2', from: input.factory ?? SAFE_V141_ADDRESSES.safeProxyFactory, salt, bytecode });
}

/** The proxy a createProxyWithNonce receipt's ProxyCreation event names, or null. */
export function createdProxy(logs: readonly { address: string; data: Hex; topics: readonly Hex[] }[], factory: Address = SAFE_V141_ADDRESSES.safeProxyFactory): Address | null {
  for (const log of logs) {
    if (log.address.toLowerCase() !== factory.toLowerCase()) continue;
    for (const abi of [SAFE_FACTORY_ABI, PROXY_CREATION_V130_ABI]) {
      try {
        const ev = decodeEventLog({ abi, data: log.data, topics: log.topics as [Hex, ...Hex[]] });
        if (ev.eventName === 'ProxyCreation') return getAddress(ev.args.proxy);
      } catch {
        // another event of the factory, or the other version's form
      }
    }
  }
  return null;
}
