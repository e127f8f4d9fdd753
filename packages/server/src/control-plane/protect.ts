/**
 * @module control-plane/protect
 * The protections' inputs and the guards: what the control plane reads from the ledger and its
 * state (known destinations, burned keys, code at addresses, compliance clearance, attestations)
 * for the guards and the policy, GET /intent/{id}/protect, and the guard run execute does before it
 * asks the signers (the signer runs the same guards on what it is sent).
 */
import { InternalError, runIntentGuards, type ChainDriver, type Finding, type GuardReport, type PolicySet, type ProtectInputs, type WalletDescriptor } from '@vault/sdk';
import type { Core } from './core.js';
import { attestationValid } from './state.js';
import type { IntentRecord } from './store.js';

export class Protections {
  readonly #core: Core;

  constructor(core: Core) {
    this.#core = core;
  }

  complianceCleared(destination: string): boolean {
    return this.#core.state.compliance.cleared_destinations.includes(destination);
  }

  attestationValid(policy: PolicySet, wallet: string): boolean {
    const attesters = policy.rules.flatMap((r) => (r.rule === 'require_attestation' ? r.attesters : []));
    return attesters.length > 0 && attestationValid(this.#core.state, wallet, attesters, this.#core.now());
  }

  async protectInputs(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver): Promise<ProtectInputs> {
    const facts = await driver.fetchProtectInputs(record.intent, wallet);
    const policy = this.#core.policy(wallet.wallet);
    const known = new Set([...this.#core.state.known_destinations, ...this.#core.store.knownFor(wallet.wallet)]);
    return {
      known_destinations: [...known].slice(0, 10000),
      burned: [...this.#core.state.burned],
      evm_code: facts.evm_code,
      token_owner_burned: facts.token_owner_burned,
      onchain_symbol: facts.onchain_symbol,
      compliance_cleared: this.complianceCleared(record.intent.destination),
      attestation_valid: this.attestationValid(policy, wallet.wallet),
    };
  }

  guards(record: IntentRecord, wallet: WalletDescriptor, driver: ChainDriver, protect: ProtectInputs): GuardReport {
    // The signer runs the same function on the same facts before it signs.
    return runIntentGuards({ intent: record.intent, wallet, protect, driver, registry: this.#core.state.assets });
  }

  /** GET /intent/{id}/protect: the guards on live chain inputs, without executing. */
  async protect(id: string): Promise<{ intentId: string; blocked: boolean; findings: Finding[] }> {
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
    return { intentId: id, blocked: report.blocked, findings: report.findings };
  }
}
