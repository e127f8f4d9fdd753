/**
 * @module driver
 * The keyless XRPL ChainDriver: address facts, chain parameters, deterministic multisig payloads,
 * assembly at quorum, submit / confirm and reads, over one JSON-RPC transport per chain.
 */
import {
  DriverRegistryError,
  NotFoundError,
  RefusedError,
  TransportError,
  ValidationError,
  defineChainDriver,
  type AddressCheck,
  type AssembleInput,
  type Balance,
  type BalancesInput,
  type BuildPayloadInput,
  type BuiltPayload,
  type ChainDriver,
  type ChainParams,
  type ChainProtectFacts,
  type ConfirmInput,
  type ConfirmResult,
  type ControlState,
  type ControlStateInput,
  type FeeInput,
  type FeeQuote,
  type FetchParamsInput,
  type FetchProtectInputsInput,
  type PayloadFate,
  type PayloadFateInput,
  type SubmitInput,
  type SubmitResult,
  type ValidateAddressInput,
  type WalletDescriptor,
} from '@vault/sdk';
import { classicAddressToXAddress, isValidClassicAddress, isValidXAddress, xAddressToClassicAddress } from 'ripple-address-codec';
import { hashes } from 'xrpl';
import { buildTransaction, defaultIsTestChain, resolveAsset, signingHash, type XrplPayload } from './build.js';
import { ACCOUNT_ROOT_FLAGS, DEFAULT_LAST_LEDGER_OFFSET, DEFAULT_MAX_FEE_DROPS, SIGNER_DEFAULT_MAX_FEE_DROPS, XRPL_PAYLOAD_FORMAT } from './constants.js';
import { fateOfUsed, ledgerTxOf, type LedgerTx } from './fate.js';
import { assembleMultisig, payloadOf } from './multisig.js';
import { classifySubmit, parseTxResult } from './results.js';
import { rpcCall, rpcError, rpcErrorMessage, type FetchLike, type RpcResult, type XrplTransport } from './rpc.js';
import { currencyName, mptIssuanceId, parseScaled } from './util.js';

export interface XrplChainConfig {
  /** JSON-RPC URL of a rippled or Clio server (e.g. https://s.altnet.rippletest.net:51234). */
  url: string;
  /** The network id the server must report (server_info.network_id; absent counts as 0). */
  networkId?: number;
  /** Does the chain use test-network X-addresses? Default: every chain but `xrpl:mainnet`. */
  test?: boolean;
  /** Per-chain fetch (overrides the driver's). */
  fetch?: FetchLike;
  /** rippled API version to request. Default 2 (both shapes are parsed either way). */
  apiVersion?: 1 | 2;
  /** LastLedgerSequence = current open ledger + this. Default 20. */
  lastLedgerOffset?: number;
  /** Ceiling on a transaction's total Fee in drops. Default 2 XRP. */
  maxFeeDrops?: number;
  /** Decimals used to express IOU balances in minor units (raised when a balance needs more). Default 6. */
  iouDecimals?: number;
  timeoutMs?: number;
  /** payloadFate: account_tx page size. Default 200. */
  historyPageSize?: number;
  /** payloadFate: account_tx pages read at most before giving up (TransportError). Default 10. */
  historyMaxPages?: number;
}

export interface XrplDriverOptions {
  /** One entry per served chain, e.g. `{ 'xrpl:testnet': { url } }`. */
  chains: Record<string, XrplChainConfig>;
  /** Transport for every chain without its own. Default: global fetch. */
  fetch?: FetchLike;
  /** Plugin name. Default `@vault/driver-xrpl`. */
  name?: string;
}

/** The XRPL ChainDriver plus XRPL-only reads the servers use. */
/** ChainParams of kind `xrpl`. */
export type XrplChainParams = Extract<ChainParams, { kind: 'xrpl' }>;

export type XrplDriver = Omit<ChainDriver, 'fetchParams'> & {
  readonly family: 'xrpl';
  fetchParams(input: FetchParamsInput): Promise<XrplChainParams>;
  readonly paramsKind: 'xrpl';
  /**
   * Facts about an IOU or MPT issuer account for counterfeit checks, from validated ledgers.
   *
   * @example
   * const { blackholed, requireAuth } = await driver.issuerFacts({ chain: 'xrpl:testnet', issuer: 'rIssuer…' })
   */
  issuerFacts(input: { chain: string; issuer: string }): Promise<XrplIssuerFacts>;
  /**
   * The chain's network id as the server reports it (null when it reports none).
   *
   * @example
   * await driver.networkId({ chain: 'xrpl:testnet' }) // 1
   */
  networkId(input: { chain: string }): Promise<number | null>;
};

export interface XrplIssuerFacts {
  account: string;
  exists: boolean;
  /** Master key disabled, no signer list and no regular key (or a black-hole one): nothing can sign for it again. */
  blackholed: boolean;
  requireAuth: boolean;
  globalFreeze: boolean;
  noFreeze: boolean;
  clawbackEnabled: boolean;
  /** gateway_balances obligations: currency -> total issued, as rippled prints it. */
  obligations: Record<string, string>;
}

/**
 * The JSON-RPC transport of one configured chain: its own fetch, else the fallback (the driver's,
 * else global fetch), with the configured API version and timeout. The provisioner uses the same.
 */
export function chainTransport(name: string, chain: string, c: XrplChainConfig, fallback: FetchLike | undefined): XrplTransport {
  const f = c.fetch ?? fallback;
  if (!f) throw new TransportError(`${name}: no fetch available for ${chain}`);
  return { url: c.url, fetch: f, apiVersion: c.apiVersion ?? 2, timeoutMs: c.timeoutMs ?? 15_000 };
}

/** Addresses nobody holds a key for (ACCOUNT_ZERO, ACCOUNT_ONE, the name-reservation and NaN addresses). */
const BLACK_HOLES = new Set(['rrrrrrrrrrrrrrrrrrrrrhoLvTp', 'rrrrrrrrrrrrrrrrrrrrBZbvji', 'rrrrrrrrrrrrrrrrrNAMEtxvNvQ', 'rrrrrrrrrrrrrrrrrrrn5RM1rHd']);

const OPERATIONS = ['transfer', 'issue', 'authorize_holder', 'clawback', 'mpt_create', 'account_flags'] as const;

/**
 * Creates the XRPL driver. The same driver reaches a public testnet or the local devnet by
 * configuration alone.
 *
 * @example
 * const driver = createXrplDriver({ chains: { 'xrpl:testnet': { url: 'https://s.altnet.rippletest.net:51234', networkId: 1 } } })
 * const params = await driver.fetchParams({ wallet })
 * const built = driver.buildPayload({ intent, wallet, params })
 */
export function createXrplDriver(options: XrplDriverOptions): XrplDriver {
  const name = options.name ?? '@vault/driver-xrpl';
  const chains = Object.freeze(Object.keys(options.chains));
  const defaultFetch = options.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined);

  const config = (chain: string): XrplChainConfig => {
    const c = Object.hasOwn(options.chains, chain) ? options.chains[chain] : undefined;
    if (!c) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(chain)} (serves ${chains.join(', ')})`);
    return c;
  };
  const isTest = (chain: string) => config(chain).test ?? defaultIsTestChain(chain);
  const transport = (chain: string): XrplTransport => chainTransport(name, chain, config(chain), defaultFetch);
  const call = (chain: string, method: string, params: Record<string, unknown> = {}) => rpcCall(transport(chain), method, params);
  /** A call whose error result is a fault, except the listed expected errors (returned as null). */
  const must = async (chain: string, method: string, params: Record<string, unknown>, expected: string[] = []): Promise<RpcResult | null> => {
    const r = await call(chain, method, params);
    const err = rpcError(r);
    if (err === null) return r;
    if (expected.includes(err)) return null;
    throw new TransportError(`XRPL ${method} on ${chain}: ${err}: ${rpcErrorMessage(r)}`, { data: { method, error: err } });
  };
  const walletAddress = (wallet: WalletDescriptor): string => {
    config(wallet.chain);
    if (wallet.control.kind !== 'native_multisig') {
      throw new RefusedError(`${name} serves native_multisig wallets only`, { data: { path: 'control.kind' } });
    }
    return wallet.control.address;
  };
  const accountInfo = async (chain: string, account: string, ledger: 'current' | 'validated' = 'current') => {
    const r = await must(chain, 'account_info', { account, ledger_index: ledger, signer_lists: true }, ['actNotFound']);
    if (r === null) return null;
    const data = r['account_data'] as Record<string, unknown>;
    // API v2 puts signer_lists at the result root; v1 inside account_data.
    const lists = (r['signer_lists'] ?? data['signer_lists'] ?? []) as Record<string, unknown>[];
    return { data, signerList: lists[0] ?? null };
  };
  /**
   * The validated transaction of `account` that used Sequence `sequence`, newest first over the
   * validated ledgers up to `maxLedger`, or null once an older sequence shows it is not there
   * (or the history ends, or the page budget runs out: the caller cannot tell those apart).
   */
  const txBySequence = async (chain: string, account: string, sequence: number, maxLedger: number): Promise<LedgerTx | null> => {
    const c = config(chain);
    const limit = c.historyPageSize ?? 200;
    let marker: unknown;
    for (let page = 0; page < (c.historyMaxPages ?? 10); page++) {
      const r = (await must(chain, 'account_tx', {
        account,
        ledger_index_min: -1,
        ledger_index_max: maxLedger,
        forward: false,
        limit,
        ...(marker !== undefined ? { marker } : {}),
      })) as RpcResult;
      const entries = r['transactions'];
      if (!Array.isArray(entries)) throw new TransportError(`XRPL account_tx on ${chain}: no transactions array`, { data: { method: 'account_tx' } });
      let passed = false;
      for (const entry of entries as Record<string, unknown>[]) {
        const t = parseTxResult(entry).tx;
        if (t['Account'] !== account) continue;
        const seq = Number(t['Sequence'] ?? 0);
        // Entries within a page need not be in order; pages are, so finish the page first.
        if (seq === sequence) {
          const used = ledgerTxOf(entry);
          if (used.validated && used.ledgerIndex !== null && used.ledgerIndex <= maxLedger) return used;
        } else if (seq > 0 && seq < sequence) passed = true;
      }
      marker = r['marker'];
      if (passed || marker === undefined || marker === null) return null;
    }
    return null;
  };
  const reportedNetworkId = async (chain: string): Promise<number | null> => {
    const r = (await must(chain, 'server_info', {})) as RpcResult;
    const info = (r['info'] ?? {}) as Record<string, unknown>;
    const id = info['network_id'];
    return typeof id === 'number' ? id : null;
  };

  const driver: XrplDriver = {
    name,
    family: 'xrpl',
    chains,
    paramsKind: 'xrpl',
    operations: OPERATIONS,

    validateAddress({ chain, address }: ValidateAddressInput): AddressCheck {
      if (!chains.includes(chain)) return { valid: false, reason: `${name} does not serve chain ${chain}` };
      if (typeof address !== 'string' || address === '') return { valid: false, reason: 'address is empty' };
      // A classic address names no network: it is valid on every XRPL network.
      if (isValidClassicAddress(address)) return { valid: true, normalized: address, network: null };
      if (isValidXAddress(address)) {
        const x = xAddressToClassicAddress(address);
        if (x.test !== isTest(chain)) return { valid: false, reason: `X-address is for ${x.test ? 'the test networks' : 'mainnet'}, not ${chain}` };
        // The tag is part of where the funds go: an X-address that carries one stays an X-address
        // (re-encoded, so it has one spelling); without a tag it is just the classic address.
        // An X-address names its network by its test flag, and that flag matches `chain` here.
        if (x.tag === false) return { valid: true, normalized: x.classicAddress, network: chain };
        // The account behind the tag, so policy lists and the burned check see who is paid.
        return { valid: true, normalized: classicAddressToXAddress(x.classicAddress, x.tag, x.test), network: chain, account: x.classicAddress };
      }
      if (/^r[1-9A-HJ-NP-Za-km-z]{24,34}$/.test(address)) return { valid: false, reason: 'not a valid classic address (bad checksum or length)' };
      if (/^[XT][1-9A-HJ-NP-Za-km-z]{46}$/.test(address)) return { valid: false, reason: 'not a valid X-address (bad checksum)' };
      return { valid: false, reason: 'not an XRPL address (classic r… or X-address)' };
    },

    async fetchParams({ wallet }: FetchParamsInput): Promise<XrplChainParams> {
      const address = walletAddress(wallet);
      const c = config(wallet.chain);
      const [info, fee, networkId] = await Promise.all([
        accountInfo(wallet.chain, address),
        must(wallet.chain, 'fee', {}) as Promise<RpcResult>,
        reportedNetworkId(wallet.chain),
      ]);
      if (!info) throw new NotFoundError('account', address, { data: { chain: wallet.chain } });
      if (c.networkId !== undefined && (networkId ?? 0) !== c.networkId) {
        throw new RefusedError(`wrong network: ${c.url} reports network id ${networkId ?? 'none'}, ${wallet.chain} is configured as ${c.networkId}`, {
          data: { stage: 'params', expected: c.networkId, reported: networkId },
        });
      }
      const drops = (fee['drops'] ?? {}) as Record<string, string>;
      const base = Math.max(Number(drops['base_fee'] ?? 10), Number(drops['open_ledger_fee'] ?? 0));
      const current = Number(fee['ledger_current_index']);
      if (!Number.isSafeInteger(current) || !Number.isSafeInteger(base) || base <= 0) {
        throw new TransportError(`XRPL fee on ${wallet.chain}: unexpected reply`, { data: { fee } });
      }
      return {
        kind: 'xrpl',
        sequence: Number(info.data['Sequence']),
        base_fee_drops: base,
        last_ledger_sequence: current + (c.lastLedgerOffset ?? DEFAULT_LAST_LEDGER_OFFSET),
        network_id: networkId ?? c.networkId ?? null,
      };
    },

    async fetchProtectInputs({ intent, wallet }: FetchProtectInputsInput): Promise<ChainProtectFacts> {
      walletAddress(wallet);
      // XRPL accounts hold no code: hasCode is null for every address.
      const facts: ChainProtectFacts = {
        destination: { address: intent.destination, hasCode: null, codeHash: null },
        issuer: null,
        assetSymbol: null,
        issuerKeyBurned: false,
      };
      if (intent.asset_issuer === undefined) return facts;
      // The on-chain code is reported even when asset_symbol disagrees with it: that is exactly
      // what the counterfeit_asset guard must see (buildPayload refuses the mismatch separately).
      let asset;
      try {
        asset = resolveAsset(intent.asset_issuer.includes('.') ? { ...intent, asset_symbol: undefined } : intent);
      } catch {
        return facts;
      }
      if (asset.kind === 'xrp') return facts;
      const issuer = await driver.issuerFacts({ chain: wallet.chain, issuer: asset.issuer });
      facts.issuer = { address: asset.issuer, hasCode: null, codeHash: null };
      facts.issuerKeyBurned = issuer.blackholed;
      if (asset.kind === 'iou') {
        facts.assetSymbol = asset.name;
      } else {
        const r = await must(wallet.chain, 'ledger_entry', { mpt_issuance: asset.id, ledger_index: 'validated' }, ['entryNotFound', 'objectNotFound']);
        const node = (r?.['node'] ?? null) as Record<string, unknown> | null;
        facts.assetSymbol = node ? tickerOf(node['MPTokenMetadata']) : null;
      }
      return facts;
    },

    buildPayload(input: BuildPayloadInput): BuiltPayload {
      const c = config(input.wallet.chain);
      const { tx_json, summary } = buildTransaction(input, {
        maxFeeDrops: c.maxFeeDrops ?? DEFAULT_MAX_FEE_DROPS,
        isTestChain: isTest,
      });
      const payload: XrplPayload = { format: XRPL_PAYLOAD_FORMAT, chain: input.wallet.chain, tx_json };
      return { payload, digest: signingHash(tx_json), summary };
    },

    // The ledger takes the transaction's Fee field (base fee x (1 + signers)), success or not.
    fee({ built }: FeeInput): FeeQuote {
      const fee = payloadOf(built).tx_json['Fee'];
      if (typeof fee !== 'string' || !/^(0|[1-9][0-9]{0,17})$/.test(fee)) {
        throw new ValidationError('built', [{ path: 'payload.tx_json.Fee', message: 'Fee must be a decimal string of drops' }]);
      }
      return { amount: BigInt(fee), unit: 'drops' };
    },
    defaultMaxFee: SIGNER_DEFAULT_MAX_FEE_DROPS,

    assemble({ built, contributions, wallet, memo }: AssembleInput) {
      config(wallet.chain);
      return assembleMultisig(built, contributions, wallet, memo);
    },

    async submit({ chain, blob }: SubmitInput): Promise<SubmitResult> {
      let txHash = '';
      try {
        txHash = hashes.hashSignedTx(blob);
      } catch {
        txHash = '';
      }
      const r = await call(chain, 'submit', { tx_blob: blob });
      const err = rpcError(r);
      if (err !== null) return { status: 'rejected', txHash, code: err, message: rpcErrorMessage(r), retriable: false };
      const code = String(r['engine_result'] ?? '');
      const message = String(r['engine_result_message'] ?? '');
      const hash = String(((r['tx_json'] ?? {}) as Record<string, unknown>)['hash'] ?? r['hash'] ?? txHash);
      const { accepted, retriable } = classifySubmit(code);
      return accepted ? { status: 'submitted', txHash: hash, code, message } : { status: 'rejected', txHash: hash, code, message, retriable };
    },

    async confirm({ chain, txHash, built }: ConfirmInput): Promise<ConfirmResult> {
      const payload = payloadOf(built);
      const tx = payload.tx_json;
      const r = await call(chain, 'tx', { transaction: txHash, binary: false });
      const err = rpcError(r);
      if (err !== null && err !== 'txnNotFound') {
        throw new TransportError(`XRPL tx on ${chain}: ${err}: ${rpcErrorMessage(r)}`, { data: { method: 'tx', error: err } });
      }
      if (err === null) {
        const parsed = parseTxResult(r);
        if (!parsed.validated || parsed.result === null) return { status: 'pending', txHash };
        if (parsed.result === 'tesSUCCESS') {
          const outcome: Record<string, string> = {};
          if (tx['TransactionType'] === 'MPTokenIssuanceCreate') {
            const fromMeta = parsed.meta?.['mpt_issuance_id'];
            outcome['mptIssuanceId'] = typeof fromMeta === 'string' ? fromMeta.toUpperCase() : mptIssuanceId(Number(tx['Sequence']), String(tx['Account']));
          }
          return {
            status: 'confirmed',
            txHash,
            code: parsed.result,
            ...(parsed.ledgerIndex !== null ? { ledger: parsed.ledgerIndex } : {}),
            ...(Object.keys(outcome).length > 0 ? { outcome } : {}),
          };
        }
        return { status: 'failed', txHash, code: parsed.result, message: `the ledger applied the transaction with ${parsed.result} (fee claimed, no effect)`, dead: true };
      }
      // Not found: dead once a validated ledger passes LastLedgerSequence or the sequence is used.
      const info = (await must(chain, 'server_info', {})) as RpcResult;
      const validated = Number(((info['info'] as Record<string, unknown>)?.['validated_ledger'] as Record<string, unknown>)?.['seq'] ?? 0);
      const lls = Number(tx['LastLedgerSequence']);
      if (validated >= lls) {
        return { status: 'failed', txHash, code: 'tefMAX_LEDGER', message: `not in any validated ledger up to ${validated}, at or past LastLedgerSequence ${lls}`, dead: true };
      }
      const account = await accountInfo(chain, String(tx['Account']), 'validated');
      if (account && Number(account.data['Sequence']) > Number(tx['Sequence'])) {
        return { status: 'failed', txHash, code: 'tefPAST_SEQ', message: `sequence ${String(tx['Sequence'])} was used by another transaction`, dead: true };
      }
      return { status: 'pending', txHash };
    },

    /**
     * The payload's fate from validated ledgers only: the account's validated Sequence, then the
     * validated transaction that used the payload's Sequence. `applied` (this payload, tesSUCCESS),
     * `dead` (a rival used the sequence: `sequence_consumed`; a validated ledger reached
     * LastLedgerSequence with the sequence unused: `expired`; this payload validated with a tec:
     * the tec token, no effect), `live` (`pending`). Throws a TransportError when the ledger
     * cannot show it (the sequence was consumed but its transaction is not in the history served,
     * a Ticket, an RPC error).
     */
    async payloadFate({ chain, built }: PayloadFateInput): Promise<PayloadFate> {
      config(chain);
      const payload = payloadOf(built);
      if (payload.chain !== chain) {
        throw new ValidationError('built', [{ path: 'payload.chain', message: `payload is for ${payload.chain}, not ${chain}` }]);
      }
      const tx = payload.tx_json;
      const account = String(tx['Account']);
      const sequence = Number(tx['Sequence']);
      if (!Number.isSafeInteger(sequence) || sequence <= 0) {
        throw new ValidationError('built', [{ path: 'payload.tx_json.Sequence', message: 'expected a positive Sequence (Ticket payloads are not built by this driver)' }]);
      }
      const r = await must(chain, 'account_info', { account, ledger_index: 'validated' }, ['actNotFound']);
      if (r === null) {
        // Missing from the validated ledger: not funded yet, or deleted after it used the
        // sequence. The ledger cannot tell which here, so no answer is safe.
        throw new TransportError(`XRPL account ${account} is not in the validated ledger of ${chain}: the payload's fate cannot be shown`, { data: { method: 'account_info', error: 'actNotFound' } });
      }
      const validatedLedger = r['ledger_index'];
      const data = (r['account_data'] ?? {}) as Record<string, unknown>;
      const validatedSeq = data['Sequence'];
      if (r['validated'] !== true || typeof validatedLedger !== 'number' || typeof validatedSeq !== 'number') {
        throw new TransportError(`XRPL account_info on ${chain}: not a validated ledger answer`, { data: { method: 'account_info' } });
      }
      if (validatedSeq <= sequence) {
        // Sequence unused in validated ledger `validatedLedger`: not applied. A transaction may
        // appear in ledger LastLedgerSequence itself, never after it.
        const lls = tx['LastLedgerSequence'];
        if (typeof lls === 'number' && validatedLedger >= lls) {
          return { fate: 'dead', code: 'expired', message: `sequence ${sequence} unused through validated ledger ${validatedLedger}, at or past LastLedgerSequence ${lls}` };
        }
        return { fate: 'live', code: 'pending', message: `sequence ${sequence} unused in validated ledger ${validatedLedger}; valid through ledger ${String(lls ?? 'any')}` };
      }
      const used = await txBySequence(chain, account, sequence, validatedLedger);
      if (used === null) {
        throw new TransportError(
          `XRPL ${account} on ${chain}: sequence ${sequence} was consumed (validated Sequence ${validatedSeq}) but no validated transaction with it is in the history served (a gap or a Ticket): the payload's fate cannot be shown`,
          { data: { method: 'account_tx', sequence, validatedSequence: validatedSeq } },
        );
      }
      return fateOfUsed(built.digest, used, sequence);
    },

    async balances({ wallet }: BalancesInput): Promise<Balance[]> {
      const address = walletAddress(wallet);
      const chain = wallet.chain;
      const decimalsBase = config(chain).iouDecimals ?? 6;
      const info = await accountInfo(chain, address, 'validated');
      if (!info) throw new NotFoundError('account', address, { data: { chain } });
      const out: Balance[] = [{ asset: 'native', symbol: 'XRP', amount: String(info.data['Balance']), decimals: 6 }];
      const lines = (await must(chain, 'account_lines', { account: address, ledger_index: 'validated' })) as RpcResult;
      for (const line of (lines['lines'] ?? []) as Record<string, unknown>[]) {
        const value = String(line['balance']);
        if (value.startsWith('-')) continue; // an obligation of this account as issuer, not a holding
        let decimals = decimalsBase;
        let units = parseScaled(value, decimals);
        while (units === null && decimals < 96) units = parseScaled(value, ++decimals);
        if (units === null) continue;
        const code = String(line['currency']);
        const flags: Record<string, boolean> = {};
        for (const k of ['authorized', 'peer_authorized', 'freeze', 'freeze_peer', 'no_ripple', 'no_ripple_peer']) if (line[k] === true) flags[k] = true;
        out.push({ asset: `${String(line['account'])}.${code}`, symbol: currencyName(code) ?? code, amount: units.toString(), decimals, flags });
      }
      const objects = (await must(chain, 'account_objects', { account: address, type: 'mptoken', ledger_index: 'validated' })) as RpcResult;
      for (const o of (objects['account_objects'] ?? []) as Record<string, unknown>[]) {
        if (o['LedgerEntryType'] !== 'MPToken') continue;
        const id = String(o['MPTokenIssuanceID']);
        const issuance = await must(chain, 'ledger_entry', { mpt_issuance: id, ledger_index: 'validated' }, ['entryNotFound', 'objectNotFound']);
        const node = (issuance?.['node'] ?? {}) as Record<string, unknown>;
        const flags = Number(o['Flags'] ?? 0);
        out.push({
          asset: id,
          symbol: tickerOf(node['MPTokenMetadata']) ?? 'MPT',
          amount: BigInt(String(o['MPTAmount'] ?? '0')).toString(),
          decimals: Number(node['AssetScale'] ?? 0),
          flags: { locked: (flags & 0x01) !== 0, authorized: (flags & 0x02) !== 0 },
        });
      }
      return out;
    },

    async controlState({ wallet }: ControlStateInput): Promise<ControlState> {
      const address = walletAddress(wallet);
      const info = await accountInfo(wallet.chain, address, 'validated');
      if (!info) throw new NotFoundError('account', address, { data: { chain: wallet.chain } });
      const list = info.signerList;
      const entries = ((list?.['SignerEntries'] ?? []) as { SignerEntry: { Account: string; SignerWeight: number } }[]).map((e) => ({
        address: e.SignerEntry.Account,
        weight: Number(e.SignerEntry.SignerWeight),
      }));
      const flags = Number(info.data['Flags'] ?? 0);
      return {
        address,
        members: entries,
        quorum: Number(list?.['SignerQuorum'] ?? 0),
        masterKeyEnabled: (flags & ACCOUNT_ROOT_FLAGS.lsfDisableMaster) === 0,
        extra: {
          sequence: Number(info.data['Sequence']),
          flags,
          regularKey: (info.data['RegularKey'] as string | undefined) ?? null,
        },
      };
    },

    async issuerFacts({ chain, issuer }: { chain: string; issuer: string }): Promise<XrplIssuerFacts> {
      const info = await accountInfo(chain, issuer, 'validated');
      if (!info) {
        return { account: issuer, exists: false, blackholed: false, requireAuth: false, globalFreeze: false, noFreeze: false, clawbackEnabled: false, obligations: {} };
      }
      const flags = Number(info.data['Flags'] ?? 0);
      const gb = await must(chain, 'gateway_balances', { account: issuer, ledger_index: 'validated' }, ['actNotFound']);
      return {
        account: issuer,
        exists: true,
        blackholed:
          (flags & ACCOUNT_ROOT_FLAGS.lsfDisableMaster) !== 0 &&
          info.signerList === null &&
          (info.data['RegularKey'] === undefined || BLACK_HOLES.has(String(info.data['RegularKey']))),
        requireAuth: (flags & ACCOUNT_ROOT_FLAGS.lsfRequireAuth) !== 0,
        globalFreeze: (flags & ACCOUNT_ROOT_FLAGS.lsfGlobalFreeze) !== 0,
        noFreeze: (flags & ACCOUNT_ROOT_FLAGS.lsfNoFreeze) !== 0,
        clawbackEnabled: (flags >>> 0 & ACCOUNT_ROOT_FLAGS.lsfAllowTrustLineClawback) !== 0,
        obligations: ((gb?.['obligations'] ?? {}) as Record<string, string>),
      };
    },

    networkId: ({ chain }: { chain: string }) => reportedNetworkId(chain),
  };
  return defineChainDriver(driver);
}

/** The ticker of XLS-89 MPT metadata (hex of JSON with `ticker` or `t`), or null. */
export function tickerOf(metadataHex: unknown): string | null {
  if (typeof metadataHex !== 'string' || metadataHex === '') return null;
  try {
    const json = JSON.parse(Buffer.from(metadataHex, 'hex').toString('utf8')) as Record<string, unknown>;
    const t = json['ticker'] ?? json['t'];
    return typeof t === 'string' && t.length <= 64 ? t : null;
  } catch {
    return null;
  }
}


/**
 * Polls `confirm` until the transaction is confirmed or failed (validated, a tec, or dead past
 * its LastLedgerSequence / sequence), or the attempts run out (then the last `pending`).
 *
 * @example
 * const outcome = await confirmUntilFinal(driver, 'xrpl:testnet', assembled.txHash, built, { intervalMs: 1000 })
 */
export async function confirmUntilFinal(
  driver: Pick<ChainDriver, 'confirm'>,
  chain: string,
  txHash: string,
  built: BuiltPayload,
  options: { attempts?: number; intervalMs?: number } = {},
): Promise<ConfirmResult> {
  const attempts = options.attempts ?? 60;
  let last: ConfirmResult = { status: 'pending', txHash };
  for (let i = 0; i < attempts; i++) {
    last = await driver.confirm({ chain, txHash, built });
    if (last.status !== 'pending') return last;
    if (i < attempts - 1) await new Promise((r) => setTimeout(r, options.intervalMs ?? 1000));
  }
  return last;
}
