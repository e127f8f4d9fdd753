/**
 * The driver's facts wired into the SDK's guards, as the control plane and the signer run them:
 * wrong-network addresses are blocked, a ticker that disagrees with the on-chain currency code is a
 * counterfeit, and issuing through a blackholed issuer is a burned key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressFacts, normalizeIntent, protectChainFacts, runGuards, type IntentRequest, type ProtectInputs } from '@vault/sdk';
import { classicAddressToXAddress } from 'ripple-address-codec';
import { Wallet } from 'xrpl';
import { startXrplDevnet, type XrplDevnet } from '../src/devnet/index.js';
import { createXrplDriver, type XrplDriver } from '../src/index.js';
import { genesisWallet, submitSingle } from './helpers.js';

let devnet: XrplDevnet;
let driver: XrplDriver;
beforeAll(async () => {
  devnet = await startXrplDevnet({ networkId: 1, closeIntervalMs: 0 });
  driver = createXrplDriver({ chains: { 'xrpl:testnet': { url: devnet.url, networkId: 1 } } });
});
afterAll(() => devnet.close());

const protectBase = { known_destinations: [], burned: [], compliance_cleared: true, attestation_valid: true };

async function guards(request: Omit<IntentRequest, 'wallet'>) {
  const { wallet } = genesisWallet(devnet, { chain: 'xrpl:testnet', curves: ['ed25519', 'ed25519'], quorum: 2 });
  const intent = normalizeIntent({ wallet: wallet.wallet, ...request });
  const facts = await driver.fetchProtectInputs({ intent, wallet });
  const protect: ProtectInputs = { ...protectBase, ...protectChainFacts(facts) };
  return runGuards({ intent, wallet, protect, destination: addressFacts(driver, wallet.chain, intent.destination) });
}

describe('guards over XRPL facts', () => {
  it('network_separation blocks a mainnet X-address on xrpl:testnet', async () => {
    const dest = devnet.faucet().address;
    const report = await guards({ destination: classicAddressToXAddress(dest, false, false), amount: '5' });
    expect(report.blocked).toBe(true);
    expect(report.findings.find((f) => f.guard === 'network_separation')?.detail).toMatch(/mainnet/);
    const ok = await guards({ destination: classicAddressToXAddress(dest, false, true), amount: '5' });
    expect(ok.findings.filter((f) => f.guard === 'network_separation')).toEqual([]);
  });

  it('counterfeit_asset blocks a ticker that is not the on-chain currency code', async () => {
    const issuer = devnet.faucet().address;
    const report = await guards({ destination: devnet.faucet().address, amount: '5', asset_issuer: `${issuer}.USD`, asset_symbol: 'USDC' });
    expect(report.findings).toContainEqual(expect.objectContaining({ guard: 'counterfeit_asset', severity: 'block', detail: expect.stringMatching(/reports symbol USD, the intent says USDC/) }));
  });

  it('burned_key blocks issuing through a blackholed issuer (regular key rrrrrrrrrrrrrrrrrrrrBZbvji, master disabled)', async () => {
    const issuer = Wallet.generate();
    devnet.faucet(issuer.classicAddress);
    expect((await submitSingle(devnet, issuer, { TransactionType: 'SetRegularKey', RegularKey: 'rrrrrrrrrrrrrrrrrrrrBZbvji' }))['engine_result']).toBe('tesSUCCESS');
    expect((await submitSingle(devnet, issuer, { TransactionType: 'AccountSet', SetFlag: 4 }))['engine_result']).toBe('tesSUCCESS');
    devnet.closeLedger();
    expect(await driver.issuerFacts({ chain: 'xrpl:testnet', issuer: issuer.classicAddress })).toMatchObject({ exists: true, blackholed: true });
    const report = await guards({ destination: devnet.faucet().address, amount: '5', asset_issuer: `${issuer.classicAddress}.EUR`, operation: { op: 'issue' } });
    expect(report.findings).toContainEqual(expect.objectContaining({ guard: 'burned_key', severity: 'block' }));
  });
});
