#!/usr/bin/env node
/**
 * @module @vault/driver-stellar/devnet/cli
 * `vault-stellar-devnet --port 8000 [--host 127.0.0.1] [--passphrase "..."]`: starts the local Horizon
 * devnet, prints its URL, friendbot path and passphrase, and stops cleanly on SIGINT / SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startDevnet } from './index.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8000' },
      host: { type: 'string', default: '127.0.0.1' },
      passphrase: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write('usage: vault-stellar-devnet [--port 8000] [--host 127.0.0.1] [--passphrase "Standalone Network ; February 2017"]\n');
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0..65535, got ${values.port}`);
  const devnet = await startDevnet({ port, host: values.host, ...(values.passphrase ? { networkPassphrase: values.passphrase } : {}) });
  process.stdout.write(`vault-stellar-devnet listening on ${devnet.url}\n`);
  process.stdout.write(`friendbot: ${devnet.url}${devnet.friendbotPath}?addr=<G...>\n`);
  process.stdout.write(`network passphrase: ${devnet.networkPassphrase}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    void devnet.close().then(() => {
      process.stdout.write(`stopped (${signal})\n`);
      process.exit(0);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((e: unknown) => {
  process.stderr.write(`vault-stellar-devnet: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
