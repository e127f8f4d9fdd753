/**
 * @module report
 * `runReport`: queries every configured subject (concurrently, through one HttpClient that bounds
 * concurrency and rate per endpoint), builds the document, validates it against the SDK schema, and
 * returns it with the run log. A row whose request fails or whose answer cannot be reproduced by one
 * query is left out of the document and listed in `runLog.omitted` with the reason.
 */
import { SupplyReportSchema } from '@vault/sdk';
import { CHAINS, resolveEndpoints, type ChainName, type ReportConfig } from './config.js';
import { SupplyReportError } from './errors.js';
import { HttpClient, type Logger } from './http.js';
import type { PolygonContractRow, SolanaMintRow, StellarIssuerRow, SupplyReport, XrplIssuerRow } from './report-types.js';
import { errorText, type ChainContext, type Omission } from './chains/common.js';
import { collectXrplIssuer, gatewayBalancesQuery } from './chains/xrpl.js';
import { assetsQuery, collectStellarIssuer, groupLocked } from './chains/stellar.js';
import { collectSolanaMint, tokenSupplyQuery } from './chains/solana.js';
import { collectPolygonContract, contractQuery, latestBlock, polygonChainQuery, type Block } from './chains/polygon.js';

export const DEFAULT_RULE =
  'Every row comes from the query it lists, run against public chain state at the ledger, slot or block it records; rows whose query cannot be re-run are left out (see the run log); supply figures are live values that drift and must be re-queried before quoting.';

export interface RunLog {
  startedAt: string;
  finishedAt: string;
  rows: Record<ChainName, number>;
  omitted: Omission[];
  /** Every request made, public endpoint form only (no secrets). */
  requests: { endpoint: string; label: string; status: number | null; attempts: number }[];
  peakConcurrency: number;
}

export interface RunOptions {
  /** Environment for `${VAR}` placeholders in endpoint URLs. Default process.env. */
  env?: Record<string, string | undefined>;
  /** Progress and retry lines (already scrubbed of secrets). Default: silent. */
  log?: Logger;
  /** Clock for derivedAt. */
  now?: () => Date;
  /** Backoff/rate-limit sleep, replaceable in tests. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Runs the report.
 *
 * @example
 * const { report, runLog } = await runReport(parseConfig(json), { log: (l) => process.stderr.write(`${l}\n`) })
 */
export async function runReport(config: ReportConfig, options: RunOptions = {}): Promise<{ report: SupplyReport; runLog: RunLog }> {
  const log = options.log ?? (() => {});
  const startedAt = (options.now ?? (() => new Date()))();
  const endpoints = resolveEndpoints(config, options.env ?? process.env);
  const secrets = CHAINS.flatMap((c) => endpoints[c].secrets);
  const client = new HttpClient(config.http, secrets, log, options.sleep);
  for (const c of CHAINS) client.limit(endpoints[c].publicUrl, endpoints[c].rateLimit);
  const ctx = (chain: ChainName): ChainContext => ({ chain, client, endpoint: endpoints[chain], log });
  const omitted: Omission[] = [];
  const total = config.xrpl.issuers.length + config.stellar.issuers.length + config.solana.mints.length + config.polygon.contracts.length;
  let done = 0;
  const progress = (chain: ChainName, subject: string, ok: boolean) => {
    done += 1;
    log(`[${chain}] ${done}/${total} ${subject} ${ok ? 'ok' : 'left out'}`);
  };
  const attempt = async <T>(chain: ChainName, subject: string, query: string, fn: () => Promise<T>): Promise<T | null> => {
    try {
      const row = await fn();
      progress(chain, subject, true);
      return row;
    } catch (e) {
      omitted.push({ chain, subject, query, reason: errorText(e) });
      log(`[${chain}] left out ${subject}: ${errorText(e)}`);
      progress(chain, subject, false);
      return null;
    }
  };
  log(`supply report: ${total} subjects on ${CHAINS.map((c) => endpoints[c].publicUrl).join(', ')}`);

  const xrplRows = Promise.all(
    config.xrpl.issuers.map((i) => attempt('xrpl', i.account, gatewayBalancesQuery(i.account), () => collectXrplIssuer(ctx('xrpl'), i, config.xrpl.stablecoinCodes, config.xrpl.accountTxLimit))),
  );
  const stellarRows = Promise.all(config.stellar.issuers.map((i) => attempt('stellar', i, assetsQuery(i), () => collectStellarIssuer(ctx('stellar'), i))));
  const solanaRows = Promise.all(
    config.solana.mints.map((m) => attempt('solana', m.mint, tokenSupplyQuery(m.mint, config.solana.commitment), () => collectSolanaMint(ctx('solana'), m, config.solana.commitment, config.solana.historyLimit))),
  );
  const polygon = (async () => {
    let block: Block | null = null;
    if (config.polygon.contracts.length > 0) {
      try {
        block = await latestBlock(ctx('polygon'));
        log(`[polygon] pinned to block ${block.number} (${block.hash})`);
      } catch (e) {
        for (const c of config.polygon.contracts) {
          omitted.push({ chain: 'polygon', subject: c.address, query: contractQuery(c.address, 0n).replace(/"0x0"/g, '"<block>"'), reason: `no block to pin to: ${errorText(e)}` });
          progress('polygon', c.address, false);
        }
      }
    }
    const rows = block ? await Promise.all(config.polygon.contracts.map((c) => attempt('polygon', c.address, contractQuery(c.address, (block as Block).number), () => collectPolygonContract(ctx('polygon'), c, config.polygon.owner, block as Block)))) : [];
    return { block, rows };
  })();

  const [x, s, so, pg] = await Promise.all([xrplRows, stellarRows, solanaRows, polygon]);
  const present = <T>(rows: (T | null)[]): T[] => rows.filter((r): r is T => r !== null);
  const stellarIssuers = await groupLocked(ctx('stellar'), present<StellarIssuerRow>(s), config.stellar.groupLockedMin);

  const report: SupplyReport = {
    derivedAt: startedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    rule: config.rule ?? DEFAULT_RULE,
    chains: {
      xrpl: { endpoint: endpoints.xrpl.publicUrl, issuers: present<XrplIssuerRow>(x) },
      stellar: { endpoint: endpoints.stellar.publicUrl, issuers: stellarIssuers },
      solana: { endpoint: endpoints.solana.publicUrl, mints: present<SolanaMintRow>(so) },
      polygon: {
        endpoint: endpoints.polygon.publicUrl,
        owner: config.polygon.owner,
        contracts: present<PolygonContractRow>(pg.rows),
        query: pg.block ? polygonChainQuery(pg.block) : 'eth_call owner(), totalSupply(), name() per address; eth_getCode for code size (no block was pinned: no contract rows).',
        note: config.polygon.note,
        ...(pg.block ? { at: { ledger: Number(pg.block.number), hash: pg.block.hash } } : {}),
      },
    },
  };
  const checked = SupplyReportSchema.safeParse(report);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new SupplyReportError('bad_report', `the built document does not match the supply report schema at ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const runLog: RunLog = {
    startedAt: report.derivedAt,
    finishedAt: new Date().toISOString(),
    rows: { xrpl: report.chains.xrpl.issuers.length, stellar: report.chains.stellar.issuers.length, solana: report.chains.solana.mints.length, polygon: report.chains.polygon.contracts.length },
    omitted,
    requests: client.requests,
    peakConcurrency: client.peakConcurrency,
  };
  log(`done: ${Object.values(runLog.rows).reduce((a, b) => a + b, 0)} rows, ${omitted.length} left out, ${client.requests.length} requests`);
  return { report, runLog };
}
