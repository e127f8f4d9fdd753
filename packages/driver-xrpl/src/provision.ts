/**
 * @module provision
 * `vault provision` for XRPL wallets: a fresh master keypair generated inside the call, the account
 * funded (a faucet, or a Payment from an operator's funded key named by an environment variable),
 * then SignerListSet (the members and quorum) and AccountSet asfDisableMaster, each single-signed by
 * the master key, autofilled by the driver's own fetchParams, submitted and tracked through the
 * driver until validated. The master key is dropped when the call returns: from then on only the
 * signer list can move the account's funds.
 *
 * Re-running with the descriptor an earlier run wrote (`existing`) reads the validated ledger and
 * sends nothing: it answers `changed: false` when the ledger matches the request, and an error
 * naming every difference otherwise (the set-up key is gone, so a live wallet is never "fixed").
 */
import {
  endpointUrlProblem,
  NotFoundError,
  RefusedError,
  TransportError,
  ValidationError,
  VaultError,
  WalletDescriptorSchema,
  compareControl,
  parseWith,
  type BuiltPayload,
  type ControlState,
  type ProvisionRequest,
  type ProvisionResult,
  type SignerDesc,
  type ValidationIssue,
  type WalletDescriptor,
  type WalletProvisioner,
} from '@vault/sdk';
import { isValidXAddress, xAddressToClassicAddress } from 'ripple-address-codec';
import { encode, encodeForSigning } from 'ripple-binary-codec';
import { deriveAddress, deriveKeypair, generateSeed, sign } from 'ripple-keypairs';
import { hashes } from 'xrpl';
import { signingHash, type TxJson } from './build.js';
import {
  ACCOUNT_SET_FLAGS,
  DEFAULT_MAX_FEE_DROPS,
  LEGACY_NETWORK_ID_MAX,
  MAX_SIGNERS,
  PROVISION_WORKING_BALANCE_DROPS,
  XRPL_PAYLOAD_FORMAT,
  XRPL_TESTNET_FAUCET_URL,
} from './constants.js';
import { chainTransport, confirmUntilFinal, createXrplDriver, type XrplChainConfig, type XrplDriver } from './driver.js';
import { rpcCall, rpcError, rpcErrorMessage, type FetchLike } from './rpc.js';
import { compareAccountIds, formatScaled, parseScaled } from './util.js';

// Here, not in the keyless root entry's constants: re-exported for `@vault/driver-xrpl/provision`.
export { PROVISION_WORKING_BALANCE_DROPS, XRPL_DEVNET_FAUCET_URL, XRPL_TESTNET_FAUCET_URL } from './constants.js';

export interface XrplProvisionerOptions {
  /** One entry per served chain, as `createXrplDriver` takes them. */
  chains: Record<string, XrplChainConfig>;
  /** Name used in errors. Default `@vault/driver-xrpl`. */
  name?: string;
  /** Transport for every chain without its own, and for the faucet. Default: global fetch. */
  fetch?: FetchLike;
  /** Where `key_env` funding reads its variable. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** How often a set-up transaction's status is polled. Default 1000 ms. */
  pollIntervalMs?: number;
  /** How long one step may wait for validation before it fails. Default 180 s. */
  maxWaitMs?: number;
}

type Keypair = { publicKey: string; privateKey: string };
type Member = { address: string; weight: number; curve: SignerDesc['curve']; label?: string };
type Funding = { kind: 'faucet'; url: string } | { kind: 'key_env'; env: string };
interface CheckedRequest {
  wallet: string;
  chain: string;
  members: Member[];
  quorum: number;
  funding: Funding;
  fundAmount: bigint | null;
  existing: WalletDescriptor | null;
}

const CURVES = new Set(['ed25519', 'secp256k1']);
const MAX_WEIGHT = 65535;
const MAX_QUORUM = 0xffffffff;
const MAX_DROPS = 100_000_000_000_000_000n;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A URL a faucet may live at: http(s), no credentials. */
function faucetUrlProblem(url: unknown): string | null {
  const problem = endpointUrlProblem(url);
  if (problem === null || problem.startsWith('must not carry credentials')) return problem;
  return `must be an http(s) faucet URL (the public testnet's is ${XRPL_TESTNET_FAUCET_URL})`;
}

/**
 * Signs `tx` with a single key (SigningPubKey + TxnSignature over the single-signing data) and
 * returns the blob and the hash the ledger will know it by (computed here, not echoed by a server).
 *
 * @example
 * const { blob, hash } = signSingle({ TransactionType: 'AccountSet', Account, Fee: '12', Sequence: 5 }, deriveKeypair(seed))
 */
export function signSingle(tx: TxJson, keypair: Keypair): { blob: string; hash: string } {
  const withKey: TxJson = { ...tx, SigningPubKey: keypair.publicKey };
  const TxnSignature = sign(encodeForSigning(withKey), keypair.privateKey);
  const blob = encode({ ...withKey, TxnSignature });
  return { blob, hash: hashes.hashSignedTx(blob) };
}

/**
 * The provisioner over the same chain configuration as the driver. Use `createProvisioner` (the
 * plugin entry) for JSON options; this form also takes a fetch, an environment and poll timings.
 *
 * @example
 * const provisioner = createXrplProvisioner({ chains: { 'xrpl:testnet': { url: 'https://s.altnet.rippletest.net:51234/', networkId: 1 } } })
 * const { descriptor } = await provisioner.provision({
 *   wallet: 'treasury', chain: 'xrpl:testnet', quorum: 2,
 *   members: [{ address: 'r…', weight: 1, curve: 'ed25519' }, { address: 'r…', weight: 1, curve: 'secp256k1' }, { address: 'r…', weight: 1, curve: 'ed25519' }],
 *   funding: { kind: 'faucet', url: 'https://faucet.altnet.rippletest.net/accounts' },
 * })
 */
export function createXrplProvisioner(options: XrplProvisionerOptions): WalletProvisioner {
  const name = options.name ?? '@vault/driver-xrpl';
  const defaultFetch = options.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined);
  const driver: XrplDriver = createXrplDriver({ chains: options.chains, name, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const chains = driver.chains;
  const intervalMs = options.pollIntervalMs ?? 1000;
  const attempts = Math.max(1, Math.ceil((options.maxWaitMs ?? 180_000) / intervalMs));
  const env = () => options.env ?? process.env;
  const config = (chain: string) => options.chains[chain] as XrplChainConfig;
  const rpc = (chain: string, method: string, params: Record<string, unknown> = {}) => rpcCall(chainTransport(name, chain, config(chain), defaultFetch), method, params);

  /** Checks the request's shape and values; every problem is an issue naming its field. */
  const check = (raw: ProvisionRequest): CheckedRequest => {
    const issues: ValidationIssue[] = [];
    const bad = (path: string, message: string) => issues.push({ path, message });
    const r = (isObject(raw) ? raw : {}) as Record<string, unknown>;
    if (!isObject(raw)) bad('', 'the request must be an object');
    const wallet = r['wallet'];
    if (typeof wallet !== 'string' || wallet === '' || wallet.length > 128) bad('wallet', 'must be a wallet id of 1 to 128 characters');
    const chain = r['chain'];
    const served = typeof chain === 'string' && chains.includes(chain);
    if (!served) bad('chain', `must be a chain this provisioner serves (${chains.join(', ')})`);
    const members: Member[] = [];
    const rawMembers = r['members'];
    if (!Array.isArray(rawMembers) || rawMembers.length === 0 || rawMembers.length > MAX_SIGNERS) {
      bad('members', `must be an array of 1 to ${MAX_SIGNERS} members (an XRPL signer list's limit)`);
    } else {
      const seen = new Map<string, number>();
      rawMembers.forEach((m: unknown, i) => {
        const at = `members.${i}`;
        if (!isObject(m)) return void bad(at, 'must be an object { address, weight, curve, label? }');
        const address = m['address'];
        let normalized: string | null = null;
        if (typeof address !== 'string') bad(`${at}.address`, 'must be an XRPL address');
        else if (served) {
          const v = driver.validateAddress({ chain: chain as string, address });
          if (!v.valid) bad(`${at}.address`, v.reason);
          else if (isValidXAddress(address) && xAddressToClassicAddress(address).tag !== false) bad(`${at}.address`, 'a signer is an account: an X-address with a destination tag cannot be one');
          else normalized = v.normalized;
        }
        if (normalized !== null) {
          const first = seen.get(normalized);
          if (first !== undefined) bad(`${at}.address`, `the same account as members.${first}`);
          else seen.set(normalized, i);
        }
        const weight = m['weight'];
        if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > MAX_WEIGHT) bad(`${at}.weight`, `must be an integer from 1 to ${MAX_WEIGHT} (SignerWeight)`);
        const curve = m['curve'];
        if (typeof curve !== 'string' || !CURVES.has(curve)) bad(`${at}.curve`, 'must be ed25519 or secp256k1 (the curves XRPL accounts use)');
        const label = m['label'];
        if (label !== undefined && (typeof label !== 'string' || label.length > 128)) bad(`${at}.label`, 'must be a string of at most 128 characters');
        members.push({ address: normalized ?? String(address), weight: Number(weight), curve: curve as Member['curve'], ...(typeof label === 'string' ? { label } : {}) });
      });
    }
    const quorum = r['quorum'];
    if (typeof quorum !== 'number' || !Number.isInteger(quorum) || quorum < 1 || quorum > MAX_QUORUM) bad('quorum', `must be an integer from 1 to ${MAX_QUORUM}`);
    else if (members.length > 0 && members.every((m) => Number.isInteger(m.weight)) && quorum > members.reduce((s, m) => s + m.weight, 0)) {
      bad('quorum', `${quorum} is more than the members' total weight ${members.reduce((s, m) => s + m.weight, 0)}: unreachable`);
    }
    const funding = r['funding'];
    if (!isObject(funding)) bad('funding', 'must be { kind: "faucet", url } or { kind: "key_env", env }');
    else if (funding['kind'] === 'faucet') {
      const problem = faucetUrlProblem(funding['url']);
      if (problem) bad('funding.url', problem);
    } else if (funding['kind'] === 'key_env') {
      const v = funding['env'];
      if (typeof v !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(v)) bad('funding.env', 'must be the name of an environment variable');
    } else bad('funding.kind', 'must be "faucet" or "key_env"');
    const fundRaw = r['fundAmount'];
    let fundAmount: bigint | null = null;
    if (fundRaw !== undefined) {
      if (typeof fundRaw !== 'string' || !/^[1-9][0-9]{0,17}$/.test(fundRaw) || BigInt(fundRaw) > MAX_DROPS) bad('fundAmount', 'must be a positive integer string of drops');
      else fundAmount = BigInt(fundRaw);
    }
    let existing: WalletDescriptor | null = null;
    if (r['existing'] !== undefined) {
      try {
        existing = parseWith(WalletDescriptorSchema, r['existing'], 'existing');
      } catch (e) {
        for (const issue of (e as ValidationError).issues) bad(`existing${issue.path === '' ? '' : `.${issue.path}`}`, issue.message);
      }
      if (existing) {
        if (existing.wallet !== wallet) bad('existing.wallet', `is ${JSON.stringify(existing.wallet)}, not the requested wallet ${JSON.stringify(wallet)}`);
        if (existing.chain !== chain) bad('existing.chain', `is ${existing.chain}, not the requested chain ${String(chain)}`);
        if (existing.control.kind !== 'native_multisig') bad('existing.control.kind', 'XRPL wallets use native_multisig control');
        else if (served) {
          const v = driver.validateAddress({ chain: chain as string, address: existing.control.address });
          if (!v.valid || v.normalized !== existing.control.address || isValidXAddress(existing.control.address)) bad('existing.control.address', v.valid ? 'must be the classic address' : v.reason);
        }
      }
    }
    if (issues.length > 0) throw new ValidationError('request', issues);
    return { wallet: wallet as string, chain: chain as string, members, quorum: quorum as number, funding: funding as Funding, fundAmount, existing };
  };

  /** The descriptor for `address`: request order, labels from the request, else the earlier run's, else member-<n>. */
  const describe = (req: CheckedRequest, address: string): WalletDescriptor => {
    const earlier = new Map(req.existing?.control.kind === 'native_multisig' ? req.existing.control.signers.map((s) => [s.address, s.label]) : []);
    return {
      wallet: req.wallet,
      chain: req.chain,
      control: {
        kind: 'native_multisig',
        address,
        signers: req.members.map((m, i) => ({ address: m.address, curve: m.curve, weight: m.weight, label: m.label ?? earlier.get(m.address) ?? `member-${i + 1}` })),
        quorum: req.quorum,
      },
    };
  };

  /** Every way the ledger's control state differs from the descriptor, in words. */
  const differences = (wanted: WalletDescriptor, state: ControlState) => {
    const out: { field: string; expected: unknown; actual: unknown; message: string }[] = [];
    for (const d of compareControl(wanted, state).drift) {
      let message: string;
      if (d.field === 'quorum') message = `quorum on ledger ${String(d.actual)}, requested ${String(d.expected)}`;
      else if (d.field === 'masterKeyEnabled') message = 'master key enabled on ledger, requested disabled';
      else if (d.field.startsWith('members.')) {
        const who = d.field.slice('members.'.length);
        message =
          d.expected === null
            ? `member ${who} on ledger (weight ${String(d.actual)}), not requested`
            : d.actual === null
              ? `member ${who} requested (weight ${String(d.expected)}), not on ledger`
              : `member ${who} weight on ledger ${String(d.actual)}, requested ${String(d.expected)}`;
      } else message = `${d.field} on ledger ${String(d.actual)}, requested ${String(d.expected)}`;
      out.push({ field: d.field, expected: d.expected, actual: d.actual, message });
    }
    const regularKey = (state.extra as Record<string, unknown> | undefined)?.['regularKey'];
    if (typeof regularKey === 'string') out.push({ field: 'regularKey', expected: null, actual: regularKey, message: `regular key ${regularKey} set on ledger, requested none` });
    return out;
  };

  /** A descriptor-shaped handle on any account, for the driver's reads (only the address is used). */
  const handle = (chain: string, address: string): WalletDescriptor => ({
    wallet: `provision:${address}`,
    chain,
    control: { kind: 'native_multisig', address, signers: [{ address, curve: 'ed25519', weight: 1, label: 'handle' }], quorum: 1 },
  });

  /** Runs one step; faults that are not already named get the step's name. */
  const step = async <T>(stepName: string, account: string | null, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof VaultError && (e.data as Record<string, unknown> | null)?.['step'] !== undefined) throw e;
      const data = { step: stepName, ...(account ? { account } : {}) };
      const why = e instanceof VaultError ? e.shortMessage : (e as Error)?.message ?? String(e);
      if (e instanceof TransportError) throw new TransportError(`provision step ${stepName}: ${why}`, { cause: e, data });
      if (e instanceof ValidationError) throw e;
      throw new RefusedError(`provision step ${stepName}: ${why}`, { cause: e, data });
    }
  };
  const failStep = (stepName: string, code: string, message: string, data: Record<string, unknown>): never => {
    throw new RefusedError(`provision step ${stepName}: ${code} ${message}`.trim(), { data: { step: stepName, code, ...data } });
  };

  /** The BuiltPayload form `confirm` tracks a transaction by (Account, Sequence, LastLedgerSequence). */
  const tracking = (chain: string, tx: TxJson): BuiltPayload => {
    const unsigned = { ...tx, SigningPubKey: '' };
    return { payload: { format: XRPL_PAYLOAD_FORMAT, chain, tx_json: unsigned }, digest: signingHash(unsigned), summary: `${String(tx['TransactionType'])} ${String(tx['Account'])} seq ${String(tx['Sequence'])}` };
  };

  /** Autofills, single-signs, submits and waits until validated; returns the hash. */
  const send = async (chain: string, stepName: string, account: string, keypair: Keypair, fields: TxJson): Promise<string> =>
    step(stepName, account, async () => {
      const params = await driver.fetchParams({ wallet: handle(chain, account) });
      const maxFee = config(chain).maxFeeDrops ?? DEFAULT_MAX_FEE_DROPS;
      if (params.base_fee_drops > maxFee) failStep(stepName, 'fee_too_high', `the network asks ${params.base_fee_drops} drops, over maxFeeDrops ${maxFee}`, { account });
      const tx: TxJson = {
        ...fields,
        Account: account,
        Fee: String(params.base_fee_drops),
        Sequence: params.sequence,
        LastLedgerSequence: params.last_ledger_sequence,
        ...(params.network_id !== null && params.network_id > LEGACY_NETWORK_ID_MAX ? { NetworkID: params.network_id } : {}),
      };
      const { blob, hash } = signSingle(tx, keypair);
      const submitted = await driver.submit({ chain, blob });
      if (submitted.status === 'rejected') failStep(stepName, submitted.code, submitted.message, { account, txHash: hash, retriable: submitted.retriable });
      const outcome = await confirmUntilFinal(driver, chain, hash, tracking(chain, tx), { attempts, intervalMs });
      if (outcome.status === 'failed') failStep(stepName, outcome.code, outcome.message, { account, txHash: hash });
      if (outcome.status !== 'confirmed') {
        throw new TransportError(`provision step ${stepName}: ${hash} not validated after ${attempts * intervalMs} ms`, { data: { step: stepName, account, txHash: hash } });
      }
      return hash;
    });

  /** The chain's reserves and base fee (drops) from server_info; also checks the network id. */
  const prepare = (chain: string) =>
    step('prepare', null, async () => {
      const r = await rpc(chain, 'server_info');
      if (rpcError(r) !== null) throw new TransportError(`XRPL server_info on ${chain}: ${rpcErrorMessage(r)}`, { data: { method: 'server_info' } });
      const info = (r['info'] ?? {}) as Record<string, unknown>;
      const expected = config(chain).networkId;
      const reported = typeof info['network_id'] === 'number' ? info['network_id'] : 0;
      if (expected !== undefined && reported !== expected) {
        throw new RefusedError(`wrong network: ${config(chain).url} reports network id ${reported}, ${chain} is configured as ${expected}`, { data: { step: 'prepare', expected, reported } });
      }
      const v = (info['validated_ledger'] ?? {}) as Record<string, unknown>;
      const drops = (k: string) => (typeof v[k] === 'number' || typeof v[k] === 'string' ? parseScaled(String(v[k]), 6) : null);
      const base = drops('reserve_base_xrp');
      const increment = drops('reserve_inc_xrp');
      const fee = drops('base_fee_xrp');
      if (base === null || increment === null || fee === null) throw new TransportError(`XRPL server_info on ${chain}: no validated ledger reserves`, { data: { method: 'server_info' } });
      return { base, increment, fee };
    });

  /** Waits until `address` is in a validated ledger; returns its XRP balance (drops). */
  const funded = async (chain: string, address: string): Promise<bigint> => {
    for (let i = 0; i < attempts; i++) {
      const r = await rpc(chain, 'account_info', { account: address, ledger_index: 'validated' });
      const err = rpcError(r);
      if (err !== null && err !== 'actNotFound') throw new TransportError(`XRPL account_info on ${chain}: ${err}: ${rpcErrorMessage(r)}`, { data: { method: 'account_info', error: err } });
      const balance = ((r['account_data'] ?? {}) as Record<string, unknown>)['Balance'];
      if (err === null && typeof balance === 'string' && /^\d+$/.test(balance)) return BigInt(balance);
      if (err === null) throw new TransportError(`XRPL account_info on ${chain}: no Balance for ${address}`, { data: { method: 'account_info' } });
      if (i < attempts - 1) await new Promise((res) => setTimeout(res, intervalMs));
    }
    throw new TransportError(`${address} not in a validated ledger after ${attempts * intervalMs} ms`, { data: { account: address } });
  };

  /** POSTs the faucet for `address`; returns the faucet's transaction hash when it names one. */
  const askFaucet = async (url: string, address: string, amount: bigint): Promise<string | null> => {
    const f = defaultFetch;
    if (!f) throw new TransportError(`${name}: no fetch available for the faucet`);
    let status: number;
    let text: string;
    try {
      const res = await f(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ destination: address, xrpAmount: formatScaled(amount, 6) }),
        signal: AbortSignal.timeout(30_000),
      });
      status = res.status;
      text = await res.text();
    } catch (cause) {
      throw new TransportError(`faucet ${url} failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    }
    if (status < 200 || status > 299) throw new TransportError(`faucet ${url} answered HTTP ${status}: ${text.slice(0, 200)}`, { data: { status } });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch (cause) {
      throw new TransportError(`faucet ${url}: the reply is not JSON`, { cause });
    }
    const account = (isObject(body['account']) ? body['account'] : {}) as Record<string, unknown>;
    const paid = account['classicAddress'] ?? account['address'];
    if (paid !== address) throw new TransportError(`faucet ${url}: the reply does not name ${address} as the funded account`, { data: { reply: text.slice(0, 200) } });
    const hash = body['transactionHash'] ?? body['hash'];
    return typeof hash === 'string' && /^[0-9A-Fa-f]{64}$/.test(hash) ? hash.toUpperCase() : null;
  };

  /** The funder's keypair from the environment; never echoes the value. */
  const funderKey = (variable: string): Keypair & { address: string } => {
    const value = env()[variable];
    if (value === undefined || value.trim() === '') throw new ValidationError('request', [{ path: 'funding.env', message: `environment variable ${variable} is not set` }]);
    let keypair: Keypair;
    try {
      keypair = deriveKeypair(value.trim());
    } catch {
      throw new ValidationError('request', [{ path: 'funding.env', message: `environment variable ${variable} does not hold an XRPL seed (s…)` }]);
    }
    return { ...keypair, address: deriveAddress(keypair.publicKey) };
  };

  /** Re-run: read the validated ledger, send nothing, fail on any difference. */
  const recheck = async (req: CheckedRequest, existing: WalletDescriptor): Promise<ProvisionResult> => {
    const address = (existing.control as { address: string }).address;
    const wanted = describe(req, address);
    let state: ControlState;
    try {
      state = await driver.controlState({ wallet: wanted });
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      throw new RefusedError(`provision: ${req.wallet} differs from the ledger: account ${address} is not in the validated ledger of ${req.chain}`, {
        data: { wallet: req.wallet, chain: req.chain, address, drift: [{ field: 'address', expected: address, actual: null }] },
      });
    }
    const diff = differences(wanted, state);
    if (diff.length > 0) {
      throw new RefusedError(`provision: ${req.wallet} (${address} on ${req.chain}) differs from the request: ${diff.map((d) => d.message).join('; ')}`, {
        details: 'Nothing was sent: the set-up key no longer exists, so only the signer list can change this account (or provision a new wallet).',
        data: { wallet: req.wallet, chain: req.chain, address, drift: diff.map(({ field, expected, actual }) => ({ field, expected, actual })) },
      });
    }
    return { descriptor: wanted, changed: false, transactions: [] };
  };

  /** New wallet: generate, fund, signer list, disable master, verify. */
  const create = async (req: CheckedRequest): Promise<ProvisionResult> => {
    const funder = req.funding.kind === 'key_env' ? funderKey(req.funding.env) : null;
    const { base, increment, fee } = await prepare(req.chain);
    const minimum = base + increment + 2n * fee;
    const amount = req.fundAmount ?? base + increment + PROVISION_WORKING_BALANCE_DROPS;
    if (amount < minimum) {
      throw new ValidationError('request', [
        { path: 'fundAmount', message: `${amount} drops does not cover the base reserve ${base} + the signer list's owner reserve ${increment} + two fees ${2n * fee} (at least ${minimum})` },
      ]);
    }
    // The master key: generated here, used for two transactions, never returned or logged.
    const master = deriveKeypair(generateSeed({ algorithm: 'ed25519' }));
    const address = deriveAddress(master.publicKey);
    const transactions: ProvisionResult['transactions'] = [];

    if (funder) {
      const hash = await send(req.chain, 'fund', funder.address, funder, { TransactionType: 'Payment', Destination: address, Amount: amount.toString() });
      transactions.push({ txHash: hash, what: `fund: Payment of ${amount} drops from ${funder.address} creates ${address}` });
    } else {
      const url = (req.funding as { url: string }).url;
      const hash = await step('fund', address, () => askFaucet(url, address, amount));
      const balance = await step('fund', address, () => funded(req.chain, address));
      if (balance < minimum) failStep('fund', 'underfunded', `the faucet paid ${balance} drops; the set-up needs at least ${minimum}`, { account: address });
      if (hash !== null) transactions.push({ txHash: hash, what: `fund: faucet Payment of ${balance} drops creates ${address}` });
    }
    // Sorted by AccountID bytes: the order the ledger's SignerList object keeps.
    const entries = [...req.members].sort((a, b) => compareAccountIds(a.address, b.address)).map((m) => ({ SignerEntry: { Account: m.address, SignerWeight: m.weight } }));
    const list = await send(req.chain, 'signer_list', address, master, { TransactionType: 'SignerListSet', SignerQuorum: req.quorum, SignerEntries: entries });
    transactions.push({ txHash: list, what: `signer_list: SignerListSet quorum ${req.quorum} over ${req.members.length} members` });
    const disable = await send(req.chain, 'disable_master', address, master, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDisableMaster });
    transactions.push({ txHash: disable, what: 'disable_master: AccountSet asfDisableMaster' });

    const descriptor = describe(req, address);
    const state = await step('verify', address, () => driver.controlState({ wallet: descriptor }));
    const diff = differences(descriptor, state);
    if (diff.length > 0) failStep('verify', 'control_mismatch', `${address}: ${diff.map((d) => d.message).join('; ')}`, { account: address, transactions });
    return { descriptor, changed: true, transactions };
  };

  return Object.freeze({
    chains,
    async provision(request: ProvisionRequest): Promise<ProvisionResult> {
      const req = check(request);
      return req.existing ? recheck(req, req.existing) : create(req);
    },
  });
}
