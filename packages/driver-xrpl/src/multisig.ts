/**
 * @module multisig
 * What a multisig contribution is on the XRPL and how contributions become one submittable blob:
 * each member signs `encodeForMultisigning(tx, member)`; the driver checks every contribution
 * (ed25519 with the SDK's strict verifyEd25519, secp256k1 with ripple-keypairs), and the SDK's tally
 * counts each member once by the wallet's weights; at quorum the Signers are sorted by AccountID
 * bytes and the blob encoded.
 */
import {
  ValidationError,
  assembleContributions,
  fromHex,
  verifyEd25519,
  type AssembleResult,
  type BuiltPayload,
  type Contribution,
  type ContributionMemo,
  type ContributionProblem,
  type WalletDescriptor,
} from '@vault/sdk';
import { encode, encodeForMultisigning } from 'ripple-binary-codec';
import { deriveAddress, verify } from 'ripple-keypairs';
import { hashes } from 'xrpl';
import { XRPL_DER_ENCODING, XRPL_ED25519_ENCODING, XRPL_PAYLOAD_FORMAT } from './constants.js';
import { signingHash, type TxJson, type XrplPayload } from './build.js';
import { compareAccountIds } from './util.js';

/** The payload of a BuiltPayload, checked: format, no signature fields, digest = its signing hash. */
export function payloadOf(built: BuiltPayload): XrplPayload {
  const p = built.payload as Partial<XrplPayload> | null;
  const fail = (path: string, message: string): never => {
    throw new ValidationError('built', [{ path, message }]);
  };
  if (p === null || typeof p !== 'object' || p.format !== XRPL_PAYLOAD_FORMAT) return fail('payload.format', `expected ${XRPL_PAYLOAD_FORMAT}`);
  if (typeof p.chain !== 'string') return fail('payload.chain', 'expected a chain name');
  const tx = p.tx_json;
  if (tx === null || typeof tx !== 'object' || Array.isArray(tx)) return fail('payload.tx_json', 'expected a transaction object');
  if (tx['SigningPubKey'] !== '') fail('payload.tx_json.SigningPubKey', 'a multisig transaction has an empty SigningPubKey');
  if ('Signers' in tx || 'TxnSignature' in tx) fail('payload.tx_json', 'the payload must be unsigned');
  let digest: string;
  try {
    digest = signingHash(tx);
  } catch (cause) {
    return fail('payload.tx_json', `does not encode: ${(cause as Error).message}`);
  }
  if (digest !== built.digest) fail('digest', 'digest is not the signing hash of payload.tx_json');
  return { format: XRPL_PAYLOAD_FORMAT, chain: p.chain, tx_json: tx };
}

/** The bytes (hex) member `signer` signs for `tx_json`. */
export function multisigningData(tx_json: TxJson, signer: string): string {
  return encodeForMultisigning(tx_json, signer);
}

/** A contribution's public key in the ledger's form: `ED` + 32 bytes, or a 33-byte secp256k1 point. */
export function ledgerPublicKey(c: Pick<Contribution, 'public_key'>): string | null {
  const { curve, hex } = c.public_key;
  if (curve === 'ed25519') return /^[0-9a-f]{64}$/.test(hex) ? `ED${hex.toUpperCase()}` : null;
  return /^0[23][0-9a-f]{64}$/.test(hex) ? hex.toUpperCase() : null;
}

/**
 * Why a contribution does not verify as `account`'s signature over `tx_json`, or null when it does:
 * its key must be in the ledger's form and derive `account`, its signature must verify over the
 * multisigning data.
 */
export function contributionProblem(tx_json: TxJson, c: Contribution, account: string): ContributionProblem | null {
  const key = ledgerPublicKey(c);
  if (key === null) return { reason: 'wrong_key', detail: `public key is not a ${c.public_key.curve} key in the expected form` };
  if (deriveAddress(key) !== account) return { reason: 'wrong_key', detail: `public key does not control ${account}` };
  const expected = c.public_key.curve === 'ed25519' ? XRPL_ED25519_ENCODING : XRPL_DER_ENCODING;
  if (c.signature.encoding !== expected) return { reason: 'bad_signature', detail: `signature encoding ${c.signature.encoding} is not ${expected}` };
  let ok = false;
  try {
    const data = multisigningData(tx_json, account);
    // ed25519 through the SDK's one strict verification: node:crypto answers first (the SDK's note:
    // ~0.1 ms against ~3 ms for a JavaScript curve), and it is stricter than ripple-keypairs
    // (non-canonical encodings and small-order keys refused). secp256k1 stays with ripple-keypairs.
    ok =
      c.public_key.curve === 'ed25519'
        ? verifyEd25519(fromHex(c.signature.hex, 'signature', 64), fromHex(data.toLowerCase(), 'multisigning data'), fromHex(c.public_key.hex, 'public_key', 32))
        : verify(data, c.signature.hex.toUpperCase(), key);
  } catch {
    ok = false;
  }
  return ok ? null : { reason: 'bad_signature', detail: 'signature does not verify over the multisigning data' };
}

/** The Signers array for verified contributions, sorted by AccountID bytes. */
export function signersArray(contributions: readonly Contribution[]): TxJson[] {
  return [...contributions]
    .sort((a, b) => compareAccountIds(a.signer_address, b.signer_address))
    .map((c) => ({
      Signer: { Account: c.signer_address, SigningPubKey: ledgerPublicKey(c), TxnSignature: c.signature.hex.toUpperCase() },
    }));
}

/** The SDK's tally over the wallet's weights with XRPL's checks; at quorum, the blob with its Signers sorted. */
export function assembleMultisig(built: BuiltPayload, contributions: readonly Contribution[], wallet: WalletDescriptor, memo?: ContributionMemo): AssembleResult {
  if (wallet.control.kind !== 'native_multisig') {
    throw new ValidationError('wallet', [{ path: 'control.kind', message: 'XRPL wallets use native_multisig control' }]);
  }
  const control = wallet.control;
  const payload = payloadOf(built);
  if (payload.tx_json['Account'] !== control.address || payload.chain !== wallet.chain) {
    throw new ValidationError('built', [{ path: 'payload.tx_json.Account', message: `payload is for ${payload.chain} ${String(payload.tx_json['Account'])}, not this wallet` }]);
  }
  return assembleContributions({
    contributions,
    wallet,
    verify: (c, member) => contributionProblem(payload.tx_json, c, member.address),
    // verify reads tx_json, whose signing hash payloadOf checked to be the digest.
    memo,
    memoKey: built.digest,
    encode: (counted) => {
      const blob = encode({ ...payload.tx_json, Signers: signersArray(counted.map((x) => x.contribution)) });
      return { blob, txHash: hashes.hashSignedTx(blob) };
    },
  });
}
