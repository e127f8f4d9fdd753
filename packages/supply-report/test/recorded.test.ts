/**
 * Parsing on recorded and documented responses.
 *
 * XRPL: recorded rippled replies shipped in ripple-lib 0.17.9's test fixtures (installed as the
 * devDependency `kat-ripple-lib` and read as data at test time): gateway_balances (exponent
 * notation), account_info (Domain), tx results (Memos), and its binary account_tx page.
 *
 * Stellar, Solana and Polygon: no npm package publishes recorded Horizon, Solana RPC or eth_call
 * replies (checked: stellar-sdk, @stellar/stellar-sdk and @solana/web3.js tarballs ship no test
 * data), so the "hand-written" cases are WRITTEN BY HAND from the documented response shapes
 * (Horizon's /assets, /accounts and /operations resources; Solana's getTokenSupply, getAccountInfo
 * jsonParsed, getTransaction; JSON-RPC 2.0 batch replies of eth_call / eth_getCode), with invented
 * figures. The "recorded" cases read real replies from the shared fixtures folder
 * (`../shared/fixtures` beside the clone, or $VAULT_KAT_FIXTURES; see its PROVENANCE.md), never
 * copied into this repository; they are skipped when the folder is absent.
 */
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assetRecords,
  assetSupply,
  countMemos,
  decodeCurrency,
  decodeDomain,
  decodeName,
  isLocked,
  mergeDate,
  mintDelta,
  parseContractBatch,
  parseJsonExact,
  parseMintAccount,
  parseObligations,
  parseTokenSupply,
  rippledResult,
} from '../src/index.js';

const require = createRequire(import.meta.url);
const rippled = join(dirname(require.resolve('kat-ripple-lib/package.json')), 'test/fixtures/rippled');
const recorded = (name: string) => parseJsonExact(readFileSync(join(rippled, name), 'utf8'), name);

describe('XRPL, recorded rippled replies', () => {
  it('gateway_balances: obligations exact, exponent notation normalised', () => {
    const result = rippledResult(recorded('gateway-balances.json'), 'gateway_balances');
    expect(parseObligations(result, 'gateway_balances')).toEqual({ BTC: '5908.324927635318', EUR: '992471.7419793958', GBP: '4991.38706013193', USD: '1997134.20229482' });
    // The same reply's `assets` carry rippled's exponent notation; the same normaliser reads them.
    const assets = (result['assets'] as Record<string, { currency: string; value: string }[]>)['r9F6wk8HkXrgYWoJ7fsv4VrUBVoqDVtzkH'] as { currency: string; value: string }[];
    expect(parseObligations({ obligations: { BTC: assets[0]?.value } }, 'x')).toEqual({ BTC: '0.0000000000544416651' });
  });

  it('account_info: Domain hex decoded to text', () => {
    const result = rippledResult(recorded('account-info.json'), 'account_info');
    expect(decodeDomain(result['account_data'] as Record<string, unknown>)).toBe('example.com');
    expect(decodeDomain({})).toBeNull();
    expect(() => decodeDomain({ Domain: 'zz' })).toThrow('Domain is not hex');
  });

  it('account_info for a missing account is an rpc error naming the token', () => {
    expect(() => rippledResult(recorded('account-info-not-found.json'), 'account_info rX')).toThrow(/account_info rX: actNotFound/);
  });

  it('account_tx entries (recorded tx results in the v1 entry shape) are counted for Memos', () => {
    const withMemo = (recorded('tx/escrow-creation.json') as { result: Record<string, unknown> }).result;
    const plain = (recorded('tx/payment.json') as { result: Record<string, unknown> }).result;
    const entry = (tx: Record<string, unknown>) => {
      const { meta, validated, ...rest } = tx;
      return { meta, tx: rest, validated };
    };
    expect(countMemos({ transactions: [entry(withMemo), entry(plain)] }, 'account_tx')).toEqual({ memoCount: 1, txCount: 2 });
    expect(countMemos({ transactions: [{ tx_json: { Memos: [{ Memo: {} }] } }] }, 'account_tx')).toEqual({ memoCount: 1, txCount: 1 });
  });

  it('a binary account_tx page (recorded) is refused, not silently counted as memo-free', () => {
    const page = require(join(rippled, 'account-tx.js')) as (req: unknown) => string;
    const result = rippledResult(parseJsonExact(page({ id: 1, account: 'r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59', limit: 10 }), 'account_tx'), 'account_tx');
    expect(() => countMemos(result, 'account_tx')).toThrow('neither tx nor tx_json');
  });

  it('currency codes: 3-letter as is, 40-hex text decoded, ISO-in-hex decoded, LP tokens kept as hex', () => {
    expect(decodeCurrency('USD')).toBe('USD');
    expect(decodeCurrency('524C555344000000000000000000000000000000')).toBe('RLUSD');
    expect(decodeCurrency('0000000000000000000000005553440000000000')).toBe('USD');
    const lp = '03B20F3A7D26D33C6DA3503E5CCE3E67B102D4D2';
    expect(decodeCurrency(lp)).toBe(lp);
    expect(decodeCurrency('ff00000000000000000000000000000000000000')).toBe('FF00000000000000000000000000000000000000');
    // Two raw codes decoding to one text keep their raw forms.
    expect(Object.keys(parseObligations({ obligations: { USD: '1', '0000000000000000000000005553440000000000': '2' } }, 'x')).sort()).toEqual(['0000000000000000000000005553440000000000', 'USD']);
  });
});

describe('Stellar, hand-written from Horizon documentation', () => {
  const asset = {
    _links: { toml: { href: 'https://example.org/.well-known/stellar.toml' } },
    asset_type: 'credit_alphanum4',
    asset_code: 'USDC',
    asset_issuer: 'GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN',
    paging_token: 'USDC_GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN_credit_alphanum4',
    contract_id: 'CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75',
    num_claimable_balances: 12,
    num_liquidity_pools: 3,
    num_contracts: 2,
    accounts: { authorized: 1000, authorized_to_maintain_liabilities: 2, unauthorized: 5 },
    claimable_balances_amount: '1.0000001',
    liquidity_pools_amount: '900719925.4740993',
    contracts_amount: '0.0000002',
    balances: { authorized: '123456789012.3456789', authorized_to_maintain_liabilities: '10.0000000', unauthorized: '0.0000001' },
    flags: { auth_required: false, auth_revocable: false, auth_immutable: false, auth_clawback_enabled: false },
  };
  it('/assets supply = three balance buckets + claimable + pools + contracts, exact to 7 places', () => {
    expect(assetSupply(asset, 'USDC')).toBe('124357508948.8197786');
  });
  it('an old-style record (amount, no buckets) fails closed, naming the missing field', () => {
    const old = { asset_code: 'X', amount: '5.0000000', num_accounts: 3 };
    expect(() => assetSupply(old, 'X')).toThrow('X: balances is missing');
    expect(() => assetSupply({ ...asset, contracts_amount: undefined }, 'USDC')).toThrow('USDC: contracts_amount is missing or not a 7-place amount');
    expect(() => assetSupply({ ...asset, liquidity_pools_amount: '1.5' }, 'USDC')).toThrow('liquidity_pools_amount');
  });
  const account = (master: number, others: number[], med: number, high = med) => ({
    id: 'GISSUER',
    thresholds: { low_threshold: 0, med_threshold: med, high_threshold: high },
    signers: [...others.map((w, i) => ({ weight: w, key: `GOTHER${i}`, type: 'ed25519_public_key' })), { weight: master, key: 'GISSUER', type: 'ed25519_public_key' }],
  });
  it('locked only when the master weight is 0 and the other signers cannot reach the medium (or high) threshold', () => {
    expect(isLocked(account(0, [], 0), 'GISSUER', 'a')).toBe(true);
    expect(isLocked(account(1, [], 0), 'GISSUER', 'a')).toBe(false);
    expect(isLocked(account(0, [1], 0), 'GISSUER', 'a')).toBe(false); // threshold 0: any weight-1 signer can sign
    expect(isLocked(account(0, [1, 1], 3), 'GISSUER', 'a')).toBe(true);
    expect(isLocked(account(0, [2, 1], 3), 'GISSUER', 'a')).toBe(false);
    expect(isLocked(account(0, [2], 3, 2), 'GISSUER', 'a')).toBe(false); // can reach high: could re-add signers
    expect(() => isLocked({ ...account(0, [], 0), signers: [] }, 'GISSUER', 'a')).toThrow('master key is not among the signers');
  });
  it('a full /assets page (200 records) cannot be reproduced by one GET: the row is refused as bad_query', () => {
    const full = { _embedded: { records: Array.from({ length: 200 }, () => asset) } };
    expect(() => assetRecords(full, 'GET /assets?asset_issuer=G')).toThrow(/full page of 200 records/);
    expect(assetRecords({ _embedded: { records: [asset] } }, 'x')).toHaveLength(1);
  });
  it('dates an account_merge from the operations page', () => {
    const page = {
      _embedded: {
        records: [
          { id: '1', type: 'create_account', type_i: 0, created_at: '2021-01-01T00:00:00Z', account: 'GISSUER', funder: 'GF' },
          { id: '2', type: 'account_merge', type_i: 8, created_at: '2023-05-06T07:08:09Z', source_account: 'GISSUER', account: 'GISSUER', into: 'GINTO' },
        ],
      },
    };
    expect(mergeDate(page, 'GISSUER', 'ops')).toBe('2023-05-06T07:08:09Z');
    expect(mergeDate({ _embedded: { records: [] } }, 'GISSUER', 'ops')).toBeNull();
  });
});

// The shared recorded fixtures (the same optional source packages/driver-stellar's kat tests use;
// not redistributed here).
const FIXTURES = process.env['VAULT_KAT_FIXTURES'] ?? fileURLToPath(new URL('../../../../shared/fixtures', import.meta.url));
const fixture = (path: string): unknown => parseJsonExact(readFileSync(join(FIXTURES, path), 'utf8'), path);
const KAT = `${FIXTURES}/stellar/horizon`;
const katAccount = existsSync(`${KAT}/account.json`);
describe.skipIf(!katAccount)('Stellar, recorded Horizon account (optional corpus)', () => {
  it('the master key is found among the signers and a usable master key is never "locked"', () => {
    const acct = parseJsonExact(readFileSync(`${KAT}/account.json`, 'utf8'), 'account.json') as Record<string, unknown>;
    const id = String(acct['account_id'] ?? acct['id']);
    const master = (acct['signers'] as { key: string; weight: number }[]).find((s) => s.key === id);
    expect(master).toBeDefined();
    const locked = isLocked(acct, id, 'account.json');
    if ((master?.weight ?? 0) > 0) expect(locked).toBe(false);
  });
});

describe('Solana, hand-written from the JSON-RPC documentation', () => {
  it('getTokenSupply: amount + decimals, never the float uiAmount', () => {
    const text = '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.2.3","slot":341197053},"value":{"amount":"9007199254740993123","decimals":6,"uiAmount":9007199254740.993,"uiAmountString":"9007199254740.993123"}},"id":1}';
    const result = (parseJsonExact(text, 't') as { result: unknown }).result;
    expect(parseTokenSupply(result, 't')).toEqual({ units: 9007199254740993123n, decimals: 6, supply: '9007199254740.993123', slot: 341197053 });
    expect(() => parseTokenSupply({ context: { slot: 1 }, value: { uiAmount: 1, decimals: 6 } }, 't')).toThrow('value.amount is not an integer string');
  });
  it('getAccountInfo jsonParsed of a Token-2022 mint: u64 fields past 2^53 parse exactly', () => {
    const text = `{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.2.3","slot":341197060},"value":{"data":{"parsed":{"info":{"decimals":6,"extensions":[{"extension":"transferFeeConfig","state":{"newerTransferFee":{"epoch":605,"maximumFee":18446744073709551615,"transferFeeBasisPoints":100},"olderTransferFee":{"epoch":605,"maximumFee":9007199254740993,"transferFeeBasisPoints":100},"transferFeeConfigAuthority":null,"withdrawWithheldAuthority":"2apBGMsS6ti9RyF5TwQTDswXBWskiJP2LD4cUEDqYJjk","withheldAmount":0}},{"extension":"metadataPointer","state":{"authority":null,"metadataAddress":"2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo"}}],"freezeAuthority":null,"isInitialized":true,"mintAuthority":"7cVfgArCheMR6Cs4t6vz5rfnqd56vZq4ndaBrY5xkxXy","supply":"18446744073709551615"},"type":"mint"},"program":"spl-token-2022","space":500},"executable":false,"lamports":4370880,"owner":"TokenzQdBNbLqP5VEhdkAS6EPFLC1PGnBqCCEVjF9Pb7","rentEpoch":18446744073709551615,"space":500}},"id":1}`;
    const result = (parseJsonExact(text, 't') as { result: unknown }).result;
    const info = parseMintAccount(result, 't');
    expect(info).toMatchObject({ program: 'spl-token-2022', mintAuthority: '7cVfgArCheMR6Cs4t6vz5rfnqd56vZq4ndaBrY5xkxXy', freezeAuthority: null, supply: 18446744073709551615n });
    const fee = info.extensions[0]?.state as { newerTransferFee: { maximumFee: bigint }; olderTransferFee: { maximumFee: bigint } };
    expect(fee.newerTransferFee.maximumFee).toBe(18446744073709551615n);
    expect(fee.olderTransferFee.maximumFee).toBe(9007199254740993n); // 2^53 + 1: a float would read ...992
    expect((result as { value: { rentEpoch: bigint } }).value.rentEpoch).toBe(18446744073709551615n);
  });
  it('getAccountInfo refuses a missing account, a non-token owner and a non-mint', () => {
    expect(() => parseMintAccount({ value: null }, 'm')).toThrow('account does not exist');
    expect(() => parseMintAccount({ value: { data: { program: 'system', parsed: {} } } }, 'm')).toThrow('not a token program');
    expect(() => parseMintAccount({ value: { data: { program: 'spl-token', parsed: { type: 'account', info: {} } } } }, 'm')).toThrow('not a mint account');
    expect(() => parseMintAccount({ value: { data: ['AAAA', 'base64'] } }, 'm')).toThrow('not jsonParsed');
  });
  it('getTransaction: the mint delta from pre/post token balances', () => {
    const tx = { meta: { preTokenBalances: [{ mint: 'M', uiTokenAmount: { amount: '250', decimals: 2 } }, { mint: 'OTHER', uiTokenAmount: { amount: '9', decimals: 0 } }], postTokenBalances: [{ mint: 'M', uiTokenAmount: { amount: '0', decimals: 2 } }] } };
    expect(mintDelta(tx, 'M', 't')).toBe(-250n);
  });
});

const SOLANA = ['getAccountInfo-jsonParsed-usdc-mint.json', 'getTokenSupply-result-testnet.json', 'getTransaction-jsonParsed-usdc-transfer.json'].map((f) => `solana/${f}`);
describe.skipIf(!SOLANA.every((f) => existsSync(join(FIXTURES, f))))('Solana, recorded RPC replies (shared fixtures)', () => {
  const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
  it('getAccountInfo jsonParsed of the USDC mint (mainnet): program, authorities, decimals, supply exact', () => {
    const reply = fixture('solana/getAccountInfo-jsonParsed-usdc-mint.json') as { result: unknown };
    expect(parseMintAccount(reply.result, 'usdc mint')).toEqual({
      program: 'spl-token',
      mintAuthority: 'BJE5MMbqXjVwjAF7oxwPYXnTXDyspzZyt4vwenNw5ruG',
      freezeAuthority: '7dGbd2QZcCKcTndnHcTL8q7SMVXAkp688NTQYwrRCrar',
      decimals: 6,
      supply: 3986659142956864n,
      extensions: [],
    });
  });
  it('getTokenSupply (a recorded result, testnet): amount and decimals, the slot it was read at', () => {
    expect(parseTokenSupply(fixture('solana/getTokenSupply-result-testnet.json'), 'supply')).toEqual({ units: 100n, decimals: 0, supply: '100', slot: 86069939 });
  });
  it('getTransaction of a USDC transfer to a new token account: the mint\'s supply does not move', () => {
    const tx = (fixture('solana/getTransaction-jsonParsed-usdc-transfer.json') as { result: unknown }).result;
    // pre 5939648 in one account; post 100000 + 5839648 (the recipient's account is new): net 0.
    expect(mintDelta(tx, USDC, 'transfer')).toBe(0n);
    expect(mintDelta(tx, 'So11111111111111111111111111111111111111112', 'transfer')).toBe(0n);
  });
});

const LINK = ['name', 'symbol', 'decimals', 'totalSupply'].map((f) => `polygon/link-0xb0897686/eth_call-${f}.json`);
describe.skipIf(![...LINK, 'polygon/eth_getCode-erc20-0x5d719985.json'].every((f) => existsSync(join(FIXTURES, f))))('Polygon, recorded JSON-RPC replies (shared fixtures)', () => {
  const reply = (f: string) => fixture(f) as { jsonrpc: string; id: number; result: string };
  const link = (call: string) => reply(`polygon/link-0xb0897686/eth_call-${call}.json`);
  it('name() and symbol() of ChainLink Token (ABI strings, zero-padded to a word) decode exactly', () => {
    expect(decodeName(link('name').result)).toBe('ChainLink Token');
    expect(decodeName(link('symbol').result)).toBe('LINK');
  });
  it('the recorded replies at the ids of the report\'s batch: code size, totalSupply and name', () => {
    const code = reply('polygon/eth_getCode-erc20-0x5d719985.json');
    // The batch the report sends for one contract: 1 eth_getCode, 2 owner(), 3 totalSupply(), 4 name().
    // Recorded: the code (of an ERC-20 on Polygon) and LINK's totalSupply and name, each moved to its
    // id; owner() (LINK has none) is the one hand-written answer, a revert.
    const batch = [
      { ...code, id: 1 },
      { jsonrpc: '2.0', id: 2, error: { code: 3, message: 'execution reverted' } },
      { ...link('totalSupply'), id: 3 },
      { ...link('name'), id: 4 },
    ];
    const facts = parseContractBatch(batch, 'link');
    expect(facts.codeSize).toBe((code.result.length - 2) / 2);
    expect(facts.codeSize).toBeGreaterThan(0);
    expect(facts.supply).toBe(10n ** 27n); // 1,000,000,000 LINK at 18 decimals
    expect(BigInt(link('decimals').result)).toBe(18n);
    expect(facts.name).toBe('ChainLink Token');
    expect(facts.owner).toBeNull();
    expect(facts.ownerError).toBe('owner() failed: execution reverted');
  });
});

describe('Polygon: a token name padded with NUL bytes', () => {
  const abiString = (bytes: Buffer) => `0x${'20'.padStart(64, '0')}${bytes.length.toString(16).padStart(64, '0')}${bytes.toString('hex').padEnd(Math.ceil(bytes.length / 32) * 64, '0')}`;
  it('a token name padded with NUL bytes decodes as "ETH", not "ETH\\u0000\\u0000\\u0000"', () => {
    // An ABI string whose content is the name and its fixed-size padding (the form the issue met).
    expect(decodeName(abiString(Buffer.from('ETH\u0000\u0000\u0000')))).toBe('ETH');
    expect(decodeName(abiString(Buffer.concat([Buffer.from('Wrapped Ether'), Buffer.alloc(19)])))).toBe('Wrapped Ether');
    // The bytes32 form, as old tokens return it.
    expect(decodeName(`0x${Buffer.from('ETH').toString('hex').padEnd(64, '0')}`)).toBe('ETH');
  });
  it('NUL bytes inside a name are the contract\'s and stay; an all-NUL name is empty, not null', () => {
    expect(decodeName(abiString(Buffer.from('A\u0000B\u0000')))).toBe('A\u0000B');
    expect(decodeName(abiString(Buffer.alloc(5)))).toBe('');
    expect(decodeName(`0x${'00'.repeat(32)}`)).toBe('');
  });
});

describe('Polygon, hand-written JSON-RPC batch replies', () => {
  const word = (hex: string) => `0x${hex.padStart(64, '0')}`;
  const abiString = (s: string) => `0x${'20'.padStart(64, '0')}${Buffer.byteLength(s).toString(16).padStart(64, '0')}${Buffer.from(s).toString('hex').padEnd(64, '0')}`;
  it('reads code size, owner, totalSupply and a string or bytes32 name; replies are matched by id', () => {
    const reply = [
      { jsonrpc: '2.0', id: 4, result: abiString('USD Coin') },
      { jsonrpc: '2.0', id: 1, result: `0x${'60'.repeat(100)}` },
      { jsonrpc: '2.0', id: 3, result: word('ffffffffffffffffffff') },
      { jsonrpc: '2.0', id: 2, result: word('5b38da6a701c568545dcfcb03fcb875f56beddc4') },
    ];
    expect(parseContractBatch(reply, 'c')).toEqual({ codeSize: 100, owner: '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4', supply: 1208925819614629174706175n, name: 'USD Coin' });
    expect(decodeName(`0x${Buffer.from('Maker').toString('hex').padEnd(64, '0')}`)).toBe('Maker');
  });
  it('an address without code: every call answers 0x; nothing else is read', () => {
    expect(parseContractBatch([{ id: 1, result: '0x' }, { id: 2, result: '0x' }, { id: 3, result: '0x' }, { id: 4, result: '0x' }], 'c')).toEqual({ codeSize: 0, owner: null, supply: null, name: null });
  });
  it('a reverted call is recorded; a missing answer or non-hex result fails closed', () => {
    const f = parseContractBatch([{ id: 1, result: '0x6060' }, { id: 2, error: { code: 3, message: 'execution reverted' } }, { id: 3, result: word('1') }, { id: 4, result: '0x' }], 'c');
    expect(f).toMatchObject({ ownerError: 'owner() failed: execution reverted', supply: 1n, name: null });
    expect(() => parseContractBatch([{ id: 1, result: '0x' }], 'c')).not.toThrow(); // no code: other answers unused
    expect(() => parseContractBatch([{ id: 1, result: '0x60' }, { id: 2, result: 'zz' }], 'c')).toThrow('owner() result is not hex');
    expect(() => parseContractBatch([{ id: 1, result: '0x60' }], 'c')).toThrow('no answer for owner()');
    expect(() => parseContractBatch({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } }, 'c')).toThrow('JSON-RPC error -32600');
  });
});
