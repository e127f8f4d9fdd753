/**
 * @module devnet/ledger
 * The devnet's ledger: accounts, native and credit balances, trust lines and their flags, signers
 * and thresholds, sequence numbers, ledger closes and time bounds. It validates a submitted
 * envelope the way stellar-core does (time bounds, fee, source, sequence, the source's low
 * threshold, each operation's own threshold, unused signatures), verifies every decorated signature
 * itself (hint, then the ed25519 bytes, with node:crypto: not the driver's verifier), and answers
 * with a real TransactionResult XDR. Anything it does not model fails closed (op_not_supported /
 * tx_not_supported), never a fake success.
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { Asset, Keypair, StrKey, Transaction, xdr } from '@stellar/stellar-base';
import { toDecimal } from '../amounts.js';
import { ACCOUNT_FLAGS, ACCOUNT_FLAGS_MASK, INT64_MAX, STELLAR_NETWORKS, TRUSTLINE_FLAGS, type ThresholdClass } from '../constants.js';
import { hex } from '../payload.js';
import { resultCodesOf, type ResultCodes } from '../result-codes.js';

export interface TrustLine {
  code: string;
  issuer: string;
  balance: bigint;
  limit: bigint;
  flags: number;
  lastModified: number;
}

export interface LedgerAccount {
  id: string;
  balance: bigint;
  seq: bigint;
  seqLedger: number;
  seqTime: number;
  subentries: number;
  masterWeight: number;
  thresholds: { low: number; med: number; high: number };
  /** Non-master signers, ed25519 only, sorted by key bytes as stellar-core keeps them. */
  signers: { key: string; weight: number }[];
  flags: number;
  homeDomain: string;
  lastModified: number;
  lines: Map<string, TrustLine>;
}

export interface TxRecord {
  hash: string;
  ledger: number;
  closedAt: number;
  successful: boolean;
  source: string;
  sequence: string;
  feeCharged: bigint;
  maxFee: bigint;
  operationCount: number;
  envelopeXdr: string;
  resultXdr: string;
  resultCodes: ResultCodes;
  memoType: string;
  memo: string | null;
  signatures: string[];
  minTime: string;
  maxTime: string | null;
  pagingToken: string;
}

export interface OpRecord {
  id: string;
  txHash: string;
  successful: boolean;
  createdAt: number;
  sourceAccount: string;
  type: string;
  typeI: number;
  fields: Record<string, unknown>;
  /** Accounts this operation touches (for /accounts/:id/operations). */
  accounts: string[];
}

export type SubmitReply =
  | { kind: 'applied'; record: TxRecord }
  | { kind: 'failed'; record: TxRecord }
  | { kind: 'rejected'; resultXdr: string; resultCodes: ResultCodes; envelopeXdr: string; hash: string | null }
  | { kind: 'malformed'; envelopeXdr: string; reason: string };

export interface LedgerOptions {
  /** Default `Standalone Network ; February 2017` (stellar:local). */
  networkPassphrase?: string;
  /** First ledger number. Default 2_600_000, so new sequences (ledger << 32) exceed 2^53. */
  startLedger?: number;
  /** Base fee per operation in stroops. Default 100. */
  baseFee?: number;
  /** Base reserve in stroops. Default 5_000_000 (0.5 XLM). */
  baseReserve?: bigint;
  /** Unix seconds. Default the wall clock. */
  clock?: () => number;
  /** What friendbot gives a new account, stroops. Default 10_000 XLM. */
  friendbotAmount?: bigint;
}

const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

function verifyEd25519Node(publicKey: Buffer, message: Buffer, signature: Buffer): boolean {
  if (signature.length !== 64) return false;
  try {
    return nodeVerify(null, message, createPublicKey({ key: Buffer.concat([SPKI_ED25519, publicKey]), format: 'der', type: 'spki' }), signature);
  } catch {
    return false;
  }
}

/** stellar-core's SignatureChecker: signatures in envelope order, each used by at most one signer. */
export class SignatureChecker {
  readonly used: boolean[];
  constructor(
    private readonly hash: Buffer,
    private readonly signatures: { hint: Buffer; signature: Buffer }[],
  ) {
    this.used = signatures.map(() => false);
  }

  check(account: LedgerAccount, needed: number): boolean {
    const signers: { key: Buffer; weight: number }[] = [];
    if (account.masterWeight > 0) signers.push({ key: StrKey.decodeEd25519PublicKey(account.id), weight: account.masterWeight });
    for (const s of account.signers) signers.push({ key: StrKey.decodeEd25519PublicKey(s.key), weight: s.weight });
    let total = 0;
    for (let i = 0; i < this.signatures.length; i++) {
      const sig = this.signatures[i] as { hint: Buffer; signature: Buffer };
      for (let j = 0; j < signers.length; j++) {
        const signer = signers[j] as { key: Buffer; weight: number };
        if (!signer.key.subarray(28).equals(sig.hint)) continue; // the hint first: cheap
        if (!verifyEd25519Node(signer.key, this.hash, sig.signature)) continue; // then the bytes
        this.used[i] = true;
        total += Math.min(signer.weight, 255);
        if (total >= needed) return true;
        signers.splice(j, 1);
        break;
      }
    }
    return false;
  }

  allUsed(): boolean {
    return this.used.every(Boolean);
  }
}

function accountIdOf(pk: xdr.PublicKey): string {
  return StrKey.encodeEd25519PublicKey(pk.ed25519());
}

function muxedBase(m: xdr.MuxedAccount): string {
  return m.switch().name === 'keyTypeMuxedEd25519'
    ? StrKey.encodeEd25519PublicKey(m.med25519().ed25519())
    : StrKey.encodeEd25519PublicKey(m.ed25519());
}

function int64(v: { toString(): string }): bigint {
  return BigInt(v.toString());
}

function lineKey(code: string, issuer: string): string {
  return `${code}:${issuer}`;
}

const RESULT_UNION: Record<string, string> = {
  createAccount: 'CreateAccountResult',
  payment: 'PaymentResult',
  setOptions: 'SetOptionsResult',
  changeTrust: 'ChangeTrustResult',
  setTrustLineFlags: 'SetTrustLineFlagsResult',
  clawback: 'ClawbackResult',
  accountMerge: 'AccountMergeResult',
};

/** Threshold each modelled operation needs, as stellar-core's getThresholdLevel says. */
function thresholdOf(op: xdr.Operation): ThresholdClass {
  const body = op.body();
  switch (body.switch().name) {
    case 'setTrustLineFlags':
    case 'allowTrust':
    case 'bumpSequence':
      return 'low';
    case 'accountMerge':
      return 'high';
    case 'setOptions': {
      const o = body.setOptionsOp();
      const touchesAuth = o.masterWeight() != null || o.lowThreshold() != null || o.medThreshold() != null || o.highThreshold() != null || o.signer() != null;
      return touchesAuth ? 'high' : 'medium';
    }
    default:
      return 'medium';
  }
}

class OpFailure extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/**
 * The in-process ledger the devnet serves. Direct reads (`account`, `transaction`, …) are what
 * tests use as an independent reader: they never go through a driver.
 */
export class StellarLedger {
  readonly networkPassphrase: string;
  readonly baseFee: number;
  readonly baseReserve: bigint;
  readonly friendbotAmount: bigint;
  readonly clock: () => number;
  readonly root: Keypair;
  ledger: number;
  closedAt: number;
  readonly accounts = new Map<string, LedgerAccount>();
  readonly txs = new Map<string, TxRecord>();
  readonly txOrder: string[] = [];
  readonly ops: OpRecord[] = [];

  constructor(options: LedgerOptions = {}) {
    this.networkPassphrase = options.networkPassphrase ?? STELLAR_NETWORKS['stellar:local'];
    this.baseFee = options.baseFee ?? 100;
    this.baseReserve = options.baseReserve ?? 5_000_000n;
    this.friendbotAmount = options.friendbotAmount ?? 10_000n * 10_000_000n;
    this.clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
    this.ledger = options.startLedger ?? 2_600_000;
    this.closedAt = this.clock();
    // The network's root account holds the initial supply, as stellar-core derives it from the passphrase.
    this.root = Keypair.master(this.networkPassphrase);
    this.accounts.set(this.root.publicKey(), this.newAccount(this.root.publicKey(), 100_000_000_000n * 10_000_000n, 0n));
  }

  private newAccount(id: string, balance: bigint, seq: bigint): LedgerAccount {
    return {
      id,
      balance,
      seq,
      seqLedger: this.ledger,
      seqTime: this.closedAt,
      subentries: 0,
      masterWeight: 1,
      thresholds: { low: 0, med: 0, high: 0 },
      signers: [],
      flags: 0,
      homeDomain: '',
      lastModified: this.ledger,
      lines: new Map(),
    };
  }

  minBalance(a: LedgerAccount): bigint {
    return (2n + BigInt(a.subentries)) * this.baseReserve;
  }

  account(id: string): LedgerAccount | undefined {
    return this.accounts.get(id);
  }

  nativeBalance(id: string): bigint {
    return this.accounts.get(id)?.balance ?? 0n;
  }

  trustLine(id: string, code: string, issuer: string): TrustLine | undefined {
    return this.accounts.get(id)?.lines.get(lineKey(code, issuer));
  }

  transaction(hash: string): TxRecord | undefined {
    return this.txs.get(hash);
  }

  /** Funds a new account from the root through a real, root-signed createAccount transaction. */
  friendbot(address: string): SubmitReply {
    const root = this.accounts.get(this.root.publicKey()) as LedgerAccount;
    // Built with the XDR types directly so the devnet does not depend on the driver's builder.
    const op = new xdr.Operation({
      sourceAccount: null,
      body: xdr.OperationBody.createAccount(
        new xdr.CreateAccountOp({ destination: xdr.PublicKey.publicKeyTypeEd25519(StrKey.decodeEd25519PublicKey(address)), startingBalance: new xdr.Int64(this.friendbotAmount.toString()) }),
      ),
    });
    const tx = new xdr.Transaction({
      sourceAccount: xdr.MuxedAccount.keyTypeEd25519(StrKey.decodeEd25519PublicKey(root.id)),
      fee: this.baseFee,
      seqNum: new xdr.Int64((root.seq + 1n).toString()),
      cond: xdr.Preconditions.precondNone(),
      memo: xdr.Memo.memoNone(),
      operations: [op],
      ext: new xdr.TransactionExt(0),
    });
    const env = xdr.TransactionEnvelope.envelopeTypeTx(new xdr.TransactionV1Envelope({ tx, signatures: [] }));
    const t = new Transaction(env, this.networkPassphrase);
    t.sign(this.root);
    return this.submit(t.toEnvelope().toXDR('base64'));
  }

  /** Validates and, when valid, applies one envelope in a ledger of its own. */
  submit(envelopeXdr: string): SubmitReply {
    let env: xdr.TransactionEnvelope;
    try {
      env = xdr.TransactionEnvelope.fromXDR(envelopeXdr, 'base64');
    } catch {
      return { kind: 'malformed', envelopeXdr, reason: 'not a TransactionEnvelope' };
    }
    const type = env.switch().name;
    if (type === 'envelopeTypeTxFeeBump') return this.reject(envelopeXdr, null, 0n, 'txNotSupported');
    if (type !== 'envelopeTypeTx' && type !== 'envelopeTypeTxV0') return { kind: 'malformed', envelopeXdr, reason: `envelope type ${type}` };
    let t: Transaction;
    try {
      t = new Transaction(env, this.networkPassphrase);
    } catch {
      return { kind: 'malformed', envelopeXdr, reason: 'undecodable transaction' };
    }
    const hashBuf = Buffer.from(t.hash());
    const hash = hex(hashBuf);
    const existing = this.txs.get(hash);
    if (existing) return { kind: existing.successful ? 'applied' : 'failed', record: existing };

    const inner = type === 'envelopeTypeTx' ? env.v1().tx() : env.v0().tx();
    const ops = inner.operations();
    const maxFee = BigInt(inner.fee());
    const feeCharged = BigInt(this.baseFee) * BigInt(Math.max(ops.length, 1));
    const rejectTx = (code: string) => this.reject(envelopeXdr, hash, maxFee, code);

    // commonValidPreSeqNum
    if (ops.length === 0) return rejectTx('txMissingOperation');
    if (type === 'envelopeTypeTx') {
      const cond = env.v1().tx().cond();
      if (cond.switch().name === 'precondV2') {
        const v2 = cond.v2();
        if (v2.ledgerBounds() || v2.minSeqNum() || int64(v2.minSeqAge()) !== 0n || v2.minSeqLedgerGap() !== 0 || v2.extraSigners().length > 0) {
          return rejectTx('txNotSupported'); // ledger bounds, min-seq and extra signers are not modelled
        }
      }
    }
    const now = this.clock();
    const tb = t.timeBounds;
    if (tb) {
      if (BigInt(tb.minTime) > BigInt(now)) return rejectTx('txTooEarly');
      if (BigInt(tb.maxTime) !== 0n && BigInt(tb.maxTime) < BigInt(now)) return rejectTx('txTooLate');
    }
    if (maxFee < feeCharged) return rejectTx('txInsufficientFee');
    const sourceId = StrKey.isValidMed25519PublicKey(t.source) ? muxedBase(type === 'envelopeTypeTx' ? env.v1().tx().sourceAccount() : xdr.MuxedAccount.keyTypeEd25519(env.v0().tx().sourceAccountEd25519())) : t.source;
    const source = this.accounts.get(sourceId);
    if (!source) return rejectTx('txNoAccount');
    // commonValid
    if (BigInt(t.sequence) !== source.seq + 1n) return rejectTx('txBadSeq');
    const checker = new SignatureChecker(
      hashBuf,
      t.signatures.map((s) => ({ hint: Buffer.from(s.hint()), signature: Buffer.from(s.signature()) })),
    );
    if (!checker.check(source, source.thresholds.low)) return rejectTx('txBadAuth');
    if (source.balance - this.minBalance(source) < feeCharged) return rejectTx('txInsufficientBalance');

    // each operation's checkValid: its source exists, its threshold is met, it is well formed
    const opResults: string[] = ops.map((op) => `${op.body().switch().name}Success`);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i] as xdr.Operation;
      const opSourceId = op.sourceAccount() ? muxedBase(op.sourceAccount() as xdr.MuxedAccount) : sourceId;
      const opSource = this.accounts.get(opSourceId);
      let failure: string | null = null;
      if (!opSource) {
        // stellar-core's checkSignatureNoAccount: an operation may name a source account that an
        // earlier operation of the same transaction creates (sponsored or funded creation); it then
        // needs that account key's own signature, and fails as op_no_account at apply if the
        // account still does not exist.
        if (!op.sourceAccount()) failure = 'opNoAccount';
        else if (!checker.check(this.newAccount(opSourceId, 0n, 0n), 0)) failure = 'opBadAuth';
        else if (!RESULT_UNION[op.body().switch().name]) failure = 'opNotSupported';
        else failure = this.checkValid(op, opSourceId);
      } else {
        const level = thresholdOf(op);
        const needed = level === 'low' ? opSource.thresholds.low : level === 'medium' ? opSource.thresholds.med : opSource.thresholds.high;
        if (!checker.check(opSource, needed)) failure = 'opBadAuth';
        else if (!RESULT_UNION[op.body().switch().name]) failure = 'opNotSupported';
        else failure = this.checkValid(op, opSourceId);
      }
      if (failure) {
        opResults[i] = failure;
        return this.reject(envelopeXdr, hash, maxFee, 'txFailed', ops, opResults);
      }
    }
    if (!checker.allUsed()) return rejectTx('txBadAuthExtra');

    // Valid: close a ledger, charge the fee and consume the sequence whatever the operations do.
    this.ledger += 1;
    this.closedAt = now;
    source.balance -= feeCharged;
    source.seq += 1n;
    source.seqLedger = this.ledger;
    source.seqTime = now;
    source.lastModified = this.ledger;
    const scratch = cloneAccounts(this.accounts);
    let success = true;
    const opRecords: OpRecord[] = [];
    const mergeBalances = new Map<number, bigint>();
    const createdAt = now;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i] as xdr.Operation;
      const opSourceId = op.sourceAccount() ? muxedBase(op.sourceAccount() as xdr.MuxedAccount) : sourceId;
      try {
        if (!scratch.has(opSourceId)) throw new OpFailure('opNoAccount');
        const merging = op.body().switch().name === 'accountMerge' ? scratch.get(opSourceId)?.balance : undefined;
        const rec = this.apply(scratch, op, opSourceId);
        if (merging !== undefined) mergeBalances.set(i, merging);
        opResults[i] = `${op.body().switch().name}Success`;
        opRecords.push({ ...rec, id: '', txHash: hash, successful: true, createdAt, sourceAccount: opSourceId });
      } catch (e) {
        if (!(e instanceof OpFailure)) throw e;
        opResults[i] = e.code;
        success = false;
      }
    }
    if (success) {
      this.accounts.clear();
      for (const [k, v] of scratch) this.accounts.set(k, v);
    }
    const result = this.result(feeCharged, success ? 'txSuccess' : 'txFailed', ops, opResults, mergeBalances);
    const memo = t.memo;
    const memoType = memo.type;
    const base = (BigInt(this.ledger) << 32n) | (1n << 12n);
    const record: TxRecord = {
      hash,
      ledger: this.ledger,
      closedAt: now,
      successful: success,
      source: sourceId,
      sequence: t.sequence,
      feeCharged,
      maxFee,
      operationCount: ops.length,
      envelopeXdr,
      resultXdr: result.toXDR('base64'),
      resultCodes: resultCodesOf(result),
      memoType,
      memo: memoType === 'text' ? Buffer.from(memo.value as Buffer).toString('utf8') : memo.value == null ? null : String(memo.value),
      signatures: t.signatures.map((s) => Buffer.from(s.signature()).toString('base64')),
      minTime: tb?.minTime ?? '0',
      maxTime: tb && tb.maxTime !== '0' ? tb.maxTime : null,
      pagingToken: base.toString(),
    };
    this.txs.set(hash, record);
    this.txOrder.push(hash);
    opRecords.forEach((r, i) => {
      r.id = (base + BigInt(i + 1)).toString();
      r.successful = success;
      this.ops.push(r);
    });
    return { kind: success ? 'applied' : 'failed', record };
  }

  private reject(envelopeXdr: string, hash: string | null, fee: bigint, code: string, ops: xdr.Operation[] = [], opResults: string[] = []): SubmitReply {
    const result = this.result(fee, code, ops, opResults);
    return { kind: 'rejected', resultXdr: result.toXDR('base64'), resultCodes: resultCodesOf(result), envelopeXdr, hash };
  }

  private result(fee: bigint, code: string, ops: xdr.Operation[], opResults: string[], mergeBalances: Map<number, bigint> = new Map()): xdr.TransactionResult {
    const results = () =>
      ops.map((op, i) => {
        const r = opResults[i] as string;
        if (r === 'opBadAuth' || r === 'opNoAccount' || r === 'opNotSupported') return (xdr.OperationResult as unknown as Record<string, () => xdr.OperationResult>)[r]!();
        const name = op.body().switch().name;
        const union = (xdr as unknown as Record<string, Record<string, (v?: unknown) => unknown>>)[RESULT_UNION[name] as string] as Record<string, (v?: unknown) => unknown>;
        // accountMergeSuccess is the one modelled success arm that carries a value: the merged balance.
        const arm = r === 'accountMergeSuccess' ? union[r]!(new xdr.Int64((mergeBalances.get(i) ?? 0n).toString())) : union[r]!();
        const tr = (xdr.OperationResultTr as unknown as Record<string, (v: unknown) => xdr.OperationResultTr>)[name]!(arm);
        return xdr.OperationResult.opInner(tr);
      });
    const rr = xdr.TransactionResultResult as unknown as Record<string, (v?: unknown) => xdr.TransactionResultResult>;
    const value = code === 'txSuccess' || code === 'txFailed' ? rr[code]!(results()) : rr[code]!();
    return new xdr.TransactionResult({ feeCharged: new xdr.Int64(fee.toString()), result: value, ext: new xdr.TransactionResultExt(0) });
  }

  /** doCheckValid: what is malformed regardless of ledger state. Returns a result code or null. */
  private checkValid(op: xdr.Operation, sourceId: string): string | null {
    const body = op.body();
    switch (body.switch().name) {
      case 'createAccount': {
        const o = body.createAccountOp();
        if (int64(o.startingBalance()) < 0n || accountIdOf(o.destination()) === sourceId) return 'createAccountMalformed';
        return null;
      }
      case 'payment': {
        const o = body.paymentOp();
        if (int64(o.amount()) <= 0n || !validAsset(o.asset())) return 'paymentMalformed';
        return null;
      }
      case 'setOptions': {
        const o = body.setOptionsOp();
        const set = o.setFlags() ?? 0;
        const clear = o.clearFlags() ?? 0;
        if ((set & clear) !== 0) return 'setOptionsBadFlags';
        if (((set | clear) & ~ACCOUNT_FLAGS_MASK) !== 0) return 'setOptionsUnknownFlag';
        for (const t of [o.masterWeight(), o.lowThreshold(), o.medThreshold(), o.highThreshold()]) if (t != null && t > 255) return 'setOptionsThresholdOutOfRange';
        const signer = o.signer();
        if (signer) {
          if (signer.key().switch().name !== 'signerKeyTypeEd25519') return 'opNotSupported';
          if (StrKey.encodeEd25519PublicKey(signer.key().ed25519()) === sourceId || signer.weight() > 255) return 'setOptionsBadSigner';
        }
        if (o.inflationDest()) return 'opNotSupported';
        return null;
      }
      case 'changeTrust': {
        const o = body.changeTrustOp();
        const line = o.line();
        if (line.switch().name === 'assetTypePoolShare') return 'opNotSupported';
        if (line.switch().name === 'assetTypeNative' || int64(o.limit()) < 0n) return 'changeTrustMalformed';
        const asset = Asset.fromOperation(line as unknown as xdr.Asset);
        if (asset.getIssuer() === sourceId) return 'changeTrustMalformed';
        return null;
      }
      case 'setTrustLineFlags': {
        const o = body.setTrustLineFlagsOp();
        const set = o.setFlags();
        const clear = o.clearFlags();
        const mask = TRUSTLINE_FLAGS.authorized | TRUSTLINE_FLAGS.authorized_to_maintain_liabilities | TRUSTLINE_FLAGS.clawback_enabled;
        if (o.asset().switch().name === 'assetTypeNative') return 'setTrustLineFlagsMalformed';
        const asset = Asset.fromOperation(o.asset());
        if (asset.getIssuer() !== sourceId || accountIdOf(o.trustor()) === sourceId) return 'setTrustLineFlagsMalformed';
        if ((set & clear) !== 0 || ((set | clear) & ~mask) !== 0 || (set & TRUSTLINE_FLAGS.clawback_enabled) !== 0) return 'setTrustLineFlagsMalformed';
        if ((set & TRUSTLINE_FLAGS.authorized) !== 0 && (set & TRUSTLINE_FLAGS.authorized_to_maintain_liabilities) !== 0) return 'setTrustLineFlagsMalformed';
        return null;
      }
      case 'accountMerge':
        return muxedBase(body.destination()) === sourceId ? 'accountMergeMalformed' : null;
      case 'clawback': {
        const o = body.clawbackOp();
        if (int64(o.amount()) <= 0n || o.asset().switch().name === 'assetTypeNative') return 'clawbackMalformed';
        const asset = Asset.fromOperation(o.asset());
        if (asset.getIssuer() !== sourceId || muxedBase(o.from()) === sourceId) return 'clawbackMalformed';
        return null;
      }
      default:
        return 'opNotSupported';
    }
  }

  /** doApply on the scratch state; throws OpFailure with the result code. */
  private apply(state: Map<string, LedgerAccount>, op: xdr.Operation, sourceId: string): Omit<OpRecord, 'id' | 'txHash' | 'successful' | 'createdAt' | 'sourceAccount'> {
    const body = op.body();
    const source = state.get(sourceId) as LedgerAccount;
    const touch = (a: LedgerAccount) => {
      a.lastModified = this.ledger;
    };
    switch (body.switch().name) {
      case 'createAccount': {
        const o = body.createAccountOp();
        const dest = accountIdOf(o.destination());
        const amount = int64(o.startingBalance());
        if (state.has(dest)) throw new OpFailure('createAccountAlreadyExist');
        if (amount < 2n * this.baseReserve) throw new OpFailure('createAccountLowReserve');
        if (source.balance - this.minBalance(source) < amount) throw new OpFailure('createAccountUnderfunded');
        source.balance -= amount;
        touch(source);
        state.set(dest, this.newAccount(dest, amount, BigInt(this.ledger) << 32n));
        return { type: 'create_account', typeI: 0, accounts: [sourceId, dest], fields: { starting_balance: toDecimal(amount), funder: sourceId, account: dest } };
      }
      case 'payment': {
        const o = body.paymentOp();
        const destId = muxedBase(o.destination());
        const amount = int64(o.amount());
        const asset = Asset.fromOperation(o.asset());
        const dest = state.get(destId);
        if (asset.isNative()) {
          if (!dest) throw new OpFailure('paymentNoDestination');
          if (dest.balance + amount > INT64_MAX) throw new OpFailure('paymentLineFull');
          if (source.balance - this.minBalance(source) < amount) throw new OpFailure('paymentUnderfunded');
          if (destId !== sourceId) {
            source.balance -= amount;
            dest.balance += amount;
          }
          touch(source);
          touch(dest);
        } else {
          const issuer = asset.getIssuer();
          const key = lineKey(asset.getCode(), issuer);
          // Destination first, then source, as stellar-core's path payment does.
          if (destId !== issuer) {
            if (!dest) throw new OpFailure('paymentNoDestination');
            const line = dest.lines.get(key);
            if (!line) throw new OpFailure('paymentNoTrust');
            if ((line.flags & TRUSTLINE_FLAGS.authorized) === 0) throw new OpFailure('paymentNotAuthorized');
            if (line.balance + amount > line.limit) throw new OpFailure('paymentLineFull');
          }
          if (sourceId !== issuer) {
            const line = source.lines.get(key);
            if (!line) throw new OpFailure('paymentSrcNoTrust');
            if ((line.flags & TRUSTLINE_FLAGS.authorized) === 0) throw new OpFailure('paymentSrcNotAuthorized');
            if (line.balance < amount) throw new OpFailure('paymentUnderfunded');
            line.balance -= amount;
            line.lastModified = this.ledger;
          }
          if (destId !== issuer) {
            const line = (dest as LedgerAccount).lines.get(key) as TrustLine;
            line.balance += amount;
            line.lastModified = this.ledger;
          }
        }
        return {
          type: 'payment',
          typeI: 1,
          accounts: [sourceId, destId],
          fields: { ...assetFields(asset), from: sourceId, to: destId, amount: toDecimal(amount) },
        };
      }
      case 'setOptions': {
        const o = body.setOptionsOp();
        const set = o.setFlags() ?? 0;
        const clear = o.clearFlags() ?? 0;
        const fields: Record<string, unknown> = {};
        if (set !== 0 || clear !== 0) {
          const authBits = ACCOUNT_FLAGS_MASK;
          if ((source.flags & ACCOUNT_FLAGS.auth_immutable) !== 0 && ((set | clear) & authBits) !== 0) throw new OpFailure('setOptionsCantChange');
          const next = (source.flags & ~clear) | set;
          if ((next & ACCOUNT_FLAGS.auth_clawback_enabled) !== 0 && (next & ACCOUNT_FLAGS.auth_revocable) === 0) throw new OpFailure('setOptionsAuthRevocableRequired');
          source.flags = next;
          if (set) Object.assign(fields, { set_flags: bits(set), set_flags_s: bits(set).map(accountFlagName) });
          if (clear) Object.assign(fields, { clear_flags: bits(clear), clear_flags_s: bits(clear).map(accountFlagName) });
        }
        if (o.masterWeight() != null) source.masterWeight = fields['master_key_weight'] = o.masterWeight() as number;
        if (o.lowThreshold() != null) source.thresholds.low = fields['low_threshold'] = o.lowThreshold() as number;
        if (o.medThreshold() != null) source.thresholds.med = fields['med_threshold'] = o.medThreshold() as number;
        if (o.highThreshold() != null) source.thresholds.high = fields['high_threshold'] = o.highThreshold() as number;
        if (o.homeDomain() != null) source.homeDomain = fields['home_domain'] = Buffer.from(o.homeDomain() as Buffer).toString('utf8');
        const signer = o.signer();
        if (signer) {
          const key = StrKey.encodeEd25519PublicKey(signer.key().ed25519());
          const weight = signer.weight();
          const idx = source.signers.findIndex((s) => s.key === key);
          if (weight === 0) {
            if (idx >= 0) {
              source.signers.splice(idx, 1);
              source.subentries -= 1;
            }
          } else if (idx >= 0) {
            (source.signers[idx] as { weight: number }).weight = weight;
          } else {
            if (source.signers.length >= 20) throw new OpFailure('setOptionsTooManySigners');
            if (source.balance < (3n + BigInt(source.subentries)) * this.baseReserve) throw new OpFailure('setOptionsLowReserve');
            source.signers.push({ key, weight });
            source.signers.sort((a, b) => Buffer.compare(StrKey.decodeEd25519PublicKey(a.key), StrKey.decodeEd25519PublicKey(b.key)));
            source.subentries += 1;
          }
          Object.assign(fields, { signer_key: key, signer_weight: weight });
        }
        touch(source);
        return { type: 'set_options', typeI: 5, accounts: [sourceId], fields };
      }
      case 'changeTrust': {
        const o = body.changeTrustOp();
        const asset = Asset.fromOperation(o.line() as unknown as xdr.Asset);
        const limit = int64(o.limit());
        const key = lineKey(asset.getCode(), asset.getIssuer());
        const existing = source.lines.get(key);
        if (existing) {
          if (limit === 0n) {
            if (existing.balance !== 0n) throw new OpFailure('changeTrustInvalidLimit');
            source.lines.delete(key);
            source.subentries -= 1;
          } else {
            if (limit < existing.balance) throw new OpFailure('changeTrustInvalidLimit');
            existing.limit = limit;
            existing.lastModified = this.ledger;
          }
        } else {
          if (limit === 0n) throw new OpFailure('changeTrustInvalidLimit');
          const issuer = state.get(asset.getIssuer());
          if (!issuer) throw new OpFailure('changeTrustNoIssuer');
          if (source.balance < (3n + BigInt(source.subentries)) * this.baseReserve) throw new OpFailure('changeTrustLowReserve');
          let flags = 0;
          if ((issuer.flags & ACCOUNT_FLAGS.auth_required) === 0) flags |= TRUSTLINE_FLAGS.authorized;
          if ((issuer.flags & ACCOUNT_FLAGS.auth_clawback_enabled) !== 0) flags |= TRUSTLINE_FLAGS.clawback_enabled;
          source.lines.set(key, { code: asset.getCode(), issuer: asset.getIssuer(), balance: 0n, limit, flags, lastModified: this.ledger });
          source.subentries += 1;
        }
        touch(source);
        return {
          type: 'change_trust',
          typeI: 6,
          accounts: [sourceId],
          fields: { ...assetFields(asset), limit: toDecimal(limit), trustee: asset.getIssuer(), trustor: sourceId },
        };
      }
      case 'setTrustLineFlags': {
        const o = body.setTrustLineFlagsOp();
        const asset = Asset.fromOperation(o.asset());
        const trustorId = accountIdOf(o.trustor());
        const line = state.get(trustorId)?.lines.get(lineKey(asset.getCode(), asset.getIssuer()));
        if (!line) throw new OpFailure('setTrustLineFlagsNoTrustLine');
        const next = (line.flags & ~o.clearFlags()) | o.setFlags();
        const authBits = TRUSTLINE_FLAGS.authorized | TRUSTLINE_FLAGS.authorized_to_maintain_liabilities;
        const lowers = (line.flags & TRUSTLINE_FLAGS.authorized) !== 0 ? (next & TRUSTLINE_FLAGS.authorized) === 0 : (line.flags & authBits) !== 0 && (next & authBits) === 0;
        if (lowers && (source.flags & ACCOUNT_FLAGS.auth_revocable) === 0) throw new OpFailure('setTrustLineFlagsCantRevoke');
        if ((next & authBits) === authBits) throw new OpFailure('setTrustLineFlagsInvalidState');
        line.flags = next;
        line.lastModified = this.ledger;
        const set = o.setFlags();
        const clear = o.clearFlags();
        return {
          type: 'set_trust_line_flags',
          typeI: 21,
          accounts: [sourceId, trustorId],
          fields: {
            ...assetFields(asset),
            trustor: trustorId,
            ...(set ? { set_flags: bits(set), set_flags_s: bits(set).map(trustFlagName) } : {}),
            ...(clear ? { clear_flags: bits(clear), clear_flags_s: bits(clear).map(trustFlagName) } : {}),
          },
        };
      }
      case 'clawback': {
        const o = body.clawbackOp();
        const asset = Asset.fromOperation(o.asset());
        const fromId = muxedBase(o.from());
        const amount = int64(o.amount());
        const line = state.get(fromId)?.lines.get(lineKey(asset.getCode(), asset.getIssuer()));
        if (!line) throw new OpFailure('clawbackNoTrust');
        if ((line.flags & TRUSTLINE_FLAGS.clawback_enabled) === 0) throw new OpFailure('clawbackNotClawbackEnabled');
        if (line.balance < amount) throw new OpFailure('clawbackUnderfunded');
        line.balance -= amount;
        line.lastModified = this.ledger;
        return { type: 'clawback', typeI: 19, accounts: [sourceId, fromId], fields: { ...assetFields(asset), from: fromId, amount: toDecimal(amount) } };
      }
      case 'accountMerge': {
        // stellar-core's MergeOpFrame: the destination must exist, the source must not be
        // AUTH_IMMUTABLE, must own no sub-entries (trust lines, signers…), and its sequence must
        // not be in the current ledger's range (it could be re-created and replay it).
        const destId = muxedBase(body.destination());
        const dest = state.get(destId);
        if (!dest) throw new OpFailure('accountMergeNoAccount');
        if ((source.flags & ACCOUNT_FLAGS.auth_immutable) !== 0) throw new OpFailure('accountMergeImmutableSet');
        if (source.subentries > 0) throw new OpFailure('accountMergeHasSubEntries');
        if (source.seq >= BigInt(this.ledger) << 32n) throw new OpFailure('accountMergeSeqnumTooFar');
        if (dest.balance + source.balance > INT64_MAX) throw new OpFailure('accountMergeDestFull');
        dest.balance += source.balance;
        touch(dest);
        state.delete(sourceId);
        return { type: 'account_merge', typeI: 8, accounts: [sourceId, destId], fields: { account: sourceId, into: destId } };
      }
      default:
        throw new OpFailure('opNotSupported');
    }
  }
}

function validAsset(a: xdr.Asset): boolean {
  try {
    Asset.fromOperation(a);
    return true;
  } catch {
    return false;
  }
}

function assetFields(asset: Asset): Record<string, string> {
  if (asset.isNative()) return { asset_type: 'native' };
  return { asset_type: asset.getAssetType(), asset_code: asset.getCode(), asset_issuer: asset.getIssuer() };
}

function bits(mask: number): number[] {
  const out: number[] = [];
  for (let b = 1; b <= mask; b <<= 1) if ((mask & b) !== 0) out.push(b);
  return out;
}

function accountFlagName(bit: number): string {
  return ({ 1: 'auth_required', 2: 'auth_revocable', 4: 'auth_immutable', 8: 'auth_clawback_enabled' } as Record<number, string>)[bit] ?? String(bit);
}

function trustFlagName(bit: number): string {
  return ({ 1: 'authorized', 2: 'authorized_to_maintain_liabilites', 4: 'clawback_enabled' } as Record<number, string>)[bit] ?? String(bit);
}

function cloneAccounts(src: Map<string, LedgerAccount>): Map<string, LedgerAccount> {
  const out = new Map<string, LedgerAccount>();
  for (const [k, a] of src) {
    out.set(k, {
      ...a,
      thresholds: { ...a.thresholds },
      signers: a.signers.map((s) => ({ ...s })),
      lines: new Map([...a.lines].map(([lk, l]) => [lk, { ...l }])),
    });
  }
  return out;
}
