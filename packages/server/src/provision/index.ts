/**
 * @module provision
 * `vault provision`: sets wallets up on their ledgers through each driver plugin's
 * `createProvisioner` (XRPL signer list + master key disabled, Stellar signers + master weight 0,
 * a Safe with its owners and threshold), then writes each descriptor into the control plane's
 * state file and every signer's trust file, and checks the ledger against it (the same
 * comparison as /wallets/{id}/reconcile). Re-running is safe: a wallet already in the state or a
 * trust file is passed to the provisioner as `existing`, which changes nothing when the ledger
 * matches and refuses, naming the difference, when it does not.
 */
import {
  DigestSchema,
  IntentLifetimeSchema,
  ValidationError,
  compareControl,
  parsePolicy,
  parseWith,
  policyDigest,
  type ChainDriver,
  type ControlComparison,
  type IntentLifetimeInput,
  type ProvisionRequest,
  type WalletDescriptor,
  type WalletProvisioner,
} from '@vault/sdk';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../http/files.js';
import { importPlugin } from '../plugins.js';
import { DriverEntrySchema, readStateFile, writeStateFile, type DriverEntry, type StateFile } from '../control-plane/state.js';
import { TrustFileSchema, type TrustFile } from '../signer/trust.js';

const STATE_FILE = 'state.json';

const MemberSchema = z.strictObject({
  address: z.string().min(1).max(256),
  weight: z.int().min(1).max(65535),
  curve: z.enum(['ed25519', 'secp256k1']),
  label: z.string().min(1).max(128).optional(),
});

const FundingSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('faucet'), url: z.url({ protocol: /^https?$/ }) }),
  z.strictObject({ kind: z.literal('key_env'), env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'env must be an environment variable name') }),
]);

export const ProvisionWalletSchema = z.strictObject({
  wallet: z.string().min(1).max(128),
  chain: z.string().min(1).max(64),
  members: z.array(MemberSchema).min(1).max(64),
  quorum: z.int().min(1).max(0xffffffff),
  funding: FundingSchema,
  /** Native minor units for a new account; the driver's default when absent. */
  fund_amount: z.string().regex(/^[1-9][0-9]{0,39}$/, 'fund_amount must be a positive integer in minor units').optional(),
  /**
   * The wallet's policy, written into the state file with the descriptor when the state file has
   * none for it yet (a state file only holds policies of wallets it lists); its digest is pinned in
   * the trust files. When the state file has one, it wins and this must equal it.
   */
  policy: z.unknown().optional(),
  /** The policy digest to pin in the trust files when no policy is known (no state_dir, no policy). */
  policy_digest: DigestSchema.optional(),
  /**
   * The fee cap to write into the trust files (the driver's fee unit: drops, stroops, wei). Absent:
   * a cap the trust file already holds is kept, else the driver's `defaultMaxFee` is written, so
   * every trust file says what it caps.
   */
  max_fee: z.union([z.int().min(0), z.string().regex(/^(0|[1-9][0-9]{0,77})$/, 'max_fee as a string is a decimal integer')]).optional(),
  /**
   * The driver's own set-up options, passed to its provisioner as is (it validates them): e.g.
   * `{"safe_version": "1.3.0", "l2": true}`, or `{"adopt": "0x…", "allow_modules": ["0x…"]}`.
   */
  options: z.record(z.string().max(64), z.unknown()).optional(),
  /**
   * How long the wallet's intents live and how old an approval may be: written to the state file
   * (`lifetimes`) and to every trust file (`wallets[].lifetime`), so both services enforce the same.
   * Absent: the state file's setting for the wallet, if any, is copied to the trust files.
   */
  lifetime: IntentLifetimeSchema.optional(),
});
export type ProvisionWallet = z.infer<typeof ProvisionWalletSchema>;

export const ProvisionConfigSchema = z
  .strictObject({
    /** The control plane's state directory (its state.json gets the descriptors). */
    state_dir: z.string().min(1).max(4096).optional(),
    /** Signer trust files that get the descriptors (and the pinned policy digest). */
    trust_files: z.array(z.string().min(1).max(4096)).max(64).default([]),
    /** Driver plugins; default: the state file's `drivers`. */
    drivers: z.array(DriverEntrySchema).max(64).optional(),
    wallets: z.array(ProvisionWalletSchema).min(1).max(256),
  })
  .refine((c) => c.state_dir !== undefined || c.trust_files.length > 0, { message: 'name a state_dir, trust_files, or both: the descriptors must go somewhere', path: ['state_dir'] });
export type ProvisionConfig = z.infer<typeof ProvisionConfigSchema>;

export interface ProvisionedWallet {
  wallet: string;
  chain: string;
  address: string;
  changed: boolean;
  transactions: { txHash: string; what: string }[];
  /** Files the descriptor was written to. */
  written: string[];
  reconcile: ControlComparison;
}

interface LoadedDriver {
  entry: DriverEntry;
  driver: ChainDriver;
  provisioner: WalletProvisioner | null;
}

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (e) {
    throw new ValidationError(what, [{ path: '', message: `cannot read ${path}: ${(e as Error).message}` }]);
  }
}

/** Loads a provision configuration file; relative paths in it are relative to the file. */
export function readProvisionConfig(path: string): { config: ProvisionConfig; baseDir: string } {
  const config = parseWith(ProvisionConfigSchema, readJson(path, 'provision'), 'provision');
  return { config, baseDir: dirname(resolve(path)) };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A bigint fee cap as the trust file holds it: a JSON number up to 2^53 - 1, a decimal string past it. */
function feeCapJson(cap: bigint | undefined): number | string | undefined {
  if (cap === undefined) return undefined;
  return cap <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(cap) : cap.toString();
}

function addressOf(d: WalletDescriptor): string {
  return d.control.kind === 'native_multisig' ? d.control.address : d.control.safe;
}

/**
 * Provisions every wallet of a configuration, in order, and writes the results. Stops at the
 * first failure: wallets done before it are already written (each write is atomic), so a re-run
 * resumes where it stopped.
 *
 * @example
 * const { config, baseDir } = readProvisionConfig('provision.json')
 * for (const w of await provision(config, baseDir)) console.log(w.wallet, w.address, w.reconcile.clean)
 */
export async function provision(config: ProvisionConfig, baseDir: string, log: (line: string) => void = () => undefined): Promise<ProvisionedWallet[]> {
  const stateDir = config.state_dir === undefined ? undefined : resolve(baseDir, config.state_dir);
  const statePath = stateDir === undefined ? undefined : join(stateDir, STATE_FILE);
  if (statePath !== undefined && !existsSync(statePath)) {
    throw new ValidationError('provision', [{ path: 'state_dir', message: `${statePath} does not exist: run vault-control-plane init first` }]);
  }
  const trustPaths = config.trust_files.map((p) => resolve(baseDir, p));
  const readTrust = (path: string, i: number): TrustFile => parseWith(TrustFileSchema, readJson(path, `trust_files.${i}`), `trust_files.${i}`);
  // Read everything once up front: a bad file stops the run before any ledger is touched.
  const initialState: StateFile | undefined = statePath === undefined ? undefined : readStateFile(statePath);
  trustPaths.forEach((p, i) => readTrust(p, i));

  const entries = config.drivers ?? initialState?.drivers ?? [];
  const driversBase = config.drivers !== undefined ? baseDir : (stateDir ?? baseDir);
  if (entries.length === 0) throw new ValidationError('provision', [{ path: 'drivers', message: 'no driver plugins: list them in drivers, or in the state file' }]);
  const loaded: LoadedDriver[] = [];
  for (const [i, entry] of entries.entries()) {
    let mod;
    try {
      mod = await importPlugin(entry.module, driversBase);
    } catch (e) {
      throw new ValidationError('provision', [{ path: `drivers.${i}.module`, message: `cannot import ${entry.module}: ${(e as Error).message}` }]);
    }
    if (typeof mod.createDriver !== 'function') throw new ValidationError('provision', [{ path: `drivers.${i}.module`, message: `${entry.module} has no export createDriver(options)` }]);
    const driver = await mod.createDriver(entry.options, { stateDir });
    const provisioner = typeof mod.createProvisioner === 'function' ? await mod.createProvisioner(entry.options) : null;
    loaded.push({ entry, driver, provisioner });
  }

  const out: ProvisionedWallet[] = [];
  for (const [i, w] of config.wallets.entries()) {
    const at = `wallets.${i}`;
    const plugin = loaded.find((l) => l.driver.chains.includes(w.chain));
    if (!plugin) throw new ValidationError('provision', [{ path: `${at}.chain`, message: `no configured driver serves ${w.chain}` }]);
    if (!plugin.provisioner) throw new ValidationError('provision', [{ path: `${at}.chain`, message: `${plugin.entry.module} cannot provision wallets (it exports no createProvisioner)` }]);

    const state = statePath === undefined ? undefined : readStateFile(statePath);
    const trusts = trustPaths.map((p, j) => readTrust(p, j));
    const known = [...(state?.wallets ?? []), ...trusts.flatMap((t) => t.wallets.map((x) => x.descriptor))].filter((d) => d.wallet === w.wallet);
    const existing = known[0];
    for (const other of known.slice(1)) {
      if (!sameJson(other, existing)) {
        throw new ValidationError('provision', [{ path: `${at}.wallet`, message: `wallet ${w.wallet} has different descriptors in the state file and the trust files; fix them by hand first` }]);
      }
    }
    const given = w.policy === undefined ? undefined : parsePolicy(w.policy);
    if (given && given.wallet !== w.wallet) throw new ValidationError('provision', [{ path: `${at}.policy.wallet`, message: `the policy is for ${given.wallet}, not ${w.wallet}` }]);
    const stored = state?.policies.find((p) => p.wallet === w.wallet);
    const policy = stored ?? given;
    const digest = policy ? policyDigest(policy) : w.policy_digest;
    if (stored && given && policyDigest(given) !== digest) {
      throw new ValidationError('provision', [{ path: `${at}.policy`, message: `the state file already has a different policy for ${w.wallet} (digest ${digest}); edit it there` }]);
    }
    if (policy && w.policy_digest !== undefined && w.policy_digest !== digest) {
      throw new ValidationError('provision', [{ path: `${at}.policy_digest`, message: `the policy for ${w.wallet} hashes to ${digest}` }]);
    }
    if (trustPaths.length > 0 && digest === undefined) {
      throw new ValidationError('provision', [{ path: `${at}.policy_digest`, message: `no policy to pin for ${w.wallet}: add its policy to the state file, or give policy_digest` }]);
    }

    const request: ProvisionRequest = {
      wallet: w.wallet,
      chain: w.chain,
      members: w.members,
      quorum: w.quorum,
      funding: w.funding,
      ...(existing ? { existing } : {}),
      ...(w.fund_amount ? { fundAmount: w.fund_amount } : {}),
      ...(w.options ? { options: w.options } : {}),
    };
    log(`provision ${w.wallet} on ${w.chain}${existing ? ` (re-run: checking ${addressOf(existing)})` : ''}`);
    const result = await plugin.provisioner.provision(request);
    const descriptor = result.descriptor;
    for (const t of result.transactions) log(`  ${t.what}: ${t.txHash}`);

    const written: string[] = [];
    if (statePath !== undefined && state !== undefined) {
      const wallets = state.wallets.filter((x) => x.wallet !== w.wallet);
      const before = state.wallets.find((x) => x.wallet === w.wallet);
      const addPolicy = stored === undefined && given !== undefined;
      const setLifetime = w.lifetime !== undefined && !sameJson(state.lifetimes[w.wallet] ?? null, w.lifetime);
      if (!before || !sameJson(before, descriptor) || addPolicy || setLifetime) {
        const lifetimes = setLifetime ? { ...state.lifetimes, [w.wallet]: w.lifetime as IntentLifetimeInput } : state.lifetimes;
        writeStateFile(statePath, { ...state, wallets: [...wallets, descriptor], policies: addPolicy ? [...state.policies, given] : state.policies, lifetimes });
        written.push(statePath);
      }
    }
    // The lifetime both services enforce: the one configured, else the state file's.
    const lifetime = w.lifetime ?? state?.lifetimes[w.wallet];
    trustPaths.forEach((p, j) => {
      const t = trusts[j] as TrustFile;
      const before = t.wallets.find((x) => x.descriptor.wallet === w.wallet);
      const maxFee = w.max_fee ?? before?.max_fee ?? feeCapJson(plugin.driver.defaultMaxFee);
      const entry = { ...before, descriptor, policy_digest: digest as string, ...(maxFee !== undefined ? { max_fee: maxFee } : {}), ...(lifetime !== undefined ? { lifetime } : {}) };
      if (before && sameJson(before, entry)) return;
      const next = parseWith(TrustFileSchema, { ...t, wallets: [...t.wallets.filter((x) => x.descriptor.wallet !== w.wallet), entry] }, `trust_files.${j}`);
      writeFileAtomic(p, `${JSON.stringify(next, null, 2)}\n`, 0o600);
      written.push(p);
    });

    const reconcile = compareControl(descriptor, await plugin.driver.controlState({ wallet: descriptor }));
    out.push({ wallet: w.wallet, chain: w.chain, address: addressOf(descriptor), changed: result.changed, transactions: result.transactions, written, reconcile });
    if (!reconcile.clean) {
      const what = reconcile.drift.map((d) => `${d.field}: expected ${JSON.stringify(d.expected)}, ledger ${JSON.stringify(d.actual)}`).join('; ');
      throw new ValidationError('provision', [{ path: `${at}`, message: `after provisioning, ${w.wallet} does not reconcile: ${what}` }]);
    }
  }
  return out;
}
