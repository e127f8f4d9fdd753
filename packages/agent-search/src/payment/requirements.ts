/**
 * @module payment/requirements
 * The payment terms of this server (network, token, payee) and the x402 v2 PaymentRequirements
 * built from them for one call, plus the strict reading of a client's PAYMENT-SIGNATURE payload.
 */
import type { PaymentPayload, PaymentRequired, PaymentRequirements, ResourceInfo } from '@x402/core/types';
import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { ConfigError } from './errors.js';

/** CAIP-2 id of an EVM chain. */
export type EvmNetwork = `eip155:${number}`;

/** What every paid call is paid with and to whom. Set once per server from configuration. */
export interface PaymentTerms {
  network: EvmNetwork;
  /** EIP-3009 token contract. */
  asset: Address;
  /** The token's EIP-712 domain name and version, e.g. "USD Coin" and "2"; clients sign under them. */
  assetName: string;
  assetVersion: string;
  /** Token decimals used to turn decimal prices into base units (USDC: 6). */
  decimals: number;
  /** Ticker shown in the descriptor's pay_with. */
  assetSymbol: string;
  payTo: Address;
  /** How long a signed authorization may stay valid, in seconds (x402 maxTimeoutSeconds). */
  maxTimeoutSeconds: number;
}

/** Checks terms given in code (configuration from flags/env is checked by src/config.ts). */
export function validateTerms(t: PaymentTerms): PaymentTerms {
  if (!/^eip155:[1-9][0-9]*$/.test(t.network)) throw new ConfigError('network', `must be CAIP-2 "eip155:<chainId>", got ${JSON.stringify(t.network)}`);
  if (!isAddress(t.asset, { strict: false })) throw new ConfigError('asset', 'must be a 0x-prefixed 20-byte address');
  if (!isAddress(t.payTo, { strict: false })) throw new ConfigError('payTo', 'must be a 0x-prefixed 20-byte address');
  if (typeof t.assetName !== 'string' || t.assetName.length === 0) throw new ConfigError('assetName', 'must be the token EIP-712 domain name');
  if (typeof t.assetVersion !== 'string' || t.assetVersion.length === 0) throw new ConfigError('assetVersion', 'must be the token EIP-712 domain version');
  if (!Number.isInteger(t.decimals) || t.decimals < 0 || t.decimals > 36) throw new ConfigError('decimals', 'must be an integer from 0 to 36');
  if (!Number.isInteger(t.maxTimeoutSeconds) || t.maxTimeoutSeconds < 10 || t.maxTimeoutSeconds > 3600) {
    throw new ConfigError('maxTimeoutSeconds', 'must be an integer from 10 to 3600');
  }
  return { ...t, asset: getAddress(t.asset), payTo: getAddress(t.payTo) };
}

/** Chain id of an `eip155:<id>` network. */
export function chainIdOf(network: EvmNetwork): number {
  return Number(network.slice('eip155:'.length));
}

/** The one accepted payment option for a call costing `amount` base units. */
export function buildRequirements(terms: PaymentTerms, amount: bigint): PaymentRequirements {
  return {
    scheme: 'exact',
    network: terms.network,
    asset: terms.asset,
    amount: amount.toString(),
    payTo: terms.payTo,
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
    extra: { name: terms.assetName, version: terms.assetVersion },
  };
}

/** The body of the PAYMENT-REQUIRED header. */
export function buildPaymentRequired(resource: ResourceInfo, requirements: PaymentRequirements, error: string): PaymentRequired {
  return { x402Version: 2, error, resource, accepts: [requirements] };
}

/** An EIP-3009 authorization as it travels in the payload (all numbers as decimal strings). */
export interface Eip3009Authorization {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

export interface ExactEvmPayment {
  payload: PaymentPayload;
  authorization: Eip3009Authorization;
  signature: Hex;
}

const UINT = /^(0|[1-9][0-9]{0,77})$/;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a decoded PAYMENT-SIGNATURE payload: x402 v2, an `accepted` object, and an EIP-3009
 * authorization with well-formed fields, each checked strictly. Returns the name of the first bad
 * field instead of throwing, so the middleware can answer with it. Members it does not read (x402
 * `extensions`, `resource.description`, anything else) are tolerated, as the reference server
 * tolerates them, and never forwarded: see {@link forwardedPayload}. A payload without an EIP-3009
 * authorization (Permit2) is refused: this server only quotes EIP-3009.
 */
export function readExactEvmPayment(decoded: unknown): ExactEvmPayment | { field: string } {
  if (!isObj(decoded)) return { field: 'payload' };
  if (decoded.x402Version !== 2) return { field: 'x402Version' };
  if (!isObj(decoded.accepted)) return { field: 'accepted' };
  const p = decoded.payload;
  if (!isObj(p)) return { field: 'payload.payload' };
  const sig = p.signature;
  if (typeof sig !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(sig)) return { field: 'payload.signature' };
  const a = p.authorization;
  if (!isObj(a)) return { field: 'payload.authorization' };
  for (const k of ['from', 'to'] as const) {
    if (typeof a[k] !== 'string' || !isAddress(a[k], { strict: false })) return { field: `payload.authorization.${k}` };
  }
  for (const k of ['value', 'validAfter', 'validBefore'] as const) {
    if (typeof a[k] !== 'string' || !UINT.test(a[k])) return { field: `payload.authorization.${k}` };
  }
  if (typeof a.nonce !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(a.nonce)) return { field: 'payload.authorization.nonce' };
  return {
    payload: decoded as unknown as PaymentPayload,
    signature: sig as Hex,
    authorization: {
      from: getAddress(a.from as string),
      to: getAddress(a.to as string),
      value: a.value as string,
      validAfter: a.validAfter as string,
      validBefore: a.validBefore as string,
      nonce: (a.nonce as string).toLowerCase() as Hex,
    },
  };
}

/**
 * The payload the facilitator verifies and settles: rebuilt from what this server checked (the
 * EIP-3009 signature and authorization, keyed for idempotency), its own resource and its own
 * requirements, never the client's object. A member the client added cannot reach the facilitator,
 * so it cannot change what is verified, settled or charged: the reference facilitator, for one,
 * takes the Permit2 path for any payload with a `permit2Authorization` member, whatever
 * `authorization` says.
 */
export function forwardedPayload(read: ExactEvmPayment, resource: ResourceInfo, requirements: PaymentRequirements): PaymentPayload {
  const { from, to, value, validAfter, validBefore, nonce } = read.authorization;
  return { x402Version: 2, resource, accepted: requirements, payload: { signature: read.signature, authorization: { from, to, value, validAfter, validBefore, nonce } } };
}

const sameAddress = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

/**
 * Compares what the client says it accepted with what this call requires. Returns the first field
 * that differs, or undefined. Addresses compare case-insensitively; everything else exactly.
 * The facilitator is then given OUR requirements, never the client's copy.
 */
export function acceptedMismatch(accepted: unknown, expected: PaymentRequirements): string | undefined {
  if (!isObj(accepted)) return 'accepted';
  if (accepted.scheme !== expected.scheme) return 'accepted.scheme';
  if (accepted.network !== expected.network) return 'accepted.network';
  if (!sameAddress(accepted.asset, expected.asset)) return 'accepted.asset';
  if (accepted.amount !== expected.amount) return 'accepted.amount';
  if (!sameAddress(accepted.payTo, expected.payTo)) return 'accepted.payTo';
  if (accepted.maxTimeoutSeconds !== expected.maxTimeoutSeconds) return 'accepted.maxTimeoutSeconds';
  const extra = accepted.extra;
  if (!isObj(extra)) return 'accepted.extra';
  if (extra.name !== expected.extra.name) return 'accepted.extra.name';
  if (extra.version !== expected.extra.version) return 'accepted.extra.version';
  return undefined;
}
