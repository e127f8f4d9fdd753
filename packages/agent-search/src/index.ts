/**
 * @module @vault/agent-search
 * A paid agent search API over x402 v2: the Hono server (discovery, /health, six paid routes),
 * its payment layer (prices in base units, the payment gate with one use per authorization, the
 * charge log), its own EIP-3009 facilitator (in process and over HTTP), a paying client with spend
 * controls, and the answers over a data provider (the embedded sample set by default).
 */
export * from './payment/index.js';
export * from './facilitator/index.js';
export * from './config.js';
export * from './client.js';
export { createApp, startServer, PAYMENT_STATUS, type CreateAppOptions, type ServerPaymentOptions } from './server.js';
export * from './answers/index.js';
export * from './discovery.js';
export * from './routes.js';
