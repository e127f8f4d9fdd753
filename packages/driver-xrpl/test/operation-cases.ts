/**
 * OperationCases for the conformance suite: every operation the driver lists, executed end to end
 * by `describeChainDriver` and verified through the devnet's own state (`devnet.ledger`), never
 * through the driver. Setups are the ones operations.test.ts uses: single-signed trust lines,
 * issuances and flags made by the account's master key before its signer list disables it.
 */
import { expect } from 'vitest';
import type { OperationCase } from '@vault/sdk/testing';
import type { Wallet } from 'xrpl';
import { ACCOUNT_ROOT_FLAGS, ACCOUNT_SET_FLAGS } from '../src/constants.js';
import type { XrplDevnet } from '../src/devnet/index.js';
import { mptIssuanceId } from '../src/index.js';
import { conformanceFixture, fundedWallet, opCase, realWalletFixture, setupTx, type WalletSetup } from './helpers.js';

const IOU = 10n ** 30n; // devnet trust-line balances are in 10^-30 units
const RLUSD = '524C555344000000000000000000000000000000'; // 'RLUSD' as the ledger's 40-hex code

/** The issuance id of the (only) MPT issuance `issuer` holds on the devnet. */
function onlyIssuance(devnet: XrplDevnet, issuer: string): string {
  const [issuance, ...rest] = devnet.ledger.issuancesOf(issuer);
  if (!issuance || rest.length > 0) throw new Error(`expected one issuance by ${issuer}`);
  return issuance.id;
}

async function optIn(devnet: XrplDevnet, holder: Wallet, id: string): Promise<void> {
  await setupTx(devnet, holder, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: id });
}

/** One OperationCase per operation variant, for wallets shaped like `setup` on `devnetOf()`. */
export function xrplOperationCases(devnetOf: () => XrplDevnet, setup: WalletSetup): OperationCase[] {
  return [
    opCase(
      'transfer XRP with a memo',
      async () => {
        const devnet = devnetOf();
        const fixture = conformanceFixture(devnet, setup);
        return { fixture, ctx: { before: devnet.ledger.xrpBalance(fixture.destination) } };
      },
      (f) => ({ destination: f.destination, amount: '2500000', memo: 'invoice 42' }),
      async (f, { before }, confirmed) => {
        const devnet = devnetOf();
        expect(devnet.ledger.xrpBalance(f.destination) - before).toBe(2_500_000n);
        const rec = devnet.ledger.tx(confirmed.txHash);
        expect(rec?.tx).toMatchObject({ TransactionType: 'Payment', Destination: f.destination, Amount: '2500000' });
        const memos = rec?.tx['Memos'] as { Memo: { MemoData: string } }[];
        expect(Buffer.from(memos[0]?.Memo.MemoData ?? '', 'hex').toString()).toBe('invoice 42');
      },
    ),

    opCase(
      'transfer IOU (ACCOUNT.CODE) rippling through the issuer',
      async () => {
        const devnet = devnetOf();
        const issuer = fundedWallet(devnet);
        await setupTx(devnet, issuer, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfDefaultRipple });
        const holder = fundedWallet(devnet);
        await setupTx(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency: 'USD', issuer: issuer.classicAddress, value: '1000' } });
        const fixture = await realWalletFixture(
          devnet,
          setup,
          async (master) => {
            await setupTx(devnet, master, { TransactionType: 'TrustSet', LimitAmount: { currency: 'USD', issuer: issuer.classicAddress, value: '1000' } });
            await setupTx(devnet, issuer, { TransactionType: 'Payment', Destination: master.classicAddress, Amount: { currency: 'USD', issuer: issuer.classicAddress, value: '100' } });
          },
          holder.classicAddress,
        );
        return { fixture, ctx: { issuer: issuer.classicAddress, address: fixture.address } };
      },
      (f, { issuer }) => ({ destination: f.destination, amount: '1234', asset_decimals: 2, asset_issuer: `${issuer}.USD`, asset_symbol: 'USD' }),
      async (f, { issuer, address }) => {
        const devnet = devnetOf();
        expect(devnet.ledger.trustLine(f.destination, issuer, 'USD')?.balance).toBe(1234n * 10n ** 28n);
        expect(devnet.ledger.trustLine(address, issuer, 'USD')?.balance).toBe(8766n * 10n ** 28n);
      },
    ),

    opCase(
      'transfer MPT held by the wallet (CanTransfer)',
      async () => {
        const devnet = devnetOf();
        const issuer = fundedWallet(devnet);
        await setupTx(devnet, issuer, { TransactionType: 'MPTokenIssuanceCreate', AssetScale: 2, Flags: 0x20 });
        const id = onlyIssuance(devnet, issuer.classicAddress);
        const holder = fundedWallet(devnet);
        await optIn(devnet, holder, id);
        const fixture = await realWalletFixture(
          devnet,
          setup,
          async (master) => {
            await optIn(devnet, master, id);
            await setupTx(devnet, issuer, { TransactionType: 'Payment', Destination: master.classicAddress, Amount: { mpt_issuance_id: id, value: '1000' } });
          },
          holder.classicAddress,
        );
        return { fixture, ctx: { id, address: fixture.address } };
      },
      (f, { id }) => ({ destination: f.destination, amount: '250', asset_decimals: 2, asset_issuer: id }),
      async (f, { id, address }) => {
        const devnet = devnetOf();
        expect(devnet.ledger.mpToken(id, f.destination)?.amount).toBe(250n);
        expect(devnet.ledger.mpToken(id, address)?.amount).toBe(750n);
        expect(devnet.ledger.mptIssuance(id)?.outstanding).toBe(1000n);
      },
    ),

    opCase(
      'issue IOU to a trusting holder',
      async () => {
        const devnet = devnetOf();
        const holder = fundedWallet(devnet);
        const fixture = conformanceFixture(devnet, setup);
        const address = fixture.wallet.control.kind === 'native_multisig' ? fixture.wallet.control.address : '';
        await setupTx(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency: 'EUR', issuer: address, value: '500' } });
        return { fixture: { ...fixture, destination: holder.classicAddress }, ctx: { address } };
      },
      (f, { address }) => ({ destination: f.destination, amount: '100', asset_issuer: `${address}.EUR`, asset_decimals: 0, operation: { op: 'issue' } }),
      async (f, { address }) => {
        expect(devnetOf().ledger.trustLine(f.destination, address, 'EUR')?.balance).toBe(100n * IOU);
      },
    ),

    opCase(
      'issue IOU with a 40-hex currency code (RLUSD) and 2 decimals',
      async () => {
        const devnet = devnetOf();
        const holder = fundedWallet(devnet);
        const fixture = conformanceFixture(devnet, setup);
        const address = fixture.wallet.control.kind === 'native_multisig' ? fixture.wallet.control.address : '';
        await setupTx(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency: RLUSD, issuer: address, value: '500' } });
        return { fixture: { ...fixture, destination: holder.classicAddress }, ctx: { address } };
      },
      (f, { address }) => ({ destination: f.destination, amount: '1550', asset_issuer: `${address}.RLUSD`, asset_symbol: 'RLUSD', asset_decimals: 2, operation: { op: 'issue' } }),
      async (f, { address }) => {
        expect(devnetOf().ledger.trustLine(f.destination, address, RLUSD)?.balance).toBe(155n * 10n ** 29n);
      },
    ),

    opCase(
      'issue MPT to an opted-in holder',
      async () => {
        const devnet = devnetOf();
        const holder = fundedWallet(devnet);
        let id = '';
        const fixture = await realWalletFixture(
          devnet,
          setup,
          async (master) => {
            await setupTx(devnet, master, { TransactionType: 'MPTokenIssuanceCreate', AssetScale: 2, Flags: 0x20, MaximumAmount: '1000000' });
            id = onlyIssuance(devnet, master.classicAddress);
            await optIn(devnet, holder, id);
          },
          holder.classicAddress,
        );
        return { fixture, ctx: { id } };
      },
      (f, { id }) => ({ destination: f.destination, amount: '700', asset_issuer: id, asset_decimals: 2, operation: { op: 'issue' } }),
      async (f, { id }) => {
        const devnet = devnetOf();
        expect(devnet.ledger.mpToken(id, f.destination)?.amount).toBe(700n);
        expect(devnet.ledger.mptIssuance(id)?.outstanding).toBe(700n);
      },
    ),

    opCase(
      'authorize_holder IOU (tfSetfAuth on a RequireAuth issuer)',
      async () => {
        const devnet = devnetOf();
        const holder = fundedWallet(devnet);
        const fixture = conformanceFixture(devnet, { ...setup, flags: ACCOUNT_ROOT_FLAGS.lsfRequireAuth });
        const address = fixture.wallet.control.kind === 'native_multisig' ? fixture.wallet.control.address : '';
        await setupTx(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency: 'EUR', issuer: address, value: '500' } });
        expect(devnet.ledger.trustLine(holder.classicAddress, address, 'EUR')?.authorized).toBe(false);
        return { fixture: { ...fixture, destination: holder.classicAddress }, ctx: { address } };
      },
      (f, { address }) => ({ destination: f.destination, amount: '0', asset_issuer: `${address}.EUR`, asset_decimals: 0, operation: { op: 'authorize_holder' } }),
      async (f, { address }) => {
        expect(devnetOf().ledger.trustLine(f.destination, address, 'EUR')?.authorized).toBe(true);
      },
    ),

    opCase(
      'authorize_holder MPT (RequireAuth issuance)',
      async () => {
        const devnet = devnetOf();
        const holder = fundedWallet(devnet);
        let id = '';
        const fixture = await realWalletFixture(
          devnet,
          setup,
          async (master) => {
            await setupTx(devnet, master, { TransactionType: 'MPTokenIssuanceCreate', AssetScale: 2, Flags: 0x04 | 0x20 });
            id = onlyIssuance(devnet, master.classicAddress);
            await optIn(devnet, holder, id);
          },
          holder.classicAddress,
        );
        expect(devnet.ledger.mpToken(id, holder.classicAddress)?.authorized).toBe(false);
        return { fixture, ctx: { id } };
      },
      (f, { id }) => ({ destination: f.destination, amount: '0', asset_issuer: id, asset_decimals: 2, operation: { op: 'authorize_holder' } }),
      async (f, { id }) => {
        expect(devnetOf().ledger.mpToken(id, f.destination)?.authorized).toBe(true);
      },
    ),

    opCase(
      'authorize_holder MPT revoke (tfMPTUnauthorize)',
      async () => {
        const devnet = devnetOf();
        const holder = fundedWallet(devnet);
        let id = '';
        const fixture = await realWalletFixture(
          devnet,
          setup,
          async (master) => {
            await setupTx(devnet, master, { TransactionType: 'MPTokenIssuanceCreate', AssetScale: 2, Flags: 0x04 | 0x20 });
            id = onlyIssuance(devnet, master.classicAddress);
            await optIn(devnet, holder, id);
            await setupTx(devnet, master, { TransactionType: 'MPTokenAuthorize', MPTokenIssuanceID: id, Holder: holder.classicAddress });
          },
          holder.classicAddress,
        );
        expect(devnet.ledger.mpToken(id, holder.classicAddress)?.authorized).toBe(true);
        return { fixture, ctx: { id } };
      },
      (f, { id }) => ({ destination: f.destination, amount: '0', asset_issuer: id, asset_decimals: 2, operation: { op: 'authorize_holder', revoke: true } }),
      async (f, { id }) => {
        expect(devnetOf().ledger.mpToken(id, f.destination)?.authorized).toBe(false);
      },
    ),

    opCase(
      'clawback IOU (AllowTrustLineClawback issuer)',
      async () => {
        const devnet = devnetOf();
        const holder = fundedWallet(devnet);
        let address = '';
        const fixture = await realWalletFixture(
          devnet,
          setup,
          async (master) => {
            address = master.classicAddress;
            await setupTx(devnet, master, { TransactionType: 'AccountSet', SetFlag: ACCOUNT_SET_FLAGS.asfAllowTrustLineClawback });
            await setupTx(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency: 'EUR', issuer: address, value: '500' } });
            await setupTx(devnet, master, { TransactionType: 'Payment', Destination: holder.classicAddress, Amount: { currency: 'EUR', issuer: address, value: '100' } });
          },
          holder.classicAddress,
        );
        return { fixture, ctx: { address } };
      },
      (f, { address }) => ({ destination: f.destination, amount: '40', asset_issuer: `${address}.EUR`, asset_decimals: 0, operation: { op: 'clawback' } }),
      async (f, { address }) => {
        expect(devnetOf().ledger.trustLine(f.destination, address, 'EUR')?.balance).toBe(60n * IOU);
      },
    ),

    opCase(
      'clawback MPT (CanClawback issuance)',
      async () => {
        const devnet = devnetOf();
        const holder = fundedWallet(devnet);
        let id = '';
        const fixture = await realWalletFixture(
          devnet,
          setup,
          async (master) => {
            await setupTx(devnet, master, { TransactionType: 'MPTokenIssuanceCreate', AssetScale: 2, Flags: 0x20 | 0x40 });
            id = onlyIssuance(devnet, master.classicAddress);
            await optIn(devnet, holder, id);
            await setupTx(devnet, master, { TransactionType: 'Payment', Destination: holder.classicAddress, Amount: { mpt_issuance_id: id, value: '500' } });
          },
          holder.classicAddress,
        );
        return { fixture, ctx: { id } };
      },
      (f, { id }) => ({ destination: f.destination, amount: '200', asset_issuer: id, asset_decimals: 2, operation: { op: 'clawback' } }),
      async (f, { id }) => {
        const devnet = devnetOf();
        expect(devnet.ledger.mpToken(id, f.destination)?.amount).toBe(300n);
        expect(devnet.ledger.mptIssuance(id)?.outstanding).toBe(300n);
      },
    ),

    opCase(
      'mpt_create (scale, flags, maximum, fee, metadata)',
      async () => {
        const fixture = conformanceFixture(devnetOf(), setup);
        const address = fixture.wallet.control.kind === 'native_multisig' ? fixture.wallet.control.address : '';
        return { fixture, ctx: { address, metadata: Buffer.from(JSON.stringify({ ticker: 'TBILL' })).toString('hex') } };
      },
      (_f, { address, metadata }) => ({
        destination: address,
        amount: '0',
        operation: { op: 'mpt_create', asset_scale: 2, flags: 0x04 | 0x20 | 0x40, maximum_amount: '1000000', transfer_fee: 100, metadata_hex: metadata },
      }),
      async (_f, { address, metadata }, confirmed) => {
        const devnet = devnetOf();
        const id = confirmed.outcome?.['mptIssuanceId'];
        expect(id, 'confirm outcome must carry the mptIssuanceId').toMatch(/^[0-9A-F]{48}$/);
        // The id the ledger itself derives from the applied transaction's Sequence and Account.
        const rec = devnet.ledger.tx(confirmed.txHash);
        expect(id).toBe(mptIssuanceId(Number(rec?.tx['Sequence']), address));
        expect(devnet.ledger.issuancesOf(address).map((i) => i.id)).toEqual([id]);
        expect(devnet.ledger.mptIssuance(id as string)).toMatchObject({
          issuer: address,
          assetScale: 2,
          flags: 0x64,
          maximumAmount: 1_000_000n,
          transferFee: 100,
          outstanding: 0n,
        });
        expect(devnet.ledger.mptIssuance(id as string)?.metadata?.toUpperCase()).toBe(metadata.toUpperCase());
      },
    ),

    opCase(
      'account_flags sets DefaultRipple',
      async () => {
        const fixture = conformanceFixture(devnetOf(), setup);
        const address = fixture.wallet.control.kind === 'native_multisig' ? fixture.wallet.control.address : '';
        expect((devnetOf().ledger.account(address)?.flags ?? 0) & ACCOUNT_ROOT_FLAGS.lsfDefaultRipple).toBe(0);
        return { fixture, ctx: { address } };
      },
      (_f, { address }) => ({ destination: address, amount: '0', operation: { op: 'account_flags', set: ACCOUNT_SET_FLAGS.asfDefaultRipple } }),
      async (_f, { address }) => {
        expect((devnetOf().ledger.account(address)?.flags ?? 0) & ACCOUNT_ROOT_FLAGS.lsfDefaultRipple).not.toBe(0);
      },
    ),

    opCase(
      'account_flags clears DefaultRipple',
      async () => {
        const fixture = conformanceFixture(devnetOf(), { ...setup, flags: ACCOUNT_ROOT_FLAGS.lsfDefaultRipple });
        const address = fixture.wallet.control.kind === 'native_multisig' ? fixture.wallet.control.address : '';
        return { fixture, ctx: { address } };
      },
      (_f, { address }) => ({ destination: address, amount: '0', operation: { op: 'account_flags', clear: ACCOUNT_SET_FLAGS.asfDefaultRipple } }),
      async (_f, { address }) => {
        const flags = devnetOf().ledger.account(address)?.flags ?? 0;
        expect(flags & ACCOUNT_ROOT_FLAGS.lsfDefaultRipple).toBe(0);
        expect(flags & ACCOUNT_ROOT_FLAGS.lsfDisableMaster, 'the master key stays disabled').not.toBe(0);
      },
    ),
  ];
}
