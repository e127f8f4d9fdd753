/**
 * @module verify
 * `verifyReport`: re-runs every row's query and shows, row by row, what drifted and by exactly how
 * much. Exit codes (see `verifyExitCode`): 0 nothing drifted and every query answered; 1 at least one
 * row drifted; 2 at least one query failed (this wins over 1).
 */
import { SupplyReportSchema } from '@vault/sdk';
import { CHAINS, DEFAULT_HTTP, resolveEndpoints, type ChainName, type HttpConfig, type ReportConfig } from './config.js';
import { SupplyReportError } from './errors.js';
import { HttpClient, type Logger } from './http.js';
import { resolveEndpoint } from './redact.js';
import type { SupplyReport } from './report-types.js';
import { errorText, type Change, type ChainContext, type Endpoint, type Provenance } from './chains/common.js';
import { reverifyXrplRow } from './chains/xrpl.js';
import { reverifyStellarRow } from './chains/stellar.js';
import { reverifySolanaRow } from './chains/solana.js';
import { latestBlock, reverifyPolygonRow, type Block } from './chains/polygon.js';

export interface RowVerdict {
  chain: ChainName;
  subject: string;
  query: string;
  status: 'unchanged' | 'drift' | 'failed';
  changes: Change[];
  error?: string;
  /** The reply's SHA-256 differs from the recorded one (informational: ledger indexes move too). */
  responseChanged: boolean;
  /** Fields this row could not be compared on, with why (e.g. a field an older report lacks). */
  unchecked?: string[];
  before?: Provenance['at'];
  now?: Provenance['at'];
}

export interface VerifyResult {
  checkedAt: string;
  derivedAt: string;
  rows: RowVerdict[];
  unchanged: number;
  drifted: number;
  failed: number;
}

export interface VerifyOptions {
  /** Endpoints with their secrets; each must resolve to the endpoint the report names. Default: the report's own endpoints. */
  config?: ReportConfig;
  env?: Record<string, string | undefined>;
  http?: Partial<HttpConfig>;
  log?: Logger;
  sleep?: (ms: number) => Promise<void>;
}

/** Parses and schema-checks a report document; errors name the first bad field. */
export function parseReport(doc: unknown): SupplyReport {
  const r = SupplyReportSchema.safeParse(doc);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new SupplyReportError('bad_report', `not a supply report: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return r.data;
}

/**
 * @example
 * const result = await verifyReport(JSON.parse(readFileSync('report.json', 'utf8')))
 * process.exitCode = verifyExitCode(result)
 */
export async function verifyReport(doc: unknown, options: VerifyOptions = {}): Promise<VerifyResult> {
  const report = parseReport(doc);
  const log = options.log ?? (() => {});
  const endpoints = {} as Record<ChainName, Endpoint & { secrets: string[] }>;
  const resolved = options.config ? resolveEndpoints(options.config, options.env ?? process.env) : null;
  for (const c of CHAINS) {
    const named = report.chains[c].endpoint;
    if (resolved) {
      if (resolved[c].publicUrl !== named) throw new SupplyReportError('bad_config', `${c}.endpoint: resolves to ${resolved[c].publicUrl} but the report was made against ${named}`);
      endpoints[c] = resolved[c];
    } else endpoints[c] = resolveEndpoint(named, undefined, {}, `report chains.${c}.endpoint`);
  }
  const http: HttpConfig = { ...(options.config?.http ?? DEFAULT_HTTP), ...options.http };
  const client = new HttpClient(http, CHAINS.flatMap((c) => endpoints[c].secrets), log, options.sleep);
  if (resolved) for (const c of CHAINS) client.limit(resolved[c].publicUrl, resolved[c].rateLimit);
  const ctx = (chain: ChainName): ChainContext => ({ chain, client, endpoint: endpoints[chain], log });

  const check = async (chain: ChainName, subject: string, query: string, sha: string | undefined, before: Provenance['at'], fn: () => Promise<{ changes: Change[]; sha256: string; at: Provenance['at']; unchecked?: string[] }>): Promise<RowVerdict> => {
    try {
      const { changes, sha256, at, unchecked } = await fn();
      const v: RowVerdict = {
        chain,
        subject,
        query,
        status: changes.length ? 'drift' : 'unchanged',
        changes,
        responseChanged: sha !== undefined && sha !== sha256,
        ...(unchecked && unchecked.length ? { unchecked } : {}),
        ...(before ? { before } : {}),
        ...(at ? { now: at } : {}),
      };
      log(`[${chain}] ${subject}: ${v.status}${changes.length ? ` (${changes.length} field${changes.length > 1 ? 's' : ''})` : ''}${v.unchecked ? `; not compared: ${v.unchecked.join(', ')}` : ''}`);
      return v;
    } catch (e) {
      log(`[${chain}] ${subject}: query failed: ${errorText(e)}`);
      return { chain, subject, query, status: 'failed', changes: [], error: errorText(e), responseChanged: false, ...(before ? { before } : {}) };
    }
  };

  const ch = report.chains;
  const jobs: Promise<RowVerdict>[] = [
    ...ch.xrpl.issuers.map((r) => check('xrpl', r.account, r.query, r.response_sha256, r.at, () => reverifyXrplRow(ctx('xrpl'), r))),
    ...ch.stellar.issuers.map((r) => check('stellar', r.issuer, r.query, r.response_sha256, r.at, () => reverifyStellarRow(ctx('stellar'), r))),
    ...ch.solana.mints.map((r) => check('solana', r.mint, r.query, r.response_sha256, r.at, () => reverifySolanaRow(ctx('solana'), r))),
  ];
  if (ch.polygon.contracts.length > 0) {
    let block: Block | null = null;
    let blockError = '';
    try {
      block = await latestBlock(ctx('polygon'));
    } catch (e) {
      blockError = errorText(e);
    }
    for (const r of ch.polygon.contracts) {
      const q = r.query ?? ch.polygon.query;
      jobs.push(
        block
          ? check('polygon', r.address, q, r.response_sha256, r.at, () => reverifyPolygonRow(ctx('polygon'), r, block as Block))
          : Promise.resolve({ chain: 'polygon', subject: r.address, query: q, status: 'failed', changes: [], error: `no current block: ${blockError}`, responseChanged: false } as RowVerdict),
      );
    }
  }
  const rows = await Promise.all(jobs);
  return {
    checkedAt: new Date().toISOString(),
    derivedAt: report.derivedAt,
    rows,
    unchanged: rows.filter((r) => r.status === 'unchanged').length,
    drifted: rows.filter((r) => r.status === 'drift').length,
    failed: rows.filter((r) => r.status === 'failed').length,
  };
}

/** 0: no drift and no failure; 1: drift; 2: a query failed (takes precedence). */
export function verifyExitCode(result: VerifyResult): 0 | 1 | 2 {
  return result.failed > 0 ? 2 : result.drifted > 0 ? 1 : 0;
}

/** Human-readable table: one line per row, one indented line per changed field. */
export function formatVerdicts(result: VerifyResult): string {
  const lines = [`report derived ${result.derivedAt}, checked ${result.checkedAt}`];
  for (const r of result.rows) {
    const where = r.now ? ` @${r.now.ledger}` : '';
    lines.push(`${r.status.toUpperCase().padEnd(9)} ${r.chain.padEnd(7)} ${r.subject}${where}${r.error ? `: ${r.error}` : ''}`);
    for (const c of r.changes) lines.push(`          ${c.field}: ${c.before ?? '(absent)'} -> ${c.now ?? '(absent)'}${c.delta ? ` (${c.delta})` : ''}`);
    for (const u of r.unchecked ?? []) lines.push(`          not compared: ${u}`);
  }
  lines.push(`${result.unchanged} unchanged, ${result.drifted} drifted, ${result.failed} failed`);
  return lines.join('\n');
}
