/**
 * @module approvals
 * Signed approvals: ed25519 over `approvalMessage` (DESIGN.md §3). Verification results are
 * values with a reason; malformed input is a reason too, never a crash.
 */
import { approvalMessage, type ApprovalStatement } from './digest.js';
import { signEd25519, verifyEd25519, verifyEd25519Async } from './ed25519.js';
import { fromHex, timingSafeEqual, toHex } from './encoding.js';
import { ValidationError } from './errors.js';
import { isInitiator, parseInitiator, type Identity } from './identity.js';
import { SignedApprovalSchema, type SignedApproval } from './schemas/approval.js';
import { parseWith, toValidationIssues } from './schemas/index.js';
import { verifyPasskeyAssertion, type PasskeyProblem, type RegisteredPasskey } from './webauthn.js';

/**
 * Signs an approval statement with an approver's 32-byte ed25519 secret key.
 *
 * @example
 * const approval = signApproval({ approver_id: 'alice', intent: id, verdict: 'approve', at: 1767225600, strong_auth: true }, aliceSecretKey)
 */
export function signApproval(statement: ApprovalStatement, secretKey: Uint8Array | string): SignedApproval {
  const key = typeof secretKey === 'string' ? fromHex(secretKey, 'secretKey', 32) : secretKey;
  if (key.length !== 32) {
    throw new ValidationError('secretKey', [{ path: '', message: `expected 32 bytes, got ${key.length}` }]);
  }
  const unsigned = {
    approver_id: statement.approver_id,
    intent: statement.intent,
    verdict: statement.verdict,
    at: statement.at,
    strong_auth: statement.strong_auth,
  };
  const sig = toHex(signEd25519(approvalMessage(unsigned), key));
  return parseWith(SignedApprovalSchema, { ...unsigned, signature: { curve: 'ed25519', sig } }, 'approval');
}

export type ApprovalProblem =
  | 'malformed'
  | 'wrong_intent'
  | 'unknown_approver'
  | 'revoked'
  | 'bad_signature'
  | 'duplicate'
  | 'self_approval'
  | 'stale'
  | 'future'
  | 'expired';

export type ApprovalCheck =
  | { ok: true; approval: SignedApproval }
  | { ok: false; reason: ApprovalProblem; message: string; path?: string };

/**
 * Verifies one approval against an approver's public key (32 bytes or 64 lowercase hex) and,
 * when given, the intent it must be for. Wrong curve, bad hex, wrong lengths and a wrong intent
 * come back as `{ ok: false, reason, message }`.
 *
 * @example
 * const check = verifyApproval(approval, alicePublicKeyHex, { intentId: id })
 * if (!check.ok) console.log(check.reason, check.message)
 */
export function verifyApproval(
  approval: unknown,
  publicKey: Uint8Array | string,
  expect: { intentId?: string; verdicts?: ApprovalVerdicts } = {},
): ApprovalCheck {
  // An approval preverifyApprovals already parsed and checked, unchanged since: its recorded
  // outcome, without parsing, serialising and decoding it again (see Verdicts.recorded).
  const recorded = expect.verdicts instanceof Verdicts ? expect.verdicts.recorded(approval, publicKey) : undefined;
  if (recorded !== undefined) return wrongIntent(recorded.approval, expect.intentId) ?? signatureCheck(recorded.approval, recorded.ok);
  const inputs = signatureInputs(approval, publicKey, expect.intentId);
  if (!inputs.ok) return inputs;
  const { approval: a, sig, message, key } = inputs;
  return signatureCheck(a, expect.verdicts?.lookup(sig, message, key) ?? verifyEd25519(sig, message, key));
}

/** The wrong_intent problem when an intent is expected and the approval is for another, else null. */
function wrongIntent(a: SignedApproval, intentId: string | undefined): Extract<ApprovalCheck, { ok: false }> | null {
  if (intentId === undefined || timingSafeEqual(a.intent, intentId)) return null;
  return { ok: false, reason: 'wrong_intent', message: `approval is for ${a.intent}, not ${intentId}` };
}

/** The outcome of an approval whose signature check gave `valid`. */
function signatureCheck(a: SignedApproval, valid: boolean): ApprovalCheck {
  return valid ? { ok: true, approval: a } : { ok: false, reason: 'bad_signature', message: `signature of ${a.approver_id} does not verify` };
}

/**
 * Everything an approval's signature check reads, in the order verifyApproval checks it: the
 * parsed approval (malformed?), its intent (wrong_intent, when one is expected), the approver's
 * key (malformed?), then the signature and the exact message bytes it must cover.
 */
function signatureInputs(
  approval: unknown,
  publicKey: Uint8Array | string,
  intentId: string | undefined,
): { ok: true; approval: SignedApproval; sig: Uint8Array; message: Uint8Array; key: Uint8Array } | Extract<ApprovalCheck, { ok: false }> {
  const parsed = SignedApprovalSchema.safeParse(approval);
  if (!parsed.success) {
    const issue = toValidationIssues(parsed.error)[0] ?? { path: '', message: 'invalid' };
    return { ok: false, reason: 'malformed', message: `approval.${issue.path}: ${issue.message}`, path: issue.path };
  }
  const a = parsed.data;
  const wrong = wrongIntent(a, intentId);
  if (wrong) return wrong;
  let key: Uint8Array;
  try {
    key = typeof publicKey === 'string' ? fromHex(publicKey, 'publicKey', 32) : publicKey;
  } catch (e) {
    return { ok: false, reason: 'malformed', message: (e as Error).message };
  }
  if (key.length !== 32) {
    return { ok: false, reason: 'malformed', message: `approver public key must be 32 bytes, got ${key.length}` };
  }
  return { ok: true, approval: a, sig: fromHex(a.signature.sig, 'signature.sig', 64), message: approvalMessage(a), key };
}

/**
 * Signature verdicts worked out ahead of time by `preverifyApprovals` (the only way to get one),
 * each bound to the exact signature, message and public key bytes it was computed over: a lookup
 * with any other bytes finds nothing, and verifyApproval verifies then and there. An approval
 * that still holds exactly what it held when preverified skips the parsing and serialising too.
 * It only saves work; it cannot make an approval count that would not count without it.
 */
export interface ApprovalVerdicts {
  /** The verdict recorded for exactly these bytes, or undefined when there is none. */
  lookup(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean | undefined;
  readonly size: number;
}

class Verdicts implements ApprovalVerdicts {
  readonly #verdicts = new Map<string, { approval: SignedApproval; message: Uint8Array; ok: boolean }>();

  /** `approval` is the parsed approval the message was made from; it is frozen and kept. */
  record(approval: SignedApproval, signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array, ok: boolean): void {
    Object.freeze(approval.signature);
    this.#verdicts.set(`${toHex(publicKey)}:${toHex(signature)}`, { approval: Object.freeze(approval), message, ok });
  }

  lookup(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean | undefined {
    const v = this.#verdicts.get(`${toHex(publicKey)}:${toHex(signature)}`);
    return v !== undefined && Buffer.compare(v.message, message) === 0 ? v.ok : undefined;
  }

  /**
   * The outcome recorded for `raw` and this key when `raw`, as read now, holds exactly the
   * members and values of the approval recorded for its signature: then parsing it again would
   * give that approval (the schema only checks, it changes nothing), so its message and its
   * signature bytes are the ones the verdict was computed over. Anything else (another key, a
   * member added, removed or changed since, a non-plain object) is undefined, and the caller
   * checks the approval from scratch.
   */
  recorded(raw: unknown, publicKey: Uint8Array | string): { approval: SignedApproval; ok: boolean } | undefined {
    if (!isPlainObject(raw) || Object.keys(raw).length !== 6) return undefined;
    const sig = raw['signature'];
    if (!isPlainObject(sig) || Object.keys(sig).length !== 2 || typeof sig['sig'] !== 'string') return undefined;
    const keyHex = typeof publicKey === 'string' ? publicKey : toHex(publicKey);
    const v = this.#verdicts.get(`${keyHex}:${sig['sig']}`);
    if (v === undefined) return undefined;
    const a = v.approval;
    // An approval with a passkey assertion is parsed again (the 7th member is not compared here);
    // its signature verdict is still looked up by its bytes.
    if (a.webauthn !== undefined) return undefined;
    const same =
      raw['approver_id'] === a.approver_id &&
      raw['intent'] === a.intent &&
      raw['verdict'] === a.verdict &&
      raw['at'] === a.at &&
      raw['strong_auth'] === a.strong_auth &&
      sig['curve'] === a.signature.curve &&
      sig['sig'] === a.signature.sig;
    return same ? { approval: a, ok: v.ok } : undefined;
  }

  get size(): number {
    return this.#verdicts.size;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks the signatures of a set of approvals concurrently on libuv's thread pool
 * (`verifyEd25519Async`), for `verifyApprovals(approvals, { ..., verdicts })` to consume: a
 * service can do this outside its one-at-a-time section, so the curve arithmetic of many requests
 * runs on other cores while the event loop does the rest. Decides nothing itself: approvals of
 * unknown approvers and malformed ones are skipped here and judged by verifyApprovals as before.
 *
 * @example
 * const verdicts = await preverifyApprovals(request.approvals, approvers)
 * const { valid, problems } = verifyApprovals(request.approvals, { intentId, approvers, initiator, window, verdicts })
 */
export async function preverifyApprovals(approvals: readonly unknown[], approvers: ReadonlyMap<string, ApproverKey>): Promise<ApprovalVerdicts> {
  const verdicts = new Verdicts();
  const jobs: Promise<void>[] = [];
  for (const raw of approvals.slice(0, MAX_PREVERIFIED)) {
    const known = approvers.get(approverIdOf(raw) ?? '');
    if (!known) continue;
    const inputs = signatureInputs(raw, known.publicKey, undefined);
    if (!inputs.ok) continue;
    const { approval, sig, message, key } = inputs;
    jobs.push(verifyEd25519Async(sig, message, key).then((ok) => verdicts.record(approval, sig, message, key, ok)));
  }
  await Promise.all(jobs);
  return verdicts;
}

/** preverifyApprovals looks at no more approvals than this per call (a bound on hostile input). */
const MAX_PREVERIFIED = 64;

/** What a service knows about an approver: its key, whether it was revoked, and its passkey. */
export interface ApproverKey {
  publicKey: Uint8Array | string;
  revoked?: boolean;
  /**
   * The passkey registered at pairing, with where its assertions may come from (the control
   * plane's webauthn setting; a signer's trust file). Without one, no approval of this approver
   * is strong.
   */
  passkey?: ApproverPasskey;
}

export interface ApproverPasskey extends RegisteredPasskey {
  /** Origins an assertion's clientData may name (exact match, e.g. `http://localhost:8080`). */
  origins: readonly string[];
}

/**
 * An approval as the policy counts it: `strong_auth` true only when a passkey assertion proved it,
 * and `device_bound` when that passkey was not backup-eligible (synced) at registration.
 */
export type CountedApproval = SignedApproval & { device_bound?: boolean };

export interface ApprovalSetResult {
  /** Approvals that verified, as signed (to forward), at most one per approver (the first valid one). */
  valid: SignedApproval[];
  /**
   * The same approvals as the policy must count them (evaluatePolicy's `approvals`): a
   * `strong_auth: true` whose passkey assertion is missing or does not verify counts as weak.
   */
  counted: CountedApproval[];
  problems: { index: number; approver_id: string | null; reason: ApprovalProblem; message: string }[];
  /** Approvals claiming strong_auth that count as weak, and why (a control plane refuses them). */
  weakened: { index: number; approver_id: string; reason: PasskeyProblem | 'no_assertion' | 'no_passkey'; message: string }[];
}

/**
 * Whether an approval's `strong_auth: true` is proven: its `webauthn` assertion verifies against
 * the approver's registered passkey. A weak approval needs no proof.
 *
 * @example
 * const proof = strongAuthProof(approval, approvers.get(approval.approver_id)?.passkey)
 */
export function strongAuthProof(
  approval: SignedApproval,
  passkey: ApproverPasskey | undefined,
): { strong: boolean; device_bound: boolean } | { strong: false; reason: PasskeyProblem | 'no_assertion' | 'no_passkey'; message: string } {
  if (!approval.strong_auth) return { strong: false, device_bound: false };
  if (approval.webauthn === undefined) return { strong: false, reason: 'no_assertion', message: 'strong_auth is true but the approval carries no webauthn assertion' };
  if (passkey === undefined) return { strong: false, reason: 'no_passkey', message: `approver ${approval.approver_id} has no registered passkey` };
  const check = verifyPasskeyAssertion({ assertion: approval.webauthn, passkey, statement: approval, rp_id: passkey.rp_id, origins: passkey.origins });
  if (!check.ok) return { strong: false, reason: check.reason, message: `webauthn: ${check.reason}: ${check.message}` };
  return { strong: true, device_bound: check.device_bound };
}

/**
 * How far an approval's `at` may lie outside [intent created, now] before it is refused: the
 * clocks of a phone and of the service differ by seconds, rarely by minutes.
 */
export const APPROVAL_CLOCK_SKEW_SECONDS = 300;

/** When an approval may be dated: not before its intent was created, not after now (each +- skew). */
export interface ApprovalWindow {
  /** When the intent was created, Unix seconds (the control plane's record; the signer reads the claim). */
  createdAt: number;
  /** The judging service's own clock, Unix seconds. */
  now: number;
  /** Defaults to APPROVAL_CLOCK_SKEW_SECONDS. */
  skewSeconds?: number;
  /**
   * An approval dated this long before `now` or more stops counting (`expired`): the wallet's
   * approval_max_age_seconds (lifetime.ts). Absent: no age limit.
   */
  maxAgeSeconds?: number;
}

/**
 * Why an approval dated `at` is out of its window, or null when it is inside: `stale` when dated
 * before the intent existed (a signature made in advance, or for an earlier life of the same
 * content), `future` when dated after now (a pre-dated signature kept for later), `expired` when
 * older than the window's maxAgeSeconds (consent given too long ago to stand for today).
 *
 * @example
 * approvalTimeProblem(1, { createdAt: 1767225600, now: 1767225700 }) // { reason: 'stale', ... }
 */
export function approvalTimeProblem(at: number, window: ApprovalWindow): { reason: 'stale' | 'future' | 'expired'; message: string } | null {
  const skew = window.skewSeconds ?? APPROVAL_CLOCK_SKEW_SECONDS;
  if (at < window.createdAt - skew) {
    return { reason: 'stale', message: `approval dated ${at} is older than its intent (created ${window.createdAt}, ${skew}s skew allowed)` };
  }
  if (at > window.now + skew) {
    return { reason: 'future', message: `approval dated ${at} is in the future (now ${window.now}, ${skew}s skew allowed)` };
  }
  if (window.maxAgeSeconds !== undefined && at <= window.now - window.maxAgeSeconds) {
    return { reason: 'expired', message: `approval dated ${at} is ${window.now - at}s old; approvals stop counting at ${window.maxAgeSeconds}s` };
  }
  return null;
}

/**
 * Verifies a set of approvals for one intent, as both services do before evaluating policy:
 * unknown or revoked approvers, an initiator approving their own intent (identities compared as
 * values, identity.ts), bad signatures, approvals of another intent, approvals dated outside
 * `window` (stale, future, expired) and duplicates are reported, and only the rest count.
 * A `strong_auth: true` counts as strong only with a `webauthn` assertion that verifies against the
 * approver's passkey (strongAuthProof); otherwise it counts as weak and is listed in `weakened`.
 * Hand `counted` to evaluatePolicy, and forward `valid` (the approvals as signed).
 *
 * @example
 * const { counted, problems } = verifyApprovals(approvals, { intentId: id, approvers: keysById, initiator: 'device:ab12', window: { createdAt, now } })
 * evaluatePolicy(policy, intent, { now, approvals: counted })
 */
export function verifyApprovals(
  approvals: readonly unknown[],
  ctx: {
    intentId: string;
    approvers: ReadonlyMap<string, ApproverKey>;
    /** The intent's initiator; a string outside the grammar lets no approval count (fail closed). */
    initiator?: string | Identity;
    /** When the approvals may be dated. */
    window: ApprovalWindow;
    /** Signature verdicts from `preverifyApprovals`; anything not in it is verified here. */
    verdicts?: ApprovalVerdicts;
  },
): ApprovalSetResult {
  const valid: SignedApproval[] = [];
  const counted: CountedApproval[] = [];
  const problems: ApprovalSetResult['problems'] = [];
  const weakened: ApprovalSetResult['weakened'] = [];
  const seen = new Set<string>();
  const initiator = typeof ctx.initiator === 'string' ? parseInitiator(ctx.initiator) ?? ctx.initiator : ctx.initiator;
  approvals.forEach((raw, index) => {
    const id = approverIdOf(raw);
    const problem = (reason: ApprovalProblem, message: string) =>
      problems.push({ index, approver_id: id, reason, message });
    if (id === null) return problem('malformed', 'approval.approver_id: expected a string');
    const known = ctx.approvers.get(id);
    if (!known) return problem('unknown_approver', `unknown approver ${JSON.stringify(id)}`);
    if (known.revoked) return problem('revoked', `approver ${id} was revoked`);
    if (initiator !== undefined && isInitiator(initiator, id)) {
      return problem(
        'self_approval',
        typeof initiator === 'string'
          ? `initiator ${JSON.stringify(initiator)} is not an identity, so approver ${id} cannot be shown not to be it`
          : `approver ${id} initiated this intent and cannot approve it`,
      );
    }
    const check = verifyApproval(raw, known.publicKey, { intentId: ctx.intentId, ...(ctx.verdicts ? { verdicts: ctx.verdicts } : {}) });
    if (!check.ok) return problem(check.reason, check.message);
    const late = approvalTimeProblem(check.approval.at, ctx.window);
    if (late) return problem(late.reason, late.message);
    if (seen.has(id)) return problem('duplicate', `approver ${id} approved more than once`);
    seen.add(id);
    valid.push(check.approval);
    const proof = strongAuthProof(check.approval, known.passkey);
    if ('reason' in proof) {
      weakened.push({ index, approver_id: id, reason: proof.reason, message: proof.message });
      counted.push({ ...check.approval, strong_auth: false });
    } else {
      counted.push(proof.strong ? { ...check.approval, device_bound: proof.device_bound } : check.approval);
    }
  });
  return { valid, counted, problems, weakened };
}

/** The approver id an approval claims, read before it is validated; null when it names none. */
function approverIdOf(raw: unknown): string | null {
  return typeof raw === 'object' && raw !== null && typeof (raw as { approver_id?: unknown }).approver_id === 'string'
    ? (raw as { approver_id: string }).approver_id
    : null;
}
