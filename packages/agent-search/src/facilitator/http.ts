/**
 * @module facilitator/http
 * The facilitator over HTTP, speaking the x402 facilitator protocol the reference
 * `HTTPFacilitatorClient` expects: POST /verify and POST /settle with
 * `{x402Version, paymentPayload, paymentRequirements}`, answered 200 with a VerifyResponse /
 * SettleResponse (a refusal is a 200 with isValid/success false); GET /supported; GET /health.
 * A malformed request is a 400 whose error names the field.
 */
import { serve, type ServerType } from '@hono/node-server';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AddressInfo } from 'node:net';
import { trimReason } from '../payment/errors.js';
import type { LocalFacilitator } from './local.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Hono app of the HTTP facilitator around an in-process one. */
export function createFacilitatorApp(facilitator: Pick<LocalFacilitator, 'verify' | 'settle' | 'getSupported' | 'network' | 'gasAddress'>): Hono {
  const app = new Hono();
  app.use('*', bodyLimit({ maxSize: 64 * 1024, onError: (c) => c.json({ error: { code: 'body_too_large', message: 'request body over 64 KiB' } }, 413) }));

  const readRequest = async (req: Request): Promise<{ payload: PaymentPayload; requirements: PaymentRequirements } | { field: string; message: string }> => {
    let body: unknown;
    try {
      body = await req.json();
    } catch {
      return { field: 'body', message: 'must be JSON' };
    }
    if (!isObj(body)) return { field: 'body', message: 'must be a JSON object' };
    if (body.x402Version !== 2) return { field: 'x402Version', message: 'must be 2' };
    if (!isObj(body.paymentPayload)) return { field: 'paymentPayload', message: 'must be an object' };
    if (!isObj(body.paymentRequirements)) return { field: 'paymentRequirements', message: 'must be an object' };
    return { payload: body.paymentPayload as unknown as PaymentPayload, requirements: body.paymentRequirements as unknown as PaymentRequirements };
  };

  app.post('/verify', async (c) => {
    const r = await readRequest(c.req.raw);
    if ('field' in r) return c.json({ error: { code: 'invalid_request', field: r.field, message: `${r.field} ${r.message}` } }, 400);
    return c.json(await facilitator.verify(r.payload, r.requirements));
  });
  app.post('/settle', async (c) => {
    const r = await readRequest(c.req.raw);
    if ('field' in r) return c.json({ error: { code: 'invalid_request', field: r.field, message: `${r.field} ${r.message}` } }, 400);
    return c.json(await facilitator.settle(r.payload, r.requirements));
  });
  app.get('/supported', async (c) => c.json(await facilitator.getSupported()));
  app.get('/health', (c) => c.json({ status: 'ok', network: facilitator.network, gasAddress: facilitator.gasAddress }));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'no such facilitator endpoint' } }, 404));
  app.onError((err, c) => {
    process.stderr.write(`facilitator: internal error: ${trimReason('x', err).message}\n`);
    return c.json({ error: { code: 'internal', message: 'internal error' } }, 500);
  });
  return app;
}

export interface RunningServer {
  url: string;
  port: number;
  server: ServerType;
  close(): Promise<void>;
}

/** Listens on host:port (default 127.0.0.1, OS-chosen port). */
export async function listen(app: { fetch: (req: Request) => Response | Promise<Response> }, host = '127.0.0.1', port = 0): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => {
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shownHost}:${info.port}`,
        port: info.port,
        server,
        close: () =>
          new Promise<void>((done) => {
            if ('closeAllConnections' in server && typeof server.closeAllConnections === 'function') server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
    server.once('error', reject);
  });
}

/** Starts the HTTP facilitator. */
export function startFacilitatorServer(facilitator: LocalFacilitator, options: { host?: string; port?: number } = {}): Promise<RunningServer> {
  return listen(createFacilitatorApp(facilitator), options.host ?? '127.0.0.1', options.port ?? 0);
}

/** The reference HTTP client for a facilitator URL, with a per-request timeout (ms, default 30_000). */
export function createHttpFacilitatorClient(url: string, timeoutMs = 30_000): HTTPFacilitatorClient {
  return new HTTPFacilitatorClient({ url, timeoutMs });
}
