#!/usr/bin/env node
/**
 * @module @vault/driver-xrpl/devnet/cli
 * `vault-xrpl-devnet --port P [--network-id N] [--close-ms MS]`: starts the devnet on loopback,
 * prints its URL and faucet, and stops cleanly on SIGINT / SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startXrplDevnet } from './index.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '5005' },
    'network-id': { type: 'string', default: '21337' },
    'close-ms': { type: 'string', default: '1000' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  process.stdout.write('usage: vault-xrpl-devnet [--port 5005] [--network-id 21337] [--close-ms 1000]\n');
  process.exit(0);
}

const num = (name: string, v: string | undefined) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`--${name} must be a non-negative integer\n`);
    process.exit(2);
  }
  return n;
};

const devnet = await startXrplDevnet({
  port: num('port', values.port),
  networkId: num('network-id', values['network-id']),
  closeIntervalMs: num('close-ms', values['close-ms']),
});
process.stdout.write(`vault-xrpl-devnet listening on ${devnet.url} (network id ${devnet.networkId}, chain xrpl:local)\n`);
process.stdout.write(`faucet: POST ${devnet.faucetUrl} {"destination":"r..."} pays 1000 XRP from the genesis account (omit destination for a new funded account and its seed)\n`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`received ${signal}, stopping\n`);
  void devnet.close().then(() => process.exit(0));
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
