/**
 * @module devnet/token
 * A minimal ERC-20 for the local chain, hand-assembled from the EVM opcodes below (there is no
 * Solidity compiler in this toolchain, and the ERC-20s shipped in @safe-global/safe-contracts
 * have neither `mint` nor `owner`). It is the smallest token the driver's operations need:
 *
 * - `name()`, `symbol()` (a string, or a bytes32 like some pre-2018 tokens), `decimals()`
 * - `totalSupply()`, `balanceOf(address)`
 * - `transfer(address,uint256)` (reverts on insufficient balance; emits Transfer)
 * - `owner()`; `mint(address,uint256)` only by the owner (reverts otherwise; emits Transfer from 0)
 *
 * No approve/transferFrom/allowance: nothing here needs them. Storage: slot 0 = owner, slot 1 =
 * totalSupply, balance of `a` at slot `a | 2^160` (never collides with slots 0 and 1). The owner
 * is the constructor argument (32 bytes appended to the init code), so the devnet deploys the
 * token already owned by the Safe. Devnet/test use only.
 */
import { keccak256, toBytes, toHex, type Address, type Hex } from 'viem';

/** Opcodes used below. */
const OP = {
  STOP: 0x00, ADD: 0x01, SUB: 0x03, LT: 0x10, GT: 0x11, EQ: 0x14, ISZERO: 0x15, AND: 0x16, OR: 0x17, SHL: 0x1b, SHR: 0x1c,
  CALLER: 0x33, CALLVALUE: 0x34, CALLDATALOAD: 0x35, CALLDATASIZE: 0x36, CODECOPY: 0x39, CODESIZE: 0x38,
  MLOAD: 0x51, MSTORE: 0x52, SLOAD: 0x54, SSTORE: 0x55, JUMP: 0x56, JUMPI: 0x57, JUMPDEST: 0x5b,
  DUP1: 0x80, DUP2: 0x81, DUP3: 0x82, SWAP1: 0x90, LOG3: 0xa3, RETURN: 0xf3, REVERT: 0xfd,
} as const;
type OpName = keyof typeof OP;

/** One assembly item: an opcode, a PUSH of a value, a label (JUMPDEST) or a PUSH2 of a label. */
export type AsmItem = OpName | { push: bigint } | { label: string } | { ref: string };

/**
 * A two-pass assembler: PUSH uses the smallest width for the value (PUSH1..PUSH32), label
 * references are always PUSH2 so offsets are known after one pass.
 */
export function assembleEvm(items: readonly AsmItem[]): Uint8Array {
  const labels = new Map<string, number>();
  let offset = 0;
  const width = (v: bigint) => Math.max(1, Math.ceil(v.toString(16).length / 2));
  for (const it of items) {
    if (typeof it === 'string') offset += 1;
    else if ('push' in it) offset += 1 + width(it.push);
    else if ('ref' in it) offset += 3;
    else {
      if (labels.has(it.label)) throw new Error(`label ${it.label} defined twice`);
      labels.set(it.label, offset);
      offset += 1;
    }
  }
  const out: number[] = [];
  const pushBytes = (v: bigint, w: number) => {
    if (w > 32 || v < 0n) throw new Error(`cannot push ${v}`);
    out.push(0x5f + w);
    for (let i = w - 1; i >= 0; i--) out.push(Number((v >> BigInt(8 * i)) & 0xffn));
  };
  for (const it of items) {
    if (typeof it === 'string') out.push(OP[it]);
    else if ('push' in it) pushBytes(it.push, width(it.push));
    else if ('ref' in it) {
      const target = labels.get(it.ref);
      if (target === undefined) throw new Error(`unknown label ${it.ref}`);
      pushBytes(BigInt(target), 2);
    } else out.push(OP.JUMPDEST);
  }
  return Uint8Array.from(out);
}

const p = (v: bigint | number): AsmItem => ({ push: BigInt(v) });
const ref = (label: string): AsmItem => ({ ref: label });
const label = (name: string): AsmItem => ({ label: name });

export const TOKEN_SELECTORS = {
  name: 0x06fdde03,
  symbol: 0x95d89b41,
  decimals: 0x313ce567,
  totalSupply: 0x18160ddd,
  balanceOf: 0x70a08231,
  transfer: 0xa9059cbb,
  owner: 0x8da5cb5b,
  mint: 0x40c10f19,
} as const;

const TRANSFER_TOPIC = BigInt(keccak256(toBytes('Transfer(address,address,uint256)')));
const ADDRESS_MASK = (1n << 160n) - 1n;
/** Balance slots are `address | 2^160`. */
export const BALANCE_SLOT_BIT = 1n << 160n;

export interface TestTokenOptions {
  name?: string;
  symbol?: string;
  decimals?: number;
  /** `bytes32`: symbol() and name() return a right-padded bytes32, as MKR and other old tokens do. */
  stringEncoding?: 'string' | 'bytes32';
}

/** Left-aligned 32-byte word of a short UTF-8 string. */
function word(text: string): bigint {
  const bytes = toBytes(text);
  if (bytes.length > 32) throw new Error(`"${text}" is longer than 32 bytes`);
  const padded = new Uint8Array(32);
  padded.set(bytes);
  return BigInt(toHex(padded));
}

/** Returns `text` ABI-encoded as a string (offset, length, data) or as a bytes32. */
function returnText(text: string, encoding: 'string' | 'bytes32'): AsmItem[] {
  if (encoding === 'bytes32') return [p(word(text)), p(0), 'MSTORE', p(32), p(0), 'RETURN'];
  const len = toBytes(text).length;
  return [p(32), p(0), 'MSTORE', p(len), p(32), 'MSTORE', p(word(text)), p(64), 'MSTORE', p(96), p(0), 'RETURN'];
}

/** [addr] -> [slot] : masks calldata to 160 bits and tags the balance slot. */
const balanceSlot: AsmItem[] = [p(ADDRESS_MASK), 'AND', p(1), p(160), 'SHL', 'OR'];
/** [] -> [to] : the first argument, masked to an address. */
const arg0Address: AsmItem[] = [p(4), 'CALLDATALOAD', p(ADDRESS_MASK), 'AND'];

/** The runtime code of the token. */
export function tokenRuntime(options: TestTokenOptions = {}): Uint8Array {
  const name = options.name ?? 'Vault Test Token';
  const symbol = options.symbol ?? 'VTT';
  const decimals = options.decimals ?? 6;
  const enc = options.stringEncoding ?? 'string';
  const dispatch = (Object.entries(TOKEN_SELECTORS) as [keyof typeof TOKEN_SELECTORS, number][]).flatMap(([fn, sel]) => [
    'DUP1', p(sel), 'EQ', ref(fn), 'JUMPI',
  ] as AsmItem[]);
  return assembleEvm([
    // Non-payable, and every function takes at least a selector.
    'CALLVALUE', ref('revert'), 'JUMPI',
    p(4), 'CALLDATASIZE', 'LT', ref('revert'), 'JUMPI',
    p(0), 'CALLDATALOAD', p(0xe0), 'SHR',
    ...dispatch,
    label('revert'), p(0), p(0), 'REVERT',

    label('ret32'), p(0), 'MSTORE', p(32), p(0), 'RETURN',
    label('name'), ...returnText(name, enc),
    label('symbol'), ...returnText(symbol, enc),
    label('decimals'), p(decimals), ref('ret32'), 'JUMP',
    label('totalSupply'), p(1), 'SLOAD', ref('ret32'), 'JUMP',
    label('owner'), p(0), 'SLOAD', ref('ret32'), 'JUMP',
    label('balanceOf'), p(4), 'CALLDATALOAD', ...balanceSlot, 'SLOAD', ref('ret32'), 'JUMP',

    label('transfer'),
    p(0x24), 'CALLDATALOAD', //                        [amt]
    'CALLER', ...balanceSlot, 'SLOAD', //              [amt, balFrom]
    'DUP2', 'DUP2', 'LT', ref('revert'), 'JUMPI', //   balFrom < amt -> revert
    'DUP2', 'SWAP1', 'SUB', //                         [amt, balFrom - amt]
    'CALLER', ...balanceSlot, 'SSTORE', //             [amt]
    ...arg0Address, ...balanceSlot, //                 [amt, slotTo]
    'DUP1', 'SLOAD', 'DUP3', 'ADD', 'SWAP1', 'SSTORE', // balTo += amt (cannot overflow: sum <= totalSupply)
    p(0), 'MSTORE', //                                 mem[0] = amt
    ...arg0Address, 'CALLER', p(TRANSFER_TOPIC), p(32), p(0), 'LOG3',
    ref('true'), 'JUMP',

    label('mint'),
    p(0), 'SLOAD', 'CALLER', 'EQ', 'ISZERO', ref('revert'), 'JUMPI', // only the owner
    p(0x24), 'CALLDATALOAD', //                        [amt]
    p(1), 'SLOAD', 'DUP2', 'ADD', //                   [amt, supply + amt]
    'DUP1', p(1), 'SLOAD', 'GT', ref('revert'), 'JUMPI', // overflow -> revert
    p(1), 'SSTORE', //                                 [amt]
    ...arg0Address, ...balanceSlot,
    'DUP1', 'SLOAD', 'DUP3', 'ADD', 'SWAP1', 'SSTORE',
    p(0), 'MSTORE',
    ...arg0Address, p(0), p(TRANSFER_TOPIC), p(32), p(0), 'LOG3',
    ref('true'), 'JUMP',

    label('true'), p(1), ref('ret32'), 'JUMP',
  ]);
}

/**
 * Init code + ABI-encoded owner: stores the owner (last 32 bytes of the code) in slot 0 and
 * returns the runtime.
 */
export function tokenDeployData(owner: Address, options: TestTokenOptions = {}): Hex {
  const runtime = tokenRuntime(options);
  const init = (runtimeOffset: number) =>
    assembleEvm([
      p(32), p(32), 'CODESIZE', 'SUB', p(0), 'CODECOPY', // mem[0..32] = last 32 bytes of the code
      p(0), 'MLOAD', p(0), 'SSTORE', //                    slot 0 = owner
      p(runtime.length), p(runtimeOffset), p(0), 'CODECOPY',
      p(runtime.length), p(0), 'RETURN',
    ]);
  // The init code's length depends on the width of the runtime offset: iterate to a fixed point.
  let offset = init(0).length;
  while (init(offset).length !== offset) offset = init(offset).length;
  const code = new Uint8Array(offset + runtime.length + 32);
  code.set(init(offset), 0);
  code.set(runtime, offset);
  code.set(toBytes(BigInt(owner), { size: 32 }), offset + runtime.length);
  return toHex(code);
}

/** The storage slot of `holder`'s balance (for anvil_setStorageAt). */
export function balanceSlotOf(holder: Address): Hex {
  return toHex(BigInt(holder) | BALANCE_SLOT_BIT, { size: 32 });
}

/** The ABI of the test token. */
export const TEST_TOKEN_ABI = [
  { type: 'function', name: 'name', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'string' }] },
  { type: 'function', name: 'symbol', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'string' }] },
  { type: 'function', name: 'decimals', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'uint8' }] },
  { type: 'function', name: 'totalSupply', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'uint256' }] },
  { type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ name: 'a', type: 'address' }], outputs: [{ name: '', type: 'uint256' }] },
  { type: 'function', name: 'owner', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] },
  {
    type: 'function', name: 'transfer', stateMutability: 'nonpayable',
    inputs: [{ name: 'to', type: 'address' }, { name: 'amount', type: 'uint256' }], outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'function', name: 'mint', stateMutability: 'nonpayable',
    inputs: [{ name: 'to', type: 'address' }, { name: 'amount', type: 'uint256' }], outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'event', name: 'Transfer',
    inputs: [{ name: 'from', type: 'address', indexed: true }, { name: 'to', type: 'address', indexed: true }, { name: 'value', type: 'uint256', indexed: false }],
  },
] as const;
