/**
 * @module control-plane/governance
 * Change sets (issue #23) on the control plane: POST /changes proposes a diff against the current
 * governance version, POST /changes/{id}/approve records an admin's signed verdict, and once the
 * SDK's checkChangeSet says the admin quorum and delay are met the change applies atomically
 * (state.json through the one atomic writer, a `change.applied` receipt and its event) and is
 * pushed to every signer. Before a signer is asked to sign it is brought to the current version,
 * missing change sets pushed in order (as restrictions.ts does for restrictions). The signers judge
 * every push again against their own admin policy: nothing here can make one accept a change the
 * admins did not sign.
 */
import {
  ChangeApprovalSchema,
  ChangeSetSchema,
  changeSetDigest,
  changeSetId,
  checkChangeSet,
  governanceAfter,
  InternalError,
  NotFoundError,
  parseWith,
  RefusedError,
  ValidationError,
  VaultError,
  walletsChangedBy,
  type ChangeSet,
  type ChangeSetCheck,
  type ReceiptRecord,
  type SignerClient,
} from '@vault/sdk';
import { SIGN_BODY_LIMIT } from '../signer/app.js';
import type { Core } from './core.js';
import { STATE_FILE } from './core.js';
import { signerClient, signerServices } from './signers.js';
import { encodeSealed, MAX_STORED_CHANGES, type Device, type StateFile, type StoredChange } from './state.js';
import { CreateWebhookRequestSchema } from './openapi.js';
import type { WebhookEndpoint } from './webhooks/config.js';
import type { Webhooks } from './webhooks/service.js';

/**
 * Largest change set POST /changes takes, as compact JSON: what is left of a signer's body limit
 * once the push carries its approvals (at most MAX_CHANGE_APPROVALS of under 512 bytes each). A
 * larger one could be applied here and then never reach a signer, which is not asked to sign
 * until it is at this version.
 */
export const MAX_PROPOSED_CHANGE_BYTES = SIGN_BODY_LIMIT - 64 * 1024;

/** How long a signer's report of its governance version stands before the next sign request asks again. */
export const GOVERNANCE_ACK_SECONDS = 60;

export type ProposeOutcome = { ok: true; change: StoredChange } | { ok: false; status: 409; body: { error: string; base_version: number; current_version: number } };

/**
 * Under governance a direct route that would change a governed section answers 409, pointing at
 * change sets (issue #23); without a governance section it lets the route run as it always did.
 */
export function assertNotGoverned(core: Core, route: string, op: string): void {
  const g = core.state.governance;
  if (!g) return;
  const error = new RefusedError(`${route} is closed under governance: propose a change set with ${op} (POST /changes) for the admin quorum to approve`, {
    data: { reason: 'governed', version: g.policy.version },
  });
  throw Object.assign(error, { httpStatus: 409 });
}

/** A change set's state as the routes show it. */
function view(c: StoredChange, check?: ChangeSetCheck): Record<string, unknown> {
  return {
    id: c.id,
    digest: c.digest,
    status: c.status,
    base_version: c.change.base_version,
    change: c.change,
    approvals: c.approvals,
    proposed_at: c.proposed_at,
    ...(c.version !== undefined ? { version: c.version, ready_at: c.ready_at, applied_at: c.applied_at } : {}),
    ...(check && !check.ok ? { waiting: { reason: check.reason, message: check.message, weight: check.weight, threshold: check.threshold, ready_at: check.ready_at } } : {}),
  };
}

/**
 * The state once a change set applied: every op, the next governance version, and when each wallet
 * whose policy changed did (`policy_since`). Pure; throws a ValidationError naming the op when one
 * cannot apply to this state (the change stays pending).
 */
export function stateAfterChange(state: StateFile, change: ChangeSet, readyAt: number, now: number, webhooks: readonly WebhookEndpoint[] = []): StateFile {
  const gov = state.governance;
  if (!gov) throw new ValidationError('governance', [{ path: '', message: 'no admin policy is configured' }]);
  const next: StateFile = structuredClone(state);
  next.governance = structuredClone(gov);
  change.ops.forEach((op, i) => {
    const at = `change.ops.${i}`;
    switch (op.op) {
      case 'set_policy': {
        if (!next.wallets.some((w) => w.wallet === op.policy.wallet)) throw new ValidationError(at, [{ path: 'policy.wallet', message: `unknown wallet ${op.policy.wallet}` }]);
        next.policies = [...next.policies.filter((p) => p.wallet !== op.policy.wallet), op.policy];
        break;
      }
      case 'set_wallet': {
        if (op.policy.wallet !== op.descriptor.wallet) throw new ValidationError(at, [{ path: 'policy.wallet', message: `the policy is for ${op.policy.wallet}, the wallet is ${op.descriptor.wallet}` }]);
        next.wallets = [...next.wallets.filter((w) => w.wallet !== op.descriptor.wallet), op.descriptor];
        next.policies = [...next.policies.filter((p) => p.wallet !== op.descriptor.wallet), op.policy];
        break;
      }
      case 'set_approver': {
        const known = next.devices.find((d) => d.id === op.id);
        // The passkey is the op's or none, as at the signers (a trust file entry is replaced whole).
        const passkey = op.passkey ? (({ origins, ...registered }) => ({ passkey: registered, passkey_origins: origins }))(op.passkey) : {};
        const device: Device = { id: op.id, role: 'approver', label: known?.label ?? op.id, public_key: op.public_key, paired_at: known?.paired_at ?? now, revoked_at: null, ...passkey };
        next.devices = known ? next.devices.map((d) => (d.id === op.id ? device : d)) : [...next.devices, device];
        break;
      }
      case 'remove_approver': {
        // Revoked, not deleted: the revocation is pushed to the signers as a restriction too.
        if (!next.devices.some((d) => d.id === op.id)) throw new ValidationError(at, [{ path: 'id', message: `unknown approver ${op.id}` }]);
        next.devices = next.devices.map((d) => (d.id === op.id && d.revoked_at === null ? { ...d, revoked_at: now } : d));
        break;
      }
      case 'set_device_role': {
        if (!next.devices.some((d) => d.id === op.device)) throw new ValidationError(at, [{ path: 'device', message: `unknown device ${op.device}` }]);
        next.devices = next.devices.map((d) => (d.id === op.device ? { ...d, role: op.role } : d));
        break;
      }
      case 'set_signer_endpoint':
        next.signers = { ...next.signers, [op.signer]: { url: op.url, token_env: op.token_env, ...(op.label !== undefined ? { label: op.label } : {}) } };
        break;
      case 'set_asset': {
        const same = (a: { chain: string; symbol: string; issuer?: string | null | undefined }) => a.chain === op.asset.chain && a.symbol === op.asset.symbol && (a.issuer ?? null) === (op.asset.issuer ?? null);
        next.assets = { ...next.assets, assets: [...next.assets.assets.filter((a) => !same(a)), op.asset] };
        break;
      }
      case 'set_webhook':
        // Its endpoint (id, sealed secret) is made where the change applies and passed in, one
        // per set_webhook op in order: a change set never carries a secret.
        break;
      case 'remove_webhook': {
        if (!next.webhooks.endpoints.some((e) => e.id === op.id)) throw new ValidationError(at, [{ path: 'id', message: `unknown webhook ${op.id}` }]);
        next.webhooks = { ...next.webhooks, endpoints: next.webhooks.endpoints.filter((e) => e.id !== op.id) };
        break;
      }
      case 'set_admin_policy':
        break;
    }
  });
  if (webhooks.length > 0) next.webhooks = { ...next.webhooks, endpoints: [...next.webhooks.endpoints, ...webhooks] };
  next.governance.policy = governanceAfter(gov.policy, change);
  for (const w of walletsChangedBy(change)) next.governance.policy_since = { ...next.governance.policy_since, [w]: readyAt };
  return next;
}

/** A change set ready to commit: the state it leaves, its receipt (drafted when chained) and the webhook endpoints it adds. */
interface Applied {
  state: StateFile;
  receipt: () => ReceiptRecord;
  webhooks: { endpoint: WebhookEndpoint; secret: string }[];
  /** Endpoints its remove_webhook ops remove (their delivery records are purged once it is in force). */
  removed: string[];
}

export class Changes {
  readonly #core: Core;
  /** Signer URL -> the governance version it reported, and when (in memory: a restart asks again). */
  readonly #acks = new Map<string, { version: number; at: number }>();
  readonly #pushes = new Map<string, Promise<void>>();

  readonly #webhooks: () => Webhooks;

  /** `webhooks`: the control plane's webhook service (made after this), for set_webhook. */
  constructor(core: Core, webhooks: () => Webhooks) {
    this.#core = core;
    this.#webhooks = webhooks;
  }

  #gov() {
    const g = this.#core.state.governance;
    if (!g) throw new RefusedError('no admin policy is configured on this control plane: add a governance section to state.json', { data: { reason: 'no_governance' } });
    return g;
  }

  #find(id: string): StoredChange {
    const c = this.#gov().changes.find((x) => x.id === id);
    if (!c) throw new NotFoundError('change', id);
    return c;
  }

  /** A pending change whose base is no longer the current version is stale (shown so, refused on approval). */
  #current(c: StoredChange): StoredChange {
    return c.status === 'pending' && c.change.base_version !== this.#gov().policy.version ? { ...c, status: 'stale' } : c;
  }

  list(): Record<string, unknown> {
    const g = this.#gov();
    return { version: g.policy.version, governance: g.policy, changes: g.changes.map((c) => view(this.#current(c))) };
  }

  get(id: string): Record<string, unknown> {
    const c = this.#current(this.#find(id));
    return view(c, c.status === 'pending' ? checkChangeSet(this.#gov().policy, c.change, c.approvals, this.#core.now()) : undefined);
  }

  /** POST /changes: a diff against the current version (409 naming both versions on another base). */
  async propose(raw: unknown, proposedBy: string): Promise<ProposeOutcome> {
    this.#core.writer.assertWritable();
    this.#gov();
    const now = this.#core.now();
    const change = proposal(raw, proposedBy, now);
    const size = Buffer.byteLength(JSON.stringify(change), 'utf8');
    if (size > MAX_PROPOSED_CHANGE_BYTES) throw new ValidationError('change', [{ path: '', message: `${size} bytes as JSON; at most ${MAX_PROPOSED_CHANGE_BYTES}, so that its push with the admins' approvals fits a signer's body limit` }]);
    // Webhook URLs are checked outside the state lock (a name lookup may take a moment).
    for (const [i, op] of change.ops.entries()) {
      if (op.op !== 'set_webhook') continue;
      // As POST /webhooks takes it (URL rules, event filters), and not to a refused address.
      parseWith(CreateWebhookRequestSchema, { url: op.url, types: op.types, description: op.description }, `change.ops.${i}`);
      await this.#webhooks().assertDeliverable(op.url, `ops.${i}.url`);
    }
    return this.#core.stateLock.run(STATE_FILE, async () => {
      const g = this.#gov();
      if (change.base_version !== g.policy.version) {
        return { ok: false, status: 409, body: { error: `change set is based on version ${change.base_version}; the current version is ${g.policy.version}`, base_version: change.base_version, current_version: g.policy.version } };
      }
      // Would it apply to this state? Refused now, naming the op, rather than after the admins signed.
      stateAfterChange(this.#core.state, change, now, now);
      const digest = changeSetDigest(change);
      const id = changeSetId(digest);
      const known = g.changes.find((c) => c.id === id);
      if (known) return { ok: true, change: known };
      let kept = g.changes;
      // Full: the change sets that can never apply (vetoed, or based on an older version) go
      // first, their receipts staying in the chain. Otherwise years of them, or a flood of
      // proposals from one admin session, would freeze governance for good; as it is, one
      // admin rejection makes room.
      if (kept.length >= MAX_STORED_CHANGES) kept = kept.filter((c) => c.status === 'applied' || (c.status === 'pending' && c.change.base_version === g.policy.version));
      if (kept.length >= MAX_STORED_CHANGES) throw new RefusedError(`at most ${MAX_STORED_CHANGES} change sets are kept`, { data: { reason: 'too_many_changes' } });
      const stored: StoredChange = { id, digest, change, approvals: [], status: 'pending', proposed_at: now };
      const next = encodeSealed({ ...this.#core.state, governance: { ...g, changes: [...kept, stored] } });
      const receipt = this.#core.writer.draftReceipt('change.proposed', { id, digest, base_version: change.base_version, ops: change.ops.map((o) => o.op), proposed_by: change.proposed_by });
      await this.#core.writer.appendReceipt(receipt);
      await this.#core.writeState(next);
      return { ok: true, change: stored };
    });
  }

  /**
   * POST /changes/{id}/approve: records one admin's signed verdict (400 naming `approval` when it
   * does not verify against this version's admins), and applies the change set when the verdicts
   * now meet the quorum and the delay has run. A valid rejection vetoes it for good.
   */
  async approve(id: string, raw: unknown): Promise<Record<string, unknown>> {
    this.#core.writer.assertWritable();
    const approval = parseWith(ChangeApprovalSchema, raw, 'approval');
    const outcome = await this.#core.stateLock.run(STATE_FILE, async () => {
      const g = this.#gov();
      const c = this.#current(this.#find(id));
      if (c.status !== 'pending') throw new RefusedError(`change ${id} is ${c.status}`, { data: { reason: `change_${c.status}`, version: g.policy.version } });
      const now = this.#core.now();
      const approvals = [...c.approvals.filter((a) => a.admin_id !== approval.admin_id), approval];
      const check = checkChangeSet(g.policy, c.change, approvals, now);
      if (!check.ok && check.problems.length > 0) {
        const p = check.problems[0]!;
        throw new ValidationError('approval', [{ path: p.index === approvals.length - 1 ? '' : `stored.${p.index}`, message: `${p.reason}: ${p.message}` }]);
      }
      const status: StoredChange['status'] = check.ok ? 'applied' : check.reason === 'vetoed' ? 'vetoed' : 'pending';
      const recorded: StoredChange = { ...c, approvals };
      // Everything is built and checked before anything is written.
      const applied = check.ok ? this.#applied(recorded, check, now) : null;
      let secrets: { id: string; secret: string }[] = [];
      const base: StateFile = applied ? applied.state : { ...this.#core.state, governance: { ...g, changes: g.changes.map((x) => (x.id === id ? { ...recorded, status } : x)) } };
      const next = encodeSealed(base);
      // Receipts before the state (as pairing): never a change in force without its receipt. Each
      // is drafted right before it is chained (no await between).
      await this.#core.writer.appendReceipt(this.#core.writer.draftReceipt('change.verdict', { id, admin_id: approval.admin_id, verdict: approval.verdict, at: approval.at, weight: check.weight, threshold: check.threshold }));
      if (applied) secrets = await this.#commitApplied(applied);
      await this.#core.writeState(next);
      if (applied) this.#webhooks().added(secrets.map((x) => x.id));
      return { check, status, secrets, removed: applied?.removed ?? [] };
    });
    await this.#webhooks().removed(outcome.removed);
    const result: Record<string, unknown> = this.get(id);
    if (outcome.status === 'applied') Object.assign(result, this.#shown(outcome.secrets), { signers: await this.pushAll() });
    return result;
  }

  /** POST /changes/{id}/apply: applies a pending change set whose delay has run since its quorum. */
  async apply(id: string): Promise<Record<string, unknown>> {
    this.#core.writer.assertWritable();
    const { secrets, removed } = await this.#core.stateLock.run(STATE_FILE, async () => {
      const g = this.#gov();
      const c = this.#current(this.#find(id));
      if (c.status !== 'pending') throw new RefusedError(`change ${id} is ${c.status}`, { data: { reason: `change_${c.status}`, version: g.policy.version } });
      const now = this.#core.now();
      const check = checkChangeSet(g.policy, c.change, c.approvals, now);
      if (!check.ok) throw new RefusedError(`change ${id} does not apply yet: ${check.reason}: ${check.message}`, { data: { reason: check.reason, ready_at: check.ready_at } });
      const applied = this.#applied(c, check, now);
      const next = encodeSealed(applied.state);
      const secrets = await this.#commitApplied(applied);
      await this.#core.writeState(next);
      this.#webhooks().added(secrets.map((x) => x.id));
      return { secrets, removed: applied.removed };
    });
    await this.#webhooks().removed(removed);
    return { ...this.get(id), ...this.#shown(secrets), signers: await this.pushAll() };
  }

  /**
   * The change.applied receipt, then a webhook.created per endpoint it adds and a webhook.deleted
   * per endpoint it removes (as the direct routes chain them), each drafted right before it is chained.
   */
  async #commitApplied(applied: Applied): Promise<{ id: string; secret: string }[]> {
    await this.#core.writer.appendReceipt(applied.receipt());
    for (const { endpoint } of applied.webhooks) await this.#core.writer.appendReceipt(this.#webhooks().createdReceipt(endpoint));
    for (const id of applied.removed) await this.#core.writer.appendReceipt(this.#core.writer.draftReceipt('webhook.deleted', { id }));
    return applied.webhooks.map(({ endpoint, secret }) => ({ id: endpoint.id, secret }));
  }

  /** A new webhook's secret is in the answer that applied it, this once (as POST /webhooks). */
  #shown(secrets: { id: string; secret: string }[]): Record<string, unknown> {
    return secrets.length > 0 ? { webhook_secrets: secrets } : {};
  }

  #applied(c: StoredChange, check: Extract<ChangeSetCheck, { ok: true }>, now: number): Applied {
    const webhooks = check.change.ops.flatMap((o) => (o.op === 'set_webhook' ? [this.#webhooks().newEndpoint({ url: o.url, types: o.types, description: o.description })] : []));
    const after = stateAfterChange(this.#core.state, check.change, check.ready_at, now, webhooks.map((w) => w.endpoint));
    const stored: StoredChange = { ...c, approvals: check.approvals, status: 'applied', applied_at: now, version: check.version, ready_at: check.ready_at };
    const gov = after.governance!;
    const state: StateFile = { ...after, governance: { ...gov, changes: gov.changes.map((x) => (x.id === c.id ? stored : x)) } };
    const receipt = () => this.#core.writer.draftReceipt('change.applied', { id: c.id, digest: c.digest, version: check.version, ready_at: check.ready_at, ops: check.change.ops.map((o) => o.op) });
    const removed = check.change.ops.flatMap((o) => (o.op === 'remove_webhook' ? [o.id] : []));
    return { state, receipt, webhooks, removed };
  }

  /** Applied change sets in version order. */
  #appliedChanges(): StoredChange[] {
    return (this.#core.state.governance?.changes ?? []).filter((c) => c.status === 'applied').sort((a, b) => (a.version ?? 0) - (b.version ?? 0));
  }

  /**
   * Brings the signer at `url` to this control plane's governance version, pushing the change sets
   * it misses in order; throws when it cannot (the caller then does not ask it to sign). A signer
   * with no admin policy of its own takes no change set and is left as it is (a single-operator
   * signer), and one ahead of this control plane is reported, never rolled back.
   */
  async governSigner(url: string, name: string, client: SignerClient): Promise<void> {
    const g = this.#core.state.governance;
    if (!g || g.policy.version === 0) return;
    const target = g.policy.version;
    const ack = this.#acks.get(url);
    if (ack !== undefined && ack.version >= target && this.#core.now() - ack.at < GOVERNANCE_ACK_SECONDS) return;
    const key = `${target} ${url}`;
    let push = this.#pushes.get(key);
    if (push === undefined) {
      push = (async () => {
        const status = await client.governance();
        if (status.version === null) {
          this.#core.log({ event: 'governance_unmanaged_signer', signer: name });
          this.#acks.set(url, { version: target, at: this.#core.now() });
          return;
        }
        let version = status.version;
        for (const c of this.#appliedChanges()) {
          if ((c.version ?? 0) <= version) continue;
          const r = await client.pushChange(c.change, c.approvals);
          if (!r.ok && r.reason !== 'replayed') {
            this.#core.log({ event: 'governance_push_refused', signer: name, version: c.version, reason: r.reason });
            throw new InternalError(`signer ${name} refused change set ${c.id} (version ${c.version}): ${r.reason}`);
          }
          version = c.version ?? version;
        }
        this.#acks.set(url, { version, at: this.#core.now() });
        this.#core.log({ event: 'governance_acknowledged', signer: name, version });
      })().finally(() => this.#pushes.delete(key));
      this.#pushes.set(key, push);
    }
    await push;
  }

  /** Pushes the applied change sets to every configured signer service (each URL once), now. */
  async pushAll(): Promise<{ signer: string; ok: boolean; detail: string }[]> {
    const version = this.#core.state.governance?.policy.version ?? 0;
    return Promise.all(
      signerServices(this.#core.state.signers, Object.keys(this.#core.state.signers)).map(async ({ name, endpoint }) => {
        const s = signerClient(endpoint, this.#core.signerTimeoutMs);
        if (!s.client) return { signer: name, ok: false, detail: s.detail };
        try {
          await this.governSigner(endpoint.url, name, s.client);
          return { signer: name, ok: true, detail: `at governance version ${version}` };
        } catch (e) {
          const msg = e instanceof VaultError ? e.shortMessage : 'fault';
          return { signer: name, ok: false, detail: `${msg}; pushed again before it is next asked to sign`.replaceAll(s.token, '[redacted]') };
        }
      }),
    );
  }

  forget(url: string): void {
    this.#acks.delete(url);
  }
}

/** POST /changes body: a change set; proposed_by and created_at default to the session and now. */
function proposal(raw: unknown, proposedBy: string, now: number): ChangeSet {
  const obj = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  return parseWith(ChangeSetSchema, obj ? { proposed_by: proposedBy, created_at: now, ...obj } : raw, 'change');
}
