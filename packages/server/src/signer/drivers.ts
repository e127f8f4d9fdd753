/**
 * @module signer/drivers
 * Loads chain plugins named in configuration by dynamic import; core code never imports a driver
 * by name. A driver module exports `createDriver(options)` (the keyless ChainDriver, used to
 * rebuild payloads, run guards and ask the ledger about earlier payloads) and
 * `createSigner(options)` (the ChainSigner that derives addresses and signs).
 */
import { DriverRegistry, DriverRegistryError, type ChainDriver, type ChainSigner } from '@vault/sdk';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DriverModuleConfig } from './trust.js';

export interface LoadedDrivers {
  drivers: DriverRegistry<ChainDriver>;
  signers: DriverRegistry<ChainSigner>;
}

interface DriverModule {
  createDriver?: (options: Record<string, unknown>) => ChainDriver | Promise<ChainDriver>;
  createSigner?: (options: Record<string, unknown>) => ChainSigner | Promise<ChainSigner>;
}

/** A module specifier as import() takes it: paths relative to the config file, packages from there too. */
export function resolveModule(spec: string, baseDir: string): string {
  if (spec.startsWith('.') || isAbsolute(spec)) return pathToFileURL(resolve(baseDir, spec)).href;
  if (spec.startsWith('file:')) return spec;
  try {
    return pathToFileURL(createRequire(join(baseDir, 'noop.js')).resolve(spec)).href;
  } catch {
    return spec;
  }
}

/**
 * Imports every configured driver module and registers its driver and signer.
 *
 * @example
 * const { drivers, signers } = await loadDriverModules([{ module: '@vault/driver-xrpl', options: { url } }], process.cwd())
 */
export async function loadDriverModules(configs: readonly DriverModuleConfig[], baseDir: string): Promise<LoadedDrivers> {
  const drivers = new DriverRegistry<ChainDriver>();
  const signers = new DriverRegistry<ChainSigner>();
  for (const cfg of configs) {
    const mod = (await import(resolveModule(cfg.module, baseDir))) as DriverModule & { default?: DriverModule };
    const api: DriverModule = typeof mod.createDriver === 'function' ? mod : (mod.default ?? {});
    if (typeof api.createDriver !== 'function' || typeof api.createSigner !== 'function') {
      throw new DriverRegistryError('invalid_driver', `driver module ${cfg.module} must export createDriver(options) and createSigner(options)`);
    }
    const options = cfg.options ?? {};
    drivers.register(await api.createDriver(options));
    signers.register(await api.createSigner(options));
  }
  return { drivers, signers };
}
