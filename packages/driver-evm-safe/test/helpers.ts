/**
 * Test helpers: a software secp256k1 SigningKey, raw JSON-RPC reads that never go through the
 * driver (the conformance suite's IndependentReader), and fixtures on the local devnet.
 */
import type { BuiltPayload, ChainDriver, ConfirmResult, IntentRequest, SigningKey, WalletDescriptor } from '@vault/sdk';
import type { ConformanceFixture, IndependentReader, OperationCase } from '@vault/sdk/testing';
import { encodeFunctionData, hexToBytes, keccak256, toBytes, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { compressPublicKey } from '../src/secp256k1.js';

/** A software secp256k1 SigningKey (test only): signs a 32-byte digest, returns r || s || recovery. */
export function secpKey(privateKey: Hex = generatePrivateKey()): SigningKey & { address: Address; privateKey: Hex } {
  const account = privateKeyToAccount(privateKey);
  const publicKey = compressPublicKey(hexToBytes(account.publicKey));
  return {
    curve: 'secp256k1',
    publicKey,
    address: account.address,
    privateKey,
    async sign(message: Uint8Array) {
      if (message.length !== 32) throw new Error('secp256k1 signs 32-byte digests only');
      const sig = await sign({ hash: toHex(message), privateKey });
      const out = new Uint8Array(65);
      out.set(hexToBytes(sig.r, { size: 32 }), 0);
      out.set(hexToBytes(sig.s, { size: 32 }), 32);
      out[64] = sig.yParity ?? Number(sig.v) - 27;
      return out;
    },
  };
}

let rpcId = 0;
/** One raw JSON-RPC call with fetch: no viem client, no driver. */
export async function rawRpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string; data?: unknown } };
  if (body.error) throw Object.assign(new Error(body.error.message), { data: body.error.data });
  return body.result as T;
}

const EXECUTION_SUCCESS = keccak256(toBytes('ExecutionSuccess(bytes32,uint256)'));
const EXECUTION_FAILURE = keccak256(toBytes('ExecutionFailure(bytes32,uint256)'));

/** Reads native balances and Safe executions straight from anvil's JSON-RPC. */
export function independentReader(url: string): IndependentReader {
  return {
    balance: async (address) => BigInt(await rawRpc<string>(url, 'eth_getBalance', [address, 'latest'])),
    async txResult(hash) {
      // Safe v1.4.0+ index the SafeTx hash (topic 1); v1.3.0 writes it as the first data word.
      const logs = await rawRpc<{ topics: string[]; data: string; transactionHash: string }[]>(url, 'eth_getLogs', [
        { fromBlock: '0x0', toBlock: 'latest', topics: [[EXECUTION_SUCCESS, EXECUTION_FAILURE]] },
      ]);
      const h = hash.toLowerCase().replace(/^0x/, '');
      const log = logs.find((l) => (l.topics.length === 2 ? l.topics[1] === `0x${h}` : l.data.slice(2, 66) === h));
      if (!log) return null;
      const receipt = await rawRpc<{ status: string }>(url, 'eth_getTransactionReceipt', [log.transactionHash]);
      const success = log.topics[0] === EXECUTION_SUCCESS && receipt.status === '0x1';
      return { applied: success, code: log.topics[0] === EXECUTION_SUCCESS ? 'ExecutionSuccess' : 'ExecutionFailure' };
    },
  };
}

/** ERC-20 balanceOf through raw eth_call. */
export async function rawTokenBalance(url: string, token: Address, holder: Address): Promise<bigint> {
  const data = encodeFunctionData({
    abi: [{ type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ name: 'a', type: 'address' }], outputs: [{ name: '', type: 'uint256' }] }],
    functionName: 'balanceOf',
    args: [holder],
  });
  return BigInt(await rawRpc<string>(url, 'eth_call', [{ to: token, data }, 'latest']));
}

/** A WalletDescriptor for a Safe and its owner keys (weights 1). */
export function safeWallet(chain: string, safe: Address, keys: readonly { address: Address }[], threshold: number, wallet = `safe-${safe.slice(2, 10)}`): WalletDescriptor {
  return {
    wallet,
    chain,
    control: {
      kind: 'evm_safe',
      safe,
      owners: keys.map((k, i) => ({ address: k.address, curve: 'secp256k1' as const, weight: 1, label: `owner ${i + 1}` })),
      threshold,
    },
  };
}

/** Per-operation conformance cases with their own context (see the SDK). */
export { operationCase as opCase } from '@vault/sdk/testing';

/** Polls `driver.confirm` until it is no longer pending (anvil applies at once; a few polls at most). */
export async function confirmedBy(driver: Pick<ChainDriver, 'confirm'>, chain: string, txHash: string, built: BuiltPayload): Promise<ConfirmResult> {
  for (let i = 0; i < 100; i++) {
    const r = await driver.confirm({ chain, txHash, built });
    if (r.status !== 'pending') return r;
    await new Promise((res) => setTimeout(res, 30));
  }
  throw new Error('still pending');
}
