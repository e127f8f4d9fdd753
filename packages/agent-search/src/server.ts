/**
 * @module server
 * The HTTP server of the paid search API: discovery (/.well-known/x402, /llms.txt), /health, and
 * the six paid GET routes behind the x402 payment gate. Without payment configuration the paid
 * routes answer 503 and the descriptor says enabled false, status ABSENT.
 */
import type { FacilitatorClient } from '@x402/core/server';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Answerer } from './answers/index.js';
import { buildDescriptor, buildLlmsTxt } from './discovery.js';
import { listen, type RunningServer } from './facilitator/http.js';
import type { ChargeLog } from './payment/charge-log.js';
import { PAYMENT_CODES, trimReason } from './payment/errors.js';
import type { AuthorizationStore } from './payment/idempotency.js';
import { createPaymentGate, PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, PAYMENT_SIGNATURE_HEADER, type PaymentEvent } from './payment/middleware.js';
import { validateTerms, type PaymentTerms } from './payment/requirements.js';
import { PAID_PATHS } from './routes.js';

export interface ServerPaymentOptions {
  terms: PaymentTerms;
  facilitator: Pick<FacilitatorClient, 'verify' | 'settle'>;
  store?: AuthorizationStore;
  chargeLog?: ChargeLog;
  onEvent?: (event: PaymentEvent) => void;
}

export interface CreateAppOptions {
  /** Public base URL, e.g. "http://127.0.0.1:8402". */
  baseUrl: string;
  /** Operator named in the descriptor. */
  operator: string;
  service?: string;
  /** The answers (helper B's `createAnswerer(createSampleProvider())`). */
  answerer: Pick<Answerer, 'answer'>;
  /** null/absent: payment not configured (status ABSENT, paid routes 503). */
  payment?: ServerPaymentOptions | null;
  /**
   * An answer that takes longer is abandoned: 504 `answer_timeout`, and the payment gate settles
   * nothing (a non-2xx answer is never charged). Default 10_000 ms.
   */
  answerTimeoutMs?: number;
}

/** Default bound on one answer, ms. */
export const DEFAULT_ANSWER_TIMEOUT_MS = 10_000;

/** The answer, or a 504 result once `ms` have passed (the late answer is dropped). */
async function answerWithin(answerer: Pick<Answerer, 'answer'>, path: (typeof PAID_PATHS)[number], params: URLSearchParams, ms: number): Promise<{ status: number; body: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ status: number; body: unknown }>((resolve) => {
    timer = setTimeout(() => resolve({ status: 504, body: { error: { code: 'answer_timeout', message: `no answer within ${ms} ms; nothing was charged` } } }), ms);
  });
  try {
    return await Promise.race([answerer.answer(path, params), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Status string of the descriptor: payment configured or not. */
export const PAYMENT_STATUS = { live: 'LIVE', absent: 'ABSENT' } as const;

/**
 * @example
 * const app = createApp({ baseUrl, operator: 'Example Ops', answerer: createAnswerer(createSampleProvider()), payment })
 * const res = await app.request('/api/x402/places') // 402
 */
export function createApp(o: CreateAppOptions): Hono {
  const baseUrl = o.baseUrl.replace(/\/+$/, '');
  const answerTimeoutMs = o.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
  if (!Number.isInteger(answerTimeoutMs) || answerTimeoutMs < 1) throw new RangeError('answerTimeoutMs must be a positive integer (ms)');
  const payment = o.payment ? { ...o.payment, terms: validateTerms(o.payment.terms) } : null;
  const enabled = payment !== null;
  const status = enabled ? PAYMENT_STATUS.live : PAYMENT_STATUS.absent;
  const payWith = payment ? `${payment.terms.assetSymbol} (${payment.terms.network}, ${payment.terms.asset})` : 'USDC on a test network (not configured)';
  const discovery = { baseUrl, operator: o.operator, ...(o.service ? { service: o.service } : {}), payWith, enabled, status };

  const app = new Hono();
  // Browsers may call the API directly: the payment headers must be readable cross-origin, and a
  // preflight must allow the headers @x402/fetch sends (it also sets Access-Control-Expose-Headers
  // on its request).
  app.use(
    '*',
    cors({
      origin: '*',
      allowMethods: ['GET', 'OPTIONS'],
      allowHeaders: [PAYMENT_SIGNATURE_HEADER, 'Content-Type', 'Access-Control-Expose-Headers'],
      exposeHeaders: [PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER],
      maxAge: 600,
    }),
  );
  app.get('/health', (c) => c.json({ status: 'ok', payment: status }));
  app.get('/.well-known/x402', (c) => c.json(buildDescriptor(discovery)));
  app.get('/llms.txt', (c) => c.text(buildLlmsTxt(discovery)));

  const gate = payment
    ? createPaymentGate({
        terms: payment.terms,
        facilitator: payment.facilitator,
        baseUrl,
        ...(payment.store ? { store: payment.store } : {}),
        ...(payment.chargeLog ? { chargeLog: payment.chargeLog } : {}),
        ...(payment.onEvent ? { onEvent: payment.onEvent } : {}),
      })
    : null;

  for (const path of PAID_PATHS) {
    if (!gate) {
      app.get(path, (c) =>
        c.json({ error: { code: PAYMENT_CODES.paymentAbsent, message: `payment is not configured on this server (status ${PAYMENT_STATUS.absent}); ${path} is not live` } }, 503),
      );
      continue;
    }
    app.get(path, gate(path), async (c) => {
      const result = await answerWithin(o.answerer, path, new URL(c.req.url).searchParams, answerTimeoutMs);
      return c.json(result.body as object, result.status as ContentfulStatusCode);
    });
  }

  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'no such endpoint; see /llms.txt' } }, 404));
  // A throwing handler becomes a 500 here; the payment gate sees it and charges nothing.
  app.onError((err, c) => {
    process.stderr.write(`agent-search: handler error on ${c.req.path}: ${trimReason('x', err).message}\n`);
    return c.json({ error: { code: 'internal', message: 'internal error; nothing was charged' } }, 500);
  });
  return app;
}

/**
 * Starts the server on host:port (default 127.0.0.1, OS-chosen port). Without `baseUrl` the
 * resource URLs are built from the address actually bound (known only after listening).
 */
export async function startServer(o: Omit<CreateAppOptions, 'baseUrl'> & { baseUrl?: string; host?: string; port?: number }): Promise<RunningServer & { baseUrl: string }> {
  let app: Hono | undefined;
  const running = await listen(
    { fetch: (req: Request) => (app ? app.fetch(req) : new Response('starting', { status: 503 })) },
    o.host ?? '127.0.0.1',
    o.port ?? 0,
  );
  const baseUrl = o.baseUrl ?? running.url;
  app = createApp({ ...o, baseUrl });
  return { ...running, baseUrl };
}

export type { RunningServer };
