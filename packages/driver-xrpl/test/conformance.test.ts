/**
 * The SDK's ChainDriver conformance suite against the devnet: ed25519 and secp256k1 signers,
 * 2-of-3 and weighted lists, on a network whose id needs NetworkID (21337) and one whose id
 * forbids it (1). Outcomes are read from the devnet's own state, never through the driver.
 * Every setup also runs every operation the driver lists (test/operation-cases.ts) end to end.
 */
import { afterAll, beforeAll } from 'vitest';
import { describeChainDriver } from '@vault/sdk/testing';
import { createXrplDriver, type XrplDriver } from '../src/index.js';
import { startXrplDevnet, type XrplDevnet } from '../src/devnet/index.js';
import { conformanceFixture, createSecpKey, signer, type WalletSetup } from './helpers.js';
import { xrplOperationCases } from './operation-cases.js';

const big: { devnet?: XrplDevnet; driver?: XrplDriver } = {};
const legacy: { devnet?: XrplDevnet; driver?: XrplDriver } = {};

beforeAll(async () => {
  big.devnet = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 40 });
  legacy.devnet = await startXrplDevnet({ networkId: 1, closeIntervalMs: 40 });
});
afterAll(async () => {
  await big.devnet?.close();
  await legacy.devnet?.close();
});

// The suite needs the driver when it registers its tests; the transports resolve lazily.
const lazyFetch = (target: typeof big) =>
  ((input: string, init: RequestInit) => fetch(input.replace('http://devnet/', target.devnet?.url ?? ''), init)) as never;

const bigDriver = createXrplDriver({ chains: { 'xrpl:local': { url: 'http://devnet/', networkId: 21337, fetch: lazyFetch(big) } } });
const legacyDriver = createXrplDriver({ chains: { 'xrpl:testnet': { url: 'http://devnet/', networkId: 1, fetch: lazyFetch(legacy) } } });

const cases: { name: string; target: typeof big; driver: XrplDriver; setup: WalletSetup; secpOutsider?: boolean }[] = [
  { name: 'xrpl ed25519 2-of-3 (NetworkID 21337)', target: big, driver: bigDriver, setup: { chain: 'xrpl:local', curves: ['ed25519', 'ed25519', 'ed25519'], quorum: 2 } },
  {
    name: 'xrpl secp256k1 weighted 3,1,1,2 quorum 4 (NetworkID 21337)',
    target: big,
    driver: bigDriver,
    setup: { chain: 'xrpl:local', curves: ['secp256k1', 'secp256k1', 'secp256k1', 'secp256k1'], weights: [3, 1, 1, 2], quorum: 4 },
    secpOutsider: true,
  },
  {
    name: 'xrpl secp256k1 2-of-3 (network 1, no NetworkID)',
    target: legacy,
    driver: legacyDriver,
    setup: { chain: 'xrpl:testnet', curves: ['secp256k1', 'secp256k1', 'secp256k1'], quorum: 2 },
    secpOutsider: true,
  },
  {
    name: 'xrpl ed25519 weighted 1,2,1,1 quorum 3, mixed with secp256k1 (network 1)',
    target: legacy,
    driver: legacyDriver,
    setup: { chain: 'xrpl:testnet', curves: ['ed25519', 'ed25519', 'secp256k1', 'ed25519'], weights: [1, 2, 1, 1], quorum: 3 },
  },
];

for (const c of cases) {
  describeChainDriver({
    name: c.name,
    driver: c.driver,
    signer,
    setup: async () => conformanceFixture(c.target.devnet as XrplDevnet, c.setup, c.secpOutsider ? createSecpKey() : undefined),
    confirmIntervalMs: 50,
    confirmAttempts: 100,
    operations: xrplOperationCases(() => c.target.devnet as XrplDevnet, c.setup),
  });
}
