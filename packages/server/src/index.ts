/**
 * @module @vault/server
 * The reference control plane and signer services. Drivers are injected at start-up; core code
 * never imports a driver by name. Entry points: `@vault/server/control-plane`, `@vault/server/signer`.
 */
export * from './http/index.js';
