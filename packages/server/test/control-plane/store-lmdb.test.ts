/**
 * The store contract (store-suite.ts) on LMDB alone: the map is the store (`npm start`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { IntentStore } from '../../src/control-plane/store.js';
import { storeSuite, type OpenedStore } from './store-suite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function opened(path: string, seal: ConstructorParameters<typeof IntentStore>[1]): OpenedStore {
  const store = new IntentStore(path, seal);
  return {
    store,
    async reopen() {
      await store.close();
      return opened(path, seal);
    },
    close: () => store.close(),
  };
}

storeSuite('LMDB', {
  reopenModes: ['same directory'],
  async open(seal) {
    const path = mkdtempSync(join(tmpdir(), 'vault-store-'));
    dirs.push(path);
    // fsync on, as in production: the suite is small.
    return opened(path, { sealReceipt: seal });
  },
});
