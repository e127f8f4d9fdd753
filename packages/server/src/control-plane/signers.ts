/**
 * @module control-plane/signers
 * What the control plane puts to the wallet's signers: the one SignRequest builder (and the
 * ObserveRequest it starts from), and how a signer endpoint of the state file becomes a client.
 */
import {
  createSignerClient,
  policyDigest,
  type Contribution,
  type IntentRequest,
  type ObserveRequest,
  type PolicySet,
  type SignRequest,
  type SignerClient,
  type SignerOutcome,
  type WalletDescriptor,
} from '@vault/sdk';
import type { SignerEndpoint } from './state.js';
import type { IntentRecord } from './store.js';

/** One signer's answer to a SignRequest: its outcome as execute reports it, and its signature or refusal. */
export interface SignerAnswer {
  outcome: SignerOutcome;
  contribution?: Contribution;
  refusal?: { reason: string; message: string };
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
