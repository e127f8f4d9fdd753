/**
 * @module @vault/driver-stellar/signer
 * The signing half of the Stellar driver, loaded only by signer processes: derives G… addresses and
 * signs the transaction hash through a SigningKey, after proving the payload hashes to the digest
 * under the network passphrase this signer is configured for.
 */
import { StrKey } from '@stellar/stellar-base';
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
import { hintOf } from './address.js';
import { STELLAR_FAMILY, STELLAR_SIGNATURE_ENCODING } from './constants.js';
import { openPayload } from './payload.js';

export { STELLAR_NETWORKS, STELLAR_SIGNATURE_ENCODING } from './constants.js';

export interface StellarSignerOptions {
  /** Chains this signer signs for, each with the passphrase it insists on. */
  chains: Record<string, { networkPassphrase: string }>;
  name?: string;
}

export type StellarSigner = ChainSigner & { readonly family: 'stellar' };

/**
 * @example
 * const signer = createStellarSigner({ chains: { 'stellar:testnet': { networkPassphrase: STELLAR_NETWORKS['stellar:testnet'] } } })
 * const contribution = await signer.signPayload({ built, key, signerAddress: 'G…' })
 */
export function createStellarSigner(options: StellarSignerOptions): StellarSigner {
  const name = options.name ?? '@vault/driver-stellar/signer';
  const networks = new Map(Object.entries(options.chains).map(([chain, c]) => [chain, c.networkPassphrase]));
  const chains = Object.freeze([...networks.keys()]);
  const signer: StellarSigner = {
    name,
    family: STELLAR_FAMILY,
    chains,
    deriveAddress({ chain, publicKey, curve }: DeriveAddressInput): string {
      if (!networks.has(chain)) throw new DriverRegistryError('unknown_chain', `${name} does not serve chain ${JSON.stringify(chain)}`);
      if (curve !== 'ed25519') throw new ValidationError('key', [{ path: 'curve', message: 'Stellar keys are ed25519' }]);
      if (publicKey.length !== 32) throw new ValidationError('key', [{ path: 'publicKey', message: 'an ed25519 public key is 32 bytes' }]);
      return StrKey.encodeEd25519PublicKey(Buffer.from(publicKey));
    },
    async signPayload({ built, key, signerAddress }: SignPayloadInput): Promise<Contribution> {
      // Sign only what the payload itself hashes to, never a digest we are merely handed.
      const { payload } = openPayload(built, { signer: true });
      const passphrase = networks.get(payload.chain);
      if (passphrase === undefined) throw new SignerRefusedError('chain', `this signer does not sign for ${payload.chain}`);
      if (payload.network_passphrase !== passphrase) {
        throw new SignerRefusedError('chain', `payload is for network "${payload.network_passphrase}", ${payload.chain} is "${passphrase}"`);
      }
      if (key.curve !== 'ed25519') throw new SignerRefusedError('key', `Stellar needs an ed25519 key, not ${key.curve}`);
      const address = StrKey.encodeEd25519PublicKey(Buffer.from(key.publicKey));
      if (address !== signerAddress) throw new SignerRefusedError('key', `the key controls ${address}, not ${signerAddress}`);
      const signature = await key.sign(fromHex(built.digest, 'built.digest', 32));
      return {
        signer_address: signerAddress,
        public_key: { curve: 'ed25519', hex: toHex(key.publicKey) },
        signature: { encoding: STELLAR_SIGNATURE_ENCODING, hex: toHex(signature), hint: hintOf(key.publicKey) },
      };
    },
  };
  return defineChainSigner(signer);
}
