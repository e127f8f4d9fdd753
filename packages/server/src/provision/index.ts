/**
 * @module provision
 * `vault provision`: sets wallets up on their ledgers through each driver plugin's
 * `createProvisioner` (XRPL signer list + master key disabled, Stellar signers + master weight 0,
 * a Safe with its owners and threshold), then writes a servable set-up: each descriptor, policy,
 * member signer endpoint and driver into the control plane's state file, and each descriptor,
 * pinned policy digest, approver and driver into every signer's trust file; and checks the ledger
 * against it (the same comparison as /wallets/{id}/reconcile). A member may be named by its
 * signer's keystore folder (the address is derived from the key file). Re-running is safe: a
 * wallet already in the state or a trust file is passed to the provisioner as `existing`, which
 * changes nothing when the ledger matches and refuses, naming the difference, when it does not;
 * a run that changes nothing rewrites no file. An approver is never re-keyed, re-weighted or
 * revived here: those refuse, naming the field.
 */
import {
  ApproverPasskeySchema,
  DigestSchema,
  IntentLifetimeSchema,
  ValidationError,
  compareControl,
  parsePolicy,
  parseWith,
  policyDigest,
  type ChainDriver,
  type ChainSigner,
  type Curve,
  type PolicySet,
  type ControlComparison,
  type IntentLifetimeInput,
  type ProvisionRequest,
  type WalletDescriptor,
  type WalletProvisioner,
} from '@vault/sdk';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../http/files.js';
import { importPlugin, type PluginModule } from '../plugins.js';
import { canonicalJson, DriverEntrySchema, readStateFile, SignerEndpointSchema, writeStateFile, type DriverEntry, type SignerEndpoint, type StateFile } from '../control-plane/state.js';
import { listKeyFiles } from '../signer/keystore.js';
import { TrustFileSchema, type TrustFile } from '../signer/trust.js';

const STATE_FILE = 'state.json';

/** Where the control plane reaches the signer holding a member's key (state.json `signers`). */
const MemberSignerSchema = SignerEndpointSchema;

const MemberSchema = z
  .strictObject({
    /** The member's address on the chain, or ... */
    address: z.string().min(1).max(256).optional(),
    /** ... the keystore folder of the signer that holds its key: the address is derived from the key file. */
    keystore: z.string().min(1).max(4096).optional(),
    /** With `keystore`: the key id (`key_…`) when the folder holds more than one key for the chain. */
    key: z.string().regex(/^key_[0-9a-f]{16}$/, 'key is a key id, key_ and 16 hex').optional(),
    weight: z.int().min(1).max(65535),
    /** Required with `address`; with `keystore`, the key file's curve (this narrows the choice when given). */
    curve: z.enum(['ed25519', 'secp256k1']).optional(),
    label: z.string().min(1).max(128).optional(),
    /** The signer service for this member, written into state.json `signers` under its address. */
    signer: MemberSignerSchema.optional(),
  })
  .superRefine((m, ctx) => {
    if ((m.address === undefined) === (m.keystore === undefined)) ctx.addIssue({ code: 'custom', path: ['address'], message: 'give exactly one of address or keystore' });
    if (m.address !== undefined && m.curve === undefined) ctx.addIssue({ code: 'custom', path: ['curve'], message: 'curve is required with address' });
    if (m.key !== undefined && m.keystore === undefined) ctx.addIssue({ code: 'custom', path: ['key'], message: 'key names a key of keystore: give keystore' });
  });

/**
 * An approver whose key goes into every trust file: its device id and ed25519 key. Its weight is
 * the one the provisioned policies give it (a trust file holds one weight per approver).
 */
const ApproverSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'approver id: 1..128 of A-Z a-z 0-9 . _ : -'),
  public_key: z.string().regex(/^[0-9a-f]{64}$/, 'public_key is a 32-byte ed25519 key as lowercase hex'),
  /** Only for an approver no provisioned policy names; otherwise it must equal the policies' weight. */
  weight: z.int().min(1).max(1_000_000).optional(),
  /** Its passkey as registered at pairing (GET /devices) with the page origins: signers then count its proven strong approvals as strong. */
  passkey: ApproverPasskeySchema.optional(),
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
    /**
     * Driver plugins; default: the state file's `drivers`. Given here, they are also written into
     * the state file and every trust file (an entry for the same module is replaced), so both
     * services load what provisioned the wallets.
     */
    drivers: z.array(DriverEntrySchema).max(64).optional(),
    /**
     * Approvers to write into every trust file, besides the approver devices paired in the state
     * file: each one a provisioned policy names must be known by one or the other.
     */
    approvers: z.array(ApproverSchema).max(1024).default([]),
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
  /** The directory the entry's module resolves against (relative paths). */
  base: string;
  mod: PluginModule;
  driver: ChainDriver;
  provisioner: WalletProvisioner | null;
  /** Loaded on first use: only members given by keystore need address derivation. */
  signer?: ChainSigner;
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

const fail = (path: string, message: string): never => {
  throw new ValidationError('provision', [{ path, message }]);
};

/**
 * A driver entry as a file in `toDir` names it: a relative module path is re-based from the
 * directory it was written against, so every file loads the same module. Package names and
 * absolute paths are kept as they are.
 */
function rebaseEntry(entry: DriverEntry, fromDir: string, toDir: string): DriverEntry {
  if (!entry.module.startsWith('.')) return entry;
  const rel = relative(toDir, resolve(fromDir, entry.module));
  return { ...entry, module: isAbsolute(rel) || rel.startsWith('.') ? rel : `./${rel}` };
}

/** `current` with each of `entries` in place of the entry for the same module, new ones appended. */
function mergeDrivers<E extends { module: string }>(current: readonly E[], entries: readonly E[]): E[] {
  const out = [...current];
  for (const e of entries) {
    const i = out.findIndex((x) => x.module === e.module);
    if (i >= 0) out[i] = e;
    else out.push(e);
  }
  return out;
}

interface WantedApprover {
  id: string;
  public_key: string;
  weight: number;
  revoked: boolean;
  passkey?: z.infer<typeof ApproverPasskeySchema>;
  /** Where it was named, for messages. */
  from: string;
}

/**
 * The approvers every trust file must hold: each approver a provisioned policy names (with the
 * weight it gives), its key from the configuration or the state file's paired devices, plus the
 * configuration's other approvers. Refuses, naming the field, an approver two policies weigh
 * differently, one whose key nobody gives (unless every trust file already holds it, at the
 * policy's weight), and two different keys for one id.
 */
function wantedApprovers(config: ProvisionConfig, policies: readonly (PolicySet | undefined)[], state: StateFile | undefined, trusts: readonly TrustFile[]): WantedApprover[] {
  const weights = new Map<string, { weight: number; at: string }>();
  policies.forEach((p, i) => {
    p?.rules.forEach((r, j) => {
      if (r.rule !== 'approval_threshold') return;
      r.approvers.forEach((a, k) => {
        const at = `wallets.${i}.policy.rules.${j}.approvers.${k}.weight`;
        const seen = weights.get(a.id);
        if (seen && seen.weight !== a.weight) fail(at, `approver ${a.id} has weight ${a.weight} here and ${seen.weight} at ${seen.at}: a trust file holds one weight per approver`);
        weights.set(a.id, { weight: a.weight, at });
      });
    });
  });
  const out = new Map<string, WantedApprover>();
  config.approvers.forEach((a, i) => {
    if (out.has(a.id)) fail(`approvers.${i}.id`, `approver ${a.id} is listed twice`);
    const named = weights.get(a.id);
    if (named && a.weight !== undefined && a.weight !== named.weight) fail(`approvers.${i}.weight`, `approver ${a.id} has weight ${named.weight} in the policy (${named.at})`);
    const weight = named?.weight ?? a.weight ?? fail(`approvers.${i}.weight`, `no provisioned policy names approver ${a.id}: give its weight`);
    const device = state?.devices.find((d) => d.id === a.id);
    if (device && device.public_key !== a.public_key) fail(`approvers.${i}.public_key`, `device ${a.id} is paired in the state file with another key (${device.public_key})`);
    if (device?.revoked_at != null) fail(`approvers.${i}.id`, `device ${a.id} is revoked in the state file: provision does not revive an approver`);
    out.set(a.id, { id: a.id, public_key: a.public_key, weight, revoked: false, ...(a.passkey ? { passkey: a.passkey } : {}), from: `approvers.${i}` });
  });
  for (const [id, { weight, at }] of weights) {
    if (out.has(id)) continue;
    const device = state?.devices.find((d) => d.id === id && d.role === 'approver');
    if (device) {
      out.set(id, { id, public_key: device.public_key, weight, revoked: device.revoked_at !== null, from: `state devices ${id}` });
      continue;
    }
    // No key given: fine only where every trust file already holds the approver, at this weight.
    trusts.forEach((t, j) => {
      const k = t.approvers.findIndex((a) => a.id === id);
      if (k < 0) fail(at.replace(/\.weight$/, '.id'), `approver ${id}: no key for trust_files.${j}; pair the device first, or list it in approvers with its public_key`);
      if (t.approvers[k]?.weight !== weight) fail(`trust_files.${j}.approvers.${k}.weight`, `approver ${id} has weight ${t.approvers[k]?.weight} here, ${weight} in the policy: provision does not re-weight an approver`);
    });
  }
  return [...out.values()];
}

type TrustApprover = TrustFile['approvers'][number];

/**
 * The trust file's approvers with `wanted` merged in. Adding one is fine, and so is marking one
 * revoked (that only takes power away); changing a key (or a passkey) or a weight, or reviving a revoked one,
 * is refused naming the field: those are decisions for the signer's operator, by hand.
 */
function mergeApprovers(current: readonly TrustApprover[], wanted: readonly WantedApprover[], at: string): TrustApprover[] {
  const out = [...current];
  for (const w of wanted) {
    const i = out.findIndex((a) => a.id === w.id);
    const have = out[i];
    if (have === undefined) {
      out.push({ id: w.id, public_key: w.public_key, weight: w.weight, ...(w.revoked ? { revoked: true } : {}), ...(w.passkey ? { passkey: w.passkey } : {}) });
      continue;
    }
    // A passkey is a second key: added with its approver, never swapped or added later by provision.
    if (w.passkey !== undefined && canonicalJson(w.passkey) !== canonicalJson(have.passkey ?? null)) {
      fail(`${at}.approvers.${i}.passkey`, `approver ${w.id} has ${have.passkey ? 'another passkey' : 'no passkey'} here: provision does not re-key an approver (${w.from})`);
    }
    // Public keys, not secrets: a plain comparison.
    if (have.public_key !== w.public_key) {
      fail(`${at}.approvers.${i}.public_key`, `approver ${w.id} already has another key here: provision does not re-key an approver (${w.from})`);
    }
    if (have.weight !== w.weight) fail(`${at}.approvers.${i}.weight`, `approver ${w.id} has weight ${have.weight} here, ${w.weight} wanted: provision does not re-weight an approver (${w.from})`);
    if (have.revoked === true && !w.revoked) fail(`${at}.approvers.${i}.revoked`, `approver ${w.id} is revoked here: provision does not revive an approver (${w.from})`);
    if (w.revoked && have.revoked !== true) out[i] = { ...have, revoked: true };
  }
  return out;
}

/** One member with its address resolved (from its keystore folder when given so). */
interface ResolvedMember {
  address: string;
  weight: number;
  curve: Curve;
  label?: string;
  signer?: SignerEndpoint;
}

async function resolveMember(m: ProvisionWallet['members'][number], at: string, chain: string, plugin: LoadedDriver, baseDir: string): Promise<ResolvedMember> {
  const base = { weight: m.weight, ...(m.label !== undefined ? { label: m.label } : {}), ...(m.signer !== undefined ? { signer: m.signer } : {}) };
  if (m.address !== undefined) return { address: m.address, curve: m.curve as Curve, ...base };
  const dir = resolve(baseDir, m.keystore as string);
  let keys;
  try {
    keys = listKeyFiles(dir);
  } catch (e) {
    return fail(`${at}.keystore`, `cannot read keystore ${dir}: ${(e as Error).message}`);
  }
  if (typeof plugin.mod.createSigner !== 'function') return fail(`${at}.keystore`, `${plugin.entry.module} exports no createSigner(options): give the member's address instead`);
  plugin.signer ??= await plugin.mod.createSigner(plugin.entry.options);
  const signer = plugin.signer;
  const found: { id: string; address: string; curve: Curve }[] = [];
  for (const k of keys) {
    if ((m.key !== undefined && k.id !== m.key) || (m.curve !== undefined && k.curve !== m.curve)) continue;
    try {
      found.push({ id: k.id, address: signer.deriveAddress({ chain, publicKey: k.publicKey, curve: k.curve }), curve: k.curve });
    } catch {
      // this chain does not take this key's curve
    }
  }
  if (found.length === 0) return fail(`${at}.keystore`, `no key in ${dir}${m.key ? ` named ${m.key}` : ''} has an address on ${chain}`);
  if (found.length > 1) return fail(`${at}.key`, `${found.length} keys in ${dir} have an address on ${chain} (${found.map((f) => f.id).join(', ')}): name one with key`);
  const [k] = found as [{ id: string; address: string; curve: Curve }];
  return { address: k.address, curve: k.curve, ...base };
}

/**
 * Provisions every wallet of a configuration, in order, and writes the results: the descriptor,
 * policy, lifetime, member signer endpoints and drivers into state.json; the descriptor, pinned
 * policy digest, fee cap, lifetime, approvers and drivers into every trust file. Every check that
 * needs no ledger runs before any ledger is touched. Stops at the first failure: wallets done
 * before it are already written (each write is atomic), so a re-run resumes where it stopped. A
 * run that changes nothing rewrites no file.
 *
 * @example
 * const { config, baseDir } = readProvisionConfig('provision.json')
 * for (const w of await provision(config, baseDir)) console.log(w.wallet, w.address, w.reconcile.clean)
 */
export async function provision(config: ProvisionConfig, baseDir: string, log: (line: string) => void = () => undefined): Promise<ProvisionedWallet[]> {
  const stateDir = config.state_dir === undefined ? undefined : resolve(baseDir, config.state_dir);
  const statePath = stateDir === undefined ? undefined : join(stateDir, STATE_FILE);
  if (statePath !== undefined && !existsSync(statePath)) {
    fail('state_dir', `${statePath} does not exist: run vault-control-plane init first`);
  }
  const trustPaths = config.trust_files.map((p) => resolve(baseDir, p));
  const readTrust = (path: string, i: number): TrustFile => parseWith(TrustFileSchema, readJson(path, `trust_files.${i}`), `trust_files.${i}`);
  // Read everything once up front: a bad file stops the run before any ledger is touched.
  const initialState: StateFile | undefined = statePath === undefined ? undefined : readStateFile(statePath);
  const initialTrusts = trustPaths.map((p, i) => readTrust(p, i));

  const entries = config.drivers ?? initialState?.drivers ?? [];
  const driversBase = config.drivers !== undefined ? baseDir : (stateDir ?? baseDir);
  if (entries.length === 0) fail('drivers', 'no driver plugins: list them in drivers, or in the state file');
  const loaded: LoadedDriver[] = [];
  for (const [i, entry] of entries.entries()) {
    let mod;
    try {
      mod = await importPlugin(entry.module, driversBase);
    } catch (e) {
      return fail(`drivers.${i}.module`, `cannot import ${entry.module}: ${(e as Error).message}`);
    }
    if (typeof mod.createDriver !== 'function') fail(`drivers.${i}.module`, `${entry.module} has no export createDriver(options)`);
    const driver = await (mod.createDriver as NonNullable<PluginModule['createDriver']>)(entry.options, { stateDir });
    const provisioner = typeof mod.createProvisioner === 'function' ? await mod.createProvisioner(entry.options) : null;
    loaded.push({ entry, base: driversBase, mod, driver, provisioner });
  }

  // The policies this run pins, and the approvers they name: checked against every file before any ledger is touched.
  const policies = config.wallets.map((w, i) => {
    const given = w.policy === undefined ? undefined : parsePolicy(w.policy);
    if (given && given.wallet !== w.wallet) fail(`wallets.${i}.policy.wallet`, `the policy is for ${given.wallet}, not ${w.wallet}`);
    return initialState?.policies.find((p) => p.wallet === w.wallet) ?? given;
  });
  const approvers = trustPaths.length > 0 ? wantedApprovers(config, policies, initialState, initialTrusts) : [];
  initialTrusts.forEach((t, j) => mergeApprovers(t.approvers, approvers, `trust_files.${j}`));
  const plugins = config.wallets.map((w, i) => {
    const plugin = loaded.find((l) => l.driver.chains.includes(w.chain));
    if (!plugin) return fail(`wallets.${i}.chain`, `no configured driver serves ${w.chain}`);
    if (!plugin.provisioner) fail(`wallets.${i}.chain`, `${plugin.entry.module} cannot provision wallets (it exports no createProvisioner)`);
    return plugin;
  });
  const members: ResolvedMember[][] = [];
  for (const [i, w] of config.wallets.entries()) {
    members.push(await Promise.all(w.members.map((m, k) => resolveMember(m, `wallets.${i}.members.${k}`, w.chain, plugins[i] as LoadedDriver, baseDir))));
  }

  const out: ProvisionedWallet[] = [];
  for (const [i, w] of config.wallets.entries()) {
    const at = `wallets.${i}`;
    const plugin = plugins[i] as LoadedDriver;
    const provisioner = plugin.provisioner as WalletProvisioner;

    const state = statePath === undefined ? undefined : readStateFile(statePath);
    const trusts = trustPaths.map((p, j) => readTrust(p, j));
    const known = [...(state?.wallets ?? []), ...trusts.flatMap((t) => t.wallets.map((x) => x.descriptor))].filter((d) => d.wallet === w.wallet);
    const existing = known[0];
    for (const other of known.slice(1)) {
      if (!sameJson(other, existing)) fail(`${at}.wallet`, `wallet ${w.wallet} has different descriptors in the state file and the trust files; fix them by hand first`);
    }
    const given = w.policy === undefined ? undefined : parsePolicy(w.policy);
    const stored = state?.policies.find((p) => p.wallet === w.wallet);
    const policy = stored ?? given;
    const digest = policy ? policyDigest(policy) : w.policy_digest;
    if (stored && given && policyDigest(given) !== digest) {
      fail(`${at}.policy`, `the state file already has a different policy for ${w.wallet} (digest ${digest}); edit it there`);
    }
    if (policy && w.policy_digest !== undefined && w.policy_digest !== digest) fail(`${at}.policy_digest`, `the policy for ${w.wallet} hashes to ${digest}`);
    if (trustPaths.length > 0 && digest === undefined) fail(`${at}.policy_digest`, `no policy to pin for ${w.wallet}: add its policy to the state file, or give policy_digest`);

    const request: ProvisionRequest = {
      wallet: w.wallet,
      chain: w.chain,
      members: (members[i] as ResolvedMember[]).map((m) => ({ address: m.address, weight: m.weight, curve: m.curve, ...(m.label !== undefined ? { label: m.label } : {}) })),
      quorum: w.quorum,
      funding: w.funding,
      ...(existing ? { existing } : {}),
      ...(w.fund_amount ? { fundAmount: w.fund_amount } : {}),
      ...(w.options ? { options: w.options } : {}),
    };
    log(`provision ${w.wallet} on ${w.chain}${existing ? ` (re-run: checking ${addressOf(existing)})` : ''}`);
    const result = await provisioner.provision(request);
    const descriptor = result.descriptor;
    for (const t of result.transactions) log(`  ${t.what}: ${t.txHash}`);

    const written: string[] = [];
    if (statePath !== undefined && state !== undefined && stateDir !== undefined) {
      const addPolicy = stored === undefined && given !== undefined;
      const setLifetime = w.lifetime !== undefined && !sameJson(state.lifetimes[w.wallet] ?? null, w.lifetime);
      const endpoints = Object.fromEntries((members[i] as ResolvedMember[]).flatMap((m) => (m.signer ? [[m.address, m.signer]] : [])));
      const next: StateFile = {
        ...state,
        wallets: [...state.wallets.filter((x) => x.wallet !== w.wallet), descriptor],
        policies: addPolicy ? [...state.policies, given] : state.policies,
        lifetimes: setLifetime ? { ...state.lifetimes, [w.wallet]: w.lifetime as IntentLifetimeInput } : state.lifetimes,
        signers: { ...state.signers, ...endpoints },
        drivers: config.drivers ? mergeDrivers(state.drivers, config.drivers.map((e) => rebaseEntry(e, baseDir, stateDir))) : state.drivers,
      };
      // The descriptor keeps its place in the list when it did not change: a re-run writes nothing.
      const before = state.wallets.find((x) => x.wallet === w.wallet);
      if (before && sameJson(before, descriptor)) next.wallets = state.wallets;
      if (canonicalJson(next) !== canonicalJson(state)) {
        writeStateFile(statePath, next);
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
      const wallets = before && sameJson(before, entry) ? t.wallets : [...t.wallets.filter((x) => x.descriptor.wallet !== w.wallet), entry];
      const drivers = config.drivers ? mergeDrivers(t.drivers ?? [], config.drivers.map((e) => rebaseEntry(e, baseDir, dirname(p)))) : t.drivers;
      const next = parseWith(TrustFileSchema, { ...t, wallets, approvers: mergeApprovers(t.approvers, approvers, `trust_files.${j}`), ...(drivers ? { drivers } : {}) }, `trust_files.${j}`);
      const text = `${JSON.stringify(next, null, 2)}\n`;
      if (text === readFileSync(p, 'utf8')) return;
      writeFileAtomic(p, text, 0o600);
      written.push(p);
    });

    const reconcile = compareControl(descriptor, await plugin.driver.controlState({ wallet: descriptor }));
    out.push({ wallet: w.wallet, chain: w.chain, address: addressOf(descriptor), changed: result.changed, transactions: result.transactions, written, reconcile });
    if (!reconcile.clean) {
      const what = reconcile.drift.map((d) => `${d.field}: expected ${JSON.stringify(d.expected)}, ledger ${JSON.stringify(d.actual)}`).join('; ');
      fail(at, `after provisioning, ${w.wallet} does not reconcile: ${what}`);
    }
  }
  return out;
}
