/**
 * The plugin entry as the reference servers use it: `createDriver` / `createSigner` from the
 * package root, with options that went through JSON, against the devnet over loopback HTTP; and
 * every malformed option refused with a ValidationError naming its path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError, normalizeIntent, type DriverPlugin, type SigningKey } from '@vault/sdk';
import { startXrplDevnet, type XrplDevnet } from '../src/devnet/index.js';
import * as root from '../src/index.js';
import { genesisWallet } from './helpers.js';

let devnet: XrplDevnet;
beforeAll(async () => {
  devnet = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 0 });
});
afterAll(() => devnet.close());

const plugin: DriverPlugin<root.XrplPluginOptions> = root;

describe('plugin entry', () => {
  it('createDriver + createSigner from JSON options run an intent end to end (build, sign at quorum, assemble, submit, confirm, fate)', async () => {
    const options = JSON.parse(JSON.stringify({ name: 'xrpl-local', chains: [{ chain: 'xrpl:local', url: devnet.url, networkId: 21337, lastLedgerOffset: 30 }] }));
    const driver = await plugin.createDriver(options);
    const signer = await plugin.createSigner(options);
    expect(driver.name).toBe('xrpl-local');
    expect(driver.chains).toEqual(['xrpl:local']);
    expect(signer.chains).toEqual(['xrpl:local']);
    expect(signer.name).toBe('xrpl-local/signer');
    const { wallet, keys } = genesisWallet(devnet, { chain: 'xrpl:local', curves: ['ed25519', 'secp256k1', 'ed25519'], quorum: 2 });
    if (wallet.control.kind !== 'native_multisig') throw new Error('native');
    const params = await driver.fetchParams({ wallet });
    expect(params).toMatchObject({ kind: 'xrpl', last_ledger_sequence: devnet.ledger.currentLedgerIndex + 30 });
    const dest = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';
    const before = devnet.ledger.xrpBalance(dest);
    const built = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: dest, amount: '2500000' }), wallet, params });
    const members = wallet.control.signers;
    const contributions = await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: keys[i] as SigningKey, signerAddress: members[i]?.address ?? '' })));
    const assembled = driver.assemble({ built, contributions, wallet });
    if (!assembled.ok) throw new Error('short of quorum');
    expect(await driver.submit({ chain: 'xrpl:local', blob: assembled.blob })).toMatchObject({ status: 'submitted', code: 'tesSUCCESS' });
    devnet.closeLedger();
    expect(await driver.confirm({ chain: 'xrpl:local', txHash: assembled.txHash, built })).toMatchObject({ status: 'confirmed', code: 'tesSUCCESS' });
    expect(devnet.ledger.xrpBalance(dest) - before).toBe(2_500_000n);
    expect(await driver.payloadFate?.({ chain: 'xrpl:local', built })).toMatchObject({ fate: 'applied' });
  });

  it('the public networks get their network id; a contradicting one is refused', () => {
    const d = root.createDriver({ chains: [{ chain: 'xrpl:testnet', url: 'https://s.altnet.rippletest.net:51234/' }] });
    expect(d.chains).toEqual(['xrpl:testnet']);
    expect(root.parsePluginOptions({ chains: [{ chain: 'xrpl:mainnet', url: 'https://xrplcluster.com/' }] }).chains['xrpl:mainnet']).toEqual({ url: 'https://xrplcluster.com/', networkId: 0 });
    const all = root.parsePluginOptions({
      chains: [{ chain: 'xrpl:x', url: 'http://127.0.0.1:5005', networkId: 21337, test: true, apiVersion: 1, lastLedgerOffset: 5, maxFeeDrops: 1000, iouDecimals: 8, timeoutMs: 1000, historyPageSize: 50, historyMaxPages: 3 }],
    });
    expect(all.chains['xrpl:x']).toEqual({ url: 'http://127.0.0.1:5005', networkId: 21337, test: true, apiVersion: 1, lastLedgerOffset: 5, maxFeeDrops: 1000, iouDecimals: 8, timeoutMs: 1000, historyPageSize: 50, historyMaxPages: 3 });
  });

  const bad: [string, unknown, string][] = [
    ['not an object', 'chains', ''],
    ['unknown top-level option', { chains: [], secret: 'x' }, 'secret'],
    ['empty name', { name: '', chains: [{ chain: 'xrpl:local', url: 'http://a/' }] }, 'name'],
    ['no chains', { chains: [] }, 'chains'],
    ['chains as a map', { chains: { 'xrpl:local': { url: 'http://a/' } } }, 'chains'],
    ['chain entry not an object', { chains: ['xrpl:local'] }, 'chains.0'],
    ['unknown chain option', { chains: [{ chain: 'xrpl:local', url: 'http://a/', seed: 's' }] }, 'chains.0.seed'],
    ['bad chain name', { chains: [{ chain: 'stellar:testnet', url: 'http://a/' }] }, 'chains.0.chain'],
    ['chain twice', { chains: [{ chain: 'xrpl:local', url: 'http://a/' }, { chain: 'xrpl:local', url: 'http://b/' }] }, 'chains.1.chain'],
    ['missing url', { chains: [{ chain: 'xrpl:local' }] }, 'chains.0.url'],
    ['websocket url', { chains: [{ chain: 'xrpl:local', url: 'wss://s.altnet.rippletest.net:51233' }] }, 'chains.0.url'],
    ['url with credentials', { chains: [{ chain: 'xrpl:local', url: 'https://user:pw@example.com/' }] }, 'chains.0.url'],
    ['not a url', { chains: [{ chain: 'xrpl:local', url: 'not a url' }] }, 'chains.0.url'],
    ['network id as text', { chains: [{ chain: 'xrpl:local', url: 'http://a/', networkId: '21337' }] }, 'chains.0.networkId'],
    ['wrong network id for testnet', { chains: [{ chain: 'xrpl:testnet', url: 'http://a/', networkId: 0 }] }, 'chains.0.networkId'],
    ['fractional offset', { chains: [{ chain: 'xrpl:local', url: 'http://a/', lastLedgerOffset: 1.5 }] }, 'chains.0.lastLedgerOffset'],
    ['page size too big', { chains: [{ chain: 'xrpl:local', url: 'http://a/', historyPageSize: 1000 }] }, 'chains.0.historyPageSize'],
    ['test flag as text', { chains: [{ chain: 'xrpl:local', url: 'http://a/', test: 'yes' }] }, 'chains.0.test'],
    ['mainnet with test addresses', { chains: [{ chain: 'xrpl:mainnet', url: 'http://a/', test: true }] }, 'chains.0.test'],
    ['api version 3', { chains: [{ chain: 'xrpl:local', url: 'http://a/', apiVersion: 3 }] }, 'chains.0.apiVersion'],
  ];
  for (const [name, options, path] of bad) {
    it(`refuses ${name} with a ValidationError at options${path ? `.${path}` : ''}`, async () => {
      for (const factory of [root.createDriver, root.createSigner]) {
        let error: unknown;
        try {
          await factory(JSON.parse(JSON.stringify(options)));
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).path).toBe(path);
        expect((error as Error).message).toMatch(new RegExp(`^invalid options${path ? `\\.${path.replace(/\./g, '\\.')}` : ''}: `));
      }
    });
  }
});
