/**
 * The plugin entry as the reference servers use it: the package root's createDriver / createSigner
 * with options that went through JSON, pointed at the devnet, running a payment end to end (build,
 * sign at quorum, assemble, submit, confirm, payloadFate); and bad options refused with the path.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DriverRegistry, ValidationError, normalizeIntent, type ChainDriver, type ChainSigner, type DriverPlugin, type SigningKey } from '@vault/sdk';
import * as root from '../src/index.js';
import { startDevnet } from '../src/devnet/index.js';
import { CHAIN, multisigWallet, plainAccount } from './helpers.js';

const devnet = await startDevnet();
afterAll(() => devnet.close());

const plugin: DriverPlugin<root.StellarPluginOptions> = root;
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe('plugin entry (createDriver / createSigner from the package root)', () => {
  it('loads from JSON options and moves a payment end to end', async () => {
    const options = json({ chains: [{ chain: CHAIN, horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase, txTimeoutSeconds: 120, timeoutPolls: 2, timeoutPollIntervalMs: 10 }] });
    const driver = (await plugin.createDriver(options)) as ChainDriver;
    const signer = (await plugin.createSigner(options)) as ChainSigner;
    // Both register like any driver / signer the servers load.
    expect(new DriverRegistry<ChainDriver>([driver]).chains()).toEqual([CHAIN]);
    expect(new DriverRegistry<ChainSigner>([signer]).chains()).toEqual([CHAIN]);
    expect(driver.name).toBe('@vault/driver-stellar');

    const w = await multisigWallet(devnet, { weights: [1, 1, 1], quorum: 2 });
    const dest = await plainAccount(devnet);
    const before = devnet.ledger.nativeBalance(dest.publicKey());
    const params = await driver.fetchParams({ wallet: w.wallet });
    expect(params).toMatchObject({ kind: 'stellar' });
    expect((params as { max_time: number }).max_time).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 120);
    const built = driver.buildPayload({ intent: normalizeIntent({ wallet: w.wallet.wallet, destination: dest.publicKey(), amount: '4200' }), wallet: w.wallet, params });
    const members = (w.wallet.control as { signers: { address: string }[] }).signers;
    const address = signer.deriveAddress({ chain: CHAIN, publicKey: (w.keys[0] as SigningKey).publicKey, curve: 'ed25519' });
    expect(address).toBe(members[0]!.address);
    const contributions = await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: w.keys[i] as SigningKey, signerAddress: members[i]!.address })));
    const assembled = driver.assemble({ built, contributions, wallet: w.wallet });
    if (!assembled.ok) throw new Error(`short: ${JSON.stringify(assembled)}`);
    expect(await driver.payloadFate!({ chain: CHAIN, built })).toMatchObject({ fate: 'live' });
    expect(await driver.submit({ chain: CHAIN, blob: assembled.blob })).toMatchObject({ status: 'submitted' });
    expect(await driver.confirm({ chain: CHAIN, txHash: assembled.txHash, built })).toMatchObject({ status: 'confirmed' });
    expect(await driver.payloadFate!({ chain: CHAIN, built })).toMatchObject({ fate: 'applied' });
    expect(devnet.ledger.nativeBalance(dest.publicKey()) - before).toBe(4200n);
  });

  it('the built package, imported by name as the servers do, exports both factories', async () => {
    const spec = '@vault/driver-stellar';
    const mod = (await import(spec)) as Partial<DriverPlugin<root.StellarPluginOptions>>;
    expect(typeof mod.createDriver).toBe('function');
    expect(typeof mod.createSigner).toBe('function');
    const driver = await mod.createDriver!(json({ chains: [{ chain: CHAIN, horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase }] }));
    expect(driver.chains).toEqual([CHAIN]);
    expect(typeof driver.payloadFate).toBe('function');
  });

  it('a known network needs no passphrase; the name option names driver and signer', async () => {
    const options = json({ chains: [{ chain: 'stellar:testnet', horizonUrl: 'https://horizon-testnet.stellar.org' }], name: 'stellar-ops' });
    const driver = await plugin.createDriver(options);
    const signer = await plugin.createSigner(options);
    expect(driver.chains).toEqual(['stellar:testnet']);
    expect(driver.name).toBe('stellar-ops');
    expect(signer.name).toBe('stellar-ops/signer');
    expect(root.parsePluginOptions(options).chains['stellar:testnet']?.networkPassphrase).toBe(root.STELLAR_NETWORKS['stellar:testnet']);
  });

  const url = 'http://127.0.0.1:1';
  const pp = 'Standalone Network ; February 2017';
  const bad: [string, unknown, string][] = [
    ['not an object', 'chains', ''],
    ['an array', [], ''],
    ['unknown top-level option', { chains: [{ chain: CHAIN, horizonUrl: url }], horizon: url }, 'horizon'],
    ['no chains', {}, 'chains'],
    ['empty chains', { chains: [] }, 'chains'],
    ['chains as a map', { chains: { [CHAIN]: { horizonUrl: url } } }, 'chains'],
    ['chain entry not an object', { chains: ['stellar:local'] }, 'chains.0'],
    ['unknown chain option', { chains: [{ chain: CHAIN, horizonUrl: url, secret: 'S…' }] }, 'chains.0.secret'],
    ['chain of another family', { chains: [{ chain: 'xrpl:testnet', horizonUrl: url, networkPassphrase: pp }] }, 'chains.0.chain'],
    ['chain listed twice', { chains: [{ chain: CHAIN, horizonUrl: url }, { chain: CHAIN, horizonUrl: url }] }, 'chains.1.chain'],
    ['no URL', { chains: [{ chain: CHAIN }] }, 'chains.0.horizonUrl'],
    ['not a URL', { chains: [{ chain: CHAIN, horizonUrl: 'horizon.local' }] }, 'chains.0.horizonUrl'],
    ['ftp URL', { chains: [{ chain: CHAIN, horizonUrl: 'ftp://127.0.0.1/' }] }, 'chains.0.horizonUrl'],
    ['URL with credentials', { chains: [{ chain: CHAIN, horizonUrl: 'https://user:pw@horizon.example' }] }, 'chains.0.horizonUrl'],
    ['unknown network without passphrase', { chains: [{ chain: 'stellar:private', horizonUrl: url }] }, 'chains.0.networkPassphrase'],
    ['empty passphrase', { chains: [{ chain: 'stellar:private', horizonUrl: url, networkPassphrase: '' }] }, 'chains.0.networkPassphrase'],
    ['known network, other passphrase', { chains: [{ chain: 'stellar:pubnet', horizonUrl: url, networkPassphrase: pp }] }, 'chains.0.networkPassphrase'],
    ['timeout not an integer', { chains: [{ chain: CHAIN, horizonUrl: url, txTimeoutSeconds: 1.5 }] }, 'chains.0.txTimeoutSeconds'],
    ['timeout zero', { chains: [{ chain: CHAIN, horizonUrl: url, txTimeoutSeconds: 0 }] }, 'chains.0.txTimeoutSeconds'],
    ['polls as a string', { chains: [{ chain: CHAIN, horizonUrl: url, timeoutPolls: '5' }] }, 'chains.0.timeoutPolls'],
    ['negative interval', { chains: [{ chain: CHAIN, horizonUrl: url, timeoutPollIntervalMs: -1 }] }, 'chains.0.timeoutPollIntervalMs'],
    ['empty name', { chains: [{ chain: CHAIN, horizonUrl: url }], name: '' }, 'name'],
  ];
  it.each(bad)('refuses %s with a ValidationError naming the option path', async (_what, options, path) => {
    for (const create of [plugin.createDriver, plugin.createSigner]) {
      let caught: unknown;
      try {
        await create(options as root.StellarPluginOptions);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ValidationError);
      expect((caught as ValidationError).path).toBe(path);
      expect((caught as Error).message).toContain(path === '' ? 'invalid options' : `invalid options.${path}:`);
    }
  });
});
