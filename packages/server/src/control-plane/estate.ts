/**
 * @module control-plane/estate
 * What the ledgers say about the wallets, read live through their drivers: the wallets with their
 * policies, balances flagged against the asset registry (GET /estate), the on-chain control
 * compared with the descriptor (reconcile), and whether each wallet survives the loss of a key
 * (recovery status). Nothing here writes.
 */
import { compareControl, InternalError, policyDigest, VaultError, walletMembers } from '@vault/sdk';
import type { Core } from './core.js';

export class Estate {
  readonly #core: Core;

  constructor(core: Core) {
    this.#core = core;
  }

  walletsView(): Record<string, unknown>[] {
    return this.#core.state.wallets.map((w) => {
      const p = this.#core.state.policies.find((x) => x.wallet === w.wallet);
      const { members, quorum } = walletMembers(w);
      return { ...w, members: members.length, quorum, policy_version: p?.version ?? null, policy_digest: p ? policyDigest(p) : null };
    });
  }

  async estate(): Promise<Record<string, unknown>> {
    const reg = this.#core.state.assets;
    const wallets = await Promise.all(
      this.#core.state.wallets.map(async (w) => {
        try {
          const balances = await this.#core.driverFor(w).balances({ wallet: w });
          return {
            wallet: w.wallet,
            chain: w.chain,
            balances: balances.map((b) => {
              const canonical =
                b.asset === 'native' ||
                reg.assets.some((a) => a.chain === w.chain && a.symbol.toUpperCase() === b.symbol.toUpperCase() && (a.issuer == null || b.asset === a.issuer || b.asset.includes(a.issuer)));
              const reserved = reg.reserved.some((r) => r.toUpperCase() === b.symbol.toUpperCase());
              return { ...b, flags: { ...b.flags, canonical, reserved, counterfeit: reserved && !canonical } };
            }),
          };
        } catch (e) {
          return { wallet: w.wallet, chain: w.chain, balances: [], error: e instanceof VaultError ? e.shortMessage : 'ledger unreachable' };
        }
      }),
    );
    return { wallets, read_at: this.#core.now() };
  }

  async reconcile(walletId: string): Promise<{ wallet: string; chain: string; clean: boolean; checked: unknown[]; drift: unknown[]; balances: unknown[]; control: unknown }> {
    const w = this.#core.wallet(walletId);
    const driver = this.#core.driverFor(w);
    let state;
    let balances;
    try {
      [state, balances] = await Promise.all([driver.controlState({ wallet: w }), driver.balances({ wallet: w })]);
    } catch (e) {
      throw new InternalError('reconcile: the ledger could not be read', { cause: e, data: { reason: 'ledger_unreachable' } });
    }
    const { clean, checked, drift } = compareControl(w, state);
    return { wallet: w.wallet, chain: w.chain, clean, checked, drift, balances, control: state };
  }

  async recoveryStatus(): Promise<Record<string, unknown>> {
    const wallets = await Promise.all(
      this.#core.state.wallets.map(async (w) => {
        try {
          const s = await this.#core.driverFor(w).controlState({ wallet: w });
          const total = s.members.reduce((a, m) => a + m.weight, 0);
          const heaviest = s.members.reduce((a, m) => Math.max(a, m.weight), 0);
          const survives = s.quorum > 0 && total - heaviest >= s.quorum;
          const reachable = s.quorum > 0 && total >= s.quorum;
          // A way around the quorum (a Safe module moves funds with no owner's signature) outranks
          // anything the keys can tell: the quorum is not the only door.
          const bypasses = s.bypasses ?? [];
          const tier = s.masterKeyEnabled ? 'single_key' : bypasses.length > 0 ? 'bypassable' : !reachable ? 'unrecoverable' : survives ? 'resilient' : 'fragile';
          const critical = s.members.filter((m) => total - m.weight < s.quorum).map((m) => m.address);
          return {
            wallet: w.wallet,
            chain: w.chain,
            tier,
            survives_loss_of_any_one_key: survives && !s.masterKeyEnabled,
            total_weight: total,
            quorum: s.quorum,
            critical_keys: critical,
            ways_around_quorum: bypasses,
            proof: { source: 'ledger', read_at: this.#core.now(), control_state: s },
          };
        } catch (e) {
          return { wallet: w.wallet, chain: w.chain, tier: 'unknown', survives_loss_of_any_one_key: null, error: e instanceof VaultError ? e.shortMessage : 'ledger unreachable' };
        }
      }),
    );
    return { wallets, read_at: this.#core.now() };
  }
}
