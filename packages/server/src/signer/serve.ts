/**
 * @module signer/serve
 * Wires a signer process together: open the key backend (the keystore or a PKCS#11 token), read the trust file, load the driver
 * modules, open (and verify) the durable state, resolve the token, and listen on loopback.
 */
import { parseWith, ValidationError } from '@vault/sdk';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { listen, readOrCreateSecretFile, type Listening } from '../http/index.js';
import { createSignerApp } from './app.js';
import { replayGovernance } from './governance.js';
import { loadDriverModules } from './drivers.js';
import { DEFAULT_KDF, loadOrCreateReceiptKey, SoftwareKeystore, type KdfParams, type KeyBackend } from './keystore.js';
import { loadPkcs11Config, Pkcs11Backend } from './pkcs11.js';
import { SignerState } from './state.js';
import { DriversConfigSchema, loadTrust, type DriverModuleConfig } from './trust.js';

export interface StartSignerOptions {
  /** The software keystore directory; or, instead, `pkcs11`. */
  keystore?: string;
  /** A PKCS#11 configuration file (`Pkcs11ConfigSchema`): the keys live in that token. */
  pkcs11?: string;
  trust: string;
  /** Receipts, signing history, the receipt key and the token file. Default `<keystore>/../signer-state` (with `pkcs11`: beside its file). */
  stateDir?: string;
  /** A JSON file `{ "drivers": [{ "module", "options" }] }`; default: the trust file's `drivers`. */
  drivers?: string;
  host?: string;
  port?: number;
  /** Seals the receipt key (and unlocks the keystore, when that is the backend). */
  passphrase: string;
  /** Default: VAULT_SIGNER_TOKEN, else a 0600 file `signer-token` in the state dir, created on first start. */
  token?: string;
  /** Bearer token GET /metrics wants. Default: VAULT_METRICS_TOKEN; neither: /metrics is open (loopback). */
  metricsToken?: string;
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

/** The state directory: `stateDir`, else `signer-state` beside the keystore directory (or the PKCS#11 configuration file). */
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
  if ((options.keystore === undefined) === (options.pkcs11 === undefined)) {
    throw new ValidationError('keystore', [{ path: '', message: 'give exactly one key backend: keystore or pkcs11' }]);
  }
  const trustPath = resolve(options.trust);
  const stateDir = signerStateDir((options.keystore ?? options.pkcs11) as string, options.stateDir);
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
  // One backend per signer, chosen by configuration: nothing falls back from one to the other.
  const keys: KeyBackend & { close?(): void } =
    options.pkcs11 !== undefined ? await Pkcs11Backend.open(loadPkcs11Config(options.pkcs11)) : await SoftwareKeystore.unlock(resolve(options.keystore as string), options.passphrase);
  let state: SignerState;
  try {
    const receiptKey = await loadOrCreateReceiptKey(stateDir, options.passphrase, options.kdf ?? DEFAULT_KDF);
    state = SignerState.open(stateDir, receiptKey);
    receiptKey.fill(0);
  } catch (e) {
    keys.close?.();
    throw e;
  }
  try {
    const { token, file } = resolveToken(stateDir, options.token);
    const metricsToken = options.metricsToken ?? (process.env['VAULT_METRICS_TOKEN'] || undefined);
    const app = createSignerApp({
      now: options.now ?? (() => Math.floor(Date.now() / 1000)),
      drivers,
      signers,
      // Change sets journaled past the trust file's version: a restart never rolls back.
      trust: replayGovernance(trust, state),
      keys,
      state,
      token,
      // GET /metrics is open on loopback unless a token is configured (argument, else VAULT_METRICS_TOKEN).
      ...(metricsToken ? { metricsToken } : {}),
    });
    const server = await listen(app, { host: options.host ?? '127.0.0.1', port: options.port ?? 7333 });
    return {
      ...server,
      state,
      tokenFile: file,
      async stop() {
        await server.close();
        state.close();
        keys.close?.();
      },
    };
  } catch (e) {
    state.close();
    keys.close?.();
    throw e;
  }
}
