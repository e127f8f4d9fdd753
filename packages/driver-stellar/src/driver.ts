/**
 * @module driver
 * The keyless half: Horizon reads, deterministic building, assembly with real signature checks,
 * submission and confirmation. One HorizonClient (URL + fetch) per chain.
 */
import { StrKey, TransactionBuilder, xdr } from '@stellar/stellar-base';
import {
  DriverRegistryError,
  NotFoundError,
  RefusedError,
  TransportError,
  ValidationError,
  assembleContributions,
  defineChainDriver,
  fromHex,
  verifyEd25519,
  type AddressCheck,
  type AssembleInput,
  type AssembleResult,
  type Balance,
  type BalancesInput,
  type BuildPayloadInput,
  type BuiltPayload,
  type ChainDriver,
  type ChainParams,
  type ChainProtectFacts,
  type ConfirmInput,
  type ConfirmResult,
  type Contribution,
  type ContributionProblem,
  type ControlState,
  type ControlStateInput,
  type FeeInput,
  type FeeQuote,
  type FetchParamsInput,
  type FetchProtectInputsInput,
  type PayloadFate,
  type PayloadFateInput,
  type SignerDesc,
  type SubmitInput,
  type SubmitResult,
  type ValidateAddressInput,
  type WalletDescriptor,
} from '@vault/sdk';
import { addressProblem, hintOf } from './address.js';
import { buildTransaction, assetOfIntent, STELLAR_OPERATIONS } from './build.js';
import { NATIVE_SYMBOL, SIGNER_DEFAULT_MAX_FEE_STROOPS, STELLAR_DECIMALS, STELLAR_FAMILY, STELLAR_SIGNATURE_ENCODING } from './constants.js';
import { HorizonClient, baseFeeOf, issuerLocked, parseAccount, problemExtras, type AccountFacts, type FetchLike } from './horizon.js';
import { payloadFateOf } from './fate.js';
import { hex, openPayload } from './payload.js';
import { primaryCode, resultCodesOfXdr, type ResultCodes } from './result-codes.js';

export interface StellarChainConfig {
  /** Horizon base URL, e.g. https://horizon-testnet.stellar.org or the devnet's URL. */
  horizonUrl: string;
  /** The network passphrase; part of every transaction hash. */
  networkPassphrase: string;
  /** Seconds a built transaction stays valid: max_time = now + this. Default 300. */
  txTimeoutSeconds?: number;
  /** Fetch for this chain only (default: the driver's, then globalThis.fetch). */
  fetch?: FetchLike;
  /** After a 504 from POST /transactions: how many times to look the hash up, and the pause. Defaults 5 and 500 ms. */
  timeoutPolls?: number;
  timeoutPollIntervalMs?: number;
}

export interface StellarDriverOptions {
  /** Chains served, each with its own Horizon and passphrase (e.g. `stellar:testnet`). */
  chains: Record<string, StellarChainConfig>;
  fetch?: FetchLike;
  /** Clock in Unix seconds (default Date.now). */
  now?: () => number;
  name?: string;
}

/** Codes after which the very same signed blob may still succeed if submitted again later. */
const RETRIABLE = new Set(['tx_too_early', 'tx_insufficient_fee', 'tx_insufficient_balance']);

export type StellarDriver = ChainDriver & {
  readonly family: 'stellar';
  readonly paramsKind: 'stellar';
  /**
   * The account as Horizon reports it, or null when it does not exist.
   *
   * @example
   * const account = await driver.account({ chain: 'stellar:testnet', address: 'G…' }) // { sequence, thresholds, signers, flags, … }
   */
  account(input: { chain: string; address: string }): Promise<AccountFacts | null>;
  /**
   * Whether an issuer can still sign a payment (false when merged or locked).
   *
   * @example
   * await driver.issuerState({ chain: 'stellar:testnet', issuer: 'G…' }) // { exists: true, locked: false, flags: { … } }
   */
  issuerState(input: { chain: string; issuer: string }): Promise<{ exists: boolean; locked: boolean; flags: AccountFacts['flags'] | null }>;
};

interface Served {
  chain: string;
  config: StellarChainConfig;
  horizon: HorizonClient;
}

/**
 * Creates the Stellar ChainDriver.
 *
 * @example
 * const driver = createStellarDriver({
 *   chains: { 'stellar:testnet': { horizonUrl: 'https://horizon-testnet.stellar.org', networkPassphrase: STELLAR_NETWORKS['stellar:testnet'] } },
 * })
 * const params = await driver.fetchParams({ wallet })
 */
export function createStellarDriver(options: StellarDriverOptions): StellarDriver {
  const name = options.name ?? '@vault/driver-stellar';
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const served = new Map<string, Served>();
  for (const [chain, config] of Object.entries(options.chains)) {
    if (!chain.startsWith(`${STELLAR_FAMILY}:`)) throw new DriverRegistryError('invalid_driver', `${name}: ${chain} is not a stellar:* chain`);
    if (typeof config.horizonUrl !== 'string' || !/^https?:\/\//.test(config.horizonUrl)) {
      throw new DriverRegistryError('invalid_driver', `${name}: ${chain}.horizonUrl must be an http(s) URL`);
    }
    if (typeof config.networkPassphrase !== 'string' || config.networkPassphrase === '') {
      throw new DriverRegistryError('invalid_driver', `${name}: ${chain}.networkPassphrase is required`);
    }
    const fetchFn = config.fetch ?? options.fetch ?? (globalThis.fetch as unknown as FetchLike);
    served.set(chain, { chain, config, horizon: new HorizonClient(config.horizonUrl, fetchFn, chain) });
  }
  const chains = Object.freeze([...served.keys()]);
  const checkedNetwork = new Set<string>();

  const serve = (chain: string): Served => {
    const s = served.get(chain);
    if (!s) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(chain)} (serves ${chains.join(', ')})`);
    return s;
  };

  const multisig = (wallet: WalletDescriptor) => {
    const s = serve(wallet.chain);
    if (wallet.control.kind !== 'native_multisig') {
      throw new ValidationError('wallet', [{ path: 'control.kind', message: 'Stellar wallets are native_multisig accounts' }]);
    }
    const problem = addressProblem(wallet.control.address, ['account']);
    if (problem) throw new ValidationError('wallet', [{ path: 'control.address', message: problem }]);
    return { ...s, control: wallet.control };
  };

  /** Refuses a Horizon whose network passphrase differs from the configured one (checked once per chain). */
  const ensureNetwork = async (s: Served): Promise<void> => {
    if (checkedNetwork.has(s.chain)) return;
    const root = await s.horizon.get('/');
    const passphrase = (root.body as Record<string, unknown> | null)?.['network_passphrase'];
    if (root.status === 200 && typeof passphrase === 'string' && passphrase !== s.config.networkPassphrase) {
      throw new RefusedError(`Horizon at ${s.config.horizonUrl} serves "${passphrase}", but ${s.chain} is configured for "${s.config.networkPassphrase}"`, {
        data: { reason: 'network_mismatch', chain: s.chain },
      });
    }
    if (root.status === 200) checkedNetwork.add(s.chain);
  };

  const readAccount = async (s: Served, address: string): Promise<AccountFacts | null> => {
    const reply = await s.horizon.get(`/accounts/${encodeURIComponent(address)}`);
    if (reply.status === 404) return null;
    if (reply.status !== 200) throw new TransportError(`Horizon ${s.chain}: GET /accounts/${address} answered ${reply.status}`, { data: { chain: s.chain, status: reply.status } });
    try {
      return parseAccount(reply.body);
    } catch (cause) {
      throw new TransportError(`Horizon ${s.chain}: unexpected account resource for ${address}`, { cause, data: { chain: s.chain } });
    }
  };

  const mustAccount = async (s: Served, address: string): Promise<AccountFacts> => {
    const account = await readAccount(s, address);
    if (!account) throw new NotFoundError('account', address, { data: { chain: s.chain } });
    return account;
  };

  const driver: StellarDriver = {
    name,
    family: STELLAR_FAMILY,
    chains,
    paramsKind: 'stellar',
    operations: Object.freeze([...STELLAR_OPERATIONS]),

    validateAddress({ chain, address }: ValidateAddressInput): AddressCheck {
      if (!served.has(chain)) return { valid: false, reason: `${name} does not serve chain ${chain}` };
      const problem = addressProblem(address);
      // StrKeys carry no network: the same G… address is valid on pubnet, testnet and any devnet.
      return problem ? { valid: false, reason: problem } : { valid: true, normalized: address, network: null };
    },

    async fetchParams({ wallet }: FetchParamsInput): Promise<ChainParams> {
      const s = multisig(wallet);
      await ensureNetwork(s);
      // Two independent reads, one round trip's wait; the account's answer is judged first, as when
      // they were read one after the other.
      const [read, fee] = await Promise.allSettled([mustAccount(s, s.control.address), s.horizon.get('/fee_stats')]);
      if (read.status === 'rejected') throw read.reason;
      const account = read.value;
      const mismatch = controlMismatch(account, wallet);
      if (mismatch) {
        throw new RefusedError(`the ledger's control of ${s.control.address} does not match wallet ${wallet.wallet}: ${mismatch}`, {
          data: { reason: 'control_mismatch', chain: s.chain },
        });
      }
      if (fee.status === 'rejected') throw fee.reason;
      const fees = fee.value;
      if (fees.status !== 200) throw new TransportError(`Horizon ${s.chain}: GET /fee_stats answered ${fees.status}`, { data: { chain: s.chain } });
      return {
        kind: 'stellar',
        // Always the string form: sequences are ledger << 32 and exceed 2^53.
        sequence: (account.sequence + 1n).toString(),
        base_fee_stroops: baseFeeOf(fees.body),
        max_time: now() + (s.config.txTimeoutSeconds ?? 300),
        // What each threshold class needs on this account: buildPayload records the weight the
        // transaction needs, and assemble stops collecting there.
        thresholds: { low: account.thresholds.low, med: account.thresholds.med, high: account.thresholds.high },
      };
    },

    async fetchProtectInputs({ intent, wallet }: FetchProtectInputsInput): Promise<ChainProtectFacts> {
      const s = serve(wallet.chain);
      // Classic Stellar accounts hold no code: hasCode is null for every address.
      const destination = { address: intent.destination, hasCode: null, codeHash: null };
      let asset: ReturnType<typeof assetOfIntent> = null;
      try {
        asset = assetOfIntent(intent);
      } catch {
        asset = null; // a malformed asset is refused by buildPayload; nothing to read here
      }
      if (asset === null) return { destination, issuer: null, assetSymbol: null, issuerKeyBurned: false };
      const issuer = await readAccount(s, asset.getIssuer());
      // Stellar asset codes are the asset's identity, not a separate on-chain symbol: nothing to compare.
      return {
        destination,
        issuer: { address: asset.getIssuer(), hasCode: null, codeHash: null },
        assetSymbol: null,
        issuerKeyBurned: issuer === null || issuerLocked(issuer),
      };
    },

    buildPayload({ intent, wallet, params }: BuildPayloadInput): BuiltPayload {
      const s = multisig(wallet);
      if (params.kind !== 'stellar') {
        throw new ValidationError('params', [{ path: 'kind', message: `the Stellar driver takes stellar params, got ${params.kind}` }]);
      }
      const built = buildTransaction({
        intent,
        chain: s.chain,
        networkPassphrase: s.config.networkPassphrase,
        source: s.control.address,
        sequence: BigInt(params.sequence),
        baseFee: params.base_fee_stroops,
        maxTime: params.max_time,
        // Without the ledger's thresholds (params from before they were carried), every class is
        // taken to need the descriptor's quorum.
        thresholds: params.thresholds ?? { low: s.control.quorum, med: s.control.quorum, high: s.control.quorum },
      });
      return { payload: built.payload, digest: built.digest, summary: built.summary };
    },

    // The envelope's fee is the most the transaction can be charged (bid per operation x operations):
    // the ledger charges at most that, success or failure.
    fee({ built }: FeeInput): FeeQuote {
      return { amount: BigInt(openPayload(built).tx.fee), unit: 'stroops' };
    },
    defaultMaxFee: SIGNER_DEFAULT_MAX_FEE_STROOPS,

    assemble({ built, contributions, wallet, memo }: AssembleInput): AssembleResult {
      const s = multisig(wallet);
      const { payload } = openPayload(built);
      if (payload.chain !== wallet.chain || payload.network_passphrase !== s.config.networkPassphrase) {
        throw new ValidationError('built', [{ path: 'payload.network_passphrase', message: `payload is for ${payload.chain}, not the configured ${wallet.chain}` }]);
      }
      if (payload.source !== s.control.address) {
        throw new ValidationError('built', [{ path: 'payload.source', message: `payload is for ${payload.source}, not wallet ${s.control.address}` }]);
      }
      // The ledger caps a signer's weight at 255: a descriptor above it cannot match the account.
      for (const [i, m] of s.control.signers.entries()) {
        if (m.weight > 255) throw new ValidationError('wallet', [{ path: `control.signers.${i}.weight`, message: 'a Stellar signer weighs at most 255' }]);
      }
      const hash = fromHex(built.digest, 'built.digest', 32);
      return assembleContributions({
        contributions,
        wallet,
        verify: (c, member) => contributionProblem(c, member, hash),
        // verify reads only the digest (the transaction hash, which is what is signed).
        memo,
        memoKey: built.digest,
        // The weight this transaction needs, recorded at build time from the account's thresholds and
        // the class of its operation (build.ts neededWeight); payloads without it: the quorum.
        quorum: payload.needed_weight ?? s.control.quorum,
        encode: (counted, required) => {
          // stellar-core walks the signatures in envelope order and stops at the threshold; any
          // signature it did not need fails the whole transaction as tx_bad_auth_extra. So: heaviest
          // first, stop as soon as the threshold is reached, and never attach more. The result's
          // `weight` still reports every valid contribution collected.
          const ordered = [...counted].sort((x, y) => y.member.weight - x.member.weight || (x.member.address < y.member.address ? -1 : x.member.address > y.member.address ? 1 : 0));
          const chosen: typeof ordered = [];
          let attached = 0;
          for (const entry of ordered) {
            if (attached >= required) break;
            chosen.push(entry);
            attached += entry.member.weight;
          }
          const env = xdr.TransactionEnvelope.fromXDR(payload.tx_xdr, 'base64');
          env.v1().signatures(
            chosen.map(({ contribution: c }) => {
              const hint = Buffer.from(hintOf(fromHex(c.public_key.hex, 'public_key', 32)), 'hex');
              return new xdr.DecoratedSignature({ hint, signature: Buffer.from(c.signature.hex, 'hex') });
            }),
          );
          return { blob: env.toXDR('base64'), txHash: built.digest };
        },
      });
    },

    async submit({ chain, blob }: SubmitInput): Promise<SubmitResult> {
      const s = serve(chain);
      let txHash: string;
      try {
        txHash = hex(TransactionBuilder.fromXDR(blob, s.config.networkPassphrase).hash());
      } catch (cause) {
        throw new ValidationError('blob', [{ path: '', message: 'blob is not a base64 TransactionEnvelope' }], { cause });
      }
      const reply = await s.horizon.postTransaction(blob);
      if (reply.status === 200) {
        // Horizon answers 200 only once the transaction is in a closed ledger (a failed one is a
        // 400), and a closed Stellar ledger is final: the answer is confirm's, with no second read.
        const rec = (reply.body ?? {}) as Record<string, unknown>;
        const ledger = rec['ledger'];
        if (rec['hash'] !== txHash || typeof ledger !== 'number') return { status: 'submitted', txHash, code: 'tx_success' };
        return { status: 'submitted', txHash, code: 'tx_success', confirmed: { status: 'confirmed', txHash, code: 'tx_success', ledger } };
      }
      if (reply.status === 504) {
        // Horizon gave up waiting, not the ledger: look the hash up before calling it anything.
        const polls = s.config.timeoutPolls ?? 5;
        for (let i = 0; i < polls; i++) {
          const found = await s.horizon.get(`/transactions/${txHash}`);
          if (found.status === 200) {
            const rec = found.body as Record<string, unknown>;
            if (rec['successful'] === true) return { status: 'submitted', txHash, code: 'tx_success' };
            const codes = resultCodesOfXdr(String(rec['result_xdr'] ?? ''));
            const code = codes ? primaryCode(codes) : 'tx_failed';
            return { status: 'rejected', txHash, code, message: `applied but failed: ${describe(codes)}`, retriable: false };
          }
          if (i + 1 < polls) await new Promise((r) => setTimeout(r, s.config.timeoutPollIntervalMs ?? 500));
        }
        return { status: 'submitted', txHash, code: 'tx_pending', message: 'Horizon answered 504 (timeout); the ledger may still include it: confirm decides' };
      }
      const extras = problemExtras(reply.body);
      const codes: ResultCodes | null = extras.resultCodes ?? (extras.resultXdr ? resultCodesOfXdr(extras.resultXdr) : null);
      if (reply.status === 400 && codes) {
        const code = primaryCode(codes);
        return { status: 'rejected', txHash, code, message: `Horizon rejected the transaction: ${describe(codes)}`, retriable: RETRIABLE.has(codes.transaction) };
      }
      if (reply.status >= 400 && reply.status < 500 && reply.status !== 429) {
        const type = String((reply.body as Record<string, unknown> | null)?.['type'] ?? `http_${reply.status}`);
        return { status: 'rejected', txHash, code: type.replace(/^.*\//, ''), message: `Horizon answered ${reply.status}: ${type}`, retriable: false };
      }
      throw new TransportError(`Horizon ${chain}: POST /transactions answered ${reply.status}`, { data: { chain, status: reply.status } });
    },

    async confirm({ chain, txHash, built }: ConfirmInput): Promise<ConfirmResult> {
      const s = serve(chain);
      const { payload, tx } = openPayload(built);
      const lookup = async () => s.horizon.get(`/transactions/${encodeURIComponent(txHash)}`);
      let found = await lookup();
      if (found.status === 200) return recorded(txHash, found.body);
      if (found.status !== 404) throw new TransportError(`Horizon ${chain}: GET /transactions/${txHash} answered ${found.status}`, { data: { chain } });
      if (txHash.toLowerCase() !== built.digest) {
        throw new ValidationError('txHash', [{ path: '', message: 'a Stellar transaction hash is the payload digest (signatures are not part of it); this one is not' }]);
      }
      // Not in a ledger yet, or never will be: the payload's fate decides, from closed-ledger state
      // only (see fate.ts); a Horizon that cannot prove anything makes this throw, not guess.
      const fate = await payloadFateOf({ chain, horizon: s.horizon, networkPassphrase: s.config.networkPassphrase }, payload, tx, built.digest);
      if (fate.fate === 'live') return { status: 'pending', txHash };
      if (fate.code === 'expired') return { status: 'failed', txHash, code: 'tx_too_late', message: fate.message ?? 'expired', dead: true };
      if (fate.code === 'sequence_consumed') return { status: 'failed', txHash, code: 'tx_bad_seq', message: fate.message ?? 'sequence consumed', dead: true };
      // Applied, or included and failed, since the first lookup: read the record itself.
      found = await lookup();
      if (found.status === 200) return recorded(txHash, found.body);
      throw new TransportError(`Horizon ${chain}: GET /transactions/${txHash} answered ${found.status} right after the payload was found in a ledger`, { data: { chain } });
    },

    /**
     * The payload's fate from closed-ledger state: `applied`, `dead` (`sequence_consumed`,
     * `expired`, or the result code of a transaction that was included but failed) or `live`
     * (`pending`). Looked up by the payload (source account + sequence, and its digest, which is
     * the transaction hash whoever signs). Throws TransportError when Horizon cannot say.
     */
    async payloadFate({ chain, built }: PayloadFateInput): Promise<PayloadFate> {
      const s = serve(chain);
      const { payload, tx } = openPayload(built);
      if (payload.chain !== chain) {
        throw new ValidationError('built', [{ path: 'payload.chain', message: `payload is for ${payload.chain}, not ${chain}` }]);
      }
      if (payload.network_passphrase !== s.config.networkPassphrase) {
        throw new ValidationError('built', [{ path: 'payload.network_passphrase', message: `payload is for network "${payload.network_passphrase}", ${chain} is "${s.config.networkPassphrase}"` }]);
      }
      return payloadFateOf({ chain, horizon: s.horizon, networkPassphrase: s.config.networkPassphrase }, payload, tx, built.digest);
    },

    async balances({ wallet }: BalancesInput): Promise<Balance[]> {
      const s = multisig(wallet);
      const account = await mustAccount(s, s.control.address);
      return account.balances.map((b) => {
        const out: Balance = {
          asset: b.asset,
          symbol: b.assetType === 'native' ? NATIVE_SYMBOL : b.assetType === 'liquidity_pool_shares' ? 'POOL-SHARES' : (b.code as string),
          amount: b.amount.toString(),
          decimals: STELLAR_DECIMALS,
        };
        if (b.authorized !== null) {
          out.flags = {
            authorized: b.authorized,
            authorized_to_maintain_liabilities: b.authorizedToMaintainLiabilities === true,
            clawback_enabled: b.clawbackEnabled === true,
          };
        }
        return out;
      });
    },

    async controlState({ wallet }: ControlStateInput): Promise<ControlState> {
      const s = multisig(wallet);
      const account = await mustAccount(s, s.control.address);
      return {
        address: account.id,
        members: account.signers.filter((x) => x.weight > 0).map((x) => ({ address: x.key, weight: x.weight })),
        // The descriptor's quorum is the medium threshold (payments); all three are in extra.
        quorum: account.thresholds.med,
        masterKeyEnabled: account.masterWeight > 0,
        extra: {
          thresholds: account.thresholds,
          master_weight: account.masterWeight,
          flags: account.flags,
          sequence: account.sequence.toString(),
          signer_types: [...new Set(account.signers.map((x) => x.type))],
        },
      };
    },

    async account({ chain, address }: { chain: string; address: string }) {
      return readAccount(serve(chain), address);
    },

    async issuerState({ chain, issuer }: { chain: string; issuer: string }) {
      const account = await readAccount(serve(chain), issuer);
      if (!account) return { exists: false, locked: true, flags: null };
      return { exists: true, locked: issuerLocked(account), flags: account.flags };
    },
  };
  return defineChainDriver(driver);
}

function describe(codes: ResultCodes | null): string {
  if (!codes) return 'no result codes';
  return codes.operations?.length ? `${codes.transaction} (operations: ${codes.operations.join(', ')})` : codes.transaction;
}

function recorded(txHash: string, body: unknown): ConfirmResult {
  const rec = (body ?? {}) as Record<string, unknown>;
  const ledger = typeof rec['ledger'] === 'number' ? rec['ledger'] : undefined;
  if (rec['successful'] === true) return { status: 'confirmed', txHash, code: 'tx_success', ...(ledger !== undefined ? { ledger } : {}) };
  const codes = resultCodesOfXdr(String(rec['result_xdr'] ?? ''));
  return { status: 'failed', txHash, code: codes ? primaryCode(codes) : 'tx_failed', message: `included in ledger ${ledger ?? '?'} but failed: ${describe(codes)}`, dead: true };
}

/**
 * Why the ledger's control differs from the descriptor, or null when they agree. The descriptor's
 * quorum means the account's MEDIUM threshold, the weight a payment needs; the low and high
 * thresholds may differ from it (each transaction records the weight its operation's class needs,
 * see build.ts `neededWeight`), except that low may not exceed medium: every transaction also needs
 * the low threshold, so payments would then need more than the quorum.
 */
export function controlMismatch(account: AccountFacts, wallet: WalletDescriptor): string | null {
  if (wallet.control.kind !== 'native_multisig') return 'not a native_multisig wallet';
  const { signers, quorum } = wallet.control;
  const onLedger = account.signers.filter((x) => x.weight > 0);
  const other = onLedger.find((x) => x.type !== 'ed25519_public_key');
  if (other) return `signer ${other.key} is a ${other.type}, which the driver does not model`;
  const want = new Map(signers.map((m) => [m.address, m.weight]));
  for (const x of onLedger) {
    if (!want.has(x.key)) return `${x.key} (weight ${x.weight}) signs on the ledger but is not in the descriptor`;
    if (want.get(x.key) !== x.weight) return `${x.key} has weight ${x.weight} on the ledger, ${want.get(x.key)} in the descriptor`;
  }
  for (const m of signers) if (!onLedger.some((x) => x.key === m.address)) return `${m.address} is in the descriptor but not a signer on the ledger`;
  const t = account.thresholds;
  if (t.med !== quorum) return `the medium threshold ${t.med} (what a payment needs) is not the quorum ${quorum}`;
  if (t.low > t.med) return `the low threshold ${t.low} is above the medium threshold ${t.med}: every transaction needs the low threshold, so payments would need more than the quorum ${quorum}`;
  return null;
}

/** Stellar's check of one contribution from `member`: its ed25519 key, hint and signature over the transaction hash. */
function contributionProblem(c: Contribution, member: SignerDesc, hash: Uint8Array): ContributionProblem | null {
  if (c.public_key.curve !== 'ed25519') return { reason: 'wrong_key', detail: `curve ${c.public_key.curve} is not ed25519` };
  if (c.public_key.hex.length !== 64) return { reason: 'wrong_key', detail: 'public key is not 32 bytes' };
  const publicKey = fromHex(c.public_key.hex, 'public_key', 32);
  if (StrKey.encodeEd25519PublicKey(Buffer.from(publicKey)) !== member.address) return { reason: 'wrong_key', detail: `public key does not control ${member.address}` };
  if (c.signature.encoding !== STELLAR_SIGNATURE_ENCODING) {
    return { reason: 'bad_signature', detail: `signature encoding ${c.signature.encoding} is not ${STELLAR_SIGNATURE_ENCODING}` };
  }
  if (c.signature.hex.length !== 128) return { reason: 'bad_signature', detail: 'signature is not 64 bytes' };
  const hint = (c.signature as { hint?: unknown }).hint;
  // Hint first, as stellar-core does; then the bytes, which are what actually count.
  if (hint !== undefined && hint !== hintOf(publicKey)) return { reason: 'bad_signature', detail: 'signature hint is not the last 4 bytes of the public key' };
  if (!verifyEd25519(fromHex(c.signature.hex, 'signature', 64), hash, publicKey)) {
    return { reason: 'bad_signature', detail: 'signature does not verify against the transaction hash' };
  }
  return null;
}
