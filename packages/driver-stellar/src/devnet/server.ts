/**
 * @module devnet/server
 * Horizon's HTTP shapes over a StellarLedger: GET /, /accounts/:id, /accounts/:id/operations,
 * /ledgers/:seq/transactions, /transactions/:hash, /fee_stats, /assets, /friendbot, and POST /transactions (form or JSON).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StrKey } from '@stellar/stellar-base';
import { toDecimal } from '../amounts.js';
import { TRUSTLINE_FLAGS } from '../constants.js';
import type { LedgerAccount, StellarLedger, SubmitReply, TxRecord } from './ledger.js';

export interface DevnetFaults {
  /** The next N submissions are applied but answered 504 (Horizon timed out, the ledger did not). */
  submitTimeout: number;
  /** The next N submissions are answered 504 and never applied (lost on the way to the ledger). */
  submitDrop: number;
}

const PROBLEM = 'https://stellar.org/horizon-errors/';

export interface Reply {
  status: number;
  body: unknown;
}

function problem(status: number, type: string, title: string, detail: string, extras?: Record<string, unknown>): Reply {
  return { status, body: { type: `${PROBLEM}${type}`, title, status, detail, ...(extras ? { extras } : {}) } };
}

const NOT_FOUND = () =>
  problem(
    404,
    'not_found',
    'Resource Missing',
    'The resource at the url requested was not found.  This usually occurs for one of two reasons:  The url requested is not valid, or no data in our database could be found with the parameters provided.',
  );

const iso = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function accountResource(ledger: StellarLedger, a: LedgerAccount, base: string): Record<string, unknown> {
  const credit = [...a.lines.values()].map((l) => ({
    balance: toDecimal(l.balance),
    limit: toDecimal(l.limit),
    buying_liabilities: '0.0000000',
    selling_liabilities: '0.0000000',
    last_modified_ledger: l.lastModified,
    is_authorized: (l.flags & TRUSTLINE_FLAGS.authorized) !== 0,
    is_authorized_to_maintain_liabilities: (l.flags & (TRUSTLINE_FLAGS.authorized | TRUSTLINE_FLAGS.authorized_to_maintain_liabilities)) !== 0,
    is_clawback_enabled: (l.flags & TRUSTLINE_FLAGS.clawback_enabled) !== 0,
    asset_type: l.code.length <= 4 ? 'credit_alphanum4' : 'credit_alphanum12',
    asset_code: l.code,
    asset_issuer: l.issuer,
  }));
  return {
    _links: { self: { href: `${base}/accounts/${a.id}` } },
    id: a.id,
    account_id: a.id,
    sequence: a.seq.toString(),
    sequence_ledger: a.seqLedger,
    sequence_time: String(a.seqTime),
    subentry_count: a.subentries,
    ...(a.homeDomain ? { home_domain: a.homeDomain } : {}),
    last_modified_ledger: a.lastModified,
    last_modified_time: iso(ledger.closedAt),
    thresholds: { low_threshold: a.thresholds.low, med_threshold: a.thresholds.med, high_threshold: a.thresholds.high },
    flags: {
      auth_required: (a.flags & 1) !== 0,
      auth_revocable: (a.flags & 2) !== 0,
      auth_immutable: (a.flags & 4) !== 0,
      auth_clawback_enabled: (a.flags & 8) !== 0,
    },
    balances: [...credit, { balance: toDecimal(a.balance), buying_liabilities: '0.0000000', selling_liabilities: '0.0000000', asset_type: 'native' }],
    // Horizon lists the master key among the signers even at weight 0.
    signers: [
      { weight: a.masterWeight, key: a.id, type: 'ed25519_public_key' },
      ...a.signers.map((s) => ({ weight: s.weight, key: s.key, type: 'ed25519_public_key' })),
    ],
    data: {},
    num_sponsoring: 0,
    num_sponsored: 0,
    paging_token: a.id,
  };
}

export function txResource(r: TxRecord, base: string): Record<string, unknown> {
  return {
    _links: { self: { href: `${base}/transactions/${r.hash}` }, account: { href: `${base}/accounts/${r.source}` }, ledger: { href: `${base}/ledgers/${r.ledger}` } },
    id: r.hash,
    paging_token: r.pagingToken,
    successful: r.successful,
    hash: r.hash,
    ledger: r.ledger,
    created_at: iso(r.closedAt),
    source_account: r.source,
    source_account_sequence: r.sequence,
    fee_account: r.source,
    fee_charged: r.feeCharged.toString(),
    max_fee: r.maxFee.toString(),
    operation_count: r.operationCount,
    envelope_xdr: r.envelopeXdr,
    result_xdr: r.resultXdr,
    memo_type: r.memoType,
    ...(r.memo !== null ? { memo: r.memo } : {}),
    ...(r.memoType === 'text' && r.memo !== null ? { memo_bytes: Buffer.from(r.memo, 'utf8').toString('base64') } : {}),
    signatures: r.signatures,
    valid_after: iso(Number(r.minTime)),
    ...(r.maxTime !== null ? { valid_before: iso(Number(r.maxTime)) } : {}),
    preconditions: { timebounds: { min_time: r.minTime, ...(r.maxTime !== null ? { max_time: r.maxTime } : {}) } },
  };
}

function submitReply(reply: SubmitReply, base: string): Reply {
  switch (reply.kind) {
    case 'applied':
      return { status: 200, body: txResource(reply.record, base) };
    case 'failed':
      return problem(400, 'transaction_failed', 'Transaction Failed', FAILED_DETAIL, {
        envelope_xdr: reply.record.envelopeXdr,
        result_codes: reply.record.resultCodes,
        result_xdr: reply.record.resultXdr,
      });
    case 'rejected':
      return problem(400, 'transaction_failed', 'Transaction Failed', FAILED_DETAIL, {
        envelope_xdr: reply.envelopeXdr,
        result_codes: reply.resultCodes,
        result_xdr: reply.resultXdr,
      });
    case 'malformed':
      return problem(
        400,
        'transaction_malformed',
        'Transaction Malformed',
        'Horizon could not decode the transaction envelope in this request. A transaction should be an XDR TransactionEnvelope struct encoded using base64.  The envelope read from this request is echoed in the `extras.envelope_xdr` field of this response for your convenience.',
        { envelope_xdr: reply.envelopeXdr },
      );
  }
}

const FAILED_DETAIL =
  'The transaction failed when submitted to the stellar network. The `extras.result_codes` field on this response contains further details.  Descriptions of each code can be found at: https://developers.stellar.org/docs/data/apis/horizon/api-reference/errors/http-status-codes/horizon-specific/transaction-failed';

/** Routes one request. Pure over the ledger, so tests can call it without a socket. */
export function route(ledger: StellarLedger, faults: DevnetFaults, method: string, rawUrl: string, body: string, base: string): Reply {
  const url = new URL(rawUrl, 'http://devnet.invalid');
  const parts = url.pathname.split('/').filter(Boolean);
  const q = url.searchParams;
  if (method === 'GET' && parts.length === 0) {
    return {
      status: 200,
      body: {
        _links: { account: { href: `${base}/accounts/{account_id}`, templated: true }, friendbot: { href: `${base}/friendbot{?addr}`, templated: true } },
        horizon_version: 'vault-stellar-devnet',
        core_version: 'vault-stellar-devnet (a model of stellar-core, not stellar-core)',
        ingest_latest_ledger: ledger.ledger,
        history_latest_ledger: ledger.ledger,
        history_latest_ledger_closed_at: iso(ledger.closedAt),
        history_elder_ledger: 1,
        core_latest_ledger: ledger.ledger,
        network_passphrase: ledger.networkPassphrase,
        current_protocol_version: 22,
        supported_protocol_version: 22,
        core_supported_protocol_version: 22,
      },
    };
  }
  if (method === 'GET' && parts[0] === 'accounts' && parts.length >= 2) {
    const id = decodeURIComponent(parts[1] as string);
    if (!StrKey.isValidEd25519PublicKey(id)) {
      return problem(400, 'bad_request', 'Bad Request', 'The request you sent was invalid in some way.', {
        invalid_field: 'account_id',
        reason: 'Account ID must start with `G` and contain 56 alphanum characters',
      });
    }
    if (parts.length === 2) {
      const a = ledger.account(id);
      return a ? { status: 200, body: accountResource(ledger, a, base) } : NOT_FOUND();
    }
    if (parts.length === 3 && parts[2] === 'operations') return operationsPage(ledger, id, q, base);
    return NOT_FOUND();
  }
  if (method === 'GET' && parts[0] === 'ledgers' && parts.length === 3 && parts[2] === 'transactions') {
    return ledgerTransactionsPage(ledger, parts[1] as string, q, base);
  }
  if (method === 'GET' && parts[0] === 'transactions' && parts.length === 2) {
    const rec = ledger.transaction(decodeURIComponent(parts[1] as string).toLowerCase());
    return rec ? { status: 200, body: txResource(rec, base) } : NOT_FOUND();
  }
  if (method === 'POST' && parts[0] === 'transactions' && parts.length === 1) {
    let tx: string | null = null;
    const trimmed = body.trim();
    if (trimmed.startsWith('{')) {
      try {
        const parsed = JSON.parse(trimmed) as { tx?: unknown };
        tx = typeof parsed.tx === 'string' ? parsed.tx : null;
      } catch {
        tx = null;
      }
    } else {
      tx = new URLSearchParams(body).get('tx');
    }
    if (!tx) {
      return problem(400, 'bad_request', 'Bad Request', 'The request you sent was invalid in some way.', { invalid_field: 'tx', reason: 'tx is required' });
    }
    if (faults.submitDrop > 0) {
      faults.submitDrop -= 1;
      return timeout(tx, null);
    }
    const outcome = ledger.submit(tx);
    if (faults.submitTimeout > 0) {
      faults.submitTimeout -= 1;
      const hash = outcome.kind === 'applied' || outcome.kind === 'failed' ? outcome.record.hash : outcome.kind === 'rejected' ? outcome.hash : null;
      return timeout(tx, hash);
    }
    return submitReply(outcome, base);
  }
  if (method === 'GET' && parts[0] === 'fee_stats' && parts.length === 1) {
    const fee = String(ledger.baseFee);
    const dist = Object.fromEntries(['max', 'min', 'mode', 'p10', 'p20', 'p30', 'p40', 'p50', 'p60', 'p70', 'p80', 'p90', 'p95', 'p99'].map((k) => [k, fee]));
    return { status: 200, body: { last_ledger: String(ledger.ledger), last_ledger_base_fee: fee, ledger_capacity_usage: '0.00', fee_charged: dist, max_fee: dist } };
  }
  if (method === 'GET' && parts[0] === 'assets' && parts.length === 1) return assetsPage(ledger, q, base);
  if (method === 'GET' && parts[0] === 'friendbot' && parts.length === 1) {
    const addr = q.get('addr') ?? '';
    if (!StrKey.isValidEd25519PublicKey(addr)) {
      return problem(400, 'bad_request', 'Bad Request', 'The request you sent was invalid in some way.', { invalid_field: 'addr', reason: 'addr must be a G… account' });
    }
    return submitReply(ledger.friendbot(addr), base);
  }
  return NOT_FOUND();
}

/** Horizon's current 504 for POST /transactions (type without the URL prefix, hash in extras). */
function timeout(envelopeXdr: string, hash: string | null): Reply {
  return {
    status: 504,
    body: {
      type: 'transaction_submission_timeout',
      title: 'Transaction Submission Timeout',
      status: 504,
      detail:
        'Your transaction submission request has timed out. This does not necessarily mean the submission has failed. Before resubmitting, please use the transaction hash provided in `extras.hash` to poll the GET /transactions endpoint for sometime and check if it was included in a ledger.',
      extras: { ...(hash ? { hash } : {}), envelope_xdr: envelopeXdr },
    },
  };
}

function page(records: unknown[], self: string): Reply {
  return { status: 200, body: { _links: { self: { href: self } }, _embedded: { records } } };
}

/** GET /ledgers/:seq/transactions: the ledger's transactions, successful only unless include_failed=true. */
function ledgerTransactionsPage(ledger: StellarLedger, seqText: string, q: URLSearchParams, base: string): Reply {
  if (!/^[1-9][0-9]{0,9}$/.test(seqText)) {
    return problem(400, 'bad_request', 'Bad Request', 'The request you sent was invalid in some way.', { invalid_field: 'ledger_id', reason: 'Ledger ID must be an unsigned 32-bit integer' });
  }
  const seq = Number(seqText);
  if (seq > ledger.ledger) return NOT_FOUND();
  const limit = Math.min(Math.max(Number(q.get('limit') ?? 10) || 10, 1), 200);
  const desc = q.get('order') === 'desc';
  const cursor = q.get('cursor');
  const includeFailed = q.get('include_failed') === 'true';
  let recs = ledger.txOrder.map((h) => ledger.transaction(h) as TxRecord).filter((r) => r.ledger === seq && (includeFailed || r.successful));
  if (desc) recs = [...recs].reverse();
  if (cursor) {
    const c = BigInt(cursor);
    recs = recs.filter((r) => (desc ? BigInt(r.pagingToken) < c : BigInt(r.pagingToken) > c));
  }
  const records = recs.slice(0, limit).map((r) => txResource(r, base));
  return page(records, `${base}/ledgers/${seq}/transactions?${q.toString()}`);
}

function operationsPage(ledger: StellarLedger, id: string, q: URLSearchParams, base: string): Reply {
  if (!ledger.account(id) && !ledger.ops.some((o) => o.accounts.includes(id))) return NOT_FOUND();
  const limit = Math.min(Math.max(Number(q.get('limit') ?? 10) || 10, 1), 200);
  const desc = q.get('order') === 'desc';
  const cursor = q.get('cursor');
  const includeFailed = q.get('include_failed') === 'true';
  let ops = ledger.ops.filter((o) => o.accounts.includes(id) && (includeFailed || o.successful));
  if (desc) ops = [...ops].reverse();
  if (cursor) {
    const c = BigInt(cursor);
    ops = ops.filter((o) => (desc ? BigInt(o.id) < c : BigInt(o.id) > c));
  }
  const records = ops.slice(0, limit).map((o) => ({
    _links: { self: { href: `${base}/operations/${o.id}` }, transaction: { href: `${base}/transactions/${o.txHash}` } },
    id: o.id,
    paging_token: o.id,
    transaction_successful: o.successful,
    source_account: o.sourceAccount,
    type: o.type,
    type_i: o.typeI,
    created_at: iso(o.createdAt),
    transaction_hash: o.txHash,
    ...o.fields,
  }));
  return page(records, `${base}/accounts/${id}/operations?${q.toString()}`);
}

function assetsPage(ledger: StellarLedger, q: URLSearchParams, base: string): Reply {
  const code = q.get('asset_code');
  const issuer = q.get('asset_issuer');
  const groups = new Map<string, { code: string; issuer: string; accounts: [number, number, number]; balances: [bigint, bigint, bigint] }>();
  for (const a of ledger.accounts.values()) {
    for (const l of a.lines.values()) {
      if ((code && l.code !== code) || (issuer && l.issuer !== issuer)) continue;
      const key = `${l.code}:${l.issuer}`;
      const g = groups.get(key) ?? { code: l.code, issuer: l.issuer, accounts: [0, 0, 0], balances: [0n, 0n, 0n] };
      const bucket = (l.flags & TRUSTLINE_FLAGS.authorized) !== 0 ? 0 : (l.flags & TRUSTLINE_FLAGS.authorized_to_maintain_liabilities) !== 0 ? 1 : 2;
      g.accounts[bucket] += 1;
      g.balances[bucket] += l.balance;
      groups.set(key, g);
    }
  }
  const records = [...groups.values()]
    .sort((x, y) => (x.code + x.issuer < y.code + y.issuer ? -1 : 1))
    .map((g) => {
      const iss = ledger.account(g.issuer);
      const f = iss?.flags ?? 0;
      const type = g.code.length <= 4 ? 'credit_alphanum4' : 'credit_alphanum12';
      return {
        _links: { toml: { href: iss?.homeDomain ? `https://${iss.homeDomain}/.well-known/stellar.toml` : '' } },
        asset_type: type,
        asset_code: g.code,
        asset_issuer: g.issuer,
        paging_token: `${g.code}_${g.issuer}_${type}`,
        contract_id: undefined,
        num_claimable_balances: 0,
        num_liquidity_pools: 0,
        num_contracts: 0,
        accounts: { authorized: g.accounts[0], authorized_to_maintain_liabilities: g.accounts[1], unauthorized: g.accounts[2] },
        claimable_balances_amount: '0.0000000',
        liquidity_pools_amount: '0.0000000',
        contracts_amount: '0.0000000',
        balances: { authorized: toDecimal(g.balances[0]), authorized_to_maintain_liabilities: toDecimal(g.balances[1]), unauthorized: toDecimal(g.balances[2]) },
        flags: { auth_required: (f & 1) !== 0, auth_revocable: (f & 2) !== 0, auth_immutable: (f & 4) !== 0, auth_clawback_enabled: (f & 8) !== 0 },
      };
    });
  return page(records, `${base}/assets?${q.toString()}`);
}

/** Reads a request body (capped) and answers through `route`. */
export async function handle(ledger: StellarLedger, faults: DevnetFaults, base: () => string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) {
      res.writeHead(413).end();
      return;
    }
    chunks.push(chunk as Buffer);
  }
  let reply: Reply;
  try {
    reply = route(ledger, faults, req.method ?? 'GET', req.url ?? '/', Buffer.concat(chunks).toString('utf8'), base());
  } catch (e) {
    reply = problem(500, 'server_error', 'Internal Server Error', e instanceof Error ? e.message : 'internal error');
  }
  const isProblem = reply.status >= 400;
  // Horizon sends the latest ingested ledger on every reply; clients use it to date an answer.
  res.writeHead(reply.status, { 'content-type': isProblem ? 'application/problem+json; charset=utf-8' : 'application/hal+json; charset=utf-8', 'latest-ledger': String(ledger.ledger) });
  res.end(JSON.stringify(reply.body));
}
