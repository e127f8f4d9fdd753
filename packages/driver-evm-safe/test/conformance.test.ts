import { afterAll } from 'vitest';
import { describeChainDriver } from '@vault/sdk/testing';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmSafeDriver } from '../src/index.js';
import { createEvmSafeSigner } from '../src/signer.js';
import { startEvmDevnet } from '../src/devnet/index.js';
import { independentReader, safeWallet, secpKey } from './helpers.js';

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());

const chain = devnet.chain;
const driver = createEvmSafeDriver({
  chains: { [chain]: { rpcUrl: devnet.rpcUrl, pollingInterval: 50 } },
  executor: privateKeyToAccount(devnet.accounts.executor.privateKey),
});
const FUNDED = 10n ** 18n;

describeChainDriver({
  name: 'evm-safe (anvil, Safe v1.4.1, 2-of-3)',
  driver,
  signer: createEvmSafeSigner({ chains: [chain] }),
  confirmIntervalMs: 50,
  setup: async () => {
    // A fresh 2-of-3 Safe per check, so checks never share funds or nonces.
    const keys = [secpKey(), secpKey(), secpKey()];
    const safe = await devnet.createSafe({ owners: keys.map((k) => k.address), threshold: 2, balance: FUNDED });
    return {
      chain,
      wallet: safeWallet(chain, safe, keys, 2),
      keys,
      destination: secpKey().address,
      invalidAddresses: [
        `0x${'ab'.repeat(19)}a`, // 39 hex digits
        `0x${'ab'.repeat(21)}`, // 42 hex digits
        'ab'.repeat(20), // no 0x
        '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'.replace('5aA', '5Aa'), // bad EIP-55 checksum
        `0x${'g'.repeat(40)}`, // not hex
        'rN7n7otQDd6FczFgLdSqtcsAUxDkw6fzRH', // an XRPL address
      ],
      fundedAmount: FUNDED.toString(),
      ledger: independentReader(devnet.rpcUrl),
      transferAmount: '1000',
      outsider: secpKey(),
    };
  },
});
