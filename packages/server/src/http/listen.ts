/**
 * @module http/listen
 * Starts a service on a real socket, loopback by default, and stops it cleanly.
 */
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AddressInfo } from 'node:net';

export interface Listening {
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Binds `app` on host:port (port 0 = any free port). Resolves once the socket is listening. */
export function listen(app: Hono, options: { host?: string; port?: number } = {}): Promise<Listening> {
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 0 }, (info: AddressInfo) => {
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${info.port}`,
        host,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Keep-alive sockets would hold close() open; end them.
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
    server.once('error', reject);
  });
}
