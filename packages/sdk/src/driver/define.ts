/**
 * @module driver/define
 * Typed identity helpers for plugin authors. They check the shape at registration time so a
 * malformed plugin fails loudly at start-up, not on the first transaction.
 */
import { DriverRegistryError } from '../errors.js';
import { OPERATION_KINDS } from '../schemas/intent.js';
import { CHAIN_PARAMS_KINDS } from '../schemas/wallet.js';
import type { ChainDriver, ChainSigner } from './types.js';

/** The methods every ChainDriver must have (the rest, `fee` and `defaultMaxFee`, are optional for now). */
export const CHAIN_DRIVER_METHODS = [
  'validateAddress',
  'fetchParams',
  'fetchProtectInputs',
  'buildPayload',
  'assemble',
  'submit',
  'confirm',
  'balances',
  'controlState',
  'payloadFate',
] as const satisfies readonly (keyof ChainDriver)[];

/** The methods every ChainSigner must have. */
export const CHAIN_SIGNER_METHODS = ['deriveAddress', 'signPayload'] as const satisfies readonly (keyof ChainSigner)[];

const CHAIN_RE = /^[a-z0-9][a-z0-9-]*:[A-Za-z0-9._-]{1,64}$/;

function checkCommon(kind: string, p: { name?: unknown; family?: unknown; chains?: unknown }): void {
  const bad = (msg: string): never => {
    throw new DriverRegistryError('invalid_driver', `invalid ${kind} ${String(p.name ?? '(unnamed)')}: ${msg}`);
  };
  if (typeof p.name !== 'string' || p.name === '') bad('name must be a non-empty string');
  if (typeof p.family !== 'string' || p.family === '') bad('family must be a non-empty string');
  if (!Array.isArray(p.chains) || p.chains.length === 0) bad('chains must list at least one chain');
  const chains = p.chains as unknown[];
  for (const c of chains) {
    if (typeof c !== 'string' || !CHAIN_RE.test(c)) bad(`chain ${JSON.stringify(c)} is not "<namespace>:<reference>"`);
  }
  if (new Set(chains).size !== chains.length) bad('chains lists a chain twice');
}

/**
 * Declares a ChainDriver. Returns the same object, frozen, after checking its shape: every
 * required method (`payloadFate` included: it is the double-spend rule) and `fee` with
 * `defaultMaxFee` or neither.
 *
 * @example
 * export const myDriver = defineChainDriver({ name: 'my-driver', family: 'toy', chains: ['toy:devnet'], ... })
 */
export function defineChainDriver<const D extends ChainDriver>(driver: D): D {
  assertChainDriver(driver);
  Object.freeze(driver.chains);
  Object.freeze(driver.operations);
  return Object.freeze(driver);
}

/**
 * Checks a ChainDriver's shape without freezing it, as `defineChainDriver` does: the servers run
 * it on every driver a plugin module creates, so a driver that skipped `defineChainDriver` (and
 * lacks, say, `payloadFate`) is refused at start-up, not on the first second payload.
 *
 * @example
 * assertChainDriver(await plugin.createDriver(options)) // throws DriverRegistryError('invalid_driver') naming what is missing
 */
export function assertChainDriver(driver: ChainDriver): void {
  checkCommon('driver', driver);
  for (const m of CHAIN_DRIVER_METHODS) {
    if (typeof driver[m] !== 'function') {
      throw new DriverRegistryError('invalid_driver', `invalid driver ${driver.name}: ${m} must be a function`);
    }
  }
  // The fee and its default cap come together: a fee with no default would leave a signer without
  // a cap, a default with no fee would be a cap on nothing.
  if ((driver.fee === undefined) !== (driver.defaultMaxFee === undefined)) {
    throw new DriverRegistryError('invalid_driver', `invalid driver ${driver.name}: fee and defaultMaxFee come together (one is missing)`);
  }
  if (driver.fee !== undefined && typeof driver.fee !== 'function') {
    throw new DriverRegistryError('invalid_driver', `invalid driver ${driver.name}: fee, when present, must be a function`);
  }
  if (driver.defaultMaxFee !== undefined && (typeof driver.defaultMaxFee !== 'bigint' || driver.defaultMaxFee < 0n)) {
    throw new DriverRegistryError('invalid_driver', `invalid driver ${driver.name}: defaultMaxFee, when present, must be a bigint >= 0`);
  }
  if (!(CHAIN_PARAMS_KINDS as readonly string[]).includes(driver.paramsKind)) {
    throw new DriverRegistryError('invalid_driver', `invalid driver ${driver.name}: paramsKind must be one of ${CHAIN_PARAMS_KINDS.join(', ')}`);
  }
  for (const op of driver.operations ?? []) {
    if (!(OPERATION_KINDS as readonly string[]).includes(op)) {
      throw new DriverRegistryError('invalid_driver', `invalid driver ${driver.name}: unknown operation ${op}`);
    }
  }
  if (!Array.isArray(driver.operations) || driver.operations.length === 0) {
    throw new DriverRegistryError('invalid_driver', `invalid driver ${driver.name}: operations must list at least one operation`);
  }
}

/**
 * Declares a ChainSigner (the signing half of a plugin, loaded only by signer processes).
 *
 * @example
 * export const mySigner = defineChainSigner({ name: 'my-driver/signer', family: 'toy', chains: ['toy:devnet'], deriveAddress, signPayload })
 */
export function defineChainSigner<const S extends ChainSigner>(signer: S): S {
  assertChainSigner(signer);
  Object.freeze(signer.chains);
  return Object.freeze(signer);
}

/**
 * Checks a ChainSigner's shape without freezing it (see assertChainDriver).
 *
 * @example
 * assertChainSigner(await plugin.createSigner(options))
 */
export function assertChainSigner(signer: ChainSigner): void {
  checkCommon('signer', signer);
  for (const m of CHAIN_SIGNER_METHODS) {
    if (typeof signer[m] !== 'function') {
      throw new DriverRegistryError('invalid_driver', `invalid signer ${signer.name}: ${m} must be a function`);
    }
  }
}
