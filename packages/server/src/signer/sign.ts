/**
 * @module signer/sign
 * `verifyAndSign(request, deps)`: everything POST /sign does besides HTTP. It trusts nothing in
 * the request it can check itself, checks in the contract's order and stops at the first failure:
 *
 *   intent_tampered → policy_mismatch → approvals → rejected → policy_denied → protected →
 *   digest_mismatch → not_a_signer → key → chain → sign
 *
 * A wallet frozen by a restriction, or an intent cancelled by one, is refused (policy_denied) as
 * soon as the intent's content address is checked, and an approver a restriction names counts as
 * revoked (approvals); see restrictions.ts. An intent past its time to live is refused
 * (policy_denied) once its approvals are verified: the time to live is this signer's own (trust
 * file) and runs from the earliest time it can vouch for (lifetime.ts earliestKnownAt), never
 * from a created_at the control plane merely claims.
 *
 * `protect` is the control plane's claim, never an input on its own: the chain facts the guards
 * read come from this signer's driver and ledger endpoint (a protect that states them otherwise is
 * refused), burned and known addresses from its trust file and its own signing record, and
 * attestation and compliance from signed statements it verified (see README-signer.md).
 *
 * Every outcome (a signature, a refusal, a fault) is a receipt committed durably before the
 * function returns. Calls are serialised per state: the "never two live payloads for one intent"
 * rule and the receipt chain need one writer.
 */
import {
  approvalsUnderPolicy,
  canonicalize,
  checkFee,
  chainFactsDisagreement,
  earliestKnownAt,
  intentExpiresAt,
  isExpired,
  protectChainFacts,
  evaluatePolicy,
  formatUnits,
  policyWindows,
  preparePolicy,
  preverifyApprovals,
  type ApprovalVerdicts,
  type PolicySet,
  InternalError,
  intentId as computeIntentId,
  destinationAccount,
  normalizeDestination,
  normalizeIntent,
  policyDigest,
  runIntentGuards,
  sameAddress,
  sha256Hex,
  SignerRefusedError,
  toHex,
  VaultError,
  verifyApprovals,
  verifyStatements,
  walletMembers,
  type BuiltPayload,
  type ChainProtectFacts,
  type ChainDriver,
  type ChainSigner,
  type Curve,
  type Contribution,
  type DriverRegistry,
  type Finding,
  type HistoryEntry,
  type NormalizedIntent,
  type PayloadFate,
  type ProtectInputs,
  type RefusalReason,
  type ObserveRequest,
  type SignRequest,
  type SignResponse,
  type SignerRefusal,
} from '@vault/sdk';
import type { KeyBackend, KeyInfo, KeyScope } from './keystore.js';
import { scopeAllows } from './keystore.js';
import type { SignerState, StateEvent } from './state.js';
import { restrictedTrust, type Trust } from './trust.js';

export interface SignerDeps {
  /** The signer's own clock, integer Unix seconds. */
  now(): number;
  drivers: DriverRegistry<ChainDriver>;
  signers: DriverRegistry<ChainSigner>;
  trust: Trust;
  keys: KeyBackend;
  /** Durable receipts and signing history. */
  state: SignerState;
}

export type SignOutcome =
  | { ok: true; response: SignResponse }
  | { ok: false; refusal: SignerRefusal; receipt_head: string };

const queues = new WeakMap<SignerState, Promise<unknown>>();

/** Lets I/O callbacks (fdatasync completions, socket writes) run between queued jobs. */
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The longest the queue runs jobs back to back before it lets the event loop do I/O. */
export const SERIAL_SLICE_MS = 2;
const lastYield = new WeakMap<SignerState, number>();

/**
 * Runs `fn` after every earlier call on the same state has finished. Jobs run back to back, but
 * once the queue has kept the event loop for SERIAL_SLICE_MS the next job first yields to it: a
 * chain of promise callbacks alone would starve I/O, so a burst of requests would hold every
 * reply (and every fsync completion) until the whole burst was verified. Yielding before every
 * job instead costs a whole event-loop turn per request, which under load is most of the time
 * the queue waits.
 */
export function serialised<T>(state: SignerState, fn: () => Promise<T>): Promise<T> {
  const prev = queues.get(state) ?? Promise.resolve();
  const job = () => {
    const now = performance.now();
    const since = lastYield.get(state);
    if (since !== undefined && now - since < SERIAL_SLICE_MS) return fn();
    return yieldToIo().then(() => {
      lastYield.set(state, performance.now());
      return fn();
    });
  };
  const run = prev.then(job, job);
  queues.set(state, run.catch(() => undefined));
  return run;
}

/**
 * Pinned policies, prepared (validated, frozen) and hashed once, by their canonical JSON: a
 * signer sees its few pinned policies over and over, and canonicalising one costs a fraction of
 * preparing and hashing it. Only a policy whose digest is a pinned one is kept, so the map holds
 * nothing but the trust file's policies, in the forms they arrived in (at most PINNED_MAX, oldest
 * dropped first); preparePolicy is a function of the JSON value alone, so the same canonical JSON
 * always prepares to the same policy.
 */
const PINNED = new Map<string, { policy: Readonly<PolicySet>; digest: string }>();
const PINNED_MAX = 256;

function preparedPolicy(raw: unknown, pinnedDigest: string): { policy: Readonly<PolicySet>; digest: string } {
  const key = canonicalize(raw);
  const known = PINNED.get(key);
  if (known !== undefined) return known;
  const policy = preparePolicy(raw);
  const entry = { policy, digest: policyDigest(policy) };
  if (entry.digest === pinnedDigest) {
    if (PINNED.size >= PINNED_MAX) PINNED.delete(PINNED.keys().next().value as string);
    PINNED.set(key, entry);
  }
  return entry;
}

function refuse(reason: RefusalReason, message: string): never {
  throw new SignerRefusedError(reason, message);
}

/**
 * Verifies a SignRequest (already schema-validated) and signs the payload it rebuilt, or refuses.
 *
 * @example
 * const outcome = await verifyAndSign(request, deps)
 * if (outcome.ok) reply(200, outcome.response)
 * else reply(403, outcome.refusal)
 */
export async function verifyAndSign(request: SignRequest, deps: SignerDeps): Promise<SignOutcome> {
  // The approvals' signatures are checked first, concurrently and off the event loop (libuv's
  // thread pool), outside the lock: this decides nothing, it only has the verdicts ready, bound to
  // the exact bytes, when the checks below reach the approvals step in their order.
  // The ledger facts the guards need are read here too, for the same reason: a ledger round trip
  // inside the one-at-a-time section would hold every other request behind it.
  const [verdicts, facts] = await Promise.all([preverifyApprovals(request.approvals, deps.trust.approvers), readChainFacts(request, deps)]);
  // Checks and the journal write run one at a time; the fdatasync that makes the line durable
  // runs outside the lock, shared by every request committed meanwhile, and is awaited before
  // anything is returned.
  const { outcome, ticket, error } = await serialised(deps.state, async () => {
    try {
      const o = await verifyAndSignNow(request, deps, verdicts, facts);
      return { outcome: o, ticket: deps.state.ticket, error: undefined };
    } catch (e) {
      return { outcome: undefined, ticket: deps.state.ticket, error: e as unknown };
    }
  });
  await deps.state.durable(ticket);
  if (error !== undefined || outcome === undefined) throw error;
  return outcome;
}

async function verifyAndSignNow(req: SignRequest, deps: SignerDeps, verdicts: ApprovalVerdicts, facts: FactsRead | null): Promise<SignOutcome> {
  const now = deps.now();
  const events: StateEvent[] = [];
  const requestDigest = sha256Hex(canonicalize(req));
  try {
    const done = await check(req, deps, now, events, verdicts, facts);
    const receipt = deps.state.commit(
      {
        at: now,
        kind: done.repeat ? 'sign.repeated' : 'sign.signed',
        intentId: req.intent.id,
        body: {
          request: requestDigest,
          payload_digest: done.built.digest,
          signer_address: done.contribution.signer_address,
          public_key: done.contribution.public_key.hex,
          signature: done.contribution.signature.hex,
          summary: done.summary,
        },
      },
      events,
    );
    return {
      ok: true,
      response: { signature: done.contribution, backend: deps.keys.name, receipt_head: receipt.hash, warnings: done.warnings, summary: done.summary },
    };
  } catch (e) {
    if (e instanceof SignerRefusedError) {
      const refusal = e.toRefusal();
      const receipt = deps.state.commit(
        { at: now, kind: 'sign.refused', intentId: req.intent.id, body: { request: requestDigest, reason: refusal.refused.reason, message: refusal.message } },
        events,
      );
      return { ok: false, refusal, receipt_head: receipt.hash };
    }
    // A fault is on the record too, without its details (they may name internals).
    deps.state.commit({ at: now, kind: 'sign.fault', intentId: req.intent.id, body: { request: requestDigest, error: e instanceof VaultError ? e.code : 'fault' } }, events);
    throw e;
  }
}

interface Checked {
  built: BuiltPayload;
  contribution: Contribution;
  warnings: Finding[];
  summary: string;
  repeat: boolean;
}

/**
 * What this signer's own driver read from its own ledger for one intent of a trusted wallet, or
 * why it could not. Tagged with the intent id it was read for, so the checks only use it for that.
 */
type FactsRead = { intentId: string } & ({ ok: true; facts: ChainProtectFacts } | { ok: false; message: string });

/**
 * Reads the chain facts for a request's intent with the trusted descriptor of its wallet, or null
 * when the request names no intent, wallet or chain this signer could read for (the checks refuse
 * those before they need facts). Never throws: a ledger that cannot answer is a refusal later.
 */
async function readChainFacts(req: SignRequest, deps: Pick<SignerDeps, 'trust' | 'drivers'>): Promise<FactsRead | null> {
  let content: { normalized: NormalizedIntent; id: string };
  try {
    content = contentAddress(req, deps, deps.trust);
  } catch {
    return null;
  }
  const { normalized, id } = content;
  const trusted = deps.trust.wallet(normalized.wallet);
  if (!trusted || !deps.drivers.has(trusted.descriptor.chain)) return null;
  try {
    return { intentId: id, ok: true, facts: await deps.drivers.get(trusted.descriptor.chain).fetchProtectInputs({ intent: normalized, wallet: trusted.descriptor }) };
  } catch (e) {
    return { intentId: id, ok: false, message: e instanceof VaultError ? e.shortMessage : 'driver fault' };
  }
}

/**
 * The intent a request carries as the control plane stores it (normalised, its destination in the
 * one form for the wallet's chain) and its content address. Throws when it does not normalise.
 */
function contentAddress(req: ObserveRequest, deps: Pick<SignerDeps, 'drivers'>, trust: Trust): { normalized: NormalizedIntent; id: string } {
  let normalized = normalizeIntent(req.intent.request);
  const served = trust.wallet(normalized.wallet)?.descriptor.chain;
  if (served !== undefined && deps.drivers.has(served)) normalized = normalizeDestination(normalized, deps.drivers.get(served), served);
  return { normalized, id: computeIntentId(normalized) };
}

/** The wallet as this signer pinned it (its trust file). */
type TrustedWallet = NonNullable<ReturnType<Trust['wallet']>>;

/** What the first checks establish about a request: its intent's id and normalised form, and the pinned wallet. */
export interface IntentChecked {
  id: string;
  normalized: NormalizedIntent;
  trusted: TrustedWallet;
}

/**
 * intent_tampered, then the wallet: the id must be the content address of the request it carries,
 * the wallet one this signer serves (policy_mismatch) and not frozen (policy_denied). The first
 * checks of /sign and of /observe.
 */
export function checkIntent(req: ObserveRequest, deps: Pick<SignerDeps, 'drivers'>, trust: Trust, state: SignerState): IntentChecked {
  // intent_tampered: the id must be the content address of the request it carries, with its
  // destination in the one form the control plane gives it (so an address written another way,
  // or not an address of the chain, is not the intent the control plane created).
  let normalized: NormalizedIntent;
  let id: string;
  try {
    ({ normalized, id } = contentAddress(req, deps, trust));
  } catch (e) {
    return refuse('intent_tampered', `the intent request does not normalise: ${(e as Error).message}`);
  }
  if (id !== req.intent.id) refuse('intent_tampered', `intent id ${req.intent.id} is not the content address of its request (${id})`);

  // policy_mismatch: the wallet, its descriptor and its policy must be the ones this signer pinned.
  const trusted = trust.wallet(normalized.wallet);
  if (!trusted) return refuse('policy_mismatch', `this signer does not serve wallet ${normalized.wallet}`);
  // A frozen wallet is refused whatever the request carries: the signer's own deny, ahead of the rest.
  if (state.restrictions.wallets.has(normalized.wallet)) refuse('policy_denied', `wallet ${normalized.wallet} is frozen on this signer; only its operator can lift that`);
  // A cancelled intent is refused for good: the restriction is kept and no route lifts it.
  if (state.restrictions.intents.has(id)) refuse('policy_denied', `intent ${id} was cancelled; this signer never signs for it`);
  return { id, normalized, trusted };
}

/**
 * policy_mismatch: the wallet descriptor and the policy must be the ones pinned for the wallet, and
 * the policy's approvers known to the trust file with the same weights. Returns the policy,
 * prepared (validated, frozen).
 */
export function checkPinned(req: ObserveRequest, checked: IntentChecked, trust: Trust): Readonly<PolicySet> {
  const { normalized, trusted } = checked;
  if (canonicalize(req.wallet) !== trusted.canonical) {
    refuse('policy_mismatch', `the wallet descriptor of ${normalized.wallet} differs from this signer's trusted copy`);
  }
  let digest: string;
  let policy: Readonly<PolicySet>;
  try {
    // Validated once, then frozen: the digest and the evaluation below read the same object.
    ({ policy, digest } = preparedPolicy(req.policy, trusted.policyDigest));
  } catch (e) {
    return refuse('policy_mismatch', `the policy is not valid: ${(e as Error).message}`);
  }
  if (digest !== req.policy_digest) refuse('policy_mismatch', `the policy hashes to ${digest}, not to policy_digest ${req.policy_digest}`);
  if (digest !== trusted.policyDigest) refuse('policy_mismatch', `policy ${digest} is not the policy pinned for ${normalized.wallet} (${trusted.policyDigest})`);
  for (const [i, rule] of req.policy.rules.entries()) {
    if (rule.rule !== 'approval_threshold') continue;
    for (const a of rule.approvers) {
      const known = trust.approvers.get(a.id);
      if (!known || known.weight !== a.weight) {
        refuse('policy_mismatch', `${rule.rule}[${i}] gives approver ${a.id} weight ${a.weight}; the trust file ${known ? `says ${known.weight}` : 'does not know it'}`);
      }
    }
  }
  return policy;
}

async function check(req: SignRequest, deps: SignerDeps, now: number, events: StateEvent[], verdicts: ApprovalVerdicts, facts: FactsRead | null): Promise<Checked> {
  const { state } = deps;
  // The trust file as the restrictions in force leave it: an approver they name is revoked.
  const trust = restrictedTrust(deps.trust, state.restrictions);

  const checked = checkIntent(req, deps, trust, state);
  const { id, normalized, trusted } = checked;
  // First sight is recorded for any request past the wallet checks, even one refused below (a
  // timelock then counts from here; see observe.ts for the route that only does this).
  if (state.firstSeen(id) === undefined) events.push({ t: 'seen', intentId: id, at: now });
  const policy = checkPinned(req, checked, trust);

  // approvals: every approval must verify against the signer's own approver keys.
  // Dated between the intent's claimed creation and this signer's clock (each +- the skew), and
  // younger than the wallet's approval age.
  // Consent given under the wallet's previous policy is not consent under this one: approvals
  // dated before the change set that changed it took effect (its ready_at) do not count.
  const verified = verifyApprovals(approvalsUnderPolicy(req.approvals, trusted.policySince).kept, {
    intentId: id,
    approvers: trust.approvers,
    initiator: normalized.initiator,
    window: { createdAt: req.intent.created_at, now, maxAgeSeconds: trusted.lifetime.approval_max_age_seconds },
    verdicts,
  });
  if (verified.problems.length > 0) {
    const p = verified.problems[0] as (typeof verified.problems)[number];
    refuse('approvals', `approval ${p.index} (${p.approver_id ?? 'unknown'}): ${p.reason}: ${p.message}${verified.problems.length > 1 ? ` (and ${verified.problems.length - 1} more)` : ''}`);
  }
  const reject = verified.valid.find((a) => a.verdict === 'reject');
  if (reject) refuse('rejected', `approver ${reject.approver_id} rejected this intent at ${reject.at}`);

  // Expired: the time to live runs from the earliest time this signer can vouch the intent
  // existed (the claim, its own first sight, the approvals' signed dates). A control plane that
  // claims a later created_at moves nothing: it only ever makes the intent older.
  const since = earliestKnownAt({ claimed: req.intent.created_at, firstSeen: state.firstSeen(id), approvals: verified.valid });
  const expiresAt = intentExpiresAt(since, trusted.lifetime.ttl_seconds);
  if (isExpired(expiresAt, now)) refuse('policy_denied', `intent ${id} expired at ${expiresAt} (known to this signer since ${since}, time to live ${trusted.lifetime.ttl_seconds}s)`);

  // policy_denied: the policy, re-run on the signer's clock and the signer's own history. A
  // timelock counts from the later of the claimed created_at and when this signer first saw the
  // intent: the control plane cannot backdate its way past a timelock. Attestation and compliance
  // are what the statements this signer verified say, whatever protect's two flags claim.
  const statements = verifyStatements(req.protect.statements ?? [], {
    policy,
    wallet: normalized.wallet,
    chain: trusted.descriptor.chain,
    destination: normalized.destination,
    now,
  });
  const seenAt = state.firstSeen(id) ?? now;
  const createdAt = Math.max(req.intent.created_at, seenAt);
  const decision = evaluatePolicy(policy, normalized, {
    now,
    created_at: createdAt,
    intentId: id,
    history: state.historyFor(normalized.wallet, now, policyWindows(policy), id),
    // As they count: a strong_auth without a verifying passkey assertion counts as weak here.
    approvals: verified.counted,
    compliance_cleared: statements.compliance_cleared,
    attestation_valid: statements.attestation_valid,
    // The account a tagged destination pays, read by this signer's own driver (a signer without
    // one refuses below, `chain`).
    ...(deps.drivers.has(trusted.descriptor.chain) ? { destination_account: destinationAccount(deps.drivers.get(trusted.descriptor.chain), trusted.descriptor.chain, normalized.destination) } : {}),
  });
  if (decision.decision !== 'allow') {
    const extra = decision.decision === 'delay' ? ` (not before ${decision.not_before}; this signer counts from ${createdAt})` : '';
    const unproven = statements.problems.length > 0 ? ` (statements not counted: ${statements.problems.map((p) => `${p.index}: ${p.message}`).join('; ')})` : '';
    refuse('policy_denied', `policy says ${decision.decision}${extra}: ${decision.reasons.join('; ')}${unproven}`);
  }

  // protected: the guards, on inputs this signer holds or read itself. Chain facts: its own
  // driver's read of its own ledger, and a protect that states them otherwise is refused. Burned:
  // the trust file's list and the request's together (a longer list only blocks more). Known
  // destinations: the trust file's and those this signer has signed for on the wallet, never the
  // request's (a longer list only silences the poisoning guard).
  const chain = trusted.descriptor.chain;
  if (!deps.drivers.has(chain)) refuse('chain', `no driver for chain ${chain} is loaded in this signer`);
  const driver = deps.drivers.get(chain);
  const read = facts !== null && facts.intentId === id ? facts : await readChainFacts(req, deps);
  if (read === null || !read.ok) {
    refuse('protected', `this signer cannot read the chain facts its guards need from its ledger: ${read?.ok === false ? read.message : 'no read'}`);
  }
  const lie = chainFactsDisagreement(req.protect, read.facts);
  if (lie !== null) refuse('protected', `protect disagrees with this signer's ledger: ${lie}`);
  const protect: ProtectInputs = {
    known_destinations: [...trust.knownDestinations, ...state.destinationsFor(normalized.wallet)],
    burned: [...trust.burned, ...req.protect.burned],
    ...protectChainFacts(read.facts),
    compliance_cleared: statements.compliance_cleared,
    attestation_valid: statements.attestation_valid,
  };
  const guards = runIntentGuards({ intent: normalized, wallet: trusted.descriptor, protect, driver, registry: trust.registry });
  if (guards.blocked) {
    refuse('protected', guards.findings.filter((f) => f.severity === 'block').map((f) => `${f.guard}: ${f.detail}`).join('; '));
  }

  // digest_mismatch: rebuild the payload ourselves; sign only what we built.
  let built: BuiltPayload;
  try {
    built = driver.buildPayload({ intent: normalized, wallet: trusted.descriptor, params: req.params });
  } catch (e) {
    if (e instanceof VaultError && e.code !== -32603) {
      return refuse('digest_mismatch', `the driver cannot build a payload from this request: ${e.shortMessage}`);
    }
    throw e;
  }
  const expected = req.expected_payload_digest.replace(/^0x/, '');
  const rebuilt = built.digest.toLowerCase().replace(/^0x/, '');
  if (rebuilt !== expected) refuse('digest_mismatch', `the rebuilt payload hashes to ${rebuilt}, not to expected_payload_digest ${expected}`);

  // not_a_signer: the address must be a member of the wallet and controlled by a key we hold.
  const { members } = walletMembers(trusted.descriptor);
  const member = members.find((m) => sameAddress(m.address, req.signer_address));
  if (!member) refuse('not_a_signer', `${req.signer_address} is not a signer of ${normalized.wallet}`);
  if (!deps.signers.has(chain)) refuse('chain', `no signing driver for chain ${chain} is loaded in this signer`);
  const chainSigner = deps.signers.get(chain);
  const held = deps.keys.list().filter((k) => controls(chainSigner, chain, k, member.address));
  if (held.length === 0) refuse('not_a_signer', `no key of this signer controls ${member.address}`);

  // key: the right curve, in scope, unlocked.
  const key = held[0] as KeyInfo;
  if (key.curve !== member.curve) refuse('key', `${member.address} is a ${member.curve} signer; the key held for it is ${key.curve}`);
  const scope: KeyScope[] = [key.scope, trust.keyScope(key.publicKeyHex) ?? {}];
  if (!scope.every((s) => scopeAllows(s, normalized.wallet, chain))) {
    refuse('key', `key ${key.id} is out of scope for wallet ${normalized.wallet} on ${chain}`);
  }
  const signingKey = deps.keys.signingKey(key.publicKeyHex);
  if (!signingKey) refuse('key', `key ${key.id} is locked`);

  // chain: the most the payload we rebuilt can pay in fees, as its driver reads it from the payload,
  // must be within the trust file's max_fee, else the driver's own conservative default. A driver
  // that cannot state or bound the fee gets no signature: the control plane chose the params.
  const fee = checkFee(driver, built, trusted.maxFee);
  if (!fee.ok) refuse('chain', `${fee.message} (wallet ${normalized.wallet})`);

  // chain: one live payload per intent. Re-signing the same payload is idempotent; a different
  // one only once every earlier payload is provably dead on the ledger.
  const earlier = state.signedFor(id);
  const repeat = earlier.some((p) => p.digest === built.digest);
  if (!repeat) {
    for (const p of earlier) {
      if (p.dead) continue;
      const fate = await fateOf(driver, p.chain, { payload: p.payload, digest: p.digest, summary: p.summary });
      if (fate.fate !== 'dead') {
        refuse('chain', `payload ${p.digest} was already signed for ${id} and is ${fate.fate} on the ledger (${fate.code}); refusing a second payload`);
      }
      events.push({ t: 'dead', intentId: id, digest: p.digest, at: now, code: fate.code });
    }
  }

  let contribution: Contribution;
  try {
    contribution = await chainSigner.signPayload({ built, key: signingKey, signerAddress: member.address });
  } catch (e) {
    if (e instanceof SignerRefusedError) throw e;
    if (e instanceof VaultError && e.code !== -32603) return refuse('key', `the driver could not sign with key ${key.id}: ${e.shortMessage}`);
    throw e;
  }
  if (!sameAddress(contribution.signer_address, member.address) || contribution.public_key.hex !== key.publicKeyHex) {
    throw new InternalError(`driver ${chainSigner.name} returned a contribution for another key`);
  }

  const summary = summarize(normalized, chain);
  const history: HistoryEntry = {
    intentId: id,
    created_at: now,
    amount: normalized.amount,
    status: 'allowed',
    initiator: normalized.initiator,
    op: normalized.operation.op,
    ...(normalized.asset_symbol !== undefined ? { asset_symbol: normalized.asset_symbol } : {}),
    ...(normalized.asset_issuer !== undefined ? { asset_issuer: normalized.asset_issuer } : {}),
  };
  events.push({
    t: 'signed',
    intentId: id,
    wallet: normalized.wallet,
    chain,
    at: now,
    digest: built.digest,
    payload: built.payload,
    summary: built.summary,
    signer_address: member.address,
    contribution,
    history,
    destination: normalized.destination,
  });
  return { built, contribution, warnings: guards.warnings, summary, repeat };
}

/**
 * Addresses derived from this signer's keys, per chain signer: `chain, curve, public key` to the
 * address, or null where the family does not take the key. An address is a function of the public
 * key, and deriving one costs hashing and, for secp256k1, decompressing the point, on every
 * request otherwise. The keys are the keystore's few, so the map stays small; it is bounded anyway.
 */
const derived = new WeakMap<ChainSigner, Map<string, string | null>>();
const DERIVED_MAX = 1024;

function controls(signer: ChainSigner, chain: string, key: KeyInfo, address: string): boolean {
  let memo = derived.get(signer);
  if (memo === undefined) derived.set(signer, (memo = new Map()));
  // Keyed by the bytes it is derived from (not the backend's hex label of them).
  const id = `${chain}\n${key.curve}\n${toHex(key.publicKey)}`;
  let own = memo.get(id);
  if (own === undefined) {
    try {
      own = signer.deriveAddress({ chain, publicKey: key.publicKey, curve: key.curve });
    } catch {
      own = null;
    }
    if (memo.size >= DERIVED_MAX) memo.delete(memo.keys().next().value as string);
    memo.set(id, own);
  }
  return own !== null && sameAddress(own, address);
}

/**
 * Asks the ledger, through the signer's own driver, what became of an earlier payload (its
 * required `payloadFate`, looked up by the payload itself). A ledger that cannot answer refuses
 * (`chain`): never a second payload on a guess.
 */
async function fateOf(driver: ChainDriver, chain: string, built: BuiltPayload): Promise<PayloadFate> {
  try {
    return await driver.payloadFate({ chain, built });
  } catch (e) {
    return refuse('chain', `cannot establish on the ledger whether payload ${built.digest} is dead: ${e instanceof VaultError ? e.shortMessage : 'driver fault'}`);
  }
}

const VERBS: Record<NormalizedIntent['operation']['op'], string> = {
  transfer: 'send',
  issue: 'issue',
  clawback: 'claw back',
  authorize_holder: 'authorize holder for',
  mpt_create: 'create token',
  account_flags: 'set account flags on',
  contract_call: 'call contract',
};

/**
 * One line a human can check against what they approved.
 *
 * @example
 * summarize(normalizeIntent({ wallet: 'w', destination: 'rYYY', amount: '1250', asset_symbol: 'USD', asset_issuer: 'rXXX', asset_decimals: 2 }), 'xrpl:testnet')
 * // 'send 12.5 USD.rXXX to rYYY on xrpl:testnet'
 */
export function summarize(intent: NormalizedIntent, chain: string): string {
  const op = intent.operation;
  const asset = intent.asset_symbol === undefined ? 'native' : intent.asset_issuer === undefined ? intent.asset_symbol : `${intent.asset_symbol}.${intent.asset_issuer}`;
  const amount = `${formatUnits(intent.amount, intent.asset_decimals)} ${asset}`;
  switch (op.op) {
    case 'transfer':
    case 'issue':
      return `${VERBS[op.op]} ${amount} to ${intent.destination} on ${chain}`;
    case 'clawback':
      return `claw back ${amount} from ${intent.destination} on ${chain}`;
    case 'authorize_holder':
      return `${op.revoke ? 'revoke' : 'authorize'} holder ${intent.destination} of ${asset} on ${chain}`;
    case 'mpt_create':
      return `create token (scale ${op.asset_scale}, flags 0x${op.flags.toString(16)}) from ${intent.wallet} on ${chain}`;
    case 'account_flags':
      return `set account flags (set ${op.set ?? '-'}, clear ${op.clear ?? '-'}) on ${intent.wallet} on ${chain}`;
    case 'contract_call':
      return `call contract ${intent.destination} with ${amount} (${(op.data_hex.length - 2) / 2} bytes of data) on ${chain}`;
  }
}

/** Public facts about the keys, as GET /keys shows them (never a secret). */
/**
 * A public key's address on every chain of `signers` whose family takes its curve (an XRPL chain
 * takes both curves, a Stellar chain ed25519, an EVM chain secp256k1).
 */
export function deriveAddresses(signers: Pick<DriverRegistry<ChainSigner>, 'chains' | 'get'>, publicKey: Uint8Array, curve: Curve): Record<string, string> {
  const addresses: Record<string, string> = {};
  for (const chain of signers.chains()) {
    try {
      addresses[chain] = signers.get(chain).deriveAddress({ chain, publicKey, curve });
    } catch {
      // this chain's family does not take this curve
    }
  }
  return addresses;
}

export function describeKeys(deps: Pick<SignerDeps, 'keys' | 'trust' | 'signers'>): unknown[] {
  return deps.keys.list().map((k) => {
    const trustScope = deps.trust.keyScope(k.publicKeyHex);
    const addresses = deriveAddresses(deps.signers, k.publicKey, k.curve);
    return {
      id: k.id,
      curve: k.curve,
      public_key: toHex(k.publicKey),
      backend: deps.keys.name,
      unlocked: k.unlocked,
      scope: { key_file: k.scope, trust_file: trustScope ?? null },
      addresses,
    };
  });
}
