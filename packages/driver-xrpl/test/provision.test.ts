/**
 * `vault provision` on the devnet over loopback HTTP: a 2-of-3 with mixed curves set up through the
 * faucet and through a funded key in an environment variable, read back from the devnet's own
 * state (not through the driver), used for a real multisig transfer, re-run without sending
 * anything, refused when the ledger differs, and every malformed request refused by field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RefusedError,
  TransportError,
  ValidationError,
  compareControl,
  type DriverPlugin,
  type ProvisionRequest,
  type SigningKey,
  type WalletDescriptor,
  type WalletProvisioner,
} from '@vault/sdk';
import { ACCOUNT_ROOT_FLAGS } from '../src/constants.js';
import { startXrplDevnet, type XrplDevnet } from '../src/devnet/index.js';
import * as root from '../src/index.js';
import { createXrplDriver, PROVISION_WORKING_BALANCE_DROPS, type XrplDriver } from '../src/index.js';
import { createXrplProvisioner } from '../src/provision.js';
import { xrplAddressOf } from '../src/signer.js';
import { createSoftwareKey } from '@vault/sdk/testing';
import { classicAddressToXAddress } from 'ripple-address-codec';
import { createKey, fundedWallet, nextSecret, runIntent } from './helpers.js';

const CHAIN = 'xrpl:local';
const FUNDER_ENV = 'VAULT_TEST_XRPL_FUNDER_SEED';
let devnet: XrplDevnet;
let driver: XrplDriver;
let provisioner: WalletProvisioner;
const env: Record<string, string | undefined> = {};

beforeAll(async () => {
  devnet = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 40 });
  driver = createXrplDriver({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337 } } });
  provisioner = createXrplProvisioner({ chains: { [CHAIN]: { url: devnet.url, networkId: 21337 } }, env, pollIntervalMs: 20, maxWaitMs: 5000 });
});
afterAll(() => devnet.close());

function members(curves: ('ed25519' | 'secp256k1')[], weights?: number[]): { keys: SigningKey[]; members: ProvisionRequest['members'] } {
  const keys = curves.map((c) => createKey(c));
  return { keys, members: keys.map((k, i) => ({ address: xrplAddressOf(k.publicKey, k.curve), curve: k.curve, weight: weights?.[i] ?? 1 })) };
}

function request(over: Partial<ProvisionRequest> & Pick<ProvisionRequest, 'members'>): ProvisionRequest {
  return { wallet: 'treasury', chain: CHAIN, quorum: 2, funding: { kind: 'faucet', url: devnet.faucetUrl }, ...over };
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

const address = (d: WalletDescriptor) => (d.control.kind === 'native_multisig' ? d.control.address : '');

describe('provision through the faucet: a 2-of-3 with mixed curves', () => {
  let keys: SigningKey[];
  let req: ProvisionRequest;
  let descriptor: WalletDescriptor;

  it('creates the account, installs the signer list and disables the master key, each validated', async () => {
    const m = members(['ed25519', 'secp256k1', 'ed25519']);
    keys = m.keys;
    req = request({ members: [{ ...m.members[0]!, label: 'alice' }, m.members[1]!, m.members[2]!] });
    const result = await provisioner.provision(req);
    descriptor = result.descriptor;
    expect(result.changed).toBe(true);
    expect(result.transactions.map((t) => t.what.split(':')[0])).toEqual(['fund', 'signer_list', 'disable_master']);
    for (const t of result.transactions) expect(devnet.ledger.tx(t.txHash)).toMatchObject({ result: 'tesSUCCESS', validated: true });
    expect(descriptor).toEqual({
      wallet: 'treasury',
      chain: CHAIN,
      control: {
        kind: 'native_multisig',
        address: expect.stringMatching(/^r/),
        signers: [
          { address: m.members[0]!.address, curve: 'ed25519', weight: 1, label: 'alice' },
          { address: m.members[1]!.address, curve: 'secp256k1', weight: 1, label: 'member-2' },
          { address: m.members[2]!.address, curve: 'ed25519', weight: 1, label: 'member-3' },
        ],
        quorum: 2,
      },
    });
    // The devnet's own state: master disabled, no regular key, the signer list as requested.
    const acct = devnet.ledger.account(address(descriptor));
    expect((acct?.flags ?? 0) & ACCOUNT_ROOT_FLAGS.lsfDisableMaster).not.toBe(0);
    expect(acct?.regularKey).toBeUndefined();
    expect(acct?.signerList?.quorum).toBe(2);
    expect(new Set(acct?.signerList?.entries.map((e) => `${e.account}:${e.weight}`))).toEqual(new Set(m.members.map((x) => `${x.address}:1`)));
    // Default funding: base reserve + one owner reserve + the working balance, less two fees.
    const expected = devnet.ledger.reserveBase + devnet.ledger.reserveIncrement + PROVISION_WORKING_BALANCE_DROPS - 2n * BigInt(devnet.ledger.baseFee);
    expect(devnet.ledger.xrpBalance(address(descriptor))).toBe(expected);
  });

  it("the driver's controlState reproduces the descriptor exactly (reconcile is clean)", async () => {
    const state = await driver.controlState({ wallet: descriptor });
    expect(state.masterKeyEnabled).toBe(false);
    expect(compareControl(descriptor, state)).toMatchObject({ clean: true, drift: [] });
  });

  it('moves funds only through the multisig: a transfer signed at quorum (ed25519 + secp256k1) is validated', async () => {
    const dest = xrplAddressOf(createSoftwareKey(nextSecret('dest')).publicKey, 'ed25519');
    devnet.ledger.genesisAccount(dest, 20_000_000n);
    const { confirm } = await runIntent(devnet, driver, descriptor, keys, { destination: dest, amount: '1500000' });
    expect(confirm).toMatchObject({ status: 'confirmed', code: 'tesSUCCESS' });
    expect(devnet.ledger.xrpBalance(dest)).toBe(21_500_000n);
  });

  it('a re-run with existing sends nothing: changed false, the same sequence and balance', async () => {
    const before = { ...devnet.ledger.account(address(descriptor))! };
    const result = await provisioner.provision({ ...req, existing: descriptor });
    expect(result).toEqual({ descriptor, changed: false, transactions: [] });
    const after = devnet.ledger.account(address(descriptor))!;
    expect(after.sequence).toBe(before.sequence);
    expect(after.balance).toBe(before.balance);
  });

  it('a re-run whose request differs from the ledger is an error naming each difference; nothing is sent', async () => {
    const seq = devnet.ledger.account(address(descriptor))!.sequence;
    const raised = await rejection(provisioner.provision({ ...req, quorum: 3, existing: descriptor }));
    expect(raised).toBeInstanceOf(RefusedError);
    expect(raised.message).toContain('quorum on ledger 2, requested 3');
    const weights = await rejection(provisioner.provision({ ...req, members: [{ ...req.members[0]!, weight: 2 }, ...req.members.slice(1)], existing: descriptor }));
    expect(weights.message).toContain(`member ${req.members[0]!.address} weight on ledger 1, requested 2`);
    const extra = members(['ed25519']).members[0]!;
    const swapped = await rejection(provisioner.provision({ ...req, members: [...req.members.slice(0, 2), extra], existing: descriptor }));
    expect(swapped.message).toContain(`member ${req.members[2]!.address} on ledger (weight 1), not requested`);
    expect(swapped.message).toContain(`member ${extra.address} requested (weight 1), not on ledger`);
    expect((swapped as RefusedError).data?.['drift']).toHaveLength(2);
    expect(devnet.ledger.account(address(descriptor))!.sequence).toBe(seq);
  });

  it('an existing descriptor whose account has its master key (or is absent) is a difference, never "fixed"', async () => {
    const plain = fundedWallet(devnet);
    devnet.closeLedger();
    const fake: WalletDescriptor = { ...descriptor, control: { ...(descriptor.control as Extract<WalletDescriptor['control'], { kind: 'native_multisig' }>), address: plain.classicAddress } };
    const raised = await rejection(provisioner.provision({ ...req, existing: fake }));
    expect(raised.message).toContain('master key enabled on ledger, requested disabled');
    expect(raised.message).toContain('quorum on ledger 0, requested 2');
    const ghost = xrplAddressOf(createSoftwareKey(nextSecret('ghost')).publicKey, 'ed25519');
    const missing = await rejection(provisioner.provision({ ...req, existing: { ...fake, control: { ...(fake.control as { kind: 'native_multisig'; address: string; signers: never[]; quorum: number }), address: ghost } } as WalletDescriptor }));
    expect(missing).toBeInstanceOf(RefusedError);
    expect(missing.message).toContain(`account ${ghost} is not in the validated ledger`);
  });

  it('existing for another wallet id or chain is a ValidationError naming the field', async () => {
    const otherId = await rejection(provisioner.provision({ ...req, existing: { ...descriptor, wallet: 'other' } }));
    expect(otherId).toBeInstanceOf(ValidationError);
    expect((otherId as ValidationError).path).toBe('existing.wallet');
    const otherChain = await rejection(provisioner.provision({ ...req, existing: { ...descriptor, chain: 'xrpl:testnet' } }));
    expect((otherChain as ValidationError).path).toBe('existing.chain');
    const safe = await rejection(provisioner.provision({ ...req, existing: { wallet: 'treasury', chain: CHAIN, control: { kind: 'evm_safe', safe: '0x0', owners: descriptor.control.kind === 'native_multisig' ? descriptor.control.signers : [], threshold: 2 } } }));
    expect((safe as ValidationError).path).toBe('existing.control.kind');
    const asX = classicAddressToXAddress(address(descriptor), false, true);
    const xExisting = await rejection(provisioner.provision({ ...req, existing: { ...descriptor, control: { ...(descriptor.control as Extract<WalletDescriptor['control'], { kind: 'native_multisig' }>), address: asX } } }));
    expect((xExisting as ValidationError).path).toBe('existing.control.address');
    const notWallet = await rejection(provisioner.provision({ ...req, existing: { wallet: 'treasury' } as unknown as WalletDescriptor }));
    expect((notWallet as ValidationError).path).toMatch(/^existing\./);
  });
});

describe('provision funded by a key in an environment variable', () => {
  it('a Payment of fundAmount from the funder creates the account; the rest as with the faucet', async () => {
    const funder = fundedWallet(devnet);
    devnet.closeLedger();
    env[FUNDER_ENV] = funder.seed;
    const fundBefore = devnet.ledger.xrpBalance(funder.classicAddress);
    const m = members(['secp256k1', 'ed25519', 'secp256k1'], [2, 1, 1]);
    // A member given as a (tagless, test-network) X-address is recorded as the classic address the ledger knows.
    const asX = [{ ...m.members[0]!, address: classicAddressToXAddress(m.members[0]!.address, false, true) }, ...m.members.slice(1)];
    const result = await provisioner.provision(request({ wallet: 'ops', members: asX, quorum: 3, fundAmount: '25000000', funding: { kind: 'key_env', env: FUNDER_ENV } }));
    expect(result.transactions).toHaveLength(3);
    expect(result.descriptor.control.kind === 'native_multisig' && result.descriptor.control.signers.map((x) => x.address)).toEqual(m.members.map((x) => x.address));
    expect(result.transactions[0]!.what).toContain(`from ${funder.classicAddress}`);
    const fee = BigInt(devnet.ledger.baseFee);
    expect(devnet.ledger.xrpBalance(funder.classicAddress)).toBe(fundBefore - 25_000_000n - fee);
    expect(devnet.ledger.xrpBalance(address(result.descriptor))).toBe(25_000_000n - 2n * fee);
    expect(compareControl(result.descriptor, await driver.controlState({ wallet: result.descriptor })).clean).toBe(true);
    const again = await provisioner.provision(request({ wallet: 'ops', members: m.members, quorum: 3, funding: { kind: 'key_env', env: 'UNSET_ON_RERUN' }, existing: result.descriptor }));
    expect(again.changed).toBe(false);
  });

  it('a missing or invalid variable is a ValidationError naming funding.env that never shows the value', async () => {
    const m = members(['ed25519', 'ed25519']);
    const missing = await rejection(provisioner.provision(request({ members: m.members, funding: { kind: 'key_env', env: 'VAULT_TEST_NOT_SET' } })));
    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as ValidationError).path).toBe('funding.env');
    const secret = 'sNOTASEEDbutSECRETlooking123';
    env['VAULT_TEST_BAD_SEED'] = secret;
    const bad = await rejection(provisioner.provision(request({ members: m.members, funding: { kind: 'key_env', env: 'VAULT_TEST_BAD_SEED' } })));
    expect((bad as ValidationError).path).toBe('funding.env');
    expect(`${bad.message} ${JSON.stringify((bad as ValidationError).data)} ${String(bad.stack)}`).not.toContain(secret);
  });

  it('a funder short of funds fails at step fund with the ledger result (tec), before any account exists', async () => {
    const poor = fundedWallet(devnet);
    devnet.closeLedger();
    env['VAULT_TEST_POOR'] = poor.seed;
    const m = members(['ed25519', 'secp256k1']);
    const raised = await rejection(provisioner.provision(request({ members: m.members, fundAmount: '5000000000', funding: { kind: 'key_env', env: 'VAULT_TEST_POOR' } })));
    expect(raised).toBeInstanceOf(RefusedError);
    expect(raised.message).toMatch(/^provision step fund: tecUNFUNDED_PAYMENT/);
    expect((raised as RefusedError).data).toMatchObject({ step: 'fund', code: 'tecUNFUNDED_PAYMENT', account: poor.classicAddress });
  });
});

describe('provision refusals', () => {
  const m = () => members(['ed25519', 'secp256k1', 'ed25519']).members;
  const cases: [string, (r: ProvisionRequest) => unknown, string][] = [
    ['no members', (r) => ({ ...r, members: [] }), 'members'],
    ['a bad address', (r) => ({ ...r, members: [r.members[0], { ...r.members[1], address: 'rNotAnAddress' }] }), 'members.1.address'],
    ['a Stellar address', (r) => ({ ...r, members: [{ ...r.members[0], address: 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7' }] }), 'members.0.address'],
    ['a duplicate member', (r) => ({ ...r, members: [r.members[0], r.members[1], { ...r.members[2], address: r.members[0]!.address }] }), 'members.2.address'],
    ['an X-address with a tag', (r) => ({ ...r, members: [{ ...r.members[0], address: classicAddressToXAddress(r.members[0]!.address, 7, true) }] }), 'members.0.address'],
    ['a mainnet X-address on a test chain', (r) => ({ ...r, members: [{ ...r.members[0], address: classicAddressToXAddress(r.members[0]!.address, false, false) }] }), 'members.0.address'],
    ['weight 0', (r) => ({ ...r, members: [{ ...r.members[0], weight: 0 }, ...r.members.slice(1)] }), 'members.0.weight'],
    ['weight over 65535', (r) => ({ ...r, members: [{ ...r.members[0], weight: 70000 }, ...r.members.slice(1)] }), 'members.0.weight'],
    ['an unsupported curve', (r) => ({ ...r, members: [r.members[0], { ...r.members[1], curve: 'p256' }] }), 'members.1.curve'],
    ['a long label', (r) => ({ ...r, members: [{ ...r.members[0], label: 'x'.repeat(200) }] }), 'members.0.label'],
    ['a member not an object', (r) => ({ ...r, members: ['r1'] }), 'members.0'],
    ['33 members', (r) => ({ ...r, members: Array.from({ length: 33 }, () => r.members[0]) }), 'members'],
    ['an unreachable quorum', (r) => ({ ...r, quorum: 4 }), 'quorum'],
    ['quorum 0', (r) => ({ ...r, quorum: 0 }), 'quorum'],
    ['an unserved chain', (r) => ({ ...r, chain: 'xrpl:mainnet' }), 'chain'],
    ['an empty wallet id', (r) => ({ ...r, wallet: '' }), 'wallet'],
    ['no funding', (r) => ({ ...r, funding: undefined }), 'funding'],
    ['an unknown funding kind', (r) => ({ ...r, funding: { kind: 'gift' } }), 'funding.kind'],
    ['a faucet URL that is not http(s)', (r) => ({ ...r, funding: { kind: 'faucet', url: 'ftp://faucet.example/accounts' } }), 'funding.url'],
    ['a faucet URL with credentials', (r) => ({ ...r, funding: { kind: 'faucet', url: 'https://u:p@faucet.example/accounts' } }), 'funding.url'],
    ['an env name that is not one', (r) => ({ ...r, funding: { kind: 'key_env', env: 'sEdSECRET=1' } }), 'funding.env'],
    ['a fundAmount that is not drops', (r) => ({ ...r, fundAmount: '12.5' }), 'fundAmount'],
    ['a fundAmount below the reserves', (r) => ({ ...r, fundAmount: '1000000' }), 'fundAmount'],
  ];
  for (const [what, edit, path] of cases) {
    it(`${what} -> ValidationError at ${path}`, async () => {
      const raised = await rejection(provisioner.provision(edit(request({ members: m() })) as ProvisionRequest));
      expect(raised).toBeInstanceOf(ValidationError);
      expect((raised as ValidationError).path).toBe(path);
    });
  }

  it('a request that is not an object is refused', async () => {
    expect(await rejection(provisioner.provision(null as unknown as ProvisionRequest))).toBeInstanceOf(ValidationError);
  });

  it('a faucet that answers without funding the account fails at step fund (TransportError) and nothing else is sent', async () => {
    const raised = await rejection(provisioner.provision(request({ members: m(), funding: { kind: 'faucet', url: `${devnet.url}not-a-faucet` } })));
    expect(raised).toBeInstanceOf(TransportError);
    expect(raised.message).toMatch(/^provision step fund: faucet .* does not name r/);
    const refused = await rejection(provisioner.provision(request({ members: m(), fundAmount: '2000000000', funding: { kind: 'faucet', url: devnet.faucetUrl } })));
    expect(refused.message).toMatch(/^provision step fund: faucet .* HTTP 400/);
    const closed = await rejection(provisioner.provision(request({ members: m(), funding: { kind: 'faucet', url: 'http://127.0.0.1:1/accounts' } })));
    expect(closed.message).toMatch(/^provision step fund: faucet http:\/\/127\.0\.0\.1:1\/accounts failed/);
  });

  it('a faucet that pays less than the set-up needs fails at step fund, naming both amounts', async () => {
    // The faucet is asked (through a rewriting fetch) for less than the reserves: it pays what it is asked.
    const stingy = createXrplProvisioner({
      chains: { [CHAIN]: { url: devnet.url, networkId: 21337 } },
      pollIntervalMs: 20,
      fetch: (url, init) => fetch(url, url === devnet.faucetUrl ? { ...init, body: init.body.replace(/"xrpAmount":"[^"]*"/, '"xrpAmount":"1.1"') } : init),
    });
    const raised = await rejection(stingy.provision(request({ members: m() })));
    expect(raised).toBeInstanceOf(RefusedError);
    expect(raised.message).toMatch(/^provision step fund: underfunded the faucet paid 1100000 drops; the set-up needs at least \d+/);
  });

  it('a transaction that is never validated fails at its step once the wait runs out (TransportError)', async () => {
    const still = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 0 });
    try {
      const funder = fundedWallet(still);
      still.closeLedger();
      const p = createXrplProvisioner({ chains: { [CHAIN]: { url: still.url, networkId: 21337 } }, env: { F: funder.seed }, pollIntervalMs: 20, maxWaitMs: 200 });
      const raised = await rejection(p.provision(request({ members: m(), funding: { kind: 'key_env', env: 'F' } })));
      expect(raised).toBeInstanceOf(TransportError);
      expect(raised.message).toMatch(/^provision step fund: [0-9A-F]{64} not validated after 200 ms/);
    } finally {
      await still.close();
    }
  });

  it('a server on another network is refused at step prepare, before anything is funded', async () => {
    const wrong = createXrplProvisioner({ chains: { [CHAIN]: { url: devnet.url, networkId: 5 } }, pollIntervalMs: 20 });
    const raised = await rejection(wrong.provision(request({ members: m() })));
    expect(raised).toBeInstanceOf(RefusedError);
    expect(raised.message).toContain('wrong network');
    expect((raised as RefusedError).data).toMatchObject({ step: 'prepare' });
  });
});

describe('plugin entry', () => {
  it('createProvisioner from JSON options provisions with process.env funding; the result reconciles', async () => {
    const plugin: DriverPlugin<root.XrplPluginOptions> = root;
    const options = JSON.parse(JSON.stringify({ chains: [{ chain: CHAIN, url: devnet.url, networkId: 21337 }] }));
    const p = await plugin.createProvisioner!(options);
    expect(p.chains).toEqual([CHAIN]);
    const funder = fundedWallet(devnet);
    devnet.closeLedger();
    process.env[FUNDER_ENV] = funder.seed;
    try {
      const m = members(['ed25519', 'secp256k1', 'ed25519']);
      const result = await p.provision(request({ wallet: 'plugin', members: m.members, funding: { kind: 'key_env', env: FUNDER_ENV } }));
      expect(result.changed).toBe(true);
      const d = await plugin.createDriver(options);
      expect(compareControl(result.descriptor, await d.controlState({ wallet: result.descriptor })).clean).toBe(true);
    } finally {
      delete process.env[FUNDER_ENV];
    }
  });
});
