/**
 * @module facilitator/local
 * This service's own x402 facilitator, in process: the reference `x402Facilitator` with the
 * reference "exact" EVM scheme (EIP-3009 signature check, on-chain simulation, then
 * transferWithAuthorization sent and awaited), behind a guard that refuses any terms other than the
 * configured ones.
 *
 * Why the guard: a facilitator pays gas. Without it, anyone who can reach the HTTP facilitator could
 * make it settle authorizations for any token on any payee at this operator's expense.
 */
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createPublicClient, createWalletClient, defineChain, getAddress, http, isAddress, nonceManager, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError, trimReason } from '../payment/errors.js';
import { chainIdOf, type EvmNetwork } from '../payment/requirements.js';

export interface LocalFacilitatorOptions {
  /** JSON-RPC URL of the chain. */
  rpcUrl: string;
  /** Key of the account that pays gas for settlements. Held in memory only; never logged. */
  gasPrivateKey: Hex;
  network: EvmNetwork;
  /** The only token this facilitator settles, with its EIP-712 domain. */
  asset: Address;
  assetName: string;
  assetVersion: string;
  /** Payees it settles for. Empty or absent: any payee (only sensible in process, behind our own gate). */
  payTo?: readonly Address[];
  /** Bound on waiting for a settlement receipt, ms. Default 30_000. */
  confirmationTimeoutMs?: number;
  /** viem polling interval, ms (receipt waits). Default 100; a local chain mines instantly. */
  pollingIntervalMs?: number;
}

export interface LocalFacilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
  getSupported(): Promise<SupportedResponse>;
  /** Address that pays gas (public). */
  readonly gasAddress: Address;
  readonly network: EvmNetwork;
}

/**
 * @example
 * const facilitator = createLocalFacilitator({ rpcUrl, gasPrivateKey, network: 'eip155:31337',
 *   asset, assetName: 'USD Coin', assetVersion: '2', payTo: [payee] })
 */
export function createLocalFacilitator(o: LocalFacilitatorOptions): LocalFacilitator {
  if (!/^eip155:[1-9][0-9]*$/.test(o.network)) throw new ConfigError('network', 'must be CAIP-2 "eip155:<chainId>"');
  if (!/^0x[0-9a-fA-F]{64}$/.test(o.gasPrivateKey)) throw new ConfigError('gasPrivateKey', 'must be 0x followed by 64 hex digits (value not shown)');
  if (!isAddress(o.asset, { strict: false })) throw new ConfigError('asset', 'must be a 20-byte address');
  const asset = getAddress(o.asset);
  const payees = new Set((o.payTo ?? []).map((a) => {
    if (!isAddress(a, { strict: false })) throw new ConfigError('payTo', `not an address: ${String(a)}`);
    return a.toLowerCase();
  }));
  let url: URL;
  try {
    url = new URL(o.rpcUrl);
  } catch {
    throw new ConfigError('rpcUrl', 'must be an http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('rpcUrl', 'must be an http(s) URL');

  const chainId = chainIdOf(o.network);
  const chain = defineChain({ id: chainId, name: o.network, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [o.rpcUrl] } } });
  const pollingInterval = o.pollingIntervalMs ?? 100;
  const transport = http(o.rpcUrl, { timeout: 15_000 });
  // nonceManager: concurrent settlements from one gas account must not reuse a transaction nonce.
  const account = privateKeyToAccount(o.gasPrivateKey, { nonceManager });
  const publicClient = createPublicClient({ chain, transport, pollingInterval });
  const walletClient = createWalletClient({ chain, transport, account, pollingInterval });

  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => publicClient.readContract(args as Parameters<typeof publicClient.readContract>[0]),
      verifyTypedData: (args) => publicClient.verifyTypedData(args as Parameters<typeof publicClient.verifyTypedData>[0]),
      writeContract: (args) => walletClient.writeContract({ ...(args as Parameters<typeof walletClient.writeContract>[0]), account, chain }),
      sendTransaction: (args) => walletClient.sendTransaction({ to: args.to, data: args.data, account, chain }),
      waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt({ hash: args.hash, pollingInterval, ...(args.timeout ? { timeout: args.timeout } : {}) }),
      getCode: (args) => publicClient.getCode(args),
    },
    { confirmationTimeoutMs: o.confirmationTimeoutMs ?? 30_000 },
  );
  const inner = new x402Facilitator().register(o.network, new ExactEvmScheme(signer));

  /** Returns why these requirements are not ours to settle, or undefined. */
  const refusal = (r: PaymentRequirements): { reason: string; message: string } | undefined => {
    if (typeof r !== 'object' || r === null) return { reason: 'invalid_requirements', message: 'paymentRequirements must be an object' };
    if (r.scheme !== 'exact') return { reason: 'unsupported_scheme', message: 'only the "exact" scheme is settled here' };
    if (r.network !== o.network) return { reason: 'unsupported_network', message: `only ${o.network} is settled here` };
    if (typeof r.asset !== 'string' || r.asset.toLowerCase() !== asset.toLowerCase()) return { reason: 'unsupported_asset', message: 'this facilitator settles one token only' };
    const extra = r.extra ?? {};
    if (extra.name !== o.assetName || extra.version !== o.assetVersion) return { reason: 'unsupported_asset', message: 'extra.name/version are not the token EIP-712 domain' };
    if (typeof r.amount !== 'string' || !/^[1-9][0-9]{0,77}$/.test(r.amount)) return { reason: 'invalid_requirements', message: 'amount must be a positive integer string' };
    if (payees.size > 0 && (typeof r.payTo !== 'string' || !payees.has(r.payTo.toLowerCase()))) return { reason: 'unsupported_pay_to', message: 'this facilitator does not settle for that payee' };
    return undefined;
  };

  return {
    gasAddress: account.address,
    network: o.network,
    async verify(payload, requirements) {
      const bad = refusal(requirements);
      if (bad) return { isValid: false, invalidReason: bad.reason, invalidMessage: bad.message };
      try {
        return await inner.verify(payload, requirements);
      } catch (err) {
        const t = trimReason('verification_error', err);
        return { isValid: false, invalidReason: t.code, invalidMessage: t.message };
      }
    },
    async settle(payload, requirements) {
      const bad = refusal(requirements);
      if (bad) return { success: false, errorReason: bad.reason, errorMessage: bad.message, transaction: '', network: o.network };
      try {
        return await inner.settle(payload, requirements);
      } catch (err) {
        const t = trimReason('settlement_error', err);
        return { success: false, errorReason: t.code, errorMessage: t.message, transaction: '', network: o.network };
      }
    },
    async getSupported() {
      return inner.getSupported() as SupportedResponse;
    },
  };
}
