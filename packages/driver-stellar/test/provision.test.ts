/**
 * `createProvisioner` (vault provision) against the devnet over real loopback HTTP: a wallet set up
 * by friendbot or by a key_env funder, checked through the devnet's own state (devnet.ledger),
 * through the driver's controlState, and by moving funds; re-runs that send nothing; mismatches
 * and bad requests refused with the difference or the field named.
 */
import { readFileSync } from 'node:fs';
import { Keypair, Operation } from '@stellar/stellar-base';
import { afterAll, describe, expect, it } from 'vitest';
import {
  RefusedError,
  TransportError,
  ValidationError,
  type DriverPlugin,
  type ProvisionRequest,
  type SigningKey,
  type WalletDescriptor,
  type WalletProvisioner,
} from '@vault/sdk';
import { createSoftwareKey } from '@vault/sdk/testing';
import * as root from '../src/index.js';
import { startDevnet } from '../src/devnet/index.js';
import { controlDifferences, createStellarProvisioner } from '../src/provision.js';
import { CHAIN, buildSignAssemble, driverFor, gOf, plainAccount, signerFor, submitClassic, type WalletSetup } from './helpers.js';

const devnet = await startDevnet();
afterAll(() => devnet.close());
const driver = driverFor(devnet);
const signer = signerFor(devnet);
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const options = json({ chains: [{ chain: CHAIN, horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase, timeoutPolls: 2, timeoutPollIntervalMs: 10 }] });
const plugin: DriverPlugin<root.StellarPluginOptions> = root;
const provisioner = (await plugin.createProvisioner!(options)) as WalletProvisioner;
const FAUCET = { kind: 'faucet', url: `${devnet.url}${devnet.friendbotPath}` } as const;

/** Member keys as Keypairs (to sign straight at the ledger) and as SigningKeys (for the signer). */
function members(n: number): { pairs: Keypair[]; keys: SigningKey[] } {
  const pairs = Array.from({ length: n }, () => Keypair.random());
  return { pairs, keys: pairs.map((p) => createSoftwareKey(p.rawSecretKey())) };
}

function request(keys: SigningKey[], extra: Partial<ProvisionRequest> = {}, weights = keys.map(() => 1)): ProvisionRequest {
  return json({
    wallet: `prov-${Math.random().toString(36).slice(2, 10)}`,
    chain: CHAIN,
    members: keys.map((k, i) => ({ address: gOf(k), weight: weights[i] as number, curve: 'ed25519' as const })),
    quorum: 2,
    funding: FAUCET,
    ...extra,
  });
}

const sorted = (xs: { address: string; weight: number }[]) => [...xs].map(({ address, weight }) => ({ address, weight })).sort((a, b) => (a.address < b.address ? -1 : 1));
const sent = () => devnet.ledger.txOrder.length;
const addressOf = (d: WalletDescriptor) => (d.control as { address: string }).address;

async function refusal(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a refusal');
}

describe('provision with friendbot (faucet)', () => {
  const { pairs, keys } = members(3);
  const req = request(keys);
  let descriptor: WalletDescriptor;

  it('sets a 2-of-3 up: descriptor, controlState and the ledger agree; master weight 0', async () => {
    const result = await provisioner.provision(req);
    descriptor = result.descriptor;
    expect(result.changed).toBe(true);
    expect(result.transactions.map((t) => t.what.split(':')[0])).toEqual(['fund', 'set_signers']);
    for (const t of result.transactions) expect(devnet.ledger.transaction(t.txHash)?.successful).toBe(true);
    const address = addressOf(descriptor);
    expect(descriptor).toEqual({
      wallet: req.wallet,
      chain: CHAIN,
      control: {
        kind: 'native_multisig',
        address,
        signers: keys.map((k, i) => ({ address: gOf(k), curve: 'ed25519', weight: 1, label: `member-${i + 1}` })),
        quorum: 2,
      },
    });
    // The devnet's own view, not the driver's.
    const acc = devnet.ledger.account(address)!;
    expect(acc.masterWeight).toBe(0);
    expect(acc.thresholds).toEqual({ low: 2, med: 2, high: 2 });
    expect(sorted(acc.signers.map((s) => ({ address: s.key, weight: s.weight })))).toEqual(sorted(keys.map((k) => ({ address: gOf(k), weight: 1 }))));
    // What the lead's reconcile checks: the driver's controlState reproduces the descriptor.
    const state = await driver.controlState({ wallet: descriptor });
    expect(state.address).toBe(address);
    expect(state.quorum).toBe(2);
    expect(state.masterKeyEnabled).toBe(false);
    expect(sorted(state.members)).toEqual(sorted((descriptor.control as { signers: { address: string; weight: number }[] }).signers));
    await expect(driver.fetchParams({ wallet: descriptor })).resolves.toMatchObject({ kind: 'stellar' });
  });

  it('moves funds only through the multisig: one member alone is refused by the ledger; a quorum transfer confirms', async () => {
    const address = addressOf(descriptor);
    const dest = await plainAccount(devnet);
    const before = devnet.ledger.nativeBalance(dest.publicKey());
    const alone = await submitClassic(devnet, address, [Operation.payment({ destination: dest.publicKey(), asset: (await import('@stellar/stellar-base')).Asset.native(), amount: '1' })], [pairs[0]!]);
    expect(alone.status).toBe(400);
    expect(JSON.stringify(alone.body)).toContain('tx_bad_auth');
    const w: WalletSetup = { wallet: descriptor, keys, address, master: Keypair.random() };
    const short = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '1' }, [2]);
    expect(short.assembled).toMatchObject({ ok: false, reason: 'short_of_quorum' });
    const r = await buildSignAssemble(driver, signer, w, { destination: dest.publicKey(), amount: '12345' }, [0, 2]);
    if (!r.assembled.ok) throw new Error('short of quorum');
    expect(await driver.submit({ chain: CHAIN, blob: r.assembled.blob })).toMatchObject({ status: 'submitted', code: 'tx_success' });
    expect(await driver.confirm({ chain: CHAIN, txHash: r.assembled.txHash, built: r.built })).toMatchObject({ status: 'confirmed' });
    expect(devnet.ledger.nativeBalance(dest.publicKey()) - before).toBe(12345n);
  });

  it('a re-run with existing sends nothing and leaves the ledger untouched', async () => {
    const address = addressOf(descriptor);
    const seq = devnet.ledger.account(address)!.seq;
    const count = sent();
    const again = await provisioner.provision({ ...req, existing: descriptor });
    expect(again).toEqual({ descriptor, changed: false, transactions: [] });
    // Labels: the request's, else the earlier run's; they never touch the ledger.
    const relabelled = { ...descriptor, control: { ...descriptor.control, signers: (descriptor.control as { signers: object[] }).signers.map((x, i) => ({ ...x, label: `ops-${i}` })) } } as WalletDescriptor;
    const kept = await provisioner.provision({ ...req, members: req.members.map((m, i) => (i === 0 ? { ...m, label: 'alice' } : m)), existing: relabelled });
    expect((kept.descriptor.control as { signers: { label: string }[] }).signers.map((x) => x.label)).toEqual(['alice', 'ops-1', 'ops-2']);
    expect(kept.changed).toBe(false);
    expect(devnet.ledger.account(address)!.seq).toBe(seq);
    expect(sent()).toBe(count);
  });

  it('a re-run whose request differs from the ledger is an error naming the difference, and changes nothing', async () => {
    const count = sent();
    const q = await refusal(provisioner.provision({ ...req, quorum: 3, existing: descriptor }));
    expect(q).toBeInstanceOf(RefusedError);
    expect(q.message).toContain('quorum on ledger 2, requested 3');
    expect(q.message).toContain('high threshold on ledger 2, requested 3');
    const weights = await refusal(provisioner.provision({ ...req, members: req.members.map((m, i) => ({ ...m, weight: i === 0 ? 2 : 1 })), existing: descriptor }));
    expect(weights.message).toContain(`weight of ${gOf(keys[0]!)} on ledger 1, requested 2`);
    const other = Keypair.random().publicKey();
    const swapped = await refusal(provisioner.provision({ ...req, members: [...req.members.slice(0, 2), { address: other, weight: 1, curve: 'ed25519' }], existing: descriptor }));
    expect(swapped.message).toContain(`signer ${gOf(keys[2]!)} (weight 1) on ledger, not requested`);
    expect(swapped.message).toContain(`signer ${other} requested (weight 1), not on ledger`);
    const gone = { ...descriptor, control: { ...descriptor.control, address: Keypair.random().publicKey() } } as WalletDescriptor;
    const missing = await refusal(provisioner.provision({ ...req, existing: gone }));
    expect(missing).toBeInstanceOf(RefusedError);
    expect(missing.message).toMatch(/does not exist .*not creating another one/);
    expect(sent()).toBe(count);
  });

  it('survives a Horizon 504 on submission: the fate of the set-up transaction decides', async () => {
    devnet.faults.submitTimeout = 1;
    const { keys: k } = members(2);
    const result = await provisioner.provision(request(k, { quorum: 2 }));
    expect(devnet.faults.submitTimeout).toBe(0);
    expect(result.changed).toBe(true);
    expect(devnet.ledger.transaction(result.transactions[1]!.txHash)?.successful).toBe(true);
    expect(controlDifferences((await driver.account({ chain: CHAIN, address: addressOf(result.descriptor) }))!, (result.descriptor.control as { signers: { address: string; weight: number }[] }).signers, 2)).toEqual([]);
  });

  it('a faucet that fails names the step; an unreachable one is a TransportError', async () => {
    const { keys: k } = members(2);
    const notFound = await refusal(provisioner.provision(request(k, { funding: { kind: 'faucet', url: `${devnet.url}/no-friendbot` } })));
    expect(notFound).toBeInstanceOf(RefusedError);
    expect(notFound.message).toMatch(/step fund: http_404 friendbot answered 404/);
    const closed = await startDevnet();
    const url = `${closed.url}/friendbot`;
    await closed.close();
    const down = await refusal(provisioner.provision(request(k, { funding: { kind: 'faucet', url } })));
    expect(down).toBeInstanceOf(TransportError);
    expect(down.message).toMatch(/step fund: friendbot .* could not be reached/);
  });

  it('a set-up step the ledger refuses names the step and the stranded account', async () => {
    const poor = await startDevnet({ friendbotAmount: 15_000_000n }); // 1.5 XLM: too little for three signers
    try {
      const p = createStellarProvisioner({ chains: { [CHAIN]: { horizonUrl: poor.url, networkPassphrase: poor.networkPassphrase } } });
      const e = await refusal(p.provision(request(members(3).keys, { funding: { kind: 'faucet', url: `${poor.url}/friendbot` } })));
      expect(e).toBeInstanceOf(RefusedError);
      expect(e.message).toMatch(/step set_signers: tx_failed:op_low_reserve .*account G[A-Z0-9]{55} was funded but not set up/);
      expect((e as RefusedError).data).toMatchObject({ step: 'set_signers', code: 'tx_failed:op_low_reserve' });
    } finally {
      await poor.close();
    }
  });

  it('refuses a Horizon serving another network before sending anything', async () => {
    const wrong = createStellarProvisioner({ chains: { [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: 'Test SDF Network ; September 2015' } } });
    const { keys: k } = members(2);
    const count = sent();
    const e = await refusal(wrong.provision(request(k)));
    expect(e).toBeInstanceOf(RefusedError);
    expect((e as RefusedError).data).toMatchObject({ reason: 'network_mismatch' });
    expect(sent()).toBe(count);
  });
});

describe('provision with a key_env funder (createAccount)', () => {
  it('creates, funds and sets the account up in one all-or-nothing transaction', async () => {
    const funder = await plainAccount(devnet);
    const p = createStellarProvisioner({ chains: { [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase, timeoutPollIntervalMs: 10 } }, env: { FUNDER_SECRET: funder.secret() } });
    const { keys } = members(3);
    const funderBefore = devnet.ledger.nativeBalance(funder.publicKey());
    const result = await p.provision(request(keys, { funding: { kind: 'key_env', env: 'FUNDER_SECRET' }, fundAmount: '50000000', quorum: 3 }, [2, 1, 1]));
    expect(result.transactions).toHaveLength(1);
    expect(result.transactions[0]!.what).toMatch(/^create_account: G[A-Z0-9]{55} created with 50000000 stroops from /);
    const address = addressOf(result.descriptor);
    const rec = devnet.ledger.transaction(result.transactions[0]!.txHash)!;
    expect(rec.source).toBe(funder.publicKey());
    expect(rec.operationCount).toBe(5);
    expect(devnet.ledger.nativeBalance(address)).toBe(50_000_000n);
    expect(funderBefore - devnet.ledger.nativeBalance(funder.publicKey())).toBe(50_000_000n + 500n);
    const acc = devnet.ledger.account(address)!;
    expect(acc.masterWeight).toBe(0);
    expect(acc.thresholds).toEqual({ low: 3, med: 3, high: 3 });
    expect(JSON.stringify(result)).not.toContain(funder.secret());
    const state = await driver.controlState({ wallet: result.descriptor });
    expect(sorted(state.members)).toEqual(sorted(keys.map((k, i) => ({ address: gOf(k), weight: [2, 1, 1][i]! }))));
    expect(state.quorum).toBe(3);
  });

  it('funds the default amount (PROVISION_DEFAULT_FUND_STROOPS) when fundAmount is absent', async () => {
    const funder = await plainAccount(devnet);
    const p = createStellarProvisioner({ chains: { [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase } }, env: { F: funder.secret() } });
    const result = await p.provision(request(members(2).keys, { funding: { kind: 'key_env', env: 'F' } }));
    expect(devnet.ledger.nativeBalance(addressOf(result.descriptor))).toBe(BigInt(root.PROVISION_DEFAULT_FUND_STROOPS));
  });

  it('a missing or invalid variable is a ValidationError naming funding.env, never showing the value', async () => {
    const bogus = 'SNOTAREALSECRETBUTSHOULDNEVERAPPEARINANERRORMESSAGEXXXXXXXXXXXX';
    const p = createStellarProvisioner({ chains: { [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase } }, env: { BAD: bogus, EMPTY: '' } });
    const count = sent();
    for (const env of ['UNSET_VARIABLE', 'BAD', 'EMPTY']) {
      const e = await refusal(p.provision(request(members(2).keys, { funding: { kind: 'key_env', env } })));
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).path).toBe('funding.env');
      expect(e.message).toContain(env);
      expect(JSON.stringify({ m: e.message, d: (e as ValidationError).data })).not.toContain(bogus);
    }
    expect(sent()).toBe(count);
  });

  it('the default plugin reads process.env', async () => {
    const funder = await plainAccount(devnet);
    process.env['VAULT_TEST_STELLAR_FUNDER'] = funder.secret();
    try {
      const result = await provisioner.provision(request(members(2).keys, { funding: { kind: 'key_env', env: 'VAULT_TEST_STELLAR_FUNDER' }, fundAmount: '30000000' }));
      expect(devnet.ledger.nativeBalance(addressOf(result.descriptor))).toBe(30_000_000n);
    } finally {
      delete process.env['VAULT_TEST_STELLAR_FUNDER'];
    }
  });

  it('a funder that does not exist, and an amount below the reserve, fail naming the step; nothing is created', async () => {
    const unfunded = Keypair.random();
    const p = createStellarProvisioner({ chains: { [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase } }, env: { NOPE: unfunded.secret() } });
    const e = await refusal(p.provision(request(members(2).keys, { funding: { kind: 'key_env', env: 'NOPE' } })));
    expect(e).toBeInstanceOf(RefusedError);
    expect(e.message).toContain(`step create_account: op_no_source_account funding account ${unfunded.publicKey()} does not exist`);
    expect(e.message).not.toContain(unfunded.secret());

    const funder = await plainAccount(devnet);
    const q = createStellarProvisioner({ chains: { [CHAIN]: { horizonUrl: devnet.url, networkPassphrase: devnet.networkPassphrase } }, env: { F: funder.secret() } });
    const before = devnet.ledger.nativeBalance(funder.publicKey());
    const accounts = devnet.ledger.accounts.size;
    // 1 XLM creates an account, but three signers need (2 + 3) x 0.5 XLM: the set-up fails and,
    // being one transaction, takes the creation with it.
    const low = await refusal(q.provision(request(members(3).keys, { funding: { kind: 'key_env', env: 'F' }, fundAmount: '10000000' })));
    expect(low).toBeInstanceOf(RefusedError);
    expect(low.message).toMatch(/step create_account: tx_failed:op_low_reserve/);
    expect((low as RefusedError).data).toMatchObject({ reason: 'provision_failed', step: 'create_account', code: 'tx_failed:op_low_reserve' });
    expect(devnet.ledger.accounts.size).toBe(accounts);
    expect(before - devnet.ledger.nativeBalance(funder.publicKey())).toBe(500n); // the fee only (5 operations)
  });
});

describe('bad requests name the field and send nothing', () => {
  const { keys } = members(3);
  const base = request(keys);
  const m = base.members;
  const M = 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAAGZQ';
  const cases: [string, Record<string, unknown>, string][] = [
    ['no members', { members: [] }, 'members'],
    ['21 members', { members: Array.from({ length: 21 }, () => ({ address: Keypair.random().publicKey(), weight: 1, curve: 'ed25519' })) }, 'members'],
    ['a secp256k1 member', { members: [m[0], { ...m[1], curve: 'secp256k1', address: '0x52908400098527886E0F7030069857D2E4169EE7' }, m[2]] }, 'members.1.curve'],
    ['an invalid address', { members: [m[0], m[1], { ...m[2], address: 'GABC' }] }, 'members.2.address'],
    ['a secret seed as address', { members: [{ ...m[0], address: Keypair.random().secret() }] }, 'members.0.address'],
    ['a muxed address', { members: [{ ...m[0], address: M }, m[1]] }, 'members.0.address'],
    ['a duplicate member', { members: [m[0], m[1], { ...m[0] }] }, 'members.2.address'],
    ['weight 0', { members: [{ ...m[0], weight: 0 }, m[1], m[2]] }, 'members.0.weight'],
    ['weight 256', { members: [m[0], { ...m[1], weight: 256 }, m[2]] }, 'members.1.weight'],
    ['a fractional weight', { members: [m[0], { ...m[1], weight: 1.5 }, m[2]] }, 'members.1.weight'],
    ['an empty label', { members: [{ ...m[0], label: '' }, m[1]] }, 'members.0.label'],
    ['an unknown member field', { members: [{ ...m[0], wieght: 1 }, m[1]] }, 'members.0.wieght'],
    ['quorum 0', { quorum: 0 }, 'quorum'],
    ['an unreachable quorum', { quorum: 4 }, 'quorum'],
    ['a chain not served', { chain: 'stellar:pubnet' }, 'chain'],
    ['an empty wallet id', { wallet: '' }, 'wallet'],
    ['an unknown field', { fundamount: '1' }, 'fundamount'],
    ['an unknown funding kind', { funding: { kind: 'airdrop' } }, 'funding.kind'],
    ['a faucet URL that is not http(s)', { funding: { kind: 'faucet', url: 'ftp://friendbot.example' } }, 'funding.url'],
    ['a faucet URL with credentials', { funding: { kind: 'faucet', url: 'https://u:p@friendbot.example' } }, 'funding.url'],
    ['an unknown faucet field', { funding: { ...FAUCET, amount: 5 } }, 'funding.amount'],
    ['fundAmount with friendbot', { fundAmount: '100' }, 'fundAmount'],
    ['a bad env name', { funding: { kind: 'key_env', env: 'NOT-A-NAME' } }, 'funding.env'],
    ['an unknown key_env field', { funding: { kind: 'key_env', env: 'X', secret: 'S' } }, 'funding.secret'],
    ['a decimal fundAmount', { funding: { kind: 'key_env', env: 'X' }, fundAmount: '1.5' }, 'fundAmount'],
    ['a zero fundAmount', { funding: { kind: 'key_env', env: 'X' }, fundAmount: '0' }, 'fundAmount'],
    ['a fundAmount beyond int64', { funding: { kind: 'key_env', env: 'X' }, fundAmount: '9223372036854775808' }, 'fundAmount'],
  ];
  for (const [what, patch, path] of cases) {
    it(`${what} -> ${path}`, async () => {
      const count = sent();
      const e = await refusal(provisioner.provision({ ...base, ...patch } as ProvisionRequest));
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).path).toBe(path);
      expect(e.message).toContain(`invalid request.${path}`);
      expect(sent()).toBe(count);
    });
  }

  it('existing for another wallet, another chain, another kind, or malformed is refused by field', async () => {
    const existing: WalletDescriptor = {
      wallet: base.wallet,
      chain: CHAIN,
      control: { kind: 'native_multisig', address: Keypair.random().publicKey(), signers: m.map((x, i) => ({ ...x, label: `member-${i + 1}` })), quorum: 2 },
    };
    const at = async (e: unknown, extra: Partial<ProvisionRequest> = {}) => ((await refusal(provisioner.provision({ ...base, existing: e as WalletDescriptor, ...extra }))) as ValidationError).path;
    expect(await at({ ...existing, wallet: 'other' })).toBe('existing.wallet');
    expect(await at({ ...existing, chain: 'stellar:testnet' })).toBe('existing.chain');
    expect(await at({ ...existing, control: { kind: 'evm_safe', safe: '0x1', owners: existing.control.kind === 'native_multisig' ? existing.control.signers : [], threshold: 2 } })).toBe('existing.control.kind');
    expect(await at({ ...existing, control: { ...existing.control, address: 'GNOPE' } })).toBe('existing.control.address');
    expect(await at({ ...existing, control: { ...existing.control, quorum: 0 } })).toBe('existing.control.quorum');
    expect(await at({ ...existing, control: { ...existing.control, address: m[1]!.address } })).toBe('members.1.address');
    expect(await at('not a descriptor')).toBe('existing');
  });

  it('a request that is not an object', async () => {
    const e = await refusal(provisioner.provision(null as unknown as ProvisionRequest));
    expect(e).toBeInstanceOf(ValidationError);
    expect((e as ValidationError).path).toBe('');
  });
});

describe('devnet: an operation on an account created earlier in the same transaction (stellar-core checkSignatureNoAccount)', () => {
  it('needs the new account key’s signature, and fails at apply as op_no_account when nothing created it', async () => {
    const funder = await plainAccount(devnet);
    const fresh = Keypair.random();
    const create = Operation.createAccount({ destination: fresh.publicKey(), startingBalance: '5' });
    const setup = Operation.setOptions({ source: fresh.publicKey(), masterWeight: 0, lowThreshold: 1, medThreshold: 1, highThreshold: 1 });
    const unsigned = await submitClassic(devnet, funder.publicKey(), [create, setup], [funder]);
    expect(unsigned.status).toBe(400);
    expect((unsigned.body['extras'] as { result_codes: unknown }).result_codes).toEqual({ transaction: 'tx_failed', operations: ['op_success', 'op_bad_auth'] });
    expect(devnet.ledger.account(fresh.publicKey())).toBeUndefined();
    const never = await submitClassic(devnet, funder.publicKey(), [setup], [funder, fresh]);
    expect(never.status).toBe(400);
    expect((never.body['extras'] as { result_codes: unknown }).result_codes).toEqual({ transaction: 'tx_failed', operations: ['op_no_source_account'] });
    const both = await submitClassic(devnet, funder.publicKey(), [create, setup], [funder, fresh]);
    expect(both.status).toBe(200);
    expect(devnet.ledger.account(fresh.publicKey())?.masterWeight).toBe(0);
  });
});

describe('plugin entry', () => {
  it('the built package, imported by name, exports createProvisioner', async () => {
    const spec = '@vault/driver-stellar';
    const mod = (await import(spec)) as Partial<DriverPlugin<root.StellarPluginOptions>>;
    expect(typeof mod.createProvisioner).toBe('function');
    const p = await mod.createProvisioner!(options);
    expect(p.chains).toEqual([CHAIN]);
  });

  it("the README's example request provisions on the devnet as written (URL aside)", async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const block = /Devnet \(a `stellar:local`[^\n]*\n\n```json\n([\s\S]*?)\n```/.exec(readme);
    const example = JSON.parse(block![1]!) as ProvisionRequest;
    expect(example.funding).toEqual({ kind: 'faucet', url: 'http://127.0.0.1:8000/friendbot' });
    const result = await provisioner.provision({ ...example, funding: FAUCET });
    expect(result.descriptor.control).toMatchObject({ kind: 'native_multisig', quorum: 2, signers: example.members.map((m) => ({ ...m })) });
  });

  it('bad options are refused with the option path', async () => {
    await expect(plugin.createProvisioner!(json({ chains: [{ chain: CHAIN, horizonUrl: 'ftp://x' }] }))).rejects.toThrow(/options\.chains\.0\.horizonUrl/);
  });
});
