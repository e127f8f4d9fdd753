/**
 * @module facilitator
 * This service's own x402 facilitator: in process, and over HTTP.
 */
export * from './local.js';
export * from './http.js';
export * from './timing.js';
