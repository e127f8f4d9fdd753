/**
 * @module payment/charge-log
 * A record of every settled charge: one JSON line per charge with its transaction hash.
 *
 * Only public facts are written (route, amounts, addresses, tx hash, nonce). Never the signature:
 * until it is settled an authorization is bearer money, and a log is read by more people than keys are.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export interface ChargeRecord {
  /** Unix seconds when the settlement was confirmed. */
  time: number;
  /** Request path, e.g. "/api/x402/search". */
  route: string;
  /** Search mode when the route is priced by mode. */
  mode?: string;
  /** Published decimal price, e.g. "0.05". */
  price: string;
  /** Base units moved, decimal string (bigint-safe). */
  amount: string;
  asset: string;
  network: string;
  payer: string;
  payTo: string;
  /** Settlement transaction hash. */
  transaction: string;
  /** EIP-3009 nonce of the authorization. */
  nonce: string;
}

export interface ChargeLog {
  record(entry: ChargeRecord): void;
}

/**
 * Appends JSON lines to `path` (created with mode 0600). Synchronous on purpose: the line is on disk
 * before the paid answer leaves, so a crash cannot lose a charge that a caller was told about.
 *
 * @example
 * const log = createFileChargeLog('/var/lib/agent-search/charges.jsonl')
 */
export function createFileChargeLog(path: string): ChargeLog & { path: string } {
  mkdirSync(dirname(path), { recursive: true });
  return {
    path,
    record(entry) {
      appendFileSync(path, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    },
  };
}

/** Keeps records in memory (embedding, tests). */
export function createMemoryChargeLog(): ChargeLog & { records: ChargeRecord[] } {
  const records: ChargeRecord[] = [];
  return { records, record: (e) => void records.push(e) };
}
