/**
 * @module control-plane/run
 * Creating a state directory (`init`) and starting the service on a socket (`serve`).
 */
import { ValidationError } from '@vault/sdk';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { listen, type Listening } from '../http/listen.js';
import { writeFileAtomic } from '../http/files.js';
import { createControlPlaneApp } from './app.js';
import { DEFAULT_SCRYPT, hashPassphrase, newReceiptSeed, ReceiptSigner } from './secrets.js';
import { ControlPlane, PASSPHRASE_FILE, RECEIPT_KEY_FILE, STATE_FILE, STATE_SCHEMA_FILE, type ControlPlaneOptions } from './service.js';
import { emptyState, stateJsonSchema, writeStateFile, type StateFile } from './state.js';

export interface InitOptions {
  stateDir: string;
  passphrase: string;
  /** Initial state (default: empty). */
  state?: StateFile;
  /** scrypt cost (tests lower it; the default is N=2^15, r=8, p=1). */
  scrypt?: { N: number; r: number; p: number };
  /** Overwrite an existing state directory's files. */
  force?: boolean;
}

/** Creates a state directory: state.json, state.schema.json, operator.json (scrypt hash), receipt.key (0600). */
export async function initStateDir(opts: InitOptions): Promise<{ stateDir: string; receiptPublicKey: string }> {
  if (opts.passphrase.length < 8) throw new ValidationError('passphrase', [{ path: '', message: 'passphrase must be at least 8 characters' }]);
  mkdirSync(opts.stateDir, { recursive: true, mode: 0o700 });
  const statePath = join(opts.stateDir, STATE_FILE);
  if (existsSync(statePath) && !opts.force) {
    throw new ValidationError('state', [{ path: '', message: `${statePath} already exists; refusing to overwrite it` }]);
  }
  const hash = await hashPassphrase(opts.passphrase, opts.scrypt ?? DEFAULT_SCRYPT);
  writeFileAtomic(join(opts.stateDir, PASSPHRASE_FILE), `${JSON.stringify(hash)}\n`, 0o600);
  const seed = newReceiptSeed();
  writeFileAtomic(join(opts.stateDir, RECEIPT_KEY_FILE), `${seed}\n`, 0o600);
  writeFileAtomic(join(opts.stateDir, STATE_SCHEMA_FILE), `${JSON.stringify(stateJsonSchema(), null, 2)}\n`, 0o644);
  writeStateFile(statePath, opts.state ?? emptyState());
  return { stateDir: opts.stateDir, receiptPublicKey: new ReceiptSigner(Buffer.from(seed, 'hex')).publicKeyHex };
}

export interface RunningControlPlane {
  cp: ControlPlane;
  server: Listening;
  url: string;
  /** Stops listening (answering requests under way for up to `graceMs`, see Listening.close), then closes the control plane. */
  close(graceMs?: number): Promise<void>;
}

/** Opens a state directory and listens (127.0.0.1 and an ephemeral port unless told otherwise). */
export async function startControlPlane(opts: ControlPlaneOptions & { host?: string; port?: number; accessLog?: boolean; metricsToken?: string; webRoot?: string | null }): Promise<RunningControlPlane> {
  const cp = await ControlPlane.open(opts);
  // GET /metrics is open on loopback unless a token is configured (argument, else VAULT_METRICS_TOKEN).
  const metricsToken = opts.metricsToken ?? (process.env['VAULT_METRICS_TOKEN'] || undefined);
  const app = createControlPlaneApp(cp, { accessLog: opts.accessLog ?? false, ...(metricsToken ? { metricsToken } : {}), ...(opts.webRoot !== undefined ? { webRoot: opts.webRoot } : {}) });
  let server: Listening;
  try {
    server = await listen(app, { host: opts.host ?? '127.0.0.1', port: opts.port ?? 0 });
  } catch (e) {
    await cp.close();
    throw e;
  }
  cp.listening(server.port);
  return {
    cp,
    server,
    url: server.url,
    async close(graceMs?: number) {
      await server.close(graceMs);
      await cp.close();
    },
  };
}
