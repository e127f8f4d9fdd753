#!/usr/bin/env node
/**
 * @module cli
 * `vault-agent-search serve | facilitator | query`. Configuration comes from flags or env vars
 * (see the README); keys come from files or env vars and are never printed.
 */
import { parseArgs } from 'node:util';
import { createPayingClient, readPaymentReceipt } from './client.js';
import { isLoopbackHost, loadFacilitatorConfig, loadQueryConfig, loadServeConfig, type Flags } from './config.js';
import { createAnswerer, createSampleProvider } from './answers/index.js';
import { createHttpFacilitatorClient, startFacilitatorServer } from './facilitator/http.js';
import { createLocalFacilitator } from './facilitator/local.js';
import { createFileChargeLog } from './payment/charge-log.js';
import { openPostgresPayments, type PostgresPayments } from './payment/postgres.js';
import { AgentSearchError } from './payment/errors.js';
import { startServer, type ServerPaymentOptions } from './server.js';

const USAGE = `usage:
  vault-agent-search serve [--port 8402] [--host 127.0.0.1] [--base-url URL] [--operator NAME]
      [--network eip155:ID --asset 0x.. --pay-to 0x.. [--asset-name "USD Coin"] [--asset-version 2]
       (--facilitator-url URL | --rpc-url URL --gas-key-file F) [--charge-log F | env X402_DATABASE_URL]]
  vault-agent-search facilitator [--port 8403] [--host 127.0.0.1] --rpc-url URL --gas-key-file F
      --network eip155:ID --asset 0x.. --pay-to 0x..[,0x..] [--asset-name ..] [--asset-version ..]
  vault-agent-search query <path> [k=v ...] --key-file F --max-price 0.05 --asset 0x..|any
      [--budget 0.05] [--network eip155:ID] [--base URL]
Every flag has an env var (README). Keys are read from files or env vars, never from flags.`;

const COMMON = {
  host: { type: 'string' },
  port: { type: 'string' },
  network: { type: 'string' },
  asset: { type: 'string' },
  'asset-name': { type: 'string' },
  'asset-version': { type: 'string' },
  'asset-symbol': { type: 'string' },
  decimals: { type: 'string' },
  'pay-to': { type: 'string' },
  'rpc-url': { type: 'string' },
  'gas-key-file': { type: 'string' },
  'confirmation-timeout-ms': { type: 'string' },
  help: { type: 'boolean' },
} as const;

const OPTIONS = {
  serve: {
    ...COMMON,
    'base-url': { type: 'string' },
    operator: { type: 'string' },
    service: { type: 'string' },
    'max-timeout-seconds': { type: 'string' },
    'facilitator-url': { type: 'string' },
    'facilitator-timeout-ms': { type: 'string' },
    'charge-log': { type: 'string' },
  },
  facilitator: COMMON,
  query: {
    'key-file': { type: 'string' },
    'max-price': { type: 'string' },
    budget: { type: 'string' },
    asset: { type: 'string' },
    network: { type: 'string' },
    decimals: { type: 'string' },
    base: { type: 'string' },
    help: { type: 'boolean' },
  },
} as const;

const out = (s: string) => process.stdout.write(`${s}\n`);
const err = (s: string) => process.stderr.write(`${s}\n`);

function onSignals(stop: () => Promise<void>): void {
  const handler = () => {
    void stop().then(() => process.exit(0));
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}

async function serve(flags: Flags): Promise<void> {
  const cfg = loadServeConfig(flags, process.env);
  let payment: ServerPaymentOptions | null = null;
  let shared: PostgresPayments | null = null;
  if (cfg.payment) {
    const f = cfg.payment.facilitator;
    const facilitator =
      f.kind === 'http'
        ? createHttpFacilitatorClient(f.url, f.timeoutMs)
        : createLocalFacilitator({
            rpcUrl: f.rpcUrl,
            gasPrivateKey: f.gasPrivateKey,
            network: cfg.payment.terms.network,
            asset: cfg.payment.terms.asset,
            assetName: cfg.payment.terms.assetName,
            assetVersion: cfg.payment.terms.assetVersion,
            payTo: [cfg.payment.terms.payTo],
            confirmationTimeoutMs: f.confirmationTimeoutMs,
          });
    // With a database, every process shares one record of used authorizations and one charge log.
    shared = cfg.payment.databaseUrl !== undefined ? await openPostgresPayments(cfg.payment.databaseUrl) : null;
    const chargeLog = shared ? shared.chargeLog : cfg.payment.chargeLogPath ? createFileChargeLog(cfg.payment.chargeLogPath) : undefined;
    payment = {
      terms: cfg.payment.terms,
      facilitator,
      ...(shared ? { store: shared.store } : {}),
      ...(chargeLog ? { chargeLog } : {}),
      onEvent: (e) => {
        if (e.type === 'settled') err(`charged ${e.amount} on ${e.route} tx ${e.transaction}`);
        else if (e.type === 'settle_failed') err(`settlement failed on ${e.route}: ${e.code}`);
      },
    };
  }
  const running = await startServer({
    host: cfg.host,
    port: cfg.port,
    ...(cfg.baseUrlExplicit ? { baseUrl: cfg.baseUrl } : {}),
    operator: cfg.operator,
    ...(cfg.service ? { service: cfg.service } : {}),
    answerTimeoutMs: cfg.answerTimeoutMs,
    answerer: createAnswerer(createSampleProvider()),
    payment,
  });
  if (!isLoopbackHost(cfg.host)) err(`warning: listening on ${cfg.host}, which is not loopback; put TLS and rate limiting in front of a public search API`);
  out(`agent-search listening on ${running.url} (payment ${payment ? `LIVE, ${cfg.payment?.facilitator.kind} facilitator${shared ? ', PostgreSQL store' : ''}` : 'ABSENT'})`);
  if (cfg.payment?.facilitator.kind === 'http' && payment) {
    // Not fatal (the facilitator may start later; paid calls answer 502 until it does), but say so.
    const network = cfg.payment.terms.network;
    try {
      const supported = await (payment.facilitator as ReturnType<typeof createHttpFacilitatorClient>).getSupported();
      if (!supported.kinds.some((k) => k.x402Version === 2 && k.scheme === 'exact' && k.network === network)) {
        err(`warning: the facilitator does not list x402 v2 "exact" on ${network}; paid calls will fail`);
      }
    } catch {
      err('warning: the facilitator is not reachable yet; paid calls answer 502 until it is');
    }
  }
  onSignals(async () => {
    await running.close();
    await shared?.close();
  });
}

async function facilitator(flags: Flags): Promise<void> {
  const cfg = loadFacilitatorConfig(flags, process.env);
  const local = createLocalFacilitator({
    rpcUrl: cfg.rpcUrl,
    gasPrivateKey: cfg.gasPrivateKey,
    network: cfg.terms.network,
    asset: cfg.terms.asset,
    assetName: cfg.terms.assetName,
    assetVersion: cfg.terms.assetVersion,
    payTo: cfg.payTo,
    confirmationTimeoutMs: cfg.confirmationTimeoutMs,
  });
  const running = await startFacilitatorServer(local, { host: cfg.host, port: cfg.port });
  out(`facilitator listening on ${running.url} (${cfg.terms.network}, token ${cfg.terms.asset}, gas from ${local.gasAddress})`);
  onSignals(running.close);
}

async function query(flags: Flags, positionals: string[]): Promise<number> {
  const [path, ...pairs] = positionals;
  if (!path || !path.startsWith('/')) {
    err('query: <path> is required, e.g. /api/x402/search');
    return 2;
  }
  const cfg = loadQueryConfig(flags, process.env);
  const url = new URL(path, `${cfg.baseUrl}/`);
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) {
      err(`query: parameter ${JSON.stringify(p)} must be k=v`);
      return 2;
    }
    url.searchParams.append(p.slice(0, i), p.slice(i + 1));
  }
  const client = createPayingClient({
    privateKey: cfg.payerPrivateKey,
    maxPerCall: cfg.maxPrice,
    totalBudget: cfg.budget,
    asset: cfg.asset,
    ...(cfg.network ? { network: cfg.network } : {}),
    decimals: cfg.decimals,
  });
  const res = await client.fetch(url);
  const receipt = readPaymentReceipt(res);
  if (receipt?.success) err(`paid: tx ${receipt.transaction} on ${receipt.network} from ${receipt.payer ?? client.payer}`);
  else if (res.status === 402) err(`not paid: ${res.status}`);
  out(await res.text());
  return res.ok ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'serve' && command !== 'facilitator' && command !== 'query') {
    (command === undefined || command === '--help' || command === 'help' ? out : err)(USAGE);
    return command === undefined || command === '--help' || command === 'help' ? 0 : 2;
  }
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS[command], strict: true, allowPositionals: command === 'query' });
  if (values.help) {
    out(USAGE);
    return 0;
  }
  const flags = values as Flags;
  if (command === 'serve') {
    await serve(flags);
    return -1;
  }
  if (command === 'facilitator') {
    await facilitator(flags);
    return -1;
  }
  return query(flags, positionals);
}

main(process.argv.slice(2)).then(
  (code) => {
    // -1: a server is running; the process lives until a signal.
    if (code >= 0) process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof AgentSearchError) err(`error: ${e.message}`);
    else if (e instanceof Error && (e as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) err(`error: ${e.message}\n${USAGE}`);
    else err(`error: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    process.exitCode = 1;
  },
);
