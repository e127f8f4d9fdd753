/**
 * @module control-plane/signers
 * What the control plane puts to the wallet's signers: the one SignRequest builder.
 */
import { policyDigest, type Contribution, type IntentRequest, type PolicySet, type SignRequest, type SignerOutcome, type WalletDescriptor } from '@vault/sdk';
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
  return {
    intent: { id: record.intentId, created_at: record.created_at, request: record.intent as IntentRequest },
    wallet,
    policy,
    policy_digest: policyDigest(policy),
    ...attempt,
  };
}
