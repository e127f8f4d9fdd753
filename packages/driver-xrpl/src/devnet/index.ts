/**
 * @module @vault/driver-xrpl/devnet
 * A local XRPL ledger served over HTTP JSON-RPC on loopback, for tests and examples: it keeps
 * accounts, XRP, trust lines, MPTs, signer lists, sequences, fees and ledger closes, verifies every
 * signature with ripple-keypairs, and fails closed on anything it does not model.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatScaled, parseScaled } from '../util.js';
import { XrplLedger, type LedgerOptions } from './ledger.js';
import { DevnetRpc, GENESIS_ADDRESS, GENESIS_SEED } from './server.js';

export { XrplLedger, IOU_SCALE, type AccountState, type LedgerOptions, type MpToken, type MptIssuance, type SignerEntry, type SubmitOutcome, type TrustLine, type TxRecord } from './ledger.js';
export { DevnetRpc, GENESIS_ADDRESS, GENESIS_SEED } from './server.js';
export { engineMessage, engineResultCode } from './results.js';

export interface DevnetOptions extends LedgerOptions {
  /** Port on 127.0.0.1; 0 picks a free one. Default 0. */
  port?: number;
  /** Loopback host. Default 127.0.0.1. */
  host?: string;
  /** Close a ledger every this many ms; 0 closes only on demand (ledger_accept / closeLedger()). Default 1000. */
  closeIntervalMs?: number;
  /** XRP (drops) the faucet pays, and the most a request's `xrpAmount` may ask. Default 1000 XRP. */
  faucetDrops?: bigint;
}

export interface XrplDevnet {
  /** JSON-RPC endpoint, e.g. http://127.0.0.1:5005/ */
  url: string;
  /** Faucet endpoint (POST {destination?, xrpAmount?} -> {account, amount, seed?}), the testnet faucet's shape. */
  faucetUrl: string;
  networkId: number;
  /** The ledger itself: direct, independent reads of state (never through the driver). */
  ledger: XrplLedger;
  /** Closes the open ledger now; returns the index of the closed (now validated) ledger. */
  closeLedger(): number;
  /** Funds an account through the faucet's real Payment; returns its seed when it generated one. */
  faucet(destination?: string, drops?: bigint): { address: string; seed?: string; hash: string };
  /** Conformance reads: XRP balance and the validated result of a transaction. */
  reader(): { balance(address: string): Promise<bigint>; txResult(hash: string): Promise<{ applied: boolean; code: string } | null> };
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;

/**
 * Starts a devnet on loopback.
 *
 * @example
 * const devnet = await startXrplDevnet({ networkId: 21337, closeIntervalMs: 0 })
 * const { address, seed } = devnet.faucet()
 * devnet.closeLedger()
 * await devnet.close()
 */
export async function startXrplDevnet(options: DevnetOptions = {}): Promise<XrplDevnet> {
  const ledger = new XrplLedger(options);
  // Genesis holds the supply the faucet pays from (100 billion XRP, as on a fresh rippled).
  ledger.genesisAccount(GENESIS_ADDRESS, 100_000_000_000_000_000n);
  const rpc = new DevnetRpc(ledger);
  const faucetDrops = options.faucetDrops ?? 1_000_000_000n;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const readBody = (req: IncomingMessage) =>
    new Promise<string | null>((resolve) => {
      let size = 0;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) {
          resolve(null);
          req.destroy();
        } else chunks.push(c);
      });
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', () => resolve(null));
    });

  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') return send(res, 200, { ok: true, ledger_current_index: ledger.currentLedgerIndex });
    if (req.method !== 'POST') return send(res, 405, { error: 'POST JSON-RPC requests to /' });
    const text = await readBody(req);
    if (text === null) return send(res, 413, { error: 'request too large' });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // rippled answers malformed JSON with HTTP 400.
      return send(res, 400, { error: 'Unable to parse request: invalid JSON' });
    }
    try {
      if (path === '/accounts' || path === '/faucet') {
        const dest = typeof body['destination'] === 'string' ? body['destination'] : undefined;
        // `xrpAmount` (decimal XRP, as the public faucets take it) up to the faucet's own amount.
        const asked = body['xrpAmount'];
        let drops = faucetDrops;
        if (asked !== undefined) {
          const parsed = typeof asked === 'string' || typeof asked === 'number' ? parseScaled(String(asked), 6) : null;
          if (parsed === null || parsed <= 0n || parsed > faucetDrops) {
            return send(res, 400, { error: `xrpAmount must be a positive XRP amount of at most ${formatScaled(faucetDrops, 6)}` });
          }
          drops = parsed;
        }
        const out = rpc.faucet(dest, drops);
        return send(res, 'error' in out ? 400 : 200, out);
      }
      return send(res, 200, { result: rpc.handle(body['method'], body['params']) });
    } catch (e) {
      return send(res, 200, { result: { error: 'internal', error_code: 73, error_message: `Internal error: ${(e as Error).message}`, status: 'error' } });
    }
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const interval = options.closeIntervalMs ?? 1000;
  const timer = interval > 0 ? setInterval(() => ledger.close(), interval) : null;
  timer?.unref();

  return {
    url: `http://${host}:${port}/`,
    faucetUrl: `http://${host}:${port}/accounts`,
    networkId: ledger.networkId,
    ledger,
    closeLedger: () => ledger.close(),
    faucet(destination?: string, drops = faucetDrops) {
      const out = rpc.faucet(destination, drops);
      if ('error' in out) throw new Error(String(out['error']));
      const account = out['account'] as { classicAddress: string };
      return { address: account.classicAddress, hash: String(out['transactionHash']), ...(typeof out['seed'] === 'string' ? { seed: out['seed'] } : {}) };
    },
    reader() {
      return {
        balance: async (address: string) => ledger.xrpBalance(address),
        txResult: async (hash: string) => {
          const rec = ledger.tx(hash);
          return rec && rec.validated ? { applied: rec.result === 'tesSUCCESS', code: rec.result } : null;
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (timer) clearInterval(timer);
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
