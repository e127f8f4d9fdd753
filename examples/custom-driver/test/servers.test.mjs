/**
 * The plugin loaded by the reference servers from configuration, end to end:
 * - the toy ledger as a real process;
 * - three signer services (`startSigner`), each holding one member key in its own keystore and
 *   naming this package in its trust file's `drivers`;
 * - a control plane (`initStateDir` + `startControlPlane`) whose state file names the signers and,
 *   in `drivers`, `{ module: <path to src/index.mjs>, options: { chain, url } }`;
 * - the SDK's HTTP client: create an intent, execute it, read the ledger directly.
 */
import { createControlPlaneClient, createSignerClient, intentId, normalizeIntent, policyDigest, ValidationError } from '@vault/sdk';
import { createDriver } from '../src/index.mjs';
import { initStateDir, startControlPlane, StateFileSchema, STATE_FILE } from '@vault/server/control-plane';
import { createKey, startSigner } from '@vault/server/signer';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressOf, CHAIN, DRIVER_MODULE, freshAddress, ledgerPost, startLedgerProcess } from './devnet.mjs';

const CHEAP_KDF = { N: 2 ** 10, r: 8, p: 1 }; // tests only: the defaults are far more expensive
const SIGNER_PASS = 'toy signer passphrase';
const OPERATOR_PASS = 'toy operator passphrase';
const WALLET = 'toy-ops';

/** @type {Awaited<ReturnType<typeof startLedgerProcess>>} */
let devnet;
/** @type {{ url: string, token: string, address: string, stop: () => Promise<void> }[]} */
const signerServices = [];
/** @type {import('@vault/sdk').WalletDescriptor} */
let wallet;
/** @type {import('@vault/sdk').PolicySet} */
let policy;
/** @type {Awaited<ReturnType<typeof startControlPlane>> | undefined} */
let controlPlane;
let root = '';
let walletAddress = '';
/** @type {ReturnType<typeof createControlPlaneClient>} */
let cp;

beforeAll(async () => {
  root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'toy-driver-'));
  devnet = await startLedgerProcess();
  const driverEntry = { module: DRIVER_MODULE, options: { chain: CHAIN, url: devnet.url } };

  // 1. One key per signer, each in its own keystore.
  const members = [];
  for (const name of ['a', 'b', 'c']) {
    const keystore = join(root, `signer-${name}`, 'keys');
    const key = await createKey(keystore, { curve: 'ed25519', passphrase: SIGNER_PASS, scope: { wallets: [WALLET], chains: [CHAIN] }, kdf: CHEAP_KDF });
    members.push({ name, keystore, address: addressOf(Buffer.from(key.publicKeyHex, 'hex')) });
  }

  // 2. The 2-of-3 account on the ledger, and the same wallet as the vault describes it.
  const account = await ledgerPost(devnet.url, '/faucet', { balance: '50000000', signers: { members: members.map((m) => ({ address: m.address, weight: 1 })), quorum: 2 } });
  walletAddress = account.address;
  wallet = {
    wallet: WALLET,
    chain: CHAIN,
    control: { kind: 'native_multisig', address: walletAddress, quorum: 2, signers: members.map((m) => ({ address: m.address, curve: 'ed25519', weight: 1, label: `signer-${m.name}` })) },
  };
  policy = { wallet: WALLET, version: 1, rules: [{ rule: 'hard_ceiling', max: '10000000' }, { rule: 'always_allow' }] };

  // 3. Each signer: its own trust file (wallet, pinned policy digest, drivers), then serve.
  const endpoints = {};
  for (const m of members) {
    const dir = join(root, `signer-${m.name}`);
    const trust = join(dir, 'trust.json');
    writeFileSync(trust, JSON.stringify({ format: 'vault-signer-trust', version: 1, wallets: [{ descriptor: wallet, policy_digest: policyDigest(policy) }], approvers: [], drivers: [driverEntry] }));
    const token = randomBytes(24).toString('base64url');
    const service = await startSigner({ keystore: m.keystore, trust, stateDir: join(dir, 'state'), passphrase: SIGNER_PASS, token, port: 0, kdf: CHEAP_KDF });
    signerServices.push({ url: service.url, token, address: m.address, stop: () => service.stop() });
    endpoints[m.address] = { url: service.url, token, label: `signer-${m.name}` };
  }

  // 4. The control plane: its state file names the wallet, policy, signers and this driver module.
  const stateDir = join(root, 'control-plane');
  const state = StateFileSchema.parse({ version: 1, wallets: [wallet], policies: [policy], signers: endpoints, drivers: [driverEntry] });
  await initStateDir({ stateDir, passphrase: OPERATOR_PASS, state, scrypt: CHEAP_KDF });
  controlPlane = await startControlPlane({ stateDir, confirmDelayMs: 50 });
  cp = createControlPlaneClient({ baseUrl: controlPlane.url, timeoutMs: 20_000 });
  await cp.unlock(OPERATOR_PASS);
}, 60_000);

afterAll(async () => {
  await controlPlane?.close();
  await Promise.all(signerServices.map((s) => s.stop()));
  await devnet?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the toy driver inside the reference servers', () => {
  it('the state file names the driver module with its options', () => {
    const state = JSON.parse(readFileSync(join(root, 'control-plane', STATE_FILE), 'utf8'));
    expect(state.drivers).toEqual([{ module: DRIVER_MODULE, options: { chain: CHAIN, url: devnet.url } }]);
  });

  it('an intent is signed by the signers, submitted, confirmed, and the ledger shows the transfer', async () => {
    const destination = freshAddress();
    const before = BigInt((await ledgerPost(devnet.url, '/account', { address: walletAddress })).balance);
    const created = await cp.createIntent({ wallet: WALLET, destination, amount: '1234567' });
    expect(created.status).toBe('allowed');

    const outcome = await cp.execute(created.intentId);
    expect(outcome).toMatchObject({ status: 'confirmed', chain: CHAIN, quorum: 2 });
    expect(outcome.txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(outcome.weight).toBeGreaterThanOrEqual(2);
    // The control plane goes on once two answers (the quorum) are in; the third is not waited for.
    const signedBy = outcome.signers.filter((s) => s.ok).map((s) => s.address);
    expect(signedBy).toHaveLength(2);
    expect(outcome.signers.filter((s) => !s.ok).map((s) => s.detail)).toEqual([expect.stringMatching(/^not awaited/)]);
    expect((await cp.intent(created.intentId)).status).toBe('confirmed');

    // Read the ledger directly, not through the driver or the control plane.
    const { tx } = await ledgerPost(devnet.url, '/tx', { hash: outcome.txHash });
    expect(tx).toMatchObject({ applied: true, payload: { account: walletAddress, destination, amount: '1234567' } });
    expect([...tx.signers].sort()).toEqual([...signedBy].sort());
    expect((await ledgerPost(devnet.url, '/account', { address: destination })).balance).toBe('1234567');
    const after = BigInt((await ledgerPost(devnet.url, '/account', { address: walletAddress })).balance);
    expect(after).toBe(before - 1234567n - BigInt(tx.payload.fee));

    // Executing again answers the stored outcome; nothing moves twice.
    expect((await cp.execute(created.intentId)).txHash).toBe(outcome.txHash);
    expect((await ledgerPost(devnet.url, '/account', { address: destination })).balance).toBe('1234567');
  }, 30_000);

  it('an intent the driver cannot build (an asset the toy ledger lacks) is refused before any signer is asked; nothing moves', async () => {
    const destination = freshAddress();
    const created = await cp.createIntent({ wallet: WALLET, destination, amount: '1000', asset_symbol: 'USD' });
    expect(created.status).toBe('allowed');
    const err = await cp.execute(created.intentId).then(
      () => null,
      (e) => e,
    );
    expect(err).not.toBeNull();
    expect(err.data).toMatchObject({ stage: 'prepare' });
    expect(err.message).toMatch(/only TOY/);
    expect((await ledgerPost(devnet.url, '/account', { address: destination })).exists).toBe(false);
  }, 30_000);

  it('a bad driver entry fails start-up with an error naming the option', async () => {
    const stateDir = join(root, 'control-plane-bad');
    const state = StateFileSchema.parse({ version: 1, drivers: [{ module: DRIVER_MODULE, options: { chain: CHAIN } }] });
    await initStateDir({ stateDir, passphrase: OPERATOR_PASS, state, scrypt: CHEAP_KDF });
    const err = await startControlPlane({ stateDir }).then(
      async (running) => {
        await running.close();
        return null;
      },
      (e) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/drivers\.0\.options/);
    expect(err.message).toMatch(/options\.url/);
  });

  it('a signer signs a second payload for one intent only once payloadFate proves the first dead', async () => {
    const driver = createDriver({ chain: CHAIN, url: devnet.url });
    const signerA = signerServices[0];
    const client = createSignerClient({ baseUrl: signerA.url, token: signerA.token });
    const request = { wallet: WALLET, destination: freshAddress(), amount: '777' };
    const intent = normalizeIntent(request);
    const protect = { known_destinations: [], burned: [], evm_code: [], token_owner_burned: false, onchain_symbol: null, compliance_cleared: false, attestation_valid: false };
    const ask = (params) =>
      client.sign({
        intent: { id: intentId(request), created_at: Math.floor(Date.now() / 1000), request },
        wallet,
        policy,
        policy_digest: policyDigest(policy),
        approvals: [],
        params,
        protect,
        expected_payload_digest: driver.buildPayload({ intent, wallet, params }).digest,
        signer_address: signerA.address,
      });
    const first = await driver.fetchParams({ wallet });
    expect(await ask(first)).toMatchObject({ ok: true });
    // A different payload for the same intent (a later expiry): refused while the first is live.
    const second = { ...first, fields: { ...first.fields, expires_ledger: first.fields.expires_ledger + 5 } };
    const refused = await ask(second);
    expect(refused).toMatchObject({ ok: false, refusal: { refused: { reason: 'chain' } } });
    expect(refused.refusal.message).toMatch(/is live on the ledger \(pending\)/);
    // Close ledgers until the first payload has expired: now it is provably dead.
    while ((await ledgerPost(devnet.url, '/account', { address: walletAddress })).ledger_index < first.fields.expires_ledger) await ledgerPost(devnet.url, '/close', {});
    expect(await ask(second)).toMatchObject({ ok: true });
  }, 30_000);
});
