/**
 * @module multisig
 * What a multisig contribution is on the XRPL and how contributions become one submittable blob:
 * each member signs `encodeForMultisigning(tx, member)`; the driver checks every contribution with
 * ripple-keypairs, counts each member once by the wallet's weights, sorts the Signers by AccountID
 * bytes and encodes the blob only when the weight reaches the quorum.
 */
import { ValidationError, type AssembleResult, type BuiltPayload, type Contribution, type WalletDescriptor } from '@vault/sdk';
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

/** Why a contribution does not verify for `tx_json`, or null when it does (address, key and signature). */
export function contributionProblem(tx_json: TxJson, c: Contribution): string | null {
  const key = ledgerPublicKey(c);
  if (key === null) return `public key is not a ${c.public_key.curve} key in the expected form`;
  const expected = c.public_key.curve === 'ed25519' ? XRPL_ED25519_ENCODING : XRPL_DER_ENCODING;
  if (c.signature.encoding !== expected) return `signature encoding ${c.signature.encoding} is not ${expected}`;
  if (deriveAddress(key) !== c.signer_address) return 'public key does not control signer_address';
  let ok = false;
  try {
    ok = verify(multisigningData(tx_json, c.signer_address), c.signature.hex.toUpperCase(), key);
  } catch {
    ok = false;
  }
  return ok ? null : 'signature does not verify over the multisigning data';
}

/** The Signers array for verified contributions, sorted by AccountID bytes. */
export function signersArray(contributions: readonly Contribution[]): TxJson[] {
  return [...contributions]
    .sort((a, b) => compareAccountIds(a.signer_address, b.signer_address))
    .map((c) => ({
      Signer: { Account: c.signer_address, SigningPubKey: ledgerPublicKey(c), TxnSignature: c.signature.hex.toUpperCase() },
    }));
}

/** Counts verified, distinct member contributions and assembles at quorum (the wallet's weights). */
export function assembleMultisig(built: BuiltPayload, contributions: readonly Contribution[], wallet: WalletDescriptor): AssembleResult {
  if (wallet.control.kind !== 'native_multisig') {
    throw new ValidationError('wallet', [{ path: 'control.kind', message: 'XRPL wallets use native_multisig control' }]);
  }
  const control = wallet.control;
  const payload = payloadOf(built);
  if (payload.tx_json['Account'] !== control.address || payload.chain !== wallet.chain) {
    throw new ValidationError('built', [{ path: 'payload.tx_json.Account', message: `payload is for ${payload.chain} ${String(payload.tx_json['Account'])}, not this wallet` }]);
  }
  const weights = new Map(control.signers.map((s) => [s.address, s.weight]));
  const counted = new Map<string, Contribution>();
  const invalid: { address: string; reason: string }[] = [];
  for (const c of contributions) {
    const address = typeof c?.signer_address === 'string' ? c.signer_address : '(unknown)';
    const shapeOk = typeof c?.public_key?.hex === 'string' && typeof c?.signature?.hex === 'string' && typeof c?.signature?.encoding === 'string';
    const reason = !shapeOk
      ? 'contribution is malformed'
      : !weights.has(address)
        ? 'not a member of the wallet'
        : counted.has(address)
          ? null // a repeat of a counted member is ignored, not an error
          : contributionProblem(payload.tx_json, c);
    if (reason) invalid.push({ address, reason });
    else if (!counted.has(address)) counted.set(address, c);
  }
  const weight = [...counted.keys()].reduce((s, a) => s + (weights.get(a) ?? 0), 0);
  if (weight < control.quorum) {
    return {
      ok: false,
      reason: 'short_of_quorum',
      weight,
      quorum: control.quorum,
      missing: control.signers.filter((s) => !counted.has(s.address)).map((s) => ({ address: s.address, weight: s.weight })),
      invalid,
    };
  }
  const blob = encode({ ...payload.tx_json, Signers: signersArray([...counted.values()]) });
  return { ok: true, blob, txHash: hashes.hashSignedTx(blob), weight, quorum: control.quorum };
}
