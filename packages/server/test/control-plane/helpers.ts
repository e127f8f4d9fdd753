/**
 * Shared set-up of the control-plane tests: a state directory, a memory ledger and driver, a
 * wallet, approver devices, a test signer service, and the control plane listening on a real
 * loopback socket. The typed SDK client talks to it.
 */
import { createControlPlaneClient, generateEd25519KeyPair, type ChainDriver, type SigningKey, signApproval, toHex, type ControlPlaneClient, type PolicySet, type Rule, type SignedApproval, type VaultError, type WalletDescriptor } from '@vault/sdk';
import { MemoryLedger, createMemoryDriver, memoryWallet, type MemoryDriver } from '@vault/sdk/testing';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initStateDir, startControlPlane, type RunningControlPlane } from '../../src/control-plane/run.js';
import { emptyState, type StateFile } from '../../src/control-plane/state.js';
import type { ControlPlaneOptions } from '../../src/control-plane/core.js';
// @ts-expect-error plain JS fixture
import { startTestSigner } from './fixtures/test-signer.mjs';

export const PASSPHRASE = 'correct horse battery staple';
export const FAST_SCRYPT = { N: 1024, r: 8, p: 1 };

export interface Approver {
  id: string;
  secretKey: Uint8Array;
  publicKeyHex: string;
}

export function makeApprover(id: string): Approver {
  const k = generateEd25519KeyPair();
  return { id, secretKey: k.secretKey, publicKeyHex: k.publicKeyHex };
}

export interface TestSigner {
  url: string;
  calls: { signer_address: string; intent: string; token: string; expected_payload_digest: string }[];
  /** POST /observe requests, in order. */
  observed: { intent: string; token: string; at: number }[];
  /** Restrictions taken on by POST /restrictions, by restrictionKey. */
  restrictions: Map<string, unknown>;
  mode: { refuse: string | null; down: boolean; delayMs: number };
  close(): Promise<void>;
}

export interface Harness {
  dir: string;
  url: string;
  running: RunningControlPlane;
  client: ControlPlaneClient;
  ledger: MemoryLedger;
  driver: MemoryDriver;
  wallet: WalletDescriptor;
  address: string;
  approvers: Record<string, Approver>;
  signer: TestSigner;
  /** Each member's signing key, by member address (what the test signer signs with). */
  keys: Map<string, SigningKey>;
  signerToken: string;
  clock: { now: number };
  logs: string[];
  state: StateFile;
  approve(intent: string, who: string, verdict?: 'approve' | 'reject', strong?: boolean): SignedApproval;
  dest(): string;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  rules?: Rule[];
  members?: number;
  quorum?: number;
  approverIds?: string[];
  /** Extra state fields. */
  state?: Partial<StateFile>;
  /** Leave these member addresses without a signer endpoint. */
  unsignedMembers?: number;
  /** The URL the control plane is given for member `index` (default: the test signer's). */
  signerUrl?: (index: number, url: string) => string;
  unlock?: boolean;
  sessionIdleSeconds?: number;
  sessionAbsoluteSeconds?: number;
  unlockQueueMax?: number;
  /** scrypt cost of the operator passphrase (default FAST_SCRYPT; DEFAULT_SCRYPT to measure unlock). */
  scrypt?: { N: number; r: number; p: number };
  confirmAttempts?: number;
  /** Replace the driver (the control plane and the test signer both use the wrapped one). */
  wrapDriver?: (d: MemoryDriver) => ChainDriver;
  /** More control-plane options (event stream bounds, fsync; webRoot: the front ends under /app/). */
  controlPlane?: Partial<Omit<ControlPlaneOptions, 'stateDir'>> & { webRoot?: string | null };
  /** Devices paired besides the approvers (initiator devices, say). */
  extraDevices?: StateFile['devices'];
  /** How often the expiry sweep runs (ms; default off here, 0). */
  expirySweepMs?: number;
}

let counter = 0;

/** A fresh memory address nobody controls. */
export function freshAddress(): string {
  counter += 1;
  return `mem1${toHex(generateEd25519KeyPair().publicKey).slice(0, 40)}`;
}

export async function setup(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'vault-cp-'));
  const clock = { now: 1_767_225_600 }; // 2026-01-01T00:00:00Z, a Thursday
  const ledger = new MemoryLedger({ chain: 'memory:devnet' });
  const plain = createMemoryDriver({ ledger });
  const driver = (opts.wrapDriver ? opts.wrapDriver(plain) : plain) as MemoryDriver;
  const mw = memoryWallet({ ledger, wallet: 'ops', members: opts.members ?? 3, quorum: opts.quorum ?? 2 });
  const approvers: Record<string, Approver> = {};
  for (const id of opts.approverIds ?? ['alice', 'bob', 'carol']) approvers[id] = makeApprover(id);
  const policy: PolicySet = { wallet: 'ops', version: 1, rules: opts.rules ?? [{ rule: 'always_allow' }] };
  const signerToken = `signer-token-${Math.random().toString(36).slice(2)}-abcdefgh`;
  const keyMap = new Map(mw.wallet.control.kind === 'native_multisig' ? mw.wallet.control.signers.map((s, i) => [s.address, mw.keys[i]]) : []);
  let running!: RunningControlPlane;
  const signer = (await startTestSigner({
    token: signerToken,
    keys: keyMap,
    driver,
    now: () => clock.now,
    approvers: () => new Map((running ? running.cp.state.devices : []).filter((d) => d.role === 'approver').map((d) => [d.id, { publicKey: d.public_key, revoked: d.revoked_at !== null }])),
  })) as TestSigner;
  const members = mw.wallet.control.kind === 'native_multisig' ? mw.wallet.control.signers : [];
  const unsigned = opts.unsignedMembers ?? 0;
  const state: StateFile = {
    ...emptyState(),
    wallets: [mw.wallet],
    policies: [policy],
    devices: [...Object.values(approvers).map((a) => ({ id: a.id, role: 'approver' as const, label: a.id, public_key: a.publicKeyHex, paired_at: clock.now, revoked_at: null })), ...(opts.extraDevices ?? [])],
    signers: Object.fromEntries(members.slice(unsigned).map((s, i) => [s.address, { url: opts.signerUrl?.(i + unsigned, signer.url) ?? signer.url, token: signerToken }])),
    ...opts.state,
  };
  await initStateDir({ stateDir: dir, passphrase: PASSPHRASE, scrypt: opts.scrypt ?? FAST_SCRYPT, state });
  const logs: string[] = [];
  const start = () =>
    startControlPlane({
      stateDir: dir,
      drivers: [driver],
      now: () => clock.now,
      log: (l) => logs.push(l),
      accessLog: true,
      confirmAttempts: opts.confirmAttempts ?? 3,
      confirmDelayMs: 5,
      expirySweepMs: opts.expirySweepMs ?? 0,
      ...(opts.sessionIdleSeconds ? { sessionIdleSeconds: opts.sessionIdleSeconds } : {}),
      ...(opts.sessionAbsoluteSeconds ? { sessionAbsoluteSeconds: opts.sessionAbsoluteSeconds } : {}),
      ...(opts.unlockQueueMax !== undefined ? { unlockQueueMax: opts.unlockQueueMax } : {}),
      ...opts.controlPlane,
    });
  running = await start();
  const h: Harness = {
    dir,
    url: running.url,
    running,
    client: createControlPlaneClient({ baseUrl: running.url }),
    ledger,
    driver,
    wallet: mw.wallet,
    address: mw.address,
    approvers,
    signer,
    keys: keyMap as Map<string, SigningKey>,
    signerToken,
    clock,
    logs,
    get state() {
      return running.cp.state;
    },
    approve(intent, who, verdict = 'approve', strong = false) {
      const a = approvers[who];
      if (!a) throw new Error(`no approver ${who}`);
      return signApproval({ approver_id: who, intent, verdict, at: clock.now, strong_auth: strong }, a.secretKey);
    },
    dest: freshAddress,
    async restart() {
      await running.close();
      running = await start();
      h.running = running;
      h.url = running.url;
      h.client = createControlPlaneClient({ baseUrl: running.url });
      await h.client.unlock(PASSPHRASE);
    },
    async close() {
      await running.close().catch(() => undefined);
      await signer.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  Object.defineProperty(h, 'state', { get: () => running.cp.state });
  if (opts.unlock !== false) await h.client.unlock(PASSPHRASE);
  return h;
}

/** Raw fetch with a session token (for bodies the typed client would refuse to send). */
export async function raw(h: Harness, method: string, path: string, init: { body?: string; headers?: Record<string, string>; token?: string | null } = {}): Promise<{ status: number; body: any; text: string }> {
  const headers: Record<string, string> = { ...init.headers };
  const token = init.token === undefined ? h.client.getToken() : init.token;
  if (token) headers['authorization'] = `Bearer ${token}`;
  if (init.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${h.url}${path}`, { method, headers, ...(init.body !== undefined ? { body: init.body } : {}) });
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function expectError(p: Promise<unknown>): Promise<VaultError> {
  try {
    await p;
  } catch (e) {
    return e as VaultError;
  }
  throw new Error('expected an error');
}

/** Polls `fn` every 50 ms until it returns a value (not undefined nor false); fails naming `what` after `ms`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One query on its own connection (the PostgreSQL tests' look at what the database holds). */
export async function sqlRows<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Another control-plane instance of `h`'s vault on PostgreSQL: a copy of its state directory as it
 * is now (keys, state.json; never its lock or replica), started with the harness's options and
 * `database` (lease 2 s and a 100 ms poll unless given).
 */
export async function anotherInstance(h: Harness, name: string, database: NonNullable<ControlPlaneOptions['database']>, log: (line: string) => void = () => undefined): Promise<RunningControlPlane> {
  const dir = `${h.dir}-${name}`;
  cpSync(h.dir, dir, { recursive: true, filter: (src) => !src.endsWith('serve.lock') && !src.includes('/replica') });
  return startControlPlane({
    stateDir: dir,
    drivers: [h.driver],
    now: () => h.clock.now,
    confirmAttempts: 3,
    confirmDelayMs: 5,
    expirySweepMs: 0,
    database: { instanceId: name, leaseSeconds: 2, pollMs: 100, ...database },
    log,
  });
}
