#!/usr/bin/env node
/**
 * Compiles contracts/TestUSDC.sol with solc-js (the pinned `solc` devDependency) and writes
 * contracts/TestUSDC.json ({contractName, compiler, settings, abi, bytecode, sourceSha256}).
 *
 * Run once when the contract changes: `node scripts/compile-token.mjs` in packages/agent-search.
 * The JSON is committed; tests and the CLI deploy it and never compile (solc-js is slow and large).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const solc = require('solc');
const here = dirname(fileURLToPath(import.meta.url));
const contractsDir = join(here, '..', 'contracts');
const source = readFileSync(join(contractsDir, 'TestUSDC.sol'), 'utf8');
const ozRoot = dirname(require.resolve('@openzeppelin/contracts/package.json'));

// Pinned so the artifact is reproducible: same solc, same settings, same bytecode.
// "cancun" runs on every current anvil and on public test networks.
const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none' },
  outputSelection: { 'TestUSDC.sol': { TestUSDC: ['abi', 'evm.bytecode.object'] } },
};

const input = { language: 'Solidity', sources: { 'TestUSDC.sol': { content: source } }, settings };

/** Resolves `@openzeppelin/contracts/...` imports from the installed package, nothing else. */
function findImports(path) {
  const prefix = '@openzeppelin/contracts/';
  if (!path.startsWith(prefix)) return { error: `import outside @openzeppelin/contracts refused: ${path}` };
  try {
    return { contents: readFileSync(join(ozRoot, path.slice(prefix.length)), 'utf8') };
  } catch (err) {
    return { error: `cannot read ${path}: ${err.message}` };
  }
}

const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
for (const e of output.errors ?? []) process.stderr.write(`${e.formattedMessage}\n`);
if (errors.length > 0) {
  process.stderr.write(`compile-token: ${errors.length} error(s)\n`);
  process.exit(1);
}
const contract = output.contracts['TestUSDC.sol'].TestUSDC;
const ozVersion = JSON.parse(readFileSync(join(ozRoot, 'package.json'), 'utf8')).version;
const artifact = {
  contractName: 'TestUSDC',
  compiler: `solc ${solc.version()}`,
  openzeppelin: ozVersion,
  settings: { optimizer: settings.optimizer, evmVersion: settings.evmVersion, metadata: settings.metadata },
  sourceSha256: createHash('sha256').update(source).digest('hex'),
  eip712: { name: 'USD Coin', version: '2' },
  decimals: 6,
  abi: contract.abi,
  bytecode: `0x${contract.evm.bytecode.object}`,
};
writeFileSync(join(contractsDir, 'TestUSDC.json'), `${JSON.stringify(artifact, null, 2)}\n`);
process.stdout.write(`compile-token: wrote contracts/TestUSDC.json (${(artifact.bytecode.length - 2) / 2} bytes of creation code)\n`);
