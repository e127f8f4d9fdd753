/**
 * OperationCases for the conformance suite: every operation the driver lists, executed end to end
 * by `describeChainDriver` and verified through the devnet's own ledger (`devnet.ledger`), never
 * through the driver. Setups are the ones operations.test.ts uses, made with master-signed
 * transactions before the wallet's master key is disabled.
 */
import { Asset, Keypair, Operation, type xdr } from '@stellar/stellar-base';
import { expect } from 'vitest';
import type { ConformanceFixture, OperationCase } from '@vault/sdk/testing';
import { ACCOUNT_FLAGS, TRUSTLINE_FLAGS } from '../src/index.js';
import type { StellarDevnet } from '../src/devnet/index.js';
import { opCase, plainAccount, submitClassic, trust } from './helpers.js';

/** What an operation case adds to the suite's wallet shape. */
export interface WalletExtras {
  wallet?: { trust?: { code: string; issuer: string }[]; prepare?: (master: Keypair) => Promise<xdr.Operation[]> };
  destination?: string;
}

const D = { asset_decimals: 7 } as const;
const ISSUER_FLAGS = ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_revocable | ACCOUNT_FLAGS.auth_clawback_enabled;

const walletAddress = (f: ConformanceFixture) => (f.wallet.control.kind === 'native_multisig' ? f.wallet.control.address : '');

/**
 * An issuer wallet (auth_required, revocable, clawback enabled) with `holder` trusting CODE:wallet
 * (the trust line made after the flags, so clawback is enabled on it). `then` adds master-signed
 * operations on that line (authorize, pay) to the wallet's setup transaction.
 */
function issuerWallet(devnet: StellarDevnet, holder: Keypair, code: string, then: (asset: Asset) => xdr.Operation[] = () => []): WalletExtras['wallet'] {
  return {
    prepare: async (master) => {
      const flags = await submitClassic(devnet, master.publicKey(), [Operation.setOptions({ setFlags: ISSUER_FLAGS as never })], [master]);
      if (flags.status !== 200) throw new Error(`issuer flags failed: ${JSON.stringify(flags.body)}`);
      await trust(devnet, holder, code, master.publicKey());
      return then(new Asset(code, master.publicKey()));
    },
  };
}

/** One OperationCase per operation variant, on wallets made by `make` (the suite's wallet shape). */
export function stellarOperationCases(devnet: StellarDevnet, make: (extra: WalletExtras) => Promise<ConformanceFixture>): OperationCase[] {
  const line = (holder: string, code: string, issuer: string) => devnet.ledger.trustLine(holder, code, issuer);
  return [
    opCase(
      'transfer native XLM with a text memo',
      async () => {
        const fixture = await make({});
        return { fixture, ctx: { before: devnet.ledger.nativeBalance(fixture.destination) } };
      },
      (f) => ({ destination: f.destination, amount: '7770000', memo: 'invoice 42' }),
      async (f, { before }, confirmed) => {
        expect(devnet.ledger.nativeBalance(f.destination) - before).toBe(7_770_000n);
        expect(devnet.ledger.transaction(confirmed.txHash)).toMatchObject({ successful: true, memoType: 'text', memo: 'invoice 42', source: walletAddress(f) });
      },
    ),

    opCase(
      'transfer a credit asset CODE:ISSUER',
      async () => {
        const issuer = await plainAccount(devnet);
        const holder = await plainAccount(devnet);
        await trust(devnet, holder, 'USD', issuer.publicKey());
        const fixture = await make({ wallet: { trust: [{ code: 'USD', issuer: issuer.publicKey() }] }, destination: holder.publicKey() });
        const pay = await submitClassic(devnet, issuer.publicKey(), [Operation.payment({ destination: walletAddress(fixture), asset: new Asset('USD', issuer.publicKey()), amount: '50' })], [issuer]);
        expect(pay.status).toBe(200);
        return { fixture, ctx: { issuer: issuer.publicKey() } };
      },
      (f, { issuer }) => ({ destination: f.destination, amount: '200000000', asset_symbol: 'USD', asset_issuer: issuer, ...D }),
      async (f, { issuer }) => {
        expect(line(f.destination, 'USD', issuer)?.balance).toBe(200_000_000n);
        expect(line(walletAddress(f), 'USD', issuer)?.balance).toBe(300_000_000n);
      },
    ),

    opCase(
      'issue to a trusting holder',
      async () => {
        const holder = await plainAccount(devnet);
        const fixture = await make({ destination: holder.publicKey() });
        await trust(devnet, holder, 'GOLD', walletAddress(fixture));
        return { fixture, ctx: {} };
      },
      (f) => ({ destination: f.destination, amount: '1000', asset_symbol: 'GOLD', asset_issuer: walletAddress(f), ...D, operation: { op: 'issue' } }),
      async (f) => {
        expect(line(f.destination, 'GOLD', walletAddress(f))?.balance).toBe(1000n);
      },
    ),

    opCase(
      'issue an alphanum12 asset (LONGASSET12)',
      async () => {
        const holder = await plainAccount(devnet);
        const fixture = await make({ destination: holder.publicKey() });
        await trust(devnet, holder, 'LONGASSET12', walletAddress(fixture));
        return { fixture, ctx: {} };
      },
      (f) => ({ destination: f.destination, amount: '25000000', asset_symbol: 'LONGASSET12', asset_issuer: walletAddress(f), ...D, operation: { op: 'issue' } }),
      async (f) => {
        expect(line(f.destination, 'LONGASSET12', walletAddress(f))?.balance).toBe(25_000_000n);
      },
    ),

    opCase(
      'authorize_holder on an auth_required issuer',
      async () => {
        const holder = await plainAccount(devnet);
        const fixture = await make({ wallet: issuerWallet(devnet, holder, 'GOLD'), destination: holder.publicKey() });
        expect(line(holder.publicKey(), 'GOLD', walletAddress(fixture))?.flags).toBe(TRUSTLINE_FLAGS.clawback_enabled); // not authorized yet
        return { fixture, ctx: {} };
      },
      (f) => ({ destination: f.destination, amount: '0', asset_symbol: 'GOLD', asset_issuer: walletAddress(f), ...D, operation: { op: 'authorize_holder' } }),
      async (f) => {
        expect(line(f.destination, 'GOLD', walletAddress(f))?.flags).toBe(TRUSTLINE_FLAGS.authorized | TRUSTLINE_FLAGS.clawback_enabled);
      },
    ),

    opCase(
      'authorize_holder revoke',
      async () => {
        const holder = await plainAccount(devnet);
        const fixture = await make({
          wallet: issuerWallet(devnet, holder, 'GOLD', (asset) => [Operation.setTrustLineFlags({ trustor: holder.publicKey(), asset, flags: { authorized: true } })]),
          destination: holder.publicKey(),
        });
        expect((line(holder.publicKey(), 'GOLD', walletAddress(fixture))?.flags ?? 0) & TRUSTLINE_FLAGS.authorized).not.toBe(0);
        return { fixture, ctx: {} };
      },
      (f) => ({ destination: f.destination, amount: '0', asset_symbol: 'GOLD', asset_issuer: walletAddress(f), ...D, operation: { op: 'authorize_holder', revoke: true } }),
      async (f) => {
        expect((line(f.destination, 'GOLD', walletAddress(f))?.flags ?? 0) & TRUSTLINE_FLAGS.authorized).toBe(0);
      },
    ),

    opCase(
      'clawback from a clawback-enabled trust line',
      async () => {
        const holder = await plainAccount(devnet);
        const fixture = await make({
          wallet: issuerWallet(devnet, holder, 'GOLD', (asset) => [
            Operation.setTrustLineFlags({ trustor: holder.publicKey(), asset, flags: { authorized: true } }),
            Operation.payment({ destination: holder.publicKey(), asset, amount: '0.0001000' }),
          ]),
          destination: holder.publicKey(),
        });
        expect(line(holder.publicKey(), 'GOLD', walletAddress(fixture))?.balance).toBe(1000n);
        return { fixture, ctx: {} };
      },
      (f) => ({ destination: f.destination, amount: '300', asset_symbol: 'GOLD', asset_issuer: walletAddress(f), ...D, operation: { op: 'clawback' } }),
      async (f) => {
        expect(line(f.destination, 'GOLD', walletAddress(f))?.balance).toBe(700n);
      },
    ),

    opCase(
      'account_flags sets auth_required | auth_revocable',
      async () => ({ fixture: await make({}), ctx: {} }),
      (f) => ({ destination: walletAddress(f), amount: '0', operation: { op: 'account_flags', set: ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_revocable } }),
      async (f) => {
        expect(devnet.ledger.account(walletAddress(f))?.flags).toBe(ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_revocable);
      },
    ),

    opCase(
      'account_flags clears auth_revocable',
      async () => ({
        fixture: await make({
          wallet: { prepare: async () => [Operation.setOptions({ setFlags: (ACCOUNT_FLAGS.auth_required | ACCOUNT_FLAGS.auth_revocable) as never })] },
        }),
        ctx: {},
      }),
      (f) => ({ destination: walletAddress(f), amount: '0', operation: { op: 'account_flags', clear: ACCOUNT_FLAGS.auth_revocable } }),
      async (f) => {
        expect(devnet.ledger.account(walletAddress(f))?.flags).toBe(ACCOUNT_FLAGS.auth_required);
      },
    ),
  ];
}
