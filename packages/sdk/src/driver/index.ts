export * from './types.js';
export * from './define.js';
export * from './registry.js';
export * from './reconcile.js';
export * from './tally.js';
export * from './endpoint.js';
export * from './fee.js';
