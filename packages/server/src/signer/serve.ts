/**
 * @module signer/serve
 * Wires a signer process together: unlock the keystore, read the trust file, load the driver
 * modules, open (and verify) the durable state, resolve the token, and listen on loopback.
 */
import { parseWith, ValidationError } from '@vault/sdk';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { listen, readOrCreateSecretFile, type Listening } from '../http/index.js';
import { createSignerApp } from './app.js';
import { loadDriverModules } from './drivers.js';
import { DEFAULT_KDF, loadOrCreateReceiptKey, SoftwareKeystore, type KdfParams } from './keystore.js';
import { SignerState } from './state.js';
import { DriversConfigSchema, loadTrust, type DriverModuleConfig } from './trust.js';

export interface StartSignerOptions {
  keystore: string;
  trust: string;
  /** Receipts, signing history, the receipt key and the token file. Default `<keystore>/../signer-state`. */
  stateDir?: string;
  /** A JSON file `{ "drivers": [{ "module", "options" }] }`; default: the trust file's `drivers`. */
  drivers?: string;
  host?: string;
  port?: number;
  passphrase: string;
  /** Default: VAULT_SIGNER_TOKEN, else a 0600 file `signer-token` in the state dir, created on first start. */
  token?: string;
  now?: () => number;
  /** scrypt cost for a newly created receipt key. */
  kdf?: KdfParams;
}

export interface RunningSigner extends Listening {
  state: SignerState;
  /** Where the token lives when it came from a file (never the token itself). */
  tokenFile: string | null;
  stop(): Promise<void>;
}

/** The state directory: `stateDir`, else `<keystore>/../signer-state`. */
export function signerStateDir(keystore: string, stateDir?: string): string {
  return resolve(stateDir ?? join(dirname(resolve(keystore)), 'signer-state'));
}

/** The token: VAULT_SIGNER_TOKEN, else a 32-byte random token in a 0600 file made on first start. */
export function resolveToken(stateDir: string, explicit?: string): { token: string; file: string | null } {
  const fromEnv = explicit ?? process.env['VAULT_SIGNER_TOKEN'];
  if (fromEnv !== undefined && fromEnv !== '') return { token: fromEnv, file: null };
  const file = join(stateDir, 'signer-token');
  return { token: readOrCreateSecretFile(file, () => randomBytes(32).toString('base64url')), file };
}

/**
 * Starts a signer.
 *
 * @example
 * const signer = await startSigner({ keystore, trust, passphrase: process.env.VAULT_SIGNER_PASSPHRASE!, port: 7333 })
 * // ... later
 * await signer.stop()
 */
export async function startSigner(options: StartSignerOptions): Promise<RunningSigner> {
  const keystore = resolve(options.keystore);
  const trustPath = resolve(options.trust);
  const stateDir = signerStateDir(keystore, options.stateDir);
  const trust = loadTrust(trustPath);
  let driverConfigs: readonly DriverModuleConfig[] = trust.file.drivers ?? [];
  let baseDir = dirname(trustPath);
  if (options.drivers !== undefined) {
    const path = resolve(options.drivers);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8'));
    } catch (cause) {
      throw new ValidationError('drivers', [{ path: '', message: `${path} is not readable JSON` }], { cause });
    }
    driverConfigs = parseWith(DriversConfigSchema, raw, 'drivers').drivers;
    baseDir = dirname(path);
  }
  const { drivers, signers } = await loadDriverModules(driverConfigs, baseDir);
  const keys = await SoftwareKeystore.unlock(keystore, options.passphrase);
  const receiptKey = await loadOrCreateReceiptKey(stateDir, options.passphrase, options.kdf ?? DEFAULT_KDF);
  const state = SignerState.open(stateDir, receiptKey);
  receiptKey.fill(0);
  try {
    const { token, file } = resolveToken(stateDir, options.token);
    const app = createSignerApp({
      now: options.now ?? (() => Math.floor(Date.now() / 1000)),
      drivers,
      signers,
      trust,
      keys,
      state,
      token,
    });
    const server = await listen(app, { host: options.host ?? '127.0.0.1', port: options.port ?? 7333 });
    return {
      ...server,
      state,
      tokenFile: file,
      async stop() {
        await server.close();
        state.close();
      },
    };
  } catch (e) {
    state.close();
    throw e;
  }
}
