/**
 * @module driver/tally
 * The one quorum tally behind every driver's `assemble`: which contributions count, for whom, with
 * what weight, and why the others do not. A driver supplies only what its ledger decides: whether
 * one contribution's key and signature are good for the payload (`verify`), and how the counted
 * ones become a submittable blob (`encode`). Membership, one count per member, weights, `missing`
 * and `invalid` are decided here, once, so every driver answers the same input the same way.
 *
 * Contributions arrive from signers over the network: each is checked against ContributionSchema
 * first, so a null, a wrong type or an extra member is listed `malformed`, never thrown.
 */
import { canonicalize } from '../canonical.js';
import { ValidationError } from '../errors.js';
import { ContributionSchema, type Contribution } from '../schemas/sign.js';
import { walletMembers, type SignerDesc, type WalletDescriptor } from '../schemas/wallet.js';
import type { AssembleResult } from './types.js';

/**
 * Why a contribution was not counted. A contract: callers branch on it, so it only grows.
 *
 * - `malformed`: not a Contribution (null, wrong types, missing or extra members);
 * - `not_a_member`: its signer_address is not a member of the wallet;
 * - `wrong_key`: its public key is not the member's (wrong curve, wrong length, another key);
 * - `bad_signature`: the key is the member's but the signature is not over this payload
 *   (wrong encoding, wrong length, does not verify);
 * - `duplicate`: the member already has a counted contribution (each member counts once).
 */
export const CONTRIBUTION_REJECTIONS = ['malformed', 'not_a_member', 'wrong_key', 'bad_signature', 'duplicate'] as const;
export type ContributionRejection = (typeof CONTRIBUTION_REJECTIONS)[number];

/** More contributions than this is a caller's fault, not a signer's: refused before any is verified. */
export const MAX_CONTRIBUTIONS = 256;

const MAX_DETAIL = 300;

/** What a driver's `verify` answers for a contribution that does not count: only what the ledger can tell. */
export interface ContributionProblem {
  reason: Extract<ContributionRejection, 'wrong_key' | 'bad_signature'>;
  /** One line a human can act on ("signature does not verify over the multisigning data"). */
  detail: string;
}

/** A contribution that was not counted. */
export interface InvalidContribution {
  /** Its position in the contributions given to assemble. */
  index: number;
  /** Its signer_address, when it carried a readable one (a string of at most 256 characters). */
  address?: string;
  reason: ContributionRejection;
  detail: string;
}

/** A contribution that counts, with the wallet's record of its member. */
export interface CountedContribution {
  /** Its position in the contributions given to assemble. */
  index: number;
  member: SignerDesc;
  contribution: Contribution;
}

export interface TallyInput {
  /** As received: anything, since each one is checked here. */
  contributions: readonly unknown[];
  wallet: WalletDescriptor;
  /**
   * The ledger's check of one well-formed contribution from `member`: that its key controls
   * `member.address` (the wallet's record, not the contribution's claim) and that its signature is
   * over this payload. Null when it counts. A throw counts as `bad_signature`: it never counts.
   */
  verify: (contribution: Contribution, member: SignerDesc) => ContributionProblem | null;
  /** Weight needed. Default: the wallet's quorum (Stellar passes its threshold class's weight). */
  quorum?: number;
  /**
   * The form addresses are compared in (EVM: lowercase, since a checksum is only a spelling).
   * Default: exactly as written, since base58 and StrKey addresses are case-sensitive.
   */
  addressKey?: (address: string) => string;
  /**
   * Results of `verify` kept from earlier tallies of the same payload (see {@link ContributionMemo}):
   * a contribution already checked for the same member is not verified again. Used only with
   * `memoKey`.
   */
  memo?: ContributionMemo;
  /**
   * What identifies everything `verify` reads besides the contribution and its member: the
   * payload's digest, once the driver has checked that it is the digest of the payload it verifies
   * against. A memo first used under another key (another payload, chain or wallet) is ignored.
   */
  memoKey?: string;
}

/**
 * The verification results of one payload's contributions, kept across `assemble` calls: the
 * control plane assembles each signer's contribution as it arrives, so the signatures are checked
 * while it waits for the slowest signer, and the final `assemble` finds them checked. Bound to the
 * first payload (chain, wallet and `memoKey`) it is used with; under any other it is ignored, so a
 * result can never be carried over to a payload it was not computed for. At most
 * {@link MAX_CONTRIBUTIONS} results are kept.
 *
 * @example
 * const memo = new ContributionMemo()
 * driver.assemble({ built, contributions: [first], wallet, memo }) // verifies `first`
 * driver.assemble({ built, contributions: [first, second], wallet, memo }) // verifies only `second`
 */
export class ContributionMemo {
  /** Nominal: the results live in this module only, so no caller can write one in. */
  declare readonly brand: 'ContributionMemo';
}

const memoState = new WeakMap<ContributionMemo, { binding: string; results: Map<string, ContributionProblem | null> }>();

/** The results of `memo` for `binding`, or null when the memo belongs to another payload. */
function memoResults(memo: ContributionMemo, binding: string): Map<string, ContributionProblem | null> | null {
  let state = memoState.get(memo);
  if (!state) memoState.set(memo, (state = { binding, results: new Map() }));
  return state.binding === binding ? state.results : null;
}

export interface Tally {
  /** The counted contributions, one per member, in the wallet's member order (never arrival order). */
  counted: CountedContribution[];
  /** Total weight of the counted members. */
  weight: number;
  quorum: number;
  /** Members without a counted contribution, in wallet order: they still need to sign. */
  missing: { address: string; weight: number }[];
  /** Every contribution not counted, in the order given. */
  invalid: InvalidContribution[];
}

/**
 * Counts contributions against a wallet: each is schema-checked, matched to a member, checked by
 * the driver's `verify`, and counted once per member (the first that verifies; later ones are
 * `duplicate`). Pure: no I/O, and the same input gives the same tally.
 *
 * @example
 * const tally = tallyContributions({
 *   contributions, wallet,
 *   verify: (c, member) => (ed25519Ok(c, member) ? null : { reason: 'bad_signature', detail: 'signature does not verify' }),
 * })
 * tally.weight >= tally.quorum // ready to encode tally.counted
 */
export function tallyContributions(input: TallyInput): Tally {
  const { contributions, wallet, verify } = input;
  if (!Array.isArray(contributions)) {
    throw new ValidationError('contributions', [{ path: '', message: 'contributions must be an array' }]);
  }
  if (contributions.length > MAX_CONTRIBUTIONS) {
    throw new ValidationError('contributions', [{ path: '', message: `at most ${MAX_CONTRIBUTIONS} contributions, got ${contributions.length}` }]);
  }
  const { members, quorum: walletQuorum } = walletMembers(wallet);
  const quorum = input.quorum ?? walletQuorum;
  const key = input.addressKey ?? ((a: string) => a);
  const byAddress = new Map(members.map((m) => [key(m.address), m]));
  const countedBy = new Map<SignerDesc, CountedContribution>();
  const invalid: InvalidContribution[] = [];
  // Newlines cannot occur in a chain, a wallet id or a hex digest: the parts cannot run together.
  const memo = input.memo && input.memoKey !== undefined ? memoResults(input.memo, `${wallet.chain}\n${wallet.wallet}\n${input.memoKey}`) : null;

  contributions.forEach((raw, index) => {
    const address = readableAddress(raw);
    // Details can echo what a signer sent (a key name, an error message): bounded.
    const reject = (reason: ContributionRejection, detail: string) =>
      invalid.push({ index, ...(address !== undefined ? { address } : {}), reason, detail: detail.slice(0, MAX_DETAIL) });
    const parsed = ContributionSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return reject('malformed', `not a Contribution: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
    }
    const c = parsed.data;
    const member = byAddress.get(key(c.signer_address));
    if (!member) return reject('not_a_member', `${c.signer_address} is not a member of wallet ${wallet.wallet}`);
    if (c.public_key.curve !== member.curve) return reject('wrong_key', `curve ${c.public_key.curve} is not the member's curve ${member.curve}`);
    // The member as the wallet records it and the whole contribution: everything verify reads but the payload.
    const memoEntry = memo ? canonicalize([member.address, member.curve, c]) : '';
    let problem: ContributionProblem | null | undefined = memo?.get(memoEntry);
    if (problem === undefined) {
      try {
        problem = verify(c, member);
      } catch (cause) {
        // Fail closed: a contribution the driver cannot check is not counted, and says why.
        problem = { reason: 'bad_signature', detail: `could not be checked: ${(cause as Error)?.message ?? String(cause)}` };
      }
      if (memo && memo.size < MAX_CONTRIBUTIONS) memo.set(memoEntry, problem);
    }
    if (problem) return reject(problem.reason, problem.detail);
    if (countedBy.has(member)) return reject('duplicate', `${member.address} already contributed (contribution ${countedBy.get(member)?.index})`);
    countedBy.set(member, { index, member, contribution: c });
  });

  const counted = members.flatMap((m) => countedBy.get(m) ?? []);
  return {
    counted,
    weight: counted.reduce((sum, c) => sum + c.member.weight, 0),
    quorum,
    missing: members.filter((m) => !countedBy.has(m)).map((m) => ({ address: m.address, weight: m.weight })),
    invalid,
  };
}

/** What {@link assembleContributions} takes: the tally's input and the ledger's encoder. */
export interface AssembleContributionsInput extends TallyInput {
  /**
   * The submittable blob from the counted contributions (one per member, in wallet order), called
   * only at quorum. The driver orders signatures as its ledger requires and, where a ledger refuses
   * signatures it does not need (Stellar), picks the ones to attach.
   */
  encode: (counted: readonly CountedContribution[], quorum: number) => { blob: string; txHash: string };
}

/**
 * A driver's whole `assemble` after its payload checks: the tally, then `encode` at quorum, or
 * `short_of_quorum` with what is missing and what was not counted.
 *
 * @example
 * assemble({ built, contributions, wallet }) {
 *   const payload = payloadOf(built, wallet) // the driver's own checks of the payload against the wallet
 *   return assembleContributions({ contributions, wallet, verify: (c, m) => problemOf(payload, c, m), encode: (counted) => encodeTx(payload, counted) })
 * }
 */
export function assembleContributions(input: AssembleContributionsInput): AssembleResult {
  const { counted, weight, quorum, missing, invalid } = tallyContributions(input);
  if (weight < quorum) return { ok: false, reason: 'short_of_quorum', weight, quorum, missing, invalid };
  const { blob, txHash } = input.encode(counted, quorum);
  return { ok: true, blob, txHash, weight, quorum };
}

/** The signer_address of anything, when it is a string short enough to repeat back. */
function readableAddress(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const address = (raw as { signer_address?: unknown }).signer_address;
  return typeof address === 'string' && address.length <= 256 ? address : undefined;
}
