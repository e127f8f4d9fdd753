import { describe, expect, it } from 'vitest';
import { hexToBytes, keccak256, recoverAddress, toBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { compressPublicKey, publicKeyToEvmAddress, recoverEvmAddress } from './secp256k1.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

describe('secp256k1 (sync, public data only)', () => {
  it('recovers the same address as viem for random keys and digests', async () => {
    for (let i = 0; i < 12; i++) {
      const privateKey = generatePrivateKey();
      const account = privateKeyToAccount(privateKey);
      const hash = keccak256(toBytes(`message ${i} ${Math.random()}`));
      const sig = await sign({ hash, privateKey });
      const viemAddress = await recoverAddress({ hash, signature: sig });
      const ours = recoverEvmAddress(hexToBytes(hash), BigInt(sig.r), BigInt(sig.s), sig.yParity ?? 0);
      expect(ours).toBe(viemAddress);
      expect(ours).toBe(account.address);
      // The wrong recovery bit gives another address, never the signer's.
      expect(recoverEvmAddress(hexToBytes(hash), BigInt(sig.r), BigInt(sig.s), 1 - (sig.yParity ?? 0))).not.toBe(account.address);
    }
  });

  it('derives the address from compressed and uncompressed keys', () => {
    for (let i = 0; i < 8; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const uncompressed = hexToBytes(account.publicKey);
      expect(publicKeyToEvmAddress(uncompressed)).toBe(account.address);
      expect(publicKeyToEvmAddress(compressPublicKey(uncompressed))).toBe(account.address);
    }
  });

  it('rejects what is not a key or not a signature', async () => {
    expect(publicKeyToEvmAddress(new Uint8Array(32))).toBeNull();
    expect(publicKeyToEvmAddress(Uint8Array.from([2, ...new Array<number>(32).fill(0xff)]))).toBeNull();
    expect(publicKeyToEvmAddress(Uint8Array.from([4, ...new Array<number>(64).fill(1)]))).toBeNull();
    expect(() => compressPublicKey(new Uint8Array(33))).toThrow();
    const privateKey = generatePrivateKey();
    const hash = keccak256(toBytes('x'));
    const sig = await sign({ hash, privateKey });
    const [r, s, v] = [BigInt(sig.r), BigInt(sig.s), sig.yParity ?? 0];
    expect(recoverEvmAddress(hexToBytes(hash).subarray(1), r, s, v)).toBeNull();
    expect(recoverEvmAddress(hexToBytes(hash), 0n, s, v)).toBeNull();
    expect(recoverEvmAddress(hexToBytes(hash), r, N - s, v)).toBeNull(); // high-s (EIP-2)
    expect(recoverEvmAddress(hexToBytes(hash), r, s, 2)).toBeNull();
    expect(recoverEvmAddress(hexToBytes(hash), N, s, v)).toBeNull(); // r out of range
  });
});
