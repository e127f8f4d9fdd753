#!/usr/bin/env node
/**
 * @module control-plane/cli
 * `vault-control-plane init --state-dir DIR [--passphrase-file FILE]` and
 * `vault-control-plane serve --state-dir DIR [--port 7331] [--host 127.0.0.1] [--event-heartbeat-seconds 15]`,
 * `vault-control-plane migrate`, and the admin commands of change sets (admin-cli.ts).
 * On PostgreSQL (VAULT_DATABASE_URL, or --database-url-file) serve runs as one of several
 * instances; it exits with 3 after losing the writer's lease, so a supervisor restarts it as a standby.
 * The passphrase comes from VAULT_OPERATOR_PASSPHRASE, a --passphrase-file, or a prompt on a TTY.
 */
import { VaultError } from '@vault/sdk';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { isLoopbackHost } from '../http/app.js';
import { ADMIN_USAGE, adminMain, AdminUsageError } from './admin-cli.js';
import { databaseUrlFrom, migrateControlPlane } from './postgres/log.js';
import { initStateDir, startControlPlane } from './run.js';

/** How long a stopping serve process keeps answering requests already under way, ms. */
const SHUTDOWN_GRACE_MS = 2_000;

const USAGE = `usage:
  vault-control-plane init  --state-dir DIR [--passphrase-file FILE]
  vault-control-plane serve --state-dir DIR [--port 7331] [--host 127.0.0.1] [--event-heartbeat-seconds 15]
                            [--database-url-file FILE] [--instance-id NAME] [--lease-seconds 10] [--advertise-url URL]
  vault-control-plane migrate [--database-url-file FILE]
${ADMIN_USAGE}

The operator passphrase is read from VAULT_OPERATOR_PASSPHRASE, --passphrase-file, or a TTY prompt.
PostgreSQL: the connection string is VAULT_DATABASE_URL, or the first line of --database-url-file
(or VAULT_DATABASE_URL_FILE), a 0600 file. Without one, serve keeps the store in LMDB.`;

function parseArgs(argv: string[]): { cmd: string | undefined; flags: Map<string, string> } {
  const [cmd, ...rest] = argv;
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
    else {
      const v = rest[i + 1];
      if (v === undefined || v.startsWith('--')) throw new Error(`${a} needs a value`);
      flags.set(a.slice(2), v);
      i++;
    }
  }
  return { cmd, flags };
}

async function promptHidden(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const out = rl as unknown as { _writeToOutput?: (s: string) => void };
  process.stderr.write(question);
  out._writeToOutput = () => undefined; // do not echo the passphrase
  return new Promise((resolve) => rl.question('', (answer) => {
    rl.close();
    process.stderr.write('\n');
    resolve(answer);
  }));
}

async function readPassphrase(flags: Map<string, string>): Promise<string> {
  const env = process.env['VAULT_OPERATOR_PASSPHRASE'];
  if (env) return env;
  const file = flags.get('passphrase-file');
  if (file) return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  if (process.stdin.isTTY) {
    const a = await promptHidden('operator passphrase: ');
    const b = await promptHidden('repeat passphrase: ');
    if (a !== b) throw new Error('passphrases differ');
    return a;
  }
  throw new Error('no passphrase: set VAULT_OPERATOR_PASSPHRASE, pass --passphrase-file, or run on a TTY');
}

async function main(argv: string[]): Promise<number> {
  // Asking for the usage is not a mistake: stdout and exit 0.
  if (argv.some((a) => a === '--help' || a === '-h') || argv[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (argv[0] === 'admin' || argv[0] === 'change') {
    try {
      return await adminMain(argv, (text) => process.stdout.write(text));
    } catch (e) {
      if (!(e instanceof AdminUsageError)) throw e;
      process.stderr.write(`vault-control-plane: ${e.message}\n${USAGE}\n`);
      return 2;
    }
  }
  const { cmd, flags } = parseArgs(argv);
  if (cmd === 'migrate') {
    const url = databaseUrlFrom(flags.get('database-url-file'));
    if (!url) throw new Error('migrate needs a database: set VAULT_DATABASE_URL or pass --database-url-file');
    const applied = await migrateControlPlane(url);
    process.stdout.write(applied.length > 0 ? `applied migrations ${applied.join(', ')}\n` : 'the schema is current\n');
    return 0;
  }
  const stateDir = flags.get('state-dir');
  if ((cmd !== 'init' && cmd !== 'serve') || !stateDir) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  if (cmd === 'init') {
    const passphrase = await readPassphrase(flags);
    const r = await initStateDir({ stateDir, passphrase });
    process.stdout.write(`initialised ${r.stateDir}\nreceipt public key ${r.receiptPublicKey}\nedit ${stateDir}/state.json (schema: state.schema.json), then: vault-control-plane serve --state-dir ${stateDir}\n`);
    return 0;
  }
  const host = flags.get('host') ?? '127.0.0.1';
  const port = Number(flags.get('port') ?? '7331');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0..65535');
  const heartbeat = Number(flags.get('event-heartbeat-seconds') ?? '15');
  if (!Number.isFinite(heartbeat) || heartbeat < 1 || heartbeat > 3600) throw new Error('--event-heartbeat-seconds must be 1..3600');
  if (!isLoopbackHost(host)) process.stderr.write(`warning: binding ${host}, which is not loopback; the Host check still refuses non-loopback names\n`);
  const url = databaseUrlFrom(flags.get('database-url-file'));
  const leaseSeconds = Number(flags.get('lease-seconds') ?? '10');
  if (!Number.isInteger(leaseSeconds) || leaseSeconds < 1 || leaseSeconds > 3600) throw new Error('--lease-seconds must be an integer 1..3600');
  let onLost: (reason: string) => void = () => undefined;
  const running = await startControlPlane({
    ...(url
      ? {
          database: {
            url,
            leaseSeconds,
            ...(flags.has('instance-id') ? { instanceId: flags.get('instance-id')! } : {}),
            ...(flags.has('advertise-url') ? { advertiseUrl: flags.get('advertise-url')! } : {}),
            onLeaseLost: (reason: string) => onLost(reason),
          },
        }
      : {}),
    stateDir,
    host,
    port,
    accessLog: true,
    eventHeartbeatSeconds: heartbeat,
    log: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: running.url })}\n`);
  // Requests under way get their answer (a 503 once the lease is lost) before the process exits.
  const stop = () => {
    void running.close(SHUTDOWN_GRACE_MS).then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  onLost = (reason) => {
    process.stderr.write(`vault-control-plane: lost the writer's lease (${reason}); writes stopped; exiting so a supervisor restarts this instance as a standby\n`);
    void running.close(SHUTDOWN_GRACE_MS).then(() => process.exit(3));
  };
  return -1;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (e: unknown) => {
    const msg = e instanceof VaultError ? e.shortMessage : e instanceof Error ? e.message : String(e);
    process.stderr.write(`vault-control-plane: ${msg}\n`);
    process.exitCode = 1;
  },
);
