import { createMemoryDriver, createMemorySigner, describeChainDriver, MemoryLedger } from '../../src/testing/index.js';
import { memoryFixture } from './fixture.js';

const ledger = new MemoryLedger({ chain: 'memory:devnet' });

describeChainDriver({
  name: 'memory',
  driver: createMemoryDriver({ ledger }),
  signer: createMemorySigner({ chains: [ledger.chain] }),
  setup: async () => memoryFixture(ledger),
});
