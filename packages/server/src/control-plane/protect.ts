/**
 * @module control-plane/protect
 * The protections' inputs and the guards: what the control plane reads from the ledger and its
 * state (known destinations, burned keys, code at addresses, compliance clearance, attestations)
 * for the guards and the policy, GET /intent/{id}/protect, and the guard run execute does before it
 * asks the signers (the signer runs the same guards on what it is sent).
 */
import {
  InternalError,
  MAX_STATEMENTS,
  protectChainFacts,
  runIntentGuards,
  sameAddress,
  verifyStatements,
  type ChainDriver,
  type Finding,
  type GuardReport,
  type PolicySet,
  type ProtectInputs,
  type SignedStatement,
  type StatementVerdict,
  type WalletDescriptor,
} from '@vault/sdk';
import type { Core } from './core.js';
import type { IntentRecord } from './store.js';

export class Protections {
  readonly #core: Core;

  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * The state file's attestations of the wallet and clearances of the destination, verified by the
   * SDK function each signer runs on the statements it is sent: the two services decide
   * attestation_valid and compliance_cleared the same way, from signatures, never from a list.
   */
  statements(policy: PolicySet, intent: { wallet: string; destination: string }): StatementVerdict {
    const state = this.#core.state;
    const candidates = [
      ...state.attestation.attestations.filter((a) => a.wallet === intent.wallet),
      ...state.compliance.clearances.filter((c) => sameAddress(c.destination, intent.destination)),
    ];
    return verifyStatements(candidates, { policy, wallet: intent.wallet, chain: this.#core.wallet(intent.wallet).chain, destination: intent.destination, now: this.#core.now() });
  }

  async protectInputs(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver): Promise<ProtectInputs> {
    const facts = await driver.fetchProtectInputs({ intent: record.intent, wallet });
    const policy = this.#core.policy(wallet.wallet);
    const known = new Set([...this.#core.state.known_destinations, ...this.#core.store.knownFor(wallet.wallet)]);
    const statements = this.statements(policy, record.intent);
    return {
      known_destinations: [...known].slice(0, 10000),
      burned: [...this.#core.state.burned],
      ...protectChainFacts(facts),
      compliance_cleared: statements.compliance_cleared,
      attestation_valid: statements.attestation_valid,
      statements: evidence(statements.valid),
    };
  }

  guards(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver, protect: ProtectInputs): GuardReport {
    // The signer runs the same function on the same facts before it signs.
    return runIntentGuards({ intent: record.intent, wallet, protect, driver, registry: this.#core.state.assets });
  }

  /**
   * GET /intent/{id}/protect: the guards on live chain inputs, without executing; and the
   * destination as an approver needs it (its label when it is one of ours, whether this wallet
   * has ever paid it: the same known set the address_poisoning guard reads).
   */
  async protect(id: string): Promise<{ intentId: string; blocked: boolean; findings: Finding[]; destination: DestinationView }> {
    const record = this.#core.writer.get(id);
    const wallet = this.#core.wallet(record.intent.wallet);
    const driver = this.#core.driverFor(wallet);
    let protect: ProtectInputs;
    try {
      protect = await this.protectInputs(record, wallet, driver);
    } catch (e) {
      throw new InternalError('protections: the ledger could not be read', { cause: e, data: { stage: 'protections', reason: 'ledger_unreachable' } });
    }
    const report = this.guards(record, wallet, driver, protect);
    const address = record.intent.destination;
    const destination = { address, label: this.destinationLabel(address), first_payment: !protect.known_destinations.some((k) => sameAddress(k, address)) };
    return { intentId: id, blocked: report.blocked, findings: report.findings, destination };
  }

  /** A name the state file gives `address`: one of its wallets, or a member of one (its label). */
  destinationLabel(address: string): string | null {
    for (const w of this.#core.state.wallets) {
      const c = w.control;
      if (sameAddress(c.kind === 'native_multisig' ? c.address : c.safe, address)) return `wallet ${w.wallet}`;
    }
    for (const w of this.#core.state.wallets) {
      const c = w.control;
      const member = (c.kind === 'native_multisig' ? c.signers : c.owners).find((m) => sameAddress(m.address, address));
      if (member) return `${member.label} (a signer of ${w.wallet})`;
    }
    return null;
  }
}

/** The destination of an intent as GET /intent/{id}/protect shows it to an approver. */
export interface DestinationView {
  address: string;
  label: string | null;
  /** No confirmed payment from this wallet, nor the state's known_destinations, names it. */
  first_payment: boolean;
}

/**
 * The statements a SignRequest carries: per kind and signing key the one that stays valid longest
 * (one per key meets every rule that names the key), at most MAX_STATEMENTS.
 */
function evidence(valid: readonly SignedStatement[]): SignedStatement[] {
  const best = new Map<string, SignedStatement>();
  for (const s of valid) {
    const key = `${s.kind}:${s.kind === 'attestation' ? s.attester : s.clearer}`;
    const held = best.get(key);
    if (held === undefined || s.expires_at > held.expires_at) best.set(key, s);
  }
  return [...best.values()].slice(0, MAX_STATEMENTS);
}
