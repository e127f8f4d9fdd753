import { afterAll, describe, expect, it } from 'vitest';
import { normalizeIntent, ValidationError, type DriverPlugin } from '@vault/sdk';
import * as root from '../src/index.js';
import { createDriver, createSigner, type EvmSafePluginOptions } from '../src/index.js';
import { startEvmDevnet } from '../src/devnet/index.js';
import { rawRpc, safeWallet, secpKey } from './helpers.js';

// The reference servers' contract, checked by the compiler.
({ createDriver, createSigner }) satisfies DriverPlugin<EvmSafePluginOptions>;

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());

const chain = devnet.chain;
const KEY_ENV = 'VAULT_TEST_EVM_EXECUTOR_KEY';
process.env[KEY_ENV] = devnet.accounts.executor.privateKey;
afterAll(() => {
  delete process.env[KEY_ENV];
});

/** What an operator writes in a JSON file, through JSON and back. */
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const options: EvmSafePluginOptions = json({
  chains: [{ chain_id: devnet.chainId, chain, rpc_url: devnet.rpcUrl, finality: 'latest', polling_interval_ms: 50, tokens: [devnet.token.address] }],
  executor_key_env: KEY_ENV,
});
const balance = async (a: string) => BigInt(await rawRpc<string>(devnet.rpcUrl, 'eth_getBalance', [a, 'latest']));

describe('loading as a plugin', () => {
  it('the package root exports createDriver and createSigner', () => {
    expect(typeof root.createDriver).toBe('function');
    expect(typeof root.createSigner).toBe('function');
  });

  it('JSON options run a real transfer end to end: build, sign at quorum, assemble, submit, confirm, payloadFate', async () => {
    const driver = await createDriver(json(options));
    const signer = await createSigner(json(options));
    expect(driver.chains).toEqual([chain]);
    expect(signer.chains).toEqual([chain]);
    const keys = [secpKey(), secpKey(), secpKey()];
    const safe = await devnet.createSafe({ owners: keys.map((k) => k.address), threshold: 2, balance: 10n ** 18n });
    const wallet = safeWallet(chain, safe, keys, 2);
    const destination = secpKey().address;
    const intent = normalizeIntent({ wallet: wallet.wallet, destination, amount: '123456789' });
    const built = driver.buildPayload({ intent, wallet, params: await driver.fetchParams({ wallet }) });
    const contributions = await Promise.all([0, 2].map((i) => signer.signPayload({ built, key: keys[i]!, signerAddress: signer.deriveAddress({ chain, publicKey: keys[i]!.publicKey, curve: 'secp256k1' }) })));
    const assembled = driver.assemble({ built, contributions, wallet });
    if (!assembled.ok) throw new Error(`quorum: ${JSON.stringify(assembled)}`);
    const executorBefore = await balance(devnet.accounts.executor.address);
    await expect(driver.payloadFate({ chain, built })).resolves.toMatchObject({ fate: 'live' });
    expect(await driver.submit({ chain, blob: assembled.blob })).toMatchObject({ status: 'submitted' });
    let outcome = await driver.confirm({ chain, txHash: assembled.txHash, built });
    for (let i = 0; i < 100 && outcome.status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 30));
      outcome = await driver.confirm({ chain, txHash: assembled.txHash, built });
    }
    expect(outcome).toMatchObject({ status: 'confirmed', code: 'ExecutionSuccess' });
    expect(await balance(destination)).toBe(123456789n);
    expect(await balance(devnet.accounts.executor.address), 'the executor from the env var paid the gas').toBeLessThan(executorBefore);
    await expect(driver.payloadFate({ chain, built })).resolves.toMatchObject({ fate: 'applied' });
    // The configured token is reported.
    expect((await driver.balances({ wallet })).map((b) => b.asset)).toEqual(['native', devnet.token.address]);
  });

  it('an executor variable that is unset does not stop the driver (signers never submit); submit names the variable', async () => {
    const driver = createDriver(json({ ...options, executor_key_env: 'VAULT_TEST_EVM_UNSET_KEY' }));
    const keys = devnet.safe.owners.map((o) => secpKey(o.privateKey));
    const wallet = safeWallet(chain, devnet.safe.address, keys, 2);
    const built = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: secpKey().address, amount: '1' }), wallet, params: await driver.fetchParams({ wallet }) });
    const signer = await createSigner(json(options));
    const r = driver.assemble({ built, contributions: await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: keys[i]!, signerAddress: keys[i]!.address }))), wallet });
    if (!r.ok) throw new Error('quorum');
    const submitted = await driver.submit({ chain, blob: r.blob });
    expect(submitted).toMatchObject({ status: 'rejected', code: 'no_executor' });
    expect(submitted.status === 'rejected' && submitted.message).toContain('VAULT_TEST_EVM_UNSET_KEY');
    // Other answers pass through untouched.
    await expect(driver.submit({ chain, blob: 'not json' })).resolves.toMatchObject({ code: 'malformed' });
  });

  it('a relayer URL (per chain) is used as the executor; its authorization comes from a variable', async () => {
    process.env['VAULT_TEST_RELAYER_AUTH'] = 'Bearer test';
    try {
      const driver = createDriver(json({ chains: [{ ...options.chains[0]!, relayer_url: 'http://127.0.0.1:9/relay', relayer_authorization_env: 'VAULT_TEST_RELAYER_AUTH' }], executor_key_env: KEY_ENV }));
      const keys = devnet.safe.owners.map((o) => secpKey(o.privateKey));
      const wallet = safeWallet(chain, devnet.safe.address, keys, 2);
      const built = driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination: secpKey().address, amount: '1' }), wallet, params: await driver.fetchParams({ wallet }) });
      const signer = await createSigner(json(options));
      const r = driver.assemble({ built, contributions: await Promise.all([0, 1].map((i) => signer.signPayload({ built, key: keys[i]!, signerAddress: keys[i]!.address }))), wallet });
      if (!r.ok) throw new Error('quorum');
      await expect(driver.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'rejected', code: 'relayer_error', retriable: true });
      const unsetAuth = createDriver(json({ chains: [{ ...options.chains[0]!, relayer_url: 'http://127.0.0.1:9/relay', relayer_authorization_env: 'VAULT_TEST_UNSET_AUTH' }] }));
      await expect(unsetAuth.submit({ chain, blob: r.blob })).resolves.toMatchObject({ status: 'rejected', code: 'no_executor' });
    } finally {
      delete process.env['VAULT_TEST_RELAYER_AUTH'];
    }
  });
});

describe('bad options are a ValidationError naming the option', () => {
  const base = options.chains[0]!;
  const cases: [string, unknown, string][] = [
    ['not an object', 'x', ''],
    ['no chains', { chains: [] }, 'chains'],
    ['chains not a list', { chains: {} }, 'chains'],
    ['a chain that is not an object', { chains: [1] }, 'chains.0'],
    ['an unknown top-level option', { ...options, executor_key: '0xabc' }, 'executor_key'],
    ['an unknown chain option (camelCase typo)', { chains: [{ ...base, rpcUrl: 'http://x' }] }, 'chains.0.rpcUrl'],
    ['a missing rpc_url', { chains: [{ chain_id: 1 }] }, 'chains.0.rpc_url'],
    ['a non-http rpc_url', { chains: [{ ...base, rpc_url: 'ws://127.0.0.1:8545' }] }, 'chains.0.rpc_url'],
    ['an unparsable rpc_url', { chains: [{ ...base, rpc_url: 'http://' }] }, 'chains.0.rpc_url'],
    ['attack: an rpc_url carrying credentials (they would reach errors and logs)', { chains: [{ ...base, rpc_url: 'https://user:key@rpc.example' }] }, 'chains.0.rpc_url'],
    ['attack: a relayer_url carrying credentials', { chains: [{ ...base, relayer_url: 'https://:token@relay.example' }] }, 'chains.0.relayer_url'],
    ['a chain_id that is not a positive integer', { chains: [{ ...base, chain_id: '31337' }] }, 'chains.0.chain_id'],
    ['chain_id 0', { chains: [{ ...base, chain_id: 0 }] }, 'chains.0.chain_id'],
    ['a chain name that is not eip155:<chain_id>', { chains: [{ ...base, chain: 'eip155:1' }] }, 'chains.0.chain'],
    ['a chain twice', { chains: [base, base] }, 'chains.1.chain_id'],
    ['an unknown finality', { chains: [{ ...base, finality: 'final' }] }, 'chains.0.finality'],
    ['tokens not a list', { chains: [{ ...base, tokens: '0x' }] }, 'chains.0.tokens'],
    ['a bad token address', { chains: [{ ...base, tokens: [devnet.token.address, '0x12'] }] }, 'chains.0.tokens.1'],
    ['a token that is not a string', { chains: [{ ...base, tokens: [7] }] }, 'chains.0.tokens.0'],
    ['a polling interval of 0', { chains: [{ ...base, polling_interval_ms: 0 }] }, 'chains.0.polling_interval_ms'],
    ['an empty native symbol', { chains: [{ ...base, native_symbol: '' }] }, 'chains.0.native_symbol'],
    ['a raw key where a variable name belongs', { ...options, executor_key_env: devnet.accounts.executor.privateKey }, 'executor_key_env'],
    ['both a key and a relayer', { ...options, relayer_url: 'http://127.0.0.1:9' }, 'relayer_url'],
    ['a per-chain relayer that is not a URL', { chains: [{ ...base, relayer_url: 'relay' }] }, 'chains.0.relayer_url'],
    ['relayer authorization without a relayer', { chains: [base], relayer_authorization_env: 'X' }, 'relayer_authorization_env'],
    ['an empty name', { ...options, name: '' }, 'name'],
  ];
  for (const [what, bad, path] of cases) {
    it(what, async () => {
      for (const factory of [createDriver, createSigner]) {
        let err: unknown;
        try {
          await factory(json(bad) as EvmSafePluginOptions);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).path).toBe(path);
        expect((err as Error).message).toContain(path === '' ? 'invalid options' : `options.${path}`);
        expect((err as Error).message, 'never echo a key').not.toContain(devnet.accounts.executor.privateKey.slice(2));
      }
    });
  }

  it('a variable that holds no private key is refused without echoing its value', async () => {
    for (const value of ['not-a-key', `0x${'00'.repeat(32)}`]) {
      process.env['VAULT_TEST_BAD_KEY'] = value;
      try {
        let err: unknown;
        try {
          createDriver(json({ ...options, executor_key_env: 'VAULT_TEST_BAD_KEY' }));
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).path).toBe('executor_key_env');
        expect(JSON.stringify({ m: (err as Error).message, d: (err as ValidationError).details })).not.toContain(value);
        // A signer never reads the variable.
        expect((await createSigner(json({ ...options, executor_key_env: 'VAULT_TEST_BAD_KEY' }))).chains).toEqual([chain]);
      } finally {
        delete process.env['VAULT_TEST_BAD_KEY'];
      }
    }
  });

  it('a key without 0x and a name are accepted; the signer is named after the plugin', async () => {
    process.env['VAULT_TEST_KEY_NO0X'] = devnet.accounts.executor.privateKey.slice(2);
    try {
      const d = createDriver(json({ ...options, executor_key_env: 'VAULT_TEST_KEY_NO0X', name: 'evm-main' }));
      expect(d.name).toBe('evm-main');
      expect((await createSigner(json({ ...options, name: 'evm-main' }))).name).toBe('evm-main/signer');
    } finally {
      delete process.env['VAULT_TEST_KEY_NO0X'];
    }
  });
});
