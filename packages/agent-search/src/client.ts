/**
 * @module client
 * A paying client for the search API: `fetch` wrapped by @x402/fetch, with spend controls that
 * refuse to sign anything above a per-call maximum or beyond a total budget, and only for the
 * token (and network) the caller trusts.
 *
 * @x402/* 2.27 clients refuse tokens they do not know (their table of default USDC deployments)
 * unless given spend controls. A local or test token is not in that table. Rather than switching
 * the controls off (`spendControls: false`), the trusted token is listed in `allowedAssets` with an
 * atomic per-payment cap, and the budget is enforced in a hook before any signature is made.
 *
 * The budget counts authorizations SIGNED, not charges settled: a signed EIP-3009 authorization
 * can be settled by whoever holds it until it expires, so it is money at risk the moment it leaves.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SpendLimitError } from './payment/errors.js';
import { baseUnitsToDecimal, decimalToBaseUnits } from './payment/price.js';
import type { EvmNetwork } from './payment/requirements.js';

export interface PayingClientOptions {
  /** Payer key. Held in memory by the viem account; never logged. */
  privateKey: Hex;
  /** Most one call may cost, decimal string in token units (e.g. "0.05"). */
  maxPerCall: string;
  /** Most all calls together may cost (signed authorizations), decimal string. */
  totalBudget: string;
  /** The token the caller agrees to pay with. `undefined` = any token (still capped in base units). */
  asset: Address | undefined;
  /** The network the caller agrees to pay on; `undefined` = any eip155 network. */
  network?: EvmNetwork;
  /** Decimals used to turn maxPerCall/totalBudget into base units. Default 6. */
  decimals?: number;
  /** Underlying fetch (tests). */
  fetch?: typeof globalThis.fetch;
}

export interface PayingClient {
  /** fetch that pays when answered 402, within the limits. Rejects with SpendLimitError when a payment would exceed them. */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Base units signed so far (money at risk) and left in the budget. */
  spent(): { signed: bigint; remaining: bigint };
  readonly payer: Address;
}

/**
 * @example
 * const client = createPayingClient({ privateKey, maxPerCall: '0.05', totalBudget: '1', asset })
 * const res = await client.fetch('http://127.0.0.1:8402/api/x402/search?q=tacos')
 * const receipt = readPaymentReceipt(res)
 */
export function createPayingClient(o: PayingClientOptions): PayingClient {
  const decimals = o.decimals ?? 6;
  const cap = decimalToBaseUnits(o.maxPerCall, decimals, 'maxPerCall');
  const budget = decimalToBaseUnits(o.totalBudget, decimals, 'totalBudget');
  const asset = o.asset === undefined ? undefined : getAddress(o.asset);
  const account = privateKeyToAccount(o.privateKey);
  let signed = 0n;

  const client = new x402Client();
  client.register(o.network ?? 'eip155:*', new ExactEvmScheme(account));
  client.setSpendControls({
    // No USD cap on default (real USDC) assets beyond ours: our cap below applies to every asset.
    maxAmountPerPayment: baseUnitsToDecimal(cap, decimals),
    allowedAssets: asset === undefined ? true : [{ network: o.network ?? 'eip155:*', asset, maxAmountPerPayment: cap.toString() }],
  });
  // Policies run before selection: drop options we would never sign.
  client.registerPolicy((_v, reqs) =>
    reqs.filter((r) => {
      if (r.scheme !== 'exact' || !r.network.startsWith('eip155:')) return false;
      if (o.network !== undefined && r.network !== o.network) return false;
      if (asset !== undefined && r.asset.toLowerCase() !== asset.toLowerCase()) return false;
      return /^[0-9]{1,78}$/.test(r.amount) && BigInt(r.amount) <= cap;
    }),
  );
  // The budget: checked and reserved synchronously right before signing, so concurrent calls
  // cannot both pass the check.
  client.onBeforePaymentCreation(async ({ selectedRequirements: r }) => {
    const amount = BigInt(r.amount);
    if (amount > cap) return { abort: true, reason: `spend_limit: ${r.amount} exceeds the per-call maximum ${cap.toString()}` };
    if (signed + amount > budget) return { abort: true, reason: `spend_limit: ${r.amount} exceeds the remaining budget ${(budget - signed).toString()}` };
    signed += amount;
    return undefined;
  });
  const paying = wrapFetchWithPayment(o.fetch ?? globalThis.fetch, client);

  return {
    payer: account.address,
    spent: () => ({ signed, remaining: budget - signed }),
    fetch: async (input, init) => {
      try {
        return await paying(input, init);
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        if (/spend_limit|rejected by spendControls|No payment requirements|which comply/i.test(msg) || /policies/i.test(msg)) {
          throw new SpendLimitError('spend_limit', `refused to pay: ${msg.replace(/^Failed to create payment payload: /, '')}`, { cause: err });
        }
        throw err;
      }
    },
  };
}

/** Decodes the PAYMENT-RESPONSE receipt of a paid answer, or undefined when there is none. */
export function readPaymentReceipt(res: Response): SettleResponse | undefined {
  const h = res.headers.get('PAYMENT-RESPONSE');
  if (!h) return undefined;
  try {
    return decodePaymentResponseHeader(h);
  } catch {
    return undefined;
  }
}
