/**
 * Shared test fixtures for the payment tests: a real anvil chain (via @vault/driver-evm-safe/devnet)
 * with the committed TestUSDC artifact deployed (never compiled here), funded payers, and a real
 * x402 client signer that turns a PAYMENT-REQUIRED header into a PAYMENT-SIGNATURE header.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { startEvmDevnet, type DevnetAccount, type EvmDevnet } from '@vault/driver-evm-safe/devnet';
import { createWalletClient, getAddress, http, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createLocalFacilitator, type LocalFacilitator } from '../src/facilitator/local.js';
import type { PaymentTerms } from '../src/payment/requirements.js';

export const artifact = JSON.parse(readFileSync(new URL('../contracts/TestUSDC.json', import.meta.url), 'utf8')) as { abi: Abi; bytecode: Hex; eip712: { name: string; version: string }; decimals: number };

export interface TestChain {
  devnet: EvmDevnet;
  token: Address;
  payer: DevnetAccount;
  payer2: DevnetAccount;
  payee: DevnetAccount;
  gas: DevnetAccount;
  network: `eip155:${number}`;
  terms: PaymentTerms;
  balanceOf(a: Address): Promise<bigint>;
  transfer(from: DevnetAccount, to: Address, amount: bigint): Promise<void>;
  mint(to: Address, amount: bigint): Promise<void>;
  blockNumber(): Promise<bigint>;
  /** Token Transfer logs from `fromBlock` on (to count settlements independently of the server). */
  transfersSince(fromBlock: bigint): Promise<{ from: Address; to: Address; value: bigint; tx: Hex }[]>;
  stop(): Promise<void>;
}

/** Starts anvil, deploys TestUSDC from the committed artifact, mints 10 USDC to two payers. */
export async function startTestChain(): Promise<TestChain> {
  const devnet = await startEvmDevnet({ pollingInterval: 50 });
  try {
    const [payer, payer2, payee, gas] = devnet.accounts.funded as [DevnetAccount, DevnetAccount, DevnetAccount, DevnetAccount];
    const deployer = devnet.accounts.deployer;
    const pc = devnet.publicClient;
    const wallet = (acc: DevnetAccount) => createWalletClient({ chain: pc.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(acc.privateKey) });
    const deployHash = await wallet(deployer).deployContract({ abi: artifact.abi, bytecode: artifact.bytecode });
    const receipt = await pc.waitForTransactionReceipt({ hash: deployHash, pollingInterval: 50 });
    if (!receipt.contractAddress) throw new Error('TestUSDC deployment created no contract');
    const token = getAddress(receipt.contractAddress);
    const write = async (acc: DevnetAccount, functionName: string, args: unknown[]) => {
      const hash = await wallet(acc).writeContract({ address: token, abi: artifact.abi, functionName, args });
      const r = await pc.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      if (r.status !== 'success') throw new Error(`${functionName} reverted`);
    };
    const mint = (to: Address, amount: bigint) => write(deployer, 'mint', [to, amount]);
    await mint(payer.address, 10_000_000n);
    await mint(payer2.address, 10_000_000n);
    const network = `eip155:${devnet.chainId}` as const;
    return {
      devnet,
      token,
      payer,
      payer2,
      payee,
      gas,
      network,
      terms: { network, asset: token, assetName: 'USD Coin', assetVersion: '2', assetSymbol: 'USDC', decimals: 6, payTo: payee.address, maxTimeoutSeconds: 120 },
      balanceOf: async (a) => (await pc.readContract({ address: token, abi: artifact.abi, functionName: 'balanceOf', args: [a] })) as bigint,
      transfer: (from, to, amount) => write(from, 'transfer', [to, amount]),
      mint,
      // cacheTime 0: viem caches getBlockNumber for its polling interval, and a stale number made
      // a transfer mined just now invisible to one test and counted by the next.
      blockNumber: () => pc.getBlockNumber({ cacheTime: 0 }),
      transfersSince: async (fromBlock) => {
        if (fromBlock > (await pc.getBlockNumber({ cacheTime: 0 }))) return [];
        const logs = await pc.getContractEvents({ address: token, abi: artifact.abi, eventName: 'Transfer', fromBlock, toBlock: 'latest' });
        return logs.map((l) => {
          const a = l.args as { from: Address; to: Address; value: bigint };
          return { from: a.from, to: a.to, value: a.value, tx: l.transactionHash as Hex };
        });
      },
      stop: () => devnet.stop(),
    };
  } catch (err) {
    await devnet.stop();
    throw err;
  }
}

/** The real x402 client signing path (EIP-3009 via @x402/evm), without spend controls (tests only). */
export async function signFor(paymentRequiredHeader: string, payerKey: Hex): Promise<{ header: string; payload: PaymentPayload; required: PaymentRequired }> {
  const required = decodePaymentRequiredHeader(paymentRequiredHeader);
  const client = new x402Client();
  client.register('eip155:*', new ExactEvmScheme(privateKeyToAccount(payerKey)));
  client.setSpendControls(false);
  const payload = await client.createPaymentPayload(required);
  return { header: encodePaymentSignatureHeader(payload), payload, required };
}

/** Re-encodes a payload after a change (tampering tests). */
export function encodePayload(payload: PaymentPayload): string {
  return encodePaymentSignatureHeader(payload);
}

/** Asks `url` for its price and signs it: the PAYMENT-SIGNATURE header for exactly that quote. */
export async function quoteAndSign(url: string, payerKey: Hex): Promise<{ header: string; payload: PaymentPayload; required: PaymentRequired }> {
  const res = await fetch(url);
  const h = res.headers.get('PAYMENT-REQUIRED');
  await res.body?.cancel();
  if (res.status !== 402 || !h) throw new Error(`expected 402 with PAYMENT-REQUIRED from ${url}, got ${res.status}`);
  return signFor(h, payerKey);
}

/**
 * The in-process facilitator every payment test uses: this chain's token and network, gas paid by
 * `chain.gas`, settling only for `chain.payee` unless `payTo` says otherwise.
 */
export function localFacilitatorFor(chain: TestChain, o: { pollingIntervalMs?: number; payTo?: readonly Address[] } = {}): LocalFacilitator {
  return createLocalFacilitator({
    rpcUrl: chain.devnet.rpcUrl,
    gasPrivateKey: chain.gas.privateKey,
    network: chain.network,
    asset: chain.token,
    assetName: artifact.eip712.name,
    assetVersion: artifact.eip712.version,
    payTo: o.payTo ?? [chain.payee.address],
    pollingIntervalMs: o.pollingIntervalMs ?? 50,
  });
}

/** A `vault-agent-search` process a test started, with what it printed so far. */
export interface CliProcess {
  child: ChildProcess;
  out: () => string;
  err: () => string;
}

/** Starts the built CLI with only PATH and `env` in its environment; the child joins `children` for the test's teardown. */
export function runCli(cli: string, args: string[], env: Record<string, string>, children: ChildProcess[]): CliProcess {
  const child = spawn(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  return { child, out: () => out, err: () => err };
}

/** Waits for "listening on <url>" and returns the URL. */
export async function listening(p: CliProcess, timeoutMs = 15_000): Promise<string> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    const m = /listening on (http:\/\/\S+)/.exec(p.out());
    if (m) return m[1]!;
    if (p.child.exitCode !== null) throw new Error(`exited ${p.child.exitCode}: ${p.err()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no "listening" line: ${p.out()} ${p.err()}`);
}
