/**
 * @module control-plane/errors
 * Execute refusals: -32602 on the wire but HTTP 500, as interface.md says for POST
 * /intent/{id}/execute, with `data` naming the stage and the reason (DESIGN §7).
 */
import { RefusedError, type VaultErrorOptions } from '@vault/sdk';

export const EXECUTE_STAGES = ['params', 'protections', 'prepare', 'signers', 'assemble', 'submit', 'confirm', 'receipts'] as const;
export type ExecuteStage = (typeof EXECUTE_STAGES)[number];

export class ExecuteRefusedError extends RefusedError {
  override name = 'ExecuteRefusedError';
  /** Read by the HTTP edge: execute refusals are 500s. */
  readonly httpStatus = 500;
  readonly stage: ExecuteStage;
  readonly reason: string;
  constructor(stage: ExecuteStage, reason: string, message: string, options: VaultErrorOptions = {}) {
    super(`execute refused at ${stage} (${reason}): ${message}`, { ...options, data: { stage, reason, ...options.data } });
    this.stage = stage;
    this.reason = reason;
  }
}
