/**
 * @module payment
 * The x402 v2 payment layer: prices in base units, requirements, the Hono payment gate with its
 * idempotency store, and the charge log.
 */
export * from './errors.js';
export * from './price.js';
export * from './requirements.js';
export * from './idempotency.js';
export * from './charge-log.js';
export * from './middleware.js';
export { migrate, MIGRATIONS, openPostgresPayments, readCharges, type Migration, type PostgresPayments, type PostgresPaymentsOptions, type SqlPool, type SqlQueryable } from './postgres.js';
