/**
 * @module provision
 * `vault provision` for Stellar: sets a native-multisig wallet up on its ledger from members and a
 * quorum. A fresh ed25519 key is generated here (and never leaves this module); its account is
 * funded by friendbot or by a `createAccount` from an operator key, then every member becomes an
 * ed25519 signer with its weight, the low, medium and high thresholds become the quorum and the
 * master weight 0, so only the members can move funds. Re-running with `existing` only reads the
 * ledger: a match sends nothing, a difference is an error naming it.
 *
 * Transport, submission and result classification are the driver's: `driver.submit` classifies
 * Horizon's answer, `payloadFateOf` (fate.ts) decides when each transaction is final.
 */
import { Keypair, Operation, StrKey, TransactionBuilder, Account, xdr } from '@stellar/stellar-base';
import {
  endpointUrlProblem,
  RefusedError,
  TransportError,
  ValidationError,
  WalletDescriptorSchema,
  type BuiltPayload,
  type ProvisionRequest,
  type ProvisionResult,
  type WalletDescriptor,
  type WalletProvisioner,
} from '@vault/sdk';
import { addressProblem } from './address.js';
import { toDecimal } from './amounts.js';
import { INT64_MAX, PROVISION_DEFAULT_FUND_STROOPS, STELLAR_TX_FORMAT } from './constants.js';
import { createStellarDriver, type StellarChainConfig, type StellarDriver } from './driver.js';
import { payloadFateOf, type FateContext } from './fate.js';
import { HorizonClient, baseFeeOf, problemExtras, type AccountFacts, type FetchLike } from './horizon.js';
import { hex, type StellarPayload } from './payload.js';
import { primaryCode, resultCodesOfXdr } from './result-codes.js';

/** stellar-core allows at most 20 signers besides the master key. */
export const MAX_SIGNERS = 20;
/** Weights and thresholds are one byte. */
const MAX_WEIGHT = 255;

export interface StellarProvisionerOptions {
  /** Chains served, as for the driver (Horizon URL and passphrase each). */
  chains: Record<string, StellarChainConfig>;
  name?: string;
  /** Fetch for Horizon and friendbot (default globalThis.fetch). */
  fetch?: FetchLike;
  /** Where `key_env` funding keys are read (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Clock in Unix seconds (default Date.now). */
  now?: () => number;
}

interface Member {
  address: string;
  weight: number;
  /** As requested; the descriptor falls back to the earlier run's label, then `member-<n>`. */
  label: string | undefined;
}

interface Checked {
  wallet: string;
  chain: string;
  members: Member[];
  quorum: number;
  existing: WalletDescriptor | null;
  funding: { kind: 'faucet'; url: URL } | { kind: 'key_env'; env: string };
  fundAmount: bigint;
}

const REQUEST_KEYS = ['wallet', 'chain', 'members', 'quorum', 'existing', 'funding', 'fundAmount'];
const MEMBER_KEYS = ['address', 'weight', 'curve', 'label'];

function bad(path: string, message: string): never {
  throw new ValidationError('request', [{ path, message }]);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function byteInteger(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_WEIGHT) bad(path, `must be an integer from 1 to ${MAX_WEIGHT} (Stellar weights and thresholds are one byte)`);
  return v;
}

function httpUrl(v: unknown, path: string): URL {
  if (endpointUrlProblem(v) !== null) bad(path, 'must be an http(s) URL without credentials');
  return new URL(v as string);
}

/**
 * What the ledger's control of `account` differs in from `members`/`quorum` as this provisioner
 * sets wallets up (signers with exactly these weights, low = medium = high = quorum, master
 * weight 0). Empty when it matches.
 */
export function controlDifferences(account: AccountFacts, members: readonly { address: string; weight: number }[], quorum: number): string[] {
  const out: string[] = [];
  if (account.masterWeight !== 0) out.push(`master key weight on ledger ${account.masterWeight}, requested 0`);
  const onLedger = account.signers.filter((x) => x.weight > 0 && x.key !== account.id);
  const want = new Map(members.map((m) => [m.address, m.weight]));
  for (const x of onLedger) {
    if (x.type !== 'ed25519_public_key') out.push(`signer ${x.key} on ledger is a ${x.type}, not requested`);
    else if (!want.has(x.key)) out.push(`signer ${x.key} (weight ${x.weight}) on ledger, not requested`);
    else if (want.get(x.key) !== x.weight) out.push(`weight of ${x.key} on ledger ${x.weight}, requested ${want.get(x.key)}`);
  }
  for (const m of members) if (!onLedger.some((x) => x.key === m.address)) out.push(`signer ${m.address} requested (weight ${m.weight}), not on ledger`);
  const t = account.thresholds;
  if (t.med !== quorum) out.push(`quorum on ledger ${t.med}, requested ${quorum}`);
  if (t.low !== quorum) out.push(`low threshold on ledger ${t.low}, requested ${quorum}`);
  if (t.high !== quorum) out.push(`high threshold on ledger ${t.high}, requested ${quorum}`);
  return out;
}

/**
 * The Stellar WalletProvisioner.
 *
 * @example
 * const provisioner = createStellarProvisioner({ chains: { 'stellar:testnet': { horizonUrl: 'https://horizon-testnet.stellar.org', networkPassphrase: STELLAR_NETWORKS['stellar:testnet'] } } })
 * const { descriptor } = await provisioner.provision({
 *   wallet: 'treasury', chain: 'stellar:testnet', quorum: 2,
 *   members: [{ address: 'GA…', weight: 1, curve: 'ed25519' }, { address: 'GB…', weight: 1, curve: 'ed25519' }, { address: 'GC…', weight: 1, curve: 'ed25519' }],
 *   funding: { kind: 'faucet', url: 'https://friendbot.stellar.org' },
 * })
 */
export function createStellarProvisioner(options: StellarProvisionerOptions): WalletProvisioner {
  const name = options.name ?? '@vault/driver-stellar';
  const fetchFn = options.fetch ?? (globalThis.fetch as unknown as FetchLike);
  const env = options.env ?? process.env;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const driver: StellarDriver = createStellarDriver({ chains: options.chains, name, fetch: fetchFn, now });
  const chains = driver.chains;

  const check = (request: ProvisionRequest): Checked => {
    if (!isObject(request)) bad('', 'the request must be an object');
    for (const k of Object.keys(request)) if (!REQUEST_KEYS.includes(k)) bad(k, 'unknown field');
    const { wallet, chain, members, quorum, existing, funding, fundAmount } = request as unknown as Record<string, unknown>;
    if (typeof wallet !== 'string' || wallet === '' || wallet.length > 128) bad('wallet', 'must be a wallet id of 1 to 128 characters');
    if (typeof chain !== 'string' || !chains.includes(chain)) bad('chain', `${JSON.stringify(chain)} is not served by ${name} (serves ${chains.join(', ')})`);
    if (!Array.isArray(members) || members.length === 0 || members.length > MAX_SIGNERS) bad('members', `must list 1 to ${MAX_SIGNERS} members (stellar-core's signer limit)`);
    const seen = new Map<string, number>();
    const checkedMembers = members.map((m: unknown, i): Member => {
      const at = `members.${i}`;
      if (!isObject(m)) bad(at, 'must be an object { address, weight, curve, label? }');
      for (const k of Object.keys(m)) if (!MEMBER_KEYS.includes(k)) bad(`${at}.${k}`, 'unknown field');
      if (m['curve'] !== 'ed25519') bad(`${at}.curve`, `Stellar signers are ed25519 keys (G…); ${JSON.stringify(m['curve'])} is not supported`);
      const address = m['address'];
      const valid = typeof address === 'string' ? driver.validateAddress({ chain, address }) : { valid: false as const, reason: 'address must be a string' };
      if (!valid.valid) bad(`${at}.address`, valid.reason);
      const problem = addressProblem(address, ['account']);
      if (problem) bad(`${at}.address`, problem);
      if (seen.has(address as string)) bad(`${at}.address`, `${address as string} is listed twice (also members.${seen.get(address as string)})`);
      seen.set(address as string, i);
      const weight = byteInteger(m['weight'], `${at}.weight`);
      const label = m['label'];
      if (label !== undefined && (typeof label !== 'string' || label === '' || label.length > 128)) bad(`${at}.label`, 'must be a string of 1 to 128 characters');
      return { address: address as string, weight, label };
    });
    const q = byteInteger(quorum, 'quorum');
    const total = checkedMembers.reduce((sum, m) => sum + m.weight, 0);
    if (total < q) bad('quorum', `quorum ${q} is more than the members' total weight ${total}: the wallet could never sign`);

    if (!isObject(funding)) bad('funding', 'must be { kind: "faucet", url } or { kind: "key_env", env }');
    let checkedFunding: Checked['funding'];
    if (funding['kind'] === 'faucet') {
      for (const k of Object.keys(funding)) if (k !== 'kind' && k !== 'url') bad(`funding.${k}`, 'unknown field');
      checkedFunding = { kind: 'faucet', url: httpUrl(funding['url'], 'funding.url') };
      if (fundAmount !== undefined) bad('fundAmount', 'friendbot funds a fixed amount; fundAmount applies to key_env funding only');
    } else if (funding['kind'] === 'key_env') {
      for (const k of Object.keys(funding)) if (k !== 'kind' && k !== 'env') bad(`funding.${k}`, 'unknown field');
      const e = funding['env'];
      if (typeof e !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(e)) bad('funding.env', 'must be the name of an environment variable');
      checkedFunding = { kind: 'key_env', env: e };
    } else {
      bad('funding.kind', 'must be "faucet" or "key_env"');
    }
    let amount = BigInt(PROVISION_DEFAULT_FUND_STROOPS);
    if (fundAmount !== undefined) {
      if (typeof fundAmount !== 'string' || !/^[1-9][0-9]{0,18}$/.test(fundAmount) || BigInt(fundAmount) > INT64_MAX) {
        bad('fundAmount', 'must be a positive integer string of stroops (10^-7 XLM)');
      }
      amount = BigInt(fundAmount);
    }

    let checkedExisting: WalletDescriptor | null = null;
    if (existing !== undefined) {
      const parsed = WalletDescriptorSchema.safeParse(existing);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        bad(['existing', ...(issue?.path ?? []).map(String)].join('.'), issue?.message ?? 'not a WalletDescriptor');
      }
      const d = parsed.data;
      if (d.wallet !== wallet) bad('existing.wallet', `the existing descriptor is wallet ${JSON.stringify(d.wallet)}, the request is for ${JSON.stringify(wallet)}`);
      if (d.chain !== chain) bad('existing.chain', `the existing descriptor is on ${d.chain}, the request is for ${chain}`);
      if (d.control.kind !== 'native_multisig') bad('existing.control.kind', 'Stellar wallets are native_multisig accounts');
      const own = d.control.address;
      const problem = addressProblem(own, ['account']);
      if (problem) bad('existing.control.address', problem);
      const self = checkedMembers.findIndex((m) => m.address === own);
      if (self >= 0) bad(`members.${self}.address`, "the wallet account's own key cannot be a member: its master weight is 0");
      checkedExisting = d;
    }
    return { wallet, chain, members: checkedMembers, quorum: q, existing: checkedExisting, funding: checkedFunding, fundAmount: amount };
  };

  const descriptorOf = (c: Checked, address: string): WalletDescriptor => {
    const earlier = new Map(c.existing?.control.kind === 'native_multisig' ? c.existing.control.signers.map((m) => [m.address, m.label]) : []);
    return WalletDescriptorSchema.parse({
      wallet: c.wallet,
      chain: c.chain,
      control: {
        kind: 'native_multisig',
        address,
        signers: c.members.map((m, i) => ({ address: m.address, curve: 'ed25519', weight: m.weight, label: m.label ?? earlier.get(m.address) ?? `member-${i + 1}` })),
        quorum: c.quorum,
      },
    });
  };

  return {
    chains,
    async provision(request: ProvisionRequest): Promise<ProvisionResult> {
      const c = check(request);
      const config = options.chains[c.chain] as StellarChainConfig;
      const horizon = new HorizonClient(config.horizonUrl, config.fetch ?? fetchFn, c.chain);
      const ctx: FateContext = { chain: c.chain, horizon, networkPassphrase: config.networkPassphrase };
      const interval = config.timeoutPollIntervalMs ?? 500;

      // Re-run: read only. Never "fix" a live wallet and never create a second one.
      if (c.existing) {
        await ensureNetwork(ctx);
        const address = (c.existing.control as { address: string }).address;
        const account = await driver.account({ chain: c.chain, address });
        if (!account) {
          throw new RefusedError(`provision ${c.wallet}: account ${address} of the existing descriptor does not exist on ${c.chain}; not creating another one`, {
            data: { reason: 'control_mismatch', chain: c.chain, step: 'check' },
          });
        }
        const diff = controlDifferences(account, c.members, c.quorum);
        if (diff.length > 0) {
          throw new RefusedError(`provision ${c.wallet}: the ledger's control of ${address} differs from the request: ${diff.join('; ')}`, {
            data: { reason: 'control_mismatch', chain: c.chain, step: 'check', differences: diff },
          });
        }
        return { descriptor: descriptorOf(c, address), changed: false, transactions: [] };
      }

      // Read the funding key before touching the ledger: a bad variable costs nothing.
      let funder: Keypair | null = null;
      if (c.funding.kind === 'key_env') funder = funderKey(env, c.funding.env);
      await ensureNetwork(ctx);

      const key = Keypair.random();
      const address = key.publicKey();
      const transactions: ProvisionResult['transactions'] = [];
      const setup = [
        ...c.members.map((m) => Operation.setOptions({ source: address, signer: { ed25519PublicKey: m.address, weight: m.weight } })),
        Operation.setOptions({ source: address, masterWeight: 0, lowThreshold: c.quorum, medThreshold: c.quorum, highThreshold: c.quorum }),
      ];
      const what = `${c.members.length} signer(s) added, thresholds low/medium/high ${c.quorum}, master weight 0`;

      if (funder) {
        // One transaction: createAccount from the funder, then the set-up operations with the new
        // account as their source (signed by its key, as stellar-core allows for an account an
        // earlier operation creates). All or nothing: a failure strands no funds.
        const source = await driver.account({ chain: c.chain, address: funder.publicKey() });
        if (!source) throw stepFailed(c, 'create_account', 'op_no_source_account', `funding account ${funder.publicKey()} does not exist on ${c.chain}`);
        const ops = [Operation.createAccount({ destination: address, startingBalance: toDecimal(c.fundAmount) }), ...setup];
        const txHash = await send(c, ctx, 'create_account', source, ops, [funder, key]);
        transactions.push({ txHash, what: `create_account: ${address} created with ${c.fundAmount} stroops from ${funder.publicKey()}; ${what}` });
      } else {
        const funded = await friendbot(c, ctx, (c.funding as { url: URL }).url, address, interval);
        transactions.push({ txHash: funded, what: `fund: friendbot created ${address}` });
        const account = await driver.account({ chain: c.chain, address });
        if (!account) throw stepFailed(c, 'fund', 'op_no_account', `friendbot answered but ${address} does not exist on ${c.chain}`);
        const txHash = await send(c, ctx, 'set_signers', account, setup, [key], address);
        transactions.push({ txHash, what: `set_signers: ${what}` });
      }

      // The ledger, read back, must now be exactly what was asked.
      const after = await driver.account({ chain: c.chain, address });
      const diff = after ? controlDifferences(after, c.members, c.quorum) : [`account ${address} does not exist`];
      if (diff.length > 0) throw stepFailed(c, 'verify', 'control_mismatch', diff.join('; '));
      return { descriptor: descriptorOf(c, address), changed: true, transactions };
    },
  };

  /** Builds, signs, submits and waits until final; returns the hash. Throws naming the step. */
  async function send(c: Checked, ctx: FateContext, step: string, source: AccountFacts, ops: xdr.Operation[], keys: Keypair[], stranded?: string): Promise<string> {
    const config = options.chains[c.chain] as StellarChainConfig;
    const fees = await ctx.horizon.get('/fee_stats');
    if (fees.status !== 200) throw new TransportError(`provision ${c.wallet} step ${step}: Horizon ${c.chain} GET /fee_stats answered ${fees.status}`, { data: { chain: c.chain, step } });
    const timeout = config.txTimeoutSeconds ?? 300;
    let builder = new TransactionBuilder(new Account(source.id, source.sequence.toString()), {
      fee: String(baseFeeOf(fees.body)),
      networkPassphrase: config.networkPassphrase,
      timebounds: { minTime: 0, maxTime: now() + timeout },
    });
    for (const op of ops) builder = builder.addOperation(op);
    const tx = builder.build();
    const unsigned = tx.toEnvelope().toXDR('base64');
    const txHash = hex(tx.hash());
    for (const k of keys) tx.sign(k);
    const payload: StellarPayload = {
      format: STELLAR_TX_FORMAT,
      chain: c.chain,
      network_passphrase: config.networkPassphrase,
      source: source.id,
      sequence: tx.sequence,
      op: `provision:${step}`,
      threshold: 'high',
      tx_xdr: unsigned,
    };
    const built: BuiltPayload = { payload, digest: txHash, summary: `provision ${c.wallet}: ${step}` };
    const note = stranded ? ` (account ${stranded} was funded but not set up; its key is discarded, so it cannot be used)` : '';
    const submitted = await driver.submit({ chain: c.chain, blob: tx.toEnvelope().toXDR('base64') });
    if (submitted.status === 'rejected') throw stepFailed(c, step, submitted.code, `${submitted.message ?? 'rejected'}${note}`, txHash);
    // Final means closed-ledger state says so (fate.ts): applied, or dead with the ledger's code.
    const deadline = now() + timeout + 60;
    for (;;) {
      const fate = await payloadFateOf(ctx, payload, tx, built.digest);
      if (fate.fate === 'applied') return txHash;
      if (fate.fate === 'dead') throw stepFailed(c, step, fate.code, `${fate.message ?? fate.code}${note}`, txHash);
      if (now() > deadline) {
        throw new TransportError(`provision ${c.wallet} step ${step}: transaction ${txHash} not final ${timeout + 60} s after submission; look it up before re-running${note}`, {
          data: { chain: c.chain, step, txHash },
        });
      }
      await sleep(config.timeoutPollIntervalMs ?? 500);
    }
  }

  /** GET <faucet>?addr=G…, then waits until Horizon shows the account. Returns friendbot's tx hash. */
  async function friendbot(c: Checked, ctx: FateContext, url: URL, address: string, interval: number): Promise<string> {
    const target = new URL(url.href);
    target.searchParams.set('addr', address);
    let status: number;
    let body: unknown = null;
    try {
      const res = await fetchFn(target.href, { method: 'GET', headers: { accept: 'application/json' } });
      status = res.status;
      const text = await res.text();
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        body = null;
      }
    } catch (cause) {
      throw new TransportError(`provision ${c.wallet} step fund: friendbot at ${url.origin}${url.pathname} could not be reached`, { cause, data: { chain: c.chain, step: 'fund' } });
    }
    if (status !== 200) {
      const extras = problemExtras(body);
      const codes = extras.resultCodes ?? (extras.resultXdr ? resultCodesOfXdr(extras.resultXdr) : null);
      const detail = isObject(body) && typeof body['detail'] === 'string' ? `: ${body['detail']}` : '';
      throw stepFailed(c, 'fund', codes ? primaryCode(codes) : `http_${status}`, `friendbot answered ${status}${detail}`);
    }
    const hash = isObject(body) ? body['hash'] ?? body['id'] : undefined;
    if (typeof hash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(hash)) {
      throw new TransportError(`provision ${c.wallet} step fund: friendbot answered 200 without a transaction hash`, { data: { chain: c.chain, step: 'fund' } });
    }
    // Friendbot answers once its transaction is in a ledger; Horizon may ingest it a moment later.
    const polls = Math.max(options.chains[c.chain]?.timeoutPolls ?? 5, 1) * 2;
    for (let i = 0; i < polls; i++) {
      if (await driver.account({ chain: c.chain, address })) return hash.toLowerCase();
      await sleep(interval);
    }
    throw new TransportError(`provision ${c.wallet} step fund: friendbot reported ${hash} but Horizon does not show ${address}`, { data: { chain: c.chain, step: 'fund' } });
  }
}

function stepFailed(c: { wallet: string; chain: string }, step: string, code: string, message: string, txHash?: string): RefusedError {
  return new RefusedError(`provision ${c.wallet} step ${step}: ${code} ${message}`, {
    data: { reason: 'provision_failed', chain: c.chain, step, code, ...(txHash ? { txHash } : {}) },
  });
}

/** The funding key from the environment. Never logs or repeats the value. */
function funderKey(env: Readonly<Record<string, string | undefined>>, name: string): Keypair {
  const secret = env[name];
  if (secret === undefined || secret === '') bad('funding.env', `environment variable ${name} is not set`);
  if (!StrKey.isValidEd25519SecretSeed(secret)) bad('funding.env', `environment variable ${name} does not hold a Stellar secret seed (S…)`);
  return Keypair.fromSecret(secret);
}

/** Refuses a Horizon that serves another network than the chain's configured passphrase. */
async function ensureNetwork(ctx: FateContext): Promise<void> {
  const root = await ctx.horizon.get('/');
  if (root.status !== 200) throw new TransportError(`Horizon ${ctx.chain}: GET / answered ${root.status}`, { data: { chain: ctx.chain } });
  const passphrase = isObject(root.body) ? root.body['network_passphrase'] : undefined;
  if (passphrase !== ctx.networkPassphrase) {
    throw new RefusedError(`Horizon for ${ctx.chain} serves "${String(passphrase)}", not the configured "${ctx.networkPassphrase}"`, {
      data: { reason: 'network_mismatch', chain: ctx.chain },
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
