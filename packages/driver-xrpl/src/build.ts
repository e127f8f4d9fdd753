/**
 * @module build
 * Deterministic transaction building: a NormalizedIntent + WalletDescriptor + ChainParams become
 * one unsigned multisig transaction (SigningPubKey empty; Sequence, Fee, LastLedgerSequence and
 * NetworkID frozen) and its signing hash. The control plane and the signer call the same function,
 * so the signer's rebuild gives the same bytes.
 */
import { RefusedError, ValidationError, type BuildInput, type NormalizedIntent, type WalletDescriptor } from '@vault/sdk';
import { encode, encodeForSigning } from 'ripple-binary-codec';
import { isValidXAddress, xAddressToClassicAddress } from 'ripple-address-codec';
import {
  ACCOUNT_SET_FLAGS,
  DEFAULT_MAX_FEE_DROPS,
  LEGACY_NETWORK_ID_MAX,
  MAX_MEMO_BYTES,
  MPT_CREATE_FLAGS,
  TX_FLAGS,
  XRPL_PAYLOAD_FORMAT,
} from './constants.js';
import {
  bytesToHex,
  currencyName,
  dropsToXrpText,
  hexToBytes,
  isClassicAddress,
  minorUnitsToValue,
  parseMptIssuanceId,
  sha512Half,
  shortAddress,
  toCurrencyCode,
} from './util.js';

/** A transaction as JSON, the shape ripple-binary-codec encodes. */
export type TxJson = Record<string, unknown>;

/** The payload every member signs (BuiltPayload.payload). */
export interface XrplPayload {
  format: typeof XRPL_PAYLOAD_FORMAT;
  chain: string;
  tx_json: TxJson;
}

/** The asset an intent names, resolved to the ledger's own notation. */
export type XrplAsset =
  | { kind: 'xrp' }
  | { kind: 'iou'; issuer: string; currency: string; name: string }
  | { kind: 'mpt'; id: string; issuer: string };

export interface BuildOptions {
  /** Ceiling on the total Fee in drops. Default 2 XRP. */
  maxFeeDrops?: number;
  /** Does `chain` use test-network X-addresses? Default: every chain but `xrpl:mainnet`. */
  isTestChain?: (chain: string) => boolean;
}

const MAX_DROPS = 10n ** 17n;
const MAX_MPT = (1n << 63n) - 1n;
const XRP_DECIMALS = 6;

function bad(path: string, message: string): never {
  throw new ValidationError('intent', [{ path, message }]);
}

export function defaultIsTestChain(chain: string): boolean {
  return chain !== 'xrpl:mainnet';
}

/**
 * The asset of an intent: XRP when it names no issuer; an IOU for `ACCOUNT.CODE` (or an issuer
 * account plus asset_symbol as the code); an MPT for a 48-hex issuance id.
 */
export function resolveAsset(intent: Pick<NormalizedIntent, 'asset_issuer' | 'asset_symbol' | 'asset_decimals'>): XrplAsset {
  const issuer = intent.asset_issuer;
  if (issuer === undefined) {
    if (intent.asset_symbol !== undefined && intent.asset_symbol.toUpperCase() !== 'XRP') {
      bad('asset_issuer', `asset ${intent.asset_symbol} needs an issuer (ACCOUNT.CODE or a 48-hex MPT issuance id)`);
    }
    if (intent.asset_symbol !== undefined && intent.asset_decimals !== XRP_DECIMALS) {
      bad('asset_decimals', 'XRP amounts are drops: asset_decimals must be 6');
    }
    return { kind: 'xrp' };
  }
  const mpt = parseMptIssuanceId(issuer);
  if (mpt) return { kind: 'mpt', id: issuer.toUpperCase(), issuer: mpt.issuer };
  const dot = issuer.indexOf('.');
  const account = dot >= 0 ? issuer.slice(0, dot) : issuer;
  const rawCode = dot >= 0 ? issuer.slice(dot + 1) : intent.asset_symbol;
  if (!isClassicAddress(account)) bad('asset_issuer', `issuer ${account} is not a classic XRPL address`);
  if (rawCode === undefined || rawCode === '') bad('asset_issuer', 'an IOU issuer needs a currency code: ACCOUNT.CODE');
  const currency = toCurrencyCode(rawCode);
  if (currency === null) bad('asset_issuer', `currency code ${JSON.stringify(rawCode)} is not a 3-character code or 40 hex digits (and XRP is not an IOU)`);
  const name = currencyName(currency) ?? currency;
  if (dot >= 0 && intent.asset_symbol !== undefined && currencyName(currency) !== null && name.toUpperCase() !== intent.asset_symbol.toUpperCase()) {
    bad('asset_symbol', `asset_symbol ${intent.asset_symbol} does not match the currency code ${name} of ${issuer}`);
  }
  return { kind: 'iou', issuer: account, currency, name };
}

/** A classic destination and the tag an X-address carries. */
export function resolveDestination(
  address: string,
  chain: string,
  isTestChain: (chain: string) => boolean,
  path = 'destination',
): { account: string; tag?: number } {
  if (isClassicAddress(address)) return { account: address };
  if (isValidXAddress(address)) {
    const x = xAddressToClassicAddress(address);
    if (x.test !== isTestChain(chain)) bad(path, `X-address ${address} is for ${x.test ? 'the test networks' : 'mainnet'}, not ${chain}`);
    return x.tag === false ? { account: x.classicAddress } : { account: x.classicAddress, tag: x.tag };
  }
  return bad(path, `${address} is not a valid XRPL address`);
}

function hexOf(text: string): string {
  return Buffer.from(text, 'utf8').toString('hex').toUpperCase();
}

/** memo and tags as Memos (MemoType text/plain and vault/tag), refusing what the ledger would. */
export function memosOf(intent: Pick<NormalizedIntent, 'memo' | 'tags'>): TxJson[] | undefined {
  const memos: TxJson[] = [];
  if (intent.memo !== undefined) memos.push({ Memo: { MemoType: hexOf('text/plain'), MemoData: hexOf(intent.memo) } });
  for (const tag of intent.tags ?? []) {
    memos.push({ Memo: { MemoType: hexOf('vault/tag'), MemoFormat: hexOf('application/json'), MemoData: hexOf(JSON.stringify(tag)) } });
  }
  if (memos.length === 0) return undefined;
  // Exactly what rippled measures: the serialised Memos field.
  const size = encode({ Memos: memos }).length / 2;
  if (size > MAX_MEMO_BYTES) bad('memo', `memo and tags take ${size} bytes as Memos; the ledger allows ${MAX_MEMO_BYTES}`);
  return memos;
}

function checkAmount(intent: NormalizedIntent, asset: XrplAsset): TxJson | string {
  const amount = BigInt(intent.amount);
  if (amount === 0n) bad('amount', 'amount must be positive');
  if (asset.kind === 'xrp') {
    if (amount > MAX_DROPS) bad('amount', 'amount exceeds the XRP supply (10^17 drops)');
    return intent.amount;
  }
  if (asset.kind === 'mpt') {
    if (amount > MAX_MPT) bad('amount', 'an MPT amount is at most 2^63-1');
    return { mpt_issuance_id: asset.id, value: intent.amount };
  }
  let value: string;
  try {
    value = minorUnitsToValue(intent.amount, intent.asset_decimals);
  } catch {
    return bad('amount', `amount ${intent.amount} has more than 16 significant digits: the ledger would round it`);
  }
  return { currency: asset.currency, issuer: asset.issuer, value };
}

function multisigWallet(wallet: WalletDescriptor) {
  if (wallet.control.kind !== 'native_multisig') {
    throw new ValidationError('wallet', [{ path: 'control.kind', message: 'XRPL wallets use native_multisig control' }]);
  }
  const control = wallet.control;
  if (!isClassicAddress(control.address)) throw new ValidationError('wallet', [{ path: 'control.address', message: `${control.address} is not a classic XRPL address` }]);
  for (const [i, s] of control.signers.entries()) {
    if (!isClassicAddress(s.address)) throw new ValidationError('wallet', [{ path: `control.signers.${i}.address`, message: `${s.address} is not a classic XRPL address` }]);
  }
  return control;
}

/** The unsigned multisig transaction for an intent. Pure: same inputs, same JSON. */
export function buildTransaction(input: BuildInput, options: BuildOptions = {}): { tx_json: TxJson; summary: string } {
  const { intent, wallet, params } = input;
  const control = multisigWallet(wallet);
  const isTestChain = options.isTestChain ?? defaultIsTestChain;
  if (params.kind !== 'xrpl') throw new ValidationError('params', [{ path: 'kind', message: `XRPL transactions take xrpl params, got ${params.kind}` }]);
  const fee = BigInt(params.base_fee_drops) * BigInt(1 + control.signers.length);
  const maxFee = BigInt(options.maxFeeDrops ?? DEFAULT_MAX_FEE_DROPS);
  if (fee > maxFee) {
    throw new RefusedError(`fee ${fee} drops (base ${params.base_fee_drops} x ${1 + control.signers.length}) exceeds the cap of ${maxFee} drops`, {
      data: { stage: 'build', fee: fee.toString(), cap: maxFee.toString() },
    });
  }
  const common: TxJson = {
    Account: control.address,
    Fee: fee.toString(),
    Sequence: params.sequence,
    LastLedgerSequence: params.last_ledger_sequence,
    SigningPubKey: '',
  };
  if (params.network_id !== null && params.network_id > LEGACY_NETWORK_ID_MAX) common['NetworkID'] = params.network_id;
  const memos = memosOf(intent);
  if (memos) common['Memos'] = memos;

  const op = intent.operation;
  const from = shortAddress(control.address);
  const tail = `fee ${fee} drops, seq ${params.sequence}, valid through ledger ${params.last_ledger_sequence}${common['NetworkID'] !== undefined ? `, network ${params.network_id}` : ''}`;
  const describe = (asset: XrplAsset, amount: TxJson | string) =>
    typeof amount === 'string'
      ? `${dropsToXrpText(amount)} XRP`
      : asset.kind === 'mpt'
        ? `${intent.amount} MPT ${asset.id}`
        : `${(amount as { value: string }).value} ${asset.kind === 'iou' ? `${asset.name} (${shortAddress(asset.issuer)})` : ''}`;

  switch (op.op) {
    case 'transfer':
    case 'issue': {
      const asset = resolveAsset(intent);
      const dest = resolveDestination(intent.destination, wallet.chain, isTestChain);
      if (dest.account === control.address) bad('destination', 'a wallet cannot pay itself');
      if (op.op === 'issue') {
        if (asset.kind === 'xrp') bad('asset_issuer', 'issue needs an IOU (ACCOUNT.CODE) or MPT issued by this wallet');
        if (asset.issuer !== control.address) bad('asset_issuer', `issue pays out the wallet's own asset; ${asset.issuer} is not ${control.address}`);
      }
      const amount = checkAmount(intent, asset);
      const tx: TxJson = { TransactionType: 'Payment', ...common, Destination: dest.account, Amount: amount };
      if (dest.tag !== undefined) tx['DestinationTag'] = dest.tag;
      return { tx_json: tx, summary: `${op.op === 'issue' ? 'Issue' : 'Payment'} ${describe(asset, amount)} ${from} -> ${shortAddress(dest.account)}, ${tail}` };
    }
    case 'authorize_holder': {
      const asset = resolveAsset(intent);
      const holder = resolveDestination(intent.destination, wallet.chain, isTestChain).account;
      if (asset.kind === 'xrp') bad('asset_issuer', 'authorize_holder needs an IOU (ACCOUNT.CODE) or an MPT issuance id');
      if (asset.issuer !== control.address) bad('asset_issuer', `only the issuer authorises holders; ${asset.issuer} is not ${control.address}`);
      if (holder === control.address) bad('destination', 'the issuer cannot authorise itself');
      if (asset.kind === 'iou') {
        if (op.revoke) {
          throw new RefusedError('XRPL cannot revoke a trust line authorisation (tfSetfAuth is permanent); freeze the line instead', {
            data: { stage: 'build', op: 'authorize_holder' },
          });
        }
        const tx: TxJson = {
          TransactionType: 'TrustSet',
          ...common,
          Flags: TX_FLAGS.tfSetfAuth,
          LimitAmount: { currency: asset.currency, issuer: holder, value: '0' },
        };
        return { tx_json: tx, summary: `Authorize ${shortAddress(holder)} to hold ${asset.name} issued by ${from} (TrustSet tfSetfAuth), ${tail}` };
      }
      const tx: TxJson = { TransactionType: 'MPTokenAuthorize', ...common, MPTokenIssuanceID: asset.id, Holder: holder };
      if (op.revoke) tx['Flags'] = TX_FLAGS.tfMPTUnauthorize;
      return { tx_json: tx, summary: `${op.revoke ? 'Unauthorize' : 'Authorize'} ${shortAddress(holder)} for MPT ${asset.id}, ${tail}` };
    }
    case 'clawback': {
      const asset = resolveAsset(intent);
      const holder = resolveDestination(intent.destination, wallet.chain, isTestChain).account;
      if (asset.kind === 'xrp') bad('asset_issuer', 'XRP cannot be clawed back');
      if (asset.issuer !== control.address) bad('asset_issuer', `only the issuer claws back; ${asset.issuer} is not ${control.address}`);
      if (holder === control.address) bad('destination', 'the issuer cannot claw back from itself');
      const amount = checkAmount(intent, asset) as TxJson;
      if (asset.kind === 'iou') {
        // For an IOU the Amount's issuer field names the HOLDER (rippled's Clawback convention).
        const tx: TxJson = { TransactionType: 'Clawback', ...common, Amount: { ...amount, issuer: holder } };
        return { tx_json: tx, summary: `Claw back ${describe(asset, amount)} from ${shortAddress(holder)}, ${tail}` };
      }
      const tx: TxJson = { TransactionType: 'Clawback', ...common, Amount: amount, Holder: holder };
      return { tx_json: tx, summary: `Claw back ${intent.amount} of MPT ${asset.id} from ${shortAddress(holder)}, ${tail}` };
    }
    case 'mpt_create': {
      const tx: TxJson = { TransactionType: 'MPTokenIssuanceCreate', ...common, AssetScale: op.asset_scale };
      if (op.flags !== 0) tx['Flags'] = op.flags;
      if (op.maximum_amount !== undefined) {
        if (BigInt(op.maximum_amount) === 0n) bad('operation.maximum_amount', 'maximum_amount must be positive');
        tx['MaximumAmount'] = op.maximum_amount;
      }
      if (op.transfer_fee !== undefined && op.transfer_fee !== 0) {
        if ((op.flags & MPT_CREATE_FLAGS.tfMPTCanTransfer) === 0) bad('operation.transfer_fee', 'a transfer_fee needs the CanTransfer flag (0x20)');
        tx['TransferFee'] = op.transfer_fee;
      }
      if (op.metadata_hex !== undefined && op.metadata_hex !== '') tx['MPTokenMetadata'] = op.metadata_hex.toUpperCase();
      return {
        tx_json: tx,
        summary: `Create MPT issuance by ${from}: scale ${op.asset_scale}, flags 0x${op.flags.toString(16)}, max ${op.maximum_amount ?? 'unlimited'}, ${tail}`,
      };
    }
    case 'account_flags': {
      const known = new Set<number>(Object.values(ACCOUNT_SET_FLAGS));
      const tx: TxJson = { TransactionType: 'AccountSet', ...common };
      if (op.set !== undefined) {
        if (!known.has(op.set)) bad('operation.set', `${op.set} is not an XRPL AccountSet flag (asf 1..17)`);
        tx['SetFlag'] = op.set;
      }
      if (op.clear !== undefined) {
        if (!known.has(op.clear)) bad('operation.clear', `${op.clear} is not an XRPL AccountSet flag (asf 1..17)`);
        tx['ClearFlag'] = op.clear;
      }
      if (op.set !== undefined && op.set === op.clear) bad('operation.clear', 'cannot set and clear the same flag');
      return { tx_json: tx, summary: `AccountSet on ${from}: set ${op.set ?? '-'}, clear ${op.clear ?? '-'}, ${tail}` };
    }
    case 'contract_call':
      throw new RefusedError('XRPL has no contract calls: contract_call is refused by @vault/driver-xrpl', {
        data: { stage: 'build', op: 'contract_call' },
      });
  }
}

/** The signing hash of an unsigned transaction: SHA-512Half of the STX\0 prefix and its fields. */
export function signingHash(tx_json: TxJson): string {
  return bytesToHex(sha512Half(hexToBytes(encodeForSigning(tx_json))));
}
