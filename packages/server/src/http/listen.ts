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
  /**
   * Stops accepting connections. With `graceMs`, requests under way are answered first (keep-alive
   * sockets are ended as they go idle) and whatever is still open after `graceMs` is cut; without,
   * every connection is ended at once.
   */
  close(graceMs?: number): Promise<void>;
}

/** How often a draining server looks for keep-alive sockets that went idle after their answer. */
const DRAIN_SWEEP_MS = 25;

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
        close: (graceMs = 0) =>
          new Promise<void>((done) => {
            const http = server as unknown as { closeAllConnections(): void; closeIdleConnections(): void };
            let sweep: NodeJS.Timeout | undefined;
            let cut: NodeJS.Timeout | undefined;
            server.close(() => {
              clearInterval(sweep);
              clearTimeout(cut);
              done();
            });
            // Keep-alive sockets would hold close() open; end them. A request under way is cut
            // too unless there is a grace: then its answer goes out first (a client must not be
            // left unsure whether a write it sent was made).
            if (!(graceMs > 0)) return http.closeAllConnections();
            http.closeIdleConnections();
            sweep = setInterval(() => http.closeIdleConnections(), DRAIN_SWEEP_MS);
            cut = setTimeout(() => {
              clearInterval(sweep);
              http.closeAllConnections();
            }, graceMs);
          }),
      });
    });
    server.once('error', reject);
  });
}
