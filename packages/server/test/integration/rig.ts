/**
 * The control plane on a real loopback socket, driven by the SDK client, and the real signer app
 * (its own trust file, journal and key) on another; both over the same memory ledger and one clock.
 * The wallet is 2-of-3 and only its first member has a signer here, so an execute ends awaiting
 * signatures: what matters is what that signer was asked and what it answered.
 */
import { createControlPlaneClient, createSignerClient, type AdminPolicy, type ControlPlaneClient, type IntentLifetimeInput, type PolicySet, type SignerClient, type SignRequest } from '@vault/sdk';
import { Hono } from 'hono';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initStateDir, startControlPlane, type RunningControlPlane } from '../../src/control-plane/run.js';
import { emptyState, type Device } from '../../src/control-plane/state.js';
import { listen, type Listening } from '../../src/http/index.js';
import { createSignerApp, type SignerAppDeps } from '../../src/signer/app.js';
import { parseTrust } from '../../src/signer/trust.js';
import { makeWorld, type World } from '../signer/helpers.js';

export const TOKEN = 'revocation-signer-token-0123456789abcdef';
export const OPERATOR = 'revocation operator passphrase';

export interface Rig {
  w: World;
  signer: SignerClient;
  cp: ControlPlaneClient;
  /** The control plane's state directory (state.json is edited by hand in some tests). */
  stateDir: string;
  /** The signer's socket: down() closes it, up() opens it again on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  restartControlPlane(): Promise<void>;
  /** A fresh intent (new amount each time) as a SignRequest straight to the signer, approved by `who`. */
  direct(who: string[]): Promise<SignRequest>;
  close(): Promise<void>;
}

/**
 * @param policy the wallet's policy (pinned in the signer's trust file too).
 * @param front what stands before the signer app (default: nothing); e.g. a signer from before
 *   restrictions existed, which answers 404 on /restrictions.
 */
export interface RigOptions {
  /** The wallet's lifetime in the signer's trust file and in the control plane's state. */
  lifetime?: IntentLifetimeInput;
  /** Devices paired besides the three approvers. */
  devices?: Device[];
  /** Session idle and absolute lifetime (tests that move the clock by hours). */
  sessionSeconds?: number;
  /** An admin quorum, in the signer's trust file and the control plane's state alike (change sets). */
  governance?: AdminPolicy;
}

export async function setupRig(policy: (wallet: string) => PolicySet, front?: (signerApp: Hono) => Hono, options: RigOptions = {}): Promise<Rig> {
  const w = await makeWorld({ policy, ...(options.lifetime ? { lifetime: options.lifetime } : {}) });
  const deps = { ...w.deps, ...(options.governance ? { trust: parseTrust({ ...w.trustFile, governance: options.governance }) } : {}), token: TOKEN } as SignerAppDeps;
  Object.defineProperty(deps, 'state', { get: () => w.state });
  const app = createSignerApp(deps);
  const served = front ? front(app) : app;
  let server: Listening | null = await listen(served);
  const port = server.port;
  const url = server.url;
  const dir = mkdtempSync(join(tmpdir(), 'vault-revocation-'));
  await initStateDir({
    stateDir: dir,
    passphrase: OPERATOR,
    scrypt: { N: 1024, r: 8, p: 1 },
    state: {
      ...emptyState(),
      wallets: [w.wallet],
      policies: [w.policy],
      devices: [...w.approvers.map((a) => ({ id: a.id, role: 'approver' as const, label: a.id, public_key: a.publicKeyHex, paired_at: w.clock.now - 60, revoked_at: null })), ...(options.devices ?? [])],
      ...(options.lifetime ? { lifetimes: { [w.wallet.wallet]: options.lifetime } } : {}),
      // Only the first member has a signer here.
      signers: { [w.signerAddress]: { url, token: TOKEN, label: 'signer-A' } },
      ...(options.governance ? { governance: { policy: options.governance, policy_since: {}, changes: [] } } : {}),
    },
  });
  const start = () => startControlPlane({ stateDir: dir, drivers: [w.driver], now: () => w.clock.now, confirmAttempts: 1, confirmDelayMs: 1, expirySweepMs: 0, ...(options.sessionSeconds ? { sessionIdleSeconds: options.sessionSeconds, sessionAbsoluteSeconds: options.sessionSeconds } : {}) });
  let running: RunningControlPlane = await start();
  const r: Rig = {
    w,
    signer: createSignerClient({ baseUrl: url, token: TOKEN }),
    cp: createControlPlaneClient({ baseUrl: running.url }),
    stateDir: dir,
    async down() {
      await server?.close();
      server = null;
    },
    async up() {
      server = await listen(served, { port });
    },
    async restartControlPlane() {
      await running.close();
      running = await start();
      r.cp = createControlPlaneClient({ baseUrl: running.url });
      await r.cp.unlock(OPERATOR);
    },
    direct: (() => {
      let amount = 2_000_000;
      return (who: string[]) => {
        amount += 1;
        return w.request({ amount: String(amount) }, { approvers: who });
      };
    })(),
    async close() {
      await running.close().catch(() => undefined);
      await server?.close();
      w.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await r.cp.unlock(OPERATOR);
  return r;
}

/** The integration tests' policy: a ceiling, one approval (alice, bob or carol) above 1,000,000, else allowed. */
export function approvalPolicy(wallet: string): PolicySet {
  return {
    wallet,
    version: 1,
    rules: [
      { rule: 'hard_ceiling', max: '900000000' },
      { rule: 'approval_threshold', above: '1000000', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }, { id: 'carol', weight: 1 }] },
      { rule: 'always_allow' },
    ],
  };
}
