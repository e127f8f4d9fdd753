/**
 * Seeding helpers: real signed transactions on the XRPL and Stellar devnets (xrpl.js and
 * stellar-base sign them; the devnets verify the signatures), so the report reads state that was
 * produced the way a real ledger produces it.
 */
import { Account, Asset, Keypair, Operation, TransactionBuilder, type xdr } from '@stellar/stellar-base';
import type { StellarDevnet } from '@vault/driver-stellar/devnet';
import type { XrplDevnet } from '@vault/driver-xrpl/devnet';
import { Wallet } from 'xrpl';

export async function xrplSubmit(devnet: XrplDevnet, wallet: Wallet, tx: Record<string, unknown>): Promise<void> {
  const seq = devnet.ledger.account(wallet.classicAddress)?.sequence;
  if (seq === undefined) throw new Error(`${wallet.classicAddress} is not funded`);
  const signed = wallet.sign({ Account: wallet.classicAddress, Fee: '12', Sequence: seq, ...tx } as never);
  const res = await fetch(devnet.url, { method: 'POST', body: JSON.stringify({ method: 'submit', params: [{ tx_blob: signed.tx_blob }] }) });
  const result = ((await res.json()) as { result: { engine_result?: string; error?: string } }).result;
  if (result.engine_result !== 'tesSUCCESS') throw new Error(`${String(tx['TransactionType'])} failed: ${result.engine_result ?? result.error}`);
  devnet.closeLedger();
}

export function xrplWallet(devnet: XrplDevnet): Wallet {
  const { seed } = devnet.faucet();
  return Wallet.fromSeed(seed as string);
}

/** holder trusts issuer for `currency`, then the issuer pays `value` to the holder. */
export async function xrplIssue(devnet: XrplDevnet, issuer: Wallet, holder: Wallet, currency: string, value: string, memo?: string): Promise<void> {
  const line = devnet.ledger.trustLine(holder.classicAddress, issuer.classicAddress, currency);
  if (!line) await xrplSubmit(devnet, holder, { TransactionType: 'TrustSet', LimitAmount: { currency, issuer: issuer.classicAddress, value: '1000000000' } });
  await xrplSubmit(devnet, issuer, {
    TransactionType: 'Payment',
    Destination: holder.classicAddress,
    Amount: { currency, issuer: issuer.classicAddress, value },
    ...(memo ? { Memos: [{ Memo: { MemoData: Buffer.from(memo).toString('hex').toUpperCase() } }] } : {}),
  });
}

export function stellarSubmit(devnet: StellarDevnet, source: Keypair, ops: xdr.Operation[]): void {
  const acct = devnet.ledger.account(source.publicKey());
  if (!acct) throw new Error(`${source.publicKey()} does not exist`);
  let b = new TransactionBuilder(new Account(source.publicKey(), acct.seq.toString()), { fee: String(100 * ops.length), networkPassphrase: devnet.networkPassphrase }).setTimeout(0);
  for (const op of ops) b = b.addOperation(op);
  const tx = b.build();
  tx.sign(source);
  const r = devnet.ledger.submit(tx.toEnvelope().toXDR('base64'));
  if (r.kind !== 'applied') throw new Error(`stellar tx failed: ${JSON.stringify(r.kind === 'failed' ? r.record.resultCodes : r.kind === 'rejected' ? r.resultCodes : r.reason)}`);
}

export async function stellarIssue(devnet: StellarDevnet, issuer: Keypair, holder: Keypair, code: string, amount: string): Promise<void> {
  const asset = new Asset(code, issuer.publicKey());
  if (!devnet.ledger.trustLine(holder.publicKey(), code, issuer.publicKey())) stellarSubmit(devnet, holder, [Operation.changeTrust({ asset })]);
  stellarSubmit(devnet, issuer, [Operation.payment({ destination: holder.publicKey(), asset, amount })]);
}

export async function stellarFunded(devnet: StellarDevnet): Promise<Keypair> {
  const k = Keypair.random();
  await devnet.fund(k.publicKey());
  return k;
}

export { Operation, Keypair };
