/**
 * @module testing/conformance
 * The published ChainDriver conformance suite. Every driver package runs it in a few lines:
 *
 *   describeChainDriver({ name: 'xrpl', driver, signer, setup: () => devnetFixture() })
 *
 * Outcomes that matter (funds moved, a transaction applied, control as recorded) are checked
 * through the fixture's IndependentReader, which reads the ledger without the driver, so a driver
 * cannot pass by agreeing with itself. Each check is also a plain async function
 * (`conformanceChecks`), which is how the suite's own tests prove it catches broken drivers.
 */
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../canonical.js';
import { normalizeIntent } from '../digest.js';
import { DriverRegistryError, VaultError } from '../errors.js';
import { CHAIN_DRIVER_METHODS, CHAIN_SIGNER_METHODS } from '../driver/define.js';
import { DriverRegistry } from '../driver/registry.js';
import { chainFactsDisagreement, protectChainFacts } from '../guards.js';
import { CONTRIBUTION_REJECTIONS, ContributionMemo, type InvalidContribution } from '../driver/tally.js';
import type { BuiltPayload, ChainDriver, ChainSigner, ConfirmResult, SigningKey } from '../driver/types.js';
import type { IntentRequest, NormalizedIntent, OperationInput, OperationKind } from '../schemas/intent.js';
import { OPERATION_KINDS } from '../schemas/intent.js';
import { EvmCodeEntrySchema } from '../schemas/protect.js';
import { ContributionSchema, type Contribution } from '../schemas/sign.js';
import { ChainParamsSchema, walletMembers, type ChainParams, type WalletDescriptor } from '../schemas/wallet.js';
import { createSoftwareKey } from './memory-driver.js';

/** Reads ledger state directly (RPC, database, devnet admin API), never through the driver. */
export interface IndependentReader {
  /** Native balance of `address` in minor units (0 for an account that does not exist). */
  balance(address: string): Promise<bigint>;
  /** The ledger's own record of a transaction, or null when it holds none. */
  txResult(hash: string): Promise<{ applied: boolean; code: string } | null>;
}

/** Fresh state for one check. `setup` is called once per check so checks never share funds. */
export interface ConformanceFixture {
  /** A chain the driver serves; the wallet's chain. */
  chain: string;
  /** A funded wallet whose on-ledger control matches the descriptor. */
  wallet: WalletDescriptor;
  /** One key per member, in wallet order. */
  keys: SigningKey[];
  /** A valid address, not a wallet member, that the suite transfers to. */
  destination: string;
  /** Addresses the driver must reject on `chain` (bad checksum, wrong network, wrong length…). */
  invalidAddresses: string[];
  /** The wallet's native balance at setup, minor units. */
  fundedAmount: string;
  ledger: IndependentReader;
  /** Amount to transfer, minor units. Default `1000`. */
  transferAmount?: string;
  /** A key that is not a member. Default: a fresh software ed25519 key (set it for other curves). */
  outsider?: SigningKey;
}

/**
 * An OperationCase whose setup also hands `intent` and `verify` some context (issuer, holder,
 * token, issuance id…). The context is kept per fixture wallet, so each setup call gets its own.
 *
 * @example
 * operationCase('IOU transfer', async () => ({ fixture: await walletWithIou(), ctx: { issuer } }),
 *   (f, { issuer }) => ({ destination: f.destination, amount: '5', asset_symbol: 'USD', asset_issuer: issuer }),
 *   async (f, { issuer }) => expect(await ious(f.destination, issuer)).toBe(5n))
 */
export function operationCase<T>(
  name: string,
  setup: () => Promise<{ fixture: ConformanceFixture; ctx: T }>,
  intent: (f: ConformanceFixture, ctx: T) => Omit<IntentRequest, 'wallet'>,
  verify: (f: ConformanceFixture, ctx: T, confirmed: Extract<ConfirmResult, { status: 'confirmed' }>) => Promise<void>,
): OperationCase {
  const contexts = new Map<string, T>();
  const ctxOf = (f: ConformanceFixture): T => {
    if (!contexts.has(f.wallet.wallet)) throw new Error(`no context for ${f.wallet.wallet}`);
    return contexts.get(f.wallet.wallet) as T;
  };
  return {
    name,
    setup: async () => {
      const { fixture, ctx } = await setup();
      contexts.set(fixture.wallet.wallet, ctx);
      return fixture;
    },
    intent: (f) => intent(f, ctxOf(f)),
    verify: (f, confirmed) => verify(f, ctxOf(f), confirmed),
  };
}

/** Groups of checks a driver may opt out of (e.g. a read-only chain sets `submit: false`). */
export interface ConformanceCapabilities {
  /** submit + confirm against the ledger. Default true. */
  submit?: boolean;
  /** balances + controlState. Default true. */
  reads?: boolean;
}

export interface ConformanceOptions {
  /** Shown in test names. */
  name: string;
  driver: ChainDriver;
  signer: ChainSigner;
  setup: () => Promise<ConformanceFixture>;
  capabilities?: ConformanceCapabilities;
  /** confirm polling: attempts and pause between them. Defaults 30 and 200 ms. */
  confirmAttempts?: number;
  confirmIntervalMs?: number;
  /** Per-check timeout for describeChainDriver. Default 30 s. */
  timeoutMs?: number;
  /**
   * One case per operation the driver builds, executed end to end (build, sign at quorum,
   * assemble, submit, confirm) and checked through the independent reader. When given, the suite
   * also requires a case for every operation in `driver.operations`.
   */
  operations?: readonly OperationCase[];
}

/** An operation executed end to end by the suite and verified without the driver. */
export interface OperationCase {
  /** Shown in the test name, e.g. `IOU transfer` or `mpt_create`. */
  name: string;
  /** State this case needs (a wallet able to do it). Default: the suite's `setup`. */
  setup?: () => Promise<ConformanceFixture>;
  /** The intent to execute; `wallet` is filled from the fixture. */
  intent: (f: ConformanceFixture) => Omit<IntentRequest, 'wallet'>;
  /** Reads the ledger independently after confirmation and asserts the operation's effect. */
  verify: (f: ConformanceFixture, confirmed: Extract<ConfirmResult, { status: 'confirmed' }>) => Promise<void>;
}

export type ConformanceGroup = 'registry' | 'address' | 'params' | 'build' | 'fee' | 'sign' | 'assemble' | 'submit' | 'fate' | 'reads' | 'operations';

export interface ConformanceCheck {
  name: string;
  group: ConformanceGroup;
  /** False when the driver opted out of this check's group. */
  enabled: boolean;
  /** Resolves when the driver conforms; rejects with an assertion error naming what broke. */
  run: () => Promise<void>;
}

/** A representative request for each operation, to probe what a driver refuses. */
const SAMPLE_OPERATIONS: Record<OperationKind, OperationInput> = {
  transfer: { op: 'transfer' },
  issue: { op: 'issue' },
  authorize_holder: { op: 'authorize_holder' },
  clawback: { op: 'clawback' },
  mpt_create: { op: 'mpt_create', asset_scale: 2, flags: 0x20 },
  account_flags: { op: 'account_flags', set: 8 },
  contract_call: { op: 'contract_call', data_hex: '0xa9059cbb' },
};

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The conformance checks as plain async functions, in suite order. `describeChainDriver` wraps
 * each in an `it`; call them directly to run the suite outside vitest's collector.
 *
 * @example
 * for (const check of conformanceChecks(options)) if (check.enabled) await check.run()
 */
export function conformanceChecks(options: ConformanceOptions): ConformanceCheck[] {
  const { driver, signer } = options;
  const caps = { submit: true, reads: true, ...options.capabilities };
  const attempts = options.confirmAttempts ?? 30;
  const intervalMs = options.confirmIntervalMs ?? 200;

  const fixture = async (setup: () => Promise<ConformanceFixture> = options.setup) => {
    const f = await setup();
    expect(driver.chains, 'fixture.chain must be a chain the driver serves').toContain(f.chain);
    expect(f.wallet.chain, 'fixture.wallet.chain must equal fixture.chain').toBe(f.chain);
    const { members, quorum } = walletMembers(f.wallet);
    expect(f.keys.length, 'fixture.keys must hold one key per wallet member').toBe(members.length);
    return { ...f, members, quorum, address: walletAddress(f.wallet), amount: f.transferAmount ?? '1000' };
  };
  type Fx = Awaited<ReturnType<typeof fixture>>;

  const intentOf = (f: Fx, overrides: Partial<IntentRequest> = {}): NormalizedIntent =>
    normalizeIntent({ wallet: f.wallet.wallet, destination: f.destination, amount: f.amount, ...overrides });

  const build = async (f: Fx, overrides: Partial<IntentRequest> = {}) => {
    const params = await driver.fetchParams({ wallet: f.wallet });
    return { params, built: driver.buildPayload({ intent: intentOf(f, overrides), wallet: f.wallet, params }) };
  };

  const sign = (f: Fx, built: BuiltPayload, index: number): Promise<Contribution> => {
    const member = f.members[index];
    const key = f.keys[index];
    if (!member || !key) throw new Error(`no member ${index}`);
    return signer.signPayload({ built, key, signerAddress: member.address });
  };

  /** Member indexes in wallet order until the weight reaches quorum; the last one tips it over. */
  const quorumSet = (f: Fx): number[] => {
    const picked: number[] = [];
    let weight = 0;
    for (let i = 0; i < f.members.length && weight < f.quorum; i++) {
      picked.push(i);
      weight += f.members[i]?.weight ?? 0;
    }
    return picked;
  };
  const weightOf = (f: Fx, indexes: readonly number[]) => indexes.reduce((s, i) => s + (f.members[i]?.weight ?? 0), 0);

  /** A fresh fixture, a payload and the quorum set's contributions (the last one tips the quorum). */
  const signedAtQuorum = async () => {
    const f = await fixture();
    const { built } = await build(f);
    const set = quorumSet(f);
    const signed = await Promise.all(set.map((i) => sign(f, built, i)));
    const tipping = set.at(-1) as number;
    return { f, built, set, signed, below: signed.slice(0, -1), belowWeight: weightOf(f, set.slice(0, -1)), tipping };
  };

  /** Builds, signs at quorum and assembles; returns what submit needs. */
  const assembled = async (f: Fx) => {
    const { built } = await build(f);
    const contributions = await Promise.all(quorumSet(f).map((i) => sign(f, built, i)));
    const result = driver.assemble({ built, contributions, wallet: f.wallet });
    if (!result.ok) throw new Error(`assemble at quorum failed: ${JSON.stringify(result)}`);
    return { built, result };
  };

  const confirmed = async (chain: string, txHash: string, built: BuiltPayload): Promise<ConfirmResult> => {
    let last: ConfirmResult = { status: 'pending', txHash };
    for (let i = 0; i < attempts; i++) {
      last = await driver.confirm({ chain, txHash, built });
      if (last.status !== 'pending') return last;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    return last;
  };

  /** The driver's fee and default cap; the reference signer refuses to sign for a driver without them. */
  const requireFee = () => {
    const fee = driver.fee;
    if (typeof fee !== 'function' || typeof driver.defaultMaxFee !== 'bigint') {
      throw new Error('driver has no fee / defaultMaxFee: the reference signer refuses to sign for a driver that cannot state its fee');
    }
    return { fee: (built: BuiltPayload) => fee.call(driver, { built }), defaultMaxFee: driver.defaultMaxFee };
  };

  /** payloadFate is required (the double-spend rule): a driver without it fails here, not later. */
  const requireFate = () => {
    const probe = driver.payloadFate as ChainDriver['payloadFate'] | undefined;
    if (typeof probe !== 'function') throw new Error('driver has no payloadFate: it is required, a signer cannot sign a second payload without it');
    return (chain: string, built: BuiltPayload) => probe.call(driver, { chain, built });
  };

  const checks: Omit<ConformanceCheck, 'enabled'>[] = [
    {
      group: 'registry',
      name: 'registry accepts the driver and serves exactly its chains',
      run: async () => {
        const f = await fixture();
        const drivers = new DriverRegistry<ChainDriver>([driver]);
        expect(drivers.chains(), 'registry chains must be exactly driver.chains').toEqual([...driver.chains].sort());
        expect(drivers.get(f.chain)).toBe(driver);
        const unknown = `${driver.family}:not-a-chain`;
        expect(() => drivers.get(unknown), `get(${unknown}) must throw`).toThrow(DriverRegistryError);
        const signers = new DriverRegistry<ChainSigner>([signer]);
        expect(signers.get(f.chain), 'the signer must serve the fixture chain').toBe(signer);
        expect(signer.family, 'driver and signer must be the same family').toBe(driver.family);
        expect(driver.operations.length, 'driver.operations must list what it builds').toBeGreaterThan(0);
      },
    },
    {
      group: 'registry',
      name: 'driver and signer have every required method (payloadFate included)',
      run: async () => {
        const record = (o: object) => o as Record<string, unknown>;
        const missing = [
          ...CHAIN_DRIVER_METHODS.filter((m) => typeof record(driver)[m] !== 'function').map((m) => `driver.${m}`),
          ...CHAIN_SIGNER_METHODS.filter((m) => typeof record(signer)[m] !== 'function').map((m) => `signer.${m}`),
        ];
        expect(missing, 'required methods that are not functions').toEqual([]);
        expect(typeof driver.fee === 'function', 'fee and defaultMaxFee come together').toBe(typeof driver.defaultMaxFee === 'bigint');
      },
    },
    {
      group: 'address',
      name: 'validateAddress accepts the wallet, its members and the destination',
      run: async () => {
        const f = await fixture();
        for (const address of [f.address, f.destination, ...f.members.map((m) => m.address)]) {
          const check = driver.validateAddress({ chain: f.chain, address });
          expect(check, `validateAddress(${address})`).toMatchObject({ valid: true });
          if (check.valid) {
            expect(typeof check.normalized).toBe('string');
            // the signer normalises what the control plane stored: the form must be a fixed point
            expect(driver.validateAddress({ chain: f.chain, address: check.normalized }), `validateAddress(${check.normalized}) again`).toMatchObject({ valid: true, normalized: check.normalized });
            // An address of the fixture's chain is bound to no network or to that one: any other
            // and the network_separation guard would refuse it as a destination.
            expect(check.network === null || check.network === f.chain, `validateAddress(${address}).network must be null or ${f.chain}, got ${String(check.network)}`).toBe(true);
          }
        }
      },
    },
    {
      group: 'address',
      name: 'validateAddress rejects each invalid address with a reason',
      run: async () => {
        const f = await fixture();
        expect(f.invalidAddresses.length, 'fixture.invalidAddresses must name chain-specific bad addresses').toBeGreaterThan(0);
        for (const address of ['', 'not an address', ...f.invalidAddresses]) {
          const check = driver.validateAddress({ chain: f.chain, address });
          expect(check.valid, `validateAddress(${JSON.stringify(address)}) must be invalid`).toBe(false);
          if (!check.valid) expect(check.reason, `reason for ${JSON.stringify(address)}`).toMatch(/\S/);
        }
      },
    },
    {
      group: 'params',
      name: "fetchParams returns ChainParams of the driver's paramsKind",
      run: async () => {
        const f = await fixture();
        const params: ChainParams = await driver.fetchParams({ wallet: f.wallet });
        const parsed = ChainParamsSchema.safeParse(params);
        expect(parsed.success, `ChainParamsSchema: ${parsed.error?.message ?? ''}`).toBe(true);
        expect(params.kind).toBe(driver.paramsKind);
        if (params.kind === 'custom') expect(params.family, 'custom params name the driver family').toBe(driver.family);
      },
    },
    {
      group: 'params',
      name: 'fetchProtectInputs returns well-formed guard facts',
      run: async () => {
        const f = await fixture();
        const intent = intentOf(f);
        const facts = await driver.fetchProtectInputs({ intent, wallet: f.wallet });
        expect(facts.destination?.address.toLowerCase(), 'facts.destination names the intent destination').toBe(intent.destination.toLowerCase());
        for (const [role, a] of [['destination', facts.destination], ['issuer', facts.issuer]] as const) {
          if (a === null) continue;
          expect([true, false, null], `${role}.hasCode`).toContain(a.hasCode);
          if (a.hasCode === true) expect(a.codeHash, `${role}.codeHash of code`).toMatch(/^0x[0-9a-f]{64}$/);
          else expect(a.codeHash, `${role}.codeHash without code`).toBeNull();
        }
        expect(facts.issuer, 'a native-asset intent names no issuer').toBeNull();
        expect(facts.assetSymbol === null || typeof facts.assetSymbol === 'string').toBe(true);
        expect(typeof facts.issuerKeyBurned).toBe('boolean');
        const wire = protectChainFacts(facts);
        for (const entry of wire.evm_code) expect(EvmCodeEntrySchema.safeParse(entry).success, `evm_code entry ${JSON.stringify(entry)}`).toBe(true);
        // Both services write the facts with the same function: they must read as agreeing.
        expect(chainFactsDisagreement(wire, facts)).toBeNull();
      },
    },
    {
      group: 'build',
      name: 'buildPayload is deterministic and its digest is 64 lowercase hex',
      run: async () => {
        const f = await fixture();
        const params = await driver.fetchParams({ wallet: f.wallet });
        const input = { intent: intentOf(f), wallet: f.wallet, params };
        const a = driver.buildPayload(input);
        const b = driver.buildPayload(structuredClone(input));
        // The signer rebuilds from the wire: the JSON round trip must give the same bytes too.
        const c = driver.buildPayload(JSON.parse(JSON.stringify(input)) as typeof input);
        expect(a.digest, 'digest must be 32 bytes as lowercase hex').toMatch(HEX64);
        expect(a.summary, 'summary must be a non-empty line').toMatch(/\S/);
        for (const other of [b, c]) {
          expect(canonicalize(other.payload), 'same input must give the same canonical payload').toBe(canonicalize(a.payload));
          expect(other.digest, 'same input must give the same digest').toBe(a.digest);
          expect(other.summary).toBe(a.summary);
        }
      },
    },
    {
      group: 'build',
      name: 'a different amount or destination changes the digest',
      run: async () => {
        const f = await fixture();
        const params = await driver.fetchParams({ wallet: f.wallet });
        const digest = (overrides: Partial<IntentRequest>) =>
          driver.buildPayload({ intent: intentOf(f, overrides), wallet: f.wallet, params }).digest;
        const base = digest({});
        expect(digest({ amount: (BigInt(f.amount) + 1n).toString() }), 'amount + 1 must change the digest').not.toBe(base);
        // A member that is the wallet's own account (its master key) cannot be a destination.
        const walletAddress = f.wallet.control.kind === 'native_multisig' ? f.wallet.control.address : f.wallet.control.safe;
        const other = f.members.find((m) => m.address !== f.destination && m.address !== walletAddress)?.address;
        if (other) expect(digest({ destination: other }), 'another destination must change the digest').not.toBe(base);
      },
    },
    {
      group: 'build',
      name: 'unsupported operations are refused with a VaultError',
      run: async () => {
        const f = await fixture();
        const params = await driver.fetchParams({ wallet: f.wallet });
        for (const op of OPERATION_KINDS.filter((k) => !driver.operations.includes(k))) {
          let thrown: unknown = null;
          try {
            driver.buildPayload({ intent: intentOf(f, { operation: SAMPLE_OPERATIONS[op] }), wallet: f.wallet, params });
          } catch (e) {
            thrown = e;
          }
          expect(thrown, `buildPayload(${op}) must throw a VaultError, threw ${String(thrown)}`).toBeInstanceOf(VaultError);
        }
      },
    },
    {
      group: 'fee',
      name: "fee states what the driver's own payloads pay, deterministically, within its default cap",
      run: async () => {
        const f = await fixture();
        const { fee, defaultMaxFee } = requireFee();
        const { built } = await build(f);
        const quote = fee(built);
        expect(typeof quote.amount, 'fee(built).amount must be a bigint').toBe('bigint');
        expect(quote.amount >= 0n, 'fee(built).amount must not be negative').toBe(true);
        expect(quote.unit, 'fee(built).unit must name the unit').toMatch(/\S/);
        // The signer measures the payload it rebuilt from the wire: the JSON round trip must agree.
        expect(fee(JSON.parse(JSON.stringify(built)) as BuiltPayload), 'fee must be a function of the payload alone').toEqual(quote);
        // A default cap that refuses the driver's own fresh payloads would make every signer without
        // an explicit max_fee refuse everything.
        expect(quote.amount <= defaultMaxFee, `the driver's own payload pays ${quote.amount} ${quote.unit}, above its defaultMaxFee ${defaultMaxFee}`).toBe(true);
      },
    },
    {
      group: 'sign',
      name: "each key derives its member's address and signs a valid Contribution",
      run: async () => {
        const f = await fixture();
        const { built } = await build(f);
        for (const [i, member] of f.members.entries()) {
          const key = f.keys[i] as SigningKey;
          expect(signer.deriveAddress({ chain: f.chain, publicKey: key.publicKey, curve: key.curve }), `deriveAddress(keys[${i}])`).toBe(member.address);
          // A function of its arguments alone: a copy of the key bytes gives the same address again.
          expect(signer.deriveAddress({ chain: f.chain, publicKey: Uint8Array.from(key.publicKey), curve: key.curve }), `deriveAddress(keys[${i}]) again`).toBe(member.address);
          const c = await sign(f, built, i);
          const parsed = ContributionSchema.safeParse(c);
          expect(parsed.success, `ContributionSchema: ${parsed.error?.message ?? ''}`).toBe(true);
          expect(c.signer_address).toBe(member.address);
        }
      },
    },
    {
      group: 'assemble',
      name: 'assemble below quorum is short_of_quorum with weight, quorum and missing members',
      run: async () => {
        const f = await fixture();
        const { built } = await build(f);
        const below = quorumSet(f).slice(0, -1);
        const contributions = await Promise.all(below.map((i) => sign(f, built, i)));
        const result = driver.assemble({ built, contributions, wallet: f.wallet });
        expect(result).toMatchObject({ ok: false, reason: 'short_of_quorum', weight: weightOf(f, below), quorum: f.quorum });
        if (result.ok) return;
        const expected = f.members.filter((_, i) => !below.includes(i));
        expect(sortedMembers(result.missing), 'missing must list every member without a valid contribution').toEqual(sortedMembers(expected));
        expect(result.invalid).toEqual([]);
      },
    },
    {
      group: 'assemble',
      name: 'a contribution with a corrupted signature is not counted and is listed bad_signature',
      run: async () => {
        const { f, built, signed, below, belowWeight, tipping } = await signedAtQuorum();
        const victim = signed.at(-1) as Contribution;
        const corrupted = { ...victim, signature: { ...victim.signature, hex: corruptHex(victim.signature.hex) } };
        const result = driver.assemble({ built, contributions: [...below, corrupted], wallet: f.wallet });
        expect(result, 'a corrupted signature must not count toward quorum').toMatchObject({ ok: false, weight: belowWeight });
        if (result.ok) return;
        expectInvalid(result.invalid, [{ index: below.length, address: victim.signer_address, reason: 'bad_signature' }]);
        expect(result.missing.map((m) => m.address.toLowerCase()), 'its member is still missing').toContain((f.members[tipping]?.address ?? '').toLowerCase());
      },
    },
    {
      group: 'assemble',
      name: 'a contribution from a non-member is not counted and is listed not_a_member',
      run: async () => {
        const { f, built, set, signed, below, belowWeight } = await signedAtQuorum();
        const outsider = f.outsider ?? createSoftwareKey();
        const outsiderAddress = signer.deriveAddress({ chain: f.chain, publicKey: outsider.publicKey, curve: outsider.curve });
        expect(f.members.map((m) => m.address.toLowerCase()), 'fixture outsider must not be a member').not.toContain(outsiderAddress.toLowerCase());
        const stranger = await signer.signPayload({ built, key: outsider, signerAddress: outsiderAddress });
        const short = driver.assemble({ built, contributions: [...below, stranger], wallet: f.wallet });
        expect(short, 'a non-member must not make up the quorum').toMatchObject({ ok: false, weight: belowWeight });
        if (!short.ok) expectInvalid(short.invalid, [{ index: below.length, address: stranger.signer_address, reason: 'not_a_member' }]);
        const ok = driver.assemble({ built, contributions: [...signed, stranger], wallet: f.wallet });
        expect(ok, 'a non-member must add no weight').toMatchObject({ ok: true, weight: weightOf(f, set) });
      },
    },
    {
      group: 'assemble',
      name: 'a memo gives what verifying afresh gives, and one filled for another payload counts none of its signatures',
      run: async () => {
        const { f, built, signed } = await signedAtQuorum();
        const memo = new ContributionMemo();
        // As the control plane assembles: each contribution as it arrives, then all of them.
        for (const c of signed) driver.assemble({ built, contributions: [c], wallet: f.wallet, memo });
        expect(driver.assemble({ built, contributions: signed, wallet: f.wallet, memo }), 'a memo must not change the result').toEqual(driver.assemble({ built, contributions: signed, wallet: f.wallet }));
        // The same signatures put to another payload of the same wallet with the memo filled above:
        // a driver that keyed the memo on anything less than its payload would count them.
        const other = (await build(f, { amount: f.amount.includes('.') ? `${f.amount}1` : (BigInt(f.amount) + 1n).toString() })).built;
        expect(other.digest, 'fixture: another amount must give another payload').not.toBe(built.digest);
        const result = driver.assemble({ built: other, contributions: signed, wallet: f.wallet, memo });
        expect(result, 'signatures over another payload must not count through the memo').toMatchObject({ ok: false, weight: 0 });
        if (!result.ok) expectInvalid(result.invalid, signed.map((c, index) => ({ index, address: c.signer_address, reason: 'bad_signature' as const })));
      },
    },
    {
      group: 'assemble',
      name: 'a repeated contribution counts once and each repeat is listed duplicate',
      run: async () => {
        const { f, built, below, belowWeight } = await signedAtQuorum();
        const result = driver.assemble({ built, contributions: [...below, ...below, ...below], wallet: f.wallet });
        expect(result, 'each member counts once however often it contributes').toMatchObject({ ok: false, weight: belowWeight });
        if (result.ok) return;
        const repeats = [...below, ...below].map((c, i) => ({ index: below.length + i, address: c.signer_address, reason: 'duplicate' as const }));
        expectInvalid(result.invalid, repeats);
      },
    },
    {
      group: 'assemble',
      name: 'malformed contributions (null, wrong types, missing or extra members) are listed malformed, never thrown',
      run: async () => {
        const { f, built, signed, below, belowWeight } = await signedAtQuorum();
        // Variants of the contribution that would tip the quorum: counting any one of them is visible.
        const c = signed.at(-1) as Contribution;
        const { signature: _signature, ...unsigned } = c;
        const variants: { value: unknown; readable: boolean }[] = [
          { value: null, readable: false },
          { value: undefined, readable: false },
          { value: 42, readable: false },
          { value: 'a contribution', readable: false },
          { value: [c], readable: false },
          { value: {}, readable: false },
          { value: { ...c, signer_address: 5 }, readable: false },
          { value: { ...c, public_key: c.public_key.hex }, readable: true },
          { value: { ...c, public_key: { ...c.public_key, curve: 'rsa' } }, readable: true },
          { value: { ...c, signature: null }, readable: true },
          { value: { ...c, signature: { ...c.signature, hex: c.signature.hex.toUpperCase() } }, readable: true },
          { value: { ...c, signature: { ...c.signature, encoding: 7 } }, readable: true },
          { value: unsigned, readable: true },
          { value: { ...c, counted: true }, readable: true },
        ];
        const given = [...below, ...variants.map((v) => v.value)] as Contribution[];
        let result: ReturnType<ChainDriver['assemble']> | undefined;
        expect(() => {
          result = driver.assemble({ built, contributions: given, wallet: f.wallet });
        }, 'a malformed contribution is a value in invalid, not a throw').not.toThrow();
        expect(result, 'no malformed variant may count').toMatchObject({ ok: false, weight: belowWeight });
        if (!result || result.ok) return;
        expectInvalid(
          result.invalid,
          variants.map((v, i) => ({ index: below.length + i, ...(v.readable ? { address: c.signer_address } : {}), reason: 'malformed' as const })),
        );
        // The malformed ones change nothing for the valid ones around them.
        const clean = driver.assemble({ built, contributions: signed, wallet: f.wallet });
        const noisy = driver.assemble({ built, contributions: [...variants.map((v) => v.value), ...signed] as Contribution[], wallet: f.wallet });
        expect(clean, 'assemble at quorum').toMatchObject({ ok: true });
        expect(noisy, 'malformed contributions beside a quorum leave the same blob').toEqual(clean);
      },
    },
    {
      group: 'assemble',
      name: "a member's signature relabelled as another member, or with another curve, is listed wrong_key",
      run: async () => {
        const { f, built, signed, below, belowWeight, tipping: tippingIndex } = await signedAtQuorum();
        const tipping = f.members[tippingIndex] as { address: string };
        const own = signed.at(-1) as Contribution;
        const otherCurve = { ...own, public_key: { ...own.public_key, curve: own.public_key.curve === 'ed25519' ? 'secp256k1' : 'ed25519' } } as Contribution;
        // Any other member's good signature, claimed for the member that would tip the quorum.
        const donor = f.members.findIndex((_, i) => i !== tippingIndex);
        const relabelled = donor < 0 ? [] : [{ ...(await sign(f, built, donor)), signer_address: tipping.address }];
        const result = driver.assemble({ built, contributions: [...below, otherCurve, ...relabelled], wallet: f.wallet });
        expect(result, "another member's key must not count for the tipping member").toMatchObject({ ok: false, weight: belowWeight });
        if (result.ok) return;
        expectInvalid(result.invalid, [
          { index: below.length, address: own.signer_address, reason: 'wrong_key' },
          ...relabelled.map(() => ({ index: below.length + 1, address: tipping.address, reason: 'wrong_key' as const })),
        ]);
      },
    },
    {
      group: 'assemble',
      name: 'assemble at quorum is ok, and the blob does not depend on contribution order',
      run: async () => {
        const { f, built, set, signed: contributions } = await signedAtQuorum();
        const a = driver.assemble({ built, contributions, wallet: f.wallet });
        expect(a).toMatchObject({ ok: true, weight: weightOf(f, set), quorum: f.quorum });
        if (!a.ok) return;
        expect(a.blob).toMatch(/\S/);
        expect(a.txHash).toMatch(/\S/);
        const b = driver.assemble({ built, contributions: [...contributions].reverse(), wallet: f.wallet });
        expect(b, 'same contributions in another order must give the same blob and hash').toEqual(a);
      },
    },
    {
      group: 'submit',
      name: 'submit + confirm: the ledger applies the transfer (independent read)',
      run: async () => {
        const f = await fixture();
        const before = await f.ledger.balance(f.destination);
        const walletBefore = await f.ledger.balance(f.address);
        const { built, result } = await assembled(f);
        if (!result.ok) return;
        const submitted = await driver.submit({ chain: f.chain, blob: result.blob });
        expect(submitted, 'submit must be accepted').toMatchObject({ status: 'submitted', txHash: result.txHash });
        const outcome = await confirmed(f.chain, result.txHash, built);
        expect(outcome, 'confirm must report confirmed').toMatchObject({ status: 'confirmed', txHash: result.txHash });
        if (submitted.status === 'submitted' && submitted.confirmed !== undefined) {
          expect(submitted.confirmed, "a final answer from submit must be exactly confirm's").toEqual(outcome);
        }
        const after = await f.ledger.balance(f.destination);
        expect(after - before, 'independent reader: destination balance must rise by exactly the amount').toBe(BigInt(f.amount));
        expect(await f.ledger.txResult(result.txHash), 'independent reader: the transaction must be applied').toMatchObject({ applied: true });
        const walletAfter = await f.ledger.balance(f.address);
        expect(walletAfter <= walletBefore - BigInt(f.amount), 'independent reader: the wallet must pay at least the amount').toBe(true);
      },
    },
    {
      group: 'submit',
      name: 'the ledger takes no more than fee(built) beyond the amount (independent read)',
      run: async () => {
        const f = await fixture();
        const { fee } = requireFee();
        const walletBefore = await f.ledger.balance(f.address);
        const { built, result } = await assembled(f);
        if (!result.ok) return;
        expect(await driver.submit({ chain: f.chain, blob: result.blob }), 'submit must be accepted').toMatchObject({ status: 'submitted' });
        expect(await confirmed(f.chain, result.txHash, built)).toMatchObject({ status: 'confirmed' });
        const spent = walletBefore - (await f.ledger.balance(f.address));
        const stated = fee(built);
        // The cap a signer enforces is only as good as this bound.
        expect(spent - BigInt(f.amount) <= stated.amount, `independent reader: the wallet paid ${spent - BigInt(f.amount)} in fees, fee(built) said at most ${stated.amount} ${stated.unit}`).toBe(true);
      },
    },
    {
      group: 'submit',
      name: 'submitting the same blob again does not move funds twice (independent read)',
      run: async () => {
        const f = await fixture();
        const before = await f.ledger.balance(f.destination);
        const { built, result } = await assembled(f);
        if (!result.ok) return;
        await driver.submit({ chain: f.chain, blob: result.blob });
        expect(await confirmed(f.chain, result.txHash, built)).toMatchObject({ status: 'confirmed' });
        // A replay is an expected outcome: it may be reported as submitted or rejected, not thrown.
        const again = await driver.submit({ chain: f.chain, blob: result.blob });
        expect(['submitted', 'rejected'], 'a replay is a value, not a throw').toContain(again.status);
        expect(await confirmed(f.chain, result.txHash, built), 'the original stays confirmed').toMatchObject({ status: 'confirmed' });
        expect((await f.ledger.balance(f.destination)) - before, 'independent reader: funds must move exactly once').toBe(BigInt(f.amount));
      },
    },
    {
      group: 'fate',
      name: 'payloadFate: a signed, unsubmitted payload is live; once confirmed it is applied',
      run: async () => {
        const f = await fixture();
        const fate = requireFate();
        const { built, result } = await assembled(f);
        if (!result.ok) return;
        expect(await fate(f.chain, built), 'a payload nobody submitted is live').toMatchObject({ fate: 'live' });
        expect(await driver.submit({ chain: f.chain, blob: result.blob })).toMatchObject({ status: 'submitted' });
        expect(await confirmed(f.chain, result.txHash, built)).toMatchObject({ status: 'confirmed' });
        expect(await fate(f.chain, built), 'a confirmed payload is applied, never dead, and names the txHash confirm takes').toMatchObject({ fate: 'applied', txHash: result.txHash });
      },
    },
    {
      group: 'fate',
      name: 'payloadFate: a payload whose sequence or nonce another payload used is dead; the one that landed is applied',
      run: async () => {
        const f = await fixture();
        const fate = requireFate();
        const params = await driver.fetchParams({ wallet: f.wallet });
        const first = driver.buildPayload({ intent: intentOf(f), wallet: f.wallet, params });
        const rival = driver.buildPayload({ intent: intentOf(f, { amount: (BigInt(f.amount) + 1n).toString() }), wallet: f.wallet, params });
        expect(rival.digest, 'two amounts must give two payloads').not.toBe(first.digest);
        const contributions = await Promise.all(quorumSet(f).map((i) => sign(f, first, i)));
        const result = driver.assemble({ built: first, contributions, wallet: f.wallet });
        if (!result.ok) throw new Error(`assemble at quorum failed: ${JSON.stringify(result)}`);
        expect(await driver.submit({ chain: f.chain, blob: result.blob })).toMatchObject({ status: 'submitted' });
        expect(await confirmed(f.chain, result.txHash, first)).toMatchObject({ status: 'confirmed' });
        expect(await fate(f.chain, first), 'the payload that landed').toMatchObject({ fate: 'applied', txHash: result.txHash });
        expect(await fate(f.chain, rival), 'its rival can never land').toMatchObject({ fate: 'dead' });
      },
    },
    {
      group: 'reads',
      name: 'balances agree with the independent reader',
      run: async () => {
        const f = await fixture();
        const onLedger = await f.ledger.balance(f.address);
        expect(onLedger.toString(), 'fixture.fundedAmount must be the wallet balance the reader sees').toBe(f.fundedAmount);
        const balances = await driver.balances({ wallet: f.wallet });
        for (const b of balances) {
          expect(b.amount, `balance ${b.asset} amount must be an integer decimal string`).toMatch(/^(0|[1-9][0-9]*)$/);
          expect(Number.isInteger(b.decimals) && b.decimals >= 0, `balance ${b.asset} decimals`).toBe(true);
        }
        const native = balances.find((b) => b.asset === 'native');
        expect(native?.amount, 'the native balance must equal the independent read').toBe(onLedger.toString());
      },
    },
    {
      group: 'reads',
      name: 'controlState agrees with the wallet descriptor (members and quorum)',
      run: async () => {
        const f = await fixture();
        const state = await driver.controlState({ wallet: f.wallet });
        expect(state.address.toLowerCase()).toBe(f.address.toLowerCase());
        expect(state.quorum, 'on-ledger quorum').toBe(f.quorum);
        expect(sortedMembers(state.members), 'on-ledger members and weights').toEqual(sortedMembers(f.members));
      },
    },
  ];

  const cases = options.operations ?? [];
  if (cases.length > 0) {
    checks.push({
      group: 'operations',
      name: 'every operation the driver lists has an end-to-end case',
      run: async () => {
        const covered = new Set<string>();
        for (const c of cases) {
          const f = await fixture(c.setup);
          covered.add(normalizeIntent({ wallet: f.wallet.wallet, ...c.intent(f) }).operation.op);
        }
        expect([...driver.operations].filter((op) => !covered.has(op)), 'operations without a case').toEqual([]);
      },
    });
  }
  for (const c of cases) {
    checks.push({
      group: 'operations',
      name: `operation ${c.name}: executes at quorum and the independent reader sees its effect`,
      run: async () => {
        const f = await fixture(c.setup);
        const intent = normalizeIntent({ wallet: f.wallet.wallet, ...c.intent(f) });
        expect(driver.operations, `driver.operations must list ${intent.operation.op}`).toContain(intent.operation.op);
        const params = await driver.fetchParams({ wallet: f.wallet });
        const built = driver.buildPayload({ intent, wallet: f.wallet, params });
        expect(driver.buildPayload({ intent, wallet: f.wallet, params }).digest, 'buildPayload must be deterministic').toBe(built.digest);
        const contributions = await Promise.all(quorumSet(f).map((i) => sign(f, built, i)));
        const result = driver.assemble({ built, contributions, wallet: f.wallet });
        expect(result, 'assemble at quorum').toMatchObject({ ok: true });
        if (!result.ok) return;
        const submitted = await driver.submit({ chain: f.chain, blob: result.blob });
        expect(submitted, `submit: ${'message' in submitted ? submitted.message : ''}`).toMatchObject({ status: 'submitted' });
        const done = await confirmed(f.chain, result.txHash, built);
        expect(done, 'confirm').toMatchObject({ status: 'confirmed' });
        if (done.status !== 'confirmed') return;
        expect(await f.ledger.txResult(result.txHash), 'independent reader: the transaction must be applied').toMatchObject({ applied: true });
        await c.verify(f, done);
      },
    });
  }

  return checks.map((c) => ({
    ...c,
    enabled:
      c.group === 'submit' || c.group === 'operations'
        ? caps.submit
        : c.group === 'fate'
          ? caps.submit
          : c.group === 'reads'
            ? caps.reads
            : true,
  }));
}

/**
 * Registers the conformance suite with vitest: one `describe` per driver, one `it` per check,
 * skipping groups the driver opted out of.
 *
 * @example
 * describeChainDriver({
 *   name: 'memory',
 *   driver: createMemoryDriver({ ledger }),
 *   signer: createMemorySigner(),
 *   setup: async () => fixtureOnALocalDevnet(),
 * })
 */
export function describeChainDriver(options: ConformanceOptions): void {
  const timeout = options.timeoutMs ?? 30_000;
  describe(`${options.name}: ChainDriver conformance`, () => {
    for (const check of conformanceChecks(options)) {
      (check.enabled ? it : it.skip)(check.name, check.run, timeout);
    }
  });
}

function walletAddress(wallet: WalletDescriptor): string {
  return wallet.control.kind === 'native_multisig' ? wallet.control.address : wallet.control.safe;
}

function sortedMembers(members: readonly { address: string; weight: number }[]) {
  return members
    .map((m) => ({ address: m.address.toLowerCase(), weight: m.weight }))
    .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

/**
 * `invalid` is exactly these entries, in this order: each `{ index, address?, reason, detail }`
 * with a reason from the published set and a non-empty detail.
 */
function expectInvalid(actual: readonly InvalidContribution[], expected: readonly Omit<InvalidContribution, 'detail'>[]): void {
  expect(actual, 'invalid lists each uncounted contribution: { index, address?, reason, detail }').toEqual(
    expected.map((e) => ({ ...e, detail: expect.stringMatching(/\S/) })),
  );
  for (const entry of actual) expect(CONTRIBUTION_REJECTIONS, `reason of ${JSON.stringify(entry)}`).toContain(entry.reason);
}

/** Flips one bit in the middle of a hex string: still well-formed, no longer the signature. */
function corruptHex(hex: string): string {
  const i = Math.floor(hex.length / 2);
  const flipped = (Number.parseInt(hex[i] ?? '0', 16) ^ 1).toString(16);
  return hex.slice(0, i) + flipped + hex.slice(i + 1);
}
