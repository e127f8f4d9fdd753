/**
 * A Solana JSON-RPC responder for tests: a real HTTP server on 127.0.0.1 answering from a seeded
 * model, in the shapes a Solana RPC node returns (getTokenSupply, getAccountInfo jsonParsed,
 * getSignaturesForAddress, getTransaction, getSlot). It fails closed: any other method is -32601,
 * and any parameter it does not model (an unknown config key, another encoding, extra positional
 * parameters, a malformed address) is -32602, so a client cannot pass by sending something a real
 * node would read differently. Numbers are written with lossless-json, so u64 values (rentEpoch,
 * Token-2022 extension fields) reach the client as JSON numbers past 2^53, as a real node sends them.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse, stringify, isSafeNumber } from 'lossless-json';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PGnBqCCEVjF9Pb7';
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,90}$/;

export interface SeedMint {
  program: 'spl-token' | 'spl-token-2022';
  supply: bigint;
  decimals: number;
  mintAuthority: string | null;
  freezeAuthority: string | null;
  /** jsonParsed extension objects; bigint values are written as exact JSON numbers. */
  extensions?: unknown[];
}

export interface SeedTx {
  signature: string;
  slot: bigint;
  blockTime: number;
  mint: string;
  /** Sum of the mint's token balances before and after, minor units. */
  pre: bigint;
  post: bigint;
}

export class SolanaModel {
  slot = 250_000_000n;
  blockTime = 1_763_000_000;
  readonly mints = new Map<string, SeedMint>();
  /** Per address, newest first. */
  readonly history = new Map<string, SeedTx[]>();
  private counter = 0;

  addMint(address: string, mint: SeedMint): void {
    this.mints.set(address, mint);
  }

  /** Records a transaction that moves the mint's supply by `delta` (a mint or a burn). */
  change(address: string, delta: bigint): SeedTx {
    const m = this.mints.get(address);
    if (!m) throw new Error(`no mint ${address}`);
    this.slot += 3n;
    this.blockTime += 2;
    this.counter += 1;
    const signature = `${'5'.repeat(20)}${String(this.counter).padStart(8, '1').replace(/0/g, 'z')}${'Kq'.repeat(20)}`;
    const tx: SeedTx = { signature, slot: this.slot, blockTime: this.blockTime, mint: address, pre: m.supply, post: m.supply + delta };
    m.supply += delta;
    this.history.set(address, [tx, ...(this.history.get(address) ?? [])]);
    return tx;
  }
}

/** A SetAuthority on a mint: replaces its mint or freeze authority (null revokes it) in a new slot. */
export function setAuthority(model: SolanaModel, address: string, kind: 'mintAuthority' | 'freezeAuthority', value: string | null): void {
  const m = model.mints.get(address);
  if (!m) throw new Error(`no mint ${address}`);
  model.slot += 3n;
  m[kind] = value;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
const invalid = (msg: string): never => {
  throw new RpcError(-32602, `Invalid params: ${msg}`);
};

function config(p: unknown[], index: number, allowed: readonly string[], maxParams: number): Record<string, unknown> {
  if (p.length > maxParams) invalid(`expected at most ${maxParams} parameters`);
  const c = p[index];
  if (c === undefined) return {};
  if (c === null || typeof c !== 'object' || Array.isArray(c)) return invalid('configuration must be an object');
  for (const k of Object.keys(c)) if (!allowed.includes(k)) invalid(`unknown field \`${k}\``);
  const commitment = (c as Record<string, unknown>)['commitment'];
  if (commitment !== undefined && !['processed', 'confirmed', 'finalized'].includes(commitment as string)) invalid('unknown commitment');
  return c as Record<string, unknown>;
}

function address(v: unknown): string {
  if (typeof v !== 'string' || !BASE58.test(v)) return invalid('Invalid param: WrongSize');
  return v;
}

function num(v: unknown): number | null {
  if (v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'object' && v !== null && 'isLosslessNumber' in v) return Number(String(v));
  return invalid('expected a number');
}

function decimalOf(units: bigint, decimals: number): string {
  if (decimals === 0) return units.toString();
  const s = units.toString().padStart(decimals + 1, '0');
  return `${s.slice(0, -decimals)}.${s.slice(-decimals)}`.replace(/\.?0+$/, '');
}

export function answer(model: SolanaModel, method: unknown, params: unknown): unknown {
  const p = params === undefined ? [] : params;
  if (!Array.isArray(p)) return invalid('params must be an array');
  const ctx = { apiVersion: '2.2.0', slot: model.slot };
  switch (method) {
    case 'getSlot':
      config(p, 0, ['commitment', 'minContextSlot'], 1);
      return model.slot;
    case 'getTokenSupply': {
      config(p, 1, ['commitment'], 2);
      const a = address(p[0]);
      const m = model.mints.get(a);
      if (!m) throw new RpcError(-32602, 'Invalid param: not a Token mint');
      const ui = decimalOf(m.supply, m.decimals);
      return { context: ctx, value: { amount: m.supply.toString(), decimals: m.decimals, uiAmount: Number(ui), uiAmountString: ui } };
    }
    case 'getAccountInfo': {
      const c = config(p, 1, ['commitment', 'encoding', 'dataSlice', 'minContextSlot'], 2);
      if (c['encoding'] !== 'jsonParsed') invalid('this responder models encoding jsonParsed only');
      if (c['dataSlice'] !== undefined) invalid('dataSlice is not modelled');
      const a = address(p[0]);
      const m = model.mints.get(a);
      if (!m) return { context: ctx, value: null };
      const info: Record<string, unknown> = { decimals: m.decimals, freezeAuthority: m.freezeAuthority, isInitialized: true, mintAuthority: m.mintAuthority, supply: m.supply.toString() };
      if (m.extensions) info['extensions'] = m.extensions;
      const space = m.program === 'spl-token' ? 82 : 82 + 83 + 108 * (m.extensions?.length ?? 0);
      return {
        context: ctx,
        value: {
          data: { parsed: { info, type: 'mint' }, program: m.program, space },
          executable: false,
          lamports: 1461600,
          owner: m.program === 'spl-token' ? TOKEN_PROGRAM : TOKEN_2022_PROGRAM,
          rentEpoch: 18446744073709551615n,
          space,
        },
      };
    }
    case 'getSignaturesForAddress': {
      const c = config(p, 1, ['commitment', 'limit', 'before', 'until', 'minContextSlot'], 2);
      const a = address(p[0]);
      const limit = num(c['limit']) ?? 1000;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) invalid('limit must be 1..1000');
      if (c['before'] !== undefined || c['until'] !== undefined) invalid('before/until are not modelled');
      return (model.history.get(a) ?? []).slice(0, limit).map((t) => ({ blockTime: t.blockTime, confirmationStatus: 'finalized', err: null, memo: null, signature: t.signature, slot: t.slot }));
    }
    case 'getTransaction': {
      const c = config(p, 1, ['commitment', 'encoding', 'maxSupportedTransactionVersion'], 2);
      if (c['encoding'] !== undefined && c['encoding'] !== 'json') invalid('this responder models encoding json only');
      if (c['commitment'] === 'processed') invalid('processed is not supported for getTransaction');
      const sig = p[0];
      if (typeof sig !== 'string' || !SIGNATURE.test(sig)) invalid('Invalid param: WrongSize');
      const t = [...model.history.values()].flat().find((x) => x.signature === sig);
      if (!t) return null;
      const bal = (amount: bigint) => [{ accountIndex: 1, mint: t.mint, owner: 'Hold1111111111111111111111111111111111111111', programId: model.mints.get(t.mint)?.program === 'spl-token' ? TOKEN_PROGRAM : TOKEN_2022_PROGRAM, uiTokenAmount: { amount: amount.toString(), decimals: model.mints.get(t.mint)?.decimals ?? 0, uiAmount: Number(amount), uiAmountString: amount.toString() } }];
      return {
        blockTime: t.blockTime,
        meta: { err: null, fee: 5000, innerInstructions: [], logMessages: [], postBalances: [], postTokenBalances: bal(t.post), preBalances: [], preTokenBalances: bal(t.pre), rewards: [], status: { Ok: null } },
        slot: t.slot,
        transaction: { message: { accountKeys: [], header: { numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 1, numRequiredSignatures: 1 }, instructions: [], recentBlockhash: '11111111111111111111111111111111' }, signatures: [t.signature] },
        version: 'legacy',
      };
    }
    default:
      throw new RpcError(-32601, 'Method not found');
  }
}

export interface SolanaResponder {
  url: string;
  model: SolanaModel;
  /** Methods received, in order. */
  calls: string[];
  close(): Promise<void>;
}

export async function startSolanaResponder(model = new SolanaModel()): Promise<SolanaResponder> {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = (body: unknown) => {
        const text = stringify(body) as string;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(text);
      };
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = parse(Buffer.concat(chunks).toString('utf8'), null, (v) => (isSafeNumber(v) ? Number(v) : BigInt(v))) as Record<string, unknown>;
      } catch {
        return reply({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body) || body['jsonrpc'] !== '2.0' || !('id' in body) || typeof body['method'] !== 'string') {
        return reply({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
      }
      calls.push(body['method']);
      try {
        reply({ jsonrpc: '2.0', result: answer(model, body['method'], body['params']), id: body['id'] });
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        reply({ jsonrpc: '2.0', error: { code: e.code, message: e.message }, id: body['id'] });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    model,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
