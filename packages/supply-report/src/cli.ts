#!/usr/bin/env node
/**
 * @module cli
 * vault-supply-report run | verify | serve. Progress and retries go to stderr; results to files or
 * stdout. Exit codes: run 0 (written; left-out rows are in the run log), verify 0/1/2 (none / drift /
 * a query failed), 64 usage or config error, 70 unexpected failure.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseConfig } from './config.js';
import { SupplyReportError } from './errors.js';
import { runReport } from './report.js';
import { serveReport } from './serve.js';
import { formatVerdicts, verifyExitCode, verifyReport } from './verify.js';

const USAGE = `usage:
  vault-supply-report run --config FILE --out FILE [--log FILE] [--quiet]
  vault-supply-report verify REPORT [--config FILE] [--json] [--quiet]
  vault-supply-report serve REPORT [--port N] [--host 127.0.0.1]`;

const EXIT_USAGE = 64;
const EXIT_INTERNAL = 70;

const stderr = (line: string) => process.stderr.write(`${line}\n`);

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new SupplyReportError('bad_config', `${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? 'cannot read'}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SupplyReportError('bad_config', `${what} ${path}: not valid JSON (${(e as Error).message})`);
  }
}

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'run') {
    const { values } = parseArgs({ args: rest, options: { config: { type: 'string' }, out: { type: 'string' }, log: { type: 'string' }, quiet: { type: 'boolean' } }, strict: true });
    if (!values.config || !values.out) throw new SupplyReportError('bad_config', `run needs --config and --out\n${USAGE}`);
    const config = parseConfig(readJson(values.config, 'config'));
    const { report, runLog } = await runReport(config, { log: values.quiet ? () => {} : stderr });
    writeAtomic(values.out, `${JSON.stringify(report, null, 2)}\n`);
    const logPath = values.log ?? values.out.replace(/(\.json)?$/, '.runlog.json');
    writeAtomic(logPath, `${JSON.stringify(runLog, null, 2)}\n`);
    stderr(`wrote ${values.out} (${Object.values(runLog.rows).reduce((a, b) => a + b, 0)} rows) and ${logPath} (${runLog.omitted.length} left out)`);
    for (const o of runLog.omitted) stderr(`  left out [${o.chain}] ${o.subject}: ${o.reason}`);
    return 0;
  }
  if (command === 'verify') {
    const { values, positionals } = parseArgs({ args: rest, options: { config: { type: 'string' }, json: { type: 'boolean' }, quiet: { type: 'boolean' } }, allowPositionals: true, strict: true });
    if (positionals.length !== 1) throw new SupplyReportError('bad_config', `verify needs exactly one report file\n${USAGE}`);
    const doc = readJson(positionals[0] as string, 'report');
    const config = values.config ? parseConfig(readJson(values.config, 'config')) : undefined;
    const result = await verifyReport(doc, { ...(config ? { config } : {}), log: values.quiet ? () => {} : stderr });
    process.stdout.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatVerdicts(result)}\n`);
    return verifyExitCode(result);
  }
  if (command === 'serve') {
    const { values, positionals } = parseArgs({ args: rest, options: { port: { type: 'string' }, host: { type: 'string' } }, allowPositionals: true, strict: true });
    if (positionals.length !== 1) throw new SupplyReportError('bad_config', `serve needs exactly one report file\n${USAGE}`);
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new SupplyReportError('bad_config', `--port: expected 0..65535`);
    const text = readFileSync(positionals[0] as string, 'utf8');
    const running = await serveReport(text, { port, ...(values.host ? { host: values.host } : {}) });
    process.stdout.write(`listening on ${running.url} (document ${running.url}/supply-report.json, listing ${running.url}/namespaces)\n`);
    await new Promise<void>((resolve) => {
      const stop = () => void running.close().then(resolve);
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    return 0;
  }
  stderr(USAGE);
  return command === undefined || command === '--help' || command === '-h' ? (command ? 0 : EXIT_USAGE) : EXIT_USAGE;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof SupplyReportError && (e.code === 'bad_config' || e.code === 'bad_report' || e.code === 'unsafe_endpoint')) {
      stderr(`error: ${e.message}`);
      process.exitCode = EXIT_USAGE;
    } else if (e instanceof Error && 'code' in e && typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) {
      stderr(`error: ${e.message}\n${USAGE}`);
      process.exitCode = EXIT_USAGE;
    } else {
      stderr(`error: ${e instanceof Error ? e.message : String(e)}`);
      process.exitCode = EXIT_INTERNAL;
    }
  },
);
