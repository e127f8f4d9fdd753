/**
 * @module devnet/results
 * rippled's engine result tokens with their numeric codes (from ripple-binary-codec's own
 * definitions) and rippled's human messages for the ones the devnet produces.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const definitions = require('ripple-binary-codec/dist/enums/definitions.json') as { TRANSACTION_RESULTS: Record<string, number> };

/** The numeric code of an engine result token, as rippled's `engine_result_code`. */
export function engineResultCode(token: string): number {
  const code = definitions.TRANSACTION_RESULTS[token];
  if (code === undefined) throw new Error(`unknown engine result ${token}`);
  return code;
}

export const ENGINE_MESSAGES: Record<string, string> = {
  tesSUCCESS: 'The transaction was applied. Only final in a validated ledger.',
  tecUNFUNDED_PAYMENT: 'Insufficient XRP balance to send.',
  tecNO_DST: 'Destination does not exist. Send XRP to create it.',
  tecNO_DST_INSUF_XRP: 'Destination does not exist. Too little XRP sent to create it.',
  tecPATH_DRY: 'Path could not send partial amount.',
  tecPATH_PARTIAL: 'Path could not send full amount.',
  tecNO_LINE: 'No such line.',
  tecNO_LINE_INSUF_RESERVE: 'No such line. Too little reserve to create it.',
  tecNO_AUTH: 'Not authorized to hold asset.',
  tecNO_PERMISSION: 'No permission to perform requested operation.',
  tecINSUFFICIENT_RESERVE: 'Insufficient reserve to complete requested operation.',
  tecOWNERS: 'Non-zero owner count.',
  tecNO_ALTERNATIVE_KEY: 'The operation would remove the ability to sign transactions with the account.',
  tecDST_TAG_NEEDED: 'A destination tag is required.',
  tecINSUFFICIENT_FUNDS: 'Not enough funds available to complete requested transaction.',
  tecOBJECT_NOT_FOUND: 'A requested object could not be located.',
  tecDUPLICATE: 'Ledger object already exists.',
  tecHAS_OBLIGATIONS: 'The account cannot be deleted since it has obligations.',
  tecNO_ISSUER: 'Issuer account does not exist.',
  tecMPT_MAX_AMOUNT_EXCEEDED: 'The MPT amount would exceed the maximum.',
  tefPAST_SEQ: 'This sequence number has already passed.',
  tefMAX_LEDGER: 'Ledger sequence too high.',
  tefBAD_QUORUM: 'Signatures provided do not meet the quorum.',
  tefBAD_SIGNATURE: 'A signature is provided for a non-signer.',
  tefNOT_MULTI_SIGNING: 'Account has no appropriate list of multi-signers.',
  tefMASTER_DISABLED: 'Master key is disabled.',
  tefBAD_AUTH: "Transaction's public key is not authorized.",
  tefNO_AUTH_REQUIRED: 'Auth is not required.',
  terPRE_SEQ: 'Missing/inapplicable prior transaction.',
  terNO_ACCOUNT: 'The source account does not exist.',
  terINSUF_FEE_B: "Account balance can't pay fee.",
  telINSUF_FEE_P: 'Fee insufficient.',
  telREQUIRES_NETWORK_ID: 'Transactions submitted to this node/network must include a correct NetworkID field.',
  telNETWORK_ID_MAKES_TX_NON_CANONICAL: 'Transactions submitted to this node/network must NOT include a NetworkID field.',
  telWRONG_NETWORK: 'Transaction specifies a Network ID that differs from that of the local node.',
  temMALFORMED: 'Malformed transaction.',
  temBAD_AMOUNT: 'Malformed: Bad amount.',
  temBAD_CURRENCY: 'Malformed: Bad currency.',
  temBAD_FEE: 'Invalid fee, negative or not XRP.',
  temBAD_LIMIT: 'Limits must be non-negative.',
  temBAD_QUORUM: 'Malformed: Quorum is unreachable.',
  temBAD_SIGNER: 'Malformed: A signer may not duplicate account or other signers.',
  temBAD_WEIGHT: 'Malformed: Weight must be a positive value.',
  temBAD_TRANSFER_FEE: 'Malformed: Transfer fee is outside valid range.',
  temDST_IS_SRC: 'Destination may not be source.',
  temDST_NEEDED: 'Destination not specified.',
  temINVALID_FLAG: 'The transaction has an invalid flag.',
  temREDUNDANT: 'The transaction is redundant.',
  temUNKNOWN: 'The transaction requires logic that is not implemented yet.',
  temDISABLED: 'The transaction requires logic that is currently disabled.',
};

export function engineMessage(token: string): string {
  return ENGINE_MESSAGES[token] ?? token;
}
