/**
 * A complete signer world for tests: a memory ledger with a 3-member wallet (quorum 2) whose first
 * member's key sits in an encrypted keystore, three approvers, a pinned policy, a trust file, the
 * signer's durable state, and a builder for valid SignRequests.
 */
import {
  createSignerClient,
  DriverRegistry,
  intentId,
  normalizeIntent,
  policyDigest,
  signApproval,
  signStatement,
  toHex,
  type ChainDriver,
  type ChainSigner,
  type IntentLifetimeInput,
  type IntentRequest,
  type PolicySet,
  type SignRequest,
  type SignedApproval,
  type SignedStatement,
  type SignerClient,
  type WalletDescriptor,
} from '@vault/sdk';
import { MemoryLedger, createMemoryDriver, createMemorySigner, memoryAddress, memoryWallet, type MemoryWallet } from '@vault/sdk/testing';
import { ed25519 } from '@noble/curves/ed25519.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createKey, generateSecret, SoftwareKeystore, type KdfParams, type KeyScope } from '../../src/signer/keystore.js';
import { SignerState } from '../../src/signer/state.js';
import { parseTrust, type Trust, type TrustFile } from '../../src/signer/trust.js';
import type { SignerDeps } from '../../src/signer/sign.js';
import { createSignerApp, type SignerAppDeps } from '../../src/signer/app.js';
import { listen, type Listening } from '../../src/http/index.js';

/** Cheap scrypt for tests only (the default is 2^17). */
export const TEST_KDF: KdfParams = { N: 2 ** 10, r: 8, p: 1 };
export const PASSPHRASE = 'correct horse battery staple';
export const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z

export function tempDir(prefix = 'vault-signer-'): string {
  // /dev/shm when present: fsync-heavy tests stay fast; the durability tests use the real disk.
  const base = process.platform === 'linux' ? '/dev/shm' : tmpdir();
  return mkdtempSync(join(base, prefix));
}

export interface Approver {
  id: string;
  secret: Uint8Array;
  publicKeyHex: string;
}

export function approver(id: string, seed: number): Approver {
  const secret = new Uint8Array(32).fill(seed);
  return { id, secret, publicKeyHex: toHex(ed25519.getPublicKey(secret)) };
}

export const UNKNOWN_DEST = `mem1${'ab'.repeat(20)}`;

/** The compliance key basePolicy names: its clearances are what satisfies require_compliance_clearance. */
export const CLEARER = approver('clearer', 7);

/** A clearance of `destination` by CLEARER, valid from `now - 60` for ten years. */
export function clearanceFor(destination: string, now: number, signer: Approver = CLEARER): SignedStatement {
  return signStatement({ kind: 'clearance', destination, clearer: signer.publicKeyHex, issued_at: now - 60, expires_at: now + 10 * 365 * 86400 }, signer.secret);
}

export function basePolicy(walletId: string, extra: PolicySet['rules'] = []): PolicySet {
  return {
    wallet: walletId,
    version: 1,
    rules: [
      { rule: 'hard_ceiling', max: '900000000' },
      { rule: 'daily_velocity_cap', limit: '950000000' },
      { rule: 'approval_threshold', above: '1000000', required_weight: 2, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }, { id: 'carol', weight: 1 }] },
      { rule: 'timelock_above', above: '100000000', seconds: 3600 },
      { rule: 'destination_blocklist', addresses: [`mem1${'dd'.repeat(20)}`] },
      { rule: 'require_compliance_clearance', clearers: [CLEARER.publicKeyHex] },
      ...extra,
    ],
  };
}

/** `inner`, noting in `signed` the digest of every payload it is asked to sign (what a test counts). */
export function countingSigner(inner: ChainSigner, signed: string[]): ChainSigner {
  return {
    name: inner.name,
    family: inner.family,
    chains: inner.chains,
    deriveAddress: ({ chain, publicKey, curve }) => inner.deriveAddress({ chain, publicKey, curve }),
    signPayload: async ({ built, key, signerAddress: address }) => {
      signed.push(built.digest);
      return inner.signPayload({ built, key, signerAddress: address });
    },
  };
}

export interface World {
  ledger: MemoryLedger;
  mw: MemoryWallet;
  wallet: WalletDescriptor;
  driver: ChainDriver;
  chainSigner: ChainSigner;
  /** Digests the ChainSigner was asked to sign, in order. */
  signedDigests: string[];
  approvers: Approver[];
  policy: PolicySet;
  trustFile: TrustFile;
  trust: Trust;
  keys: SoftwareKeystore;
  keystoreDir: string;
  stateDir: string;
  receiptKey: Uint8Array;
  state: SignerState;
  clock: { now: number };
  deps: SignerDeps;
  /** The address of the member whose key this signer holds. */
  signerAddress: string;
  destination: string;
  request(overrides?: Partial<IntentRequest>, options?: { approvers?: string[]; createdAt?: number; sign?: (id: string, who: string) => SignedApproval }): Promise<SignRequest>;
  approve(id: string, who: string, verdict?: 'approve' | 'reject', at?: number): SignedApproval;
  reopen(): SignerState;
  cleanup(): void;
}

export async function makeWorld(options: { held?: Uint8Array; diskState?: boolean; policy?: (walletId: string) => PolicySet; scope?: KeyScope; trustKeys?: TrustFile['keys']; registry?: TrustFile['assets']; burned?: string[]; lifetime?: IntentLifetimeInput } = {}): Promise<World> {
  const ledger = new MemoryLedger();
  const keystoreDir = join(tempDir(), 'keys');
  const stateDir = join(options.diskState ? mkdtempSync(join(tmpdir(), 'vault-signer-')) : tempDir(), 'state');
  const held = options.held ?? generateSecret('ed25519');
  await createKey(keystoreDir, { curve: 'ed25519', passphrase: PASSPHRASE, kdf: TEST_KDF, secret: held, ...(options.scope ? { scope: options.scope } : {}) });
  const mw = memoryWallet({ ledger, wallet: 'treasury', members: 3, quorum: 2, secretKeys: [held, generateSecret('ed25519'), generateSecret('ed25519')] });
  const wallet = mw.wallet;
  const base = createMemoryDriver({ ledger });
  const driver = base;
  const inner = createMemorySigner();
  const signedDigests: string[] = [];
  const chainSigner = countingSigner(inner, signedDigests);
  const approvers = [approver('alice', 1), approver('bob', 2), approver('carol', 3)];
  const policy = (options.policy ?? basePolicy)(wallet.wallet);
  const trustFile: TrustFile = {
    format: 'vault-signer-trust',
    version: 1,
    wallets: [{ descriptor: wallet, policy_digest: policyDigest(policy), ...(options.lifetime ? { lifetime: options.lifetime } : {}) }],
    approvers: approvers.map((a) => ({ id: a.id, public_key: a.publicKeyHex, weight: 1 })),
    ...(options.trustKeys ? { keys: options.trustKeys } : {}),
    assets: options.registry ?? { assets: [], reserved: ['USDC'] },
    known_destinations: [UNKNOWN_DEST],
    ...(options.burned ? { burned: options.burned } : {}),
  };
  const trust = parseTrust(trustFile);
  const keys = await SoftwareKeystore.unlock(keystoreDir, PASSPHRASE);
  const receiptKey = new Uint8Array(32).fill(42);
  const clock = { now: T0 };
  const world: World = {
    ledger,
    mw,
    wallet,
    driver,
    chainSigner,
    signedDigests,
    approvers,
    policy,
    trustFile,
    trust,
    keys,
    keystoreDir,
    stateDir,
    receiptKey,
    state: SignerState.open(stateDir, receiptKey),
    clock,
    deps: undefined as unknown as SignerDeps,
    signerAddress: memoryAddress(ed25519.getPublicKey(held)),
    destination: UNKNOWN_DEST,
    approve(id, who, verdict = 'approve', at = clock.now - 5) {
      const a = approvers.find((x) => x.id === who);
      if (!a) throw new Error(`no approver ${who}`);
      return signApproval({ approver_id: who, intent: id, verdict, at, strong_auth: false }, a.secret);
    },
    async request(overrides = {}, opts = {}) {
      const request: IntentRequest = { wallet: wallet.wallet, destination: UNKNOWN_DEST, amount: '5000000', ...overrides };
      const now = clock.now;
      const id = intentId(request);
      const params = await driver.fetchParams({ wallet });
      const built = driver.buildPayload({ intent: normalizeIntent(request), wallet, params });
      return {
        intent: { id, created_at: opts.createdAt ?? clock.now - 10, request },
        wallet,
        policy,
        policy_digest: policyDigest(policy),
        approvals: (opts.approvers ?? ['alice', 'bob', 'carol']).map((who) => (opts.sign ?? world.approve)(id, who)),
        params,
        protect: {
          known_destinations: [UNKNOWN_DEST],
          burned: [],
          evm_code: [],
          token_owner_burned: false,
          onchain_symbol: null,
          compliance_cleared: true,
          attestation_valid: false,
          statements: [clearanceFor(request.destination, now)],
        },
        expected_payload_digest: built.digest,
        signer_address: world.signerAddress,
      };
    },
    reopen() {
      world.state.close();
      world.state = SignerState.open(stateDir, receiptKey);
      world.deps.state = world.state;
      return world.state;
    },
    cleanup() {
      world.state.close();
      rmSync(dirname(keystoreDir), { recursive: true, force: true });
      rmSync(dirname(stateDir), { recursive: true, force: true });
    },
  };
  world.deps = {
    now: () => clock.now,
    drivers: new DriverRegistry<ChainDriver>([driver]),
    signers: new DriverRegistry<ChainSigner>([chainSigner]),
    trust,
    keys,
    state: world.state,
  };
  return world;
}

/**
 * The signer app over `w` on a loopback socket, with an SDK client. The app reads `w.state` through
 * a getter, so a journal reopened under it (w.reopen()) is the one it serves; `deps` replaces parts
 * of `w.deps` (a wrapped keystore, say).
 */
export async function serveWorld(w: World, token: string, deps: Partial<SignerDeps> = {}): Promise<{ server: Listening; client: SignerClient }> {
  const appDeps = { ...w.deps, ...deps, token } as SignerAppDeps;
  Object.defineProperty(appDeps, 'state', { get: () => w.state });
  const server = await listen(createSignerApp(appDeps));
  return { server, client: createSignerClient({ baseUrl: server.url, token }) };
}
