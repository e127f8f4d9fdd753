/**
 * @module safe-tx
 * The Safe transaction as a JSON-safe payload, its safeTxHash (EIP-712, the digest owners sign),
 * the owner-signature encoding and the execTransaction calldata. Pure functions: the keyless
 * driver and the signer both call them, which is what makes the signer's re-derivation of the
 * digest meaningful.
 */
import { ValidationError } from '@vault/sdk';
import { encodeFunctionData, getAddress, hashTypedData, isAddress, type Address, type Hex } from 'viem';

/** Format tag of the payload, bumped if its shape ever changes. */
export const SAFE_TX_FORMAT = 'vault-evm-safe-tx-v1';
/** Contribution signature encoding: 65 bytes r || s || v with v = 27 + recovery (Safe's ECDSA form). */
export const SAFE_SIGNATURE_ENCODING = 'eip712-rsv';
/** Format tag of the assembled blob that `submit` takes. */
export const SAFE_BLOB_FORMAT = 'vault-evm-safe-exec-v1';

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as const;

/** The EIP-712 SafeTx type of Safe v1.3.0+ (unchanged in v1.4.1). */
export const SAFE_TX_TYPES = {
  SafeTx: [
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'data', type: 'bytes' },
    { name: 'operation', type: 'uint8' },
    { name: 'safeTxGas', type: 'uint256' },
    { name: 'baseGas', type: 'uint256' },
    { name: 'gasPrice', type: 'uint256' },
    { name: 'gasToken', type: 'address' },
    { name: 'refundReceiver', type: 'address' },
    { name: 'nonce', type: 'uint256' },
  ],
} as const;

/** The subset of the Safe ABI the driver, the signer and the devnet call. */
export const SAFE_ABI = [
  {
    type: 'function',
    name: 'execTransaction',
    stateMutability: 'payable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'data', type: 'bytes' },
      { name: 'operation', type: 'uint8' },
      { name: 'safeTxGas', type: 'uint256' },
      { name: 'baseGas', type: 'uint256' },
      { name: 'gasPrice', type: 'uint256' },
      { name: 'gasToken', type: 'address' },
      { name: 'refundReceiver', type: 'address' },
      { name: 'signatures', type: 'bytes' },
    ],
    outputs: [{ name: 'success', type: 'bool' }],
  },
  {
    type: 'function',
    name: 'getTransactionHash',
    stateMutability: 'view',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'data', type: 'bytes' },
      { name: 'operation', type: 'uint8' },
      { name: 'safeTxGas', type: 'uint256' },
      { name: 'baseGas', type: 'uint256' },
      { name: 'gasPrice', type: 'uint256' },
      { name: 'gasToken', type: 'address' },
      { name: 'refundReceiver', type: 'address' },
      { name: '_nonce', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bytes32' }],
  },
  { type: 'function', name: 'nonce', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'uint256' }] },
  { type: 'function', name: 'getThreshold', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'uint256' }] },
  { type: 'function', name: 'getOwners', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address[]' }] },
  { type: 'function', name: 'VERSION', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'string' }] },
  {
    type: 'event',
    name: 'ExecutionSuccess',
    inputs: [
      { name: 'txHash', type: 'bytes32', indexed: true },
      { name: 'payment', type: 'uint256', indexed: false },
    ],
  },
  {
    type: 'event',
    name: 'ExecutionFailure',
    inputs: [
      { name: 'txHash', type: 'bytes32', indexed: true },
      { name: 'payment', type: 'uint256', indexed: false },
    ],
  },
] as const;

const UINT_RE = /^(0|[1-9][0-9]{0,77})$/;
const HEX_DATA_RE = /^0x(?:[0-9a-f]{2})*$/;
const HASH_RE = /^0x[0-9a-f]{64}$/;

/** The SafeTx fields, every integer as a decimal string so the payload survives JSON. */
export interface SafeTx {
  to: Address;
  value: string;
  /** Lowercase 0x-hex. */
  data: Hex;
  /** 0 = CALL. The driver never builds 1 (DELEGATECALL): it would hand the Safe's storage to `to`. */
  operation: 0 | 1;
  safeTxGas: string;
  baseGas: string;
  gasPrice: string;
  gasToken: Address;
  refundReceiver: Address;
  nonce: string;
}

export type SafePayloadOp = 'transfer' | 'erc20_transfer' | 'contract_call' | 'issue';
const PAYLOAD_OPS: readonly SafePayloadOp[] = ['transfer', 'erc20_transfer', 'contract_call', 'issue'];

/** What `buildPayload` returns as `payload`: the SafeTx bound to one Safe on one chain. */
export interface SafePayload {
  format: typeof SAFE_TX_FORMAT;
  chain: string;
  chain_id: number;
  safe: Address;
  /** What the intent asked for, for humans and logs; the SafeTx is what gets signed. */
  op: SafePayloadOp;
  tx: SafeTx;
}

/** The blob `assemble` returns and `submit` takes (as JCS JSON): the Safe, its chain and the call. */
export interface SafeBlob {
  format: typeof SAFE_BLOB_FORMAT;
  chain_id: number;
  safe: Address;
  nonce: string;
  safe_tx_hash: Hex;
  /** execTransaction calldata. */
  data: Hex;
}

/** Reads JSON-ish input field by field, throwing on the first problem with its path. */
class Reader {
  constructor(private readonly prefix: string) {}
  private fail(path: string, message: string): never {
    throw new ValidationError(this.prefix, [{ path, message }]);
  }
  obj(v: unknown, path: string, keys: readonly string[]): Record<string, unknown> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(path, 'must be an object');
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!keys.includes(k)) this.fail(path ? `${path}.${k}` : k, 'unknown field');
    return o;
  }
  uint(v: unknown, path: string): string {
    if (typeof v !== 'string' || !UINT_RE.test(v) || BigInt(v) >= 1n << 256n) this.fail(path, 'must be a uint256 decimal string');
    return v as string;
  }
  address(v: unknown, path: string): Address {
    if (typeof v !== 'string' || !isAddress(v, { strict: true }) || v !== getAddress(v)) this.fail(path, 'must be a checksummed address');
    return v as Address;
  }
  hex(v: unknown, path: string, re = HEX_DATA_RE): Hex {
    if (typeof v !== 'string' || !re.test(v)) this.fail(path, 'must be lowercase 0x-hex');
    return v as Hex;
  }
  int(v: unknown, path: string): number {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) this.fail(path, 'must be a positive integer');
    return v as number;
  }
  literal<T>(v: unknown, path: string, allowed: readonly T[]): T {
    if (!allowed.includes(v as T)) this.fail(path, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
    return v as T;
  }
  str(v: unknown, path: string): string {
    if (typeof v !== 'string' || v === '') this.fail(path, 'must be a non-empty string');
    return v as string;
  }
}

const TX_KEYS = ['to', 'value', 'data', 'operation', 'safeTxGas', 'baseGas', 'gasPrice', 'gasToken', 'refundReceiver', 'nonce'] as const;

/** Validates a SafePayload from the wire; throws a ValidationError naming the field (`what.path`). */
export function parseSafePayload(value: unknown, what = 'payload'): SafePayload {
  const r = new Reader(what);
  const o = r.obj(value, '', ['format', 'chain', 'chain_id', 'safe', 'op', 'tx']);
  const t = r.obj(o['tx'], 'tx', TX_KEYS);
  return {
    format: r.literal(o['format'], 'format', [SAFE_TX_FORMAT] as const),
    chain: r.str(o['chain'], 'chain'),
    chain_id: r.int(o['chain_id'], 'chain_id'),
    safe: r.address(o['safe'], 'safe'),
    op: r.literal(o['op'], 'op', PAYLOAD_OPS),
    tx: {
      to: r.address(t['to'], 'tx.to'),
      value: r.uint(t['value'], 'tx.value'),
      data: r.hex(t['data'], 'tx.data'),
      operation: r.literal(t['operation'], 'tx.operation', [0, 1] as const),
      safeTxGas: r.uint(t['safeTxGas'], 'tx.safeTxGas'),
      baseGas: r.uint(t['baseGas'], 'tx.baseGas'),
      gasPrice: r.uint(t['gasPrice'], 'tx.gasPrice'),
      gasToken: r.address(t['gasToken'], 'tx.gasToken'),
      refundReceiver: r.address(t['refundReceiver'], 'tx.refundReceiver'),
      nonce: r.uint(t['nonce'], 'tx.nonce'),
    },
  };
}

/** Validates a blob's decoded JSON; throws a ValidationError naming the field. */
export function parseSafeBlob(value: unknown): SafeBlob {
  const r = new Reader('blob');
  const o = r.obj(value, '', ['format', 'chain_id', 'safe', 'nonce', 'safe_tx_hash', 'data']);
  return {
    format: r.literal(o['format'], 'format', [SAFE_BLOB_FORMAT] as const),
    chain_id: r.int(o['chain_id'], 'chain_id'),
    safe: r.address(o['safe'], 'safe'),
    nonce: r.uint(o['nonce'], 'nonce'),
    safe_tx_hash: r.hex(o['safe_tx_hash'], 'safe_tx_hash', HASH_RE),
    data: r.hex(o['data'], 'data'),
  };
}

/**
 * The safeTxHash: EIP-712 over SafeTx under the domain {chainId, verifyingContract: safe}. It
 * equals the contract's own `getTransactionHash(...)` (tested on chain).
 *
 * @example
 * safeTxHash({ chainId: 31337, safe, tx }) // '0x…' 32 bytes
 */
export function safeTxHash(input: { chainId: number; safe: Address; tx: SafeTx }): Hex {
  const { tx } = input;
  return hashTypedData({
    domain: { chainId: input.chainId, verifyingContract: input.safe },
    types: SAFE_TX_TYPES,
    primaryType: 'SafeTx',
    message: {
      to: tx.to as Address,
      value: BigInt(tx.value),
      data: tx.data as Hex,
      operation: tx.operation,
      safeTxGas: BigInt(tx.safeTxGas),
      baseGas: BigInt(tx.baseGas),
      gasPrice: BigInt(tx.gasPrice),
      gasToken: tx.gasToken as Address,
      refundReceiver: tx.refundReceiver as Address,
      nonce: BigInt(tx.nonce),
    },
  });
}

/** The digest of a payload as BuiltPayload carries it: lowercase hex without 0x. */
export function payloadDigest(payload: SafePayload): string {
  return safeTxHash({ chainId: payload.chain_id, safe: payload.safe as Address, tx: payload.tx }).slice(2);
}

/** Parses `built.payload` and checks that `built.digest` is its safeTxHash. */
export function checkedPayload(built: { payload: unknown; digest: string }): SafePayload {
  const payload = parseSafePayload(built.payload, 'built.payload');
  if (payloadDigest(payload) !== built.digest) {
    throw new ValidationError('built', [{ path: 'digest', message: 'digest is not the safeTxHash of the payload' }]);
  }
  return payload;
}

/** execTransaction calldata for a SafeTx and concatenated owner signatures. */
export function encodeExecTransaction(tx: SafeTx, signatures: Hex): Hex {
  return encodeFunctionData({
    abi: SAFE_ABI,
    functionName: 'execTransaction',
    args: [
      tx.to as Address,
      BigInt(tx.value),
      tx.data as Hex,
      tx.operation,
      BigInt(tx.safeTxGas),
      BigInt(tx.baseGas),
      BigInt(tx.gasPrice),
      tx.gasToken as Address,
      tx.refundReceiver as Address,
      signatures,
    ],
  });
}

/** Sorts owners the way Safe's checkNSignatures requires: strictly ascending as 160-bit numbers. */
export function compareAddresses(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}
