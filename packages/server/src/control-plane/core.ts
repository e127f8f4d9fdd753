/**
 * @module control-plane/core
 * What every part of the control plane shares: its options and clock, the state file in force and
 * the drivers serving it (replaced whole on reload, pairing and revocation, never mutated), the one
 * writer of intents and receipts, and the locks that order operations (one intent at a time; one
 * change of state.json at a time).
 */
import { assertChainDriver, DriverRegistry, intentLifetime, InternalError, NotFoundError, preparePolicy, sha256Hex, ValidationError, type ChainDriver, type IntentLifetime, type PolicySet, type ReceiptRecord, type WalletDescriptor } from '@vault/sdk';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../http/files.js';
import { importPlugin, type PluginModule } from '../plugins.js';
import type { ReceiptSigner } from './secrets.js';
import { admitGoverned, canonicalJson, encodeState, parseState, readStateText, type DriverEntry, type StateFile, type WebAuthnSettings } from './state.js';
import type { IntentStore } from './store.js';
import type { EventFeed } from './webhooks/feed.js';
import type { Resolver } from './webhooks/send.js';
import type { RetrySchedule } from './webhooks/dispatcher.js';
import { Writer } from './writer.js';

export const STATE_FILE = 'state.json';
export const STATE_SCHEMA_FILE = 'state.schema.json';
export const PASSPHRASE_FILE = 'operator.json';
export const RECEIPT_KEY_FILE = 'receipt.key';
export const STORE_DIR = 'store';
/** The LMDB replica of the shared log when the control plane runs on PostgreSQL (rebuilt from it when deleted). */
export const REPLICA_DIR = 'replica';
export const LOCK_FILE = 'serve.lock';
/**
 * Written the first time this state directory runs under governance: from then on a state.json
 * without its governance section (or with one re-added as if fresh) is a hand edit, refused at
 * start-up as at reload, not a control plane that was never governed.
 */
export const GOVERNED_MARKER = 'governed';

/** Whether the control plane in `stateDir` has run under governance (GOVERNED_MARKER). */
export function governedBefore(stateDir: string): boolean {
  return existsSync(join(stateDir, GOVERNED_MARKER));
}

/** Records that `stateDir` runs under governance (once; see GOVERNED_MARKER). */
export function markGoverned(stateDir: string): void {
  if (!governedBefore(stateDir)) writeFileAtomic(join(stateDir, GOVERNED_MARKER), 'this control plane runs under governance: state.json keeps its governance section\n', 0o600);
}

export interface ControlPlaneOptions {
  stateDir: string;
  /** Integer Unix seconds. Injectable for tests (session expiry, timelocks). */
  now?: () => number;
  /** Drivers given in-process, in addition to those the state file names. */
  drivers?: readonly ChainDriver[];
  /** One line per event; never receives a secret. */
  log?: (line: string) => void;
  sessionIdleSeconds?: number;
  sessionAbsoluteSeconds?: number;
  /** Unlock attempts that may wait for their passphrase check at once (default 4096; see UnlockQueue). */
  unlockQueueMax?: number;
  /** Confirmation polling: attempts and delay between them (default 40 x 250 ms). */
  confirmAttempts?: number;
  confirmDelayMs?: number;
  /** false disables fsync (benchmarks of the bare path only; never in production). */
  storeSync?: boolean;
  /** Resume confirmation of intents left `submitted` at start-up (default true). */
  resumeOnStart?: boolean;
  /** Timeout of one signer call (default 15 s). */
  signerTimeoutMs?: number;
  /** Seconds between heartbeat comments on GET /events/stream (default 15). */
  eventHeartbeatSeconds?: number;
  /** Unsent bytes a live event-stream consumer may fall behind by before it is cut off (default 1 MiB). */
  eventStreamBufferBytes?: number;
  /** Event streams open at once (default 32); a new one past it is refused with 503. */
  eventStreamsMax?: number;
  /** How often the expiry sweep runs, ms (default 60 000; 0 turns it off). */
  expirySweepMs?: number;
  /** The event log webhooks deliver from (tests inject one). Absent: the control plane's own log. */
  events?: EventFeed;
  /** DNS for webhook hosts (tests of DNS rebinding); the system resolver by default. */
  webhookResolver?: Resolver;
  /** Webhook retry delays (default 5 s doubling to 1 h, with jitter); the horizon is in state.json. */
  webhookRetry?: Partial<RetrySchedule>;
  /**
   * Run on PostgreSQL, one of several instances (postgres/log.ts). Absent: LMDB alone, one
   * instance per state directory.
   */
  database?: DatabaseOptions;
}

export interface DatabaseOptions {
  /** The connection string (VAULT_DATABASE_URL or a file). Never logged. */
  url: string;
  /** This instance's name in the writer's lease (default host:pid:random). */
  instanceId?: string;
  /** Lease length in seconds (default 10): how long a failover takes at most, after the writer dies. */
  leaseSeconds?: number;
  /** A standby's poll for log entries it was not notified of, ms (default 1000). */
  pollMs?: number;
  /** Where writes go while this instance is the writer (default its own http://host:port). */
  advertiseUrl?: string;
  /** Called when this instance lost the lease after holding it: it writes no more (the CLI exits). */
  onLeaseLost?: (reason: string) => void;
}

/** A tiny async mutex per key: concurrent executes of one intent run one after the other. */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();
  held(key: string): boolean {
    return this.#tails.has(key);
  }
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.#tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

/** Loads the drivers a state file names: `import(module)` then `createDriver(options)`. */
export async function loadDrivers(entries: readonly DriverEntry[], stateDir: string): Promise<ChainDriver[]> {
  const out: ChainDriver[] = [];
  for (const [i, entry] of entries.entries()) {
    let mod: PluginModule;
    try {
      mod = await importPlugin(entry.module, stateDir);
    } catch (e) {
      throw new ValidationError('state', [{ path: `drivers.${i}.module`, message: `cannot import ${entry.module}: ${(e as Error).message}` }]);
    }
    if (typeof mod.createDriver !== 'function') {
      throw new ValidationError('state', [{ path: `drivers.${i}.module`, message: `${entry.module} has no export createDriver(options)` }]);
    }
    let driver: ChainDriver;
    try {
      driver = await mod.createDriver(entry.options, { stateDir });
    } catch (e) {
      throw new ValidationError('state', [{ path: `drivers.${i}.options`, message: `createDriver failed: ${(e as Error).message}` }]);
    }
    try {
      // As defineChainDriver checks it: no driver without payloadFate, whatever the plugin skipped.
      assertChainDriver(driver);
    } catch (e) {
      throw new ValidationError('state', [{ path: `drivers.${i}.module`, message: (e as Error).message }]);
    }
    out.push(driver);
  }
  return out;
}

export function buildRegistry(drivers: readonly ChainDriver[]): DriverRegistry<ChainDriver> {
  try {
    return new DriverRegistry<ChainDriver>(drivers);
  } catch (e) {
    throw new ValidationError('state', [{ path: 'drivers', message: (e as Error).message }]);
  }
}

/** Checks what the schema cannot: every wallet has a driver serving its chain. */
export function checkStateAgainstDrivers(state: StateFile, registry: DriverRegistry<ChainDriver>): void {
  state.wallets.forEach((w, i) => {
    if (!registry.has(w.chain)) {
      throw new ValidationError('state', [{ path: `wallets.${i}.chain`, message: `no driver serves chain ${w.chain} (loaded: ${registry.chains().join(', ') || 'none'})` }]);
    }
  });
}


/** The default timeout of one signer call. */
const SIGNER_TIMEOUT_MS = 15_000;

export class Core {
  readonly stateDir: string;
  readonly opts: ControlPlaneOptions;
  /** Integer Unix seconds. */
  readonly now: () => number;
  readonly store: IntentStore;
  readonly writer: Writer;
  /** Concurrent operations on one intent (approve, execute, refresh) run one after the other. */
  readonly intentLocks = new KeyedLock();
  /** Executes of one wallet, from the policy to settled, one at a time (taken inside the intent's lock). */
  readonly walletLocks = new KeyedLock();
  /** Serialises changes of state.json (pairing, revocation, reload): each builds on the last. */
  readonly stateLock = new KeyedLock();
  /** Set by close(): background work (resumption, confirmation polling) stops. */
  closed = false;
  #state: StateFile;
  #drivers: DriverRegistry<ChainDriver>;
  readonly #injected: readonly ChainDriver[];
  #loaded: ChainDriver[];
  /** State policy object -> its prepared (validated, frozen) form. */
  readonly #preparedPolicies = new WeakMap<PolicySet, Readonly<PolicySet>>();
  readonly #log: (line: string) => void;

  constructor(
    opts: ControlPlaneOptions,
    state: StateFile,
    drivers: { injected: readonly ChainDriver[]; loaded: ChainDriver[]; registry: DriverRegistry<ChainDriver> },
    store: IntentStore,
    receiptSigner: ReceiptSigner,
  ) {
    this.opts = opts;
    this.stateDir = opts.stateDir;
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    this.#log = opts.log ?? (() => undefined);
    this.#state = state;
    this.#injected = drivers.injected;
    this.#loaded = drivers.loaded;
    this.#drivers = drivers.registry;
    this.store = store;
    this.writer = new Writer(store, receiptSigner, this.now, (event) => this.log(event));
  }

  /** On PostgreSQL without the writer's lease: reads answer from the replica as stored, nothing is written. */
  get standby(): boolean {
    return this.opts.database !== undefined && this.store.fence === undefined;
  }

  /** The state file in force. */
  get state(): StateFile {
    return this.#state;
  }

  /** The port this control plane listens on, once it does (run.ts): the default passkey origin. */
  listeningPort: number | undefined;

  /**
   * Where passkey ceremonies may happen: state.json's `webauthn`, else rp_id `localhost` and
   * `http://localhost:<port>`. Before the port is known there is no default origin, so no
   * assertion verifies (fail closed).
   */
  webauthn(): WebAuthnSettings {
    if (this.#state.webauthn) return this.#state.webauthn;
    return { rp_id: 'localhost', origins: this.listeningPort === undefined ? [] : [`http://localhost:${this.listeningPort}`] };
  }

  get drivers(): DriverRegistry<ChainDriver> {
    return this.#drivers;
  }

  get signerTimeoutMs(): number {
    return this.opts.signerTimeoutMs ?? SIGNER_TIMEOUT_MS;
  }

  log(event: Record<string, unknown>): void {
    try {
      this.#log(JSON.stringify({ t: this.now(), ...event }));
    } catch {
      // Logging never breaks a request.
    }
  }

  wallet(id: string): WalletDescriptor {
    const w = this.state.wallets.find((x) => x.wallet === id);
    if (!w) throw new NotFoundError('wallet', id);
    return w;
  }

  /** The wallet's policy, validated once and frozen (reloads bring new objects, so new entries). */
  /** The wallet's intent time to live and approval age (state `lifetimes`, else the SDK's defaults). */
  lifetime(walletId: string): IntentLifetime {
    return intentLifetime(this.state.lifetimes[walletId]);
  }

  policy(walletId: string): Readonly<PolicySet> {
    this.wallet(walletId);
    const p = this.state.policies.find((x) => x.wallet === walletId);
    if (!p) return preparePolicy({ wallet: walletId, version: 0, rules: [] });
    let prepared = this.#preparedPolicies.get(p);
    if (!prepared) {
      prepared = preparePolicy(p);
      this.#preparedPolicies.set(p, prepared);
    }
    return prepared;
  }

  driverFor(wallet: WalletDescriptor): ChainDriver {
    return this.drivers.get(wallet.chain);
  }

  /**
   * POST /admin/reload: an invalid file is refused with the reason and the running state kept.
   * The file, its drivers and the receipt are all checked before anything changes; the receipt is
   * on disk before the new state takes effect (the file itself is already what a restart loads).
   */
  async reload(): Promise<{ reloaded: true; wallets: number; policies: number; devices: number; drivers: string[]; receipt_head: string }> {
    this.writer.assertWritable();
    return this.stateLock.run(STATE_FILE, async () => {
      // Under governance a hand edit of a governed section is refused, naming it (admitGoverned).
      const text = readStateText(join(this.stateDir, STATE_FILE));
      const admitted = admitGoverned(parseState(text), this.state, this.state.governance !== undefined || governedBefore(this.stateDir));
      const encoded = admitted.sealed ? encodeState(admitted.state) : null;
      const next = encoded ? encoded.state : admitted.state;
      let loaded = this.#loaded;
      if (canonicalJson(next.drivers) !== canonicalJson(this.state.drivers)) loaded = await loadDrivers(next.drivers, this.stateDir);
      const registry = buildRegistry([...this.#injected, ...loaded]);
      checkStateAgainstDrivers(next, registry);
      const r = this.writer.draftReceipt('state.reloaded', { state_digest: sha256Hex(canonicalJson(next)) });
      const appended = this.writer.appendReceipt(r);
      // On PostgreSQL the standbys take the reloaded file too, chained now so it joins the receipt's
      // commit: a crash cannot leave the receipt in the log without the state it names.
      const shared = !encoded && this.store.fence !== undefined ? this.writer.shareState(text) : Promise.resolve();
      shared.catch(() => undefined);
      await appended;
      await shared;
      // Governance first set up by this file: its digests are recorded in it (receipt first, as pairing).
      if (encoded) {
        await this.writeState(encoded);
        this.log({ event: 'governance_sealed', version: encoded.state.governance?.policy.version ?? 0 });
      }
      if (next.governance) markGoverned(this.stateDir);
      this.#state = next;
      this.#loaded = loaded;
      this.#drivers = registry;
      this.writer.history.clear();
      this.log({ event: 'reloaded', wallets: next.wallets.length });
      return {
        reloaded: true as const,
        wallets: next.wallets.length,
        policies: next.policies.length,
        devices: next.devices.length,
        drivers: registry.chains(),
        receipt_head: r.hash,
      };
    });
  }

  /**
   * Replaces state.json with `next` from encodeState (already checked against the loader), then
   * puts its state in force. Call under stateLock. `receipt`, drafted for the change, is chained
   * right after the file is written (the crash order of a change that removes power: the state
   * first) and before the state is shared, so it never goes stale under the `state.shared` receipt.
   */
  writeState(next: { text: string; state: StateFile }, receipt?: ReceiptRecord): Promise<void> {
    this.#writeStateFile(next.text);
    this.#state = next.state;
    // Chained synchronously (appendReceipt and shareState enqueue before their first await).
    const appended = receipt ? this.writer.appendReceipt(receipt) : Promise.resolve();
    // Awaited by the caller; a rejection it has not reached yet must not count as unhandled.
    appended.catch(() => undefined);
    // On PostgreSQL the writer shares it through the log (a standby keeps it local: the log wins at its next start).
    if (this.store.fence === undefined) return appended;
    const shared = this.writer.shareState(next.text);
    shared.catch(() => undefined);
    return Promise.all([appended, shared]).then(() => undefined);
  }

  #writeStateFile(text: string): void {
    try {
      writeFileAtomic(join(this.stateDir, STATE_FILE), text, 0o600);
    } catch (e) {
      this.log({ event: 'state_write_failed', error: (e as NodeJS.ErrnoException).code ?? 'unknown' });
      throw new InternalError('state: writing state.json failed', { cause: e });
    }
  }

  /**
   * A standby adopts the state.json the writer shared (policy, devices, accounts, governance), as a
   * reload would: parsed by the loader, held to the governance rules, its drivers loaded. A text it
   * refuses stops the replica there (fail closed): it is retried, and this instance cannot take over.
   */
  async adoptSharedState(text: string): Promise<void> {
    await this.stateLock.run(STATE_FILE, async () => {
      const admitted = admitGoverned(parseState(text), this.state, this.state.governance !== undefined || governedBefore(this.stateDir));
      if (admitted.sealed) throw new InternalError('state: the shared state.json is not sealed under its governance');
      const next = admitted.state;
      let loaded = this.#loaded;
      if (canonicalJson(next.drivers) !== canonicalJson(this.state.drivers)) loaded = await loadDrivers(next.drivers, this.stateDir);
      const registry = buildRegistry([...this.#injected, ...loaded]);
      checkStateAgainstDrivers(next, registry);
      this.#writeStateFile(text);
      if (next.governance) markGoverned(this.stateDir);
      this.#state = next;
      this.#loaded = loaded;
      this.#drivers = registry;
      this.writer.history.clear();
      this.log({ event: 'state_adopted', wallets: next.wallets.length });
    });
  }
}
