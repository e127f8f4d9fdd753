/**
 * @module testing/memory-ledger
 * A toy in-memory ledger (family "memory", chains like `memory:devnet`): the independent source of
 * truth the memory driver talks to and the conformance suite reads behind the driver's back.
 *
 * It is deliberately strict: it recomputes every digest and verifies every signature itself, so a
 * driver that assembles a bad blob is caught by the ledger, not by the driver agreeing with itself.
 *
 * Two faces:
 * - direct reads and admin (`account`, `balance`, `tx`, `fund`, `close`, …) never fail and ignore
 *   the fault switches: they are what tests and the conformance reader use;
 * - `rpc` is what a driver calls, as it would call a node over HTTP: it honours `faults`, which
 *   tests flip at run time (`ledger.faults.submitError = true`).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { z } from 'zod';
import { canonicalize } from '../canonical.js';
import { verifyEd25519 } from '../ed25519.js';
import { fromHex, sha256Hex, toHex } from '../encoding.js';
import { NotFoundError, TransportError, ValidationError } from '../errors.js';
import { AmountSchema } from '../schemas/common.js';
import { parseWith } from '../schemas/index.js';
import type { IndependentReader } from './conformance.js';

/** The native asset of every memory chain. */
export const MEMORY_NATIVE = { symbol: 'MEM', decimals: 6 } as const;
/** The payload format tag the ledger accepts. */
export const MEMORY_TX_FORMAT = 'memory-tx/1';
/** Fee per transaction, in minor units. */
export const MEMORY_BASE_FEE = 10;
/**
 * The memory driver's default fee cap (minor units), for a signer whose trust file sets no max_fee:
 * 100 times the base fee. The ledger charges the payload's own fee, whatever it is.
 */
export const MEMORY_DEFAULT_MAX_FEE = 1_000n;
/** How many ledgers a payload built now stays valid for (its `last_ledger` is index + this). */
export const MEMORY_EXPIRY_LEDGERS = 20;
/** Signature framing the ledger accepts: raw ed25519 over the 32 digest bytes. */
export const MEMORY_SIGNATURE_ENCODING = 'ed25519-digest';

const ADDRESS_RE = /^mem1[0-9a-f]{40}$/;

/**
 * `mem1` + the first 20 bytes of sha256(publicKey), lowercase hex.
 *
 * @example
 * memoryAddress(createSoftwareKey().publicKey) // 'mem1' + 40 hex digits
 */
export function memoryAddress(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) {
    throw new ValidationError('publicKey', [{ path: '', message: 'expected a 32-byte ed25519 public key' }]);
  }
  return `mem1${toHex(sha256(publicKey).subarray(0, 20))}`;
}

/**
 * Why `address` is not a memory address, or null when it is one.
 *
 * @example
 * memoryAddressProblem('mem1xyz') // 'memory addresses are 44 characters (mem1 + 40 hex), got 7'
 */
export function memoryAddressProblem(address: unknown): string | null {
  if (typeof address !== 'string') return 'address must be a string';
  if (!address.startsWith('mem1')) return 'memory addresses start with "mem1"';
  if (address.length !== 44) return `memory addresses are 44 characters (mem1 + 40 hex), got ${address.length}`;
  if (!ADDRESS_RE.test(address)) return 'memory addresses end in 40 lowercase hex digits';
  return null;
}

const Address = z.string().refine((a) => memoryAddressProblem(a) === null, 'not a memory address');

/** The transaction a memory driver builds and every member signs (its digest is sha256(JCS(payload))). */
export const MemoryPayloadSchema = z.strictObject({
  format: z.literal(MEMORY_TX_FORMAT),
  chain: z.string().min(1),
  /** The ledger implements `transfer` only; anything else is refused as `unsupported_op`. */
  op: z.string().min(1),
  account: Address,
  destination: Address,
  amount: AmountSchema,
  fee: AmountSchema,
  sequence: z.int().min(1).max(0xffffffff),
  last_ledger: z.int().min(1).max(0xffffffff),
  memo: z.string().max(1024).optional(),
});
export type MemoryPayload = z.infer<typeof MemoryPayloadSchema>;

export const MemorySignatureSchema = z.strictObject({
  address: Address,
  public_key: z.string().regex(/^[0-9a-f]{64}$/, 'public_key is 32 bytes as lowercase hex'),
  signature: z.string().regex(/^[0-9a-f]{128}$/, 'signature is 64 bytes as lowercase hex'),
});
export type MemorySignature = z.infer<typeof MemorySignatureSchema>;

/** The decoded form of a submittable blob. */
export const MemoryEnvelopeSchema = z.strictObject({
  payload: z.unknown(),
  signatures: z.array(MemorySignatureSchema).max(64),
});
export interface MemoryEnvelope {
  payload: MemoryPayload;
  signatures: MemorySignature[];
}

/**
 * The digest every member signs: sha256 of the RFC 8785 form of the payload.
 *
 * @example
 * memoryDigest(built.payload as MemoryPayload) === built.digest // true for a memory driver's BuiltPayload
 */
export function memoryDigest(payload: MemoryPayload): string {
  return sha256Hex(canonicalize(payload));
}

/**
 * Encodes an envelope as the blob `submit` takes: base64url of its canonical JSON.
 *
 * @example
 * const tampered = encodeMemoryBlob({ ...envelope, payload: { ...envelope.payload, amount: '999' } })
 */
export function encodeMemoryBlob(envelope: MemoryEnvelope): string {
  return Buffer.from(canonicalize(envelope), 'utf8').toString('base64url');
}

/**
 * Decodes a blob. Throws a ValidationError naming the failing field on anything malformed.
 * The transaction hash is over the canonical form, so re-encoding a blob cannot change its hash.
 *
 * @example
 * const { envelope, hash } = decodeMemoryBlob(result.blob) // hash === result.txHash
 */
export function decodeMemoryBlob(blob: string): { envelope: MemoryEnvelope; hash: string } {
  let raw: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(blob)) throw new Error('not base64url');
    raw = JSON.parse(Buffer.from(blob, 'base64url').toString('utf8'));
  } catch (cause) {
    throw new ValidationError('blob', [{ path: '', message: 'not base64url-encoded JSON' }], { cause });
  }
  const env = parseWith(MemoryEnvelopeSchema, raw, 'blob');
  const payload = parseWith(MemoryPayloadSchema, env.payload, 'blob.payload');
  const envelope: MemoryEnvelope = { payload, signatures: env.signatures };
  return { envelope, hash: sha256Hex(canonicalize(envelope)) };
}

export interface SignerList {
  members: { address: string; weight: number }[];
  quorum: number;
}

/** An account as the ledger stores it. Reads return copies. */
export interface MemoryAccount {
  address: string;
  balance: bigint;
  /** The sequence the next transaction from this account must carry. */
  sequence: number;
  signers: SignerList | null;
  /** Whether a signature by the key whose address this is authorises on its own. */
  masterKey: boolean;
}

export interface MemoryTxRecord {
  hash: string;
  applied: true;
  code: 'ok';
  /** The ledger the transaction was applied in. */
  ledger: number;
  payload: MemoryPayload;
  signers: string[];
}

/**
 * Result codes a submission can get. `retriable` codes may succeed if the same blob is
 * submitted later; the others never will.
 */
export const MEMORY_REJECT_CODES = {
  malformed: false,
  wrong_chain: false,
  unsupported_op: false,
  no_account: false,
  key_mismatch: false,
  bad_signature: false,
  duplicate_signer: false,
  not_a_signer: false,
  under_quorum: false,
  past_sequence: false,
  future_sequence: true,
  insufficient_balance: true,
  expired: false,
  already_applied: false,
} as const satisfies Record<string, boolean>;
export type MemoryRejectCode = keyof typeof MEMORY_REJECT_CODES;

export type MemorySubmitOutcome =
  | { accepted: true; hash: string; code: 'ok' | 'queued' }
  | { accepted: false; hash: string; code: string; message: string; retriable: boolean };

export type MemoryTxStatus =
  | { state: 'applied'; hash: string; code: 'ok'; ledger: number }
  | { state: 'pending'; hash: string }
  | { state: 'unknown'; hash: string; ledger: number };

/**
 * Fault switches (wagmi-mock style). Mutable at run time; they only affect `ledger.rpc`.
 * `true` for an error switch throws a TransportError; an Error instance is thrown as given.
 */
export interface MemoryLedgerFaults {
  /** `rpc.params` throws (the driver's fetchParams fails like an unreachable node). */
  fetchParamsError: boolean | Error;
  /** `rpc.submit` throws before the ledger sees the blob. */
  submitError: boolean | Error;
  /** `rpc.submit` answers with this rejection code without evaluating the blob. */
  submitReject: string | { code: string; message?: string; retriable?: boolean } | null;
  /** The next N `rpc.txStatus` polls report pending, whatever the ledger holds. Counts down. */
  confirmPending: number;
  /** `rpc.submit` validates and accepts, but the transaction is never applied. */
  dropSubmit: boolean;
  /** `rpc.txBySequence` throws (the ledger cannot say what became of a payload). */
  historyError: boolean | Error;
  /** Delay added to every `rpc` call. */
  latencyMs: number;
}

const NO_FAULTS: MemoryLedgerFaults = {
  fetchParamsError: false,
  submitError: false,
  submitReject: null,
  confirmPending: 0,
  dropSubmit: false,
  historyError: false,
  latencyMs: 0,
};

export interface MemoryLedgerOptions {
  /** Chain name, `memory:<reference>`. Default `memory:devnet`. */
  chain?: string;
  /** First ledger index. Default 1. */
  startLedger?: number;
  faults?: Partial<MemoryLedgerFaults>;
}

/** What `rpc.params` returns: the facts a driver's fetchParams needs. */
export interface MemoryParamsInfo {
  sequence: number;
  fee: number;
  ledger: number;
}

/** The node-like API a driver calls; it honours the ledger's fault switches. */
export interface MemoryRpc {
  params(address: string): Promise<MemoryParamsInfo>;
  account(address: string): Promise<MemoryAccount | null>;
  submit(blob: string): Promise<MemorySubmitOutcome>;
  txStatus(hash: string): Promise<MemoryTxStatus>;
  /** The applied transaction that used `sequence` of `account` (like XRPL account_tx), or null. */
  txBySequence(account: string, sequence: number): Promise<{ hash: string; payload: MemoryPayload; ledger: number } | null>;
  /** The index of the open ledger. */
  ledgerIndex(): Promise<number>;
}

class Reject extends Error {
  constructor(
    readonly rejectCode: MemoryRejectCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * An in-memory ledger. Accounts hold a native balance, a sequence and an optional weighted signer
 * list; every submission closes a ledger.
 *
 * @example
 * const ledger = new MemoryLedger({ chain: 'memory:devnet' })
 * ledger.fund('mem1' + '00'.repeat(20), 1_000_000n)
 * ledger.faults.submitError = true // the next rpc.submit throws
 */
export class MemoryLedger {
  readonly chain: string;
  /** Fault switches; mutate them in tests. */
  faults: MemoryLedgerFaults;
  readonly rpc: MemoryRpc;
  readonly #accounts = new Map<string, MemoryAccount>();
  readonly #txs = new Map<string, MemoryTxRecord>();
  #index: number;

  constructor(options: MemoryLedgerOptions = {}) {
    this.chain = options.chain ?? 'memory:devnet';
    if (!/^memory:[A-Za-z0-9._-]{1,64}$/.test(this.chain)) {
      throw new ValidationError('ledger', [{ path: 'chain', message: 'chain must be "memory:<reference>"' }]);
    }
    this.#index = options.startLedger ?? 1;
    this.faults = { ...NO_FAULTS, ...options.faults };
    this.rpc = this.#makeRpc();
  }

  /** The index of the ledger currently open (the next transaction lands in it). */
  get index(): number {
    return this.#index;
  }

  /** Closes `count` ledgers without transactions (lets payloads expire). Returns the new index. */
  close(count = 1): number {
    this.#index += count;
    return this.#index;
  }

  /** Clears every fault switch. */
  resetFaults(): void {
    this.faults = { ...NO_FAULTS };
  }

  /** Creates an account. Throws if it exists. */
  createAccount(init: { address: string; balance?: bigint; signers?: SignerList | null; masterKey?: boolean }): MemoryAccount {
    const problem = memoryAddressProblem(init.address);
    if (problem) throw new ValidationError('account', [{ path: 'address', message: problem }]);
    if (this.#accounts.has(init.address)) {
      throw new ValidationError('account', [{ path: 'address', message: `account ${init.address} exists` }]);
    }
    const account: MemoryAccount = {
      address: init.address,
      balance: init.balance ?? 0n,
      sequence: 1,
      signers: null,
      masterKey: init.masterKey ?? true,
    };
    this.#accounts.set(init.address, account);
    if (init.signers) this.setSignerList(init.address, init.signers);
    return this.account(init.address) as MemoryAccount;
  }

  /** Genesis faucet: credits `amount`, creating the account if needed. */
  fund(address: string, amount: bigint): void {
    if (amount < 0n) throw new ValidationError('fund', [{ path: 'amount', message: 'amount must be >= 0' }]);
    if (!this.#accounts.has(address)) this.createAccount({ address });
    (this.#accounts.get(address) as MemoryAccount).balance += amount;
  }

  /** Sets (or, with null, removes) an account's signer list; administrative, not a transaction. */
  setSignerList(address: string, list: SignerList | null, options: { masterKey?: boolean } = {}): void {
    const acct = this.#accounts.get(address);
    if (!acct) throw new ValidationError('signer list', [{ path: 'address', message: `no account ${address}` }]);
    if (list) {
      const issues: { path: string; message: string }[] = [];
      const seen = new Set<string>();
      list.members.forEach((m, i) => {
        const problem = memoryAddressProblem(m.address);
        if (problem) issues.push({ path: `members.${i}.address`, message: problem });
        if (seen.has(m.address)) issues.push({ path: `members.${i}.address`, message: 'listed twice' });
        if (m.address === address) issues.push({ path: `members.${i}.address`, message: 'an account cannot list itself' });
        if (!Number.isInteger(m.weight) || m.weight < 1) issues.push({ path: `members.${i}.weight`, message: 'weight must be an integer >= 1' });
        seen.add(m.address);
      });
      const total = list.members.reduce((s, m) => s + m.weight, 0);
      if (!Number.isInteger(list.quorum) || list.quorum < 1 || list.quorum > total) {
        issues.push({ path: 'quorum', message: 'quorum must be 1..total weight' });
      }
      if (issues.length > 0) throw new ValidationError('signer list', issues);
    }
    acct.signers = list ? { members: list.members.map((m) => ({ ...m })), quorum: list.quorum } : null;
    if (options.masterKey !== undefined) acct.masterKey = options.masterKey;
  }

  /** A copy of the account, or null. */
  account(address: string): MemoryAccount | null {
    const a = this.#accounts.get(address);
    if (!a) return null;
    return {
      ...a,
      signers: a.signers ? { members: a.signers.members.map((m) => ({ ...m })), quorum: a.signers.quorum } : null,
    };
  }

  /** Native balance in minor units; 0 for an account that does not exist. */
  balance(address: string): bigint {
    return this.#accounts.get(address)?.balance ?? 0n;
  }

  /** The applied transaction with this hash, or null. */
  tx(hash: string): MemoryTxRecord | null {
    const t = this.#txs.get(hash);
    return t ? { ...t, payload: { ...t.payload }, signers: [...t.signers] } : null;
  }

  /**
   * A reader for the conformance suite: straight to ledger state, never through a driver.
   *
   * @example
   * describeChainDriver({ ..., setup: async () => ({ ..., ledger: ledger.reader() }) })
   */
  reader(): IndependentReader {
    return {
      balance: async (address) => this.balance(address),
      txResult: async (hash) => {
        const t = this.#txs.get(hash);
        return t ? { applied: t.applied, code: t.code } : null;
      },
    };
  }

  /** Every applied transaction, in order. */
  txs(): MemoryTxRecord[] {
    return [...this.#txs.keys()].map((h) => this.tx(h) as MemoryTxRecord);
  }

  /**
   * Evaluates and, when valid, applies a blob (ignores faults; `rpc.submit` is the faulty face).
   * Every submission closes the open ledger, applied or not.
   */
  submit(blob: string, options: { apply?: boolean } = {}): MemorySubmitOutcome {
    let hash = sha256Hex(blob);
    try {
      let decoded: { envelope: MemoryEnvelope; hash: string };
      try {
        decoded = decodeMemoryBlob(blob);
      } catch (e) {
        throw new Reject('malformed', (e as Error).message);
      }
      const { envelope } = decoded;
      hash = decoded.hash;
      const signers = this.#check(envelope, hash);
      if (options.apply ?? true) this.#apply(envelope, hash, signers);
      return { accepted: true, hash, code: options.apply === false ? 'queued' : 'ok' };
    } catch (e) {
      if (!(e instanceof Reject)) throw e;
      return { accepted: false, hash, code: e.rejectCode, message: e.message, retriable: MEMORY_REJECT_CODES[e.rejectCode] };
    } finally {
      this.#index += 1;
    }
  }

  /** The checks a real ledger would make, in its order. Returns the counted signer addresses. */
  #check({ payload, signatures }: MemoryEnvelope, hash: string): string[] {
    if (this.#txs.has(hash)) throw new Reject('already_applied', `transaction ${hash} is already in ledger ${this.#txs.get(hash)?.ledger}`);
    if (payload.chain !== this.chain) throw new Reject('wrong_chain', `payload is for ${payload.chain}, this ledger is ${this.chain}`);
    if (payload.op !== 'transfer') throw new Reject('unsupported_op', `the memory ledger implements transfer only, not ${payload.op}`);
    if (payload.last_ledger < this.#index) {
      throw new Reject('expired', `payload valid through ledger ${payload.last_ledger}, ledger ${this.#index} is open`);
    }
    const acct = this.#accounts.get(payload.account);
    if (!acct) throw new Reject('no_account', `no account ${payload.account}`);
    if (payload.sequence < acct.sequence) throw new Reject('past_sequence', `sequence ${payload.sequence} is used; account is at ${acct.sequence}`);
    if (payload.sequence > acct.sequence) throw new Reject('future_sequence', `sequence ${payload.sequence} is ahead of the account (${acct.sequence})`);

    // The ledger computes the digest itself: the blob carries none for it to trust.
    const digest = fromHex(memoryDigest(payload), 'digest', 32);
    const seen = new Set<string>();
    const counted: string[] = [];
    let weight = 0;
    let master = false;
    for (const sig of signatures) {
      if (seen.has(sig.address)) throw new Reject('duplicate_signer', `${sig.address} signed twice`);
      seen.add(sig.address);
      const publicKey = fromHex(sig.public_key, 'public_key', 32);
      if (memoryAddress(publicKey) !== sig.address) throw new Reject('key_mismatch', `public key does not control ${sig.address}`);
      const isMaster = sig.address === acct.address && acct.masterKey;
      const member = acct.signers?.members.find((m) => m.address === sig.address);
      if (!isMaster && !member) throw new Reject('not_a_signer', `${sig.address} is not a signer of ${acct.address}`);
      if (!verifyEd25519(fromHex(sig.signature, 'signature', 64), digest, publicKey)) {
        throw new Reject('bad_signature', `signature by ${sig.address} does not verify`);
      }
      counted.push(sig.address);
      if (isMaster) master = true;
      else if (member) weight += member.weight;
    }
    if (!master) {
      const quorum = acct.signers?.quorum;
      if (quorum === undefined) throw new Reject('under_quorum', `${acct.address} has no signer list and its master key did not sign`);
      if (weight < quorum) throw new Reject('under_quorum', `signer weight ${weight} is below quorum ${quorum}`);
    }
    const cost = BigInt(payload.amount) + BigInt(payload.fee);
    if (acct.balance < cost) throw new Reject('insufficient_balance', `balance ${acct.balance} < amount + fee ${cost}`);
    return counted;
  }

  #apply({ payload }: MemoryEnvelope, hash: string, signers: string[]): void {
    const from = this.#accounts.get(payload.account) as MemoryAccount;
    from.balance -= BigInt(payload.amount) + BigInt(payload.fee);
    from.sequence += 1;
    // A transfer to an unknown address creates it (a toy ledger has no reserve to meet).
    this.fund(payload.destination, BigInt(payload.amount));
    this.#txs.set(hash, { hash, applied: true, code: 'ok', ledger: this.#index, payload: { ...payload }, signers });
  }

  #makeRpc(): MemoryRpc {
    const delay = async (): Promise<void> => {
      const ms = this.faults.latencyMs;
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    };
    const raise = (fault: boolean | Error, what: string): void => {
      if (fault instanceof Error) throw fault;
      if (fault) throw new TransportError(`memory ledger ${this.chain}: ${what} failed (injected fault)`, { data: { fault: what } });
    };
    return {
      params: async (address) => {
        await delay();
        raise(this.faults.fetchParamsError, 'params');
        const acct = this.#accounts.get(address);
        if (!acct) throw new NotFoundError('account', address, { data: { chain: this.chain } });
        return { sequence: acct.sequence, fee: MEMORY_BASE_FEE, ledger: this.#index };
      },
      account: async (address) => {
        await delay();
        return this.account(address);
      },
      submit: async (blob) => {
        await delay();
        raise(this.faults.submitError, 'submit');
        const reject = this.faults.submitReject;
        if (reject !== null) {
          const r = typeof reject === 'string' ? { code: reject } : reject;
          return {
            accepted: false,
            hash: txHashOfBlob(blob),
            code: r.code,
            message: r.message ?? `rejected with ${r.code} (injected fault)`,
            retriable: r.retriable ?? false,
          };
        }
        return this.submit(blob, { apply: !this.faults.dropSubmit });
      },
      txBySequence: async (account, sequence) => {
        await delay();
        raise(this.faults.historyError, 'history');
        for (const t of this.#txs.values()) {
          if (t.payload.account === account && t.payload.sequence === sequence) return { hash: t.hash, payload: { ...t.payload }, ledger: t.ledger };
        }
        return null;
      },
      ledgerIndex: async () => {
        await delay();
        return this.#index;
      },
      txStatus: async (hash) => {
        await delay();
        if (this.faults.confirmPending > 0) {
          this.faults.confirmPending -= 1;
          return { state: 'pending', hash };
        }
        const t = this.#txs.get(hash);
        return t ? { state: 'applied', hash, code: 'ok', ledger: t.ledger } : { state: 'unknown', hash, ledger: this.#index };
      },
    };
  }
}

/**
 * The hash a blob is known by, or sha256 of the raw text when it does not decode.
 *
 * @example
 * ledger.tx(txHashOfBlob(blob)) // the applied record, or null
 */
export function txHashOfBlob(blob: string): string {
  try {
    return decodeMemoryBlob(blob).hash;
  } catch {
    return sha256Hex(blob);
  }
}
