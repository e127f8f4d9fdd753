/**
 * @module build
 * Intent -> one-operation Stellar transaction. Pure: the same intent, wallet and params give the same
 * XDR and so the same hash, in the control plane and in every signer that rebuilds it.
 */
import { Account, Asset, Memo, Operation, StrKey, TransactionBuilder, type xdr } from '@stellar/stellar-base';
import { RefusedError, ValidationError, type NormalizedIntent } from '@vault/sdk';
import { addressProblem, baseAccount } from './address.js';
import { formatAmount, toDecimal } from './amounts.js';
import {
  ACCOUNT_FLAGS_MASK,
  INT64_MAX,
  MEMO_TEXT_MAX_BYTES,
  NATIVE_SYMBOL,
  STELLAR_DECIMALS,
  STELLAR_TX_FORMAT,
  type ThresholdClass,
} from './constants.js';
import { hex, type StellarPayload } from './payload.js';

/** Operations the driver builds, with the threshold class stellar-core checks each against. */
export const OPERATION_THRESHOLDS = {
  transfer: 'medium', // payment
  issue: 'medium', // payment from the issuer
  authorize_holder: 'low', // setTrustLineFlags
  clawback: 'medium', // clawback
  // setOptions touching only flags: stellar-core's SetOptionsOpFrame::getThresholdLevel is HIGH only
  // when it changes the master weight, a threshold or a signer, MEDIUM otherwise.
  account_flags: 'medium',
} as const satisfies Record<string, ThresholdClass>;
export type StellarOperationKind = keyof typeof OPERATION_THRESHOLDS;
export const STELLAR_OPERATIONS = Object.keys(OPERATION_THRESHOLDS) as StellarOperationKind[];

/** An account's low / medium / high thresholds, as Horizon names them (0..255 each). */
export interface AccountThresholds {
  low: number;
  med: number;
  high: number;
}

/**
 * The signature weight a transaction whose operations (all sourced at the wallet) fall in
 * `classes` needs, as stellar-core decides it: the envelope needs the source account's low
 * threshold, and each operation the threshold of its class on its source account; the same
 * signatures count for every check. A threshold of 0 still needs one valid signature
 * (SignatureChecker only says yes once a signer matched), hence at least 1.
 */
export function neededWeight(classes: readonly ThresholdClass[], thresholds: AccountThresholds): number {
  let needed = Math.max(1, thresholds.low);
  for (const c of classes) needed = Math.max(needed, c === 'low' ? thresholds.low : c === 'medium' ? thresholds.med : thresholds.high);
  return needed;
}

const CODE_RE = /^[A-Za-z0-9]{1,12}$/;

function bad(path: string, message: string): never {
  throw new ValidationError('intent', [{ path, message }]);
}

export interface BuildArgs {
  intent: NormalizedIntent;
  chain: string;
  networkPassphrase: string;
  source: string;
  /** The transaction's sequence number (account sequence + 1). */
  sequence: bigint;
  baseFee: number;
  maxTime: number;
  /**
   * The weight each threshold class needs: the account's thresholds as the ledger holds them, or
   * (params without thresholds) the descriptor's quorum for every class.
   */
  thresholds: AccountThresholds;
}

/** The asset an intent names: null for native XLM, else a credit asset (CODE:ISSUER). */
export function assetOfIntent(intent: NormalizedIntent): Asset | null {
  const symbol = intent.asset_symbol;
  let issuer = intent.asset_issuer;
  if (issuer !== undefined && issuer.includes(':')) {
    const [code, account] = issuer.split(':');
    if (symbol !== undefined && code !== symbol) bad('asset_issuer', `asset_issuer ${issuer} names code ${code}, the intent says ${symbol}`);
    issuer = account;
  }
  if (issuer === undefined) {
    if (symbol === undefined) return null;
    if (symbol.toUpperCase() !== NATIVE_SYMBOL) bad('asset_issuer', `credit asset ${symbol} needs asset_issuer (the issuing G… account)`);
    if (intent.asset_decimals !== STELLAR_DECIMALS) bad('asset_decimals', `XLM amounts are stroops: asset_decimals must be ${STELLAR_DECIMALS}`);
    return null;
  }
  if (symbol === undefined) bad('asset_symbol', 'asset_symbol (the asset code) is required with asset_issuer');
  if (!CODE_RE.test(symbol)) bad('asset_symbol', 'a Stellar asset code is 1 to 12 letters or digits');
  if (symbol.toUpperCase() === NATIVE_SYMBOL && symbol === NATIVE_SYMBOL) bad('asset_symbol', 'XLM is the native asset and has no issuer');
  const problem = addressProblem(issuer, ['account']);
  if (problem) bad('asset_issuer', problem);
  if (intent.asset_decimals !== STELLAR_DECIMALS) {
    bad('asset_decimals', `every Stellar amount is an int64 of 10^-7 units: asset_decimals must be ${STELLAR_DECIMALS}`);
  }
  return new Asset(symbol, issuer);
}

function amountOf(intent: NormalizedIntent): bigint {
  const amount = BigInt(intent.amount);
  if (amount <= 0n) bad('amount', 'amount must be positive');
  if (amount > INT64_MAX) bad('amount', 'amount exceeds int64');
  return amount;
}

function destinationOf(intent: NormalizedIntent, source: string, allowMuxed: boolean): string {
  const problem = addressProblem(intent.destination, allowMuxed ? ['account', 'muxed'] : ['account']);
  if (problem) bad('destination', problem);
  if (baseAccount(intent.destination) === source) bad('destination', 'the destination is the wallet itself');
  return intent.destination;
}

function ownAsset(intent: NormalizedIntent, source: string, what: string): Asset {
  const asset = assetOfIntent(intent);
  if (asset === null) bad('asset_symbol', `${what} needs a credit asset (asset_symbol and asset_issuer), not XLM`);
  if (asset.getIssuer() !== source) bad('asset_issuer', `${what}: the wallet ${source} must be the issuer of ${asset.getCode()}, not ${asset.getIssuer()}`);
  return asset;
}

function assetLabel(asset: Asset | null): string {
  return asset === null ? NATIVE_SYMBOL : `${asset.getCode()}:${short(asset.getIssuer())}`;
}

export function short(address: string): string {
  return `${address.slice(0, 5)}…${address.slice(-4)}`;
}

function flagNames(mask: number): string {
  const names = ['auth_required', 'auth_revocable', 'auth_immutable', 'auth_clawback_enabled'];
  return names.filter((_, i) => (mask & (1 << i)) !== 0).join('|') || 'none';
}

/** Builds the transaction; returns the payload, its digest (tx hash) and a one-line summary. */
export function buildTransaction(args: BuildArgs): { payload: StellarPayload; digest: string; summary: string } {
  const { intent, source } = args;
  const kind = intent.operation.op;
  let op: xdr.Operation;
  let what: string;
  switch (intent.operation.op) {
    case 'transfer': {
      const asset = assetOfIntent(intent);
      const destination = destinationOf(intent, source, true);
      const amount = amountOf(intent);
      op = Operation.payment({ destination, asset: asset ?? Asset.native(), amount: toDecimal(amount) });
      what = `Payment ${formatAmount(amount)} ${assetLabel(asset)} ${short(source)} -> ${short(destination)}`;
      break;
    }
    case 'issue': {
      const asset = ownAsset(intent, source, 'issue');
      const destination = destinationOf(intent, source, true);
      const amount = amountOf(intent);
      op = Operation.payment({ destination, asset, amount: toDecimal(amount) });
      what = `Issue ${formatAmount(amount)} ${assetLabel(asset)} to ${short(destination)}`;
      break;
    }
    case 'authorize_holder': {
      const asset = ownAsset(intent, source, 'authorize_holder');
      const trustor = destinationOf(intent, source, false);
      const revoke = intent.operation.revoke;
      op = Operation.setTrustLineFlags({
        trustor,
        asset,
        flags: revoke ? { authorized: false, authorizedToMaintainLiabilities: false } : { authorized: true, authorizedToMaintainLiabilities: false },
      });
      what = `${revoke ? 'Revoke' : 'Authorize'} ${short(trustor)}'s trust line to ${assetLabel(asset)} (setTrustLineFlags)`;
      break;
    }
    case 'clawback': {
      const asset = ownAsset(intent, source, 'clawback');
      const from = destinationOf(intent, source, true);
      const amount = amountOf(intent);
      op = Operation.clawback({ from, asset, amount: toDecimal(amount) });
      what = `Clawback ${formatAmount(amount)} ${assetLabel(asset)} from ${short(from)}`;
      break;
    }
    case 'account_flags': {
      const set = intent.operation.set ?? 0;
      const clear = intent.operation.clear ?? 0;
      if ((set & ~ACCOUNT_FLAGS_MASK) !== 0) bad('operation.set', 'Stellar account flags are 0x1 auth_required, 0x2 auth_revocable, 0x4 auth_immutable, 0x8 auth_clawback_enabled');
      if ((clear & ~ACCOUNT_FLAGS_MASK) !== 0) bad('operation.clear', 'Stellar account flags are 0x1 auth_required, 0x2 auth_revocable, 0x4 auth_immutable, 0x8 auth_clawback_enabled');
      if ((set & clear) !== 0) bad('operation.clear', 'a flag cannot be both set and cleared');
      if (set === 0 && clear === 0) bad('operation.set', 'account_flags needs a non-zero set or clear mask');
      const opts: Parameters<typeof Operation.setOptions>[0] = {};
      if (set !== 0) opts.setFlags = set as never;
      if (clear !== 0) opts.clearFlags = clear as never;
      op = Operation.setOptions(opts);
      what = `Account flags of ${short(source)}: set ${flagNames(set)}, clear ${flagNames(clear)}`;
      break;
    }
    case 'mpt_create':
      throw new RefusedError('mpt_create is an XRPL operation: Stellar has no multi-purpose tokens (issue a credit asset with `issue`)', {
        data: { op: 'mpt_create', chain: args.chain },
      });
    case 'contract_call':
      throw new RefusedError('contract_call is not supported by @vault/driver-stellar (Soroban invocations are not modelled)', {
        data: { op: 'contract_call', chain: args.chain },
      });
    default:
      return bad('operation.op', `unknown operation ${(intent.operation as { op: string }).op}`);
  }

  let memo: Memo | undefined;
  if (intent.memo !== undefined) {
    const bytes = Buffer.byteLength(intent.memo, 'utf8');
    if (bytes > MEMO_TEXT_MAX_BYTES) bad('memo', `a Stellar text memo is at most ${MEMO_TEXT_MAX_BYTES} bytes of UTF-8, this one is ${bytes}`);
    memo = Memo.text(intent.memo);
  }
  if (args.sequence < 1n || args.sequence > INT64_MAX) {
    throw new ValidationError('params', [{ path: 'sequence', message: 'sequence must be within int64 and at least 1' }]);
  }
  if (!StrKey.isValidEd25519PublicKey(source)) {
    throw new ValidationError('wallet', [{ path: 'control.address', message: 'the wallet address must be a G… account' }]);
  }
  const builder = new TransactionBuilder(new Account(source, (args.sequence - 1n).toString()), {
    fee: String(args.baseFee),
    networkPassphrase: args.networkPassphrase,
    timebounds: { minTime: 0, maxTime: args.maxTime },
    ...(memo ? { memo } : {}),
  });
  const tx = builder.addOperation(op).build();
  const threshold: ThresholdClass = OPERATION_THRESHOLDS[kind as StellarOperationKind];
  const needed = neededWeight([threshold], args.thresholds);
  const payload: StellarPayload = {
    format: STELLAR_TX_FORMAT,
    chain: args.chain,
    network_passphrase: args.networkPassphrase,
    source,
    sequence: tx.sequence,
    op: kind,
    threshold,
    // Payload metadata, outside tx_xdr, so the digest (the transaction hash) does not cover it.
    // That is safe: it only tells the control plane when to stop collecting signatures (and how
    // many to attach); the ledger enforces the account's real thresholds whatever it says. A wrong
    // number makes assemble stop too early (the ledger then refuses with op_bad_auth / tx_bad_auth)
    // or wait for more weight than needed (attaching an unneeded signature is tx_bad_auth_extra); it
    // never makes the ledger accept what the account's own thresholds do not.
    needed_weight: needed,
    tx_xdr: tx.toEnvelope().toXDR('base64'),
  };
  const memoText = intent.memo !== undefined ? `, memo ${JSON.stringify(intent.memo)}` : '';
  return {
    payload,
    digest: hex(tx.hash()),
    summary: `${what}, fee ${args.baseFee} stroops, seq ${tx.sequence}, valid until ${args.maxTime}, ${threshold} threshold (weight ${needed})${memoText}`,
  };
}
