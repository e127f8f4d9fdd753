/**
 * @module devnet/server
 * rippled's JSON-RPC over HTTP for the devnet ledger: the methods the driver and the servers use,
 * in API v1 and v2 shapes, with rippled's own error tokens. Unknown methods answer unknownCmd.
 */
import { encode } from 'ripple-binary-codec';
import { hashes, Wallet } from 'xrpl';
import { classicAddressToXAddress } from 'ripple-address-codec';
import { LEGACY_NETWORK_ID_MAX } from '../constants.js';
import { bytesToHex, compareAccountIds, formatScaled, isClassicAddress, sha512Half } from '../util.js';
import { IOU_SCALE, engineMessage, engineResultCode, type AccountState, type TrustLine, type TxRecord, type XrplLedger } from './ledger.js';

type Json = Record<string, unknown>;

/** rippled's genesis account (the "masterpassphrase" seed): the faucet pays from it. */
export const GENESIS_SEED = 'snoPBrXtMeMyMHUVTgbuqAfg1SUTb';
export const GENESIS_ADDRESS = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';

const ERROR_CODES: Record<string, number> = {
  unknownCmd: 32,
  invalidParams: 31,
  actNotFound: 19,
  actMalformed: 35,
  txnNotFound: 29,
  entryNotFound: 21,
  invalidTransaction: 80,
  notImpl: 74,
  invalid_API_version: 40,
  lgrNotFound: 21,
  lgrIdxsInvalid: 57,
  lgrIdxMalformed: 58,
};

function rpcError(error: string, message: string, request: Json, extra: Json = {}): Json {
  return { error, error_code: ERROR_CODES[error] ?? -1, error_message: message, status: 'error', request, ...extra };
}

const RIPPLE_EPOCH = 946684800;

export class DevnetRpc {
  private readonly genesis = Wallet.fromSeed(GENESIS_SEED);

  constructor(
    readonly ledger: XrplLedger,
    /** Fixed close time base so replies never read the wall clock. */
    private readonly closeTimeBase = 800000000,
  ) {}

  /** Handles one JSON-RPC body; returns the `result` object. */
  handle(method: unknown, rawParams: unknown): Json {
    const params = (Array.isArray(rawParams) ? rawParams[0] : rawParams) as Json | undefined;
    const p: Json = params && typeof params === 'object' ? params : {};
    const request = { command: method, ...p };
    const api = p['api_version'] === undefined ? 1 : p['api_version'];
    if (api !== 1 && api !== 2) return rpcError('invalid_API_version', 'API version must be an integer in range [1, 2].', request);
    const v2 = api === 2;
    switch (method) {
      case 'server_info':
        return this.serverInfo();
      case 'fee':
        return this.fee();
      case 'ledger_current':
        return { ledger_current_index: this.ledger.currentLedgerIndex, status: 'success' };
      case 'ledger_accept':
        this.ledger.close();
        return { ledger_current_index: this.ledger.currentLedgerIndex, status: 'success' };
      case 'account_info':
        return this.accountInfo(p, request, v2);
      case 'account_lines':
        return this.withAccount(p, request, (a) => this.accountLines(a));
      case 'account_objects':
        return this.withAccount(p, request, (a) => this.accountObjects(a, p['type']));
      case 'gateway_balances':
        return this.gatewayBalancesAt(p, request);
      case 'account_tx':
        return this.accountTx(p, request, v2);
      case 'ledger_entry':
        return this.ledgerEntry(p, request);
      case 'submit':
        return this.submit(p['tx_blob'], request);
      case 'submit_multisigned':
        return this.submitMultisigned(p['tx_json'], request);
      case 'tx':
        return this.tx(p, request, v2);
      default:
        return rpcError('unknownCmd', 'Unknown method.', request);
    }
  }

  private ledgerInfo(): Json {
    return { ledger_current_index: this.ledger.currentLedgerIndex };
  }

  private serverInfo(): Json {
    const l = this.ledger;
    const info: Json = {
      build_version: 'vault-xrpl-devnet',
      complete_ledgers: `1-${l.validatedLedgerIndex}`,
      load_factor: 1,
      server_state: 'full',
      validated_ledger: {
        seq: l.validatedLedgerIndex,
        base_fee_xrp: l.baseFee / 1e6,
        reserve_base_xrp: Number(l.reserveBase) / 1e6,
        reserve_inc_xrp: Number(l.reserveIncrement) / 1e6,
        age: 0,
        hash: '0'.repeat(64),
      },
    };
    if (l.networkId !== 0) info['network_id'] = l.networkId;
    return { info, status: 'success' };
  }

  private fee(): Json {
    const base = String(this.ledger.baseFee);
    return {
      current_ledger_size: '0',
      current_queue_size: '0',
      drops: { base_fee: base, median_fee: String(this.ledger.baseFee * 500), minimum_fee: base, open_ledger_fee: base },
      expected_ledger_size: '1000',
      ledger_current_index: this.ledger.currentLedgerIndex,
      levels: { median_level: '128000', minimum_level: '256', open_ledger_level: '256', reference_level: '256' },
      max_queue_size: '20000',
      status: 'success',
    };
  }

  private accountRootJson(a: AccountState): Json {
    const out: Json = {
      Account: a.address,
      Balance: a.balance.toString(),
      Flags: a.flags >>> 0,
      LedgerEntryType: 'AccountRoot',
      OwnerCount: a.ownerCount,
      Sequence: a.sequence,
      index: hashes.hashAccountRoot(a.address),
    };
    if (a.regularKey) out['RegularKey'] = a.regularKey;
    if (a.domain) out['Domain'] = a.domain;
    return out;
  }

  private signerListJson(a: AccountState): Json[] {
    if (!a.signerList) return [];
    return [
      {
        Flags: 0,
        LedgerEntryType: 'SignerList',
        OwnerNode: '0',
        SignerEntries: a.signerList.entries.map((e) => ({ SignerEntry: { Account: e.account, SignerWeight: e.weight } })),
        SignerListID: 0,
        SignerQuorum: a.signerList.quorum,
        index: hashes.hashSignerListId(a.address),
      },
    ];
  }

  private withAccount(p: Json, request: Json, fn: (a: AccountState) => Json): Json {
    const address = p['account'];
    if (typeof address !== 'string') return rpcError('invalidParams', "Missing field 'account'.", request);
    if (!isClassicAddress(address)) return rpcError('actMalformed', 'Account malformed.', request);
    const a = this.ledger.account(address);
    if (!a) return rpcError('actNotFound', 'Account not found.', request, this.ledgerInfo());
    return { ...fn(a), ...this.ledgerInfo(), validated: false, status: 'success' };
  }

  /**
   * Which ledger a request's `ledger_index` names: the open one (`current`, the default, or its
   * index) or the last validated one (`validated`, `closed`, or its index), with the fields rippled
   * adds for it: `ledger_current_index` + `validated: false`, or `ledger_index` + `ledger_hash` +
   * `validated: true`. Older ledgers are not kept: notImpl. Anything else: invalidParams.
   */
  private pickLedger(p: Json, request: Json): { validated: boolean; where: Json } | { error: Json } {
    const which = p['ledger_index'] ?? 'current';
    const l = this.ledger;
    let validated: boolean;
    if (which === 'current' || which === l.currentLedgerIndex) validated = false;
    else if (which === 'validated' || which === 'closed' || which === l.validatedLedgerIndex) validated = true;
    else if (typeof which === 'number' || (typeof which === 'string' && /^\d+$/.test(which))) {
      return { error: rpcError('notImpl', 'Not implemented: the devnet keeps the open and the last validated ledger only.', request) };
    } else return { error: rpcError('invalidParams', 'ledgerIndexMalformed', request) };
    const where: Json = validated
      ? { ledger_hash: this.ledgerHash(l.validatedLedgerIndex), ledger_index: l.validatedLedgerIndex, validated: true }
      : { ledger_current_index: l.currentLedgerIndex, validated: false };
    return { validated, where };
  }

  /**
   * gateway_balances from the open ledger (default) or the last validated one, like account_info:
   * asked with `ledger_index: "validated"` it sums the validated ledger's trust lines and answers
   * with `ledger_index`, `ledger_hash` and `validated: true`.
   */
  private gatewayBalancesAt(p: Json, request: Json): Json {
    const address = p['account'];
    if (typeof address !== 'string') return rpcError('invalidParams', "Missing field 'account'.", request);
    if (!isClassicAddress(address)) return rpcError('actMalformed', 'Account malformed.', request);
    const picked = this.pickLedger(p, request);
    if ('error' in picked) return picked.error;
    const a = picked.validated ? this.ledger.validatedAccount(address) : this.ledger.account(address);
    if (!a) return rpcError('actNotFound', 'Account not found.', request, picked.where);
    const lines = picked.validated ? this.ledger.validatedTrustLinesOf(address) : this.ledger.trustLinesOf(address);
    return { ...this.gatewayBalances(a, lines), ...picked.where, status: 'success' };
  }

  /**
   * account_info answers from the open ledger (`current`, the default) or from the last validated
   * one (`validated`, `closed`, or its index), with rippled's `ledger_current_index` or
   * `ledger_index` + `ledger_hash` + `validated: true`. Older ledgers are not kept: notImpl.
   */
  private accountInfo(p: Json, request: Json, v2: boolean): Json {
    const address = p['account'];
    if (typeof address !== 'string') return rpcError('invalidParams', "Missing field 'account'.", request);
    if (!isClassicAddress(address)) return rpcError('actMalformed', 'Account malformed.', request);
    const picked = this.pickLedger(p, request);
    if ('error' in picked) return picked.error;
    const { validated, where } = picked;
    const l = this.ledger;
    const a = validated ? l.validatedAccount(address) : l.account(address);
    if (!a) return rpcError('actNotFound', 'Account not found.', request, where);
    const data = this.accountRootJson(a);
    const out: Json = { account_data: data };
    if (p['signer_lists'] === true) {
      if (v2) out['signer_lists'] = this.signerListJson(a);
      else data['signer_lists'] = this.signerListJson(a);
    }
    out['account_flags'] = {
      defaultRipple: (a.flags & 0x00800000) !== 0,
      depositAuth: (a.flags & 0x01000000) !== 0,
      disableMasterKey: (a.flags & 0x00100000) !== 0,
      disallowIncomingXRP: (a.flags & 0x00080000) !== 0,
      globalFreeze: (a.flags & 0x00400000) !== 0,
      noFreeze: (a.flags & 0x00200000) !== 0,
      passwordSpent: (a.flags & 0x00010000) !== 0,
      requireAuthorization: (a.flags & 0x00040000) !== 0,
      requireDestinationTag: (a.flags & 0x00020000) !== 0,
      allowTrustLineClawback: ((a.flags >>> 0) & 0x80000000) !== 0,
    };
    return { ...out, ...where, status: 'success' };
  }

  /**
   * A stable stand-in for a closed ledger's hash. Devnet model: the devnet builds no ledger headers
   * (no state tree, no transaction tree), so it cannot compute rippled's real hash; it derives a
   * deterministic 64-hex value per (network id, ledger index) with SHA-512Half instead. Same ledger,
   * same hash, in every reply that names it; a different ledger, a different hash.
   */
  private ledgerHash(index: number): string {
    return bytesToHex(sha512Half(Buffer.from(`vault-xrpl-devnet:ledger:${this.ledger.networkId}:${index}`))).toUpperCase();
  }

  private accountLines(a: AccountState): Json {
    const lines = this.ledger.trustLinesOf(a.address).map((l) => {
      const holder = l.holder === a.address;
      const line: Json = {
        account: holder ? l.issuer : l.holder,
        balance: formatScaled(holder ? l.balance : -l.balance, IOU_SCALE),
        currency: l.currency,
        limit: formatScaled(holder ? l.limit : 0n, IOU_SCALE),
        limit_peer: formatScaled(holder ? 0n : l.limit, IOU_SCALE),
        quality_in: 0,
        quality_out: 0,
        no_ripple: !holder,
        no_ripple_peer: holder,
      };
      if (l.authorized) line[holder ? 'peer_authorized' : 'authorized'] = true;
      if (l.frozen) line[holder ? 'freeze_peer' : 'freeze'] = true;
      return line;
    });
    return { account: a.address, lines };
  }

  private rippleStateJson(issuer: string, holder: string, currency: string): Json {
    const l = this.ledger.trustLine(holder, issuer, currency);
    if (!l) return {};
    const holderLow = compareAccountIds(holder, issuer) < 0;
    const low = holderLow ? holder : issuer;
    const high = holderLow ? issuer : holder;
    let flags = holderLow ? 0x00010000 : 0x00020000; // reserve on the holder's side
    if (l.authorized) flags |= holderLow ? 0x00080000 : 0x00040000;
    if (l.frozen) flags |= holderLow ? 0x00800000 : 0x00400000;
    return {
      Balance: { currency, issuer: 'rrrrrrrrrrrrrrrrrrrrBZbvji', value: formatScaled(holderLow ? l.balance : -l.balance, IOU_SCALE) },
      Flags: flags >>> 0,
      HighLimit: { currency, issuer: high, value: formatScaled(holderLow ? 0n : l.limit, IOU_SCALE) },
      LowLimit: { currency, issuer: low, value: formatScaled(holderLow ? l.limit : 0n, IOU_SCALE) },
      LedgerEntryType: 'RippleState',
      index: hashes.hashTrustline(low, high, currency),
    };
  }

  private accountObjects(a: AccountState, type: unknown): Json {
    const objects: Json[] = [];
    const want = (t: string) => type === undefined || type === t;
    if (want('signer_list')) objects.push(...this.signerListJson(a));
    if (want('state')) {
      for (const l of this.ledger.trustLinesOf(a.address)) objects.push(this.rippleStateJson(l.issuer, l.holder, l.currency));
    }
    if (want('mpt_issuance')) for (const i of this.ledger.issuancesOf(a.address)) objects.push(this.issuanceJson(i.id));
    if (want('mptoken')) {
      for (const t of this.ledger.mpTokensOf(a.address)) {
        objects.push({
          Account: t.holder,
          Flags: t.authorized ? 0x02 : 0,
          LedgerEntryType: 'MPToken',
          MPTAmount: t.amount.toString(),
          MPTokenIssuanceID: t.id,
          OwnerNode: '0',
        });
      }
    }
    return { account: a.address, account_objects: objects };
  }

  private issuanceJson(id: string): Json {
    const i = this.ledger.mptIssuance(id);
    if (!i) return {};
    const out: Json = {
      AssetScale: i.assetScale,
      Flags: i.flags,
      Issuer: i.issuer,
      LedgerEntryType: 'MPTokenIssuance',
      OutstandingAmount: i.outstanding.toString(),
      OwnerNode: '0',
      Sequence: i.sequence,
      mpt_issuance_id: i.id,
    };
    if (i.maximumAmount !== null) out['MaximumAmount'] = i.maximumAmount.toString();
    if (i.transferFee !== 0) out['TransferFee'] = i.transferFee;
    if (i.metadata !== null) out['MPTokenMetadata'] = i.metadata;
    return out;
  }

  private ledgerEntry(p: Json, request: Json): Json {
    const id = p['mpt_issuance'];
    if (typeof id === 'string') {
      const i = this.ledger.mptIssuance(id);
      if (!i) return rpcError('entryNotFound', 'Entry not found.', request);
      return { index: id.toUpperCase(), node: this.issuanceJson(id), ...this.ledgerInfo(), validated: false, status: 'success' };
    }
    const account = p['account_root'];
    if (typeof account === 'string') {
      const a = this.ledger.account(account);
      if (!a) return rpcError('entryNotFound', 'Entry not found.', request);
      return { index: hashes.hashAccountRoot(account), node: this.accountRootJson(a), ...this.ledgerInfo(), validated: false, status: 'success' };
    }
    return rpcError('notImpl', 'Not implemented: the devnet answers ledger_entry for mpt_issuance and account_root only.', request);
  }

  private gatewayBalances(a: AccountState, lines: TrustLine[]): Json {
    const obligations: Record<string, bigint> = {};
    const balances: Record<string, { currency: string; value: string }[]> = {};
    for (const l of lines) {
      if (l.issuer === a.address) obligations[l.currency] = (obligations[l.currency] ?? 0n) + l.balance;
      else if (l.balance > 0n) (balances[l.issuer] ??= []).push({ currency: l.currency, value: formatScaled(l.balance, IOU_SCALE) });
    }
    const out: Json = { account: a.address };
    const ob = Object.fromEntries(Object.entries(obligations).filter(([, v]) => v !== 0n).map(([k, v]) => [k, formatScaled(v, IOU_SCALE)]));
    if (Object.keys(ob).length > 0) out['obligations'] = ob;
    if (Object.keys(balances).length > 0) out['assets'] = balances;
    return out;
  }

  private txJson(rec: TxRecord, v2: boolean): Json {
    const tx: Json = { ...rec.tx };
    if (v2 && tx['TransactionType'] === 'Payment') {
      tx['DeliverMax'] = tx['Amount'];
      delete tx['Amount'];
    }
    const closeTime = this.closeTimeBase + rec.ledgerIndex * 4;
    const common: Json = { meta: rec.meta, validated: rec.validated, ledger_index: rec.ledgerIndex };
    if (rec.validated) {
      common['close_time_iso'] = new Date((closeTime + RIPPLE_EPOCH) * 1000).toISOString().replace('.000Z', 'Z');
      if (v2) common['ledger_hash'] = this.ledgerHash(rec.ledgerIndex);
    }
    if (v2) return { tx_json: tx, hash: rec.hash, ...common };
    return { ...tx, hash: rec.hash, inLedger: rec.ledgerIndex, date: closeTime, ...common };
  }

  private tx(p: Json, request: Json, v2: boolean): Json {
    const hash = p['transaction'];
    if (typeof hash !== 'string' || !/^[0-9A-Fa-f]{64}$/.test(hash)) return rpcError('notImpl', 'Not implemented: tx lookups by hash only (64 hex).', request);
    if (p['binary'] === true) return rpcError('notImpl', 'Not implemented: binary tx replies.', request);
    const rec = this.ledger.tx(hash);
    if (!rec) return rpcError('txnNotFound', 'Transaction not found.', request);
    return { ...this.txJson(rec, v2), status: 'success' };
  }

  /**
   * rippled's account_tx over validated ledgers: `ledger_index_min` / `ledger_index_max` (-1 = the
   * earliest / latest validated), or one ledger by `ledger_index`; newest first unless `forward`;
   * `limit` per page and an opaque `{ledger, seq}` marker to resume. API v2 refuses a range outside
   * the validated ledgers (lgrIdxsInvalid) and min > max (lgrIdxMalformed); v1 clamps it. Entries:
   * v1 `{meta, tx: {…, hash, inLedger, ledger_index, date}, validated}`, v2 `{tx_json, hash,
   * ledger_index, ledger_hash, close_time_iso, meta, validated}`.
   */
  private accountTx(p: Json, request: Json, v2: boolean): Json {
    const address = p['account'];
    if (typeof address !== 'string') return rpcError('invalidParams', "Missing field 'account'.", request);
    if (!isClassicAddress(address)) return rpcError('actMalformed', 'Account malformed.', request);
    if (p['binary'] === true) return rpcError('notImpl', 'Not implemented: binary account_tx replies.', request);
    // rippled answers actNotFound for an account missing from the validated ledger.
    if (!this.ledger.validatedAccount(address)) return rpcError('actNotFound', 'Account not found.', request);
    if (p['tx_type'] !== undefined) return rpcError('notImpl', 'Not implemented: tx_type filters (Clio only).', request);
    const l = this.ledger;
    const earliest = 1;
    const latest = l.validatedLedgerIndex;
    const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v);
    let min: number;
    let max: number;
    const single = p['ledger_index'];
    if (single !== undefined) {
      const idx = single === 'validated' || single === 'closed' ? latest : single;
      if (!int(idx)) return rpcError('invalidParams', 'ledgerIndexMalformed', request);
      if ((idx as number) > latest || (idx as number) < earliest) return rpcError('lgrNotFound', 'ledgerNotFound', request);
      min = max = idx as number;
    } else {
      const rawMin = p['ledger_index_min'] ?? -1;
      const rawMax = p['ledger_index_max'] ?? -1;
      if (!int(rawMin) || !int(rawMax)) return rpcError('invalidParams', 'Invalid field \'ledger_index_min\' or \'ledger_index_max\'.', request);
      min = rawMin === -1 ? earliest : (rawMin as number);
      max = rawMax === -1 ? latest : (rawMax as number);
      if (v2) {
        if (min > max) return rpcError('lgrIdxMalformed', 'Ledger index malformed.', request);
        if (min < earliest || max > latest) return rpcError('lgrIdxsInvalid', 'Ledger indexes invalid.', request);
      } else {
        min = Math.max(min, earliest);
        max = Math.min(max, latest);
        if (min > max) return rpcError('lgrIdxsInvalid', 'Ledger indexes invalid.', request);
      }
    }
    const rawLimit = p['limit'] ?? 200;
    if (!int(rawLimit) || (rawLimit as number) < 1) return rpcError('invalidParams', "Invalid field 'limit', not unsigned integer.", request);
    const limit = Math.min(rawLimit as number, 400);
    const forward = p['forward'] === true;
    const key = (r: TxRecord) => [r.ledgerIndex, Number(r.meta['TransactionIndex'] ?? 0)] as const;
    const order = (a: TxRecord, b: TxRecord) => {
      const [la, sa] = key(a);
      const [lb, sb] = key(b);
      return forward ? la - lb || sa - sb : lb - la || sb - sa;
    };
    let all = l.txsOf(address).filter((r) => r.validated && r.ledgerIndex >= min && r.ledgerIndex <= max).sort(order);
    const marker = p['marker'];
    if (marker !== undefined) {
      const m = marker as { ledger?: unknown; seq?: unknown } | null;
      if (m === null || typeof m !== 'object' || !int(m.ledger) || !int(m.seq)) return rpcError('invalidParams', "Invalid field 'marker'.", request);
      const start = all.findIndex((r) => key(r)[0] === m.ledger && key(r)[1] === m.seq);
      if (start < 0) return rpcError('invalidParams', "Invalid field 'marker'.", request);
      all = all.slice(start);
    }
    const page = all.slice(0, limit);
    const next = all[limit];
    const transactions = page.map((rec) => {
      const { meta, validated, ledger_index, ledger_hash, close_time_iso, hash, tx_json, ...v1tx } = this.txJson(rec, v2);
      return v2
        ? { close_time_iso, hash, ledger_hash, ledger_index, meta, tx_json, validated }
        : { meta, tx: { ...v1tx, hash, ledger_index }, validated };
    });
    return {
      account: address,
      ledger_index_min: min,
      ledger_index_max: max,
      limit,
      ...(next ? { marker: { ledger: key(next)[0], seq: key(next)[1] } } : {}),
      transactions,
      validated: true,
      status: 'success',
    };
  }

  /** rippled's submit: the engine result of applying the blob to the open ledger. */
  submit(blob: unknown, request: Json): Json {
    if (typeof blob !== 'string') return rpcError('invalidParams', "Missing field 'tx_blob'.", request);
    const out = this.ledger.submit(blob);
    if (out.kind === 'error') {
      return out.error === 'invalidTransaction'
        ? { error: out.error, error_exception: out.message, status: 'error', request }
        : rpcError(out.error, out.message, request);
    }
    const applied = out.applied || out.result.startsWith('tec');
    return {
      accepted: applied,
      applied,
      broadcast: applied,
      engine_result: out.result,
      engine_result_code: engineResultCode(out.result),
      engine_result_message: engineMessage(out.result),
      kept: applied,
      queued: false,
      open_ledger_cost: String(this.ledger.baseFee),
      validated_ledger_index: this.ledger.validatedLedgerIndex,
      status: 'success',
      tx_blob: blob,
      tx_json: { ...out.tx, hash: out.hash },
    };
  }

  /** rippled's submit_multisigned: sorts and checks the Signers, encodes and submits. */
  private submitMultisigned(txJson: unknown, request: Json): Json {
    if (txJson === null || typeof txJson !== 'object') return rpcError('invalidParams', "Missing field 'tx_json'.", request);
    const tx = { ...(txJson as Json) };
    if (tx['SigningPubKey'] !== '') return rpcError('invalidParams', "When multi-signing 'tx_json.SigningPubKey' must be empty.", request);
    const signers = tx['Signers'];
    if (!Array.isArray(signers) || signers.length === 0) return rpcError('invalidParams', "Missing field 'tx_json.Signers'.", request);
    const sorted = [...(signers as { Signer: { Account: string } }[])].sort((a, b) => compareAccountIds(a.Signer.Account, b.Signer.Account));
    for (let i = 0; i < sorted.length; i++) {
      const acct = (sorted[i] as { Signer: { Account: string } }).Signer.Account;
      if (acct === tx['Account']) return rpcError('invalidParams', `A Signer may not be the transaction's Account (${acct}).`, request);
      if (i > 0 && (sorted[i - 1] as { Signer: { Account: string } }).Signer.Account === acct) {
        return rpcError('invalidParams', `Duplicate Signers:Signer:Account entries (${acct}) are not allowed.`, request);
      }
    }
    delete tx['hash'];
    let blob: string;
    try {
      blob = encode({ ...tx, Signers: sorted });
    } catch (e) {
      return rpcError('invalidParams', `Invalid tx_json: ${(e as Error).message}`, request);
    }
    return this.submit(blob, request);
  }

  /** The faucet: a real signed Payment from the genesis account. */
  faucet(destination: string | undefined, drops: bigint): Json {
    let seed: string | undefined;
    let address = destination;
    if (address === undefined) {
      const w = Wallet.generate();
      seed = w.seed;
      address = w.classicAddress;
    }
    if (!isClassicAddress(address)) return { error: 'invalid destination' };
    const genesis = this.ledger.account(GENESIS_ADDRESS);
    const tx: Json = {
      TransactionType: 'Payment',
      Account: GENESIS_ADDRESS,
      Destination: address,
      Amount: drops.toString(),
      Fee: String(this.ledger.baseFee),
      Sequence: genesis?.sequence ?? 1,
      LastLedgerSequence: this.ledger.currentLedgerIndex + 20,
    };
    if (this.ledger.networkId > LEGACY_NETWORK_ID_MAX) tx['NetworkID'] = this.ledger.networkId;
    const signed = this.genesis.sign(tx as never);
    const out = this.submit(signed.tx_blob, { command: 'faucet' });
    if (out['engine_result'] !== 'tesSUCCESS') return { error: `faucet payment failed: ${String(out['engine_result'] ?? out['error'])}` };
    return {
      account: { xAddress: classicAddressToXAddress(address, false, this.ledger.networkId !== 0), classicAddress: address, address },
      amount: Number(drops) / 1e6,
      balance: Number(this.ledger.xrpBalance(address)) / 1e6,
      transactionHash: signed.hash,
      ...(seed ? { seed } : {}),
    };
  }
}
