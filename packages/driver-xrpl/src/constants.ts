/**
 * @module constants
 * Ledger constants the driver and the devnet share: flags, field limits and the signature
 * encodings a Contribution carries.
 */

/** Contribution.signature.encoding for a DER secp256k1 TxnSignature. */
export const XRPL_DER_ENCODING = 'xrpl-der';
/** Contribution.signature.encoding for a raw 64-byte ed25519 TxnSignature. */
export const XRPL_ED25519_ENCODING = 'xrpl-ed25519';
/** BuiltPayload.payload.format of the driver's multisig payloads. */
export const XRPL_PAYLOAD_FORMAT = 'xrpl-multisig/1';

/** Network ids at or below this are legacy: NetworkID must be omitted. */
export const LEGACY_NETWORK_ID_MAX = 1024;
/** A signer list holds 1 to 32 entries. */
export const MAX_SIGNERS = 32;
/** Default LastLedgerSequence window: current open ledger + this. */
export const DEFAULT_LAST_LEDGER_OFFSET = 20;
/** Default ceiling on a transaction's total Fee (drops) when building: 2 XRP. */
export const DEFAULT_MAX_FEE_DROPS = 2_000_000;
/**
 * The fee cap (total Fee, drops) a signer applies when its trust file sets no max_fee: 0.01 XRP.
 * A multisigned transaction pays the base fee (10 drops on mainnet) x (1 + signers): 330 drops
 * for the largest signer list (32) at the reference fee, so this leaves 30x room for fee
 * escalation there and 2,500 drops per slot for a 2-of-3. The build cap above is 200x higher.
 */
export const SIGNER_DEFAULT_MAX_FEE_DROPS = 10_000n;
/** The Memos field may serialise to at most 1 KiB. */
export const MAX_MEMO_BYTES = 1024;

/** AccountSet SetFlag/ClearFlag numbers (asf*), as the spec's account_flags takes them. */
export const ACCOUNT_SET_FLAGS = {
  asfRequireDest: 1,
  asfRequireAuth: 2,
  asfDisallowXRP: 3,
  asfDisableMaster: 4,
  asfAccountTxnID: 5,
  asfNoFreeze: 6,
  asfGlobalFreeze: 7,
  asfDefaultRipple: 8,
  asfDepositAuth: 9,
  asfAuthorizedNFTokenMinter: 10,
  asfDisallowIncomingNFTokenOffer: 12,
  asfDisallowIncomingCheck: 13,
  asfDisallowIncomingPayChan: 14,
  asfDisallowIncomingTrustline: 15,
  asfAllowTrustLineClawback: 16,
  asfAllowTrustLineLocking: 17,
} as const;

/** AccountRoot ledger flags (lsf*). */
export const ACCOUNT_ROOT_FLAGS = {
  lsfPasswordSpent: 0x00010000,
  lsfRequireDestTag: 0x00020000,
  lsfRequireAuth: 0x00040000,
  lsfDisallowXRP: 0x00080000,
  lsfDisableMaster: 0x00100000,
  lsfNoFreeze: 0x00200000,
  lsfGlobalFreeze: 0x00400000,
  lsfDefaultRipple: 0x00800000,
  lsfDepositAuth: 0x01000000,
  lsfAllowTrustLineClawback: 0x80000000,
} as const;

/** Transaction flags the driver sets. */
export const TX_FLAGS = {
  tfSetfAuth: 0x00010000,
  tfMPTUnauthorize: 0x00000001,
  tfFullyCanonicalSig: 0x80000000,
} as const;

/** MPTokenIssuanceCreate flags: the same bits as the spec's mpt_create mask. */
export const MPT_CREATE_FLAGS = {
  tfMPTCanLock: 0x02,
  tfMPTRequireAuth: 0x04,
  tfMPTCanEscrow: 0x08,
  tfMPTCanTrade: 0x10,
  tfMPTCanTransfer: 0x20,
  tfMPTCanClawback: 0x40,
} as const;

/** The public XRPL Testnet faucet (POST `{"destination": "r…", "xrpAmount": "…"}`). */
export const XRPL_TESTNET_FAUCET_URL = 'https://faucet.altnet.rippletest.net/accounts';
/** The public XRPL Devnet faucet (same request shape). */
export const XRPL_DEVNET_FAUCET_URL = 'https://faucet.devnet.rippletest.net/accounts';
/**
 * Working balance a new account gets on top of its reserves when the request names no fundAmount:
 * 10 XRP, enough for thousands of multisig fees. The default fundAmount is base reserve + one owner
 * reserve (the signer list is one owned object whatever its size) + this.
 */
export const PROVISION_WORKING_BALANCE_DROPS = 10_000_000n;
