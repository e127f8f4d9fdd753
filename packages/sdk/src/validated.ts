/**
 * @module validated
 * Values the SDK has validated itself and frozen, so a second pass can be skipped safely: a
 * frozen object cannot change after its check. Used by `normalizeIntent` (normalising a
 * normalised intent returns it as is) and `preparePolicy` (evaluatePolicy and policyDigest take a
 * prepared policy without parsing it again). Nothing outside the SDK can add to the set.
 */
const VALIDATED = new WeakSet<object>();

/**
 * Freezes a JSON-like value and everything in it, and returns it.
 *
 * @example
 * const descriptor = deepFreeze(parsed.descriptor) // nothing in it can change from here on
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** Freezes `value` deeply and records that the SDK validated it. */
export function sealValidated<T extends object>(value: T): Readonly<T> {
  deepFreeze(value);
  VALIDATED.add(value);
  return value;
}

/** True only for an object `sealValidated` returned. */
export function isValidated(value: unknown): boolean {
  return typeof value === 'object' && value !== null && VALIDATED.has(value);
}
