/**
 * @module safe-deploy
 * How a Safe v1.4.1 proxy is deployed: the official contract addresses, the `setup` initializer,
 * `SafeProxyFactory.createProxyWithNonce`, the CREATE2 address it will land at, and the
 * deterministic salt nonce the provisioner derives from (chain, wallet id). Shared by the
 * provisioner and the local devnet, so both deploy Safes the same way.
 */
import { canonicalize, sha256Hex, utf8Bytes } from '@vault/sdk';
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

/** Official Safe v1.4.1 addresses (the same on every chain deployed through the singleton factory). */
export const SAFE_V141_ADDRESSES = {
  safe: '0x41675C099F32341bf84BFc5382aF534df5C7461a',
  safeL2: '0x29fcB43b46531BcA003ddC8FCB67FFE91900C762',
  safeProxyFactory: '0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820ec67',
  compatibilityFallbackHandler: '0xfd0732Dc9E303f09fCEf3a7388Ad10A83459Ec99',
  multiSend: '0x38869bf66a61cF6bDB996A6aE40D5853Fd43B526',
  multiSendCallOnly: '0x9641d764fc13c8B624c04430C7356C1C7C8102e2',
  signMessageLib: '0xd53cd0aB83D845Ac265BE939c57F53AD838012c9',
  createCall: '0x9b35Af71d77eaf8d7e40252370304687390A1A52',
  simulateTxAccessor: '0x3d4BA2E0884aa488718476ca2FB8Efc291A46199',
} as const satisfies Record<string, Address>;

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
