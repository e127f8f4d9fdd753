/**
 * What a compromised control plane cannot do at a signer, one test per attack (the root README's
 * "Security model" names them). `protect` is the control plane's claim: the signer reads chain
 * facts through its own driver from its own ledger (here the EVM devnet, a real anvil with a Safe
 * and ERC-20s), takes burned and known addresses from its trust file and its own signing record,
 * and decides attestation and compliance from signed statements it verified itself.
 */
import {
  DriverRegistry,
  intentId,
  normalizeDestination,
  normalizeIntent,
  policyDigest,
  protectChainFacts,
  signStatement,
  type ChainDriver,
  type ChainSigner,
  type IntentRequest,
  type PolicySet,
  type SignRequest,
  type SignedStatement,
  type WalletDescriptor,
} from '@vault/sdk';
import { createEvmSafeDriver } from '@vault/driver-evm-safe';
import { startEvmDevnet, type EvmDevnet } from '@vault/driver-evm-safe/devnet';
import { createEvmSafeSigner } from '@vault/driver-evm-safe/signer';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, SoftwareKeystore } from '../../src/signer/keystore.js';
import { verifyAndSign, type SignOutcome, type SignerDeps } from '../../src/signer/sign.js';
import { SignerState } from '../../src/signer/state.js';
import { parseTrust, type TrustFile } from '../../src/signer/trust.js';
import { approver, basePolicy, CLEARER, clearanceFor, countingSigner, makeWorld, PASSPHRASE, T0, tempDir, TEST_KDF, UNKNOWN_DEST, type World } from './helpers.js';

const MALLORY = approver('mallory', 9);
const ATTESTER = approver('attester', 8);

function reasonOf(outcome: SignOutcome): string {
  if (outcome.ok) throw new Error(`expected a refusal, got a signature: ${outcome.response.summary}`);
  return `${outcome.refusal.refused.reason}: ${outcome.refusal.message}`;
}

/** `mem1` + 36 zero hex + the last 4 characters of `of`: same first and last 4 characters. */
const lookalikeOf = (of: string) => `mem1${'0'.repeat(36)}${of.slice(-4)}`;

describe('lists and statements (memory ledger)', () => {
  let w: World;
  afterEach(() => w.cleanup());

  async function refused(req: SignRequest, reason: string, message: RegExp): Promise<void> {
    const outcome = await verifyAndSign(req, w.deps);
    expect(reasonOf(outcome)).toMatch(new RegExp(`^${reason}: `));
    expect(reasonOf(outcome)).toMatch(message);
    expect(w.signedDigests).toEqual([]);
  }

  it('attack: a control plane that blanks burned gets no signature for a burned destination', async () => {
    w = await makeWorld({ burned: [UNKNOWN_DEST] });
    const req = await w.request();
    req.protect.burned = [];
    await refused(req, 'protected', /burned_key: destination .* is a burned address/);
  });

  it('attack: a control plane that blanks burned gets no signature from a wallet whose burned signers cannot reach quorum', async () => {
    w = await makeWorld();
    const members = w.wallet.control.kind === 'native_multisig' ? w.wallet.control.signers : [];
    w.deps.trust = parseTrust({ ...w.trustFile, burned: [members[1]!.address, members[2]!.address] });
    const req = await w.request();
    req.protect.burned = [];
    await refused(req, 'protected', /burned_key: 2 signer\(s\) of treasury are burned; remaining weight 1 cannot reach quorum 2/);
  });

  it("a control plane's burned list only adds: a destination it calls burned is refused", async () => {
    w = await makeWorld();
    const req = await w.request();
    req.protect.burned = [UNKNOWN_DEST];
    await refused(req, 'protected', /burned_key/);
  });

  it('attack: a control plane that empties known_destinations gets no signature for a look-alike of a known destination', async () => {
    w = await makeWorld();
    const req = await w.request({ destination: lookalikeOf(UNKNOWN_DEST) });
    req.protect.known_destinations = [];
    await refused(req, 'protected', new RegExp(`address_poisoning: destination .* imitates the known address ${UNKNOWN_DEST}`));
  });

  it('attack: a control plane that lists the look-alike itself as known gets no signature for it', async () => {
    w = await makeWorld();
    const twin = lookalikeOf(UNKNOWN_DEST);
    const req = await w.request({ destination: twin });
    req.protect.known_destinations = [twin];
    await refused(req, 'protected', /address_poisoning: destination .* imitates/);
  });

  it('destinations this signer has signed for are known to it, across a restart: a look-alike of one is refused', async () => {
    w = await makeWorld();
    const paid = `mem1${'cd'.repeat(20)}`;
    const first = await verifyAndSign(await w.request({ destination: paid }), w.deps);
    expect(first.ok && first.response.warnings.map((f) => f.detail)).toEqual([expect.stringMatching(/first transfer to/)]);
    w.reopen();
    const again = await verifyAndSign(await w.request({ destination: paid, memo: 'again' }), w.deps);
    expect(again.ok && again.response.warnings).toEqual([]);
    w.signedDigests.length = 0;
    const req = await w.request({ destination: lookalikeOf(paid) });
    req.protect.known_destinations = [];
    await refused(req, 'protected', new RegExp(`imitates the known address ${paid}`));
  });

  it('attack: a control plane that says compliance_cleared: true without a clearance gets no signature', async () => {
    w = await makeWorld();
    const req = await w.request();
    req.protect.compliance_cleared = true;
    delete req.protect.statements;
    await refused(req, 'policy_denied', /require_compliance_clearance\[5\]: compliance clearance is required/);
  });

  it('attack: a control plane that says attestation_valid: true without an attestation gets no signature', async () => {
    w = await makeWorld({ policy: (id) => basePolicy(id, [{ rule: 'require_attestation', attesters: [ATTESTER.publicKeyHex] }]) });
    const req = await w.request();
    req.protect.attestation_valid = true;
    await refused(req, 'policy_denied', /require_attestation\[6\]: a valid attestation/);
  });

  it('a valid attestation and clearance, with both flags false, still sign: the flags are not read', async () => {
    w = await makeWorld({ policy: (id) => basePolicy(id, [{ rule: 'require_attestation', attesters: [ATTESTER.publicKeyHex] }]) });
    const req = await w.request();
    const attestation = signStatement(
      { kind: 'attestation', wallet: w.wallet.wallet, attester: ATTESTER.publicKeyHex, issued_at: T0 - 60, expires_at: T0 + 3600 },
      ATTESTER.secret,
    );
    req.protect = { ...req.protect, compliance_cleared: false, attestation_valid: false, statements: [...(req.protect.statements ?? []), attestation] };
    const outcome = await verifyAndSign(req, w.deps);
    expect(outcome.ok).toBe(true);
  });

  const forged: [string, (w: World) => SignedStatement, RegExp][] = [
    ['signed by a key the policy does not name', () => clearanceFor(UNKNOWN_DEST, T0, MALLORY), /a key no require_compliance_clearance rule of the policy names/],
    [
      'that names the clearer but carries a signature by another key',
      () => ({ ...clearanceFor(UNKNOWN_DEST, T0, MALLORY), clearer: CLEARER.publicKeyHex }),
      /does not verify/,
    ],
    [
      'that expired on the signer clock',
      () => signStatement({ kind: 'clearance', destination: UNKNOWN_DEST, clearer: CLEARER.publicKeyHex, issued_at: T0 - 7200, expires_at: T0 }, CLEARER.secret),
      /expired at/,
    ],
    [
      'issued after the signer clock',
      () => signStatement({ kind: 'clearance', destination: UNKNOWN_DEST, clearer: CLEARER.publicKeyHex, issued_at: T0 + 60, expires_at: T0 + 7200 }, CLEARER.secret),
      /after now/,
    ],
    ['for another destination', () => clearanceFor(`mem1${'ee'.repeat(20)}`, T0), /clearance is for destination/],
    ['for another chain', (w) => signStatement({ kind: 'clearance', destination: UNKNOWN_DEST, chain: `${w.wallet.chain}x`, clearer: CLEARER.publicKeyHex, issued_at: T0 - 60, expires_at: T0 + 60 }, CLEARER.secret), /clearance is for chain/],
    ['with its destination rewritten', () => ({ ...clearanceFor(`mem1${'ee'.repeat(20)}`, T0), destination: UNKNOWN_DEST }), /does not verify/],
    ['with its expiry extended', () => ({ ...clearanceFor(UNKNOWN_DEST, T0), expires_at: T0 + 100 * 365 * 86400 }), /does not verify/],
  ];
  it.each(forged)('attack: a clearance %s gets no signature', async (_name, make, message) => {
    w = await makeWorld();
    const req = await w.request();
    req.protect.statements = [make(w)];
    await refused(req, 'policy_denied', message);
  });

  it.each([
    ['for another wallet', () => signStatement({ kind: 'attestation', wallet: 'ops', attester: ATTESTER.publicKeyHex, issued_at: T0 - 60, expires_at: T0 + 60 }, ATTESTER.secret), /attestation is for wallet ops/],
    ['by a key the policy does not name', () => signStatement({ kind: 'attestation', wallet: 'treasury', attester: MALLORY.publicKeyHex, issued_at: T0 - 60, expires_at: T0 + 60 }, MALLORY.secret), /a key no require_attestation rule/],
    ['that expired', () => signStatement({ kind: 'attestation', wallet: 'treasury', attester: ATTESTER.publicKeyHex, issued_at: T0 - 60, expires_at: T0 }, ATTESTER.secret), /expired/],
    [
      'made from a clearance by a named clearer',
      () => {
        const c = clearanceFor(UNKNOWN_DEST, T0, ATTESTER);
        return { kind: 'attestation' as const, wallet: 'treasury', attester: ATTESTER.publicKeyHex, issued_at: c.issued_at, expires_at: c.expires_at, signature: c.signature };
      },
      /does not verify/,
    ],
  ])('attack: an attestation %s gets no signature', async (_name, make, message) => {
    w = await makeWorld({ policy: (id) => basePolicy(id, [{ rule: 'require_attestation', attesters: [ATTESTER.publicKeyHex] }]) });
    const req = await w.request();
    req.protect.statements = [...(req.protect.statements ?? []), make()];
    req.protect.attestation_valid = true;
    await refused(req, 'policy_denied', message);
  });

  it('a policy whose compliance rule names no clearer is never met at the signer, whatever is sent', async () => {
    w = await makeWorld({ policy: (id) => ({ ...basePolicy(id), rules: basePolicy(id).rules.map((r) => (r.rule === 'require_compliance_clearance' ? { rule: r.rule } : r)) }) });
    const req = await w.request();
    await refused(req, 'policy_denied', /names no clearer key/);
  });
});

describe('chain facts (EVM devnet)', () => {
  let devnet: EvmDevnet;
  let driver: ChainDriver;
  let deps: SignerDeps;
  let wallet: WalletDescriptor;
  let policy: PolicySet;
  let signerAddress: string;
  let dirs: string[];
  const signed: string[] = [];
  const clock = { now: T0 };

  beforeAll(async () => {
    devnet = await startEvmDevnet();
    driver = createEvmSafeDriver({ chains: { [devnet.chain]: { rpcUrl: devnet.rpcUrl, pollingInterval: 50, tokens: [devnet.token.address] } } });
    const inner = createEvmSafeSigner({ chains: [devnet.chain] });
    const chainSigner = countingSigner(inner, signed);
    const owners = devnet.safe.owners;
    wallet = {
      wallet: 'treasury-evm',
      chain: devnet.chain,
      control: { kind: 'evm_safe', safe: devnet.safe.address, owners: owners.map((o, i) => ({ address: o.address, curve: 'secp256k1' as const, weight: 1, label: `owner${i}` })), threshold: 2 },
    };
    signerAddress = owners[0]!.address;
    policy = {
      wallet: wallet.wallet,
      version: 1,
      rules: [
        { rule: 'allow_operations', ops: ['transfer', 'issue', 'contract_call'] },
        { rule: 'hard_ceiling', max: '1000000000000' },
        { rule: 'require_compliance_clearance', clearers: [CLEARER.publicKeyHex] },
      ],
    };
    const keystoreDir = join(tempDir(), 'keys');
    const stateDir = join(tempDir(), 'state');
    dirs = [keystoreDir, stateDir];
    await createKey(keystoreDir, { curve: 'secp256k1', passphrase: PASSPHRASE, kdf: TEST_KDF, secret: Buffer.from(owners[0]!.privateKey.slice(2), 'hex') });
    const trustFile: TrustFile = {
      format: 'vault-signer-trust',
      version: 1,
      wallets: [{ descriptor: wallet, policy_digest: policyDigest(policy) }],
      approvers: [],
      assets: { assets: [{ chain: devnet.chain, symbol: 'VTT', issuer: devnet.token.address, decimals: 6 }], reserved: ['USDC'] },
    };
    deps = {
      now: () => clock.now,
      drivers: new DriverRegistry<ChainDriver>([driver]),
      signers: new DriverRegistry<ChainSigner>([chainSigner]),
      trust: parseTrust(trustFile),
      keys: await SoftwareKeystore.unlock(keystoreDir, PASSPHRASE),
      state: SignerState.open(stateDir, new Uint8Array(32).fill(5)),
    };
  }, 120_000);

  afterAll(async () => {
    deps?.state.close();
    for (const d of dirs ?? []) rmSync(join(d, '..'), { recursive: true, force: true });
    await devnet?.stop();
  });

  afterEach(() => {
    signed.length = 0;
  });

  /** A SignRequest as an honest control plane builds it: protect holds what the ledger says. */
  async function request(overrides: Partial<IntentRequest>): Promise<SignRequest> {
    // As the control plane stores it: the destination in its one (checksummed) form for the chain.
    const intent = normalizeDestination(normalizeIntent({ wallet: wallet.wallet, destination: `0x${randomBytes(20).toString('hex')}`, amount: '1000', ...overrides }), driver, wallet.chain);
    const req = intent as IntentRequest;
    const params = await driver.fetchParams({ wallet });
    const facts = await driver.fetchProtectInputs({ intent, wallet });
    return {
      intent: { id: intentId(req), created_at: clock.now - 10, request: req },
      wallet,
      policy,
      policy_digest: policyDigest(policy),
      approvals: [],
      params,
      protect: { known_destinations: [], burned: [], ...protectChainFacts(facts), compliance_cleared: true, attestation_valid: false, statements: [clearanceFor(req.destination, clock.now)] },
      expected_payload_digest: driver.buildPayload({ intent, wallet, params }).digest,
      signer_address: signerAddress,
    };
  }

  async function refused(req: SignRequest, message: RegExp): Promise<void> {
    const outcome = await verifyAndSign(req, deps);
    expect(reasonOf(outcome)).toMatch(/^protected: /);
    expect(reasonOf(outcome)).toMatch(message);
    expect(signed).toEqual([]);
  }

  it('an honest request for the registered token signs (every fact read and agreed)', async () => {
    const req = await request({ asset_issuer: devnet.token.address, asset_symbol: 'VTT', amount: '5' });
    expect(req.protect.onchain_symbol).toBe('VTT');
    expect(req.protect.evm_code).toHaveLength(2);
    const outcome = await verifyAndSign(req, deps);
    expect(outcome.ok, outcome.ok ? '' : reasonOf(outcome)).toBe(true);
    expect(signed).toEqual([req.expected_payload_digest]);
  });

  it('attack: a control plane that lies about evm_code gets no signature for a contract call to an address with no code', async () => {
    const honest = await request({ operation: { op: 'contract_call', data_hex: '0xdeadbeef' }, amount: '0' });
    expect(honest.protect.evm_code.map(([a, code]) => [a.toLowerCase(), code])).toEqual([[honest.intent.request.destination.toLowerCase(), '0x']]);
    await refused(structuredClone(honest), /network_separation: no contract is deployed/);
    for (const evm_code of [[], [[honest.intent.request.destination, '0x6080604052']]] as [string, string][][]) {
      const lie = structuredClone(honest);
      lie.protect.evm_code = evm_code;
      await refused(lie, /protect disagrees with this signer's ledger: evm_code is/);
    }
  });

  it('attack: a control plane that lies about onchain_symbol gets no signature for a token impersonating a reserved ticker', async () => {
    const fake = await devnet.deployToken(devnet.safe.address, { symbol: 'USDC', name: 'Not USD Coin' });
    const honest = await request({ asset_issuer: fake, amount: '5' });
    expect(honest.protect.onchain_symbol).toBe('USDC');
    await refused(structuredClone(honest), /counterfeit_asset: the token calls itself USDC, a reserved ticker/);
    for (const onchain_symbol of [null, 'FAKE']) {
      const lie = structuredClone(honest);
      lie.protect.onchain_symbol = onchain_symbol;
      await refused(lie, /protect disagrees with this signer's ledger: onchain_symbol is/);
    }
  });

  it('attack: a control plane that lies about token_owner_burned gets no signature to issue a token whose owner key is burned', async () => {
    const orphan = await devnet.deployToken('0x000000000000000000000000000000000000dEaD', { symbol: 'ORPH' });
    const honest = await request({ asset_issuer: orphan, asset_symbol: 'ORPH', amount: '5', operation: { op: 'issue' } });
    expect(honest.protect.token_owner_burned).toBe(true);
    await refused(structuredClone(honest), /burned_key: the token's owner key is burned/);
    const lie = structuredClone(honest);
    lie.protect.token_owner_burned = false;
    await refused(lie, /protect disagrees with this signer's ledger: token_owner_burned is false; the ledger says true/);
  });

  it('a signer whose own ledger cannot be read refuses rather than trust the facts it was sent', async () => {
    const dead = createEvmSafeDriver({ chains: { [devnet.chain]: { rpcUrl: 'http://127.0.0.1:9', pollingInterval: 50 } } });
    const req = await request({ asset_issuer: devnet.token.address, asset_symbol: 'VTT', amount: '5' });
    const outcome = await verifyAndSign(req, { ...deps, drivers: new DriverRegistry<ChainDriver>([dead]) });
    expect(reasonOf(outcome)).toMatch(/^protected: this signer cannot read the chain facts its guards need from its ledger/);
    expect(signed).toEqual([]);
  });
});
