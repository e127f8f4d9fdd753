/**
 * @module @vault/driver-evm-safe/signer
 * The signing half of the EVM Safe plugin, loaded only by signer processes: derives an owner's
 * address from its secp256k1 public key and produces an owner signature (EIP-712 safeTxHash,
 * `r || s || v`) through a SigningKey. It never signs a digest it is merely handed: it recomputes
 * the safeTxHash from the SafeTx itself, and refuses SafeTxs that could pay the gas-paying
 * executor out of the Safe (non-zero refund fields) or run foreign code in the Safe's context
 * (DELEGATECALL).
 */
import {
  DriverRegistryError,
  SignerRefusedError,
  ValidationError,
  defineChainSigner,
  fromHex,
  toHex,
  type ChainSigner,
  type Contribution,
  type DeriveAddressInput,
  type SignPayloadInput,
} from '@vault/sdk';
import { checkChains, chainIdOf, EVM_FAMILY } from './chains.js';
import { parseSafePayload, payloadDigest, SAFE_SIGNATURE_ENCODING, ZERO_ADDRESS, type SafePayload } from './safe-tx.js';
import { publicKeyToEvmAddress, recoverEvmAddress } from './secp256k1.js';

export { SAFE_SIGNATURE_ENCODING } from './safe-tx.js';

export interface EvmSafeSignerOptions {
  /** Chains to sign for, e.g. `['eip155:11155111']`. */
  chains: readonly string[];
  /** Plugin name. Default `@vault/driver-evm-safe/signer`. */
  name?: string;
}

export type EvmSafeSigner = ChainSigner & { readonly family: 'evm' };

/** Why a SafeTx must not be signed, or null. Shared with the driver, which never builds one. */
export function unsafeSafeTx(payload: SafePayload): string | null {
  const { tx } = payload;
  if (tx.operation !== 0) return 'DELEGATECALL would run foreign code with the Safe’s storage and funds';
  if (tx.gasPrice !== '0' || tx.baseGas !== '0' || tx.gasToken !== ZERO_ADDRESS || tx.refundReceiver !== ZERO_ADDRESS) {
    return 'refund fields (baseGas, gasPrice, gasToken, refundReceiver) must be zero: the executor pays gas, never the Safe';
  }
  return null;
}

/**
 * The ChainSigner for Safe owners.
 *
 * @example
 * const signer = createEvmSafeSigner({ chains: ['eip155:31337'] })
 * const contribution = await signer.signPayload({ built, key, signerAddress: ownerAddress })
 */
export function createEvmSafeSigner(options: EvmSafeSignerOptions): EvmSafeSigner {
  const name = options.name ?? '@vault/driver-evm-safe/signer';
  const chains = checkChains(name, options.chains);

  const signer: EvmSafeSigner = {
    name,
    family: EVM_FAMILY,
    chains,

    deriveAddress({ chain, publicKey, curve }: DeriveAddressInput): string {
      if (!chains.includes(chain)) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(chain)}`);
      if (curve !== 'secp256k1') throw new ValidationError('key', [{ path: 'curve', message: 'Safe owners are secp256k1 keys' }]);
      const address = publicKeyToEvmAddress(publicKey);
      if (!address) throw new ValidationError('key', [{ path: 'publicKey', message: 'not a secp256k1 public key (33 bytes compressed)' }]);
      return address;
    },

    async signPayload({ built, key, signerAddress }: SignPayloadInput): Promise<Contribution> {
      const payload = parseSafePayload(built.payload, 'built.payload');
      if (!chains.includes(payload.chain)) {
        throw new SignerRefusedError('chain', `${name} does not sign for chain ${JSON.stringify(payload.chain)}`);
      }
      if (chainIdOf(payload.chain) !== payload.chain_id) {
        throw new SignerRefusedError('chain', `payload chain_id ${payload.chain_id} is not the id of ${payload.chain}`);
      }
      // Sign only what the SafeTx itself hashes to, never a digest we are merely handed.
      if (payloadDigest(payload) !== built.digest) {
        throw new SignerRefusedError('digest_mismatch', 'the digest is not the safeTxHash of the payload');
      }
      const unsafe = unsafeSafeTx(payload);
      if (unsafe) throw new SignerRefusedError('protected', unsafe);
      if (key.curve !== 'secp256k1') throw new SignerRefusedError('key', `Safe owners sign with secp256k1, not ${key.curve}`);
      const keyAddress = publicKeyToEvmAddress(key.publicKey);
      if (!keyAddress || keyAddress.toLowerCase() !== signerAddress.toLowerCase()) {
        throw new SignerRefusedError('key', `the key controls ${keyAddress ?? '(no address)'}, not ${signerAddress}`);
      }
      const digest = fromHex(built.digest, 'built.digest', 32);
      const sig = await key.sign(digest);
      if (sig.length !== 65 || (sig[64] !== 0 && sig[64] !== 1)) {
        throw new SignerRefusedError('key', 'the key backend returned no 65-byte r || s || recovery signature');
      }
      const r = BigInt(`0x${toHex(sig.subarray(0, 32))}`);
      const s = BigInt(`0x${toHex(sig.subarray(32, 64))}`);
      const recovered = recoverEvmAddress(digest, r, s, sig[64] as number);
      if (!recovered || recovered.toLowerCase() !== keyAddress.toLowerCase()) {
        throw new SignerRefusedError('key', 'the key backend produced a signature that does not recover to its own address');
      }
      const rsv = new Uint8Array(65);
      rsv.set(sig.subarray(0, 64));
      rsv[64] = 27 + (sig[64] as number);
      return {
        signer_address: signerAddress,
        public_key: { curve: 'secp256k1', hex: toHex(key.publicKey) },
        signature: { encoding: SAFE_SIGNATURE_ENCODING, hex: toHex(rsv) },
      };
    },
  };
  return defineChainSigner(signer);
}
