import { describe, expect, it } from 'vitest';
import { normalizeIntent } from './digest.js';
import type { AddressCheck, ChainProtectFacts, ValidateAddressInput } from './driver/types.js';
import {
  addressFacts,
  addressPoisoning,
  burnedKey,
  chainFactsDisagreement,
  counterfeitAsset,
  GUARD_FUNCTIONS,
  networkSeparation,
  protectChainFacts,
  runGuards,
  runIntentGuards,
  type AddressFacts,
  type AssetRegistry,
  type GuardInput,
} from './guards.js';
import {
  FindingSchema,
  GUARDS,
  WalletDescriptorSchema,
  type Finding,
  type IntentRequest,
  type ProtectInputs,
  type SignerDesc,
  type WalletDescriptor,
} from './schemas/index.js';

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

const XRPL = 'xrpl:testnet';
const EVM = 'eip155:11155111';

const signer = (address: string, weight = 1): SignerDesc => ({ address, curve: 'ed25519', weight, label: address.slice(0, 6) });
const owner = (address: string, weight = 1): SignerDesc => ({ address, curve: 'secp256k1', weight, label: address.slice(0, 6) });

const XRPL_SIGNERS = ['rSignerAAAAAAAAAAAAAAAAAAAAAAAAAA', 'rSignerBBBBBBBBBBBBBBBBBBBBBBBBBB', 'rSignerCCCCCCCCCCCCCCCCCCCCCCCCCC'] as const;
const xrplWallet = (chain = XRPL, quorum = 2): WalletDescriptor =>
  WalletDescriptorSchema.parse({
    wallet: 'treasury',
    chain,
    control: { kind: 'native_multisig', address: 'rVaultVaultVaultVaultVaultVault1', signers: XRPL_SIGNERS.map((a) => signer(a)), quorum },
  });

const OWNER_A = '0xAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAa';
const OWNER_B = '0xBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBb';
const OWNER_C = '0xCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCc';
const evmWallet = (threshold = 2, weights: [number, number, number] = [1, 1, 1]): WalletDescriptor =>
  WalletDescriptorSchema.parse({
    wallet: 'safe',
    chain: EVM,
    control: {
      kind: 'evm_safe',
      safe: '0x5afe5afe5afe5afe5afe5afe5afe5afe5afe5afe',
      owners: [owner(OWNER_A, weights[0]), owner(OWNER_B, weights[1]), owner(OWNER_C, weights[2])],
      threshold,
    },
  });

const XRPL_DEST = 'rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY';
const EVM_DEST = '0x1234567890abcdef1234567890abcdef12345678';
/** Canonical Sepolia USDC (Circle), checksummed. */
const USDC_SEPOLIA = '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238';
const FAKE_TOKEN = '0x1c7d000000000000000000000000000000007238';

const protectInputs = (over: Partial<ProtectInputs> = {}): ProtectInputs => ({
  known_destinations: [],
  burned: [],
  evm_code: [],
  token_owner_burned: false,
  onchain_symbol: null,
  compliance_cleared: true,
  attestation_valid: true,
  ...over,
});

const valid = (address: string, network: string | null = null, account = address): AddressFacts => ({ address, valid: true, network, account });

const REGISTRY: AssetRegistry = {
  assets: [
    { chain: EVM, symbol: 'USDC', decimals: 6, issuer: USDC_SEPOLIA },
    { chain: XRPL, symbol: 'XRP', decimals: 6, issuer: null },
    { chain: XRPL, symbol: 'RLUSD', decimals: 15, issuer: 'rQhWct2fv4Vc4KRjRgMrxa8xPN9Zx9iLKV' },
  ],
  reserved: ['USDC', 'USDT', 'RLUSD', 'XRP', 'ETH'],
};

interface Setup {
  intent?: Partial<IntentRequest>;
  wallet?: WalletDescriptor;
  protect?: Partial<ProtectInputs>;
  destination?: AddressFacts;
  issuer?: AddressFacts;
  registry?: AssetRegistry;
}

/** A guard input on the XRPL testnet wallet unless told otherwise; the destination is valid and known-neutral. */
function input(s: Setup = {}): GuardInput {
  const wallet = s.wallet ?? xrplWallet();
  const req: IntentRequest = { wallet: wallet.wallet, destination: wallet.chain === EVM ? EVM_DEST : XRPL_DEST, amount: '1000', ...s.intent };
  const out: GuardInput = {
    intent: normalizeIntent(req),
    wallet,
    protect: protectInputs(s.protect),
    destination: s.destination ?? valid(req.destination),
    registry: s.registry ?? REGISTRY,
  };
  if (s.issuer !== undefined) out.issuer = s.issuer;
  return out;
}

function expectFindings(actual: Finding[], expected: { severity: Finding['severity']; detail: string }[], guard: Finding['guard']): void {
  for (const f of actual) expect(FindingSchema.parse(f)).toEqual(f);
  expect(actual.map((f) => ({ guard: f.guard, severity: f.severity }))).toEqual(expected.map((e) => ({ guard, severity: e.severity })));
  expected.forEach((e, i) => expect(actual[i]?.detail).toContain(e.detail));
}

// ---------------------------------------------------------------------------------------------
// network_separation
// ---------------------------------------------------------------------------------------------

describe('network_separation', () => {
  it('network separation: blocks a testnet X-address sent from a mainnet wallet', () => {
    const xaddr = 'TVd2rqMkYL2AyS97NdELcpeiprNBjwLZzuUG5rZnaewsahi'; // a T… (testnet) X-address
    const findings = networkSeparation(
      input({ wallet: xrplWallet('xrpl:mainnet'), intent: { destination: xaddr }, destination: valid(xaddr, 'xrpl:testnet') }),
    );
    expectFindings(findings, [{ severity: 'block', detail: `destination ${xaddr} belongs to xrpl:testnet, but the wallet is on xrpl:mainnet` }], 'network_separation');
  });

  it('network separation: blocks a mainnet X-address sent from a testnet wallet', () => {
    const xaddr = 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi';
    const findings = networkSeparation(input({ intent: { destination: xaddr }, destination: valid(xaddr, 'xrpl:mainnet') }));
    expectFindings(findings, [{ severity: 'block', detail: 'belongs to xrpl:mainnet, but the wallet is on xrpl:testnet' }], 'network_separation');
  });

  it('an X-address of the wallet’s own network passes', () => {
    expect(networkSeparation(input({ destination: valid(XRPL_DEST, XRPL) }))).toEqual([]);
  });

  it('a classic address that names no network passes', () => {
    expect(networkSeparation(input({ destination: valid(XRPL_DEST, null) }))).toEqual([]);
  });

  it('blocks a destination the driver says is invalid on the chain, with its reason', () => {
    const findings = networkSeparation(
      input({ intent: { destination: 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H' }, destination: { address: 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H', valid: false, reason: 'not an XRPL address', network: null, account: 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H' } }),
    );
    expectFindings(findings, [{ severity: 'block', detail: 'is not a valid address on xrpl:testnet: not an XRPL address' }], 'network_separation');
  });

  it('an invalid address without a reason still blocks', () => {
    const findings = networkSeparation(input({ destination: { address: XRPL_DEST, valid: false, network: null, account: XRPL_DEST } }));
    expectFindings(findings, [{ severity: 'block', detail: 'not a valid address on xrpl:testnet: invalid' }], 'network_separation');
  });

  it('network separation: blocks an asset issuer from another network', () => {
    const findings = networkSeparation(input({ intent: { asset_symbol: 'USD', asset_issuer: 'rIssuer' }, issuer: valid('rIssuer', 'xrpl:mainnet') }));
    expectFindings(findings, [{ severity: 'block', detail: 'asset issuer rIssuer belongs to xrpl:mainnet' }], 'network_separation');
  });

  it('blocks both an invalid destination and a foreign issuer', () => {
    const findings = networkSeparation(
      input({ destination: { address: 'nope', valid: false, reason: 'bad checksum', network: null, account: 'nope' }, issuer: valid('rIssuer', 'xrpl:devnet') }),
    );
    expect(findings.map((f) => f.detail.split(' ')[0])).toEqual(['destination', 'asset']);
    expect(findings.every((f) => f.severity === 'block')).toBe(true);
  });

  it('network separation: blocks an EVM contract_call to an address without code (wrong network)', () => {
    const findings = networkSeparation(
      input({
        wallet: evmWallet(),
        intent: { operation: { op: 'contract_call', data_hex: '0xa9059cbb' } },
        protect: { evm_code: [[EVM_DEST, '0x']] },
      }),
    );
    expectFindings(findings, [{ severity: 'block', detail: `no contract is deployed at ${EVM_DEST} on ${EVM}` }], 'network_separation');
  });

  it('EVM case-insensitive: the code entry in checksum case matches a lowercase destination', () => {
    const findings = networkSeparation(
      input({
        wallet: evmWallet(),
        intent: { destination: EVM_DEST.toLowerCase(), operation: { op: 'contract_call', data_hex: '0xa9059cbb' } },
        protect: { evm_code: [['0x1234567890ABCDEF1234567890ABCDEF12345678', '0x']] },
      }),
    );
    expect(findings).toHaveLength(1);
    expect(findings[0]?.severity).toBe('block');
  });

  it('a contract_call to an address with code passes', () => {
    const findings = networkSeparation(
      input({ wallet: evmWallet(), intent: { operation: { op: 'contract_call', data_hex: '0xa9059cbb' } }, protect: { evm_code: [[EVM_DEST, '0x6080604052']] } }),
    );
    expect(findings).toEqual([]);
  });

  it('a plain transfer to an address without code (an EOA) passes', () => {
    expect(networkSeparation(input({ wallet: evmWallet(), protect: { evm_code: [[EVM_DEST, '0x']] } }))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// counterfeit_asset
// ---------------------------------------------------------------------------------------------

describe('counterfeit_asset', () => {
  const evm = (intent: Partial<IntentRequest>, protect: Partial<ProtectInputs> = {}, registry = REGISTRY) =>
    counterfeitAsset(input({ wallet: evmWallet(), intent, protect, registry }));

  it('counterfeit asset: blocks USDC from a non-canonical issuer', () => {
    expectFindings(
      evm({ asset_symbol: 'USDC', asset_issuer: FAKE_TOKEN }),
      [{ severity: 'block', detail: `USDC on ${EVM} is issued by ${USDC_SEPOLIA}, not ${FAKE_TOKEN}` }],
      'counterfeit_asset',
    );
  });

  it('counterfeit asset: blocks a registered ticker in other letter case from a non-canonical issuer', () => {
    expectFindings(evm({ asset_symbol: 'usdc', asset_issuer: FAKE_TOKEN }), [{ severity: 'block', detail: 'is issued by' }], 'counterfeit_asset');
  });

  it('counterfeit asset: blocks a registered ticker that names no issuer at all', () => {
    expectFindings(evm({ asset_symbol: 'USDC' }), [{ severity: 'block', detail: `is issued by ${USDC_SEPOLIA}, not the ledger` }], 'counterfeit_asset');
  });

  it('EVM case-insensitive: the canonical issuer in lowercase passes', () => {
    expect(evm({ asset_symbol: 'USDC', asset_issuer: USDC_SEPOLIA.toLowerCase() })).toEqual([]);
  });

  it('the canonical issuer in checksum case passes', () => {
    expect(evm({ asset_symbol: 'USDC', asset_issuer: USDC_SEPOLIA, asset_decimals: 6 })).toEqual([]);
  });

  it('counterfeit asset: blocks a ledger-native ticker sent with an issuer (fake XRP IOU)', () => {
    expectFindings(
      counterfeitAsset(input({ intent: { asset_symbol: 'XRP', asset_issuer: 'rFakeXrpIssuer' } })),
      [{ severity: 'block', detail: 'XRP on xrpl:testnet is issued by the ledger, not rFakeXrpIssuer' }],
      'counterfeit_asset',
    );
  });

  it('the native asset without an issuer passes', () => {
    expect(counterfeitAsset(input({ intent: { asset_symbol: 'XRP' } }))).toEqual([]);
  });

  it('XRPL issuers compare exactly (case matters outside EVM)', () => {
    expectFindings(
      counterfeitAsset(input({ intent: { asset_symbol: 'RLUSD', asset_issuer: 'rqhwct2fv4vc4krjrgmrxa8xpn9zx9ilkv', asset_decimals: 15 } })),
      [{ severity: 'block', detail: 'RLUSD on xrpl:testnet is issued by rQhWct2fv4Vc4KRjRgMrxa8xPN9Zx9iLKV' }],
      'counterfeit_asset',
    );
  });

  describe('registry issuers in the AssetSpec forms (XRPL ACCOUNT.CODE, Stellar CODE:ISSUER) against the intent’s issuer account', () => {
    const RLUSD_ISSUER = 'rMxCKbEDwqr76QuheSUMdEGf4B9xJ8m5De';
    const CIRCLE = 'GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5';
    const registry: AssetRegistry = {
      assets: [
        { chain: XRPL, symbol: 'RLUSD', decimals: 15, issuer: `${RLUSD_ISSUER}.524C555344000000000000000000000000000000` },
        { chain: 'stellar:testnet', symbol: 'USDC', decimals: 7, issuer: `USDC:${CIRCLE}` },
      ],
      reserved: ['RLUSD', 'USDC'],
    };
    const stellarWallet = (): WalletDescriptor => ({ ...xrplWallet(), chain: 'stellar:testnet' });

    it('the canonical XRPL issuer account passes', () => {
      expect(counterfeitAsset(input({ registry, intent: { asset_symbol: 'RLUSD', asset_issuer: RLUSD_ISSUER, asset_decimals: 15 } }))).toEqual([]);
    });

    it('the full ACCOUNT.CODE form passes too', () => {
      expect(
        counterfeitAsset(input({ registry, intent: { asset_symbol: 'RLUSD', asset_issuer: `${RLUSD_ISSUER}.524C555344000000000000000000000000000000`, asset_decimals: 15 } })),
      ).toEqual([]);
    });

    it('counterfeit asset: another XRPL account issuing RLUSD is blocked', () => {
      expectFindings(
        counterfeitAsset(input({ registry, intent: { asset_symbol: 'RLUSD', asset_issuer: 'rFakeRLUSDissuer1111111111111111', asset_decimals: 15 } })),
        [{ severity: 'block', detail: 'RLUSD on xrpl:testnet is issued by' }],
        'counterfeit_asset',
      );
    });

    it('the canonical Stellar issuer account passes', () => {
      expect(counterfeitAsset(input({ wallet: stellarWallet(), registry, intent: { asset_symbol: 'USDC', asset_issuer: CIRCLE, asset_decimals: 7 } }))).toEqual([]);
    });

    it('counterfeit asset: another Stellar account issuing USDC is blocked', () => {
      expectFindings(
        counterfeitAsset(input({ wallet: stellarWallet(), registry, intent: { asset_symbol: 'USDC', asset_issuer: 'GFAKEUSDCISSUER', asset_decimals: 7 } })),
        [{ severity: 'block', detail: 'USDC on stellar:testnet is issued by' }],
        'counterfeit_asset',
      );
    });

    it('a code-only fragment of the registry issuer is not the issuer', () => {
      const f = counterfeitAsset(input({ wallet: stellarWallet(), registry, intent: { asset_symbol: 'USDC', asset_issuer: 'USDC', asset_decimals: 7 } }));
      expect(f.map((x) => x.severity)).toEqual(['block']);
    });
  });

  it('counterfeit asset: blocks a reserved ticker without a registry entry on this chain', () => {
    expectFindings(
      evm({ asset_symbol: 'USDT', asset_issuer: FAKE_TOKEN }),
      [{ severity: 'block', detail: `ticker USDT is reserved and has no registered issuer on ${EVM}` }],
      'counterfeit_asset',
    );
  });

  it('a registry entry on another chain does not legitimise the ticker here (RLUSD on EVM)', () => {
    expectFindings(evm({ asset_symbol: 'RLUSD', asset_issuer: FAKE_TOKEN }), [{ severity: 'block', detail: 'ticker RLUSD is reserved' }], 'counterfeit_asset');
  });

  it('reserved tickers match case-insensitively', () => {
    expectFindings(evm({ asset_symbol: 'uSdT', asset_issuer: FAKE_TOKEN }), [{ severity: 'block', detail: 'ticker uSdT is reserved' }], 'counterfeit_asset');
  });

  it('an unregistered, unreserved ticker passes', () => {
    expect(evm({ asset_symbol: 'MYTOKEN', asset_issuer: FAKE_TOKEN })).toEqual([]);
  });

  it('with no registry at all, nothing is counterfeit by ticker', () => {
    const i = input({ wallet: evmWallet(), intent: { asset_symbol: 'USDC', asset_issuer: FAKE_TOKEN } });
    delete i.registry;
    expect(counterfeitAsset(i)).toEqual([]);
  });

  it('warns on a decimals mismatch with the canonical asset', () => {
    expectFindings(
      evm({ asset_symbol: 'USDC', asset_issuer: USDC_SEPOLIA, asset_decimals: 18 }),
      [{ severity: 'warn', detail: `USDC on ${EVM} has 6 decimals, the intent says 18` }],
      'counterfeit_asset',
    );
  });

  it('the default asset_decimals (6) matches a 6-decimal canonical asset', () => {
    expect(evm({ asset_symbol: 'USDC', asset_issuer: USDC_SEPOLIA })).toEqual([]);
  });

  it('counterfeit asset: blocks when the token’s on-chain symbol differs from the intent’s', () => {
    expectFindings(
      evm({ asset_symbol: 'MYTOKEN', asset_issuer: FAKE_TOKEN }, { onchain_symbol: 'USDT' }),
      [{ severity: 'block', detail: 'the token reports symbol USDT, the intent says MYTOKEN' }],
      'counterfeit_asset',
    );
  });

  it('an on-chain symbol equal up to case passes', () => {
    expect(evm({ asset_symbol: 'USDC', asset_issuer: USDC_SEPOLIA }, { onchain_symbol: 'usdc' })).toEqual([]);
  });

  it('counterfeit asset: blocks a token that calls itself a reserved ticker when the intent names no symbol', () => {
    expectFindings(
      evm({ asset_issuer: FAKE_TOKEN }, { onchain_symbol: 'USDC' }),
      [{ severity: 'block', detail: `the token calls itself USDC, a reserved ticker, but is not its registered issuer on ${EVM}` }],
      'counterfeit_asset',
    );
  });

  it('the canonical token calling itself USDC with no symbol in the intent passes', () => {
    expect(evm({ asset_issuer: USDC_SEPOLIA.toLowerCase() }, { onchain_symbol: 'USDC' })).toEqual([]);
  });

  it('an unreserved on-chain symbol with no symbol in the intent passes', () => {
    expect(evm({ asset_issuer: FAKE_TOKEN }, { onchain_symbol: 'MYTOKEN' })).toEqual([]);
  });

  it('counterfeit asset: blocks a token address without code', () => {
    expectFindings(
      evm({ asset_symbol: 'MYTOKEN', asset_issuer: FAKE_TOKEN }, { evm_code: [[FAKE_TOKEN.toUpperCase().replace('0X', '0x'), '0x']] }),
      [{ severity: 'block', detail: `no token contract is deployed at ${FAKE_TOKEN} on ${EVM}` }],
      'counterfeit_asset',
    );
  });

  it('a token address with code passes', () => {
    expect(evm({ asset_symbol: 'MYTOKEN', asset_issuer: FAKE_TOKEN }, { evm_code: [[FAKE_TOKEN, '0x60806040']] })).toEqual([]);
  });

  it('reports every problem: wrong issuer, wrong on-chain symbol and no code', () => {
    const findings = evm({ asset_symbol: 'USDC', asset_issuer: FAKE_TOKEN }, { onchain_symbol: 'USDT', evm_code: [[FAKE_TOKEN, '0x']] });
    expect(findings.map((f) => f.severity)).toEqual(['block', 'block', 'block']);
    expect(findings.map((f) => f.detail)).toEqual([
      expect.stringContaining('is issued by'),
      expect.stringContaining('reports symbol USDT'),
      expect.stringContaining('no token contract'),
    ]);
  });

  it('a native transfer with no asset fields passes', () => {
    expect(counterfeitAsset(input())).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// address_poisoning
// ---------------------------------------------------------------------------------------------

describe('address_poisoning', () => {
  const KNOWN_X = 'rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY';
  const KNOWN_E = '0x1234567890abcdef1234567890abcdef12345678';

  it('a known destination passes silently', () => {
    expect(addressPoisoning(input({ protect: { known_destinations: ['rOther', KNOWN_X] } }))).toEqual([]);
  });

  it('address poisoning: blocks a look-alike of a known destination', () => {
    const lookalike = 'rPEPxxxxxxxxxxxxxxxxxxxxxxxxxx6GDY';
    expectFindings(
      addressPoisoning(input({ intent: { destination: lookalike }, protect: { known_destinations: ['rSomeoneElse11111111111111111', KNOWN_X] } })),
      [{ severity: 'block', detail: `destination ${lookalike} imitates the known address ${KNOWN_X} (same first and last 4 characters)` }],
      'address_poisoning',
    );
  });

  it('address poisoning: blocks an EVM vanity look-alike (same first and last 4 hex digits after 0x)', () => {
    const lookalike = '0x1234ffffffffffffffffffffffffffffffff5678';
    expectFindings(
      addressPoisoning(input({ wallet: evmWallet(), intent: { destination: lookalike }, protect: { known_destinations: [KNOWN_E] } })),
      [{ severity: 'block', detail: `imitates the known address ${KNOWN_E}` }],
      'address_poisoning',
    );
  });

  it('address poisoning: EVM look-alike detection ignores checksum casing', () => {
    const lookalike = '0x1234FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5678';
    const known = '0x1234567890ABCDEF1234567890ABCDEF12345678';
    const f = addressPoisoning(input({ wallet: evmWallet(), intent: { destination: lookalike }, protect: { known_destinations: [known] } }));
    expect(f.map((x) => x.severity)).toEqual(['block']);
  });

  it('EVM case-insensitive: the known address in another case is known, not a look-alike', () => {
    const f = addressPoisoning(
      input({ wallet: evmWallet(), intent: { destination: KNOWN_E.toUpperCase().replace('0X', '0x') }, protect: { known_destinations: [KNOWN_E] } }),
    );
    expect(f).toEqual([]);
  });

  it('a new, unrelated destination is a warning (first transfer)', () => {
    expectFindings(
      addressPoisoning(input({ intent: { destination: 'rNewFriend9999999999999999999999' }, protect: { known_destinations: [KNOWN_X, 'rOther'] } })),
      [{ severity: 'warn', detail: 'first transfer to rNewFriend9999999999999999999999: not among 2 known destination(s)' }],
      'address_poisoning',
    );
  });

  it('with no known destinations, any destination is a first transfer (warn)', () => {
    expectFindings(addressPoisoning(input()), [{ severity: 'warn', detail: 'not among 0 known destination(s)' }], 'address_poisoning');
  });

  it('sharing only the first 4 characters is not a look-alike (warn)', () => {
    const f = addressPoisoning(input({ intent: { destination: 'rPEPzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz' }, protect: { known_destinations: [KNOWN_X] } }));
    expect(f.map((x) => x.severity)).toEqual(['warn']);
  });

  it('sharing only the last 4 characters is not a look-alike (warn)', () => {
    const f = addressPoisoning(input({ intent: { destination: 'rZZZzzzzzzzzzzzzzzzzzzzzzzzzz6GDY' }, protect: { known_destinations: [KNOWN_X] } }));
    expect(f.map((x) => x.severity)).toEqual(['warn']);
  });

  it('a known entry shorter than 8 characters never makes a twin', () => {
    const f = addressPoisoning(input({ intent: { destination: 'rABCDxyz' }, protect: { known_destinations: ['rABCxyz'] } }));
    expect(f.map((x) => x.severity)).toEqual(['warn']);
  });
});

// ---------------------------------------------------------------------------------------------
// burned_key
// ---------------------------------------------------------------------------------------------

describe('burned_key', () => {
  it('attack: a destination tag walks a payment around a burned account', () => {
    // The driver reads the tagged X-address as the burned classic account plus a tag.
    const tagged = 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi';
    expectFindings(
      burnedKey(input({ intent: { destination: tagged }, destination: valid(tagged, null, XRPL_DEST), protect: { burned: [XRPL_DEST] } })),
      [{ severity: 'block', detail: `destination ${tagged} is a burned address` }],
      'burned_key',
    );
  });

  it('burned destination: blocks a transfer to a burned address', () => {
    expectFindings(
      burnedKey(input({ protect: { burned: [XRPL_DEST] } })),
      [{ severity: 'block', detail: `destination ${XRPL_DEST} is a burned address: funds sent there are lost` }],
      'burned_key',
    );
  });

  it('burned destination: EVM dead address matches case-insensitively', () => {
    const dead = '0x000000000000000000000000000000000000dEaD';
    expectFindings(
      burnedKey(input({ wallet: evmWallet(), intent: { destination: dead.toLowerCase() }, protect: { burned: [dead] } })),
      [{ severity: 'block', detail: 'is a burned address' }],
      'burned_key',
    );
  });

  it('token_owner_burned + issue: blocks minting through a burned owner', () => {
    expectFindings(
      burnedKey(input({ intent: { asset_symbol: 'GOLD', asset_issuer: 'rIssuer', operation: { op: 'issue' } }, protect: { token_owner_burned: true } })),
      [{ severity: 'block', detail: "the token's owner key is burned: GOLD can no longer be issued" }],
      'burned_key',
    );
  });

  it('token_owner_burned + transfer: not a finding (holders may still move it)', () => {
    expect(burnedKey(input({ intent: { asset_symbol: 'GOLD', asset_issuer: 'rIssuer' }, protect: { token_owner_burned: true } }))).toEqual([]);
  });

  it('burned signers below quorum: blocks (2 of 3 burned, quorum 2)', () => {
    expectFindings(
      burnedKey(input({ protect: { burned: [XRPL_SIGNERS[0], XRPL_SIGNERS[1]] } })),
      [{ severity: 'block', detail: '2 signer(s) of treasury are burned; remaining weight 1 cannot reach quorum 2' }],
      'burned_key',
    );
  });

  it('burned signers at quorum: warns (1 of 3 burned, remaining weight exactly 2 = quorum)', () => {
    expectFindings(
      burnedKey(input({ protect: { burned: [XRPL_SIGNERS[2]] } })),
      [{ severity: 'warn', detail: '1 signer(s) of treasury are burned; remaining weight 2 still reaches quorum 2' }],
      'burned_key',
    );
  });

  it('burned signers above quorum: warns (quorum 1)', () => {
    expectFindings(
      burnedKey(input({ wallet: xrplWallet(XRPL, 1), protect: { burned: [XRPL_SIGNERS[0]] } })),
      [{ severity: 'warn', detail: 'remaining weight 2 still reaches quorum 1' }],
      'burned_key',
    );
  });

  it('burned Safe owners count by weight and match case-insensitively: heavy owner burned blocks', () => {
    expectFindings(
      burnedKey(input({ wallet: evmWallet(3, [2, 1, 1]), protect: { burned: [OWNER_A.toLowerCase()] } })),
      [{ severity: 'block', detail: '1 signer(s) of safe are burned; remaining weight 2 cannot reach quorum 3' }],
      'burned_key',
    );
  });

  it('burned Safe owner with enough weight left: warns', () => {
    expectFindings(
      burnedKey(input({ wallet: evmWallet(2, [2, 1, 1]), protect: { burned: [OWNER_C.toUpperCase().replace('0X', '0x')] } })),
      [{ severity: 'warn', detail: 'remaining weight 3 still reaches quorum 2' }],
      'burned_key',
    );
  });

  it('reports a burned destination, a burned owner mint and burned signers together', () => {
    const f = burnedKey(
      input({ intent: { operation: { op: 'issue' } }, protect: { burned: [XRPL_DEST, ...XRPL_SIGNERS], token_owner_burned: true } }),
    );
    expect(f.map((x) => x.severity)).toEqual(['block', 'block', 'block']);
    expect(f[2]?.detail).toContain('3 signer(s) of treasury are burned; remaining weight 0 cannot reach quorum 2');
  });

  it('nothing burned: no finding', () => {
    expect(burnedKey(input({ protect: { burned: ['rUnrelated'] } }))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// runGuards and addressFacts
// ---------------------------------------------------------------------------------------------

describe('runGuards', () => {
  it('runs the four guards in order', () => {
    expect(Object.keys(GUARD_FUNCTIONS)).toEqual([...GUARDS]);
  });

  it('a clean transfer to a known destination: not blocked, no findings', () => {
    expect(runGuards(input({ protect: { known_destinations: [XRPL_DEST] } }))).toEqual({ blocked: false, findings: [], warnings: [] });
  });

  it('warn-only findings do not block and come back as warnings', () => {
    const report = runGuards(input({ protect: { burned: [XRPL_SIGNERS[0]] } }));
    expect(report.blocked).toBe(false);
    expect(report.findings.map((f) => [f.guard, f.severity])).toEqual([
      ['address_poisoning', 'warn'],
      ['burned_key', 'warn'],
    ]);
    expect(report.warnings).toEqual(report.findings);
  });

  it('any block finding blocks; warnings are exactly the warn findings, in guard order', () => {
    const report = runGuards(
      input({
        wallet: evmWallet(),
        intent: { asset_symbol: 'USDC', asset_issuer: USDC_SEPOLIA, asset_decimals: 18 },
        destination: valid(EVM_DEST, 'eip155:1'),
        protect: { burned: [OWNER_B] },
      }),
    );
    expect(report.blocked).toBe(true);
    expect(report.findings.map((f) => [f.guard, f.severity])).toEqual([
      ['network_separation', 'block'],
      ['counterfeit_asset', 'warn'],
      ['address_poisoning', 'warn'],
      ['burned_key', 'warn'],
    ]);
    expect(report.warnings).toEqual(report.findings.filter((f) => f.severity === 'warn'));
    expect(report.warnings).toHaveLength(3);
    for (const f of report.findings) expect(FindingSchema.safeParse(f).success).toBe(true);
  });

  it('a single block among warnings blocks', () => {
    const report = runGuards(input({ protect: { burned: [XRPL_DEST] } }));
    expect(report.blocked).toBe(true);
    expect(report.warnings.map((f) => f.guard)).toEqual(['address_poisoning']);
  });
});

describe('addressFacts', () => {
  function stubDriver(check: (chain: string, address: string) => AddressCheck) {
    const calls: string[] = [];
    return {
      calls,
      driver: {
        validateAddress: ({ chain, address }: ValidateAddressInput) => {
          calls.push(`validate ${chain} ${address}`);
          return check(chain, address);
        },
      },
    };
  }

  it('a valid address carries the network the driver read from it, in one call', () => {
    const { driver, calls } = stubDriver((_c, a) => ({ valid: true, normalized: a, network: a.startsWith('T') ? 'xrpl:testnet' : null }));
    expect(addressFacts(driver, 'xrpl:mainnet', 'TVd2rqMkYL2AyS97NdELcpeiprNBjwLZzuUG5rZnaewsahi')).toEqual({
      address: 'TVd2rqMkYL2AyS97NdELcpeiprNBjwLZzuUG5rZnaewsahi',
      valid: true,
      network: 'xrpl:testnet',
      account: 'TVd2rqMkYL2AyS97NdELcpeiprNBjwLZzuUG5rZnaewsahi',
    });
    expect(addressFacts(driver, 'xrpl:mainnet', XRPL_DEST)).toEqual({ address: XRPL_DEST, valid: true, network: null, account: XRPL_DEST });
    expect(calls).toEqual([`validate xrpl:mainnet TVd2rqMkYL2AyS97NdELcpeiprNBjwLZzuUG5rZnaewsahi`, `validate xrpl:mainnet ${XRPL_DEST}`]);
  });

  it('an invalid address carries the reason and no network', () => {
    const { driver, calls } = stubDriver(() => ({ valid: false, reason: 'bad checksum' }));
    expect(addressFacts(driver, XRPL, 'rBroken')).toEqual({ address: 'rBroken', valid: false, reason: 'bad checksum', network: null, account: 'rBroken' });
    expect(calls).toEqual([`validate ${XRPL} rBroken`]);
  });

  it('feeds network_separation end to end: a testnet X-address from a mainnet wallet blocks', () => {
    const { driver } = stubDriver((_c, a) => ({ valid: true, normalized: a, network: 'xrpl:testnet' }));
    const wallet = xrplWallet('xrpl:mainnet');
    const xaddr = 'TVd2rqMkYL2AyS97NdELcpeiprNBjwLZzuUG5rZnaewsahi';
    const report = runGuards(
      input({ wallet, intent: { destination: xaddr }, destination: addressFacts(driver, wallet.chain, xaddr), protect: { known_destinations: [xaddr] } }),
    );
    expect(report.blocked).toBe(true);
    expect(report.findings).toEqual([
      { guard: 'network_separation', severity: 'block', detail: `destination ${xaddr} belongs to xrpl:testnet, but the wallet is on xrpl:mainnet` },
    ]);
  });
});

describe('protectChainFacts', () => {
  const A = `0x${'ab'.repeat(20)}`;
  const T = `0x${'cd'.repeat(20)}`;
  const H = `0x${'5e'.repeat(32)}`;

  it('writes code facts as evm_code entries, destination first: 0x for no code, the code hash for a contract', () => {
    const facts: ChainProtectFacts = { destination: { address: A, hasCode: false, codeHash: null }, issuer: { address: T, hasCode: true, codeHash: H }, assetSymbol: 'VTT', issuerKeyBurned: true };
    expect(protectChainFacts(facts)).toEqual({ evm_code: [[A, '0x'], [T, H]], onchain_symbol: 'VTT', token_owner_burned: true });
  });

  it('a ledger whose accounts hold no code sends no evm_code, whatever the addresses', () => {
    const facts: ChainProtectFacts = { destination: { address: XRPL_DEST, hasCode: null, codeHash: null }, issuer: { address: XRPL_DEST, hasCode: null, codeHash: null }, assetSymbol: 'USD', issuerKeyBurned: false };
    expect(protectChainFacts(facts)).toEqual({ evm_code: [], onchain_symbol: 'USD', token_owner_burned: false });
  });

  it('fails closed: a contract whose driver gave no hash is written as no code, and the guards then block a call to it', () => {
    const facts: ChainProtectFacts = { destination: { address: A, hasCode: true, codeHash: null }, issuer: null, assetSymbol: null, issuerKeyBurned: false };
    const wire = protectChainFacts(facts);
    expect(wire.evm_code).toEqual([[A, '0x']]);
    const report = runGuards(input({ intent: { destination: A, operation: { op: 'contract_call', data_hex: '0xa9059cbb' } }, protect: wire }));
    expect(report.findings.some((f) => f.guard === 'network_separation' && f.severity === 'block')).toBe(true);
  });
});

describe('chainFactsDisagreement', () => {
  const A = `0x${'ab'.repeat(20)}`;
  const T = `0x${'cd'.repeat(20)}`;
  const H = `0x${'6080abcd'.repeat(8)}`;
  const facts: ChainProtectFacts = { destination: { address: A, hasCode: false, codeHash: null }, issuer: { address: T, hasCode: true, codeHash: H }, assetSymbol: 'VTT', issuerKeyBurned: false };
  const read = protectChainFacts(facts);

  it('agrees with the same facts in another order, address case or code case', () => {
    expect(chainFactsDisagreement(read, facts)).toBeNull();
    const same = { ...read, evm_code: [[T.toUpperCase().replace('0X', '0x'), H.toUpperCase().replace('0X', '0x')], [A, '0x']] as [string, string][] };
    expect(chainFactsDisagreement(same, facts)).toBeNull();
  });

  it.each([
    ['token_owner_burned flipped', { ...read, token_owner_burned: true }, /token_owner_burned is true; the ledger says false/],
    ['onchain_symbol changed', { ...read, onchain_symbol: 'USDC' }, /onchain_symbol is "USDC"; the ledger says "VTT"/],
    ['onchain_symbol blanked', { ...read, onchain_symbol: null }, /onchain_symbol is null/],
    ['onchain_symbol in another case', { ...read, onchain_symbol: 'vtt' }, /onchain_symbol/],
    ['evm_code emptied', { ...read, evm_code: [] }, /evm_code is none; the ledger says/],
    ['code claimed where there is none', { ...read, evm_code: [[A, '0x60'], [T, H]] as [string, string][] }, /evm_code is/],
    ['no code claimed where there is a contract', { ...read, evm_code: [[A, '0x'], [T, '0x']] as [string, string][] }, /evm_code is/],
    ['an entry dropped', { ...read, evm_code: [[T, H]] as [string, string][] }, /evm_code is/],
    ['an entry added', { ...read, evm_code: [...read.evm_code, [`0x${'ee'.repeat(20)}`, '0x']] as [string, string][] }, /evm_code is/],
    ['an entry repeated in place of another', { ...read, evm_code: [[A, '0x'], [A, '0x']] as [string, string][] }, /evm_code is/],
  ])('disagrees when %s', (_name, claimed, message) => {
    expect(chainFactsDisagreement(claimed, facts)).toMatch(message);
  });
});

describe('runIntentGuards', () => {
  // A driver that knows one network per address prefix: 'T…' testnet, everything else mainnet.
  const driver = {
    validateAddress: ({ address: a }: ValidateAddressInput): AddressCheck =>
      a.startsWith('r') || a.startsWith('T') ? { valid: true, normalized: a, network: a.startsWith('T') ? 'xrpl:testnet' : 'xrpl:mainnet' } : { valid: false, reason: 'not an r-address' },
  };
  const wallet = xrplWallet('xrpl:mainnet');
  const protect = protectInputs({ known_destinations: [XRPL_DEST] });

  it('gives the guards the driver\'s facts about the destination and an issuer that is an address: the same report as runGuards on them', () => {
    const testnetIssuer = 'TVd2rqMkYL2AyS97NdELcpeiprNBjwLZzuUG5rZnaewsahi';
    const intent = normalizeIntent({ wallet: wallet.wallet, destination: XRPL_DEST, amount: '1', asset_symbol: 'USD', asset_issuer: testnetIssuer });
    const report = runIntentGuards({ intent, wallet, protect, driver, registry: REGISTRY });
    expect(report).toEqual(
      runGuards({ intent, wallet, protect, destination: addressFacts(driver, wallet.chain, XRPL_DEST), issuer: addressFacts(driver, wallet.chain, testnetIssuer), registry: REGISTRY }),
    );
    // The issuer was judged: it belongs to another network.
    expect(report.findings.some((f) => f.guard === 'network_separation' && f.detail.includes('asset issuer'))).toBe(true);
  });

  it('an issuer in another form (not an address of the chain) is left to the driver\'s build, not blocked here', () => {
    const intent = normalizeIntent({ wallet: wallet.wallet, destination: XRPL_DEST, amount: '1', asset_symbol: 'USD', asset_issuer: 'USD:GISSUER' });
    const report = runIntentGuards({ intent, wallet, protect, driver });
    expect(report.findings.filter((f) => f.guard === 'network_separation')).toEqual([]);
    expect(report).toEqual(runGuards({ intent, wallet, protect, destination: addressFacts(driver, wallet.chain, XRPL_DEST) }));
  });

  it('a destination that is not an address of the chain blocks', () => {
    const intent = normalizeIntent({ wallet: wallet.wallet, destination: '0x1234567890abcdef1234567890abcdef12345678', amount: '1' });
    const report = runIntentGuards({ intent, wallet, protect, driver });
    expect(report.blocked).toBe(true);
    expect(report.findings[0]).toMatchObject({ guard: 'network_separation', severity: 'block' });
  });
});
