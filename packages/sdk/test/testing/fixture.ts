import {
  createSoftwareKey,
  memoryAddress,
  memoryWallet,
  type ConformanceFixture,
  type MemoryLedger,
} from '../../src/testing/index.js';

/** A fresh wallet (weights 1,2,1,1, quorum 3) and an unfunded destination on `ledger`. */
export function memoryFixture(ledger: MemoryLedger): ConformanceFixture {
  const { wallet, keys, address } = memoryWallet({ ledger, members: [1, 2, 1, 1], quorum: 3 });
  return {
    chain: ledger.chain,
    wallet,
    keys,
    destination: memoryAddress(createSoftwareKey().publicKey),
    invalidAddresses: [
      `mem1${'ab'.repeat(19)}a`, // 39 hex digits
      `mem1${'AB'.repeat(20)}`, // uppercase
      `mem2${'ab'.repeat(20)}`, // wrong prefix
      `mem1${'g'.repeat(40)}`, // not hex
      'rN7n7otQDd6FczFgLdSqtcsAUxDkw6fzRH', // another ledger's address
    ],
    fundedAmount: ledger.balance(address).toString(),
    ledger: ledger.reader(),
  };
}
