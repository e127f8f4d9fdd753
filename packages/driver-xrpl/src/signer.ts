/**
 * @module @vault/driver-xrpl/signer
 * The signing half of the XRPL plugin, loaded only by signer processes. It rebuilds nothing it is
 * handed on trust: it re-derives the payload's signing hash, checks the key controls the member
 * address, signs the member's multisigning bytes through a SigningKey (the private key never
 * leaves it) and checks its own signature with ripple-keypairs before returning it.
 */
import {
  DriverRegistryError,
  SignerRefusedError,
  ValidationError,
  defineChainSigner,
  type ChainSigner,
  type Contribution,
  type Curve,
  type DeriveAddressInput,
  type SignPayloadInput,
} from '@vault/sdk';
import { deriveAddress } from 'ripple-keypairs';
import { XRPL_DER_ENCODING, XRPL_ED25519_ENCODING } from './constants.js';
import { contributionProblem, multisigningData, payloadOf } from './multisig.js';
import { bytesToHex, hexToBytes, sha512Half } from './util.js';

export interface XrplSignerOptions {
  /** Chains to serve. Default `['xrpl:testnet', 'xrpl:devnet', 'xrpl:mainnet', 'xrpl:local']`. */
  chains?: readonly string[];
  name?: string;
}

export type XrplSigner = ChainSigner & { readonly family: 'xrpl' };

/** The classic address of a public key: ed25519 (32 bytes) or compressed secp256k1 (33 bytes). */
export function xrplAddressOf(publicKey: Uint8Array, curve: Curve): string {
  return deriveAddress(ledgerKeyHex(publicKey, curve));
}

function ledgerKeyHex(publicKey: Uint8Array, curve: Curve): string {
  if (curve === 'ed25519') {
    if (publicKey.length !== 32) throw new ValidationError('key', [{ path: 'publicKey', message: 'an ed25519 public key is 32 bytes' }]);
    return `ED${bytesToHex(publicKey).toUpperCase()}`;
  }
  if (publicKey.length !== 33 || (publicKey[0] !== 2 && publicKey[0] !== 3)) {
    throw new ValidationError('key', [{ path: 'publicKey', message: 'a secp256k1 public key is a 33-byte compressed point' }]);
  }
  return bytesToHex(publicKey).toUpperCase();
}

/** DER encoding of a secp256k1 (r, s) pair, as XRPL's TxnSignature carries it. */
export function derSignature(r: Uint8Array, s: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const trimmed = b.subarray(i);
    return (trimmed[0] as number) & 0x80 ? Uint8Array.from([0, ...trimmed]) : Uint8Array.from(trimmed);
  };
  const R = int(r);
  const S = int(s);
  return Uint8Array.from([0x30, R.length + S.length + 4, 0x02, R.length, ...R, 0x02, S.length, ...S]);
}

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The XRPL ChainSigner.
 *
 * @example
 * const signer = createXrplSigner()
 * const contribution = await signer.signPayload({ built, key, signerAddress: 'rMember…' })
 */
export function createXrplSigner(options: XrplSignerOptions = {}): XrplSigner {
  const chains: readonly string[] = Object.freeze([...(options.chains ?? ['xrpl:testnet', 'xrpl:devnet', 'xrpl:mainnet', 'xrpl:local'])]);
  const name = options.name ?? '@vault/driver-xrpl/signer';
  const served = (chain: string) => {
    if (!chains.includes(chain)) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(chain)}`);
  };
  const signer: XrplSigner = {
    name,
    family: 'xrpl',
    chains,
    deriveAddress({ chain, publicKey, curve }: DeriveAddressInput): string {
      served(chain);
      return xrplAddressOf(publicKey, curve);
    },
    async signPayload({ built, key, signerAddress }: SignPayloadInput): Promise<Contribution> {
      let payload;
      try {
        // Signs only what the payload itself hashes to, never a digest it is merely handed.
        payload = payloadOf(built);
      } catch (cause) {
        throw new SignerRefusedError('digest_mismatch', (cause as Error).message, { cause });
      }
      served(payload.chain);
      const address = xrplAddressOf(key.publicKey, key.curve);
      if (address !== signerAddress) throw new SignerRefusedError('key', `the key controls ${address}, not ${signerAddress}`);
      if (payload.tx_json['Account'] === signerAddress) throw new SignerRefusedError('not_a_signer', 'an account cannot multisign for itself');
      const data = hexToBytes(multisigningData(payload.tx_json, signerAddress));
      let signature: Uint8Array;
      if (key.curve === 'ed25519') {
        signature = await key.sign(data);
        if (signature.length !== 64) throw new SignerRefusedError('key', 'the ed25519 key returned a signature that is not 64 bytes');
      } else {
        const rsv = await key.sign(sha512Half(data));
        if (rsv.length !== 65 && rsv.length !== 64) throw new SignerRefusedError('key', 'the secp256k1 key returned a signature that is not r || s || v');
        let s = BigInt(`0x${bytesToHex(rsv.subarray(32, 64))}`);
        // Fully canonical: rippled refuses high-s signatures.
        if (s > SECP256K1_N / 2n) s = SECP256K1_N - s;
        signature = derSignature(rsv.subarray(0, 32), hexToBytes(s.toString(16).padStart(64, '0')));
      }
      const contribution: Contribution = {
        signer_address: signerAddress,
        public_key: { curve: key.curve, hex: bytesToHex(key.publicKey) },
        signature: { encoding: key.curve === 'ed25519' ? XRPL_ED25519_ENCODING : XRPL_DER_ENCODING, hex: bytesToHex(signature) },
      };
      const problem = contributionProblem(payload.tx_json, contribution, signerAddress);
      if (problem) throw new SignerRefusedError('key', `the key produced a signature the ledger would refuse: ${problem.detail}`);
      return contribution;
    },
  };
  return defineChainSigner(signer);
}
