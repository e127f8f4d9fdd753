/**
 * @module safe-config
 * What a Safe is configured with beyond its owners and threshold, read from the chain at one
 * block: its singleton (and so its version, by code hash), fallback handler, modules, guard and
 * (v1.5.0) module guard. Modules are the custody-relevant part: an enabled module moves funds
 * with no owner's signature, so reconcile reports every change and recovery counts each one as a
 * way around the quorum.
 */
import { TransportError } from '@vault/sdk';
import { getAddress, keccak256, parseAbi, toBytes, zeroAddress, type Address, type Hex, type PublicClient } from 'viem';
import { identifySingleton, type SafeVersion } from './versions.js';

/** Storage slots Safe keeps these in (keccak256 of the names Safe's contracts use). */
export const FALLBACK_HANDLER_SLOT = keccak256(toBytes('fallback_manager.handler.address'));
export const GUARD_SLOT = keccak256(toBytes('guard_manager.guard.address'));
/** v1.5.0: a guard on module transactions. Empty storage in earlier versions. */
export const MODULE_GUARD_SLOT = keccak256(toBytes('module_manager.module_guard.address'));

const SENTINEL: Address = '0x0000000000000000000000000000000000000001';
const PAGE = 50n;
/** More modules than this is not a Safe anyone adopts into custody; refuse rather than page forever. */
export const MAX_MODULES = 500;

const ABI = parseAbi([
  'function getModulesPaginated(address start, uint256 pageSize) view returns (address[] array, address next)',
  'function VERSION() view returns (string)',
]);

export interface SafeConfig {
  /** The version identified from the singleton's code; null when the code is not an official Safe. */
  version: SafeVersion | null;
  /** What `VERSION()` answers (informative only: a modified singleton can claim anything). */
  claimedVersion: string;
  l2: boolean | null;
  singleton: Address;
  fallbackHandler: Address;
  guard: Address;
  moduleGuard: Address;
  /** Enabled modules, in the Safe's order. */
  modules: Address[];
  /** The block every value was read at. */
  block: bigint;
}

type Rpc = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

const word = (w: Hex | undefined): Address => getAddress(`0x${(w ?? '0x').slice(2).padStart(64, '0').slice(24)}`);

/**
 * Reads a Safe's configuration at the latest block.
 *
 * @example
 * const config = await readSafeConfig(client, safe, rpc)
 * if (config.modules.length > 0) // funds can move without the owners
 */
export async function readSafeConfig(client: PublicClient, safe: Address, rpc: Rpc): Promise<SafeConfig> {
  const block = await rpc('eth_blockNumber', () => client.getBlockNumber({ cacheTime: 0 }));
  const slot = (what: string, s: Hex) => rpc(`eth_getStorageAt(${what})`, () => client.getStorageAt({ address: safe, slot: s, blockNumber: block }));
  const singleton = word(await slot('singleton', '0x0'));
  const code = await rpc(`eth_getCode ${singleton}`, () => client.getCode({ address: singleton, blockNumber: block }));
  const known = code && code !== '0x' ? identifySingleton(singleton, keccak256(code)) : null;
  const claimedVersion = await rpc('Safe.VERSION()', () => client.readContract({ address: safe, abi: ABI, functionName: 'VERSION', blockNumber: block })).catch(() => '');
  const modules: Address[] = [];
  let start: Address = SENTINEL;
  for (;;) {
    const [page, next] = await rpc('Safe.getModulesPaginated()', () =>
      client.readContract({ address: safe, abi: ABI, functionName: 'getModulesPaginated', args: [start, PAGE], blockNumber: block }),
    );
    modules.push(...page.map((m) => getAddress(m)));
    if (modules.length > MAX_MODULES) throw new TransportError(`Safe ${safe} has more than ${MAX_MODULES} modules enabled`);
    if (BigInt(page.length) < PAGE || next === SENTINEL || next === zeroAddress) break;
    start = getAddress(next);
  }
  return {
    version: known?.version ?? null,
    claimedVersion: String(claimedVersion),
    l2: known?.l2 ?? null,
    singleton,
    fallbackHandler: word(await slot('fallback handler', FALLBACK_HANDLER_SLOT)),
    guard: word(await slot('guard', GUARD_SLOT)),
    moduleGuard: word(await slot('module guard', MODULE_GUARD_SLOT)),
    modules,
    block,
  };
}
