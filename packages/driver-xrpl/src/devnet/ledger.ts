/**
 * @module devnet/ledger
 * The devnet's ledger state and transaction engine: accounts, XRP, trust lines with
 * authorisation and freeze, MPT issuances and holdings, signer lists, sequences, fees, ledger
 * closes and LastLedgerSequence expiry. Every signature is verified with ripple-keypairs over the
 * ledger's own signing bytes; anything it does not model fails closed (temUNKNOWN or notImpl),
 * never a fake success.
 */
import { decode, encode, encodeForMultisigning, encodeForSigning } from 'ripple-binary-codec';
import { deriveAddress, verify } from 'ripple-keypairs';
import { hashes } from 'xrpl';
import { ACCOUNT_ROOT_FLAGS, ACCOUNT_SET_FLAGS, LEGACY_NETWORK_ID_MAX, MAX_MEMO_BYTES, MAX_SIGNERS } from '../constants.js';
import { compareAccountIds, formatScaled, isClassicAddress, mptIssuanceId, parseScaled } from '../util.js';
import { engineMessage, engineResultCode } from './results.js';

/** IOU values are kept exactly as integers of 10^-IOU_SCALE; values finer than that fail closed. */
export const IOU_SCALE = 30;

export interface SignerEntry {
  account: string;
  weight: number;
}

export interface AccountState {
  address: string;
  balance: bigint;
  sequence: number;
  flags: number;
  ownerCount: number;
  regularKey?: string;
  signerList?: { quorum: number; entries: SignerEntry[] };
  /** AccountSet Domain: hex of the domain's bytes, at most 256 bytes (as rippled stores it). */
  domain?: string;
}

/** A trust line between an issuer and a holder; `balance` is what the holder holds (10^-IOU_SCALE units). */
export interface TrustLine {
  issuer: string;
  holder: string;
  currency: string;
  balance: bigint;
  limit: bigint;
  authorized: boolean;
  frozen: boolean;
}

export interface MptIssuance {
  id: string;
  issuer: string;
  sequence: number;
  assetScale: number;
  flags: number;
  maximumAmount: bigint | null;
  transferFee: number;
  metadata: string | null;
  outstanding: bigint;
}

export interface MpToken {
  id: string;
  holder: string;
  amount: bigint;
  authorized: boolean;
}

export interface TxRecord {
  hash: string;
  tx: Record<string, unknown>;
  blob: string;
  result: string;
  /** The open ledger it was applied to; final once that ledger closes. */
  ledgerIndex: number;
  validated: boolean;
  meta: Record<string, unknown>;
}

/** A submit outcome: an engine result, or a local-check / RPC error before the engine ran. */
export type SubmitOutcome =
  | { kind: 'engine'; result: string; hash: string; tx: Record<string, unknown>; blob: string; applied: boolean }
  | { kind: 'error'; error: string; message: string; exception?: boolean };

export interface LedgerOptions {
  /** Network id; NetworkID is required in transactions when it is above 1024. Default 21337. */
  networkId?: number;
  /** Reference fee in drops. Default 10. */
  baseFee?: number;
  /** Account reserve in drops. Default 1 XRP. */
  reserveBase?: bigint;
  /** Owner reserve per object in drops. Default 0.2 XRP. */
  reserveIncrement?: bigint;
  /** First open ledger index. Default 4 (1-3 are genesis). */
  startLedger?: number;
}

class Fail extends Error {
  constructor(readonly token: string, readonly detail?: string) {
    super(detail ?? token);
  }
}
class LocalError extends Error {
  constructor(readonly error: string, message: string) {
    super(message);
  }
}
const fail = (token: string, detail?: string): never => {
  throw new Fail(token, detail);
};
const notImpl = (what: string): never => {
  throw new LocalError('notImpl', `Not implemented: the devnet does not model ${what}.`);
};

const COMMON_FIELDS = new Set([
  'TransactionType', 'Account', 'Fee', 'Sequence', 'LastLedgerSequence', 'SigningPubKey', 'TxnSignature', 'Signers',
  'Flags', 'Memos', 'NetworkID', 'SourceTag',
]);
const TYPE_FIELDS: Record<string, string[]> = {
  Payment: ['Amount', 'Destination', 'DestinationTag'],
  TrustSet: ['LimitAmount'],
  AccountSet: ['SetFlag', 'ClearFlag', 'Domain'],
  SignerListSet: ['SignerQuorum', 'SignerEntries'],
  SetRegularKey: ['RegularKey'],
  Clawback: ['Amount', 'Holder'],
  MPTokenIssuanceCreate: ['AssetScale', 'MaximumAmount', 'TransferFee', 'MPTokenMetadata'],
  MPTokenAuthorize: ['MPTokenIssuanceID', 'Holder'],
};
const TF_FULLY_CANONICAL = 0x80000000;
const TF_SET_F_AUTH = 0x00010000;
// NoRipple on a holder's side only affects rippling through that holder, which the devnet never
// does (holder-to-holder payments ripple through the issuer only), so the flags are accepted as no-ops.
const TF_SET_NO_RIPPLE = 0x00020000;
const TF_CLEAR_NO_RIPPLE = 0x00040000;
const TF_SET_FREEZE = 0x00100000;
const TF_CLEAR_FREEZE = 0x00200000;
const TF_MPT_UNAUTHORIZE = 0x01;
const MPT_CREATE_MASK = 0x7e;
const MPT_REQUIRE_AUTH = 0x04;
const MPT_CAN_TRANSFER = 0x20;
const MPT_CAN_CLAWBACK = 0x40;
const MAX_MPT = (1n << 63n) - 1n;
const MODELLED_ASF = new Set<number>([
  ACCOUNT_SET_FLAGS.asfRequireDest,
  ACCOUNT_SET_FLAGS.asfRequireAuth,
  ACCOUNT_SET_FLAGS.asfDisallowXRP,
  ACCOUNT_SET_FLAGS.asfDisableMaster,
  ACCOUNT_SET_FLAGS.asfNoFreeze,
  ACCOUNT_SET_FLAGS.asfGlobalFreeze,
  ACCOUNT_SET_FLAGS.asfDefaultRipple,
  ACCOUNT_SET_FLAGS.asfDepositAuth,
  ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback,
]);
const ASF_TO_LSF: Record<number, number> = {
  [ACCOUNT_SET_FLAGS.asfRequireDest]: ACCOUNT_ROOT_FLAGS.lsfRequireDestTag,
  [ACCOUNT_SET_FLAGS.asfRequireAuth]: ACCOUNT_ROOT_FLAGS.lsfRequireAuth,
  [ACCOUNT_SET_FLAGS.asfDisallowXRP]: ACCOUNT_ROOT_FLAGS.lsfDisallowXRP,
  [ACCOUNT_SET_FLAGS.asfDisableMaster]: ACCOUNT_ROOT_FLAGS.lsfDisableMaster,
  [ACCOUNT_SET_FLAGS.asfNoFreeze]: ACCOUNT_ROOT_FLAGS.lsfNoFreeze,
  [ACCOUNT_SET_FLAGS.asfGlobalFreeze]: ACCOUNT_ROOT_FLAGS.lsfGlobalFreeze,
  [ACCOUNT_SET_FLAGS.asfDefaultRipple]: ACCOUNT_ROOT_FLAGS.lsfDefaultRipple,
  [ACCOUNT_SET_FLAGS.asfDepositAuth]: ACCOUNT_ROOT_FLAGS.lsfDepositAuth,
  [ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback]: ACCOUNT_ROOT_FLAGS.lsfAllowTrustLineClawback,
};

function lineKey(issuer: string, holder: string, currency: string): string {
  return `${issuer}|${holder}|${currency}`;
}

/**
 * The ledger. Direct accessors (`account`, `xrpBalance`, `trustLine`, `mptIssuance`, `mpToken`,
 * `tx`) are the independent reads tests use; `submit` is the only way transactions change state.
 */
export class XrplLedger {
  readonly networkId: number;
  readonly baseFee: number;
  readonly reserveBase: bigint;
  readonly reserveIncrement: bigint;
  private openIndex: number;
  private readonly accounts = new Map<string, AccountState>();
  private readonly lines = new Map<string, TrustLine>();
  private readonly issuances = new Map<string, MptIssuance>();
  private readonly tokens = new Map<string, MpToken>();
  private readonly txs = new Map<string, TxRecord>();
  private readonly byAccount = new Map<string, string[]>();
  /** Account roots as the last closed (validated) ledger holds them. */
  private validatedAccounts = new Map<string, AccountState>();
  /** Trust lines as the last closed (validated) ledger holds them (copies taken at close). */
  private validatedLines = new Map<string, TrustLine>();

  constructor(options: LedgerOptions = {}) {
    this.networkId = options.networkId ?? 21337;
    this.baseFee = options.baseFee ?? 10;
    this.reserveBase = options.reserveBase ?? 1_000_000n;
    this.reserveIncrement = options.reserveIncrement ?? 200_000n;
    this.openIndex = options.startLedger ?? 4;
  }

  // ---- independent reads -------------------------------------------------------------------

  get currentLedgerIndex(): number {
    return this.openIndex;
  }
  get validatedLedgerIndex(): number {
    return this.openIndex - 1;
  }
  account(address: string): AccountState | undefined {
    return this.accounts.get(address);
  }
  /** The account root in the last validated ledger (a copy taken when that ledger closed). */
  validatedAccount(address: string): AccountState | undefined {
    return this.validatedAccounts.get(address);
  }
  /** XRP balance in drops; 0 for an account that does not exist. */
  xrpBalance(address: string): bigint {
    return this.accounts.get(address)?.balance ?? 0n;
  }
  trustLine(holder: string, issuer: string, currency: string): TrustLine | undefined {
    return this.lines.get(lineKey(issuer, holder, currency));
  }
  /** Every trust line the account is on (as holder or issuer). */
  trustLinesOf(address: string): TrustLine[] {
    return [...this.lines.values()].filter((l) => l.holder === address || l.issuer === address);
  }
  /** Every trust line the account is on in the last validated ledger. */
  validatedTrustLinesOf(address: string): TrustLine[] {
    return [...this.validatedLines.values()].filter((l) => l.holder === address || l.issuer === address);
  }
  mptIssuance(id: string): MptIssuance | undefined {
    return this.issuances.get(id.toUpperCase());
  }
  mpToken(id: string, holder: string): MpToken | undefined {
    return this.tokens.get(`${id.toUpperCase()}|${holder}`);
  }
  mpTokensOf(holder: string): MpToken[] {
    return [...this.tokens.values()].filter((t) => t.holder === holder);
  }
  issuancesOf(issuer: string): MptIssuance[] {
    return [...this.issuances.values()].filter((i) => i.issuer === issuer);
  }
  tx(hash: string): TxRecord | undefined {
    return this.txs.get(hash.toUpperCase());
  }
  txsOf(address: string): TxRecord[] {
    return (this.byAccount.get(address) ?? []).map((h) => this.txs.get(h) as TxRecord);
  }
  /** XRP reserve an account needs for `owners` objects. */
  reserve(owners: number): bigint {
    return this.reserveBase + this.reserveIncrement * BigInt(owners);
  }

  // ---- admin (genesis) -----------------------------------------------------------------------

  /**
   * Genesis: creates or credits an account directly (no transaction), as a ledger's initial state
   * would hold it. Tests use it to set up fixtures quickly; the faucet uses real Payments instead.
   */
  genesisAccount(address: string, drops: bigint, setup: { signers?: SignerEntry[]; quorum?: number; flags?: number } = {}): AccountState {
    if (!isClassicAddress(address)) throw new Error(`not a classic address: ${address}`);
    // Genesis state is in every ledger: the same edit goes to the open and the validated state.
    genesisEdit(this.validatedAccounts, address, drops, setup, this.openIndex);
    return genesisEdit(this.accounts, address, drops, setup, this.openIndex);
  }

  /** Closes the open ledger: everything applied to it becomes validated. Returns the closed index. */
  close(): number {
    const closed = this.openIndex;
    for (const rec of this.txs.values()) if (!rec.validated && rec.ledgerIndex === closed) rec.validated = true;
    this.validatedAccounts = new Map([...this.accounts].map(([k, a]) => [k, copyAccount(a)]));
    this.validatedLines = new Map([...this.lines].map(([k, l]) => [k, { ...l }]));
    this.openIndex += 1;
    return closed;
  }

  // ---- submission ----------------------------------------------------------------------------

  /** Applies a signed blob to the open ledger, as rippled's `submit` does. */
  submit(blob: string): SubmitOutcome {
    let tx: Record<string, unknown>;
    try {
      if (typeof blob !== 'string' || !/^([0-9A-Fa-f]{2})+$/.test(blob)) throw new Error('not hex');
      tx = decode(blob) as Record<string, unknown>;
    } catch {
      return { kind: 'error', error: 'invalidTransaction', message: 'fails local checks: Transaction could not be decoded.' };
    }
    let hash: string;
    try {
      hash = hashes.hashSignedTx(blob);
    } catch {
      return { kind: 'error', error: 'invalidTransaction', message: 'fails local checks: Transaction is not signed.' };
    }
    try {
      this.localChecks(tx);
    } catch (e) {
      if (e instanceof LocalError) return { kind: 'error', error: e.error, message: e.message };
      throw e;
    }
    try {
      const { token, applied } = this.engine(tx, hash, blob);
      return { kind: 'engine', result: token, hash, tx, blob, applied };
    } catch (e) {
      if (e instanceof LocalError) return { kind: 'error', error: e.error, message: e.message };
      throw e;
    }
  }

  /** rippled's passesLocalChecks + checkValidity: shapes, memo size and every signature. */
  private localChecks(tx: Record<string, unknown>): void {
    const invalid = (reason: string): never => {
      throw new LocalError('invalidTransaction', `fails local checks: ${reason}`);
    };
    const account = tx['Account'];
    if (typeof account !== 'string') invalid('Missing Account field.');
    const memos = tx['Memos'];
    if (memos !== undefined) {
      const size = encode({ Memos: memos } as never).length / 2;
      if (size > MAX_MEMO_BYTES) invalid('The memo exceeds the maximum allowed size.');
    }
    const pub = String(tx['SigningPubKey'] ?? '');
    const signers = tx['Signers'] as { Signer: { Account: string; SigningPubKey: string; TxnSignature: string } }[] | undefined;
    if (signers !== undefined) {
      if (pub !== '') invalid('Cannot both single- and multi-sign.');
      if (signers.length < 1 || signers.length > MAX_SIGNERS) invalid('Invalid Signers array size.');
      let previous: string | null = null;
      for (const { Signer: s } of signers) {
        if (s.Account === account) invalid('Invalid multisigner.');
        if (previous !== null) {
          const cmp = compareAccountIds(previous, s.Account);
          if (cmp === 0) invalid('Duplicate Signers not allowed.');
          if (cmp > 0) invalid('Unsorted Signers array.');
        }
        previous = s.Account;
        let ok = false;
        try {
          ok = verify(encodeForMultisigning(tx, s.Account), s.TxnSignature, s.SigningPubKey);
        } catch {
          ok = false;
        }
        if (!ok) invalid(`Invalid signature on account ${s.Account}.`);
      }
      return;
    }
    if (pub === '' || typeof tx['TxnSignature'] !== 'string') invalid('Missing signature.');
    let ok = false;
    try {
      ok = verify(encodeForSigning(tx), String(tx['TxnSignature']), pub);
    } catch {
      ok = false;
    }
    if (!ok) invalid('Invalid signature.');
  }

  /** preflight (tem, tel network checks), preclaim (ter, tef, tel) and apply (tes, tec). */
  private engine(tx: Record<string, unknown>, hash: string, blob: string): { token: string; applied: boolean } {
    const run = (): string => {
      try {
        this.preflight(tx);
        const account = this.preclaim(tx);
        return this.apply(tx, account);
      } catch (e) {
        if (e instanceof Fail) return e.token;
        throw e;
      }
    };
    const token = run();
    const cls = token.slice(0, 3);
    if (cls !== 'tes' && cls !== 'tec') return { token, applied: false };
    // tec: the fee is claimed and the sequence consumed, nothing else (apply mutates only on tes).
    const account = this.accounts.get(String(tx['Account'])) as AccountState;
    if (cls === 'tec') {
      account.balance -= BigInt(String(tx['Fee']));
      account.sequence += 1;
    }
    const meta: Record<string, unknown> = { TransactionIndex: this.txsInOpenLedger(), TransactionResult: token };
    if (token === 'tesSUCCESS' && tx['TransactionType'] === 'MPTokenIssuanceCreate') {
      meta['mpt_issuance_id'] = mptIssuanceId(Number(tx['Sequence']), String(tx['Account']));
    }
    if (token === 'tesSUCCESS' && tx['TransactionType'] === 'Payment') meta['delivered_amount'] = tx['Amount'];
    const rec: TxRecord = { hash, tx, blob, result: token, ledgerIndex: this.openIndex, validated: false, meta };
    this.txs.set(hash, rec);
    for (const a of new Set([String(tx['Account']), ...(typeof tx['Destination'] === 'string' ? [tx['Destination']] : [])])) {
      const list = this.byAccount.get(a) ?? [];
      list.push(hash);
      this.byAccount.set(a, list);
    }
    return { token, applied: cls === 'tes' };
  }

  private txsInOpenLedger(): number {
    let n = 0;
    for (const r of this.txs.values()) if (r.ledgerIndex === this.openIndex) n++;
    return n;
  }

  private preflight(tx: Record<string, unknown>): void {
    const type = String(tx['TransactionType']);
    const allowed = TYPE_FIELDS[type];
    if (!allowed) fail('temUNKNOWN', `${type} is not modelled`);
    for (const field of Object.keys(tx)) {
      if (!COMMON_FIELDS.has(field) && !(allowed as string[]).includes(field)) notImpl(`the ${field} field of ${type}`);
    }
    const nid = tx['NetworkID'];
    if (this.networkId <= LEGACY_NETWORK_ID_MAX) {
      if (nid !== undefined) fail('telNETWORK_ID_MAKES_TX_NON_CANONICAL');
    } else {
      if (nid === undefined) fail('telREQUIRES_NETWORK_ID');
      if (nid !== this.networkId) fail('telWRONG_NETWORK');
    }
    const fee = tx['Fee'];
    if (typeof fee !== 'string' || !/^\d+$/.test(fee)) fail('temBAD_FEE');
    const flags = Number(tx['Flags'] ?? 0) >>> 0;
    const txFlags = (flags & ~TF_FULLY_CANONICAL) >>> 0;
    const allowedFlags: Record<string, number> = {
      Payment: 0,
      AccountSet: 0,
      SignerListSet: 0,
      SetRegularKey: 0,
      Clawback: 0,
      TrustSet: TF_SET_F_AUTH | TF_SET_FREEZE | TF_CLEAR_FREEZE | TF_SET_NO_RIPPLE | TF_CLEAR_NO_RIPPLE,
      MPTokenIssuanceCreate: MPT_CREATE_MASK,
      MPTokenAuthorize: TF_MPT_UNAUTHORIZE,
    };
    if ((txFlags & ~(allowedFlags[type] ?? 0)) !== 0) {
      // Flags rippled knows but the devnet does not model fail closed.
      if (type === 'Payment' || type === 'TrustSet') notImpl(`${type} flags 0x${txFlags.toString(16)}`);
      fail('temINVALID_FLAG');
    }
  }

  /** Source account, sequence, expiry, fee and signing authority. */
  private preclaim(tx: Record<string, unknown>): AccountState {
    const address = String(tx['Account']);
    const account = this.accounts.get(address);
    if (!account) return fail('terNO_ACCOUNT');
    const seq = Number(tx['Sequence']);
    if (seq < account.sequence) fail('tefPAST_SEQ');
    if (seq > account.sequence) fail('terPRE_SEQ');
    const lls = tx['LastLedgerSequence'];
    if (lls !== undefined && Number(lls) < this.openIndex) fail('tefMAX_LEDGER');
    const signers = tx['Signers'] as { Signer: { Account: string; SigningPubKey: string } }[] | undefined;
    const required = BigInt(this.baseFee) * BigInt(1 + (signers?.length ?? 0));
    const fee = BigInt(String(tx['Fee']));
    if (fee < required) fail('telINSUF_FEE_P');
    if (account.balance < fee) fail('terINSUF_FEE_B');
    if (signers) {
      const list = account.signerList;
      if (!list) return fail('tefNOT_MULTI_SIGNING');
      let weight = 0;
      for (const { Signer: s } of signers) {
        const entry = list.entries.find((e) => e.account === s.Account);
        if (!entry) fail('tefBAD_SIGNATURE');
        const keyAccount = deriveAddress(s.SigningPubKey);
        const signerAcct = this.accounts.get(s.Account);
        if (keyAccount === s.Account) {
          if (signerAcct && (signerAcct.flags & ACCOUNT_ROOT_FLAGS.lsfDisableMaster) !== 0) fail('tefMASTER_DISABLED');
        } else if (!signerAcct || signerAcct.regularKey !== keyAccount) {
          fail('tefBAD_SIGNATURE');
        }
        weight += (entry as SignerEntry).weight;
      }
      if (weight < list.quorum) fail('tefBAD_QUORUM');
    } else {
      const keyAccount = deriveAddress(String(tx['SigningPubKey']));
      if (keyAccount === address) {
        if ((account.flags & ACCOUNT_ROOT_FLAGS.lsfDisableMaster) !== 0) fail('tefMASTER_DISABLED');
      } else if (account.regularKey !== keyAccount) {
        fail('tefBAD_AUTH');
      }
    }
    return account;
  }

  /** Runs the transaction type; mutates only on tesSUCCESS (after every check passed). */
  private apply(tx: Record<string, unknown>, account: AccountState): string {
    const fee = BigInt(String(tx['Fee']));
    const commit = () => {
      account.balance -= fee;
      account.sequence += 1;
    };
    switch (tx['TransactionType']) {
      case 'Payment':
        return this.payment(tx, account, fee, commit);
      case 'AccountSet':
        return this.accountSet(tx, account, commit);
      case 'SignerListSet':
        return this.signerListSet(tx, account, fee, commit);
      case 'SetRegularKey': {
        const key = tx['RegularKey'];
        if (key === undefined && (account.flags & ACCOUNT_ROOT_FLAGS.lsfDisableMaster) !== 0 && !account.signerList) fail('tecNO_ALTERNATIVE_KEY');
        commit();
        if (typeof key === 'string') account.regularKey = key;
        else delete account.regularKey;
        return 'tesSUCCESS';
      }
      case 'TrustSet':
        return this.trustSet(tx, account, fee, commit);
      case 'Clawback':
        return this.clawback(tx, account, commit);
      case 'MPTokenIssuanceCreate':
        return this.mptCreate(tx, account, fee, commit);
      case 'MPTokenAuthorize':
        return this.mptAuthorize(tx, account, fee, commit);
      default:
        return fail('temUNKNOWN');
    }
  }

  private payment(tx: Record<string, unknown>, src: AccountState, fee: bigint, commit: () => void): string {
    const destAddr = tx['Destination'];
    if (typeof destAddr !== 'string') return fail('temDST_NEEDED');
    const amount = tx['Amount'];
    const dest = this.accounts.get(destAddr);
    if (dest && (dest.flags & ACCOUNT_ROOT_FLAGS.lsfRequireDestTag) !== 0 && tx['DestinationTag'] === undefined) fail('tecDST_TAG_NEEDED');
    if (dest && (dest.flags & ACCOUNT_ROOT_FLAGS.lsfDepositAuth) !== 0) notImpl('DepositAuth preauthorisation');
    if (typeof amount === 'string') {
      const drops = BigInt(amount);
      if (drops <= 0n) fail('temBAD_AMOUNT');
      if (destAddr === src.address) fail('temREDUNDANT');
      if (src.balance - fee - drops < this.reserve(src.ownerCount)) fail('tecUNFUNDED_PAYMENT');
      if (!dest && drops < this.reserveBase) fail('tecNO_DST_INSUF_XRP');
      commit();
      src.balance -= drops;
      const target = dest ?? { address: destAddr, balance: 0n, sequence: this.openIndex, flags: 0, ownerCount: 0 };
      if (!dest) this.accounts.set(destAddr, target);
      target.balance += drops;
      return 'tesSUCCESS';
    }
    const a = amount as Record<string, string>;
    if (destAddr === src.address) fail('temREDUNDANT');
    if (!dest) fail('tecNO_DST');
    if (a['mpt_issuance_id'] !== undefined) return this.mptPayment(a, src, dest as AccountState, commit);
    const value = parseScaled(String(a['value']), IOU_SCALE);
    if (value === null) return notImpl(`IOU value ${a['value']} at this precision`);
    if (value <= 0n) fail('temBAD_AMOUNT');
    const currency = String(a['currency']);
    if (currency === 'XRP') fail('temBAD_CURRENCY');
    const issuerAddr = String(a['issuer']);
    const issuer = this.accounts.get(issuerAddr);
    if (!issuer) fail('tecNO_ISSUER');
    const iss = issuer as AccountState;
    const globalFrozen = (iss.flags & ACCOUNT_ROOT_FLAGS.lsfGlobalFreeze) !== 0;
    const requireAuth = (iss.flags & ACCOUNT_ROOT_FLAGS.lsfRequireAuth) !== 0;
    const usable = (line: TrustLine | undefined): line is TrustLine => !!line && !line.frozen && !globalFrozen && (!requireAuth || line.authorized);
    if (src.address === issuerAddr) {
      const line = this.trustLine(destAddr, issuerAddr, currency);
      if (!usable(line)) fail('tecPATH_DRY');
      const l = line as TrustLine;
      if (l.balance + value > l.limit) fail('tecPATH_PARTIAL');
      commit();
      l.balance += value;
      return 'tesSUCCESS';
    }
    const from = this.trustLine(src.address, issuerAddr, currency);
    if (!usable(from)) fail('tecPATH_DRY');
    const f = from as TrustLine;
    if (f.balance < value) fail('tecPATH_PARTIAL');
    if (destAddr === issuerAddr) {
      commit();
      f.balance -= value;
      return 'tesSUCCESS';
    }
    // Holder to holder ripples through the issuer: it must allow rippling (DefaultRipple).
    if ((iss.flags & ACCOUNT_ROOT_FLAGS.lsfDefaultRipple) === 0) fail('tecPATH_DRY');
    const to = this.trustLine(destAddr, issuerAddr, currency);
    if (!usable(to)) fail('tecPATH_DRY');
    const t = to as TrustLine;
    if (t.balance + value > t.limit) fail('tecPATH_PARTIAL');
    commit();
    f.balance -= value;
    t.balance += value;
    return 'tesSUCCESS';
  }

  private mptPayment(a: Record<string, string>, src: AccountState, dest: AccountState, commit: () => void): string {
    const id = String(a['mpt_issuance_id']).toUpperCase();
    const issuance = this.issuances.get(id);
    if (!issuance) return fail('tecOBJECT_NOT_FOUND');
    const value = BigInt(String(a['value']));
    if (value <= 0n || value > MAX_MPT) fail('temBAD_AMOUNT');
    if (issuance.transferFee !== 0 && src.address !== issuance.issuer && dest.address !== issuance.issuer) notImpl('MPT transfer fees');
    const holding = (holder: string) => {
      const t = this.mpToken(id, holder);
      if (!t) return fail('tecNO_AUTH');
      if ((issuance.flags & MPT_REQUIRE_AUTH) !== 0 && !t.authorized) fail('tecNO_AUTH');
      return t;
    };
    if (src.address === issuance.issuer) {
      const t = holding(dest.address);
      const max = issuance.maximumAmount ?? MAX_MPT;
      if (issuance.outstanding + value > max) fail('tecPATH_PARTIAL');
      commit();
      t.amount += value;
      issuance.outstanding += value;
      return 'tesSUCCESS';
    }
    const f = holding(src.address);
    if (f.amount < value) fail('tecPATH_PARTIAL');
    if (dest.address === issuance.issuer) {
      commit();
      f.amount -= value;
      issuance.outstanding -= value;
      return 'tesSUCCESS';
    }
    if ((issuance.flags & MPT_CAN_TRANSFER) === 0) fail('tecNO_AUTH');
    const t = holding(dest.address);
    commit();
    f.amount -= value;
    t.amount += value;
    return 'tesSUCCESS';
  }

  private accountSet(tx: Record<string, unknown>, account: AccountState, commit: () => void): string {
    const set = tx['SetFlag'] as number | undefined;
    const clear = tx['ClearFlag'] as number | undefined;
    if (set !== undefined && set === clear) fail('temINVALID_FLAG');
    for (const f of [set, clear]) if (f !== undefined && !MODELLED_ASF.has(f)) notImpl(`AccountSet flag ${f}`);
    const has = (lsf: number) => (account.flags & lsf) !== 0;
    if (set === ACCOUNT_SET_FLAGS.asfRequireAuth && !has(ACCOUNT_ROOT_FLAGS.lsfRequireAuth) && account.ownerCount > 0) fail('tecOWNERS');
    if (set === ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback) {
      if (has(ACCOUNT_ROOT_FLAGS.lsfNoFreeze)) fail('tecNO_PERMISSION');
      if (account.ownerCount > 0) fail('tecOWNERS');
    }
    if (clear === ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback) fail('tecNO_PERMISSION');
    if (set === ACCOUNT_SET_FLAGS.asfNoFreeze && has(ACCOUNT_ROOT_FLAGS.lsfAllowTrustLineClawback)) fail('tecNO_PERMISSION');
    if (clear === ACCOUNT_SET_FLAGS.asfNoFreeze && has(ACCOUNT_ROOT_FLAGS.lsfNoFreeze)) fail('tecNO_PERMISSION');
    if (clear === ACCOUNT_SET_FLAGS.asfGlobalFreeze && has(ACCOUNT_ROOT_FLAGS.lsfNoFreeze)) fail('tecNO_PERMISSION');
    if (set === ACCOUNT_SET_FLAGS.asfDisableMaster && !account.regularKey && !account.signerList) fail('tecNO_ALTERNATIVE_KEY');
    // rippled: Domain is a Blob of at most 256 bytes (temMALFORMED otherwise); an empty one removes it.
    const domain = tx['Domain'];
    if (domain !== undefined && (typeof domain !== 'string' || !/^([0-9A-Fa-f]{2}){0,256}$/.test(domain))) fail('temMALFORMED');
    commit();
    if (typeof domain === 'string') {
      if (domain === '') delete account.domain;
      else account.domain = domain.toUpperCase();
    }
    if (set !== undefined) account.flags = (account.flags | (ASF_TO_LSF[set] as number)) >>> 0;
    if (clear !== undefined) account.flags = (account.flags & ~(ASF_TO_LSF[clear] as number)) >>> 0;
    return 'tesSUCCESS';
  }

  private signerListSet(tx: Record<string, unknown>, account: AccountState, fee: bigint, commit: () => void): string {
    const quorum = Number(tx['SignerQuorum'] ?? -1);
    const raw = tx['SignerEntries'] as { SignerEntry: { Account: string; SignerWeight: number } }[] | undefined;
    if (quorum === 0 && raw === undefined) {
      if (!account.signerList) return fail('tecNO_ALTERNATIVE_KEY') as never;
      if ((account.flags & ACCOUNT_ROOT_FLAGS.lsfDisableMaster) !== 0 && !account.regularKey) fail('tecNO_ALTERNATIVE_KEY');
      commit();
      delete account.signerList;
      account.ownerCount -= 1;
      return 'tesSUCCESS';
    }
    if (!raw || raw.length < 1 || raw.length > MAX_SIGNERS) fail('temMALFORMED');
    const entries = (raw as { SignerEntry: { Account: string; SignerWeight: number } }[]).map((e) => ({ account: e.SignerEntry.Account, weight: e.SignerEntry.SignerWeight }));
    const seen = new Set<string>();
    for (const e of entries) {
      if (e.weight <= 0) fail('temBAD_WEIGHT');
      if (e.account === account.address || seen.has(e.account)) fail('temBAD_SIGNER');
      seen.add(e.account);
    }
    const total = entries.reduce((s, e) => s + e.weight, 0);
    if (quorum <= 0 || quorum > total) fail('temBAD_QUORUM');
    const owners = account.ownerCount + (account.signerList ? 0 : 1);
    if (account.balance - fee < this.reserve(owners)) fail('tecINSUFFICIENT_RESERVE');
    commit();
    account.ownerCount = owners;
    account.signerList = { quorum, entries: entries.sort((a, b) => compareAccountIds(a.account, b.account)) };
    return 'tesSUCCESS';
  }

  private trustSet(tx: Record<string, unknown>, account: AccountState, fee: bigint, commit: () => void): string {
    const limit = tx['LimitAmount'] as Record<string, string> | undefined;
    if (!limit || typeof limit !== 'object' || limit['currency'] === undefined) return fail('temBAD_LIMIT');
    const currency = String(limit['currency']);
    if (currency === 'XRP') fail('temBAD_CURRENCY');
    const value = parseScaled(String(limit['value']), IOU_SCALE);
    if (value === null) return notImpl(`trust limit ${limit['value']} at this precision`);
    if (value < 0n) fail('temBAD_LIMIT');
    const peer = String(limit['issuer']);
    if (peer === account.address) fail('temDST_IS_SRC');
    if (!this.accounts.has(peer)) fail('tecNO_DST');
    const flags = Number(tx['Flags'] ?? 0) >>> 0;
    const setAuth = (flags & TF_SET_F_AUTH) !== 0;
    const freeze = (flags & TF_SET_FREEZE) !== 0;
    const unfreeze = (flags & TF_CLEAR_FREEZE) !== 0;
    // Issuer side: the account already issues this currency to the peer, or it authorises/freezes.
    const asIssuer = this.lines.get(lineKey(account.address, peer, currency));
    const asHolder = this.lines.get(lineKey(peer, account.address, currency));
    if (setAuth || freeze || unfreeze || (asIssuer && !asHolder)) {
      if (value !== 0n) notImpl('trust lines where both sides extend a limit');
      if (setAuth && (account.flags & ACCOUNT_ROOT_FLAGS.lsfRequireAuth) === 0) fail('tefNO_AUTH_REQUIRED');
      if (freeze && (account.flags & ACCOUNT_ROOT_FLAGS.lsfNoFreeze) !== 0) fail('tecNO_PERMISSION');
      commit();
      const line = asIssuer ?? { issuer: account.address, holder: peer, currency, balance: 0n, limit: 0n, authorized: false, frozen: false };
      if (!asIssuer) this.lines.set(lineKey(account.address, peer, currency), line);
      if (setAuth) line.authorized = true;
      if (freeze) line.frozen = true;
      if (unfreeze) line.frozen = false;
      return 'tesSUCCESS';
    }
    if (asIssuer && asHolder) notImpl('trust lines in both directions');
    // Holder side: creates or changes the holder's limit toward the issuer.
    if (asHolder) {
      if (value < asHolder.balance) {
        // rippled allows lowering a limit below the balance; the devnet keeps it simple.
        notImpl('a trust limit below the current balance');
      }
      commit();
      asHolder.limit = value;
      return 'tesSUCCESS';
    }
    const owners = account.ownerCount + 1;
    if (account.balance - fee < this.reserve(owners)) fail('tecNO_LINE_INSUF_RESERVE');
    commit();
    account.ownerCount = owners;
    this.lines.set(lineKey(peer, account.address, currency), { issuer: peer, holder: account.address, currency, balance: 0n, limit: value, authorized: false, frozen: false });
    return 'tesSUCCESS';
  }

  private clawback(tx: Record<string, unknown>, issuer: AccountState, commit: () => void): string {
    const amount = tx['Amount'] as Record<string, string> | string | undefined;
    if (amount === undefined || typeof amount === 'string') return fail('temBAD_AMOUNT');
    if (amount['mpt_issuance_id'] !== undefined) {
      const holderAddr = tx['Holder'];
      if (typeof holderAddr !== 'string') return fail('temMALFORMED');
      if (holderAddr === issuer.address) fail('temMALFORMED');
      const value = BigInt(String(amount['value']));
      if (value <= 0n) fail('temBAD_AMOUNT');
      const issuance = this.issuances.get(String(amount['mpt_issuance_id']).toUpperCase());
      if (!issuance) return fail('tecOBJECT_NOT_FOUND');
      if (issuance.issuer !== issuer.address) fail('temMALFORMED');
      if ((issuance.flags & MPT_CAN_CLAWBACK) === 0) fail('tecNO_PERMISSION');
      if (!this.accounts.has(holderAddr)) fail('tecNO_DST');
      const token = this.mpToken(issuance.id, holderAddr);
      if (!token) return fail('tecOBJECT_NOT_FOUND');
      if (token.amount === 0n) fail('tecINSUFFICIENT_FUNDS');
      commit();
      const clawed = value < token.amount ? value : token.amount;
      token.amount -= clawed;
      issuance.outstanding -= clawed;
      return 'tesSUCCESS';
    }
    if (tx['Holder'] !== undefined) fail('temMALFORMED');
    // For an IOU the Amount's issuer field names the holder.
    const holderAddr = String(amount['issuer']);
    if (holderAddr === issuer.address) fail('temBAD_AMOUNT');
    const value = parseScaled(String(amount['value']), IOU_SCALE);
    if (value === null) return notImpl(`IOU value ${amount['value']} at this precision`);
    if (value <= 0n) fail('temBAD_AMOUNT');
    if ((issuer.flags & ACCOUNT_ROOT_FLAGS.lsfAllowTrustLineClawback) === 0 || (issuer.flags & ACCOUNT_ROOT_FLAGS.lsfNoFreeze) !== 0) fail('tecNO_PERMISSION');
    if (!this.accounts.has(holderAddr)) fail('terNO_ACCOUNT');
    const line = this.trustLine(holderAddr, issuer.address, String(amount['currency']));
    if (!line) return fail('tecNO_LINE');
    if (line.balance === 0n) fail('tecINSUFFICIENT_FUNDS');
    commit();
    line.balance -= value < line.balance ? value : line.balance;
    return 'tesSUCCESS';
  }

  private mptCreate(tx: Record<string, unknown>, account: AccountState, fee: bigint, commit: () => void): string {
    const flags = (Number(tx['Flags'] ?? 0) & ~TF_FULLY_CANONICAL) >>> 0;
    const transferFee = Number(tx['TransferFee'] ?? 0);
    if (transferFee > 50000) fail('temBAD_TRANSFER_FEE');
    if (transferFee > 0 && (flags & MPT_CAN_TRANSFER) === 0) fail('temMALFORMED');
    const scale = Number(tx['AssetScale'] ?? 0);
    if (scale > 19) fail('temMALFORMED');
    let maximum: bigint | null = null;
    if (tx['MaximumAmount'] !== undefined) {
      maximum = BigInt(String(tx['MaximumAmount']));
      if (maximum <= 0n || maximum > MAX_MPT) fail('temMALFORMED');
    }
    const metadata = tx['MPTokenMetadata'];
    if (metadata !== undefined && (String(metadata).length === 0 || String(metadata).length > 2048)) fail('temMALFORMED');
    const owners = account.ownerCount + 1;
    if (account.balance - fee < this.reserve(owners)) fail('tecINSUFFICIENT_RESERVE');
    const sequence = Number(tx['Sequence']);
    commit();
    account.ownerCount = owners;
    const id = mptIssuanceId(sequence, account.address);
    this.issuances.set(id, {
      id,
      issuer: account.address,
      sequence,
      assetScale: scale,
      flags,
      maximumAmount: maximum,
      transferFee,
      metadata: metadata === undefined ? null : String(metadata),
      outstanding: 0n,
    });
    return 'tesSUCCESS';
  }

  private mptAuthorize(tx: Record<string, unknown>, account: AccountState, fee: bigint, commit: () => void): string {
    const id = String(tx['MPTokenIssuanceID'] ?? '').toUpperCase();
    const holder = tx['Holder'];
    const unauthorize = ((Number(tx['Flags'] ?? 0) >>> 0) & TF_MPT_UNAUTHORIZE) !== 0;
    if (holder === account.address) fail('temMALFORMED');
    const issuance = this.issuances.get(id);
    if (!issuance) return fail('tecOBJECT_NOT_FOUND');
    if (typeof holder === 'string') {
      // The issuer authorises (or unauthorises) a holder's MPToken.
      if (issuance.issuer !== account.address) fail('tecNO_PERMISSION');
      if ((issuance.flags & MPT_REQUIRE_AUTH) === 0) fail('tecNO_AUTH');
      if (!this.accounts.has(holder)) fail('tecNO_DST');
      const token = this.mpToken(id, holder);
      if (!token) return fail('tecOBJECT_NOT_FOUND');
      commit();
      token.authorized = !unauthorize;
      return 'tesSUCCESS';
    }
    if (issuance.issuer === account.address) fail('tecNO_PERMISSION');
    const existing = this.mpToken(id, account.address);
    if (unauthorize) {
      if (!existing) return fail('tecOBJECT_NOT_FOUND');
      if (existing.amount !== 0n) fail('tecHAS_OBLIGATIONS');
      commit();
      this.tokens.delete(`${id}|${account.address}`);
      account.ownerCount -= 1;
      return 'tesSUCCESS';
    }
    if (existing) fail('tecDUPLICATE');
    const owners = account.ownerCount + 1;
    if (account.balance - fee < this.reserve(owners)) fail('tecINSUFFICIENT_RESERVE');
    commit();
    account.ownerCount = owners;
    this.tokens.set(`${id}|${account.address}`, { id, holder: account.address, amount: 0n, authorized: false });
    return 'tesSUCCESS';
  }
}

function copyAccount(a: AccountState): AccountState {
  return { ...a, ...(a.signerList ? { signerList: { quorum: a.signerList.quorum, entries: a.signerList.entries.map((e) => ({ ...e })) } } : {}) };
}

function genesisEdit(
  accounts: Map<string, AccountState>,
  address: string,
  drops: bigint,
  setup: { signers?: SignerEntry[]; quorum?: number; flags?: number },
  openIndex: number,
): AccountState {
  let acct = accounts.get(address);
  if (!acct) {
    acct = { address, balance: 0n, sequence: openIndex, flags: 0, ownerCount: 0 };
    accounts.set(address, acct);
  }
  acct.balance += drops;
  if (setup.flags !== undefined) acct.flags |= setup.flags;
  if (setup.signers) {
    if (!acct.signerList) acct.ownerCount += 1;
    acct.signerList = { quorum: setup.quorum ?? 1, entries: [...setup.signers] };
  }
  return acct;
}

export { engineMessage, engineResultCode, formatScaled };
