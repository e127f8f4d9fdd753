/**
 * @module serve
 * Publishes a report over HTTP on loopback only (node:http):
 * - GET /supply-report.json: the document, byte for byte as written by `run`;
 * - GET /namespaces: per chain, the issuers / mints / contracts in the report, each with a JSON
 *   Pointer link into the document and a link to its row;
 * - GET /rows/{chain}/{index}: one row;
 * - GET /health.
 * Anything else is 404; methods other than GET and HEAD are 405. The document is schema-checked at
 * start: an invalid report is refused rather than published.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SupplyReportError } from './errors.js';
import { parseReport } from './verify.js';
import type { SupplyReport } from './report-types.js';

export const DOCUMENT_PATH = '/supply-report.json';

export interface NamespaceEntry {
  id: string;
  label?: string;
  members?: string[];
  /** JSON Pointer (RFC 6901) of the row inside the document, as a URL fragment. */
  row: string;
  href: string;
}

export interface NamespacesListing {
  document: string;
  derivedAt: string;
  namespaces: Record<'xrpl' | 'stellar' | 'solana' | 'polygon', { endpoint: string; kind: string; entries: NamespaceEntry[] }>;
}

/** What GET /namespaces answers. */
export function namespacesListing(report: SupplyReport): NamespacesListing {
  const entry = (chain: string, list: string, i: number, id: string, extra: Partial<NamespaceEntry> = {}): NamespaceEntry => ({
    id,
    ...extra,
    row: `${DOCUMENT_PATH}#/chains/${chain}/${list}/${i}`,
    href: `/rows/${chain}/${i}`,
  });
  const c = report.chains;
  return {
    document: DOCUMENT_PATH,
    derivedAt: report.derivedAt,
    namespaces: {
      xrpl: { endpoint: c.xrpl.endpoint, kind: 'issuers', entries: c.xrpl.issuers.map((r, i) => entry('xrpl', 'issuers', i, r.account)) },
      stellar: { endpoint: c.stellar.endpoint, kind: 'issuers', entries: c.stellar.issuers.map((r, i) => entry('stellar', 'issuers', i, r.issuer, r.members ? { members: r.members } : {})) },
      solana: { endpoint: c.solana.endpoint, kind: 'mints', entries: c.solana.mints.map((r, i) => entry('solana', 'mints', i, r.mint, { label: r.label })) },
      polygon: { endpoint: c.polygon.endpoint, kind: 'contracts', entries: c.polygon.contracts.map((r, i) => entry('polygon', 'contracts', i, r.address, { label: r.label })) },
    },
  };
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export interface ServeOptions {
  /** Default 0 (a free port). */
  port?: number;
  /** Loopback only: 127.0.0.1 (default), ::1 or localhost. */
  host?: string;
}

export interface RunningServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * @example
 * const s = await serveReport(readFileSync('report.json', 'utf8'), { port: 8080 })
 * // GET http://127.0.0.1:8080/supply-report.json
 */
export async function serveReport(documentText: string, options: ServeOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) throw new SupplyReportError('unsafe_endpoint', `host ${host}: the report server binds loopback only (127.0.0.1, ::1, localhost)`);
  let doc: unknown;
  try {
    doc = JSON.parse(documentText);
  } catch {
    throw new SupplyReportError('bad_report', 'the report file is not JSON');
  }
  const report = parseReport(doc);
  const listing = JSON.stringify(namespacesListing(report), null, 2);
  const rows: Record<string, unknown[]> = { xrpl: report.chains.xrpl.issuers, stellar: report.chains.stellar.issuers, solana: report.chains.solana.mints, polygon: report.chains.polygon.contracts };

  const server = createServer((req, res) => {
    const send = (status: number, body: string, type = 'application/json; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send(405, JSON.stringify({ error: 'method not allowed' }));
    }
    const path = (req.url ?? '/').split('?')[0] as string;
    if (path === DOCUMENT_PATH) return send(200, documentText);
    if (path === '/namespaces') return send(200, listing);
    if (path === '/health') return send(200, JSON.stringify({ ok: true, derivedAt: report.derivedAt }));
    const m = /^\/rows\/(xrpl|stellar|solana|polygon)\/(0|[1-9][0-9]{0,6})$/.exec(path);
    if (m) {
      const row = rows[m[1] as string]?.[Number(m[2])];
      if (row !== undefined) return send(200, JSON.stringify(row, null, 2));
    }
    return send(404, JSON.stringify({ error: 'not found', see: ['/supply-report.json', '/namespaces'] }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
