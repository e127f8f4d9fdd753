#!/usr/bin/env node
/**
 * @module @vault/driver-evm-safe/devnet/cli
 * `vault-evm-devnet [--port P] [--chain-id N]`: starts anvil with Safe v1.4.1, a 2-of-3 Safe and a
 * test ERC-20, prints the RPC URL and the deployed addresses as JSON on one line, and stops
 * anvil on SIGINT / SIGTERM. The owner and executor keys printed are test keys.
 */
import { parseArgs } from 'node:util';
import { startEvmDevnet } from './index.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8545' },
      'chain-id': { type: 'string', default: '31337' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write('usage: vault-evm-devnet [--port 8545] [--chain-id 31337]\n');
    return;
  }
  const port = Number(values.port);
  const chainId = Number(values['chain-id']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0..65535, got ${values.port}`);
  if (!Number.isInteger(chainId) || chainId < 1) throw new Error(`--chain-id must be a positive integer, got ${values['chain-id']}`);
  const devnet = await startEvmDevnet({ port, chainId });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`vault-evm-devnet: ${signal}, stopping anvil (pid ${devnet.pid})\n`);
    void devnet.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.stdout.write(
    `${JSON.stringify({
      rpcUrl: devnet.rpcUrl,
      chainId: devnet.chainId,
      chain: devnet.chain,
      pid: devnet.pid,
      safeAddresses: devnet.safeAddresses,
      safe: { address: devnet.safe.address, threshold: devnet.safe.threshold, owners: devnet.safe.owners },
      token: devnet.token,
      executor: devnet.accounts.executor,
    })}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`vault-evm-devnet: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
