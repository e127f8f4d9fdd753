import { NotFoundError, RefusedError, TransportError, type BuiltPayload, type WalletDescriptor } from '@vault/sdk';
import { classicAddressToXAddress, xAddressToClassicAddress } from 'ripple-address-codec';
import { describe, expect, it } from 'vitest';
import { createXrplDriver } from './driver.js';

const ADDR = 'rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQC';
const wallet: WalletDescriptor = {
  wallet: 'w',
  chain: 'xrpl:testnet',
  control: { kind: 'native_multisig', address: ADDR, signers: [{ address: 'rsA2LpzuawewSBQXkiju3YQTMzW13pAAdW', curve: 'secp256k1', weight: 1, label: 'a' }], quorum: 1 },
};

/** A driver whose transport answers each method from a table (functions get the params). */
function driverWith(table: Record<string, unknown | ((p: Record<string, unknown>) => unknown)>) {
  const fetch = (async (_u: string, init: { body: string }) => {
    const { method, params } = JSON.parse(init.body) as { method: string; params: Record<string, unknown>[] };
    const entry = table[method];
    const result = typeof entry === 'function' ? (entry as (p: Record<string, unknown>) => unknown)(params[0] ?? {}) : entry ?? { status: 'error', error: 'unknownCmd' };
    return { ok: true, status: 200, text: async () => JSON.stringify({ result }) };
  }) as never;
  return createXrplDriver({ chains: { 'xrpl:testnet': { url: 'http://t/', fetch }, 'xrpl:mainnet': { url: 'http://m/', fetch } } });
}

const built = (tx: Record<string, unknown>): BuiltPayload => {
  const d = driverWith({});
  return d.buildPayload({
    intent: { wallet: 'w', destination: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', amount: '5', asset_decimals: 6, initiator: 'operator', operation: { op: 'transfer' } },
    wallet,
    params: { kind: 'xrpl', sequence: Number(tx['Sequence'] ?? 3), base_fee_drops: 10, last_ledger_sequence: Number(tx['LastLedgerSequence'] ?? 40), network_id: 1 },
  });
};

describe('driver facts', () => {
  const d = driverWith({});
  it('validateAddress follows the X-address test flag, and says the network an X-address names', () => {
    const testX = classicAddressToXAddress(ADDR, false, true);
    const mainX = classicAddressToXAddress(ADDR, 7, false);
    expect(d.validateAddress({ chain: 'xrpl:testnet', address: testX })).toEqual({ valid: true, normalized: ADDR, network: 'xrpl:testnet' });
    expect(d.validateAddress({ chain: 'xrpl:testnet', address: mainX })).toMatchObject({ valid: false });
    // mainX carries tag 7: the tag is where the funds go, so the X-address is kept, never the bare account
    // ... and says which account it pays (policy lists and the burned check compare it).
    expect(d.validateAddress({ chain: 'xrpl:mainnet', address: mainX })).toEqual({ valid: true, normalized: mainX, network: 'xrpl:mainnet', account: ADDR });
    // A classic address names no network.
    expect(d.validateAddress({ chain: 'xrpl:testnet', address: ADDR })).toEqual({ valid: true, normalized: ADDR, network: null });
    expect(d.validateAddress({ chain: 'xrpl:testnet', address: 'rEuLyBCvcw4CFmzv8RepSiAoNgF8tTGJQD' })).toMatchObject({ valid: false, reason: /checksum/ });
    expect(d.validateAddress({ chain: 'xrpl:testnet', address: `${testX.slice(0, -1)}A` })).toMatchObject({ valid: false });
    expect(d.validateAddress({ chain: 'xrpl:other', address: ADDR })).toMatchObject({ valid: false });
  });
  it('attack: an X-address\'s destination tag is never dropped by normalising it (tag 0 included)', () => {
    for (const tag of [0, 1, 7, 4294967295]) {
      const x = classicAddressToXAddress(ADDR, tag, true);
      const check = d.validateAddress({ chain: 'xrpl:testnet', address: x });
      expect(check).toEqual({ valid: true, normalized: x, network: 'xrpl:testnet', account: ADDR });
      if (!check.valid) continue;
      expect(xAddressToClassicAddress(check.normalized)).toEqual({ classicAddress: ADDR, tag, test: true });
      // normalising is idempotent: the signer, normalising what the control plane stored, gets the same
      expect(d.validateAddress({ chain: 'xrpl:testnet', address: check.normalized })).toEqual(check);
    }
    expect(d.validateAddress({ chain: 'xrpl:testnet', address: classicAddressToXAddress(ADDR, false, true) })).toEqual({ valid: true, normalized: ADDR, network: 'xrpl:testnet' });
  });

  it('refuses wallets it cannot serve', async () => {
    await expect(d.fetchParams({ wallet: { ...wallet, chain: 'xrpl:nope' } })).rejects.toThrow(/does not serve/);
    await expect(d.fetchParams({ wallet: { ...wallet, control: { kind: 'evm_safe', safe: '0x', owners: [], threshold: 1 } } as never })).rejects.toBeInstanceOf(RefusedError);
  });
});

describe('driver reads over recorded-shape replies', () => {
  it('fetchParams: missing account, bad fee reply, other RPC errors', async () => {
    const server_info = { info: { network_id: 1, validated_ledger: { seq: 10 } }, status: 'success' };
    const fee = { drops: { base_fee: '10', open_ledger_fee: '12' }, ledger_current_index: 11, status: 'success' };
    const missing = driverWith({ server_info, fee, account_info: { status: 'error', error: 'actNotFound' } });
    await expect(missing.fetchParams({ wallet })).rejects.toBeInstanceOf(NotFoundError);
    const ok = driverWith({ server_info, fee, account_info: { account_data: { Sequence: 9 }, status: 'success' } });
    expect(await ok.fetchParams({ wallet })).toEqual({ kind: 'xrpl', sequence: 9, base_fee_drops: 12, last_ledger_sequence: 31, network_id: 1 });
    const badFee = driverWith({ server_info, fee: { drops: {}, status: 'success' }, account_info: { account_data: { Sequence: 9 } } });
    await expect(badFee.fetchParams({ wallet })).rejects.toBeInstanceOf(TransportError);
    const busy = driverWith({ server_info: { status: 'error', error: 'tooBusy', error_message: 'The server is too busy' }, fee, account_info: { account_data: { Sequence: 9 } } });
    await expect(busy.fetchParams({ wallet })).rejects.toThrow(/tooBusy/);
  });

  it('confirm: pending until validated, tec is failed, unknown hash is pending until expiry', async () => {
    const b = built({});
    const tecDriver = driverWith({ tx: { hash: 'H', validated: true, meta: { TransactionResult: 'tecPATH_DRY' }, tx_json: {} } });
    expect(await tecDriver.confirm({ chain: 'xrpl:testnet', txHash: 'H', built: b })).toMatchObject({ status: 'failed', code: 'tecPATH_DRY', dead: true });
    const open = driverWith({ tx: { hash: 'H', validated: false, meta: { TransactionResult: 'tesSUCCESS' }, tx_json: {} } });
    expect(await open.confirm({ chain: 'xrpl:testnet', txHash: 'H', built: b })).toEqual({ status: 'pending', txHash: 'H' });
    const unknown = driverWith({
      tx: { status: 'error', error: 'txnNotFound' },
      server_info: { info: { validated_ledger: { seq: 12 } } },
      account_info: { account_data: { Sequence: 3 } },
    });
    expect(await unknown.confirm({ chain: 'xrpl:testnet', txHash: 'H', built: b })).toEqual({ status: 'pending', txHash: 'H' });
    const broken = driverWith({ tx: { status: 'error', error: 'internal' } });
    await expect(broken.confirm({ chain: 'xrpl:testnet', txHash: 'H', built: b })).rejects.toBeInstanceOf(TransportError);
  });

  it('balances skip obligations and widen decimals to stay exact; issuer facts of a missing account', async () => {
    const d = driverWith({
      account_info: (p: Record<string, unknown>) => (p['account'] === ADDR ? { account_data: { Balance: '5', Flags: 0x00100000, Sequence: 1 }, status: 'success' } : { status: 'error', error: 'actNotFound' }),
      account_lines: { lines: [{ account: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', currency: 'USD', balance: '0.0000001' }, { account: 'rX', currency: 'EUR', balance: '-3' }] },
      account_objects: { account_objects: [] },
      gateway_balances: { account: ADDR, status: 'success' },
    });
    const balances = await d.balances({ wallet });
    expect(balances).toEqual([
      { asset: 'native', symbol: 'XRP', amount: '5', decimals: 6 },
      { asset: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh.USD', symbol: 'USD', amount: '1', decimals: 7, flags: {} },
    ]);
    expect(await d.issuerFacts({ chain: 'xrpl:testnet', issuer: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh' })).toMatchObject({ exists: false, blackholed: false });
    const blackholed = await d.issuerFacts({ chain: 'xrpl:testnet', issuer: ADDR });
    expect(blackholed.blackholed).toBe(true);
    const state = await d.controlState({ wallet });
    expect(state).toMatchObject({ quorum: 0, members: [], masterKeyEnabled: false });
  });
});
