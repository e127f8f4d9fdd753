import { afterAll, expect } from 'vitest';
import { describeChainDriver, type ConformanceFixture } from '@vault/sdk/testing';
import { encodeFunctionData, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmSafeDriver, SAFE_VERSIONS, type SafeVersion } from '../src/index.js';
import { createEvmSafeSigner } from '../src/signer.js';
import { startEvmDevnet, TEST_TOKEN_ABI } from '../src/devnet/index.js';
import { independentReader, opCase, rawRpc, rawTokenBalance, safeWallet, secpKey } from './helpers.js';

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());

const chain = devnet.chain;
// anvil is one node that never reorgs, so its latest block is final; anvil's own `finalized` tag
// trails latest by 64 blocks (test/fate.test.ts runs payloadFate at that tag).
const driver = createEvmSafeDriver({
  chains: { [chain]: { rpcUrl: devnet.rpcUrl, pollingInterval: 50, finality: 'latest' } },
  executor: privateKeyToAccount(devnet.accounts.executor.privateKey),
});
const FUNDED = 10n ** 18n;
const url = devnet.rpcUrl;

/** A fresh 2-of-3 Safe of one version per check, so checks never share funds or nonces. */
async function safeFixture(version: SafeVersion, l2: boolean): Promise<ConformanceFixture & { safe: Address }> {
  const keys = [secpKey(), secpKey(), secpKey()];
  const safe = await devnet.createSafe({ owners: keys.map((k) => k.address), threshold: 2, balance: FUNDED, version, l2 });
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
    ledger: independentReader(url),
    transferAmount: '1000',
    outsider: secpKey(),
    safe,
  };
}

// Independent reads: raw JSON-RPC (fetch), never the driver.
const nativeBalance = async (a: string) => BigInt(await rawRpc<string>(url, 'eth_getBalance', [a, 'latest']));
const totalSupply = async (token: Address) => BigInt(await rawRpc<string>(url, 'eth_call', [{ to: token, data: '0x18160ddd' }, 'latest']));
const TOKEN = devnet.token.address;
const TOKENS_HELD = 1_000_000n;

// The suite and every operation case on each of the six contract variants Safe ships.
for (const version of SAFE_VERSIONS) for (const l2 of [false, true]) describeChainDriver({
  name: `evm-safe (anvil, Safe${l2 ? 'L2' : ''} v${version}, 2-of-3)`,
  driver,
  signer: createEvmSafeSigner({ chains: [chain] }),
  confirmIntervalMs: 50,
  setup: () => safeFixture(version, l2),
  // Every operation the driver lists, end to end, checked by raw JSON-RPC reads (the cases of
  // operations.test.ts on a fresh Safe each).
  operations: [
    opCase(
      'native transfer: the Safe pays exactly the amount, the executor the gas',
      async () => {
        const fixture = await safeFixture(version, l2);
        return { fixture, ctx: { safe: fixture.safe } };
      },
      (f) => ({ destination: f.destination, amount: '250000000000000000' }),
      async (f, { safe }) => {
        expect(await nativeBalance(f.destination)).toBe(250000000000000000n);
        expect(await nativeBalance(safe)).toBe(FUNDED - 250000000000000000n);
      },
    ),
    opCase(
      'ERC-20 transfer by asset_issuer',
      async () => {
        const fixture = await safeFixture(version, l2);
        await devnet.setTokenBalance(TOKEN, fixture.safe, TOKENS_HELD);
        return { fixture, ctx: { safe: fixture.safe } };
      },
      (f) => ({ destination: f.destination, amount: '12345', asset_issuer: TOKEN, asset_symbol: 'VTT' }),
      async (f, { safe }) => {
        expect(await rawTokenBalance(url, TOKEN, f.destination as Address)).toBe(12345n);
        expect(await rawTokenBalance(url, TOKEN, safe)).toBe(TOKENS_HELD - 12345n);
      },
    ),
    opCase(
      'contract_call sends data_hex (an ERC-20 transfer) to the destination contract',
      async () => {
        const fixture = await safeFixture(version, l2);
        await devnet.setTokenBalance(TOKEN, fixture.safe, TOKENS_HELD);
        return { fixture, ctx: { safe: fixture.safe } };
      },
      (f) => ({
        destination: TOKEN,
        amount: '0',
        operation: { op: 'contract_call', data_hex: encodeFunctionData({ abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [f.destination as Address, 42n] }) },
      }),
      async (f, { safe }) => {
        expect(await rawTokenBalance(url, TOKEN, f.destination as Address)).toBe(42n);
        expect(await rawTokenBalance(url, TOKEN, safe)).toBe(TOKENS_HELD - 42n);
        expect(await nativeBalance(safe), 'a zero-value call moves no ether').toBe(FUNDED);
      },
    ),
    opCase(
      'issue mints on a token the Safe owns',
      async () => {
        const fixture = await safeFixture(version, l2);
        const token = await devnet.deployToken(fixture.safe);
        return { fixture, ctx: { token, supply: await totalSupply(token) } };
      },
      (f, { token }) => ({ destination: f.destination, amount: '777', asset_issuer: token, operation: { op: 'issue' } }),
      async (f, { token, supply }) => {
        expect(await rawTokenBalance(url, token, f.destination as Address)).toBe(777n);
        expect(await totalSupply(token)).toBe(supply + 777n);
      },
    ),
  ],
});
