/**
 * @module result-codes
 * Horizon's result-code strings (`tx_bad_auth`, `op_underfunded`, …) from a TransactionResult XDR,
 * following Horizon's own mapping (services/horizon/internal/codes), including its irregular names.
 */
import { xdr } from '@stellar/stellar-base';

export interface ResultCodes {
  transaction: string;
  operations?: string[];
}

const TX_SPECIAL: Record<string, string> = {
  txNoAccount: 'tx_no_source_account',
  txBadMinSeqAgeOrGap: 'tx_bad_minseq_age_or_gap',
  txFeeBumpInnerSuccess: 'tx_fee_bump_inner_success',
  txFeeBumpInnerFailed: 'tx_fee_bump_inner_failed',
};

const OP_SPECIAL: Record<string, string> = {
  opNoAccount: 'op_no_source_account',
  createAccountAlreadyExist: 'op_already_exists',
  setTrustLineFlagsNoTrustLine: 'op_no_trust',
  allowTrustNoTrustLine: 'op_no_trust',
  allowTrustTrustNotRequired: 'op_not_required',
  pathPaymentStrictReceiveOverSendmax: 'op_over_source_max',
  pathPaymentStrictReceiveOfferCrossSelf: 'op_cross_self',
  pathPaymentStrictSendOfferCrossSelf: 'op_cross_self',
  pathPaymentStrictSendUnderDestmin: 'op_under_dest_min',
  manageSellOfferSellNotAuthorized: 'sell_not_authorized',
  manageSellOfferBuyNotAuthorized: 'buy_not_authorized',
  manageSellOfferBuyNoIssuer: 'buy_no_issuer',
  manageSellOfferNotFound: 'op_offer_not_found',
  manageBuyOfferSellNotAuthorized: 'sell_not_authorized',
  manageBuyOfferBuyNotAuthorized: 'buy_not_authorized',
  manageBuyOfferBuyNoIssuer: 'buy_no_issuer',
  manageBuyOfferNotFound: 'op_offer_not_found',
  changeTrustNotAuthMaintainLiabilities: 'op_not_aut_maintain_liabilities',
  accountMergeSeqnumTooFar: 'op_seq_num_too_far',
  clawbackClaimableBalanceNotIssuer: 'op_no_issuer',
  invokeHostFunctionTrapped: 'function_trapped',
};

// Longest first where one prefix starts another (clawbackClaimableBalance before clawback).
const OP_PREFIXES = [
  'pathPaymentStrictReceive', 'pathPaymentStrictSend', 'createClaimableBalance', 'claimClaimableBalance',
  'clawbackClaimableBalance', 'beginSponsoringFutureReserves', 'endSponsoringFutureReserves', 'revokeSponsorship',
  'liquidityPoolDeposit', 'liquidityPoolWithdraw', 'invokeHostFunction', 'extendFootprintTtl', 'restoreFootprint',
  'createAccount', 'manageSellOffer', 'manageBuyOffer', 'setTrustLineFlags', 'setOptions', 'changeTrust', 'allowTrust',
  'accountMerge', 'inflation', 'manageData', 'bumpSequence', 'clawback', 'payment',
];

function snake(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/^_/, '');
}

/** `txBadAuthExtra` -> `tx_bad_auth_extra`. */
export function txCodeString(name: string): string {
  return TX_SPECIAL[name] ?? snake(name);
}

/** The Horizon string of one OperationResult. */
export function opCodeString(result: xdr.OperationResult): string {
  const outer = result.switch().name;
  if (outer !== 'opInner') return OP_SPECIAL[outer] ?? snake(outer);
  const inner = (result.tr().value() as { switch(): { name: string } }).switch().name;
  if (OP_SPECIAL[inner]) return OP_SPECIAL[inner] as string;
  const prefix = OP_PREFIXES.find((p) => inner.startsWith(p));
  const rest = prefix ? inner.slice(prefix.length) : inner;
  return `op_${snake(rest.charAt(0).toLowerCase() + rest.slice(1))}`;
}

/** `extras.result_codes` as Horizon derives it from a TransactionResult. */
export function resultCodesOf(result: xdr.TransactionResult): ResultCodes {
  const r = result.result();
  const name = r.switch().name;
  const codes: ResultCodes = { transaction: txCodeString(name) };
  if (name === 'txFailed' || name === 'txSuccess') {
    codes.operations = (r.results() as xdr.OperationResult[]).map(opCodeString);
  }
  return codes;
}

/** Decodes base64 TransactionResult XDR; null when it is not one. */
export function resultCodesOfXdr(resultXdr: string): ResultCodes | null {
  try {
    return resultCodesOf(xdr.TransactionResult.fromXDR(resultXdr, 'base64'));
  } catch {
    return null;
  }
}

/** One code a caller can branch on: the tx code, or `tx_failed:<first failing op code>`. */
export function primaryCode(codes: ResultCodes): string {
  if (codes.transaction === 'tx_failed') {
    const failing = codes.operations?.find((c) => c !== 'op_success');
    if (failing) return `tx_failed:${failing}`;
  }
  return codes.transaction;
}
