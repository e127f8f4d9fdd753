/**
 * @module signer/trust
 * The signer's own trust file: the wallets it serves (descriptors) with the policy digest pinned
 * for each, the approvers whose signatures count (public key, weight, revoked), the scope of each
 * key, an optional canonical asset registry for the counterfeit guard, the burned addresses and
 * known destinations the burned_key and address_poisoning guards read, and optionally the driver
 * modules to load (with their ledger endpoints: the chain facts the guards need are read there). It is written by the operator, never taken from the control plane: every
 * SignRequest is checked against it.
 */
import {
  AdminPolicySchema,
  ApproverPasskeySchema,
  AssetSpecSchema,
  governanceAfter,
  policyDigest,
  walletsChangedBy,
  UnixSecondsSchema,
  type AdminPolicy,
  type ChangeSet,
  canonicalize,
  deepFreeze,
  DigestSchema,
  intentLifetime,
  IntentLifetimeSchema,
  parseWith,
  restrictApprovers,
  ValidationError,
  WalletDescriptorSchema,
  type ApproverKey,
  type AssetRegistry,
  type IntentLifetime,
  type RestrictionIndex,
  type WalletDescriptor,
} from '@vault/sdk';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { KeyScopeSchema, type KeyScope } from './keystore.js';

/** One driver module to load: `module` exports `createDriver(options)` and `createSigner(options)`. */
export const DriverModuleSchema = z.strictObject({
  module: z.string().min(1).max(1024),
  options: z.record(z.string(), z.unknown()).optional(),
});
export type DriverModuleConfig = z.infer<typeof DriverModuleSchema>;

export const DriversConfigSchema = z.strictObject({
  drivers: z.array(DriverModuleSchema).max(64),
});
export type DriversConfig = z.infer<typeof DriversConfigSchema>;

export const TrustFileSchema = z
  .strictObject({
    format: z.literal('vault-signer-trust').describe('Constant tag of this file.'),
    version: z.literal(1),
    wallets: z
      .array(
        z.strictObject({
          descriptor: WalletDescriptorSchema.describe('The wallet exactly as the signer expects SignRequest.wallet to be.'),
          policy_digest: DigestSchema.describe('sha256(JCS(PolicySet)) of the only policy the signer accepts for this wallet.'),
          max_fee: z
            .union([z.int().min(0), z.string().regex(/^(0|[1-9][0-9]{0,77})$/, 'max_fee as a string is a decimal integer')])
            .optional()
            .describe(
              "Largest total fee the signer signs for, in the driver's fee unit (xrpl: the transaction's Fee in drops, base fee x (1 + signers); stellar: the fee bid in stroops; evm_safe: the wei the Safe itself pays out, a gas refund). A decimal string when past 2^53. Absent: the driver's own conservative default. A compromised control plane chooses params and their digest together: this caps what it can burn in fees.",
            ),
          policy_since: UnixSecondsSchema.optional().describe(
            'Approvals of this wallet\'s intents dated before this time do not count: the ready_at of the change set that last changed its policy (a change set sets it; an operator need not).',
          ),
          lifetime: IntentLifetimeSchema.optional().describe(
            "How long this wallet's intents live and how old an approval may be, as this signer enforces them (absent: 7 days and 3 days). The signer counts the time to live from the earliest time it can vouch for: the claimed created_at, its own first sight of the intent, or the date of any approval it verified.",
          ),
        }),
      )
      .max(1024)
      .describe('May start empty: `vault provision` adds each wallet it sets up. A signer refuses every request for a wallet it does not list.'),
    approvers: z
      .array(
        z.strictObject({
          id: z.string().min(1).max(128),
          public_key: z.string().regex(/^[0-9a-f]{64}$/, 'approver public_key is a 32-byte ed25519 key as lowercase hex'),
          weight: z.int().min(1).max(1_000_000).describe('Must equal the weight any pinned policy gives this approver.'),
          revoked: z.boolean().optional(),
          passkey: ApproverPasskeySchema
            .optional()
            .describe(
              "The approver's passkey as registered at pairing (the control plane's device record: GET /devices), with the origins its assertions may come from. Without it, every approval of this approver counts as weak (strong_auth false) on this signer.",
            ),
        }),
      )
      .max(1024),
    keys: z
      .array(
        z.strictObject({
          public_key: z.string().regex(/^[0-9a-f]+$/),
          scope: KeyScopeSchema,
        }),
      )
      .max(1024)
      .optional()
      .describe('Scope per key (intersected with the scope in the key file). A key not listed keeps its key-file scope.'),
    assets: z
      .strictObject({ assets: z.array(AssetSpecSchema).max(10000), reserved: z.array(z.string().max(64)).max(10000) })
      .optional()
      .describe('Canonical asset registry for the counterfeit_asset guard.'),
    burned: z
      .array(z.string().min(1).max(256))
      .max(10000)
      .optional()
      .describe('Addresses whose keys are known burned (burned_key guard). The signer adds the ones a request names; a request can never remove one of these.'),
    known_destinations: z
      .array(z.string().min(1).max(256))
      .max(10000)
      .optional()
      .describe('Destinations this signer treats as known (address_poisoning guard), besides those it has signed for. The control plane\'s list is not used.'),
    drivers: z.array(DriverModuleSchema).max(64).optional(),
    governance: AdminPolicySchema.optional().describe(
      'The admin keys, threshold and delay whose signed change sets this signer takes on live (POST /governance/changes), and the governance version this file is at. Set once with `vault-signer admins`; later versions come from change sets, journaled, so a restart on an older file never rolls back.',
    ),
  })
  .superRefine((t, ctx) => {
    const wallets = new Set<string>();
    t.wallets.forEach((w, i) => {
      if (wallets.has(w.descriptor.wallet)) ctx.addIssue({ code: 'custom', path: ['wallets', i, 'descriptor', 'wallet'], message: `wallet ${w.descriptor.wallet} is listed twice` });
      wallets.add(w.descriptor.wallet);
    });
    const ids = new Set<string>();
    t.approvers.forEach((a, i) => {
      if (ids.has(a.id)) ctx.addIssue({ code: 'custom', path: ['approvers', i, 'id'], message: `approver ${a.id} is listed twice` });
      ids.add(a.id);
    });
  });
export type TrustFile = z.infer<typeof TrustFileSchema>;

/** The trust file, indexed for the checks /sign makes. */
export interface Trust {
  readonly file: TrustFile;
  /** A trusted wallet: its descriptor (deep-frozen) and that descriptor's canonical JSON, worked out once. */
  wallet(id: string): { descriptor: WalletDescriptor; canonical: string; policyDigest: string; maxFee: bigint | undefined; lifetime: IntentLifetime; policySince: number | undefined } | undefined;
  readonly approvers: ReadonlyMap<string, ApproverKey & { weight: number }>;
  /** The trust file's scope for a key, or undefined when it does not list the key. */
  keyScope(publicKeyHex: string): KeyScope | undefined;
  readonly registry: AssetRegistry | undefined;
  /** The trust file's burned addresses. */
  readonly burned: readonly string[];
  /** The trust file's known destinations. */
  readonly knownDestinations: readonly string[];
  /** The admin policy and governance version in force (undefined: no change set is accepted). */
  readonly governance: AdminPolicy | undefined;
}

/**
 * Validates a trust document (a ValidationError names the failing field, prefixed `trust.`).
 *
 * @example
 * const trust = parseTrust(JSON.parse(readFileSync('trust.json', 'utf8')))
 */
export function parseTrust(doc: unknown): Trust {
  const file = parseWith(TrustFileSchema, doc, 'trust');
  const wallets = new Map(
    file.wallets.map((w) => [w.descriptor.wallet, { descriptor: deepFreeze(w.descriptor), canonical: canonicalize(w.descriptor), policyDigest: w.policy_digest, maxFee: w.max_fee === undefined ? undefined : BigInt(w.max_fee), lifetime: intentLifetime(w.lifetime), policySince: w.policy_since }]),
  );
  const approvers = new Map(
    file.approvers.map((a) => [a.id, { publicKey: a.public_key, revoked: a.revoked ?? false, weight: a.weight, ...(a.passkey ? { passkey: a.passkey } : {}) }]),
  );
  const scopes = new Map((file.keys ?? []).map((k) => [k.public_key, k.scope]));
  return {
    file,
    wallet: (id) => wallets.get(id),
    approvers,
    keyScope: (pk) => scopes.get(pk),
    registry: file.assets,
    burned: Object.freeze([...(file.burned ?? [])]),
    knownDestinations: Object.freeze([...(file.known_destinations ?? [])]),
    governance: file.governance,
  };
}

/**
 * The trust file once a change set the admins approved has applied (checkChangeSet said ok): the
 * ops that concern a signer (policies, as the pinned digest; approvers with their weights and
 * passkeys; wallet descriptors; the admin policy) and the next governance version. A wallet whose
 * policy changed gets `policy_since = readyAt`. Ops for the control plane alone (device roles,
 * signer endpoints, assets, webhooks) change nothing here. Pure: the caller journals the change
 * and swaps the trust it serves with.
 *
 * @example
 * const next = trustAfterChange(deps.trust, check.change, check.ready_at)
 */
export function trustAfterChange(trust: Trust, change: ChangeSet, readyAt: number): Trust {
  if (trust.governance === undefined) throw new ValidationError('trust.governance', [{ path: '', message: 'this signer has no admin policy' }]);
  const file: TrustFile = structuredClone(trust.file);
  for (const op of change.ops) {
    switch (op.op) {
      case 'set_policy': {
        const w = file.wallets.find((x) => x.descriptor.wallet === op.policy.wallet);
        // A wallet this signer does not serve: nothing of its own to pin.
        if (w) w.policy_digest = policyDigest(op.policy);
        break;
      }
      case 'set_wallet': {
        const w = file.wallets.find((x) => x.descriptor.wallet === op.descriptor.wallet);
        if (w) {
          w.descriptor = op.descriptor;
          w.policy_digest = policyDigest(op.policy);
        } else file.wallets.push({ descriptor: op.descriptor, policy_digest: policyDigest(op.policy) });
        break;
      }
      case 'set_approver': {
        const entry = { id: op.id, public_key: op.public_key, weight: op.weight, ...(op.passkey ? { passkey: op.passkey } : {}) };
        const i = file.approvers.findIndex((a) => a.id === op.id);
        if (i >= 0) file.approvers[i] = entry;
        else file.approvers.push(entry);
        break;
      }
      case 'remove_approver':
        file.approvers = file.approvers.filter((a) => a.id !== op.id);
        break;
      default:
        break;
    }
  }
  // The same wallets the control plane marks (the SDK's one rule).
  const changed = walletsChangedBy(change);
  for (const w of file.wallets) if (changed.has(w.descriptor.wallet)) w.policy_since = readyAt;
  file.governance = governanceAfter(trust.governance, change);
  return parseTrust(file);
}

const restrictedViews = new WeakMap<Trust, { index: RestrictionIndex; view: Trust }>();

/**
 * The trust file as restrictions leave it: every approver they name is revoked, the rest as the
 * file says. Restrictions only remove power, so the view never trusts more than the file. The
 * same object comes back while neither the trust nor the index changes (a request costs a lookup).
 *
 * @example
 * const trust = restrictedTrust(deps.trust, deps.state.restrictions)
 */
export function restrictedTrust(trust: Trust, index: RestrictionIndex): Trust {
  const known = restrictedViews.get(trust);
  if (known !== undefined && known.index === index) return known.view;
  const approvers = restrictApprovers(trust.approvers, index);
  const view: Trust = approvers === trust.approvers ? trust : { ...trust, approvers };
  restrictedViews.set(trust, { index, view });
  return view;
}

/** Reads and validates a trust file. */
export function loadTrust(path: string): Trust {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new ValidationError('trust', [{ path: '', message: `${path} is not readable JSON` }], { cause });
  }
  return parseTrust(raw);
}

/** True when two wallet descriptors are the same wallet (canonical JSON equality). */
export function sameDescriptor(a: WalletDescriptor, b: WalletDescriptor): boolean {
  return canonicalize(a) === canonicalize(b);
}

/** JSON Schema of the trust file (draft 2020-12), as printed in README-signer.md. */
export function trustFileJsonSchema(): unknown {
  return z.toJSONSchema(TrustFileSchema, { io: 'input', unrepresentable: 'any' });
}
