/**
 * @module driver/registry
 * Maps chain names to plugins. Matches exactly and rejects by default: a driver serves only the
 * chains it lists, a chain has one driver, and an unknown chain is an error, never a fallback.
 */
import { DriverRegistryError } from '../errors.js';
import type { ChainDriver, ChainSigner } from './types.js';

interface Registrable {
  readonly name: string;
  readonly family: string;
  readonly chains: readonly string[];
}

/**
 * A registry of plugins keyed by exact chain name.
 *
 * @example
 * const drivers = new DriverRegistry<ChainDriver>()
 * drivers.register(xrplDriver)
 * drivers.get('xrpl:testnet') // the driver; drivers.get('xrpl:mainnet') throws unknown_chain
 */
export class DriverRegistry<P extends Registrable> {
  readonly #byChain = new Map<string, P>();

  constructor(plugins: Iterable<P> = []) {
    for (const p of plugins) this.register(p);
  }

  /** Adds a plugin for every chain it lists. Refuses the whole plugin if any chain is taken. */
  register(plugin: P): this {
    for (const chain of plugin.chains) {
      const existing = this.#byChain.get(chain);
      if (existing) {
        throw new DriverRegistryError(
          'duplicate_chain',
          `chain ${chain} is already served by ${existing.name}; refusing ${plugin.name}`,
        );
      }
    }
    for (const chain of plugin.chains) this.#byChain.set(chain, plugin);
    return this;
  }

  /** The plugin serving exactly `chain`. */
  get(chain: string): P {
    const p = this.#byChain.get(chain);
    if (!p) {
      const known = [...this.#byChain.keys()].sort().join(', ') || 'none';
      throw new DriverRegistryError('unknown_chain', `no driver registered for chain ${JSON.stringify(chain)} (registered: ${known})`);
    }
    return p;
  }

  has(chain: string): boolean {
    return this.#byChain.has(chain);
  }

  /** Registered chain names, sorted. */
  chains(): string[] {
    return [...this.#byChain.keys()].sort();
  }

  /** Distinct plugins in registration order. */
  plugins(): P[] {
    return [...new Set(this.#byChain.values())];
  }
}

export type ChainDriverRegistry = DriverRegistry<ChainDriver>;
export type ChainSignerRegistry = DriverRegistry<ChainSigner>;
