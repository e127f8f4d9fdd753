/**
 * @module guards
 * The protection guards, pure functions over the `protect` inputs, the driver's address facts
 * and the canonical asset registry. A `block` finding prevents execution; a `warn` finding is
 * returned to the caller as a warning. The control plane (GET /intent/{id}/protect, execute) and
 * the signer (before it signs) run exactly these.
 */
import type { AddressLedgerFacts, ChainDriver, ChainProtectFacts } from './driver/types.js';
import { sameAddress } from './policy/amounts.js';
import type { AssetSpec, NormalizedIntent } from './schemas/intent.js';
import type { Finding, GuardName, ProtectInputs } from './schemas/protect.js';
import { walletMembers, type WalletDescriptor } from './schemas/wallet.js';

/** What the wallet's driver says about an address. */
export interface AddressFacts {
  address: string;
  valid: boolean;
  /** Why it is invalid. */
  reason?: string;
  /** The chain the address itself is bound to (X-address test flag), or null when it does not say. */
  network: string | null;
  /** The account funds reach (AddressCheck.account), else the address itself. */
  account: string;
}

/** The canonical asset registry: registered assets and tickers nobody else may use. */
export interface AssetRegistry {
  assets: readonly AssetSpec[];
  reserved: readonly string[];
}

export interface GuardInput {
  intent: NormalizedIntent;
  wallet: WalletDescriptor;
  protect: ProtectInputs;
  destination: AddressFacts;
  /** Facts about asset_issuer when the intent names one that is an address on this chain. */
  issuer?: AddressFacts;
  registry?: AssetRegistry;
}

/** Asks the wallet's driver about an address (the only impure step, kept out of the guards). */
export function addressFacts(driver: Pick<ChainDriver, 'validateAddress'>, chain: string, address: string): AddressFacts {
  const check = driver.validateAddress({ chain, address });
  return check.valid
    ? { address, valid: true, network: check.network, account: check.account ?? check.normalized }
    : { address, valid: false, reason: check.reason, network: null, account: address };
}

const finding = (guard: GuardName, severity: Finding['severity'], detail: string): Finding => ({ guard, severity, detail });

function codeAt(protect: ProtectInputs, address: string): string | undefined {
  return protect.evm_code.find(([a]) => sameAddress(a, address))?.[1];
}

/** network_separation: the destination (and issuer) must be addresses of the wallet's own chain. */
export function networkSeparation(input: GuardInput): Finding[] {
  const out: Finding[] = [];
  const chain = input.wallet.chain;
  for (const [role, facts] of [['destination', input.destination], ['asset issuer', input.issuer]] as const) {
    if (!facts) continue;
    if (!facts.valid) {
      out.push(finding('network_separation', 'block', `${role} ${facts.address} is not a valid address on ${chain}: ${facts.reason ?? 'invalid'}`));
    } else if (facts.network !== null && facts.network !== chain) {
      out.push(finding('network_separation', 'block', `${role} ${facts.address} belongs to ${facts.network}, but the wallet is on ${chain}`));
    }
  }
  if (input.intent.operation.op === 'contract_call' && codeAt(input.protect, input.intent.destination) === '0x') {
    out.push(finding('network_separation', 'block', `no contract is deployed at ${input.intent.destination} on ${chain} (wrong network?)`));
  }
  return out;
}

/**
 * The issuing account of a registry issuer in the AssetSpec forms (interface.md): XRPL
 * `ACCOUNT.CODE`, Stellar `CODE:ISSUER`; any other form (EVM contract, MPT id) is its own account.
 * Intents name the issuer account alone, so the canonical asset must match on it.
 */
function issuerAccount(issuer: string): string {
  const colon = issuer.indexOf(':');
  if (colon >= 0) return issuer.slice(colon + 1);
  const dot = issuer.indexOf('.');
  return dot >= 0 ? issuer.slice(0, dot) : issuer;
}

/** counterfeit_asset: reserved and registered tickers only from their canonical issuers. */
export function counterfeitAsset(input: GuardInput): Finding[] {
  const out: Finding[] = [];
  const { intent, protect } = input;
  const chain = input.wallet.chain;
  const symbol = intent.asset_symbol;
  const registry = input.registry ?? { assets: [], reserved: [] };
  const upper = (s: string) => s.toUpperCase();
  const isReserved = (s: string) => registry.reserved.some((r) => upper(r) === upper(s));
  const canonical = (s: string) => registry.assets.filter((a) => a.chain === chain && upper(a.symbol) === upper(s));
  const matches = (a: AssetSpec) =>
    (a.issuer ?? undefined) === undefined
      ? intent.asset_issuer === undefined
      : intent.asset_issuer !== undefined &&
        (sameAddress(a.issuer as string, intent.asset_issuer) || sameAddress(issuerAccount(a.issuer as string), intent.asset_issuer));

  if (symbol !== undefined) {
    const entries = canonical(symbol);
    const match = entries.find(matches);
    if (entries.length > 0 && !match) {
      out.push(finding('counterfeit_asset', 'block',
        `${symbol} on ${chain} is issued by ${entries.map((e) => e.issuer ?? 'the ledger').join(' or ')}, not ${intent.asset_issuer ?? 'the ledger'}`));
    } else if (entries.length === 0 && isReserved(symbol)) {
      out.push(finding('counterfeit_asset', 'block', `ticker ${symbol} is reserved and has no registered issuer on ${chain}`));
    } else if (match && match.decimals !== intent.asset_decimals) {
      out.push(finding('counterfeit_asset', 'warn', `${symbol} on ${chain} has ${match.decimals} decimals, the intent says ${intent.asset_decimals}`));
    }
  }
  const onchain = protect.onchain_symbol;
  if (onchain !== null) {
    if (symbol !== undefined && upper(onchain) !== upper(symbol)) {
      out.push(finding('counterfeit_asset', 'block', `the token reports symbol ${onchain}, the intent says ${symbol}`));
    } else if (symbol === undefined && isReserved(onchain) && !canonical(onchain).some(matches)) {
      out.push(finding('counterfeit_asset', 'block', `the token calls itself ${onchain}, a reserved ticker, but is not its registered issuer on ${chain}`));
    }
  }
  if (intent.asset_issuer !== undefined && codeAt(protect, intent.asset_issuer) === '0x') {
    out.push(finding('counterfeit_asset', 'block', `no token contract is deployed at ${intent.asset_issuer} on ${chain}`));
  }
  return out;
}

function addressBody(address: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(address) ? address.slice(2).toLowerCase() : address;
}

/** Characters compared at each end to call two addresses look-alikes. */
export const LOOKALIKE_CHARS = 4;

/**
 * address_poisoning: a new destination that shares its first and last characters with a known
 * one is the signature of a poisoning attack (block); any other new destination is a warning.
 */
export function addressPoisoning(input: GuardInput): Finding[] {
  const dest = input.intent.destination;
  const known = input.protect.known_destinations;
  if (known.some((k) => sameAddress(k, dest))) return [];
  const d = addressBody(dest);
  const twin = known.find((k) => {
    const b = addressBody(k);
    return b.length >= LOOKALIKE_CHARS * 2 && b.slice(0, LOOKALIKE_CHARS) === d.slice(0, LOOKALIKE_CHARS) && b.slice(-LOOKALIKE_CHARS) === d.slice(-LOOKALIKE_CHARS);
  });
  if (twin !== undefined) {
    return [finding('address_poisoning', 'block', `destination ${dest} imitates the known address ${twin} (same first and last ${LOOKALIKE_CHARS} characters)`)];
  }
  return [finding('address_poisoning', 'warn', `first transfer to ${dest}: not among ${known.length} known destination(s)`)];
}

/** burned_key: never send to a burned address, mint through a burned owner, or rely on burned signers. */
export function burnedKey(input: GuardInput): Finding[] {
  const out: Finding[] = [];
  const { intent, protect, wallet } = input;
  const burned = (a: string) => protect.burned.some((b) => sameAddress(b, a));
  // The account behind a tagged address too: a destination tag does not make a burned account live.
  if (burned(intent.destination) || burned(input.destination.account)) {
    out.push(finding('burned_key', 'block', `destination ${intent.destination} is a burned address: funds sent there are lost`));
  }
  if (protect.token_owner_burned && intent.operation.op === 'issue') {
    out.push(finding('burned_key', 'block', `the token's owner key is burned: ${intent.asset_symbol ?? 'the token'} can no longer be issued`));
  }
  const { members, quorum } = walletMembers(wallet);
  const lost = members.filter((m) => burned(m.address));
  if (lost.length > 0) {
    const live = members.reduce((s, m) => (burned(m.address) ? s : s + m.weight), 0);
    out.push(
      live < quorum
        ? finding('burned_key', 'block', `${lost.length} signer(s) of ${wallet.wallet} are burned; remaining weight ${live} cannot reach quorum ${quorum}`)
        : finding('burned_key', 'warn', `${lost.length} signer(s) of ${wallet.wallet} are burned; remaining weight ${live} still reaches quorum ${quorum}`),
    );
  }
  return out;
}

/** The chain facts of SignRequest.protect: the wire form of {@link ChainProtectFacts}. */
export type ProtectChainFacts = Pick<ProtectInputs, 'evm_code' | 'token_owner_burned' | 'onchain_symbol'>;

/**
 * A driver's ledger-neutral facts in the wire form of SignRequest.protect (interface.md), the one
 * place the two meet: `evm_code` lists `[address, code]` for each address whose ledger can hold
 * code (destination first, then the asset's contract), `code` being `0x` when none is deployed
 * and else the code's hash (`codeHash`); a ledger whose accounts hold no code sends `[]`.
 * `onchain_symbol` is `assetSymbol`, `token_owner_burned` is `issuerKeyBurned`. The control plane
 * fills `protect` with it; a signer compares what it was sent with it (chainFactsDisagreement).
 *
 * @example
 * protectChainFacts({ destination: { address: '0xAb…', hasCode: false, codeHash: null }, issuer: null, assetSymbol: null, issuerKeyBurned: false })
 * // { evm_code: [['0xAb…', '0x']], onchain_symbol: null, token_owner_burned: false }
 */
export function protectChainFacts(facts: ChainProtectFacts): ProtectChainFacts {
  // A contract whose driver gave no hash is written as no code: the guards then block, never pass.
  const evm_code = [facts.destination, facts.issuer]
    .filter((a): a is AddressLedgerFacts => a !== null && a.hasCode !== null)
    .map((a): [string, string] => [a.address, a.hasCode === true && a.codeHash !== null ? a.codeHash : '0x']);
  return { evm_code, onchain_symbol: facts.assetSymbol, token_owner_burned: facts.issuerKeyBurned };
}

/**
 * Where the chain facts a caller was sent (`protect` as a control plane filled it) differ from the
 * facts it read through its own driver, or null when they agree exactly: `token_owner_burned`
 * equal, `onchain_symbol` the same string (or both null), `evm_code` the same set of
 * `[address, code]` entries, addresses compared as sameAddress does and code case-insensitively,
 * in any order. The read facts are put in the wire form by protectChainFacts first, so both sides
 * are written by the same function. A signer refuses on any difference: those facts decide
 * guards, and a control plane that got them wrong (or lied) must not have its version checked.
 *
 * @example
 * const diff = chainFactsDisagreement(request.protect, await driver.fetchProtectInputs({ intent, wallet }))
 * if (diff !== null) refuse('protected', diff)
 */
export function chainFactsDisagreement(claimed: ProtectChainFacts, facts: ChainProtectFacts): string | null {
  const read = protectChainFacts(facts);
  if (claimed.token_owner_burned !== read.token_owner_burned) {
    return `token_owner_burned is ${String(claimed.token_owner_burned)}; the ledger says ${String(read.token_owner_burned)}`;
  }
  if (claimed.onchain_symbol !== read.onchain_symbol) {
    return `onchain_symbol is ${JSON.stringify(claimed.onchain_symbol)}; the ledger says ${JSON.stringify(read.onchain_symbol)}`;
  }
  const entries = (code: ProtectChainFacts['evm_code']) =>
    code.map(([a, c]) => `${/^0x[0-9a-fA-F]{40}$/.test(a) ? a.toLowerCase() : a} ${c.toLowerCase()}`).sort();
  const c = entries(claimed.evm_code);
  const r = entries(read.evm_code);
  if (c.length !== r.length || c.some((e, i) => e !== r[i])) {
    const brief = (list: ProtectChainFacts['evm_code']) => (list.length === 0 ? 'none' : list.map(([a, code]) => `${a}: ${code.length > 10 ? `${code.slice(0, 10)}… (${(code.length - 2) / 2} bytes)` : code}`).join(', '));
    return `evm_code is ${brief(claimed.evm_code)}; the ledger says ${brief(read.evm_code)}`;
  }
  return null;
}

/** The guards in the order they run. */
export const GUARD_FUNCTIONS: { readonly [G in GuardName]: (input: GuardInput) => Finding[] } = {
  network_separation: networkSeparation,
  counterfeit_asset: counterfeitAsset,
  address_poisoning: addressPoisoning,
  burned_key: burnedKey,
};

export interface GuardReport {
  blocked: boolean;
  findings: Finding[];
  /** The warn findings, as a signer returns them. */
  warnings: Finding[];
}

/**
 * Runs every guard.
 *
 * @example
 * const report = runGuards({ intent, wallet, protect, destination: addressFacts(driver, wallet.chain, intent.destination) })
 * if (report.blocked) refuse(report.findings)
 */
export function runGuards(input: GuardInput): GuardReport {
  const findings = Object.values(GUARD_FUNCTIONS).flatMap((g) => g(input));
  return {
    blocked: findings.some((f) => f.severity === 'block'),
    findings,
    warnings: findings.filter((f) => f.severity === 'warn'),
  };
}

/** What {@link runIntentGuards} takes: the guards' inputs, with the driver in place of its address facts. */
export interface IntentGuardInput {
  intent: NormalizedIntent;
  wallet: WalletDescriptor;
  protect: ProtectInputs;
  /** The wallet's driver: asked for the address facts (see addressFacts). */
  driver: Pick<ChainDriver, 'validateAddress'>;
  registry?: AssetRegistry | undefined;
}

/**
 * Runs every guard on an intent with the facts its wallet's driver gives: about the destination,
 * and about `asset_issuer` when it is an address of the chain (other issuer forms, such as
 * `CODE:ISSUER` or an MPT id, are the driver's build to judge). The control plane (before it asks
 * the signers) and the signer (before it signs) both call this, so they judge the same facts.
 *
 * @example
 * const report = runIntentGuards({ intent, wallet, protect, driver, registry })
 * if (report.blocked) refuse(report.findings)
 */
export function runIntentGuards(input: IntentGuardInput): GuardReport {
  const { intent, wallet, driver } = input;
  const issuer =
    intent.asset_issuer !== undefined && driver.validateAddress({ chain: wallet.chain, address: intent.asset_issuer }).valid
      ? addressFacts(driver, wallet.chain, intent.asset_issuer)
      : undefined;
  return runGuards({
    intent,
    wallet,
    protect: input.protect,
    destination: addressFacts(driver, wallet.chain, intent.destination),
    ...(issuer ? { issuer } : {}),
    ...(input.registry ? { registry: input.registry } : {}),
  });
}
