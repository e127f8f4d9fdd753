#!/usr/bin/env node
/**
 * @module provision/cli
 * `vault events tail [--url URL] [--after ID] [--types a,b] [--wallet W] [--intent ID]`: follows
 * the control plane's events, one line each (see cli/events-tail.ts).
 *
 * `vault provision --config FILE`: sets up every wallet the file lists (see provision/index.ts),
 * printing one JSON line per wallet on stdout and progress on stderr. Exit 0 when every wallet is
 * provisioned and reconciles, 1 on any failure (the message names the field or the step), 2 on
 * bad usage; `--help` prints the usage and exits 0.
 */
import { VaultError } from '@vault/sdk';
import { parseArgs } from 'node:util';
import { tailEvents, tailFilter } from '../cli/events-tail.js';
import { provision, readProvisionConfig } from './index.js';

const USAGE = `usage:
  vault provision --config FILE
  vault events tail [--url http://127.0.0.1:7331] [--after evt_…] [--types a,b] [--wallet W] [--intent int_…]

FILE (JSON): { "state_dir"?: DIR, "trust_files"?: [FILE…], "drivers"?: [{ "module", "options" }],
               "approvers"?: [{ "id", "public_key", "weight"? }],
               "wallets": [{ "wallet", "chain", "quorum",
                             "members": [{ "address", "curve" | "keystore": DIR, "key"?, "weight", "label"?,
                                           "signer"?: { "url", "token_env" | "token", "label"? } }],
                             "funding": { "kind": "faucet", "url" } | { "kind": "key_env", "env" },
                             "fund_amount"?, "max_fee"?, "lifetime"?, "options"?, "policy"?: PolicySet, "policy_digest"? }] }
Relative paths are relative to FILE. Stop the control plane first, or POST /admin/reload after.

events tail prints one line per event (<id> <time> <type> <subject> key=value…) and resumes
after the last one on reconnect. It unlocks with VAULT_OPERATOR_PASSPHRASE (again after a
restart), or uses VAULT_SESSION_TOKEN; the URL defaults to VAULT_URL or http://127.0.0.1:7331.`;

async function eventsTail(rest: string[]): Promise<number> {
  let values: { url?: string | undefined; after?: string | undefined; types?: string | undefined; wallet?: string | undefined; intent?: string | undefined };
  try {
    ({ values } = parseArgs({ args: rest, options: { url: { type: 'string' }, after: { type: 'string' }, types: { type: 'string' }, wallet: { type: 'string' }, intent: { type: 'string' } }, strict: true }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  process.once('SIGTERM', () => ac.abort());
  await tailEvents({
    url: values.url ?? process.env['VAULT_URL'] ?? 'http://127.0.0.1:7331',
    passphrase: process.env['VAULT_OPERATOR_PASSPHRASE'] || undefined,
    token: process.env['VAULT_SESSION_TOKEN'] || undefined,
    after: values.after,
    filter: tailFilter(values),
    signal: ac.signal,
    out: (line) => process.stdout.write(`${line}\n`),
    note: (line) => process.stderr.write(`${line}\n`),
  });
  return 0;
}

async function main(argv: string[]): Promise<number> {
  // Asking for the usage is not a mistake: stdout and exit 0.
  if (argv.some((a) => a === '--help' || a === '-h') || argv[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [cmd, ...rest] = argv;
  if (cmd === 'events') {
    if (rest[0] !== 'tail') {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    return eventsTail(rest.slice(1));
  }
  let values: { config?: string | undefined };
  try {
    ({ values } = parseArgs({ args: rest, options: { config: { type: 'string' } }, strict: true }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (cmd !== 'provision' || values.config === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const { config, baseDir } = readProvisionConfig(values.config);
  const done = await provision(config, baseDir, (line) => process.stderr.write(`${line}\n`));
  for (const w of done) {
    process.stdout.write(`${JSON.stringify({ wallet: w.wallet, chain: w.chain, address: w.address, changed: w.changed, transactions: w.transactions, written: w.written, reconcile: w.reconcile.clean ? 'clean' : w.reconcile.drift })}\n`);
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    const msg = e instanceof VaultError ? e.shortMessage : e instanceof Error ? e.message : String(e);
    process.stderr.write(`vault: ${msg}\n`);
    process.exitCode = 1;
  },
);
