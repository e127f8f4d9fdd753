/**
 * @module chains/polygon
 * Polygon (any EVM chain) contracts: eth_getCode, then eth_call owner() 0x8da5cb5b, totalSupply()
 * 0x18160ddd and name() 0x06fdde03, all in one JSON-RPC batch pinned to one block whose number and
 * hash are recorded. name() may be an ABI string or a bytes32 (old tokens); an address without code
 * answers `0x` to every call and is reported as such, never as a zero supply.
 */
import { decodeAbiParameters, getAddress, type Hex } from 'viem';
import type { PolygonChain, PolygonContractRow } from '../report-types.js';
import { SupplyReportError } from '../errors.js';
import { isObject, parseJsonExact, stringifyExact, type Json } from '../json.js';
import { diffText, diffFigures, jsonRpcResult, postQuery, type Change, type ChainContext, type Provenance } from './common.js';

export const SELECTORS = { owner: '0x8da5cb5b', totalSupply: '0x18160ddd', name: '0x06fdde03' } as const;

export interface Block {
  number: bigint;
  hash: string;
}

export const latestBlockQuery = () => stringifyExact({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['latest', false] });

/** The batch behind one contract row; every call carries the same block tag. */
export function contractQuery(address: string, blockNumber: bigint): string {
  const tag = `0x${blockNumber.toString(16)}`;
  const call = (id: number, data: string) => ({ jsonrpc: '2.0', id, method: 'eth_call', params: [{ to: address, data }, tag] });
  return stringifyExact([
    { jsonrpc: '2.0', id: 1, method: 'eth_getCode', params: [address, tag] },
    call(2, SELECTORS.owner),
    call(3, SELECTORS.totalSupply),
    call(4, SELECTORS.name),
  ]);
}

export async function latestBlock(ctx: ChainContext): Promise<Block> {
  const { json } = await postQuery(ctx, latestBlockQuery(), 'eth_getBlockByNumber latest');
  const b = jsonRpcResult(json, 'eth_getBlockByNumber latest');
  if (!isObject(b) || typeof b['number'] !== 'string' || typeof b['hash'] !== 'string' || !/^0x[0-9a-fA-F]+$/.test(b['number']) || !/^0x[0-9a-fA-F]{64}$/.test(b['hash'])) {
    throw new SupplyReportError('bad_reply', 'eth_getBlockByNumber latest: number or hash missing');
  }
  return { number: BigInt(b['number']), hash: b['hash'] };
}

/**
 * ABI string, or a right-padded bytes32, with trailing NUL bytes stripped in both: some tokens
 * return a fixed-size name inside an ABI string ("ETH" padded to 32 bytes), which would otherwise
 * read "ETH\u0000\u0000…". NULs inside the name are kept (they are what the contract says). Null
 * for an empty reply.
 */
export function decodeName(hex: string): string | null {
  if (hex === '0x' || hex.length <= 2) return null;
  const len = (hex.length - 2) / 2;
  if (len === 32) {
    const bytes = Buffer.from(hex.slice(2), 'hex');
    let end = 32;
    while (end > 0 && bytes[end - 1] === 0) end -= 1;
    return new TextDecoder('utf-8').decode(bytes.subarray(0, end));
  }
  let text: string;
  try {
    text = decodeAbiParameters([{ type: 'string' }], hex as Hex)[0];
  } catch {
    throw new SupplyReportError('bad_reply', `name(): reply is neither an ABI string nor a bytes32 (${len} bytes)`);
  }
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0) end -= 1;
  return text.slice(0, end);
}

export interface ContractFacts {
  codeSize: number;
  owner: string | null;
  ownerError?: string;
  supply: bigint | null;
  supplyError?: string;
  name: string | null;
  nameError?: string;
}

/** Reads the batch reply; calls that revert are recorded as such, a malformed reply fails closed. */
export function parseContractBatch(json: unknown, what: string): ContractFacts {
  if (!Array.isArray(json)) {
    if (isObject(json) && json['error'] !== undefined) jsonRpcResult(json, what);
    throw new SupplyReportError('bad_reply', `${what}: batch reply is not an array`);
  }
  const byId = new Map<number, Json>();
  for (const item of json) if (isObject(item) && typeof item['id'] === 'number') byId.set(item['id'], item);
  const get = (id: number, name: string): { result?: string; error?: string } => {
    const r = byId.get(id);
    if (!r) throw new SupplyReportError('bad_reply', `${what}: no answer for ${name}`);
    if (r['error'] !== undefined) {
      const e = r['error'] as Json;
      return { error: `${name} failed: ${String(isObject(e) ? e['message'] : e)}` };
    }
    const v = r['result'];
    if (typeof v !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(v)) throw new SupplyReportError('bad_reply', `${what}: ${name} result is not hex`);
    return { result: v };
  };
  const code = get(1, 'eth_getCode');
  if (code.error !== undefined) throw new SupplyReportError('rpc', `${what}: ${code.error}`);
  const codeSize = ((code.result as string).length - 2) / 2;
  const facts: ContractFacts = { codeSize, owner: null, supply: null, name: null };
  if (codeSize === 0) return facts;
  const owner = get(2, 'owner()');
  if (owner.error) facts.ownerError = owner.error;
  else if ((owner.result as string).length === 66) facts.owner = getAddress(`0x${(owner.result as string).slice(26)}`);
  else facts.ownerError = `owner() returned ${((owner.result as string).length - 2) / 2} bytes`;
  const supply = get(3, 'totalSupply()');
  if (supply.error) facts.supplyError = supply.error;
  else if ((supply.result as string).length === 66) facts.supply = BigInt(supply.result as string);
  else facts.supplyError = `totalSupply() returned ${((supply.result as string).length - 2) / 2} bytes`;
  const name = get(4, 'name()');
  if (name.error) facts.nameError = name.error;
  else {
    try {
      facts.name = decodeName(name.result as string);
    } catch (e) {
      facts.nameError = (e as Error).message;
    }
  }
  return facts;
}

function contractNote(f: ContractFacts, chainOwner: string, block: Block): string {
  if (f.codeSize === 0) return `No contract code at this address (eth_getCode returned 0x at block ${block.number}).`;
  const parts = [`code ${f.codeSize} bytes`];
  if (f.name !== null) parts.push(`name() "${f.name}"`);
  for (const err of [f.ownerError, f.supplyError, f.nameError]) if (err) parts.push(err);
  if (f.owner !== null && f.owner.toLowerCase() !== chainOwner.toLowerCase()) parts.push(`owner() is not ${chainOwner}`);
  return `${parts.join('; ')}.`;
}

/** One contract row, pinned to `block`. */
export async function collectPolygonContract(ctx: ChainContext, c: { address: string; label: string }, chainOwner: string, block: Block): Promise<PolygonContractRow> {
  const query = contractQuery(c.address, block.number);
  const { reply, json } = await postQuery(ctx, query, `contract ${c.address}`);
  const f = parseContractBatch(json, `contract ${c.address}`);
  return {
    address: c.address,
    label: c.label,
    ...(f.owner !== null ? { owner: f.owner } : {}),
    ...(f.supply !== null ? { supply: f.supply.toString() } : {}),
    note: contractNote(f, chainOwner, block),
    query,
    code_size: f.codeSize,
    at: { ledger: Number(block.number), hash: block.hash },
    response_sha256: reply.sha256,
  };
}

export function polygonChainQuery(block: Block): string {
  return `eth_call owner() ${SELECTORS.owner}, totalSupply() ${SELECTORS.totalSupply}, name() ${SELECTORS.name} per address; eth_getCode for code size; every call at block ${block.number} (${block.hash}). Each contract's exact batch is its own query.`;
}

/**
 * Re-runs a contract row at `block` (the current head): the row's batch with only its block tag
 * moved, since a pinned re-run shows no drift by construction and most public nodes prune old state.
 * Compares supply, owner and `code_size`. A report made before `code_size` existed has none: its
 * code size is not compared (the note's prose is not parsed back) and the verdict says so in
 * `unchecked`, rather than guessing a value or failing a report that is otherwise re-runnable.
 */
export async function reverifyPolygonRow(ctx: ChainContext, row: PolygonContractRow, block: Block): Promise<{ changes: Change[]; sha256: string; at: Provenance['at']; unchecked: string[] }> {
  if (!row.query) throw new SupplyReportError('bad_query', `polygon row ${row.address}: no query recorded`);
  const original = parseJsonExact(row.query, 'row query');
  if (!Array.isArray(original) || original.length !== 4) throw new SupplyReportError('bad_query', `polygon row ${row.address}: query is not the 4-call batch`);
  const moved = original.map((call) => {
    if (!isObject(call) || !Array.isArray(call['params']) || call['params'].length !== 2) throw new SupplyReportError('bad_query', `polygon row ${row.address}: unexpected call in query`);
    return { ...call, params: [call['params'][0], `0x${block.number.toString(16)}`] };
  });
  const { reply, json } = await postQuery(ctx, stringifyExact(moved), `contract ${row.address}`);
  const f = parseContractBatch(json, `contract ${row.address}`);
  const changes = [
    ...diffFigures('', row.supply !== undefined ? { supply: row.supply } : {}, f.supply !== null ? { supply: f.supply.toString() } : {}).map((c) => ({ ...c, field: c.field.slice(1) })),
    ...diffText('owner', row.owner, f.owner ?? undefined),
    ...(row.code_size !== undefined ? diffFigures('', { code_size: String(row.code_size) }, { code_size: String(f.codeSize) }).map((c) => ({ ...c, field: c.field.slice(1) })) : []),
  ];
  const unchecked = row.code_size === undefined ? ['code_size (not recorded: the report predates the field)'] : [];
  return { changes, sha256: reply.sha256, at: { ledger: Number(block.number), hash: block.hash }, unchecked };
}

export type { PolygonChain };
