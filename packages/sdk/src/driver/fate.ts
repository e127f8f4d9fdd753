/**
 * @module driver/fate
 * What became of a payload signers signed: the one reading both services act on before anything
 * that assumes it can no longer land (a signer signing a second payload for the intent, the
 * control plane cancelling or expiring it).
 */
import type { BuiltPayload, ChainDriver, PayloadFate } from './types.js';

/**
 * Asks the ledger, through `driver`, what became of `built`: the driver's `payloadFate` when it
 * has one, else `confirm(chain, digest, built)`, trusting only `dead: true` as dead. Throws when
 * the ledger cannot answer: a caller must never treat "unknown" as dead.
 *
 * @example
 * const { fate } = await readPayloadFate(driver, 'xrpl:testnet', built)
 * if (fate !== 'dead') refuse('an earlier payload may still land')
 */
export async function readPayloadFate(driver: ChainDriver, chain: string, built: BuiltPayload): Promise<PayloadFate> {
  if (typeof driver.payloadFate === 'function') return driver.payloadFate(chain, built);
  const r = await driver.confirm(chain, built.digest, built);
  if (r.status === 'failed' && r.dead) return { fate: 'dead', code: r.code };
  return { fate: r.status === 'confirmed' ? 'applied' : 'live', code: r.status === 'failed' ? r.code : r.status };
}
