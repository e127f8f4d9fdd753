/**
 * End to end on local ledgers: the XRPL and Stellar devnets seeded with issuers, trust lines and
 * holders through real signed transactions, anvil with ERC-20s (string name, bytes32 name) and an
 * address without code, and the Solana JSON-RPC responder (Token-2022 extension number > 2^53).
 * The report's figures are checked against independent reads of each ledger's state (the devnets'
 * own ledgers, the Solana model, viem reads of anvil), then `verify` must report zero drift, then
 * the exact drift after a seeded payment / mint / burn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SupplyReportSchema } from '@vault/sdk';
import { startXrplDevnet, IOU_SCALE, type XrplDevnet } from '@vault/driver-xrpl/devnet';
import { startDevnet as startStellarDevnet, type StellarDevnet } from '@vault/driver-stellar/devnet';
import { startEvmDevnet, TEST_TOKEN_ABI, type EvmDevnet } from '@vault/driver-evm-safe/devnet';
import { createWalletClient, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Wallet } from 'xrpl';
import { parseConfig, runReport, verifyReport, verifyExitCode, formatVerdicts, type RunLog, type SupplyReport } from '../src/index.js';
import { setAuthority, startSolanaResponder, SolanaModel, type SolanaResponder } from './helpers/solana-responder.js';
import { Keypair, Operation, stellarFunded, stellarIssue, stellarSubmit, xrplIssue, xrplSubmit, xrplWallet } from './helpers/seed.js';

const RLUSD_HEX = Buffer.from('RLUSD').toString('hex').padEnd(40, '0').toUpperCase();
const MINT_PLAIN = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const MINT_2022 = 'Tok22ExtMintBigNumberAAAAAAAAAAAAAAAAAAAAA';
const MINT_ZERO = 'ZeroSupp1yMintAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const NOT_A_MINT = 'NotAMintAccountAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const U64_MAX = 18446744073709551615n;
const SOL_KEY = 'sol-secret-key-9f8e7d';

let xrpl: XrplDevnet;
let stellar: StellarDevnet;
let evm: EvmDevnet;
let sol: SolanaResponder;
const w: Record<string, Wallet> = {};
const k: Record<string, Keypair> = {};
const tokens: Record<string, Address> = {};
const NO_CODE = '0x000000000000000000000000000000000000dEaD' as Address;
let report: SupplyReport;
let runLog: RunLog;
let logLines: string[] = [];
let config: ReturnType<typeof parseConfig>;

async function mint(token: Address, amount: bigint): Promise<void> {
  const wallet = createWalletClient({ transport: http(evm.rpcUrl), account: privateKeyToAccount(evm.accounts.deployer.privateKey), chain: evm.publicClient.chain });
  const hash = await wallet.writeContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'mint', args: [evm.accounts.deployer.address, amount] });
  const r = await evm.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (r.status !== 'success') throw new Error('mint reverted');
}

beforeAll(async () => {
  [xrpl, stellar, evm, sol] = await Promise.all([
    startXrplDevnet({ networkId: 0, closeIntervalMs: 0 }),
    startStellarDevnet(),
    startEvmDevnet({ owners: 1, threshold: 1 }),
    startSolanaResponder(new SolanaModel()),
  ]);

  // XRPL: issuer A (domain, USD and RLUSD to two holders, one payment with a memo), issuer B
  // (a named provider's EUR), an AMM pool account, and an account that does not exist.
  for (const name of ['a', 'b', 'h1', 'h2']) w[name] = xrplWallet(xrpl);
  await xrplSubmit(xrpl, w.a as Wallet, { TransactionType: 'AccountSet', Domain: Buffer.from('issuer-a.example').toString('hex').toUpperCase() });
  await xrplIssue(xrpl, w.a as Wallet, w.h1 as Wallet, 'USD', '1500.25', 'invoice 17');
  await xrplIssue(xrpl, w.a as Wallet, w.h2 as Wallet, 'USD', '0.0001');
  await xrplIssue(xrpl, w.a as Wallet, w.h1 as Wallet, RLUSD_HEX, '1000');
  await xrplIssue(xrpl, w.b as Wallet, w.h2 as Wallet, 'EUR', '10');
  w.amm = Wallet.generate();
  xrpl.ledger.genesisAccount(w.amm.classicAddress, 50_000_000n, { flags: 0x02000000 });
  w.missing = Wallet.generate();
  xrpl.closeLedger();

  // Stellar: a plain issuer, three locked one-unit issuers (a group), a locked issuer of 7 units,
  // and an issuer merged away after issuing.
  k.holder = await stellarFunded(stellar);
  k.plain = await stellarFunded(stellar);
  await stellarIssue(stellar, k.plain, k.holder, 'ABC', '100.5');
  for (const name of ['l1', 'l2', 'l3', 'l4']) {
    const issuer = await stellarFunded(stellar);
    k[name] = issuer;
    await stellarIssue(stellar, issuer, k.holder, name === 'l4' ? 'SEVEN' : 'NFT', name === 'l4' ? '7' : '1');
    stellarSubmit(stellar, issuer, [Operation.setOptions({ masterWeight: 0 })]);
  }
  k.merged = await stellarFunded(stellar);
  await stellarIssue(stellar, k.merged, k.holder, 'MRG', '5');
  stellarSubmit(stellar, k.merged, [Operation.accountMerge({ destination: (k.plain as Keypair).publicKey() })]);

  // Solana: a plain mint, a Token-2022 mint whose extension carries u64::MAX, a mint burned to zero.
  sol.model.addMint(MINT_PLAIN, { program: 'spl-token', supply: 1_000_000_123_456n, decimals: 6, mintAuthority: 'BJE5MMbqXjVwjAF7oxwPYXnTXDyspzZyt4vwenNw5ruG', freezeAuthority: null });
  sol.model.addMint(MINT_2022, {
    program: 'spl-token-2022',
    supply: 5n,
    decimals: 9,
    mintAuthority: null,
    freezeAuthority: 'BJE5MMbqXjVwjAF7oxwPYXnTXDyspzZyt4vwenNw5ruG',
    extensions: [{ extension: 'transferFeeConfig', state: { newerTransferFee: { epoch: 605, maximumFee: U64_MAX, transferFeeBasisPoints: 50 }, withheldAmount: 9007199254740993n } }],
  });
  sol.model.addMint(MINT_ZERO, { program: 'spl-token', supply: 0n, decimals: 2, mintAuthority: null, freezeAuthority: null });
  sol.model.change(MINT_ZERO, 250n);
  sol.model.change(MINT_ZERO, -250n);

  // Polygon: two tokens owned by the deployer (string and bytes32 names), one owned by someone else, an address without code.
  const owner = evm.accounts.deployer.address;
  tokens.plain = await evm.deployToken(owner, { name: 'Plain Token', symbol: 'PLN', decimals: 6 });
  tokens.old = await evm.deployToken(owner, { name: 'Old Bytes Token', symbol: 'OLD', stringEncoding: 'bytes32' });
  tokens.foreign = await evm.deployToken((evm.accounts.funded[0] as { address: Address }).address, { name: 'Foreign' });
  await mint(tokens.plain, 123_456_789n);
  await mint(tokens.old, 10n ** 30n);

  config = parseConfig({
    xrpl: {
      endpoint: xrpl.url,
      issuers: [{ account: (w.a as Wallet).classicAddress }, { account: (w.b as Wallet).classicAddress, provider: 'Example Provider' }, (w.amm as Wallet).classicAddress, (w.missing as Wallet).classicAddress],
    },
    stellar: { endpoint: stellar.url, issuers: ['plain', 'l1', 'l2', 'l3', 'l4', 'merged'].map((n) => (k[n] as Keypair).publicKey()) },
    solana: {
      endpoint: { url: `${sol.url}/?api-key=\${SOL_KEY}`, rateLimit: { perSecond: 200, burst: 10 } },
      mints: [
        { mint: MINT_PLAIN, label: 'Plain' },
        { mint: MINT_2022, label: 'Token-2022' },
        { mint: MINT_ZERO, label: 'Burned' },
        { mint: NOT_A_MINT, label: 'Not a mint' },
      ],
    },
    polygon: {
      endpoint: evm.rpcUrl,
      owner,
      contracts: [
        { address: tokens.plain, label: 'Plain' },
        { address: tokens.old, label: 'Old' },
        { address: tokens.foreign, label: 'Foreign' },
        { address: NO_CODE, label: 'Nothing here' },
      ],
    },
    http: { concurrency: 3, backoffMs: 10 },
  });
  ({ report, runLog } = await runReport(config, { env: { SOL_KEY }, log: (l) => logLines.push(l) }));
}, 180_000);

afterAll(async () => {
  await Promise.all([xrpl?.close(), stellar?.close(), evm?.stop(), sol?.close()]);
});

describe('run on devnets', () => {
  it('writes a document the SDK schema accepts, with the public endpoints (no secret anywhere)', () => {
    expect(SupplyReportSchema.safeParse(report).success).toBe(true);
    expect(report.chains.solana.endpoint).toBe(sol.url);
    expect(report.chains.xrpl.endpoint).toBe(xrpl.url.replace(/\/$/, ''));
    const everything = JSON.stringify(report) + JSON.stringify(runLog) + logLines.join('\n');
    expect(everything).not.toContain(SOL_KEY);
    expect(runLog.peakConcurrency).toBeLessThanOrEqual(3);
  });

  it('XRPL rows equal the ledger: obligations as exact decimals, 40-hex codes decoded, domain decoded, notes', () => {
    const a = report.chains.xrpl.issuers.find((r) => r.account === (w.a as Wallet).classicAddress);
    // Independent read: sum the issuer's trust lines straight from the devnet ledger.
    const lines = xrpl.ledger.trustLinesOf((w.a as Wallet).classicAddress).filter((l) => l.currency === 'USD');
    const usd = lines.reduce((s, l) => s + l.balance, 0n);
    expect(usd).toBe(150_025n * 10n ** BigInt(IOU_SCALE - 2) + 10n ** BigInt(IOU_SCALE - 4));
    expect(a).toMatchObject({ domain: 'issuer-a.example', obligations: { USD: '1500.2501', RLUSD: '1000' } });
    expect(a?.note).toContain('USD, RLUSD are self-issued IOUs');
    expect(a?.note).toContain('carrying memos: 1 of its last');
    expect(JSON.parse(a?.query as string)).toEqual({ method: 'gateway_balances', params: [{ account: (w.a as Wallet).classicAddress, ledger_index: 'validated' }] });
    expect(a?.response_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('XRPL rows name the validated ledger they were read from: its index and hash', async () => {
    // Independent read: ask the devnet which ledger is validated and what its hash is.
    const res = await fetch(xrpl.url, { method: 'POST', body: JSON.stringify({ method: 'account_info', params: [{ account: (w.b as Wallet).classicAddress, ledger_index: 'validated' }] }) });
    const info = ((await res.json()) as { result: { ledger_index: number; ledger_hash: string; validated: boolean } }).result;
    expect(info.validated).toBe(true);
    expect(info.ledger_hash).toMatch(/^[0-9A-F]{64}$/);
    expect(info.ledger_index).toBe(xrpl.ledger.validatedLedgerIndex);
    for (const row of report.chains.xrpl.issuers) expect(row.at).toEqual({ ledger: info.ledger_index, hash: info.ledger_hash });
    expect(report.chains.xrpl.issuers).toHaveLength(3);

    const b = report.chains.xrpl.issuers.find((r) => r.account === (w.b as Wallet).classicAddress);
    expect(b).toMatchObject({ domain: null, obligations: { EUR: '10' } });
    expect(b?.note).toBeUndefined(); // a named provider: no self-issued note, no memos
    const amm = report.chains.xrpl.issuers.find((r) => r.account === (w.amm as Wallet).classicAddress);
    expect(amm).toMatchObject({ obligations: {} });
    expect(amm?.note).toContain('AMM pool account');
  });

  it('leaves out a row whose query fails and lists it in the run log (XRPL actNotFound, Solana non-mint)', () => {
    expect(report.chains.xrpl.issuers.map((r) => r.account)).not.toContain((w.missing as Wallet).classicAddress);
    expect(runLog.omitted).toContainEqual(expect.objectContaining({ chain: 'xrpl', subject: (w.missing as Wallet).classicAddress, reason: expect.stringContaining('actNotFound') }));
    expect(report.chains.solana.mints.map((r) => r.mint)).not.toContain(NOT_A_MINT);
    expect(runLog.omitted).toContainEqual(expect.objectContaining({ chain: 'solana', subject: NOT_A_MINT, reason: expect.stringContaining('not a Token mint') }));
    expect(runLog.omitted).toHaveLength(2);
  });

  it('Stellar rows: exact 7-place supply, locked from signers, the locked one-unit group, the merge date', () => {
    const rows = report.chains.stellar.issuers;
    const plain = rows.find((r) => r.issuer === (k.plain as Keypair).publicKey());
    // Independent read: the holder's trust line in the devnet ledger.
    expect(stellar.ledger.trustLine((k.holder as Keypair).publicKey(), 'ABC', (k.plain as Keypair).publicKey())?.balance).toBe(1_005_000_000n);
    expect(plain).toMatchObject({ locked: false, assets: { ABC: '100.5000000' }, query: `GET /assets?asset_issuer=${(k.plain as Keypair).publicKey()}&limit=200` });
    expect(plain?.at?.ledger).toBe(stellar.ledger.ledger);
    const group = rows.find((r) => r.issuer === '(3 locked issuers, 1 unit each)');
    expect(group).toMatchObject({ locked: true, assets: { NFT: '(3 issuers)' }, query: 'GET /assets?asset_code=NFT&limit=200' });
    expect(group?.members).toEqual(['l1', 'l2', 'l3'].map((n) => (k[n] as Keypair).publicKey()).sort());
    const l4 = rows.find((r) => r.issuer === (k.l4 as Keypair).publicKey());
    expect(l4).toMatchObject({ locked: true, assets: { SEVEN: '7.0000000' } });
    const merged = rows.find((r) => r.issuer === (k.merged as Keypair).publicKey());
    expect(merged).toMatchObject({ locked: null, assets: { MRG: '5.0000000' } });
    expect(merged?.merged).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(rows).toHaveLength(4);
  });

  it('Solana rows: amount+decimals (never uiAmount), authorities, Token-2022 u64 exact, zero supply explained', () => {
    const [plain, t22, zero] = [MINT_PLAIN, MINT_2022, MINT_ZERO].map((m) => report.chains.solana.mints.find((r) => r.mint === m));
    expect(plain).toMatchObject({ label: 'Plain', supply: '1000000.123456', decimals: 6, mintAuthority: 'BJE5MMbqXjVwjAF7oxwPYXnTXDyspzZyt4vwenNw5ruG', freezeAuthority: null });
    expect(plain?.at?.ledger).toBe(Number(sol.model.slot));
    expect(JSON.parse(plain?.query as string)).toEqual({ jsonrpc: '2.0', id: 1, method: 'getTokenSupply', params: [MINT_PLAIN, { commitment: 'finalized' }] });
    expect(t22).toMatchObject({ supply: '0.000000005', decimals: 9, mintAuthority: null });
    expect(t22?.note).toContain('"maximumFee":18446744073709551615');
    expect(t22?.note).toContain('"withheldAmount":9007199254740993');
    expect(zero?.supply).toMatch(/^0 \(no tokens outstanding; newest transaction \S+ on \S+, which removed 2\.50\)$/);
    expect(sol.calls).toContain('getSignaturesForAddress');
    expect(sol.calls).toContain('getTransaction');
  });

  it('Polygon rows: pinned block number and hash, string and bytes32 names, no-code address, foreign owner', async () => {
    const pg = report.chains.polygon;
    const block = await evm.publicClient.getBlock({ blockNumber: BigInt(pg.at?.ledger as number) });
    expect(pg.at?.hash).toBe(block.hash);
    const plain = pg.contracts.find((c) => c.address === tokens.plain);
    const supplyNow = await evm.publicClient.readContract({ address: tokens.plain as Address, abi: TEST_TOKEN_ABI, functionName: 'totalSupply' });
    expect(plain).toMatchObject({ supply: supplyNow.toString(), owner: evm.accounts.deployer.address, at: pg.at });
    expect(plain?.note).toContain('name() "Plain Token"');
    expect(JSON.parse(plain?.query as string)[1]).toEqual({ jsonrpc: '2.0', id: 2, method: 'eth_call', params: [{ to: tokens.plain, data: '0x8da5cb5b' }, `0x${BigInt(pg.at?.ledger as number).toString(16)}`] });
    const old = pg.contracts.find((c) => c.address === tokens.old);
    expect(old).toMatchObject({ supply: (10n ** 30n).toString() });
    expect(old?.note).toContain('name() "Old Bytes Token"');
    expect(pg.contracts.find((c) => c.address === tokens.foreign)?.note).toContain(`owner() is not ${evm.accounts.deployer.address}`);
    const none = pg.contracts.find((c) => c.address === NO_CODE);
    expect(none).not.toHaveProperty('supply');
    expect(none).not.toHaveProperty('owner');
    expect(none?.note).toContain('No contract code');
    expect(none?.code_size).toBe(0);
    // Independent read: the runtime code viem sees at the pinned block.
    for (const c of [tokens.plain, tokens.old, tokens.foreign] as Address[]) {
      const code = await evm.publicClient.getCode({ address: c, blockNumber: BigInt(pg.at?.ledger as number) });
      const row = pg.contracts.find((r) => r.address === c);
      expect(row?.code_size).toBe(((code as string).length - 2) / 2);
      expect(row?.code_size).toBeGreaterThan(0);
    }
  });

  it('prints progress on the log, one line per subject (18 subjects)', () => {
    expect(logLines.filter((l) => / \d+\/18 .* (ok|left out)$/.test(l))).toHaveLength(18);
  });
});

describe('verify on devnets', () => {
  it('reports zero drift right after the run (exit 0)', async () => {
    const result = await verifyReport(report, { config, env: { SOL_KEY } });
    expect(result.failed).toBe(0);
    expect(result.rows.filter((r) => r.status !== 'unchanged')).toEqual([]);
    expect(verifyExitCode(result)).toBe(0);
  });

  it('shows the exact drift after a payment, a Stellar payment, a Solana mint and an ERC-20 mint (exit 1)', async () => {
    await xrplIssue(xrpl, w.a as Wallet, w.h2 as Wallet, 'USD', '0.5');
    await stellarIssue(stellar, k.plain as Keypair, k.holder as Keypair, 'ABC', '0.0000001');
    sol.model.change(MINT_PLAIN, 1n);
    await mint(tokens.plain as Address, 1_000n);
    const result = await verifyReport(report, { config, env: { SOL_KEY } });
    const changes = Object.fromEntries(result.rows.filter((r) => r.status === 'drift').map((r) => [r.subject, r.changes]));
    expect(changes[(w.a as Wallet).classicAddress]).toEqual([{ field: 'obligations.USD', before: '1500.2501', now: '1500.7501', delta: '+0.5' }]);
    expect(changes[(k.plain as Keypair).publicKey()]).toEqual([{ field: 'assets.ABC', before: '100.5000000', now: '100.5000001', delta: '+0.0000001' }]);
    expect(changes[MINT_PLAIN]).toEqual([{ field: 'supply', before: '1000000.123456', now: '1000000.123457', delta: '+0.000001' }]);
    expect(changes[tokens.plain as string]).toEqual([{ field: 'supply', before: '123456789', now: '123457789', delta: '+1000' }]);
    expect(Object.keys(changes)).toHaveLength(4);
    expect(result.failed).toBe(0);
    expect(verifyExitCode(result)).toBe(1);
    expect(formatVerdicts(result)).toContain('obligations.USD: 1500.2501 -> 1500.7501 (+0.5)');
  });

  it('a query that fails on re-run is a failure (exit 2), and the group row notices a member supply change', async () => {
    const broken = structuredClone(report);
    const row = broken.chains.solana.mints[0] as { query: string };
    row.query = row.query.replace(MINT_PLAIN, NOT_A_MINT);
    // A fourth unit-issuer joins nobody; the first member's unit is paid back to it (burned): supply 0.
    stellarSubmit(stellar, k.holder as Keypair, [Operation.payment({ destination: (k.l1 as Keypair).publicKey(), asset: new (await import('@stellar/stellar-base')).Asset('NFT', (k.l1 as Keypair).publicKey()), amount: '1' })]);
    const result = await verifyReport(broken, { config, env: { SOL_KEY } });
    const failed = result.rows.find((r) => r.status === 'failed');
    expect(failed).toMatchObject({ chain: 'solana', subject: MINT_PLAIN, error: expect.stringContaining('not a Token mint') });
    const group = result.rows.find((r) => r.subject === '(3 locked issuers, 1 unit each)');
    expect(group?.changes).toEqual([{ field: `assets.NFT.${(k.l1 as Keypair).publicKey()}`, before: '1.0000000', now: '0.0000000', delta: '-1' }]);
    expect(verifyExitCode(result)).toBe(2);
  });

  it('re-checks the supporting facts: XRPL domain, Stellar locked, Solana mint authority, Polygon code size (old -> new)', async () => {
    const domainHex = Buffer.from('issuer-b.example').toString('hex').toUpperCase();
    await xrplSubmit(xrpl, w.b as Wallet, { TransactionType: 'AccountSet', Domain: domainHex });
    stellarSubmit(stellar, k.plain as Keypair, [Operation.setOptions({ masterWeight: 0 })]);
    setAuthority(sol.model, MINT_PLAIN, 'mintAuthority', null);
    // anvil_setCode puts one byte (STOP) at the address that had none: owner() and totalSupply()
    // still answer nothing, so only the code size moves.
    const setCode = await fetch(evm.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setCode', params: [NO_CODE, '0x00'] }) });
    expect(((await setCode.json()) as { error?: unknown }).error).toBeUndefined();

    const result = await verifyReport(report, { config, env: { SOL_KEY } });
    const changes = Object.fromEntries(result.rows.map((r) => [r.subject, r.changes]));
    expect(changes[(w.b as Wallet).classicAddress]).toEqual([{ field: 'domain', before: null, now: 'issuer-b.example' }]);
    expect(changes[(k.plain as Keypair).publicKey()]).toContainEqual({ field: 'locked', before: 'false', now: 'true' });
    expect(changes[MINT_PLAIN]).toContainEqual({ field: 'mintAuthority', before: 'BJE5MMbqXjVwjAF7oxwPYXnTXDyspzZyt4vwenNw5ruG', now: null });
    expect(changes[NO_CODE]).toEqual([{ field: 'code_size', before: '0', now: '1', delta: '+1' }]);
    // Facts that did not move show nothing: the merged issuer's date, the group's members still locked, the other authorities.
    expect(changes[(k.merged as Keypair).publicKey()]).toEqual([]);
    expect(changes['(3 locked issuers, 1 unit each)']?.filter((c) => c.field.startsWith('locked.'))).toEqual([]);
    expect(changes[MINT_2022]).toEqual([]);
    expect(result.failed).toBe(0);
    expect(verifyExitCode(result)).toBe(1);
    const table = formatVerdicts(result);
    expect(table).toContain('domain: (absent) -> issuer-b.example');
    expect(table).toContain('locked: false -> true');
    expect(table).toContain('code_size: 0 -> 1 (+1)');

    // A report made before code_size existed: the code size is not compared, and the verdict says so.
    const old = structuredClone(report);
    for (const c of old.chains.polygon.contracts) delete (c as { code_size?: number }).code_size;
    const oldResult = await verifyReport(old, { config, env: { SOL_KEY } });
    const noCode = oldResult.rows.find((r) => r.subject === NO_CODE);
    expect(noCode).toMatchObject({ status: 'unchanged', changes: [], unchecked: ['code_size (not recorded: the report predates the field)'] });
    expect(formatVerdicts(oldResult)).toContain('not compared: code_size (not recorded: the report predates the field)');
    expect(result.rows.find((r) => r.subject === NO_CODE)).not.toHaveProperty('unchecked');
  });

  it('a supporting-fact request that fails fails the row (exit 2), even when the supply query answered', async () => {
    const broken = structuredClone(report);
    const row = broken.chains.solana.mints.find((m) => m.mint === MINT_2022) as { mint: string };
    // The supply query still names the real mint; the row's own mint (used for getAccountInfo) is one the responder does not know.
    row.mint = NOT_A_MINT;
    const result = await verifyReport(broken, { config, env: { SOL_KEY } });
    expect(result.rows.find((r) => r.subject === NOT_A_MINT)).toMatchObject({ status: 'failed', error: expect.stringContaining(`getAccountInfo ${NOT_A_MINT}`) });
    expect(verifyExitCode(result)).toBe(2);
  });

  it('refuses a config whose endpoint is not the one the report names', async () => {
    const other = parseConfig({ ...JSON.parse(JSON.stringify({ xrpl: { endpoint: 'http://127.0.0.1:1/', issuers: [] }, stellar: { endpoint: stellar.url, issuers: [] }, solana: { endpoint: sol.url, mints: [] }, polygon: { endpoint: evm.rpcUrl, owner: evm.accounts.deployer.address, contracts: [] } })) });
    await expect(verifyReport(report, { config: other })).rejects.toThrow(/xrpl\.endpoint: resolves to http:\/\/127\.0\.0\.1:1 but the report was made against/);
  });
});
