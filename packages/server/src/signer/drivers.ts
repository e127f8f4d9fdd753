/**
 * @module signer/drivers
 * Loads chain plugins named in configuration by dynamic import; core code never imports a driver
 * by name. A driver module exports `createDriver(options)` (the keyless ChainDriver, used to
 * rebuild payloads, run guards and ask the ledger about earlier payloads) and
 * `createSigner(options)` (the ChainSigner that derives addresses and signs).
 */
import { assertChainDriver, assertChainSigner, DriverRegistry, DriverRegistryError, type ChainDriver, type ChainSigner } from '@vault/sdk';
import { importPlugin } from '../plugins.js';
import type { DriverModuleConfig } from './trust.js';

export { resolveModule } from '../plugins.js';

export interface LoadedDrivers {
  drivers: DriverRegistry<ChainDriver>;
  signers: DriverRegistry<ChainSigner>;
}

/**
 * Imports every configured driver module and registers its driver and signer.
 *
 * @example
 * const { drivers, signers } = await loadDriverModules([{ module: "@vault/driver-xrpl", options: { chains: [{ chain: "xrpl:testnet", url }] } }], process.cwd())
 */
export async function loadDriverModules(configs: readonly DriverModuleConfig[], baseDir: string): Promise<LoadedDrivers> {
  const drivers = new DriverRegistry<ChainDriver>();
  const signers = new DriverRegistry<ChainSigner>();
  for (const cfg of configs) {
    const api = await importPlugin(cfg.module, baseDir);
    if (typeof api.createDriver !== 'function' || typeof api.createSigner !== 'function') {
      throw new DriverRegistryError('invalid_driver', `driver module ${cfg.module} must export createDriver(options) and createSigner(options)`);
    }
    const options = cfg.options ?? {};
    // Checked here as defineChainDriver would: a driver without payloadFate (the double-spend
    // rule) is refused at start-up, never discovered at a second payload.
    const driver = await api.createDriver(options);
    assertChainDriver(driver);
    const signer = await api.createSigner(options);
    assertChainSigner(signer);
    drivers.register(driver);
    signers.register(signer);
  }
  return { drivers, signers };
}
