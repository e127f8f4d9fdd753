/**
 * @module control-plane/service
 * The keyless control plane's operations, independent of HTTP, as one object the app calls:
 * `ControlPlane` opens a state directory and composes the parts, each in its own module —
 * intents and their evaluation (intents.ts), signed approvals (approvals.ts), the execute pipeline
 * stage by stage (execute.ts), protections (protect.ts), the signers (signers.ts) and the
 * restrictions they must hold (restrictions.ts), pairing and devices (devices.ts), estate,
 * reconcile and recovery (estate.ts) — over what they share (core.ts: state, drivers, locks, and
 * the one writer of intents and receipts, writer.ts). Every status an intent takes is checked
 * against the lifecycle table (status.ts). Every write is committed to disk before the operation
 * resolves.
 */
import {
  fromHex,
  rulesCountingApprover,
  parseWith,
  RefusedError,
  SessionError,
  ValidationError,
  type ChainDriver,
  type Decision,
  type DriverRegistry,
  type ExecuteOutcome,
  type Finding,
  type IntentRequest,
  type IntentStatus,
  type PolicySet,
  type CancelRequest,
  type CancelResult,
  type Restriction,
  type EventFilter,
  type PasskeyRegistration,
  type SignedApproval,
  type VaultEvent,
  type WalletDescriptor,
} from '@vault/sdk';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readSecretFile, writeFileAtomic } from '../http/files.js';
import { acquireStateLock } from '../state-lock.js';
import { Approvals } from './approvals.js';
import {
  buildRegistry,
  checkStateAgainstDrivers,
  Core,
  governedBefore,
  loadDrivers,
  markGoverned,
  LOCK_FILE,
  PASSPHRASE_FILE,
  RECEIPT_KEY_FILE,
  STATE_FILE,
  REPLICA_DIR,
  STORE_DIR,
  type ControlPlaneOptions,
} from './core.js';
import { Devices, publicDevice } from './devices.js';
import { Estate } from './estate.js';
import { EVENT_HEARTBEAT_SECONDS, EVENT_STREAM_BUFFER_BYTES, EVENT_STREAMS_MAX } from './event-stream.js';
import { Execution } from './execute.js';
import { INTENT_LIST_MAX, Intents, type IntentListFilter, type PolicySimulation } from './intents.js';
import { EXPIRY_SWEEP_MS, Lifecycle } from './lifecycle.js';
import { Protections } from './protect.js';
import { Changes } from './governance.js';
import { Restrictions } from './restrictions.js';
import { API_KEY_PREFIX, Identities } from './identities.js';
import { PassphraseFileSchema, ReceiptSigner, type PassphraseFile } from './secrets.js';
import { SessionStore, UnlockQueue, type Principal } from './sessions.js';
import { DeviceAuth, forbidden } from './device-auth.js';
import { Signers } from './signers.js';
import { admitGoverned, encodeState, LEGACY_OPERATOR, readStateFile, readStateText, type Device, type StateFile } from './state.js';
import { IntentStore, type IntentRecord } from './store.js';
import { PostgresLog, writerUrl } from './postgres/log.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Webhooks } from './webhooks/service.js';
import { logFeed } from './webhooks/feed.js';

export { loadDrivers, LOCK_FILE, PASSPHRASE_FILE, RECEIPT_KEY_FILE, STATE_FILE, STATE_SCHEMA_FILE, STORE_DIR, type ControlPlaneOptions } from './core.js';
export { PAIRING_TTL_SECONDS } from './devices.js';
export { INTENT_LIST_MAX } from './intents.js';
export { CANCEL_PUSH_GRACE_SECONDS, RESTRICTION_ACK_SECONDS } from './restrictions.js';
export { EXPIRY_SWEEP_BATCH, EXPIRY_SWEEP_MS } from './lifecycle.js';

/**
 * Stored intent as GET /intent/{id} shows it (internal bookkeeping left out), with its expires_at
 * (`expiresAt` for a record written before intents expired).
 */
export function publicIntent(r: IntentRecord, expiresAt?: number): Record<string, unknown> {
  const { n: _n, submission, attempt: _attempt, ...rest } = r;
  const out: Record<string, unknown> = { ...rest };
  if (out['expires_at'] === undefined && expiresAt !== undefined) out['expires_at'] = expiresAt;
  if (submission) out['submitted'] = { txHash: submission.txHash, submitted_at: submission.submitted_at, summary: submission.built.summary };
  return out;
}

export class ControlPlane {
  readonly stateDir: string;
  readonly store: IntentStore;
  readonly sessions: SessionStore;
  readonly unlockQueue: UnlockQueue;
  readonly deviceAuth: DeviceAuth;
  readonly receiptSigner: ReceiptSigner;
  readonly now: () => number;
  readonly startedAt: number;
  readonly #core: Core;
  /** Named operator accounts, API keys, and the unlock queue of each account. */
  readonly identities: Identities;
  readonly #protections: Protections;
  readonly #intents: Intents;
  readonly #approvals: Approvals;
  readonly #restrictions: Restrictions;
  readonly #lifecycle: Lifecycle;
  readonly #signers: Signers;
  readonly #execution: Execution;
  readonly #devices: Devices;
  readonly #estate: Estate;
  /** Webhook endpoints and their delivery (webhooks/). */
  readonly webhooks: Webhooks;
  /** Change sets approved by the admin quorum (governance.ts). */
  readonly changes: Changes;
  #release: () => void = () => undefined;
  /** The shared log and writer's lease when running on PostgreSQL; null for LMDB alone. */
  readonly database: PostgresLog | null;
  /** Why this instance stopped writing after holding the lease (GET /ready reports it), or null. */
  leaseLost: string | null = null;

  private constructor(core: Core, passphrase: PassphraseFile, receiptSigner: ReceiptSigner, database: PostgresLog | null) {
    const opts = core.opts;
    this.#core = core;
    this.database = database;
    this.stateDir = core.stateDir;
    this.store = core.store;
    this.now = core.now;
    this.startedAt = this.now();
    this.receiptSigner = receiptSigner;
    this.sessions = new SessionStore(this.now, opts.sessionIdleSeconds, opts.sessionAbsoluteSeconds);
    this.identities = new Identities(core, this.sessions, passphrase, opts.unlockQueueMax);
    // The legacy passphrase's queue, as before accounts existed.
    this.unlockQueue = this.identities.legacyQueue;
    this.deviceAuth = new DeviceAuth(core, this.sessions);
    this.#protections = new Protections(core);
    this.#restrictions = new Restrictions(core);
    this.changes = new Changes(core, () => this.webhooks);
    this.#signers = new Signers(core, this.#restrictions, this.changes);
    this.#lifecycle = new Lifecycle(core, this.#restrictions);
    this.#intents = new Intents(core, this.#protections, this.#lifecycle, (record) => this.#signers.observe(record));
    this.#approvals = new Approvals(core, this.#intents);
    this.#execution = new Execution(core, this.#intents, this.#protections, this.#signers);
    this.#devices = new Devices(core, this.#restrictions);
    this.#estate = new Estate(core);
    this.webhooks = new Webhooks(core, { feed: opts.events ?? logFeed(core.store), resolve: opts.webhookResolver, retry: opts.webhookRetry, progress: database ?? undefined });
  }

  /** Opens a state directory created by `vault-control-plane init`. */
  static async open(opts: ControlPlaneOptions): Promise<ControlPlane> {
    const dir = opts.stateDir;
    const statePath = join(dir, STATE_FILE);
    if (!existsSync(statePath)) {
      throw new ValidationError('state', [{ path: '', message: `${statePath} does not exist; run vault-control-plane init --state-dir ${dir}` }]);
    }
    const passphrase = parseWith(PassphraseFileSchema, JSON.parse(readSecretFile(join(dir, PASSPHRASE_FILE))), 'operator.json');
    const seed = fromHex(readSecretFile(join(dir, RECEIPT_KEY_FILE)).trim(), 'receipt.key', 32);
    const signer = new ReceiptSigner(seed);
    const injected = opts.drivers ?? [];
    // One control plane per state directory: two would fork the receipt chain and could both submit.
    const release = acquireStateLock(join(dir, LOCK_FILE), (pid, self) =>
      new ValidationError('state', [{ path: '', message: self ? `${dir} is already open in this process` : `${dir} is in use by another control plane (pid ${pid})` }]),
    );
    let store: IntentStore | null = null;
    let database: PostgresLog | null = null;
    let built: { encoded: ReturnType<typeof encodeState> | null; state: StateFile; loaded: ChainDriver[]; registry: DriverRegistry<ChainDriver> };
    const where: { core?: Core } = {};
    try {
      if (opts.database) {
        const db = opts.database;
        if (db.advertiseUrl !== undefined && writerUrl(db.advertiseUrl) === null) {
          throw new ValidationError('database', [{ path: 'advertiseUrl', message: 'must be an http(s) URL without credentials, at most 2048 characters' }]);
        }
        database = await PostgresLog.open({
          url: db.url,
          instanceId: db.instanceId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
          advertiseUrl: () => db.advertiseUrl ?? (where.core?.listeningPort !== undefined ? `http://127.0.0.1:${where.core.listeningPort}` : ''),
          ...(db.leaseSeconds !== undefined ? { leaseSeconds: db.leaseSeconds } : {}),
          ...(db.pollMs !== undefined ? { pollMs: db.pollMs } : {}),
          log: (event) => where.core?.log(event),
        });
        store = new IntentStore(join(dir, REPLICA_DIR), { sealReceipt: (r) => signer.seal(r), shared: database, signLogEntry: (d) => signer.signLogEntry(d), receiptPublicKey: signer.publicKeyHex });
        database.attachStore(store);
        // The log, not this directory's copy, holds the state in force: bring state.json up to it first.
        await database.catchUp();
        const shared = store.sharedState;
        if (shared !== undefined && shared !== readStateText(statePath)) writeFileAtomic(statePath, shared, 0o600);
      }
      // Under governance a hand edit of a governed section is refused here too, naming it.
      const admitted = admitGoverned(readStateFile(statePath), null, governedBefore(dir));
      const encoded = admitted.sealed ? encodeState(admitted.state) : null;
      const state = encoded ? encoded.state : admitted.state;
      const loaded = await loadDrivers(state.drivers, dir);
      const registry = buildRegistry([...injected, ...loaded]);
      checkStateAgainstDrivers(state, registry);
      built = { encoded, state, loaded, registry };
      store ??= new IntentStore(join(dir, STORE_DIR), { sync: opts.storeSync !== false, sealReceipt: (r) => signer.seal(r) });
    } catch (e) {
      await store?.close().catch(() => undefined);
      await database?.close();
      release();
      throw e;
    }
    const { encoded, state, loaded, registry } = built;
    const core = new Core(opts, state, { injected, loaded, registry }, store, signer);
    where.core = core;
    const cp = new ControlPlane(core, passphrase, signer, database);
    cp.#release = release;
    if (encoded) {
      // Governance first set up: the digests of its sections are recorded in state.json now.
      try {
        await core.writeState(encoded);
      } catch (e) {
        await cp.close();
        throw e;
      }
      core.log({ event: 'governance_sealed', version: state.governance?.policy.version ?? 0 });
    }
    if (state.governance) {
      try {
        markGoverned(dir);
      } catch (e) {
        await cp.close();
        throw e;
      }
    }
    try {
      cp.webhooks.checkSecrets();
    } catch (e) {
      await cp.close();
      throw e;
    }
    if (!database) {
      cp.#startWriting();
      return cp;
    }
    // On PostgreSQL the instance starts as a standby serving reads; it writes once it holds the lease.
    store.onSharedState((text) => core.adoptSharedState(text));
    // A standby's cap history would go stale as the log moves: it is read afresh when next needed.
    store.onEvents(() => {
      if (database.role !== 'writer') core.writer.history.clear();
    });
    database.attach(store, {
      promoted: async () => {
        store.revive();
        core.writer.resync();
        if (!core.writer.anchorOk) throw new Error('the replica of the receipt log does not match its anchor');
        cp.leaseLost = null;
      },
      writing: () => cp.#startWriting(),
      demoted: (reason) => {
        cp.leaseLost = reason;
        void cp.#lifecycle.stop();
        void cp.webhooks.close();
        opts.database?.onLeaseLost?.(reason);
      },
    });
    try {
      await database.start();
    } catch (e) {
      await cp.close();
      throw e;
    }
    return cp;
  }

  /** What only the writer runs: webhook delivery, resuming executions left in flight, the expiry sweep. */
  #startWriting(): void {
    this.webhooks.start();
    if (this.#core.opts.resumeOnStart !== false) this.#execution.resumeInflight();
    this.#lifecycle.start(this.#core.opts.expirySweepMs ?? EXPIRY_SWEEP_MS);
  }

  /** Tells the control plane the port it listens on (the default passkey origin, Core.webauthn). */
  listening(port: number): void {
    this.#core.listeningPort = port;
    this.database?.advertise();
  }

  /** The state file in force (replaced whole by reload, pairing and revocation). */
  get state(): StateFile {
    return this.#core.state;
  }

  get drivers(): DriverRegistry<ChainDriver> {
    return this.#core.drivers;
  }

  /** Whether the receipt log's tail matched its anchored head and length at start-up. */
  get anchorOk(): boolean {
    return this.#core.writer.anchorOk;
  }

  get head(): string {
    return this.#core.writer.head;
  }

  /** True once close() has begun: GET /ready says 503 from then on. */
  get closing(): boolean {
    return this.#core.closed;
  }

  get receiptCount(): number {
    return this.#core.writer.receiptCount;
  }

  log(event: Record<string, unknown>): void {
    this.#core.log(event);
  }

  verifyLedger(): ReturnType<Core['writer']['verifyLedger']> {
    return this.#core.writer.verifyLedger();
  }

  // ---------------------------------------------------------------- events (the outbox in store.ts)

  /** Up to `limit` committed events after `afterSeq` that pass `filter`, in log order. */
  eventsAfter(afterSeq: number, limit: number, filter?: EventFilter): VaultEvent[] {
    return this.store.eventsAfter(afterSeq, limit, filter);
  }

  /** Calls `listener` with each commit's events once durable, in log order; returns the unsubscribe function. */
  onEvents(listener: (events: readonly VaultEvent[]) => void): () => void {
    return this.store.onEvents(listener);
  }

  /** Heartbeat interval and slow-consumer bound of GET /events/stream. */
  get eventStreamOptions(): { heartbeatMs: number; maxBufferBytes: number } {
    const o = this.#core.opts;
    return { heartbeatMs: (o.eventHeartbeatSeconds ?? EVENT_HEARTBEAT_SECONDS) * 1000, maxBufferBytes: o.eventStreamBufferBytes ?? EVENT_STREAM_BUFFER_BYTES };
  }

  #openStreams = 0;

  /** Takes a place for one event stream (refused with 503 past the cap); the function gives it back once. */
  openEventStream(): () => void {
    if (this.#openStreams >= (this.#core.opts.eventStreamsMax ?? EVENT_STREAMS_MAX)) {
      throw Object.assign(new RefusedError('too many event streams open; close one and retry', { data: { reason: 'busy' } }), { httpStatus: 503 });
    }
    this.#openStreams++;
    let released = false;
    return () => {
      if (!released) this.#openStreams--;
      released = true;
    };
  }

  // ---------------------------------------------------------------- sessions

  /**
   * Every attempt is checked, one at a time in arrival order, in its account's own queue
   * (UnlockQueue, identities.ts): no counter a third party could fill to refuse an operator, no
   * answer that differs for the right passphrase except its result, and guesses against one
   * account never delay another. `name` absent is the legacy passphrase (the first admin).
   * `signal` withdraws an attempt whose client has gone.
   */
  async unlock(passphrase: string, signal?: AbortSignal, name?: string): Promise<{ token: string; expires_at: number; accounts: string[] }> {
    let principal: Principal;
    try {
      principal = await this.identities.unlock(name, passphrase, signal);
    } catch (e) {
      if (e instanceof SessionError && e.data?.['reason'] === 'passphrase') this.log({ event: 'unlock_failed' });
      throw e;
    }
    const s = this.sessions.create(principal);
    this.log({ event: 'unlocked', role: principal.kind === 'operator' ? principal.role : undefined });
    return { token: s.token, expires_at: s.expires_at, accounts: this.state.wallets.map((w) => w.wallet) };
  }

  /**
   * The principal of a bearer token: an API key (`vk_…`, checked each request) or a live session.
   * A device session speaks for the device as state.json has it now: a change set (or a reload)
   * that revoked it, changed its role or replaced its key ends its sessions here, as
   * POST /devices/{id}/revoke does, so a demoted device cannot keep its old role for hours; a
   * named operator account likewise.
   */
  authenticate(token: string | null): Principal {
    if (token !== null && token.startsWith(API_KEY_PREFIX)) return this.identities.authenticateKey(token);
    const { principal } = this.sessions.touch(token);
    if (principal.kind === 'device') {
      const d = this.state.devices.find((x) => x.id === principal.id);
      if (!d || d.revoked_at !== null || d.role !== principal.role || d.public_key !== principal.public_key) {
        // This token only: a stale tab must not end the session the device opened since.
        if (token !== null) this.sessions.revoke(token);
        throw new SessionError('device session ended: the device was revoked, or its role or key changed; sign in again', { data: { reason: 'device' } });
      }
    }
    // A named account as state.json has it now (a hand edit and a reload may disable or demote it);
    // the legacy passphrase (operator.json) is no account.
    if (principal.kind === 'operator' && principal.name !== LEGACY_OPERATOR) {
      const o = this.state.operators.find((x) => x.name === principal.name);
      if (!o || o.disabled_at !== null || o.role !== principal.role) {
        if (token !== null) this.sessions.revoke(token);
        throw new SessionError('session ended: the account was disabled or its role changed; unlock again', { data: { reason: 'account' } });
      }
    }
    return principal;
  }

  // ---------------------------------------------------------------- state (core.ts)

  wallet(id: string): WalletDescriptor {
    return this.#core.wallet(id);
  }

  /** The wallet's policy, validated once and frozen. */
  policy(walletId: string): Readonly<PolicySet> {
    return this.#core.policy(walletId);
  }

  driverFor(wallet: WalletDescriptor): ChainDriver {
    return this.#core.driverFor(wallet);
  }

  /** POST /admin/reload: an invalid file is refused with the reason and the running state kept. */
  reload(): ReturnType<Core['reload']> {
    return this.#core.reload();
  }

  // ---------------------------------------------------------------- intents (intents.ts, approvals.ts)

  getIntent(id: string): IntentRecord {
    return this.#core.writer.get(id);
  }

  /** POST /intent: content-addressed; a replay returns the stored original unchanged. */
  createIntent(request: IntentRequest): Promise<IntentRecord> {
    return this.#intents.createIntent(request);
  }

  /** Open statuses are re-evaluated on read (timelocks release, revoked approvals stop counting). */
  refresh(id: string): Promise<IntentRecord> {
    return this.#intents.refresh(id);
  }

  /** POST /policy/{wallet}/simulate: which of the wallet's recent decisions `proposed` would change. */
  simulatePolicy(walletId: string, proposed: unknown, limit?: number): PolicySimulation {
    return this.#intents.simulatePolicy(walletId, proposed, limit);
  }

  listIntents(limit = INTENT_LIST_MAX, filter: IntentListFilter = {}): Record<string, unknown>[] {
    return this.#intents.listIntents(limit, filter);
  }

  /** POST /intent/{id}/approve-signed. */
  approveSigned(id: string, approval: SignedApproval): Promise<{ intentId: string; status: IntentStatus; decision: Decision; rejectedBy?: string }> {
    return this.#approvals.approveSigned(id, approval);
  }

  /** POST /intent/{id}/approve (deprecated): recorded for the audit trail, never counted. */
  approveUnsigned(id: string): Promise<Record<string, unknown>> {
    return this.#approvals.approveUnsigned(id);
  }

  // ---------------------------------------------------------------- cancel and expiry (lifecycle.ts)

  /** POST /intent/{id}/cancel: by the operator, or by the initiator device that created the intent. */
  cancel(id: string, body: CancelRequest): Promise<CancelResult> {
    return this.#lifecycle.cancel(id, body);
  }

  /** When the intent expires (its stored expires_at, or created_at + its wallet's ttl for an older record). */
  expiresAt(record: IntentRecord): number {
    return this.#lifecycle.expiresAt(record);
  }

  /** Expires every intent past its time to live now (at most EXPIRY_SWEEP_BATCH); the periodic sweep runs this. */
  sweepExpired(): Promise<number> {
    return this.#lifecycle.sweep();
  }

  // ---------------------------------------------------------------- protections and execute (protect.ts, execute.ts)

  /** GET /intent/{id}/protect: the guards on live chain inputs, without executing. */
  protect(id: string): ReturnType<Protections['protect']> {
    return this.#protections.protect(id);
  }

  /** POST /intent/{id}/execute. Idempotent; concurrent calls of one intent run one at a time. */
  execute(id: string): Promise<ExecuteOutcome> {
    return this.#execution.execute(id);
  }

  // ---------------------------------------------------------------- restrictions (restrictions.ts)

  /** What every signer must hold before it is asked to sign: a revoke_approver per revoked device, a cancel_intent per live cancellation. */
  restrictions(): { set: Restriction[]; digest: string } {
    return this.#restrictions.restrictions();
  }

  // ---------------------------------------------------------------- wallets, estate, reconcile, recovery (estate.ts)

  walletsView(): Record<string, unknown>[] {
    return this.#estate.walletsView();
  }

  estate(): Promise<Record<string, unknown>> {
    return this.#estate.estate();
  }

  reconcile(walletId: string): ReturnType<Estate['reconcile']> {
    return this.#estate.reconcile(walletId);
  }

  recoveryStatus(): Promise<Record<string, unknown>> {
    return this.#estate.recoveryStatus();
  }

  /** What a popup needs: health, wallets, open intents, recent ones and devices (optionally one wallet's). */
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

  // ---------------------------------------------------------------- pairing and devices (devices.ts)

  pairCreate(role: Device['role'], label: string): { code: string; challenge: string; expires_at: number; role: string } {
    return this.#devices.pairCreate(role, label);
  }

  pairPayload(code: string, baseUrl: string): string {
    return this.#devices.pairPayload(code, baseUrl);
  }

  /** POST /pair/claim (no session). */
  pairClaim(body: { code: string; public_key: string; signature: string; label: string; passkey?: PasskeyRegistration | undefined }): Promise<Record<string, unknown>> {
    return this.#devices.pairClaim(body);
  }

  devices(): Record<string, unknown>[] {
    return this.#devices.devices();
  }

  /** POST /devices/{id}/revoke: revoked in state.json with its receipt, then pushed to every signer. */
  async revokeDevice(id: string): Promise<Record<string, unknown>> {
    const out = await this.#devices.revokeDevice(id);
    this.deviceAuth.revoked(id);
    return out;
  }
  // ---------------------------------------------------------------- what a device may see
  /**
   * Throws 403 unless `principal` may read this intent: operators (any role) and viewers read
   * all; an approver reads the intents of wallets whose policy counts it; an initiator its own;
   * an API key the intents of its binding in its wallets.
   */
  assertCanSee(principal: Principal, record: IntentRecord): void {
    const refusal = this.#cannotSee(principal, record);
    if (refusal !== null) throw forbidden(refusal);
  }

  /** Why `principal` may not read `record`, or null when it may (assertCanSee's one rule). */
  #cannotSee(principal: Principal, record: IntentRecord): string | null {
    if (principal.kind === 'apikey') {
      if (record.intent.initiator === principal.bound_to && (principal.wallets === null || principal.wallets.includes(record.intent.wallet))) return null;
      return `intent ${record.intentId} was not created as ${principal.bound_to} in this key's wallets`;
    }
    if (principal.kind === 'operator' || principal.role === 'viewer') return null;
    if (principal.role === 'approver') {
      if (rulesCountingApprover(this.#core.policy(record.intent.wallet), principal.id).length > 0) return null;
      return `wallet ${record.intent.wallet}'s policy does not count ${principal.id}`;
    }
    if (record.intent.initiator === `device:${principal.id}`) return null;
    return `intent ${record.intentId} was not created by device:${principal.id}`;
  }

  /**
   * GET /device/events/stream: whether a device may see `event`. A viewer sees every event; an
   * approver or initiator the events of intents it may read (assertCanSee's rule, at the time the
   * event is sent) and its own device events; anything else (state reloads, webhooks, other
   * devices) is not for it.
   */
  deviceMaySee(principal: Extract<Principal, { kind: 'device' }>, event: VaultEvent): boolean {
    if (principal.role === 'viewer') return true;
    const { intent, device } = event.subject;
    if (intent !== undefined) {
      const record = this.#core.writer.find(intent);
      return record !== undefined && this.#cannotSee(principal, record) === null;
    }
    return device === principal.id;
  }

  /**
   * GET /device/intents: an approver's queue (intents waiting for approvals in wallets whose
   * policy counts it, not yet answered by it), an initiator's own intents, or everything recent for a viewer.
   */
  deviceIntents(principal: Extract<Principal, { kind: 'device' }>, limit = INTENT_LIST_MAX): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const r of this.store.recent(INTENT_LIST_MAX)) {
      if (out.length >= limit) break;
      if (principal.role === 'approver') {
        // Waiting for approvals: an allowed or timelocked intent needs nothing from it.
        if (r.status !== 'pending_approvals') continue;
        const rules = rulesCountingApprover(this.#core.policy(r.intent.wallet), principal.id);
        if (rules.length === 0 || r.approvals.some((a) => a.approver_id === principal.id)) continue;
      } else if (principal.role === 'initiator' && r.intent.initiator !== `device:${principal.id}`) {
        continue;
      }
      out.push(publicIntent(r));
    }
    return out;
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
    if (this.#core.closed) return;
    this.#core.closed = true;
    await this.#lifecycle.stop();
    await this.#signers.drain();
    await this.webhooks.close();
    await this.store.close();
    // After the store drained: the lease is given up only once nothing of ours is in flight.
    await this.database?.close();
    this.#release();
  }
}
