/**
 * @module control-plane/service
 * The keyless control plane's operations, independent of HTTP: intents (content-addressed,
 * replay-safe), signed approvals, the execute pipeline (chain parameters, protections, prepare,
 * signers, assemble, submit, confirm, receipts), reconcile, recovery, estate, pairing and devices.
 * Every write is committed to disk before the operation resolves.
 */
import {
  DriverRegistry,
  InternalError,
  NotFoundError,
  RefusedError,
  STATUS_BY_DECISION,
  SessionError,
  ValidationError,
  VaultError,
  compareControl,
  evaluatePolicy,
  preparePolicy,
  fromHex,
  normalizeRestrictions,
  restrictionDigest,
  normalizeDestination,
  intentId,
  normalizeIntent,
  ChainParamsSchema,
  parseWith,
  policyDigest,
  runIntentGuards,
  sha256Hex,
  verifyApprovals,
  verifyEd25519,
  verifyReceiptChain,
  walletMembers,
  type ApprovalProblem,
  type ApproverKey,
  type ChainDriver,
  type Decision,
  type ExecuteOutcome,
  type Finding,
  type IntentRequest,
  type IntentStatus,
  type PolicySet,
  type ProtectInputs,
  type ReceiptRecord,
  type Restriction,
  type SignRequest,
  type SignerClient,
  type SignedApproval,
  type WalletDescriptor,
} from '@vault/sdk';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readSecretFile, writeFileAtomic } from '../http/files.js';
import { acquireStateLock } from '../state-lock.js';
import { ExecuteRefusedError } from './errors.js';
import { HistoryCache, lookback } from './history.js';
import { importPlugin, type PluginModule } from '../plugins.js';
import { PassphraseFileSchema, ReceiptSigner, verifyPassphrase, type PassphraseFile } from './secrets.js';
import { SessionStore, UnlockQueue } from './sessions.js';
import {
  attestationValid,
  canonicalJson,
  encodeState,
  readStateFile,
  type Device,
  type DriverEntry,
  type StateFile,
} from './state.js';
import { observeRequest, signerClient, signerServices, signRequest, type SignerAnswer, type SignRequestBase } from './signers.js';
import { assertTransition, isOpen, transition } from './status.js';
import { IntentStore, type IntentRecord, type Submission } from './store.js';

export const STATE_FILE = 'state.json';
export const STATE_SCHEMA_FILE = 'state.schema.json';
export const PASSPHRASE_FILE = 'operator.json';
export const RECEIPT_KEY_FILE = 'receipt.key';
export const STORE_DIR = 'store';
export const LOCK_FILE = 'serve.lock';

export const PAIRING_TTL_SECONDS = 5 * 60;
/**
 * How long a signer's acknowledgement of the restriction set stands before the next sign request
 * to it pushes the set again (idempotent at the signer): a signer whose state was replaced, or
 * whose operator lifted a restriction this control plane still holds, gets it back within this.
 */
export const RESTRICTION_ACK_SECONDS = 60;
export const INTENT_LIST_MAX = 100;

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
}

interface PairingCode {
  code: string;
  challenge: string;
  role: Device['role'];
  label: string;
  expires_at: number;
  failures: number;
}

/** A tiny async mutex per key: concurrent executes of one intent run one after the other. */
class KeyedLock {
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    try {
      out.push(await mod.createDriver(entry.options, { stateDir }));
    } catch (e) {
      throw new ValidationError('state', [{ path: `drivers.${i}.options`, message: `createDriver failed: ${(e as Error).message}` }]);
    }
  }
  return out;
}

function buildRegistry(drivers: readonly ChainDriver[]): DriverRegistry<ChainDriver> {
  try {
    return new DriverRegistry<ChainDriver>(drivers);
  } catch (e) {
    throw new ValidationError('state', [{ path: 'drivers', message: (e as Error).message }]);
  }
}

/** Checks what the schema cannot: every wallet has a driver serving its chain. */
function checkStateAgainstDrivers(state: StateFile, registry: DriverRegistry<ChainDriver>): void {
  state.wallets.forEach((w, i) => {
    if (!registry.has(w.chain)) {
      throw new ValidationError('state', [{ path: `wallets.${i}.chain`, message: `no driver serves chain ${w.chain} (loaded: ${registry.chains().join(', ') || 'none'})` }]);
    }
  });
}

/** Stored intent as GET /intent/{id} shows it (internal bookkeeping left out). */
export function publicIntent(r: IntentRecord): Record<string, unknown> {
  const { n: _n, submission, attempt: _attempt, ...rest } = r;
  const out: Record<string, unknown> = { ...rest };
  if (submission) out['submitted'] = { txHash: submission.txHash, submitted_at: submission.submitted_at, summary: submission.built.summary };
  return out;
}

export class ControlPlane {
  readonly stateDir: string;
  readonly store: IntentStore;
  readonly sessions: SessionStore;
  readonly receiptSigner: ReceiptSigner;
  readonly now: () => number;
  readonly startedAt: number;
  state: StateFile;
  drivers: DriverRegistry<ChainDriver>;
  #injected: readonly ChainDriver[];
  #loaded: ChainDriver[];
  #passphrase: PassphraseFile;
  #head: { seq: number; hash: string } | null;
  readonly #history: HistoryCache;
  readonly #pending = new Map<string, IntentRecord>();
  readonly #creating = new Map<string, Promise<IntentRecord>>();
  readonly #locks = new KeyedLock();
  /** State policy object -> its prepared (validated, frozen) form. */
  readonly #preparedPolicies = new WeakMap<PolicySet, Readonly<PolicySet>>();
  /** Observations sent to signers in flight (awaited on close). */
  readonly #observing = new Set<Promise<void>>();
  /** State object -> the restriction set derived from it (the state is replaced, never mutated). */
  readonly #restrictionSets = new WeakMap<StateFile, { set: Restriction[]; digest: string }>();
  /** Signer URL -> the restriction digest it last acknowledged, and when (in memory: a restart pushes again). */
  readonly #restrictionAcks = new Map<string, { digest: string; at: number }>();
  /** Pushes in flight, by signer URL and digest: concurrent sign requests share one. */
  readonly #restrictionPushes = new Map<string, Promise<void>>();
  readonly #pairing = new Map<string, PairingCode>();
  /** Serialises changes of state.json (pairing, revocation, reload): each builds on the last. */
  readonly #stateLock = new KeyedLock();
  readonly unlockQueue: UnlockQueue;
  readonly #log: (line: string) => void;
  readonly #opts: ControlPlaneOptions;
  #closed = false;
  #broken = false;
  #release: () => void = () => undefined;
  /** Whether the receipt log's tail matched its anchored head and length at start-up. */
  readonly anchorOk: boolean;

  private constructor(
    opts: ControlPlaneOptions,
    state: StateFile,
    drivers: { injected: readonly ChainDriver[]; loaded: ChainDriver[]; registry: DriverRegistry<ChainDriver> },
    passphrase: PassphraseFile,
    signer: ReceiptSigner,
    store: IntentStore,
  ) {
    this.#opts = opts;
    this.stateDir = opts.stateDir;
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    this.startedAt = this.now();
    this.state = state;
    this.#injected = drivers.injected;
    this.#loaded = drivers.loaded;
    this.drivers = drivers.registry;
    this.#passphrase = passphrase;
    this.receiptSigner = signer;
    this.store = store;
    this.#log = opts.log ?? (() => undefined);
    this.sessions = new SessionStore(this.now, opts.sessionIdleSeconds, opts.sessionAbsoluteSeconds);
    this.unlockQueue = new UnlockQueue(opts.unlockQueueMax);
    this.#history = new HistoryCache(store, () => this.#pending.values());
    const last = store.lastReceipt();
    this.#head = last ? { seq: last.seq, hash: last.hash } : null;
    // The head and length anchored beside the log must match its last record: a truncated or
    // rewritten tail is reported at once (and /ledger/verify fails until an operator looks).
    const meta = store.getMeta();
    this.anchorOk = meta.head === this.head && meta.receipts === this.receiptCount;
  }

  /** Opens a state directory created by `vault-control-plane init`. */
  static async open(opts: ControlPlaneOptions): Promise<ControlPlane> {
    const dir = opts.stateDir;
    const statePath = join(dir, STATE_FILE);
    if (!existsSync(statePath)) {
      throw new ValidationError('state', [{ path: '', message: `${statePath} does not exist; run vault-control-plane init --state-dir ${dir}` }]);
    }
    const state = readStateFile(statePath);
    const passphrase = parseWith(PassphraseFileSchema, JSON.parse(readSecretFile(join(dir, PASSPHRASE_FILE))), 'operator.json');
    const seed = fromHex(readSecretFile(join(dir, RECEIPT_KEY_FILE)).trim(), 'receipt.key', 32);
    const signer = new ReceiptSigner(seed);
    const injected = opts.drivers ?? [];
    const loaded = await loadDrivers(state.drivers, dir);
    const registry = buildRegistry([...injected, ...loaded]);
    checkStateAgainstDrivers(state, registry);
    // One control plane per state directory: two would fork the receipt chain and could both submit.
    const release = acquireStateLock(join(dir, LOCK_FILE), (pid, self) =>
      new ValidationError('state', [{ path: '', message: self ? `${dir} is already open in this process` : `${dir} is in use by another control plane (pid ${pid})` }]),
    );
    let store: IntentStore;
    try {
      store = new IntentStore(join(dir, STORE_DIR), { sync: opts.storeSync !== false, sealReceipt: (r) => signer.seal(r) });
    } catch (e) {
      release();
      throw e;
    }
    const cp = new ControlPlane(opts, state, { injected, loaded, registry }, passphrase, signer, store);
    cp.#release = release;
    if (!cp.anchorOk) {
      // Writing on would re-anchor a damaged log and hide the damage: serve reads, refuse writes.
      cp.log({ event: 'receipt_anchor_mismatch', head: cp.head, receipts: cp.receiptCount });
      cp.#broken = true;
    }
    if (opts.resumeOnStart !== false) cp.#resumeInflight();
    return cp;
  }

  log(event: Record<string, unknown>): void {
    try {
      this.#log(JSON.stringify({ t: this.now(), ...event }));
    } catch {
      // Logging never breaks a request.
    }
  }

  // ---------------------------------------------------------------- receipts

  get head(): string {
    return this.#head?.hash ?? '0'.repeat(64);
  }

  get receiptCount(): number {
    return this.#head ? this.#head.seq + 1 : 0;
  }

  #receipt(kind: string, body: unknown, intentId?: string): ReceiptRecord {
    const r = this.receiptSigner.next(this.#head, { at: this.now(), kind, body, ...(intentId ? { intentId } : {}) });
    this.#head = { seq: r.seq, hash: r.hash };
    return r;
  }

  /** Writes a record with its receipt (group-committed by the store); if the commit fails, every later write is refused. */
  async #commit(before: IntentRecord | null, record: IntentRecord, receipt: ReceiptRecord | null, extra: { isNew?: boolean; known?: [string, string] } = {}): Promise<void> {
    this.#assertWritable();
    try {
      // The backstop of the lifecycle table (callers build the record with transition()).
      assertTransition(before?.status ?? null, record.status, record.intentId);
    } catch (e) {
      // The receipt was chained in memory (no await since): take it off, so the chain on disk
      // and in memory stay one.
      if (receipt && this.#head?.hash === receipt.hash) this.#head = receipt.seq === 0 ? null : { seq: receipt.seq - 1, hash: receipt.prev };
      throw e;
    }
    this.#pending.set(record.intentId, record);
    this.#history.update(before, record);
    try {
      await this.store.write(record, receipt, extra);
    } catch (e) {
      // Later receipts may already chain onto this one in memory: stop writing rather than fork
      // the chain. A restart reloads the head from what is on disk.
      this.#broken = true;
      this.log({ event: 'store_failed', error: e instanceof Error ? e.name : 'unknown' });
      throw new InternalError('store: write failed', { cause: e });
    } finally {
      if (this.#pending.get(record.intentId) === record) this.#pending.delete(record.intentId);
    }
  }

  #assertWritable(): void {
    if (this.#broken) throw new InternalError('store: writes are stopped (an earlier write failed, or the receipt log does not match its anchor); see /health');
  }

  /**
   * The next receipt, built (and so validated: canonical JSON refuses what it cannot hash) without
   * taking its place in the chain. Append it before anything else is chained: no await between.
   */
  #draftReceipt(kind: string, body: unknown): ReceiptRecord {
    this.#assertWritable();
    return this.receiptSigner.next(this.#head, { at: this.now(), kind, body });
  }

  /** Chains a drafted receipt and waits until it is on disk. */
  async #appendReceipt(r: ReceiptRecord): Promise<void> {
    this.#assertWritable();
    if (r.seq !== this.receiptCount || r.prev !== this.head) throw new InternalError('receipt drafted on a stale head');
    this.#head = { seq: r.seq, hash: r.hash };
    try {
      await this.store.appendReceipt(r);
    } catch (e) {
      this.#broken = true;
      throw new InternalError('store: write failed', { cause: e });
    }
  }

  verifyLedger(): { verified: boolean; receipts: number; head: string; signerPublicKey: string; problem?: string; message?: string } {
    const records = [...this.store.allReceipts()];
    const meta = this.store.getMeta();
    const check = verifyReceiptChain(records, this.receiptSigner.publicKeyHex, { head: meta.head, length: meta.receipts });
    return check.verified
      ? { verified: true, receipts: check.receipts, head: check.head, signerPublicKey: this.receiptSigner.publicKeyHex }
      : { verified: false, receipts: check.receipts, head: check.head, signerPublicKey: this.receiptSigner.publicKeyHex, problem: check.problem, message: check.message };
  }

  // ---------------------------------------------------------------- sessions

  /**
   * Every attempt is checked, one at a time in arrival order (UnlockQueue): no counter a third
   * party could fill to refuse the operator, and no answer that differs for the right passphrase
   * except its result. `signal` withdraws an attempt whose client has gone.
   */
  async unlock(passphrase: string, signal?: AbortSignal): Promise<{ token: string; expires_at: number; accounts: string[] }> {
    const stored = this.#passphrase;
    if (!(await this.unlockQueue.run(() => verifyPassphrase(passphrase, stored), signal))) {
      this.log({ event: 'unlock_failed' });
      throw new SessionError('wrong passphrase', { data: { reason: 'passphrase' } });
    }
    const s = this.sessions.create();
    this.log({ event: 'unlocked' });
    return { token: s.token, expires_at: s.expires_at, accounts: this.state.wallets.map((w) => w.wallet) };
  }

  // ---------------------------------------------------------------- state

  wallet(id: string): WalletDescriptor {
    const w = this.state.wallets.find((x) => x.wallet === id);
    if (!w) throw new NotFoundError('wallet', id);
    return w;
  }

  /** The wallet's policy, validated once and frozen (reloads bring new objects, so new entries). */
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
    this.#assertWritable();
    return this.#stateLock.run(STATE_FILE, async () => {
      const next = readStateFile(join(this.stateDir, STATE_FILE));
      let loaded = this.#loaded;
      if (canonicalJson(next.drivers) !== canonicalJson(this.state.drivers)) loaded = await loadDrivers(next.drivers, this.stateDir);
      const registry = buildRegistry([...this.#injected, ...loaded]);
      checkStateAgainstDrivers(next, registry);
      const r = this.#draftReceipt('state.reloaded', { state_digest: sha256Hex(canonicalJson(next)) });
      await this.#appendReceipt(r);
      this.state = next;
      this.#loaded = loaded;
      this.drivers = registry;
      this.#history.clear();
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

  /** Replaces state.json with text from encodeState (already checked against the loader). */
  #writeState(text: string): void {
    try {
      writeFileAtomic(join(this.stateDir, STATE_FILE), text, 0o600);
    } catch (e) {
      this.log({ event: 'state_write_failed', error: (e as NodeJS.ErrnoException).code ?? 'unknown' });
      throw new InternalError('state: writing state.json failed', { cause: e });
    }
  }

  // ---------------------------------------------------------------- policy evaluation

  #approverKeys(): Map<string, ApproverKey> {
    const m = new Map<string, ApproverKey>();
    for (const d of this.state.devices) {
      if (d.role !== 'approver') continue;
      m.set(d.id, { publicKey: d.public_key, revoked: d.revoked_at !== null });
    }
    return m;
  }

  /** Stored approvals are judged as new ones are (approveSigned), and as the signer will judge them. */
  #countedApprovals(record: Pick<IntentRecord, 'intentId' | 'approvals' | 'intent' | 'created_at'>): SignedApproval[] {
    return verifyApprovals(record.approvals, {
      intentId: record.intentId,
      approvers: this.#approverKeys(),
      initiator: record.intent.initiator,
      window: { createdAt: record.created_at, now: this.now() },
    }).valid;
  }

  #complianceCleared(destination: string): boolean {
    return this.state.compliance.cleared_destinations.includes(destination);
  }

  #attestationValid(policy: PolicySet, wallet: string): boolean {
    const attesters = policy.rules.flatMap((r) => (r.rule === 'require_attestation' ? r.attesters : []));
    return attesters.length > 0 && attestationValid(this.state, wallet, attesters, this.now());
  }

  #evaluate(record: Pick<IntentRecord, 'intentId' | 'approvals' | 'intent' | 'created_at'> & Partial<IntentRecord>, existing: IntentRecord | null): Decision {
    const policy = this.policy(record.intent.wallet);
    const now = this.now();
    return evaluatePolicy(policy, record.intent, {
      now,
      created_at: record.created_at,
      intentId: record.intentId,
      history: this.#history.forPolicy(policy, record.intent.wallet, now, existing ?? undefined),
      approvals: this.#countedApprovals(record),
      compliance_cleared: this.#complianceCleared(record.intent.destination),
      attestation_valid: this.#attestationValid(policy, record.intent.wallet),
    });
  }

  /** Open statuses are re-evaluated on read and on execute (timelocks release, revoked approvals stop counting). */
  async refresh(id: string): Promise<IntentRecord> {
    const r = this.getIntent(id);
    // Busy (an execute or approval in progress): answer with what is stored rather than wait.
    if (!isOpen(r.status) || this.#locks.held(id)) return r;
    return this.#locks.run(id, async () => {
      const cur = this.getIntent(id);
      if (!isOpen(cur.status)) return cur;
      const decision = this.#evaluate(cur, cur);
      const status = STATUS_BY_DECISION[decision.decision];
      if (status === cur.status && canonicalJson(decision) === canonicalJson(cur.decision)) return cur;
      return this.#writeDecision(cur, status, decision);
    });
  }

  /** Commits a re-evaluated decision with the status `to` (an `intent.status` receipt when the status changes). */
  async #writeDecision(cur: IntentRecord, to: IntentStatus, decision: Decision): Promise<IntentRecord> {
    const next = transition(cur, to, this.now(), { decision });
    const receipt = to === cur.status ? null : this.#receipt('intent.status', { intentId: cur.intentId, from: cur.status, to, decision }, cur.intentId);
    await this.#commit(cur, next, receipt);
    return next;
  }

  // ---------------------------------------------------------------- intents

  getIntent(id: string): IntentRecord {
    const r = this.#pending.get(id) ?? this.store.get(id);
    if (!r) throw new NotFoundError('intent', id);
    return r;
  }

  /** POST /intent: content-addressed; a replay returns the stored original unchanged. */
  async createIntent(request: IntentRequest): Promise<IntentRecord> {
    const normalized = normalizeIntent(request);
    // The destination in its one form for the wallet's chain before the id is computed: one
    // address, one intent (the signer normalises the same way before it recomputes the id).
    const wallet = this.wallet(normalized.wallet);
    const intent = normalizeDestination(normalized, this.driverFor(wallet), wallet.chain);
    // The SDK's intentId: it takes the normalised intent as it is (no second validation pass).
    const id = intentId(intent);
    const existing = this.#pending.get(id) ?? this.store.get(id);
    if (existing) return existing;
    const inflight = this.#creating.get(id);
    if (inflight) return inflight;
    const work = (async () => {
      const now = this.now();
      const base = { intentId: id, intent, created_at: now, approvals: [] as SignedApproval[] };
      const decision = this.#evaluate(base, null);
      const status = STATUS_BY_DECISION[decision.decision];
      // The intent's content is already committed to by its id: the receipt body need not repeat it.
      // Members in RFC 8785 order (canonicalize's fast path).
      const receipt = this.#receipt('intent.created', { decision, intentId: id, status }, id);
      const record: IntentRecord = {
        ...base,
        n: this.store.nextN(),
        status,
        decision,
        updated_at: now,
        unsigned_approvals: [],
        execution: null,
        receipt_head: receipt.hash,
      };
      await this.#commit(null, record, receipt, { isNew: true });
      if (record.n % 4096 === 0) this.#pruneHistory(now);
      if (decision.not_before > now && (status === 'timelocked' || status === 'pending_approvals')) this.#observe(record);
      return record;
    })();
    this.#creating.set(id, work);
    try {
      return await work;
    } finally {
      this.#creating.delete(id);
    }
  }

  /** Keeps the in-memory cap history bounded: buckets older than any policy's window are dropped. */
  #pruneHistory(now: number): void {
    let keep = 0;
    for (const p of this.state.policies) {
      const b = lookback(p);
      if (b === null) return;
      keep = Math.max(keep, b);
    }
    this.#history.prune(now, keep + 60);
  }

  listIntents(limit = INTENT_LIST_MAX): Record<string, unknown>[] {
    return this.store.recent(Math.min(Math.max(1, limit), INTENT_LIST_MAX)).map((r) => ({
      intentId: r.intentId,
      status: r.status,
      wallet: r.intent.wallet,
      destination: r.intent.destination,
      amount: r.intent.amount,
      asset_symbol: r.intent.asset_symbol ?? null,
      operation: r.intent.operation.op,
      initiator: r.intent.initiator,
      decision: r.decision.decision,
      created_at: r.created_at,
    }));
  }

  /** POST /intent/{id}/approve-signed. */
  async approveSigned(id: string, approval: SignedApproval): Promise<{ intentId: string; status: IntentStatus; decision: Decision; rejectedBy?: string }> {
    this.getIntent(id);
    return this.#locks.run(id, async () => {
      const cur = this.getIntent(id);
      if (!isOpen(cur.status)) {
        throw new RefusedError(`approvals are closed: intent is ${cur.status}`, { data: { reason: 'approvals_closed', status: cur.status } });
      }
      const check = verifyApprovals([approval], {
        intentId: id,
        approvers: this.#approverKeys(),
        initiator: cur.intent.initiator,
        window: { createdAt: cur.created_at, now: this.now() },
      });
      const problem = check.problems[0];
      if (problem) {
        // The field each problem names (400 `approval.<path>`); the rest name approver_id.
        const paths: Partial<Record<ApprovalProblem, string>> = { wrong_intent: 'intent', bad_signature: 'signature.sig', malformed: '', stale: 'at', future: 'at' };
        const path = paths[problem.reason] ?? 'approver_id';
        throw new ValidationError('approval', [{ path, message: problem.message }], { data: { reason: problem.reason } });
      }
      const approvals = [...cur.approvals.filter((a) => a.approver_id !== approval.approver_id), approval];
      const decision = this.#evaluate({ ...cur, approvals }, cur);
      const rejected = approval.verdict === 'reject';
      const status: IntentStatus = rejected ? 'denied' : STATUS_BY_DECISION[decision.decision];
      const next = transition(cur, status, this.now(), { approvals, decision, ...(rejected ? { rejectedBy: approval.approver_id } : {}) });
      const receipt = this.#receipt('intent.approval', { intentId: id, approval, status, decision }, id);
      await this.#commit(cur, next, receipt);
      this.log({ event: 'approval', verdict: approval.verdict, status });
      return { intentId: id, status, decision, ...(rejected ? { rejectedBy: approval.approver_id } : {}) };
    });
  }

  /** POST /intent/{id}/approve (deprecated): recorded for the audit trail, never counted. */
  async approveUnsigned(id: string): Promise<Record<string, unknown>> {
    this.getIntent(id);
    return this.#locks.run(id, async () => {
      const cur = this.getIntent(id);
      const next: IntentRecord = { ...cur, unsigned_approvals: [...cur.unsigned_approvals, { at: this.now(), via: 'session' }].slice(-64), updated_at: this.now() };
      const receipt = this.#receipt('intent.approve_unsigned', { intentId: id, at: this.now() }, id);
      await this.#commit(cur, next, receipt);
      return {
        intentId: id,
        status: next.status,
        decision: next.decision,
        counted: false,
        deprecated: 'unsigned approvals are recorded but never counted; use POST /intent/{id}/approve-signed',
      };
    });
  }

  // ---------------------------------------------------------------- protections

  async #protectInputs(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver): Promise<ProtectInputs> {
    const facts = await driver.fetchProtectInputs(record.intent, wallet);
    const policy = this.policy(wallet.wallet);
    const known = new Set([...this.state.known_destinations, ...this.store.knownFor(wallet.wallet)]);
    return {
      known_destinations: [...known].slice(0, 10000),
      burned: [...this.state.burned],
      evm_code: facts.evm_code,
      token_owner_burned: facts.token_owner_burned,
      onchain_symbol: facts.onchain_symbol,
      compliance_cleared: this.#complianceCleared(record.intent.destination),
      attestation_valid: this.#attestationValid(policy, wallet.wallet),
    };
  }

  #guards(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver, protect: ProtectInputs) {
    // The signer runs the same function on the same facts before it signs.
    return runIntentGuards({ intent: record.intent, wallet, protect, driver, registry: this.state.assets });
  }

  /** GET /intent/{id}/protect: the guards on live chain inputs, without executing. */
  async protect(id: string): Promise<{ intentId: string; blocked: boolean; findings: Finding[] }> {
    const record = this.getIntent(id);
    const wallet = this.wallet(record.intent.wallet);
    const driver = this.driverFor(wallet);
    let protect: ProtectInputs;
    try {
      protect = await this.#protectInputs(record, wallet, driver);
    } catch (e) {
      throw new InternalError('protections: the ledger could not be read', { cause: e, data: { stage: 'protections', reason: 'ledger_unreachable' } });
    }
    const report = this.#guards(record, wallet, driver, protect);
    return { intentId: id, blocked: report.blocked, findings: report.findings };
  }

  // ---------------------------------------------------------------- execute

  /** POST /intent/{id}/execute. Idempotent; concurrent calls of one intent run one at a time. */
  async execute(id: string): Promise<ExecuteOutcome> {
    this.getIntent(id);
    return this.#locks.run(id, () => this.#execute(id));
  }

  #outcome(record: IntentRecord, wallet: WalletDescriptor | null, fields: Partial<ExecuteOutcome>): ExecuteOutcome {
    const quorum = wallet ? walletMembers(wallet).quorum : 0;
    return {
      intentId: record.intentId,
      status: 'denied',
      chain: wallet?.chain ?? '',
      operation: record.intent.operation.op,
      summary: '',
      weight: 0,
      quorum,
      signers: [],
      receiptHead: this.head,
      findings: [],
      ...fields,
    } as ExecuteOutcome;
  }

  async #execute(id: string): Promise<ExecuteOutcome> {
    let record = this.getIntent(id);
    if (record.status === 'confirmed' && record.execution) return record.execution as ExecuteOutcome;
    if (record.status === 'denied') {
      return this.#outcome(record, this.state.wallets.find((w) => w.wallet === record.intent.wallet) ?? null, {
        status: 'denied',
        summary: `denied: ${record.decision.reasons.join('; ') || 'rejected'}`,
      });
    }
    const wallet = this.wallet(record.intent.wallet);
    if (record.status === 'submitted' && record.submission) return this.#resume(record, wallet);

    // Re-evaluate: timelocks release, revoked approvals stop counting, a failed intent is retried.
    const decision = this.#evaluate(record, record);
    const status = STATUS_BY_DECISION[decision.decision];
    if (status === 'denied') {
      const next = await this.#writeDecision(record, 'denied', decision);
      return this.#outcome(next, wallet, { status: 'denied', summary: `denied: ${decision.reasons.join('; ')}` });
    }
    if (status !== 'allowed') {
      if (status !== record.status || canonicalJson(decision) !== canonicalJson(record.decision)) {
        // A failed intent stays failed until it can be executed again.
        await this.#writeDecision(record, record.status === 'failed' ? record.status : status, decision);
      }
      throw new RefusedError(
        status === 'pending_approvals'
          ? `intent needs approvals: weight ${decision.current_weight} of ${decision.required_weight}`
          : `intent is timelocked until ${decision.not_before}`,
        { data: { stage: 'policy', reason: status, required_weight: decision.required_weight, current_weight: decision.current_weight, not_before: decision.not_before } },
      );
    }
    if (record.status !== 'allowed' && record.status !== 'failed') {
      record = await this.#writeDecision(record, 'allowed', decision);
    } else {
      record = { ...record, decision };
    }

    const driver = this.driverFor(wallet);
    // 1. chain parameters: those of the attempt on record (put to the signers by an earlier execute
    // that stopped short of quorum, or was killed before `submitted`) while its payload can still
    // land: a signer that signed it refuses any other payload until it is dead. Else fresh ones.
    let params;
    try {
      const prior = record.attempt;
      if (prior && typeof driver.payloadFate === 'function' && (await driver.payloadFate(wallet.chain, prior.built)).fate === 'live') {
        params = parseWith(ChainParamsSchema, prior.params, 'attempt.params');
      } else {
        params = await driver.fetchParams(wallet);
      }
    } catch (e) {
      throw this.#stageFault('params', e);
    }
    // 2. protections
    let protect: ProtectInputs;
    try {
      protect = await this.#protectInputs(record, wallet, driver);
    } catch (e) {
      throw this.#stageFault('protections', e);
    }
    const report = this.#guards(record, wallet, driver, protect);
    if (report.blocked) {
      const blocking = report.findings.filter((f) => f.severity === 'block');
      throw new ExecuteRefusedError('protections', 'blocked', blocking.map((f) => `${f.guard}: ${f.detail}`).join('; '), { data: { findings: report.findings } });
    }
    // 3. prepare
    let built;
    try {
      built = driver.buildPayload({ intent: record.intent, wallet, params });
    } catch (e) {
      throw this.#stageFault('prepare', e);
    }
    // 4. signers. The attempt is durable BEFORE any signer sees its payload: whatever a signer
    // signs, a restarted control plane finds on disk and puts to the signers again (they re-sign
    // an identical payload), instead of building a second one they must refuse while the first
    // is live (XRPL: a new LastLedgerSequence; Stellar: a new max_time).
    const attempt = { params, built: { payload: built.payload, digest: built.digest, summary: built.summary } };
    if (!record.attempt || canonicalJson(record.attempt) !== canonicalJson(attempt)) {
      const next: IntentRecord = { ...record, attempt, updated_at: this.now() };
      await this.#commit(record, next, this.#receipt('intent.signing', { intentId: id, digest: built.digest }, id));
      record = next;
    }
    const request = signRequest(record, wallet, this.policy(wallet.wallet), { approvals: this.#countedApprovals(record), params, protect, expected_payload_digest: built.digest });
    const results = await this.#askSigners(wallet, request);
    const signers = results.map((r) => r.outcome);
    const contributions = results.flatMap((r) => (r.contribution ? [r.contribution] : []));
    // 5. assemble
    let assembled;
    try {
      assembled = driver.assemble(built, contributions, wallet);
    } catch (e) {
      throw this.#stageFault('assemble', e);
    }
    if (!assembled.ok) {
      const refusal = results.find((r) => r.refusal);
      if (refusal?.refusal) {
        throw new ExecuteRefusedError('signers', refusal.refusal.reason, `signer ${refusal.outcome.address} refused: ${refusal.refusal.message}`, {
          data: { signer: refusal.outcome.address, signers, weight: assembled.weight, quorum: assembled.quorum },
        });
      }
      const outcome = this.#outcome(record, wallet, {
        status: 'awaiting_signatures',
        summary: built.summary,
        weight: assembled.weight,
        quorum: assembled.quorum,
        signers,
        findings: report.findings,
      });
      const next: IntentRecord = { ...record, execution: outcome, updated_at: this.now() };
      const receipt = this.#receipt('intent.awaiting_signatures', { intentId: id, weight: assembled.weight, quorum: assembled.quorum, signers }, id);
      await this.#commit(record, next, receipt);
      return { ...outcome, receiptHead: receipt.hash };
    }
    // 6. submit: persist `submitted` (with the blob) BEFORE the ledger sees it, so a crash or a
    // concurrent call can only resume this same transaction, never build a second one.
    const submission: Submission = {
      params,
      built: attempt.built,
      blob: assembled.blob,
      txHash: assembled.txHash,
      submitted_at: this.now(),
      signers,
      findings: report.findings,
      weight: assembled.weight,
      quorum: assembled.quorum,
    };
    const submitted = transition(record, 'submitted', this.now(), { submission, attempt: null });
    await this.#commit(record, submitted, this.#receipt('intent.submitting', { intentId: id, txHash: assembled.txHash, digest: built.digest }, id));
    return this.#submitAndConfirm(submitted, wallet, driver, true);
  }

  /**
   * Shows a newly created intent that a timelock holds back to its wallet's signer services (POST
   * /observe), so that each starts its clock now. A signer counts a timelock from the later of
   * created_at and its own first sight of the intent (a control plane cannot backdate created_at);
   * without this an intent first shown to the signers at execute, at its not_before, would be
   * refused for a second full timelock. Observing signs nothing. Best effort, off the request
   * path: a signer that is down now starts its clock when it first sees the intent.
   */
  #observe(record: IntentRecord): void {
    const work = (async () => {
      const wallet = this.wallet(record.intent.wallet);
      const request = observeRequest(record, wallet, this.policy(wallet.wallet));
      const services = signerServices(this.state.signers, walletMembers(wallet).members.map((m) => m.address));
      const signers = await Promise.all(
        services.map(async ({ name, endpoint }) => {
          const s = signerClient(endpoint, this.#opts.signerTimeoutMs ?? 15_000);
          if (!s.client) return { signer: name, observed: s.detail };
          try {
            const res = await s.client.observe(request);
            return { signer: name, observed: res.ok ? `counts from ${res.response.timelock_from}` : `refused (${res.refusal.refused.reason})` };
          } catch (e) {
            return { signer: name, observed: `unreachable: ${e instanceof VaultError ? e.shortMessage : 'fault'}`.replaceAll(s.token, '[redacted]') };
          }
        }),
      );
      this.log({ event: 'observed', intentId: record.intentId, signers });
    })().catch((e: unknown) => {
      this.log({ event: 'observe_failed', intentId: record.intentId, error: e instanceof VaultError ? e.shortMessage : 'fault' });
    });
    this.#observing.add(work);
    void work.finally(() => this.#observing.delete(work));
  }

  /** Puts `request` to every member of the wallet at once, each under its own address. */
  #askSigners(wallet: WalletDescriptor, request: SignRequestBase): Promise<SignerAnswer[]> {
    return Promise.all(walletMembers(wallet).members.map((m) => this.#askSigner(m.address, m.label, { ...request, signer_address: m.address })));
  }

  async #askSigner(address: string, label: string, request: SignRequest): Promise<SignerAnswer> {
    const endpoint = this.state.signers[address];
    const name = endpoint?.label ?? label ?? address;
    if (!endpoint) return { outcome: { signer: name, address, ok: false, detail: 'no signer endpoint configured' } };
    const s = signerClient(endpoint, this.#opts.signerTimeoutMs ?? 15_000);
    if (!s.client) return { outcome: { signer: name, address, ok: false, detail: s.detail } };
    const { client, token } = s;
    try {
      // Only a signer holding every restriction this control plane holds is asked to sign: a
      // revocation it missed while down reaches it here first, or it is not asked at all.
      await this.#restrictSigner(endpoint.url, name, client);
      const res = await client.sign(request);
      if (res.ok) {
        if (res.response.signature.signer_address !== address) {
          return { outcome: { signer: name, address, ok: false, detail: `signer answered for ${res.response.signature.signer_address}` } };
        }
        return { outcome: { signer: name, address, ok: true, detail: `signed (${res.response.backend}); signer receipt ${res.response.receipt_head}` }, contribution: res.response.signature };
      }
      const refusal = { reason: res.refusal.refused.reason, message: res.refusal.message };
      return { outcome: { signer: name, address, ok: false, detail: `refused (${refusal.reason}): ${refusal.message}` }, refusal };
    } catch (e) {
      // It may have restarted on another state: push the restrictions again before the next request.
      this.#restrictionAcks.delete(endpoint.url);
      const msg = e instanceof VaultError ? e.shortMessage : 'unreachable';
      return { outcome: { signer: name, address, ok: false, detail: `unreachable: ${msg}`.replaceAll(token, '[redacted]') } };
    }
  }

  // ---------------------------------------------------------------- restrictions

  /**
   * What every signer must hold before it is asked to sign: a revoke_approver per revoked device.
   * Derived from the state file, so a restart or a reload never loses one; the signers keep every
   * restriction they were given until their operator lifts it, so un-revoking here lifts nothing.
   */
  restrictions(): { set: Restriction[]; digest: string } {
    let r = this.#restrictionSets.get(this.state);
    if (r === undefined) {
      const set = normalizeRestrictions(
        this.state.devices.filter((d) => d.revoked_at !== null).map((d): Restriction => ({ restriction: 'revoke_approver', approver_id: d.id, public_key: d.public_key })),
      );
      r = { set, digest: restrictionDigest(set) };
      this.#restrictionSets.set(this.state, r);
    }
    return r;
  }

  /**
   * Makes sure the signer at `url` (`name` in the log) has acknowledged the current restriction
   * set, pushing it when it has not (or not within RESTRICTION_ACK_SECONDS). Throws when the
   * signer does not acknowledge it: the caller then treats the signer as unreachable.
   */
  async #restrictSigner(url: string, name: string, client: SignerClient): Promise<void> {
    const { set, digest } = this.restrictions();
    if (set.length === 0) return;
    const ack = this.#restrictionAcks.get(url);
    if (ack !== undefined && ack.digest === digest && this.now() - ack.at < RESTRICTION_ACK_SECONDS) return;
    const key = `${digest} ${url}`;
    let push = this.#restrictionPushes.get(key);
    if (push === undefined) {
      push = (async () => {
        try {
          const res = await client.restrict(set);
          if (res.received !== digest) throw new InternalError(`the signer acknowledged restriction set ${res.received}, not ${digest}`);
          this.#restrictionAcks.set(url, { digest, at: this.now() });
          this.log({ event: 'restrictions_acknowledged', signer: name, digest, count: res.count });
        } catch (e) {
          this.log({ event: 'restrictions_not_acknowledged', signer: name, digest, error: e instanceof Error ? e.name : 'unknown' });
          throw new InternalError(`restrictions not acknowledged: ${e instanceof VaultError ? e.shortMessage : 'fault'}`, { cause: e });
        }
      })().finally(() => this.#restrictionPushes.delete(key));
      this.#restrictionPushes.set(key, push);
    }
    await push;
  }

  /** Pushes the restriction set to every configured signer service (each URL once), now. */
  async #pushRestrictions(): Promise<{ signer: string; ok: boolean; detail: string }[]> {
    const { digest } = this.restrictions();
    return Promise.all(
      signerServices(this.state.signers, Object.keys(this.state.signers)).map(async ({ name, endpoint }) => {
        const s = signerClient(endpoint, this.#opts.signerTimeoutMs ?? 15_000);
        if (!s.client) return { signer: name, ok: false, detail: s.detail };
        try {
          await this.#restrictSigner(endpoint.url, name, s.client);
          return { signer: name, ok: true, detail: `restrictions ${digest} acknowledged` };
        } catch (e) {
          const msg = e instanceof VaultError ? e.shortMessage : 'fault';
          return { signer: name, ok: false, detail: `${msg}; pushed again before it is next asked to sign`.replaceAll(s.token, '[redacted]') };
        }
      }),
    );
  }

  #stageFault(stage: 'params' | 'protections' | 'prepare' | 'assemble' | 'submit' | 'confirm', e: unknown): ExecuteRefusedError {
    const reason = e instanceof ValidationError ? 'invalid' : e instanceof VaultError && e.code === -32603 ? 'ledger_unreachable' : 'refused';
    const msg = e instanceof VaultError ? e.shortMessage : 'fault';
    this.log({ event: 'execute_fault', stage, reason, error: e instanceof Error ? e.name : 'unknown' });
    return new ExecuteRefusedError(stage, reason, msg, { cause: e });
  }

  async #resume(record: IntentRecord, wallet: WalletDescriptor): Promise<ExecuteOutcome> {
    const driver = this.driverFor(wallet);
    const sub = record.submission as Submission;
    // Already on the ledger (or provably dead)? Then never submit again.
    let first;
    try {
      first = await driver.confirm(wallet.chain, sub.txHash, sub.built);
    } catch (e) {
      throw this.#stageFault('confirm', e);
    }
    if (first.status === 'pending') return this.#submitAndConfirm(record, wallet, driver, true);
    return this.#settle(record, wallet, first);
  }

  async #submitAndConfirm(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver, submit: boolean): Promise<ExecuteOutcome> {
    const sub = record.submission as Submission;
    let submitResult: Record<string, unknown> = {};
    if (submit) {
      // The identical blob (same transaction hash): a ledger applies it at most once.
      let res;
      try {
        res = await driver.submit(wallet.chain, sub.blob);
      } catch (e) {
        // Unknown whether the ledger saw it: stay `submitted`; the next execute resumes.
        throw this.#stageFault('submit', e);
      }
      submitResult = { ...res };
      if (res.status === 'rejected' && res.code !== 'already_applied') {
        const check = await driver.confirm(wallet.chain, sub.txHash, sub.built).catch(() => null);
        if (check?.status === 'confirmed') return this.#settle(record, wallet, check, submitResult);
        const failed = transition(record, 'failed', this.now(), { attempts: (record.attempts ?? 0) + 1, submission: null, execution: { intentId: record.intentId, txHash: sub.txHash, submit: submitResult } as Partial<ExecuteOutcome> });
        await this.#commit(record, failed, this.#receipt('intent.failed', { intentId: record.intentId, stage: 'submit', code: res.code }, record.intentId));
        throw new ExecuteRefusedError('submit', res.code, `the ledger rejected the transaction: ${res.message}`, { data: { txHash: sub.txHash, retriable: res.retriable } });
      }
    }
    const attempts = this.#opts.confirmAttempts ?? 40;
    const delay = this.#opts.confirmDelayMs ?? 250;
    for (let i = 0; i < attempts; i++) {
      let c;
      try {
        c = await driver.confirm(wallet.chain, sub.txHash, sub.built);
      } catch (e) {
        throw this.#stageFault('confirm', e);
      }
      if (c.status !== 'pending') return this.#settle(record, wallet, c, submitResult);
      if (this.#closed) break;
      await sleep(delay);
    }
    throw new ExecuteRefusedError('confirm', 'pending', `transaction ${sub.txHash} is not confirmed yet; execute again to resume`, { data: { txHash: sub.txHash } });
  }

  async #settle(
    record: IntentRecord,
    wallet: WalletDescriptor,
    c: Exclude<Awaited<ReturnType<ChainDriver['confirm']>>, { status: 'pending' }>,
    submitResult: Record<string, unknown> = {},
  ): Promise<ExecuteOutcome> {
    const sub = record.submission as Submission;
    if (c.status === 'failed') {
      if (!c.dead) throw new ExecuteRefusedError('confirm', c.code, c.message, { data: { txHash: sub.txHash } });
      const failed = transition(record, 'failed', this.now(), { attempts: (record.attempts ?? 0) + 1, submission: null, execution: { intentId: record.intentId, txHash: sub.txHash, submit: { ...submitResult, confirm: c } } as Partial<ExecuteOutcome> });
      await this.#commit(record, failed, this.#receipt('intent.failed', { intentId: record.intentId, stage: 'confirm', code: c.code, txHash: sub.txHash }, record.intentId));
      throw new ExecuteRefusedError('confirm', c.code, `the transaction failed on the ledger: ${c.message}`, { data: { txHash: sub.txHash } });
    }
    const mpt = c.outcome?.['mptIssuanceId'];
    assertTransition(record.status, 'confirmed', record.intentId); // before the receipt is chained
    const receipt = this.#receipt('intent.confirmed', { intentId: record.intentId, txHash: c.txHash, code: c.code, ledger: c.ledger ?? null }, record.intentId);
    const outcome = this.#outcome(record, wallet, {
      status: 'confirmed',
      txHash: c.txHash,
      summary: sub.built.summary,
      weight: sub.weight,
      quorum: sub.quorum,
      signers: sub.signers,
      submit: { ...submitResult, code: c.code, ...(c.ledger !== undefined ? { ledger: c.ledger } : {}), ...(c.outcome ? { outcome: c.outcome } : {}) },
      receiptHead: receipt.hash,
      findings: sub.findings,
      ...(mpt ? { mptIssuanceId: mpt } : {}),
    });
    const next = transition(record, 'confirmed', this.now(), { execution: outcome });
    await this.#commit(record, next, receipt, { known: [wallet.wallet, record.intent.destination] });
    this.log({ event: 'confirmed', chain: wallet.chain });
    return outcome;
  }

  #resumeInflight(): void {
    const ids = this.store.inflightIds();
    if (ids.length === 0) return;
    this.log({ event: 'resume', intents: ids.length });
    void (async () => {
      for (const id of ids) {
        if (this.#closed) return;
        await this.execute(id).catch((e: unknown) => this.log({ event: 'resume_failed', reason: e instanceof VaultError ? e.shortMessage : 'fault' }));
      }
    })();
  }

  // ---------------------------------------------------------------- wallets, estate, reconcile, recovery

  walletsView(): Record<string, unknown>[] {
    return this.state.wallets.map((w) => {
      const p = this.state.policies.find((x) => x.wallet === w.wallet);
      const { members, quorum } = walletMembers(w);
      return { ...w, members: members.length, quorum, policy_version: p?.version ?? null, policy_digest: p ? policyDigest(p) : null };
    });
  }

  async estate(): Promise<Record<string, unknown>> {
    const reg = this.state.assets;
    const wallets = await Promise.all(
      this.state.wallets.map(async (w) => {
        try {
          const balances = await this.driverFor(w).balances(w);
          return {
            wallet: w.wallet,
            chain: w.chain,
            balances: balances.map((b) => {
              const canonical =
                b.asset === 'native' ||
                reg.assets.some((a) => a.chain === w.chain && a.symbol.toUpperCase() === b.symbol.toUpperCase() && (a.issuer == null || b.asset === a.issuer || b.asset.includes(a.issuer)));
              const reserved = reg.reserved.some((r) => r.toUpperCase() === b.symbol.toUpperCase());
              return { ...b, flags: { ...b.flags, canonical, reserved, counterfeit: reserved && !canonical } };
            }),
          };
        } catch (e) {
          return { wallet: w.wallet, chain: w.chain, balances: [], error: e instanceof VaultError ? e.shortMessage : 'ledger unreachable' };
        }
      }),
    );
    return { wallets, read_at: this.now() };
  }

  async reconcile(walletId: string): Promise<{ wallet: string; chain: string; clean: boolean; checked: unknown[]; drift: unknown[]; balances: unknown[]; control: unknown }> {
    const w = this.wallet(walletId);
    const driver = this.driverFor(w);
    let state;
    let balances;
    try {
      [state, balances] = await Promise.all([driver.controlState(w), driver.balances(w)]);
    } catch (e) {
      throw new InternalError('reconcile: the ledger could not be read', { cause: e, data: { reason: 'ledger_unreachable' } });
    }
    const { clean, checked, drift } = compareControl(w, state);
    return { wallet: w.wallet, chain: w.chain, clean, checked, drift, balances, control: state };
  }

  async recoveryStatus(): Promise<Record<string, unknown>> {
    const wallets = await Promise.all(
      this.state.wallets.map(async (w) => {
        try {
          const s = await this.driverFor(w).controlState(w);
          const total = s.members.reduce((a, m) => a + m.weight, 0);
          const heaviest = s.members.reduce((a, m) => Math.max(a, m.weight), 0);
          const survives = s.quorum > 0 && total - heaviest >= s.quorum;
          const reachable = s.quorum > 0 && total >= s.quorum;
          const tier = s.masterKeyEnabled ? 'single_key' : !reachable ? 'unrecoverable' : survives ? 'resilient' : 'fragile';
          const critical = s.members.filter((m) => total - m.weight < s.quorum).map((m) => m.address);
          return { wallet: w.wallet, chain: w.chain, tier, survives_loss_of_any_one_key: survives && !s.masterKeyEnabled, total_weight: total, quorum: s.quorum, critical_keys: critical, proof: { source: 'ledger', read_at: this.now(), control_state: s } };
        } catch (e) {
          return { wallet: w.wallet, chain: w.chain, tier: 'unknown', survives_loss_of_any_one_key: null, error: e instanceof VaultError ? e.shortMessage : 'ledger unreachable' };
        }
      }),
    );
    return { wallets, read_at: this.now() };
  }

  snapshot(filter: { wallet?: string | undefined }): Record<string, unknown> {
    const recent = this.listIntents(INTENT_LIST_MAX).filter((i) => filter.wallet === undefined || i['wallet'] === filter.wallet);
    return {
      health: { ok: true, receipts: this.receiptCount, receipt_head: this.head },
      wallets: this.walletsView().filter((w) => filter.wallet === undefined || w['wallet'] === filter.wallet),
      pending: recent.filter((i) => i['status'] === 'pending_approvals' || i['status'] === 'timelocked'),
      recent: recent.slice(0, 20),
      devices: this.state.devices.map(publicDevice),
      at: this.now(),
    };
  }

  // ---------------------------------------------------------------- pairing and devices

  pairCreate(role: Device['role'], label: string): { code: string; challenge: string; expires_at: number; role: string } {
    const now = this.now();
    for (const [k, p] of this.#pairing) if (p.expires_at <= now) this.#pairing.delete(k);
    if (this.#pairing.size >= 64) throw new RefusedError('too many open pairing codes', { data: { reason: 'pairing_limit' } });
    const code = randomBytes(16).toString('base64url');
    const challenge = randomBytes(32).toString('hex');
    const p: PairingCode = { code, challenge, role, label, expires_at: now + PAIRING_TTL_SECONDS, failures: 0 };
    this.#pairing.set(code, p);
    this.log({ event: 'pair_create', role });
    return { code, challenge, expires_at: p.expires_at, role };
  }

  /** The open pairing code, or a refusal that does not say whether it existed. */
  #openCode(code: string): PairingCode {
    const p = this.#pairing.get(code);
    if (!p || p.expires_at <= this.now()) {
      if (p) this.#pairing.delete(code);
      throw new RefusedError('pairing code invalid, used or expired', { data: { reason: 'pairing_code' } });
    }
    return p;
  }

  pairPayload(code: string, baseUrl: string): string {
    const p = this.#openCode(code);
    return JSON.stringify({ url: baseUrl, code: p.code, challenge: p.challenge });
  }

  /**
   * POST /pair/claim (no session). No shared counter: a code is 16 random bytes, so a claim with an
   * unknown code is refused by a map lookup whoever floods them, and failures are counted per code
   * (three bad signatures burn it), which only a holder of that code can spend.
   */
  async pairClaim(body: { code: string; public_key: string; signature: string; label: string }): Promise<Record<string, unknown>> {
    const p = this.#openCode(body.code);
    const pub = fromHex(body.public_key, 'public_key', 32);
    const sig = fromHex(body.signature, 'signature', 64);
    if (!verifyEd25519(sig, fromHex(p.challenge, 'challenge', 32), pub)) {
      p.failures += 1;
      if (p.failures >= 3) this.#pairing.delete(p.code);
      throw new ValidationError('claim', [{ path: 'signature', message: 'signature over the challenge does not verify' }], { data: { reason: 'bad_signature' } });
    }
    return this.#stateLock.run(STATE_FILE, async () => {
      // Re-checked under the lock: a concurrent claim may have used the code or paired this key.
      if (this.#openCode(body.code) !== p) throw new RefusedError('pairing code invalid, used or expired', { data: { reason: 'pairing_code' } });
      if (this.state.devices.some((d) => d.public_key === body.public_key)) {
        throw new ValidationError('claim', [{ path: 'public_key', message: 'a device with this key is already paired' }], { data: { reason: 'duplicate' } });
      }
      const device: Device = {
        id: `dev_${sha256Hex(body.public_key).slice(0, 16)}`,
        role: p.role,
        label: body.label || p.label,
        public_key: body.public_key,
        paired_at: this.now(),
        revoked_at: null,
      };
      // Everything is built and checked before anything is written: the new state as the loader
      // reads it back, and the receipt. A refusal here leaves the code, the file and the chain as
      // they were.
      const next = encodeState({ ...this.state, devices: [...this.state.devices, device] });
      const receipt = this.#draftReceipt('device.paired', { device });
      this.#pairing.delete(p.code); // single use, consumed before the first await
      // Crash order: the receipt, then the state. A crash between leaves a receipt for a pairing
      // that never took effect (the device got no answer and pairs again), never a device whose
      // approvals count without a receipt saying so.
      await this.#appendReceipt(receipt);
      this.#writeState(next.text);
      this.state = next.state;
      this.log({ event: 'paired', role: device.role });
      return { paired: true, device: publicDevice(device) };
    });
  }

  devices(): Record<string, unknown>[] {
    return this.state.devices.map(publicDevice);
  }

  async revokeDevice(id: string): Promise<Record<string, unknown>> {
    const outcome = await this.#stateLock.run(STATE_FILE, async () => {
      const d = this.state.devices.find((x) => x.id === id);
      if (!d) throw new NotFoundError('device', id);
      if (d.revoked_at !== null) return { id, revoked: true, revoked_at: d.revoked_at };
      const revoked: Device = { ...d, revoked_at: this.now() };
      // Built and checked before anything is written (see pairClaim).
      const next = encodeState({ ...this.state, devices: this.state.devices.map((x) => (x.id === id ? revoked : x)) });
      const receipt = this.#draftReceipt('device.revoked', { id, at: revoked.revoked_at });
      // Crash order: the state, then the receipt (the reverse of pairing). A crash between leaves
      // the device revoked without its receipt (authority lost, never kept), rather than a receipt
      // for a revocation that the next start would not apply. No await until the receipt is chained.
      this.#writeState(next.text);
      this.state = next.state;
      await this.#appendReceipt(receipt);
      this.log({ event: 'revoked' });
      return { id, revoked: true, revoked_at: revoked.revoked_at };
    });
    // Committed (or a repeat, so an operator can retry signers that missed it): every signer learns
    // it now, outside the state lock; one that misses it learns it before it is next asked to sign.
    return { ...outcome, signers: await this.#pushRestrictions() };
  }

  health(): Record<string, unknown> {
    return {
      ok: true,
      service: 'vault-control-plane',
      version: '1.0.0',
      receipts: this.receiptCount,
      receipt_head: this.head,
      receipt_anchor_ok: this.anchorOk,
      receipt_public_key: this.receiptSigner.publicKeyHex,
      intents: this.store.size,
      chains: this.drivers.chains(),
      uptime_s: this.now() - this.startedAt,
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#observing]);
    await this.store.close();
    this.#release();
  }
}

function publicDevice(d: Device): Record<string, unknown> {
  return { id: d.id, role: d.role, label: d.label, public_key: d.public_key, paired_at: d.paired_at, revoked_at: d.revoked_at, revoked: d.revoked_at !== null };
}

