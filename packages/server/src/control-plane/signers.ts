/**
 * @module control-plane/signers
 * The control plane's side of the signers: the one SignRequest builder (and the ObserveRequest it
 * starts from), how a signer endpoint of the state file becomes a client, asking every member to
 * sign (each signer first holding the current restrictions), and having the signer services observe
 * an intent a timelock holds back.
 */
import {
  createSignerClient,
  policyDigest,
  VaultError,
  walletMembers,
  type Contribution,
  type IntentRequest,
  type ObserveRequest,
  type PolicySet,
  type SignRequest,
  type SignerClient,
  type SignerOutcome,
  type WalletDescriptor,
} from '@vault/sdk';
import type { Core } from './core.js';
import type { Changes } from './governance.js';
import type { Restrictions } from './restrictions.js';
import type { SignerEndpoint } from './state.js';
import type { IntentRecord } from './store.js';

/** One signer's answer to a SignRequest: its outcome as execute reports it, and its signature or refusal. */
export interface SignerAnswer {
  outcome: SignerOutcome;
  contribution?: Contribution;
  refusal?: { reason: string; message: string };
}

/** The line of a member whose answer execute did not wait for: the quorum was reached without it. */
export const NOT_AWAITED = 'not awaited: the quorum was reached without this answer';

/** What one signer line of an execute says, from the details this module writes. */
export type AnswerKind = 'signed' | 'refused' | 'unavailable' | 'not_awaited';

/** The kind of a signer line (`SignerOutcome`): signed, refused, not awaited, else unavailable. */
export function answerKind(line: { ok: boolean; detail: string }): AnswerKind {
  if (line.ok) return 'signed';
  if (line.detail === NOT_AWAITED) return 'not_awaited';
  return line.detail.startsWith('refused (') ? 'refused' : 'unavailable';
}

/** A SignRequest without its member: the same for every signer of the wallet. */
export type SignRequestBase = Omit<SignRequest, 'signer_address'>;

/**
 * The intent as stored, its wallet and its policy: what a signer checks first (content address,
 * pinned wallet and policy), and all that POST /observe carries.
 *
 * @example
 * await client.observe(observeRequest(record, wallet, policy))
 */
export function observeRequest(record: Pick<IntentRecord, 'intentId' | 'created_at' | 'intent'>, wallet: WalletDescriptor, policy: Readonly<PolicySet>): ObserveRequest {
  return {
    intent: { id: record.intentId, created_at: record.created_at, request: record.intent as IntentRequest },
    wallet,
    policy,
    policy_digest: policyDigest(policy),
  };
}

/**
 * The SignRequest for an intent as stored, its wallet and policy, with what this attempt adds
 * (approvals counted, chain parameters, protections, the payload digest the signers must rebuild).
 *
 * @example
 * const base = signRequest(record, wallet, policy, { approvals, params, protect, expected_payload_digest: built.digest })
 * await client.sign({ ...base, signer_address: member.address })
 */
export function signRequest(
  record: Pick<IntentRecord, 'intentId' | 'created_at' | 'intent'>,
  wallet: WalletDescriptor,
  policy: Readonly<PolicySet>,
  attempt: Pick<SignRequest, 'approvals' | 'params' | 'protect' | 'expected_payload_digest'>,
): SignRequestBase {
  return { ...observeRequest(record, wallet, policy), ...attempt };
}

/**
 * A client of the signer at `endpoint`, with its token (given in the state file, or read from the
 * environment variable it names), or why there is none. The token goes nowhere but the header.
 */
export function signerClient(endpoint: SignerEndpoint, timeoutMs: number): { client: SignerClient; token: string } | { client: null; detail: string } {
  const token = endpoint.token ?? (endpoint.token_env ? process.env[endpoint.token_env] : undefined);
  if (!token) return { client: null, detail: `signer token not available (${endpoint.token_env ?? 'token'})` };
  return { client: createSignerClient({ baseUrl: endpoint.url, token, timeoutMs }), token };
}

/**
 * The signer services behind `addresses`, one per URL (a service may hold several members' keys),
 * each named by its endpoint's label or the first address that names it.
 */
export function signerServices(signers: Readonly<Record<string, SignerEndpoint>>, addresses: Iterable<string>): { name: string; endpoint: SignerEndpoint }[] {
  const services = new Map<string, { name: string; endpoint: SignerEndpoint }>();
  for (const address of addresses) {
    const endpoint = signers[address];
    if (endpoint && !services.has(endpoint.url)) services.set(endpoint.url, { name: endpoint.label ?? address, endpoint });
  }
  return [...services.values()];
}

export class Signers {
  readonly #core: Core;
  readonly #restrictions: Restrictions;
  /** Observations sent to signers in flight (awaited on close). */
  readonly #observing = new Set<Promise<void>>();

  readonly #changes: Changes;

  constructor(core: Core, restrictions: Restrictions, changes: Changes) {
    this.#core = core;
    this.#restrictions = restrictions;
    this.#changes = changes;
  }

  /**
   * Shows a newly created intent that a timelock holds back to its wallet's signer services (POST
   * /observe), so that each starts its clock now. A signer counts a timelock from the later of
   * created_at and its own first sight of the intent (a control plane cannot backdate created_at);
   * without this an intent first shown to the signers at execute, at its not_before, would be
   * refused for a second full timelock. Observing signs nothing. Best effort, off the request
   * path: a signer that is down now starts its clock when it first sees the intent.
   */
  observe(record: IntentRecord): void {
    const work = (async () => {
      const wallet = this.#core.wallet(record.intent.wallet);
      const request = observeRequest(record, wallet, this.#core.policy(wallet.wallet));
      const services = signerServices(this.#core.state.signers, walletMembers(wallet).members.map((m) => m.address));
      const signers = await Promise.all(
        services.map(async ({ name, endpoint }) => {
          const s = signerClient(endpoint, this.#core.signerTimeoutMs);
          if (!s.client) return { signer: name, observed: s.detail };
          try {
            const res = await s.client.observe(request);
            return { signer: name, observed: res.ok ? `counts from ${res.response.timelock_from}` : `refused (${res.refusal.refused.reason})` };
          } catch (e) {
            return { signer: name, observed: `unreachable: ${e instanceof VaultError ? e.shortMessage : 'fault'}`.replaceAll(s.token, '[redacted]') };
          }
        }),
      );
      this.#core.log({ event: 'observed', intentId: record.intentId, signers });
    })().catch((e: unknown) => {
      this.#core.log({ event: 'observe_failed', intentId: record.intentId, error: e instanceof VaultError ? e.shortMessage : 'fault' });
    });
    this.#observing.add(work);
    void work.finally(() => this.#observing.delete(work));
  }

  /**
   * Puts `request` to every member of the wallet at once, each under its own address, and answers
   * in member order once every member has, or as soon as `enough` says the answers so far suffice
   * (execute: once they reach the quorum). A member still out then is listed as not awaited and its
   * answer, when it comes, is only logged: a slow or hung signer holds nothing up.
   */
  askSigners(wallet: WalletDescriptor, request: SignRequestBase, enough?: (answer: SignerAnswer) => boolean): Promise<SignerAnswer[]> {
    const { members } = walletMembers(wallet);
    const answers: (SignerAnswer | undefined)[] = members.map(() => undefined);
    let pending = members.length;
    let done = false;
    return new Promise((resolve) => {
      const finish = () => {
        done = true;
        resolve(members.map((m, i) => answers[i] ?? { outcome: { signer: this.#name(m.address, m.label), address: m.address, ok: false, detail: NOT_AWAITED } }));
      };
      if (pending === 0) finish();
      members.forEach((m, i) => {
        const asked = this.#ask(m.address, m.label, { ...request, signer_address: m.address }).catch((): SignerAnswer => ({
          outcome: { signer: this.#name(m.address, m.label), address: m.address, ok: false, detail: 'fault' },
        }));
        void asked.then((answer) => {
          if (done) {
            this.#core.log({ event: 'signer_late', intentId: request.intent.id, signer: answer.outcome.signer, ok: answer.outcome.ok });
            return;
          }
          answers[i] = answer;
          pending -= 1;
          let stop = false;
          try {
            stop = enough?.(answer) === true;
          } catch {
            // The caller's check is a shortcut only: without it, every answer is awaited.
          }
          if (stop || pending === 0) finish();
        });
      });
    });
  }

  #name(address: string, label: string): string {
    return this.#core.state.signers[address]?.label ?? label;
  }

  async #ask(address: string, label: string, request: SignRequest): Promise<SignerAnswer> {
    const endpoint = this.#core.state.signers[address];
    const name = this.#name(address, label);
    if (!endpoint) return { outcome: { signer: name, address, ok: false, detail: 'no signer endpoint configured' } };
    const s = signerClient(endpoint, this.#core.signerTimeoutMs);
    if (!s.client) return { outcome: { signer: name, address, ok: false, detail: s.detail } };
    const { client, token } = s;
    try {
      // Only a signer holding every restriction this control plane holds is asked to sign: a
      // revocation it missed while down reaches it here first, or it is not asked at all.
      await this.#restrictions.restrictSigner(endpoint.url, name, client);
      // And only one at this control plane's governance version: change sets it missed first, in order.
      await this.#changes.governSigner(endpoint.url, name, client);
      const res = await client.sign(request);
      if (res.ok) {
        if (res.response.signature.signer_address !== address) {
          return { outcome: { signer: name, address, ok: false, detail: `signer answered for ${res.response.signature.signer_address}` } };
        }
        return { outcome: { signer: name, address, ok: true, detail: `signed (${res.response.backend}); signer receipt ${res.response.receipt_head}` }, contribution: res.response.signature };
      }
      const refusal = { reason: res.refusal.refused.reason, message: res.refusal.message };
      return { outcome: { signer: name, address, ok: false, detail: `refused (${refusal.reason}): ${refusal.message}` }, refusal };
    } catch (e) {
      // It may have restarted on another state: push the restrictions again before the next request.
      this.#restrictions.forget(endpoint.url);
      this.#changes.forget(endpoint.url);
      const msg = e instanceof VaultError ? e.shortMessage : 'unreachable';
      return { outcome: { signer: name, address, ok: false, detail: `unreachable: ${msg}`.replaceAll(token, '[redacted]') } };
    }
  }

  /** Waits for the observations in flight (close). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.#observing]);
  }
}
