#!/usr/bin/env node
/**
 * Example: a paying client for the agent search API, built directly on @x402/fetch with spend
 * controls. Not a workspace package; run it from packages/agent-search so its imports resolve:
 *
 *   X402_PAYER_KEY_FILE=./payer.key X402_ASSET=0x... X402_MAX_PRICE=0.05 X402_BUDGET=0.10 \
 *   AGENT_SEARCH_URL=http://127.0.0.1:8402 \
 *   node examples/paying-client.mjs "/api/x402/search?q=coffee&mode=deep" /api/x402/places
 *
 * Each argument is one call. The script signs only EIP-3009 payments in the trusted token
 * (X402_ASSET), at most X402_MAX_PRICE per call and X402_BUDGET over all calls, counting every
 * authorization it signs (a signed authorization can be settled by whoever holds it). Anything
 * above is refused before a signature exists. The key is read from a file and never printed.
 *
 * Why spend controls and not `spendControls: false`: @x402 2.27 clients only pay tokens from their
 * table of known USDC deployments unless told otherwise. A test token is not in it. Switching the
 * controls off would also switch off the caps; listing the one trusted token keeps them.
 */
import { readFileSync } from 'node:fs';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';

const DECIMALS = 6;

/** Decimal string → base units, bigint only (no float ever touches money). */
function toUnits(value, name) {
  const m = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/.exec(value ?? '');
  if (!m || (m[2] ?? '').length > DECIMALS) throw new Error(`${name} must be a decimal with at most ${DECIMALS} fractional digits`);
  return BigInt(m[1]) * 10n ** BigInt(DECIMALS) + BigInt((m[2] ?? '').padEnd(DECIMALS, '0') || '0');
}

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
}

const base = (process.env.AGENT_SEARCH_URL ?? 'http://127.0.0.1:8402').replace(/\/+$/, '');
const rawKey = readFileSync(need('X402_PAYER_KEY_FILE'), 'utf8').trim();
if (!/^(0x)?[0-9a-fA-F]{64}$/.test(rawKey)) throw new Error('X402_PAYER_KEY_FILE must hold one private key (value not shown)');
const account = privateKeyToAccount(rawKey.startsWith('0x') ? rawKey : `0x${rawKey}`);
const asset = need('X402_ASSET').toLowerCase();
const network = process.env.X402_NETWORK; // optional: e.g. eip155:31337
const maxPerCall = toUnits(need('X402_MAX_PRICE'), 'X402_MAX_PRICE');
const budget = toUnits(process.env.X402_BUDGET ?? need('X402_MAX_PRICE'), 'X402_BUDGET');
let signed = 0n;

const client = new x402Client();
client.register(network ?? 'eip155:*', new ExactEvmScheme(account));
// The reference controls: only the trusted token, capped per payment in base units.
client.setSpendControls({ allowedAssets: [{ network: network ?? 'eip155:*', asset, maxAmountPerPayment: maxPerCall.toString() }] });
// Our own check right before signing: the cap again, and the running budget.
client.onBeforePaymentCreation(async ({ selectedRequirements: r }) => {
  const amount = BigInt(r.amount);
  if (r.asset.toLowerCase() !== asset) return { abort: true, reason: 'untrusted token' };
  if (amount > maxPerCall) return { abort: true, reason: `price ${r.amount} above the per-call maximum ${maxPerCall}` };
  if (signed + amount > budget) return { abort: true, reason: `price ${r.amount} above the remaining budget ${budget - signed}` };
  signed += amount;
});

const payingFetch = wrapFetchWithPayment(fetch, client);
let failures = 0;
for (const target of process.argv.slice(2)) {
  const url = `${base}${target.startsWith('/') ? '' : '/'}${target}`;
  try {
    const res = await payingFetch(url);
    const header = res.headers.get('PAYMENT-RESPONSE');
    const receipt = header ? decodePaymentResponseHeader(header) : undefined;
    const body = await res.text();
    console.log(JSON.stringify({ url, status: res.status, paid: receipt?.success === true, transaction: receipt?.transaction ?? null, body: body.slice(0, 300) }));
    if (!res.ok) failures += 1;
  } catch (err) {
    failures += 1;
    console.log(JSON.stringify({ url, refused: String(err instanceof Error ? err.message : err).split('\n')[0] }));
  }
}
console.log(JSON.stringify({ payer: account.address, signedBaseUnits: signed.toString(), budgetBaseUnits: budget.toString() }));
process.exitCode = failures === 0 ? 0 : 1;
