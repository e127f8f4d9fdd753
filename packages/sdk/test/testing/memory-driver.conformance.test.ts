import { createMemoryDriver, createMemorySigner, describeChainDriver, MemoryLedger } from '../../src/testing/index.js';
import { expect } from 'vitest';
import { memoryFixture } from './fixture.js';

const ledger = new MemoryLedger({ chain: 'memory:devnet' });

describeChainDriver({
  name: 'memory',
  driver: createMemoryDriver({ ledger }),
  signer: createMemorySigner({ chains: [ledger.chain] }),
  setup: async () => memoryFixture(ledger),
  operations: [
    {
      name: 'transfer with a memo',
      intent: (f) => ({ destination: f.destination, amount: '777', memo: 'invoice 7' }),
      verify: async (f) => {
        expect(await f.ledger.balance(f.destination)).toBe(777n);
      },
    },
  ],
});
