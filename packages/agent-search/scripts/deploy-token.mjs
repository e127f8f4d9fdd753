#!/usr/bin/env node
/**
 * Deploys the committed TestUSDC artifact (contracts/TestUSDC.json) to a chain and mints to
 * holders. For local chains (anvil) and test networks only.
 *
 *   X402_RPC_URL=http://127.0.0.1:8545 DEPLOYER_KEY_FILE=./deployer.key \
 *   node scripts/deploy-token.mjs 0xHolder1=10 0xHolder2=5
 *
 * Amounts are decimal token units (6 decimals). Prints the token address. The key is read from a
 * file and never printed.
 */
import { readFileSync } from 'node:fs';
import { createPublicClient, createWalletClient, defineChain, getAddress, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const artifact = JSON.parse(readFileSync(new URL('../contracts/TestUSDC.json', import.meta.url), 'utf8'));
const rpcUrl = process.env.X402_RPC_URL;
const keyFile = process.env.DEPLOYER_KEY_FILE;
if (!rpcUrl || !keyFile) {
  process.stderr.write('X402_RPC_URL and DEPLOYER_KEY_FILE are required\n');
  process.exit(2);
}
const raw = readFileSync(keyFile, 'utf8').trim();
if (!/^(0x)?[0-9a-fA-F]{64}$/.test(raw)) {
  process.stderr.write('DEPLOYER_KEY_FILE must hold one private key (value not shown)\n');
  process.exit(2);
}
const account = privateKeyToAccount(raw.startsWith('0x') ? raw : `0x${raw}`);
const probe = createPublicClient({ transport: http(rpcUrl) });
const chain = defineChain({ id: await probe.getChainId(), name: 'target', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } });
const pc = createPublicClient({ chain, transport: http(rpcUrl) });
const wallet = createWalletClient({ chain, transport: http(rpcUrl), account });

const toUnits = (v) => {
  const m = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,6}))?$/.exec(v);
  if (!m) throw new Error(`amount must be a decimal with at most 6 fractional digits: ${v}`);
  return BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
};

const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode });
const receipt = await pc.waitForTransactionReceipt({ hash });
if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error('deployment failed');
const token = getAddress(receipt.contractAddress);
for (const arg of process.argv.slice(2)) {
  const [holder, amount] = arg.split('=');
  const h = await wallet.writeContract({ address: token, abi: artifact.abi, functionName: 'mint', args: [getAddress(holder), toUnits(amount ?? '0')] });
  await pc.waitForTransactionReceipt({ hash: h });
}
process.stdout.write(`TestUSDC ${token} on eip155:${chain.id} (EIP-712 "USD Coin" version "2", 6 decimals)\n`);
