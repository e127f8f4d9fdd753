/**
 * @module fate
 * What became of a Safe nonce, read from the Safe's own record: the block where the nonce was
 * consumed and the execution event for the payload's safeTxHash in that block. It backs
 * `payloadFate` (at the chain's finalized head) and `confirm` when it has no receipt of its own.
 *
 * Why a block and not a window of logs: "no event for this safeTxHash" only proves another SafeTx
 * took the nonce when the search certainly covers the execution that took it. The Safe's
 * `nonce()` at two adjacent blocks says exactly where that was (the nonce only moves forward, by
 * one per execTransaction), so the proof is one eth_getLogs over one block, whatever the age of
 * the payload and whatever range limit the RPC has. Every state read is pinned to a block number
 * at or below the head the caller chose, so a later block cannot change the answer mid-search.
 */
import { TransportError } from '@vault/sdk';
import { toEventSelector, type Hex } from 'viem';

export const EXECUTION_SUCCESS = toEventSelector('ExecutionSuccess(bytes32,uint256)');
export const EXECUTION_FAILURE = toEventSelector('ExecutionFailure(bytes32,uint256)');

/** One ExecutionSuccess / ExecutionFailure log of the Safe, as eth_getLogs returns it. */
export interface ExecutionLog {
  topics: readonly Hex[];
  data: Hex;
  transactionHash: Hex | null;
}

/**
 * The execution event a Safe log records, and for which safeTxHash, or null for any other log.
 * Safe v1.4.0 made `txHash` an indexed topic; v1.3.0 writes it as the first word of the data.
 * Reading only the topic would take every v1.3.0 execution for someone else's, and call an
 * applied payload dead: the one answer payloadFate must never give.
 *
 * @example
 * executionEvent({ topics: [EXECUTION_SUCCESS], data: `0x${hash}${payment}` }) // { kind: 'success', txHash: `0x${hash}` }
 */
export function executionEvent(log: { topics: readonly Hex[]; data: Hex }): { kind: 'success' | 'failure'; txHash: Hex } | null {
  const sig = log.topics[0]?.toLowerCase();
  const kind = sig === EXECUTION_SUCCESS ? 'success' : sig === EXECUTION_FAILURE ? 'failure' : null;
  if (kind === null) return null;
  const data = typeof log.data === 'string' ? log.data.toLowerCase() : '';
  // v1.4.0+: event X(bytes32 indexed txHash, uint256 payment) -> 2 topics, data = payment.
  if (log.topics.length === 2 && /^0x[0-9a-f]{64}$/.test(data)) {
    const topic = log.topics[1]?.toLowerCase() ?? '';
    return /^0x[0-9a-f]{64}$/.test(topic) ? { kind, txHash: topic as Hex } : null;
  }
  // v1.3.0: event X(bytes32 txHash, uint256 payment) -> 1 topic, data = txHash ‖ payment.
  if (log.topics.length === 1 && /^0x[0-9a-f]{128}$/.test(data)) return { kind, txHash: `0x${data.slice(2, 66)}` as Hex };
  return null;
}

/** The reads the search needs, each pinned to a block number. */
export interface SafeHistory {
  /** The Safe's nonce at the end of `block` (0 when the Safe had no code yet). */
  nonceAt(block: bigint): Promise<bigint>;
  /** The Safe's ExecutionSuccess and ExecutionFailure logs in `block`. */
  executionLogs(block: bigint): Promise<readonly ExecutionLog[]>;
}

/**
 * - `unused`: at `head` the Safe's nonce is at or below the payload's, so it can still execute;
 * - `applied`: the block that consumed the nonce has ExecutionSuccess for the safeTxHash;
 * - `failed`: it has ExecutionFailure for it (nonce consumed, inner call reverted, no effect);
 * - `consumed`: another SafeTx consumed the nonce in that block;
 * - `unproven`: the head block itself moved the nonce, and its events do not account for it (yet).
 *   A node can serve the head's state before its logs (geth indexes the latest block's logs after
 *   it); anvil, while it mines the next block, has answered eth_call at the head with that
 *   block's state. Nothing is proven either way until the head moves on: confirm waits
 *   (`pending`) and payloadFate refuses to answer.
 */
export type NonceRecord =
  | { state: 'unused'; head: bigint; safeNonce: bigint }
  | { state: 'unproven'; head: bigint; safeNonce: bigint; block: bigint }
  | { state: 'applied' | 'failed' | 'consumed'; head: bigint; safeNonce: bigint; block: bigint; ethTxHash: Hex | null };

/**
 * Locates the block that consumed `nonce` at or below `head` and reads the Safe's execution
 * events there. Throws a TransportError when the record cannot prove an answer: the nonce was
 * already past `nonce` at genesis, or a block below the head has events that do not account for
 * every nonce it consumed (something other than execTransaction moved the nonce, e.g. a
 * DELEGATECALL writing the Safe's storage). The same at the head itself is `unproven` (see
 * {@link NonceRecord}).
 *
 * @example
 * const r = await nonceRecord(history, { nonce: 7n, safeTxHash: '0x…', head: 19_000_000n })
 * if (r.state === 'consumed') // another SafeTx used nonce 7 in block r.block
 */
export async function nonceRecord(history: SafeHistory, input: { nonce: bigint; safeTxHash: Hex; head: bigint }): Promise<NonceRecord> {
  const { nonce, head } = input;
  const safeTxHash = input.safeTxHash.toLowerCase();
  const atHead = await history.nonceAt(head);
  if (atHead <= nonce) return { state: 'unused', head, safeNonce: atHead };

  // Walk back in doubling steps (recent payloads, the usual case, need only recent state, which
  // pruned nodes still serve), then bisect: lo is a block where the nonce was not yet consumed.
  let hi = head;
  let hiNonce = atHead;
  let lo = -1n;
  let loNonce = 0n;
  for (let step = 1n; lo < 0n; step *= 2n) {
    if (hi === 0n) throw new TransportError(`the Safe nonce is already past ${nonce} at genesis: cannot tell which transaction consumed it`);
    const cand = hi > step ? hi - step : 0n;
    const n = await history.nonceAt(cand);
    if (n <= nonce) {
      lo = cand;
      loNonce = n;
    } else {
      hi = cand;
      hiNonce = n;
    }
  }
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    const n = await history.nonceAt(mid);
    if (n <= nonce) {
      lo = mid;
      loNonce = n;
    } else {
      hi = mid;
      hiNonce = n;
    }
  }

  const logs = await history.executionLogs(hi);
  // execTransaction moves the nonce by exactly one and emits exactly one of the two events. When
  // the block's events and its nonce increase disagree, something else wrote the nonce (or forged
  // an event): the record proves nothing, so say so instead of guessing.
  if (BigInt(logs.length) !== hiNonce - loNonce) {
    if (hi === head) return { state: 'unproven', head, safeNonce: atHead, block: hi };
    throw new TransportError(
      `block ${hi} moved the Safe nonce from ${loNonce} to ${hiNonce} but carries ${logs.length} execution event(s): cannot attribute nonce ${nonce}`,
    );
  }
  const ours = logs.map((l) => ({ log: l, ev: executionEvent(l) })).filter((x) => x.ev?.txHash === safeTxHash);
  // A success wins over a failure for the same hash: "applied" is never the unsafe answer.
  const success = ours.find((x) => x.ev?.kind === 'success')?.log;
  if (success) return { state: 'applied', head, safeNonce: atHead, block: hi, ethTxHash: success.transactionHash };
  const failure = ours.find((x) => x.ev?.kind === 'failure')?.log;
  if (failure) return { state: 'failed', head, safeNonce: atHead, block: hi, ethTxHash: failure.transactionHash };
  return { state: 'consumed', head, safeNonce: atHead, block: hi, ethTxHash: null };
}
