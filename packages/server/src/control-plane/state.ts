/**
 * @module control-plane/state
 * The operator-editable state file (`state.json` in the state directory): wallets, policies,
 * paired devices, the canonical asset registry with reserved tickers, signer endpoints,
 * compliance and attestation settings, and the drivers to load. Validated with zod; a JSON
 * Schema of it is written beside it (`state.schema.json`).
 */
import {
  AdminPolicySchema,
  ChangeApprovalSchema,
  ChangeSetSchema,
  DigestSchema,
  MAX_CHANGE_APPROVALS,
  UnixSecondsSchema,
  AssetSpecSchema,
  AttestationStatementSchema,
  ClearanceStatementSchema,
  IntentLifetimeSchema,
  PolicySetSchema,
  RegisteredPasskeySchema,
  WebAuthnOriginSchema,
  ValidationError,
  WalletDescriptorSchema,
  KEY_BINDING_RE,
  canonicalize,
  parsePolicy,
  sha256Hex,
  timingSafeEqual,
  parseWith,
  toValidationIssues,
} from '@vault/sdk';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../http/files.js';
import { PassphraseFileSchema } from './secrets.js';
import { WebhooksConfigSchema } from './webhooks/config.js';

const Hex32 = z.string().regex(/^[0-9a-f]{64}$/, 'expected 32 bytes as 64 lowercase hex digits');

export const DEVICE_ROLES = ['approver', 'initiator', 'viewer'] as const;

/** A paired device (DESIGN §8). Its id is the approver id its signed approvals carry. */
export const DeviceSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'device id: 1..128 of A-Z a-z 0-9 . _ : -'),
  role: z.enum(DEVICE_ROLES),
  label: z.string().max(128),
  /** ed25519 public key, 64 lowercase hex. */
  public_key: Hex32,
  paired_at: z.int().min(0),
  revoked_at: z.int().min(0).nullable().default(null),
  /** The passkey registered at pairing (issue #24): only its assertions make an approval strong. */
  passkey: RegisteredPasskeySchema.optional(),
  /**
   * The origins a `set_approver` change set named with the passkey (the signers hold the same):
   * its assertions are judged against these, not the control plane's `webauthn` origins, so both
   * services count the same approvals as strong. Absent for a passkey registered at pairing.
   */
  passkey_origins: z.array(WebAuthnOriginSchema).min(1).max(16).optional(),
});
export type Device = z.infer<typeof DeviceSchema>;

export const OPERATOR_ROLES = ['admin', 'operator', 'auditor'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** The name of the legacy passphrase (operator.json): the first admin, never an account in state.json. */
export const LEGACY_OPERATOR = 'operator';

export const OperatorNameSchema = z.string().regex(/^[a-z0-9._-]{1,64}$/, 'operator name: 1..64 of a-z 0-9 . _ -');

/**
 * A named operator account (issue #23): its own passphrase, as a scrypt hash in operator.json's
 * format, and a role. Disabled accounts stay listed (receipts name them) and never unlock.
 */
export const OperatorAccountSchema = z.strictObject({
  name: OperatorNameSchema,
  role: z.enum(OPERATOR_ROLES),
  passphrase: PassphraseFileSchema,
  created_at: z.int().min(0),
  disabled_at: z.int().min(0).nullable().default(null),
});
export type OperatorAccount = z.infer<typeof OperatorAccountSchema>;

/** An API key's id: the part of `vk_<id>_<secret>` looked up before the secret is compared. */
export const ApiKeyIdSchema = z.string().regex(/^[0-9a-f]{16}$/, 'api key id: 16 lowercase hex digits');

/**
 * An API key for an application or agent: it may only create intents, as `bound_to`, in
 * `wallets` (all wallets when absent), until `expires_at` or revocation. Only the SHA-256 digest
 * of its secret is kept.
 */
export const ApiKeySchema = z.strictObject({
  id: ApiKeyIdSchema,
  digest: Hex32,
  bound_to: z.string().max(128).regex(KEY_BINDING_RE, 'bound_to must be agent:<name> or app:<id> (1..120 of a-z 0-9 . _ -)'),
  wallets: z.array(z.string().min(1).max(128)).min(1).max(1024).optional(),
  label: z.string().max(128).default(''),
  created_at: z.int().min(0),
  expires_at: z.int().min(0),
  revoked_at: z.int().min(0).nullable().default(null),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;

/**
 * Where passkey ceremonies may happen: the relying party id and the page origins. Absent: rp_id
 * `localhost` and the origin `http://localhost:<port>` the control plane listens on (browsers
 * refuse IP-address rp ids, so the app is opened at http://localhost:PORT/app/).
 */
export const WebAuthnSettingsSchema = z.strictObject({
  rp_id: z.string().min(1).max(253),
  origins: z.array(WebAuthnOriginSchema).min(1).max(16),
});
export type WebAuthnSettings = z.infer<typeof WebAuthnSettingsSchema>;

/** A signer service: where to send SignRequests for one signer address. */
export const SignerEndpointSchema = z
  .strictObject({
    url: z.url({ protocol: /^https?$/, error: 'url must be an http(s) URL' }),
    /** The signer token inline (keep state.json 0600), or ... */
    token: z.string().min(16, 'token must be at least 16 characters').max(512).optional(),
    /** ... the name of an environment variable holding it. */
    token_env: z.string().regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'token_env must be an environment variable name').optional(),
    label: z.string().max(128).optional(),
  })
  .refine((s) => (s.token === undefined) !== (s.token_env === undefined), {
    message: 'give exactly one of token or token_env',
    path: ['token'],
  });
export type SignerEndpoint = z.infer<typeof SignerEndpointSchema>;

/** A driver module to import at start-up: its export `createDriver(options)` returns a ChainDriver. */
export const DriverEntrySchema = z.strictObject({
  /** A package name or a path (relative paths resolve against the state directory). */
  module: z.string().min(1).max(1024),
  options: z.record(z.string(), z.unknown()).default({}),
});
export type DriverEntry = z.infer<typeof DriverEntrySchema>;

/**
 * The sections of state.json only a change set changes under governance (issue #23). `devices`
 * holds approvers, their keys, passkeys and roles; `governance` is the section itself, less its
 * digests. Everything else (operators, api_keys, compliance, lifetimes, ...) stays hand-editable.
 */
export const GOVERNED_SECTIONS = ['wallets', 'policies', 'devices', 'signers', 'assets', 'webhooks', 'governance'] as const;
export type GovernedSection = (typeof GOVERNED_SECTIONS)[number];

/** Most change sets the governance section keeps (applied ones are pushed to signers in order). */
export const MAX_STORED_CHANGES = 4096;

/** A change set as the control plane keeps it: proposed, then applied, vetoed or stale. */
export const StoredChangeSchema = z.strictObject({
  id: z.string().regex(/^chg_[0-9a-f]{32}$/),
  digest: DigestSchema,
  change: ChangeSetSchema,
  approvals: z.array(ChangeApprovalSchema).max(MAX_CHANGE_APPROVALS).default([]),
  status: z.enum(['pending', 'applied', 'vetoed', 'stale']),
  proposed_at: UnixSecondsSchema,
  applied_at: UnixSecondsSchema.optional(),
  version: z.int().min(1).optional(),
  ready_at: UnixSecondsSchema.optional(),
});
export type StoredChange = z.infer<typeof StoredChangeSchema>;

/**
 * Change sets (issue #23): the admin policy and governance version in force, when each wallet's
 * policy last changed by change set (approvals of its intents dated before stop counting), and the
 * change sets proposed and applied. Absent: no admin quorum; the operator edits state.json alone.
 */
export const GovernanceSectionSchema = z.strictObject({
  policy: AdminPolicySchema,
  policy_since: z.record(z.string().min(1).max(128), UnixSecondsSchema).default({}),
  changes: z.array(StoredChangeSchema).max(MAX_STORED_CHANGES).default([]),
  /**
   * SHA-256 over RFC 8785 of each governed section as this control plane last wrote it (a change
   * set applied, a pairing, a revocation; recorded when governance is first set up). A state.json
   * whose governed sections differ is refused at start-up and reload, naming the section.
   */
  digests: z.strictObject(Object.fromEntries(GOVERNED_SECTIONS.map((k) => [k, Hex32])) as Record<GovernedSection, typeof Hex32>).optional(),
});
export type GovernanceSection = z.infer<typeof GovernanceSectionSchema>;

export const StateFileSchema = z
  .strictObject({
    $schema: z.string().optional(),
    version: z.literal(1),
    wallets: z.array(WalletDescriptorSchema).max(1024).default([]),
    policies: z.array(PolicySetSchema).max(1024).default([]),
    devices: z.array(DeviceSchema).max(4096).default([]),
    /** Named operator accounts (POST /operators adds them); the legacy passphrase is not one of them. */
    operators: z.array(OperatorAccountSchema).max(256).default([]),
    /** API keys (POST /api-keys adds them), by id and digest only. */
    api_keys: z.array(ApiKeySchema).max(4096).default([]),
    assets: z
      .strictObject({
        assets: z.array(AssetSpecSchema).max(10000).default([]),
        reserved: z.array(z.string().min(1).max(64)).max(10000).default([]),
      })
      .default({ assets: [], reserved: [] }),
    /** Signer endpoints keyed by signer address (a member address of a wallet). */
    signers: z.record(z.string().min(1).max(256), SignerEndpointSchema).default({}),
    compliance: z
      .strictObject({
        /**
         * Clearances of destinations, each signed by a clearer key (SDK signStatement). One counts
         * for an intent when a require_compliance_clearance rule of its policy names the key; the
         * control plane sends it with the SignRequest and each signer verifies it again.
         */
        clearances: z.array(ClearanceStatementSchema).max(100000).default([]),
        /**
         * No longer read: a bare list of addresses proves nothing to a signer. Accepted empty (as
         * earlier versions wrote it) so their state files still load; a listed address is refused
         * at load, so no operator believes it still clears anything.
         */
        cleared_destinations: z
          .array(z.string())
          .max(0, 'cleared_destinations is no longer honoured: a clearance is a statement signed by a clearer key the policy names (compliance.clearances)')
          .optional(),
      })
      .default({ clearances: [] }),
    attestation: z
      .strictObject({
        /** Attestations of wallets, each signed by an attester key (SDK signStatement). */
        attestations: z.array(AttestationStatementSchema).max(1024).default([]),
      })
      .default({ attestations: [] }),
    /** Addresses whose keys are known burned (burned_key guard). */
    burned: z.array(z.string().min(1).max(256)).max(10000).default([]),
    /** An address book: destinations considered known (besides past confirmed ones). */
    known_destinations: z.array(z.string().min(1).max(256)).max(10000).default([]),
    drivers: z.array(DriverEntrySchema).max(64).default([]),
    /**
     * Per wallet: how long its intents live (expires_at = created_at + ttl_seconds) and how old an
     * approval may be and still count. A wallet not listed takes the SDK's defaults (7 days, 3 days).
     */
    lifetimes: z.record(z.string().min(1).max(128), IntentLifetimeSchema).default({}),
    /** Host names accepted besides loopback (only when deliberately exposed behind a proxy). */
    extra_hosts: z.array(z.string().min(1).max(253)).max(16).default([]),
    webauthn: WebAuthnSettingsSchema.optional(),
    /** Webhook endpoints (POST /webhooks adds them) and delivery settings (SSRF allowances, retry horizon). */
    webhooks: WebhooksConfigSchema.default(WebhooksConfigSchema.parse({})),
    governance: GovernanceSectionSchema.optional(),
  })
  .superRefine((s, ctx) => {
    const ids = new Set<string>();
    s.wallets.forEach((w, i) => {
      if (ids.has(w.wallet)) ctx.addIssue({ code: 'custom', path: ['wallets', i, 'wallet'], message: `wallet ${w.wallet} is listed twice` });
      ids.add(w.wallet);
    });
    const pol = new Set<string>();
    s.policies.forEach((p, i) => {
      if (!ids.has(p.wallet)) ctx.addIssue({ code: 'custom', path: ['policies', i, 'wallet'], message: `policy names unknown wallet ${p.wallet}` });
      if (pol.has(p.wallet)) ctx.addIssue({ code: 'custom', path: ['policies', i, 'wallet'], message: `wallet ${p.wallet} has two policies` });
      pol.add(p.wallet);
    });
    for (const w of Object.keys(s.lifetimes)) {
      if (!ids.has(w)) ctx.addIssue({ code: 'custom', path: ['lifetimes', w], message: `lifetimes names unknown wallet ${w}` });
    }
    const dev = new Set<string>();
    s.devices.forEach((d, i) => {
      if (dev.has(d.id)) ctx.addIssue({ code: 'custom', path: ['devices', i, 'id'], message: `device ${d.id} is listed twice` });
      dev.add(d.id);
    });
    const names = new Set<string>([LEGACY_OPERATOR]);
    s.operators.forEach((o, i) => {
      if (names.has(o.name)) ctx.addIssue({ code: 'custom', path: ['operators', i, 'name'], message: o.name === LEGACY_OPERATOR ? `"${LEGACY_OPERATOR}" is the legacy passphrase (operator.json)` : `operator ${o.name} is listed twice` });
      names.add(o.name);
    });
    const keys = new Set<string>();
    s.api_keys.forEach((k, i) => {
      if (keys.has(k.id)) ctx.addIssue({ code: 'custom', path: ['api_keys', i, 'id'], message: `api key ${k.id} is listed twice` });
      keys.add(k.id);
    });
    const hooks = new Set<string>();
    s.webhooks.endpoints.forEach((e, i) => {
      if (hooks.has(e.id)) ctx.addIssue({ code: 'custom', path: ['webhooks', 'endpoints', i, 'id'], message: `webhook ${e.id} is listed twice` });
      hooks.add(e.id);
    });
  });
export type StateFile = z.infer<typeof StateFileSchema>;
export type StateFileInput = z.input<typeof StateFileSchema>;

/** An empty, valid state. */
export function emptyState(): StateFile {
  return StateFileSchema.parse({ version: 1 });
}

/** Parses state text; a problem is a ValidationError naming the field (`state.wallets.0.chain`). */
export function parseState(text: string): StateFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ValidationError('state', [{ path: '', message: `not valid JSON: ${(e as Error).message}` }]);
  }
  // Policies first through the SDK's own parser, so an unknown rule names `rules.<i>.rule`.
  const policies = (raw as { policies?: unknown } | null)?.policies;
  if (Array.isArray(policies)) {
    policies.forEach((p, i) => {
      try {
        parsePolicy(p);
      } catch (e) {
        if (e instanceof ValidationError) {
          throw new ValidationError('state', e.issues.map((x) => ({ path: `policies.${i}.${x.path}`, message: x.message })));
        }
        throw e;
      }
    });
  }
  const r = StateFileSchema.safeParse(raw);
  if (!r.success) throw new ValidationError('state', toValidationIssues(r.error));
  // Reload receipts the state's RFC 8785 digest, and pairing receipts a device: a string that
  // canonical JSON refuses (a lone surrogate) would load here and then fail every reload.
  try {
    canonicalize(r.data);
  } catch (e) {
    if (e instanceof ValidationError) throw new ValidationError('state', e.issues);
    throw e;
  }
  return r.data;
}

export function readStateFile(path: string): StateFile {
  return parseState(readStateText(path));
}

/** The text of a state file, or a ValidationError naming why it cannot be read. */
export function readStateText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new ValidationError('state', [{ path: '', message: `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'}` }]);
  }
}

/**
 * The file text of a state, and the state as the loader reads that text back. Throws the loader's
 * own ValidationError when it would refuse it: nothing is written that a restart or a reload cannot
 * read. Memory takes the read-back state, so it matches the file exactly.
 */
export function encodeState(state: StateFile): { text: string; state: StateFile } {
  const text = `${JSON.stringify({ $schema: './state.schema.json', ...state }, null, 2)}\n`;
  return { text, state: parseState(text) };
}

/** Writes a state file atomically, after checking the loader will accept it (see encodeState). */
export function writeStateFile(path: string, state: StateFile): void {
  writeFileAtomic(path, encodeState(state).text, 0o600);
}

/** JSON Schema (draft 2020-12) of the state file, as written to `state.schema.json`. */
export function stateJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(StateFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

/** Re-validates one wallet descriptor (used by tests and tooling). */
export function parseWallet(value: unknown) {
  return parseWith(WalletDescriptorSchema, value, 'wallet');
}

/** RFC 8785 text of a value (for comparisons and digests). */
export function canonicalJson(value: unknown): string {
  return canonicalize(value);
}

/**
 * Per governed section, `sha256Hex(JCS(section))` (the governance section less its own digests).
 *
 * @example
 * const { wallets } = governedDigests(state)
 */
export function governedDigests(state: StateFile): Record<GovernedSection, string> {
  const section = (k: GovernedSection): unknown => {
    if (k !== 'governance') return state[k];
    if (!state.governance) return null;
    const { digests: _recorded, ...rest } = state.governance;
    return rest;
  };
  return Object.fromEntries(GOVERNED_SECTIONS.map((k) => [k, sha256Hex(canonicalize(section(k)))])) as Record<GovernedSection, string>;
}

/** The state with its governed sections' digests recorded; unchanged without governance. */
export function sealGoverned(state: StateFile): StateFile {
  if (!state.governance) return state;
  return { ...state, governance: { ...state.governance, digests: governedDigests(state) } };
}

/**
 * encodeState for the running control plane's own writes: the digests are taken over the state
 * as the loader reads it back (defaults filled), so the next load compares like with like. Offline
 * writers (`vault provision`, init, a hand edit) use encodeState and so never re-record them.
 */
export function encodeSealed(state: StateFile): { text: string; state: StateFile } {
  return encodeState(sealGoverned(encodeState(state).state));
}

/**
 * Judges a state.json read at start-up (`running` null) or on POST /admin/reload (`running` the
 * state in force) under governance (issue #23). `governedBefore`: this state directory ran under
 * governance (one running, or its GOVERNED_MARKER at start-up). Without a governance section, and
 * never governed before, it is taken as it is. The first time a governance section is seen (no
 * digests, version 0, no change set proposed, never governed before) its digests are recorded:
 * `sealed` says the caller must write the file back. Otherwise each governed section must match the digest recorded when the control
 * plane last wrote it; a hand edit is a ValidationError naming every section that differs. The
 * digests stop a hand edit slipping in, not a host-level attacker (who can recompute them): the
 * signers' own admin policy is the protection there.
 */
export function admitGoverned(next: StateFile, running: StateFile | null, governedBefore = running?.governance !== undefined): { state: StateFile; sealed: boolean } {
  const gov = next.governance;
  if (!gov) {
    if (governedBefore) {
      throw new ValidationError('state', [{ path: 'governance', message: 'the governance section was removed: an admin policy in force is changed only by a change set (set_admin_policy), never by editing state.json' }], { data: { reason: 'governed_section_edited', sections: ['governance'] } });
    }
    return { state: next, sealed: false };
  }
  const recorded = gov.digests;
  if (!recorded) {
    // Any change set at all (even a pending one) means this control plane already ran under it.
    const fresh = gov.policy.version === 0 && gov.changes.length === 0 && !governedBefore;
    if (!fresh) {
      throw new ValidationError('state', [{ path: 'governance.digests', message: 'missing: the digests of the governed sections were removed from a governance section in use; restore state.json as the control plane wrote it' }], { data: { reason: 'governed_section_edited', sections: ['governance'] } });
    }
    return { state: sealGoverned(next), sealed: true };
  }
  const actual = governedDigests(next);
  const edited = GOVERNED_SECTIONS.filter((k) => !timingSafeEqual(recorded[k], actual[k]));
  if (edited.length > 0) {
    throw new ValidationError(
      'state',
      edited.map((k) => ({ path: k, message: `${k} differs from what the applied change sets produced (edited by hand?): under governance it changes only by a change set (POST /changes) approved by the admin quorum` })),
      { data: { reason: 'governed_section_edited', sections: edited } },
    );
  }
  return { state: next, sealed: false };
}
