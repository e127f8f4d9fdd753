/**
 * @module payment/middleware
 * The x402 v2 payment gate of one paid route, as Hono middleware.
 *
 * Flow per request:
 *  1. Price the call from its path and `mode` (invalid mode → 400, nothing asked or charged).
 *  2. No PAYMENT-SIGNATURE → 402 with PAYMENT-REQUIRED (base64 JSON, one "exact" EIP-3009 option).
 *  3. Decode the header (standard base64 alphabet, as the reference decoder reads it) and check
 *     every member the gate acts on strictly; it must have been quoted for this route and this
 *     price (accepted == our requirements, resource.url == this route's), else 402. Other members
 *     are tolerated (x402 interoperability) and dropped (forwardedPayload).
 *  4. Claim the authorization (network, token, from, nonce) in the idempotency store: a second
 *     request with the same authorization is refused while the first runs and after it settled,
 *     however it was re-encoded.
 *  5. Facilitator /verify of the payload rebuilt from what step 3 checked, against OUR
 *     requirements (never the client's copy).
 *  6. Run the handler. Anything but 2xx (including a throw) → return the handler's answer and
 *     settle nothing; the authorization is not accepted again here (the handler ran once for it).
 *  7. Facilitator /settle. Failure → the answer is withheld and a 402 names the trimmed reason.
 *     Success → PAYMENT-RESPONSE header (base64 JSON receipt) and one charge-log line.
 *
 * Beyond the reference @x402/hono middleware: steps 3 and 4 (it runs the handler twice for two
 * concurrent requests carrying one authorization), trimmed reasons, and the charge log. With a
 * shared store (PostgreSQL, postgres.ts) step 4 holds across processes; a store that does not
 * answer is a 503 and nothing runs.
 */
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { SettleResponse, VerifyResponse } from '@x402/core/types';
import type { MiddlewareHandler } from 'hono';
import type { PaidPath } from '../routes.js';
import { type ChargeLog } from './charge-log.js';
import { PAYMENT_CODES, trimReason } from './errors.js';
import { authorizationKey, MemoryAuthorizationStore, type AuthorizationStore } from './idempotency.js';
import { decimalToBaseUnits, resolvePrice } from './price.js';
import { acceptedMismatch, buildPaymentRequired, buildRequirements, forwardedPayload, readExactEvmPayment, validateTerms, type PaymentTerms } from './requirements.js';

export const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
export const PAYMENT_SIGNATURE_HEADER = 'PAYMENT-SIGNATURE';
export const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';

/** What the gate observed, for the server's log and for tests. Never contains a signature or key. */
export type PaymentEvent =
  | { type: 'refused'; route: string; code: string; message: string }
  | { type: 'handler_failed'; route: string; status: number }
  | { type: 'settled'; route: string; transaction: string; amount: string; payer: string }
  | { type: 'settle_failed'; route: string; code: string; message: string };

export interface PaymentGateOptions {
  terms: PaymentTerms;
  /** In-process (createLocalFacilitator) or HTTP (HTTPFacilitatorClient) facilitator. */
  facilitator: Pick<FacilitatorClient, 'verify' | 'settle'>;
  /** Public base URL of this server, without trailing slash; resource URLs are built from it. */
  baseUrl: string;
  /** Default: a fresh MemoryAuthorizationStore. */
  store?: AuthorizationStore;
  chargeLog?: ChargeLog;
  onEvent?: (event: PaymentEvent) => void;
  /** Unix seconds (tests). */
  now?: () => number;
}

/** Resource URL a payment for `path` (and search `mode`) is bound to. */
export function resourceUrl(baseUrl: string, path: string, mode: string | undefined): string {
  return mode === undefined ? `${baseUrl}${path}` : `${baseUrl}${path}?mode=${mode}`;
}

type Refusal = { code: string; message: string; field?: string };

/**
 * Builds the gate factory: `gate(path)` is the middleware for that paid path.
 *
 * @example
 * const gate = createPaymentGate({ terms, facilitator, baseUrl: 'http://127.0.0.1:8402' })
 * app.get('/api/x402/places', gate('/api/x402/places'), handler)
 */
export function createPaymentGate(options: PaymentGateOptions): (path: PaidPath) => MiddlewareHandler {
  const terms = validateTerms(options.terms);
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const store = options.store ?? new MemoryAuthorizationStore();
  const facilitator = options.facilitator;
  const emit = options.onEvent ?? (() => {});
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));

  return (path: PaidPath): MiddlewareHandler =>
    async (c, next) => {
      // Hono routes HEAD to GET handlers and drops the body: a paid HEAD would charge for an
      // answer nobody receives. Only GET is paid for.
      if (c.req.method !== 'GET') {
        return c.json({ error: { code: 'method_not_allowed', message: `${path} is paid per GET; ${c.req.method} is not served` } }, 405, { allow: 'GET' });
      }
      const params = new URL(c.req.url).searchParams;
      const priced = resolvePrice(path, params);
      if (!priced.ok) return c.json({ error: priced.error }, 400);
      const amount = decimalToBaseUnits(priced.price, terms.decimals);
      const requirements = buildRequirements(terms, amount);
      const url = resourceUrl(baseUrl, path, priced.mode);
      const resource = {
        url,
        description: `${path}${priced.mode ? ` (mode ${priced.mode})` : ''}: ${priced.price} ${terms.assetSymbol} per call`,
        mimeType: 'application/json',
      };

      const refuse = (r: Refusal, extraHeaders: Record<string, string> = {}): Response => {
        emit({ type: 'refused', route: path, code: r.code, message: r.message });
        const required = encodePaymentRequiredHeader(buildPaymentRequired(resource, requirements, r.code));
        const body = { error: { code: r.code, message: r.message, ...(r.field ? { field: r.field } : {}) } };
        return new Response(JSON.stringify(body), {
          status: 402,
          headers: { 'content-type': 'application/json', 'cache-control': 'no-store', [PAYMENT_REQUIRED_HEADER]: required, ...extraHeaders },
        });
      };

      const header = c.req.header(PAYMENT_SIGNATURE_HEADER);
      if (header === undefined || header.length === 0) {
        return refuse({ code: PAYMENT_CODES.paymentRequired, message: `this call costs ${priced.price} ${terms.assetSymbol}; pay with an EIP-3009 authorization in PAYMENT-SIGNATURE` });
      }
      let decoded: unknown;
      try {
        if (header.length > 16_384) throw new Error('too long');
        decoded = decodePaymentSignatureHeader(header);
      } catch {
        return refuse({ code: PAYMENT_CODES.invalidPaymentHeader, message: 'PAYMENT-SIGNATURE is not base64 of a JSON payment payload', field: 'PAYMENT-SIGNATURE' });
      }
      const read = readExactEvmPayment(decoded);
      if ('field' in read) {
        return refuse({ code: PAYMENT_CODES.invalidPaymentHeader, message: `PAYMENT-SIGNATURE field ${read.field} is missing or malformed`, field: read.field });
      }
      // Route and price binding: the client must present the quote of THIS call.
      const mismatch = acceptedMismatch(read.payload.accepted, requirements);
      if (mismatch) {
        return refuse({ code: PAYMENT_CODES.requirementsMismatch, message: `${mismatch} does not match the terms of ${path}${priced.mode ? ` mode ${priced.mode}` : ''} (${priced.price} ${terms.assetSymbol})`, field: mismatch });
      }
      if (read.payload.resource?.url !== url) {
        return refuse({ code: PAYMENT_CODES.resourceMismatch, message: `the payment was quoted for another resource than ${url}`, field: 'resource.url' });
      }
      const auth = read.authorization;
      if (BigInt(auth.value) !== amount) {
        return refuse({ code: PAYMENT_CODES.requirementsMismatch, message: `authorization value ${auth.value} is not the price ${amount.toString()}`, field: 'payload.authorization.value' });
      }
      if (auth.to.toLowerCase() !== terms.payTo.toLowerCase()) {
        return refuse({ code: PAYMENT_CODES.requirementsMismatch, message: 'authorization pays another address than this service', field: 'payload.authorization.to' });
      }

      // What the facilitator sees: only what was checked above, never the client's object.
      const forwarded = forwardedPayload(read, resource, requirements);
      const key = authorizationKey(terms.network, terms.asset, auth.from, auth.nonce);
      const validBefore = BigInt(auth.validBefore);
      const expiresAt = validBefore > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(validBefore);
      let claim: Awaited<ReturnType<AuthorizationStore['claim']>>;
      try {
        claim = await store.claim(key, expiresAt);
      } catch (err) {
        // A shared store that cannot answer: refuse (fail closed) rather than run unguarded.
        emit({ type: 'refused', route: path, code: PAYMENT_CODES.busy, message: `authorization store unavailable: ${trimReason('x', err).message}` });
        return c.json({ error: { code: PAYMENT_CODES.busy, message: 'the payment store did not answer; nothing was charged; retry later' } }, 503);
      }
      if (claim === 'in_progress') return refuse({ code: PAYMENT_CODES.inProgress, message: 'this authorization is being used by another request; sign a new one' });
      if (claim === 'used') return refuse({ code: PAYMENT_CODES.alreadyUsed, message: 'this authorization was already used; sign a new one' });
      if (claim === 'full') {
        emit({ type: 'refused', route: path, code: PAYMENT_CODES.busy, message: 'authorization store full' });
        return c.json({ error: { code: PAYMENT_CODES.busy, message: 'too many payments in flight; retry later' } }, 503);
      }

      // From here on the claim is held: every exit either releases it or marks it used. If the
      // store fails to take either, the key stays claimed there: refused again, never run twice.
      const release = () => settleKey(() => store.release(key), 'release');
      const markUsed = () => settleKey(() => store.markUsed(key), 'mark used');
      let settleAttempted = false;
      try {
        let verified: VerifyResponse;
        try {
          verified = await facilitator.verify(forwarded, requirements);
        } catch (err) {
          await release();
          const reason = failureOf(err);
          if (reason) return refuse(trimReason(reason.code, reason.message, 'verification_failed'));
          emit({ type: 'refused', route: path, code: PAYMENT_CODES.facilitatorUnavailable, message: trimReason('x', err).message });
          return c.json({ error: { code: PAYMENT_CODES.facilitatorUnavailable, message: 'the payment facilitator did not answer; nothing was charged' } }, 502);
        }
        if (!verified.isValid) {
          await release();
          return refuse(trimReason(verified.invalidReason, verified.invalidMessage, 'verification_failed'));
        }

        await next();

        const status = c.res.status;
        if (c.error !== undefined || status < 200 || status > 299) {
          // Nothing is settled. The key stays spent all the same: a duplicate must never run the
          // handler a second time, so a retry needs a freshly signed authorization.
          await markUsed();
          emit({ type: 'handler_failed', route: path, status });
          c.res.headers.set('cache-control', 'no-store');
          return;
        }

        settleAttempted = true;
        let settled: SettleResponse;
        try {
          settled = await facilitator.settle(forwarded, requirements);
        } catch (err) {
          const reason = failureOf(err);
          settled = { success: false, errorReason: reason?.code ?? 'settlement_error', errorMessage: reason?.message ?? trimReason('x', err).message, transaction: '', network: terms.network };
        }
        await markUsed();
        if (!settled.success) {
          const t = trimReason(settled.errorReason, settled.errorMessage, PAYMENT_CODES.settlementFailed);
          emit({ type: 'settle_failed', route: path, code: t.code, message: t.message });
          // A transaction hash here means a transfer was broadcast but not confirmed in time: it may
          // still land. The caller gets the hash to check, not a promise that nothing moved.
          const receipt = encodePaymentResponseHeader({ success: false, errorReason: t.code, transaction: typeof settled.transaction === 'string' ? settled.transaction : '', network: terms.network, payer: auth.from });
          c.res = refuse({ code: PAYMENT_CODES.settlementFailed, message: `${t.code}: ${t.message}` }, { [PAYMENT_RESPONSE_HEADER]: receipt });
          return;
        }
        const receipt: SettleResponse = { success: true, transaction: settled.transaction, network: settled.network ?? terms.network, payer: settled.payer ?? auth.from };
        await writeCharge(options.chargeLog, {
          time: now(),
          route: path,
          ...(priced.mode ? { mode: priced.mode } : {}),
          price: priced.price,
          amount: amount.toString(),
          asset: terms.asset,
          network: terms.network,
          payer: auth.from,
          payTo: terms.payTo,
          transaction: settled.transaction,
          nonce: auth.nonce,
        });
        emit({ type: 'settled', route: path, transaction: settled.transaction, amount: amount.toString(), payer: auth.from });
        c.res.headers.set(PAYMENT_RESPONSE_HEADER, encodePaymentResponseHeader(receipt));
        c.res.headers.set('cache-control', 'no-store');
      } catch (err) {
        // An unexpected fault: fail closed. Before settlement the authorization is still unused
        // on chain, so the claim is released; after, it stays spent.
        if (settleAttempted) await markUsed();
        else await release();
        throw err;
      }
    };
}

/** Awaits a store update; a failure is reported, not thrown (the key then stays claimed: fail closed). */
async function settleKey(update: () => void | Promise<void>, what: string): Promise<void> {
  try {
    await update();
  } catch (err) {
    process.stderr.write(`agent-search: authorization store ${what} failed (${trimReason('x', err).message}); the authorization stays refused\n`);
  }
}

/** Reads `{invalidReason|errorReason, ...Message}` off a facilitator error (VerifyError/SettleError from @x402/core). */
function failureOf(err: unknown): { code: string; message?: string } | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { invalidReason?: unknown; invalidMessage?: unknown; errorReason?: unknown; errorMessage?: unknown };
  if (typeof e.invalidReason === 'string') return { code: e.invalidReason, ...(typeof e.invalidMessage === 'string' ? { message: e.invalidMessage } : {}) };
  if (typeof e.errorReason === 'string') return { code: e.errorReason, ...(typeof e.errorMessage === 'string' ? { message: e.errorMessage } : {}) };
  return undefined;
}

async function writeCharge(log: ChargeLog | undefined, entry: Parameters<ChargeLog['record']>[0]): Promise<void> {
  if (!log) return;
  try {
    await log.record(entry);
  } catch (err) {
    // The transfer has landed; the caller paid and gets the answer. The failure is reported with
    // the public facts needed to reconcile by hand.
    process.stderr.write(`agent-search: charge log write failed (${trimReason('x', err).message}); tx ${entry.transaction} route ${entry.route} amount ${entry.amount}\n`);
  }
}

