/**
 * @module payment/charge-log
 * A record of every settled charge: one JSON line per charge with its transaction hash.
 *
 * Only public facts are written (route, amounts, addresses, tx hash, nonce). Never the signature:
 * until it is settled an authorization is bearer money, and a log is read by more people than keys are.
 */
import { closeSync, fdatasyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
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
  /** Resolves once the record is durable (a file line fdatasync'd, a committed row). */
  record(entry: ChargeRecord): void | Promise<void>;
}

/**
 * Appends JSON lines to `path` (created with mode 0600). Synchronous and fdatasync'd on purpose:
 * the line is on disk before the paid answer leaves, so neither a crash nor a power cut can lose a
 * charge that a caller was told about. A settlement already costs a block's wait; the sync is
 * small beside it.
 *
 * @example
 * const log = createFileChargeLog('/var/lib/agent-search/charges.jsonl')
 */
export function createFileChargeLog(path: string): ChargeLog & { path: string; close(): void } {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'a', 0o600);
  let open = true;
  return {
    path,
    record(entry) {
      if (!open) throw new Error(`charge log ${path} is closed`);
      writeSync(fd, `${JSON.stringify(entry)}\n`);
      fdatasyncSync(fd);
    },
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** Keeps records in memory (embedding, tests). */
export function createMemoryChargeLog(): ChargeLog & { records: ChargeRecord[] } {
  const records: ChargeRecord[] = [];
  return { records, record: (e) => void records.push(e) };
}
