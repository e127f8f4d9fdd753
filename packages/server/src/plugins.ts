/**
 * @module plugins
 * Driver plugins named in configuration (`{ "module": "@vault/driver-xrpl", "options": {…} }`),
 * imported one way for every tool: the control plane, the signer and `vault provision`. Core code
 * never imports a driver by name.
 *
 * Resolution: a path (`./x.mjs`, `/abs/x.mjs`) is relative to the configuration file's directory;
 * a package name is resolved from that directory first (an operator's own node_modules), then
 * from this package.
 */
import type { ChainDriver, ChainSigner, WalletProvisioner } from '@vault/sdk';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a plugin module may export (the SDK's DriverPlugin, loosely typed: it comes from outside). */
export interface PluginModule {
  createDriver?: (options: Record<string, unknown>, context?: Record<string, unknown>) => ChainDriver | Promise<ChainDriver>;
  createSigner?: (options: Record<string, unknown>) => ChainSigner | Promise<ChainSigner>;
  createProvisioner?: (options: Record<string, unknown>) => WalletProvisioner | Promise<WalletProvisioner>;
}

/** A module specifier as import() takes it. */
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
 * Imports a plugin module; a module whose factories sit on `default` is accepted too. Throws the
 * import error as is (callers wrap it with the configuration path they read it from).
 */
export async function importPlugin(spec: string, baseDir: string): Promise<PluginModule> {
  const mod = (await import(resolveModule(spec, baseDir))) as PluginModule & { default?: PluginModule };
  return typeof mod.createDriver === 'function' ? mod : (mod.default ?? mod);
}
