/**
 * @module chains
 * Chain names (`eip155:<chain id>`, CAIP-2) and EVM address checks shared by the driver and the
 * signer.
 */
import { DriverRegistryError } from '@vault/sdk';
import { getAddress, isAddress, type Address } from 'viem';

export const EVM_FAMILY = 'evm';

const CHAIN_RE = /^eip155:([1-9][0-9]{0,15})$/;

/** The numeric chain id of an `eip155:<id>` chain name, or null when the name is not one. */
export function chainIdOf(chain: string): number | null {
  const m = CHAIN_RE.exec(chain);
  if (!m) return null;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? id : null;
}

/** Checks a list of chain names at construction: each must be `eip155:<id>`, none twice. */
export function checkChains(name: string, chains: readonly string[]): readonly string[] {
  if (chains.length === 0) throw new DriverRegistryError('invalid_driver', `${name}: configure at least one chain`);
  for (const c of chains) {
    if (chainIdOf(c) === null) throw new DriverRegistryError('invalid_driver', `${name}: chain ${JSON.stringify(c)} is not "eip155:<chain id>"`);
  }
  return Object.freeze([...chains]);
}

/** Why `address` is not a usable EVM address, or null when it is. */
export function evmAddressProblem(address: string): string | null {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return 'an EVM address is 0x followed by 40 hex digits';
  if (!isAddress(address, { strict: true })) return 'mixed-case address with a wrong EIP-55 checksum (mistyped?)';
  return null;
}

/** The EIP-55 checksummed form of a valid address. */
export function checksum(address: string): Address {
  return getAddress(address);
}

/** `0x1234…abcd` for summaries. */
export function shortAddress(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}
