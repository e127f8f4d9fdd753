/**
 * @module constants
 * Stellar facts the driver, the signer and the devnet share.
 */

export const STELLAR_FAMILY = 'stellar';

/** Network passphrases of the public networks (part of every transaction hash). */
export const STELLAR_NETWORKS = {
  'stellar:pubnet': 'Public Global Stellar Network ; September 2015',
  'stellar:testnet': 'Test SDF Network ; September 2015',
  /** The passphrase stellar-core uses for a standalone network; the devnet's default. */
  'stellar:local': 'Standalone Network ; February 2017',
} as const;

/** Every Stellar amount, native or credit, is an int64 count of 10^-7 units (stroops for XLM). */
export const STELLAR_DECIMALS = 7;
export const NATIVE_SYMBOL = 'XLM';
export const INT64_MAX = (1n << 63n) - 1n;

/**
 * What `vault provision` funds a new account with through `key_env` when the request gives no
 * `fundAmount`: 200000000 stroops (20 XLM). The reserve of an account with the 20-signer maximum is
 * (2 + 20) x 0.5 XLM = 11 XLM; the rest pays fees and a few trust lines. Friendbot ignores it.
 */
export const PROVISION_DEFAULT_FUND_STROOPS = '200000000';

/**
 * The fee cap (a transaction's fee bid, stroops) a signer applies when its trust file sets no
 * max_fee: 0.001 XLM. Stellar's base fee is 100 stroops per operation and this driver builds
 * one-operation transactions bidding Horizon's last ledger base fee, so this leaves 100x room for
 * a raised network base fee. The ledger never charges more than the bid.
 */
export const SIGNER_DEFAULT_MAX_FEE_STROOPS = 10_000n;

/** Text memos are at most 28 bytes of UTF-8. */
export const MEMO_TEXT_MAX_BYTES = 28;

/** Account flags (setOptions setFlags / clearFlags), as stellar-core numbers them. */
export const ACCOUNT_FLAGS = {
  auth_required: 0x1,
  auth_revocable: 0x2,
  auth_immutable: 0x4,
  auth_clawback_enabled: 0x8,
} as const;
export const ACCOUNT_FLAGS_MASK = 0xf;

/** Trust line flags. */
export const TRUSTLINE_FLAGS = {
  authorized: 0x1,
  authorized_to_maintain_liabilities: 0x2,
  clawback_enabled: 0x4,
} as const;

/** The payload format the driver builds and the signer accepts. */
export const STELLAR_TX_FORMAT = 'stellar-tx/1';
/** Contribution.signature.encoding: a raw ed25519 signature over the tx hash, plus its 4-byte hint. */
export const STELLAR_SIGNATURE_ENCODING = 'stellar-decorated';

export type ThresholdClass = 'low' | 'medium' | 'high';
