/**
 * @module toy-ledger
 * A toy ledger for the example driver, served as JSON over loopback HTTP. It is the devnet the
 * driver's tests run against, so it is strict on purpose: it derives addresses and payload digests
 * itself (never trusting the driver's), verifies every ed25519 signature, enforces the signer list
 * and quorum, the account sequence and the expiry ledger, refuses replays, and rejects anything it
 * does not model (other transaction types, unknown fields, other chains).
 *
 * Every endpoint is `POST` with a JSON body:
 *   /account         {address}                  -> account facts + {ledger_index, base_fee}
 *   /submit          {blob}                     -> {result: 'applied', hash, ledger} | {result: 'rejected', code, message, retriable}
 *   /tx              {hash}                     -> {tx: record | null}
 *   /tx_by_sequence  {account, sequence}        -> {tx: record | null, account_sequence, ledger_index}
 *   /faucet          {balance, signers?}        -> a new funded account (test/admin only)
 *   /close           {}                         -> closes an empty ledger (lets tests expire payloads)
 *
 * Run it as a process: `node src/toy-ledger.mjs --port 0` prints its URL on stdout.
 */
import { canonicalize, fromHex, sha256Hex, verifyEd25519 } from '@vault/sdk';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

export const TOY_CHAIN = 'toy:devnet';
/** Fee every transaction pays, in minor units. */
export const TOY_BASE_FEE = 10n;
const ADDRESS_RE = /^toy1[0-9a-f]{40}$/;
const AMOUNT_RE = /^(0|[1-9][0-9]{0,30})$/;
const PAYLOAD_KEYS = ['account', 'amount', 'chain', 'destination', 'expires_ledger', 'fee', 'format', 'memo', 'sequence', 'type'];

/** `toy1` + the first 20 bytes of sha256(public key), as lowercase hex. The ledger's own derivation. @param {Uint8Array} publicKey */
function addressOf(publicKey) {
  return `toy1${sha256Hex(publicKey).slice(0, 40)}`;
}

/** Why the ledger refused a request or a transaction: a stable `code` and a message. */
class Rejection extends Error {
  /** @param {string} code @param {string} message @param {boolean} [retriable] */
  constructor(code, message, retriable = false) {
    super(message);
    this.code = code;
    this.retriable = retriable;
  }
}

/** The ledger state and its rules, without HTTP (the server below is a thin JSON wrapper). */
export class ToyLedger {
  constructor(chain = TOY_CHAIN) {
    this.chain = chain;
    this.ledgerIndex = 1;
    /** @type {Map<string, {balance: bigint, sequence: number, signers: {members: {address: string, weight: number}[], quorum: number} | null}>} */
    this.accounts = new Map();
    /** @type {Map<string, { hash: string, ledger: number, applied: boolean, code: string, payload: any, signers: string[] }>} tx hash -> record */
    this.txs = new Map();
    /** @type {Map<string, string>} `${account}/${sequence}` -> tx hash */
    this.bySequence = new Map();
  }

  /** @param {string} address */
  account(address) {
    const a = this.accounts.get(address);
    return {
      address,
      exists: a !== undefined,
      balance: (a?.balance ?? 0n).toString(),
      sequence: a?.sequence ?? 0,
      signers: a?.signers ?? null,
      ledger_index: this.ledgerIndex,
      base_fee: TOY_BASE_FEE.toString(),
    };
  }

  /** @param {{ balance?: unknown, signers?: any }} request */
  faucet({ balance, signers }) {
    if (typeof balance !== 'string' || !AMOUNT_RE.test(balance)) throw new Rejection('bad_request', 'balance must be an integer string');
    if (signers !== undefined && signers !== null) checkSignerList(signers);
    const address = `toy1${randomBytes(20).toString('hex')}`;
    this.accounts.set(address, { balance: BigInt(balance), sequence: 1, signers: signers ?? null });
    return this.account(address);
  }

  /** Applies one transaction or throws a Rejection. Closes a ledger per accepted transaction. @param {string} blob */
  submit(blob) {
    let envelope;
    try {
      envelope = JSON.parse(blob);
    } catch {
      throw new Rejection('malformed', 'blob is not JSON');
    }
    if (!isPlainObject(envelope) || !sameKeys(envelope, ['payload', 'signatures'])) throw new Rejection('malformed', 'blob must be {payload, signatures}');
    // The hash covers the canonical form, so re-encoding a blob cannot make a "new" transaction.
    const hash = sha256Hex(canonicalize(envelope));
    const { payload, signatures } = envelope;
    checkPayload(payload, this.chain);
    const known = this.txs.get(hash);
    if (known) throw new Rejection('already_applied', `transaction ${hash} is already in ledger ${known.ledger}`);

    const account = this.accounts.get(payload.account);
    if (!account) throw new Rejection('no_account', `account ${payload.account} does not exist`);
    if (!account.signers) throw new Rejection('no_signer_list', `account ${payload.account} has no signer list; the toy ledger only models multisig accounts`);
    if (payload.sequence < account.sequence) throw new Rejection('sequence_consumed', `sequence ${payload.sequence} is already used (account is at ${account.sequence})`);
    if (payload.sequence > account.sequence) throw new Rejection('sequence_ahead', `sequence ${payload.sequence} is ahead of the account (${account.sequence}); the toy ledger has no queue`, true);
    if (this.ledgerIndex + 1 > payload.expires_ledger) throw new Rejection('expired', `expires_ledger ${payload.expires_ledger} has passed (next ledger ${this.ledgerIndex + 1})`);
    if (BigInt(payload.fee) < TOY_BASE_FEE) throw new Rejection('fee_too_low', `fee ${payload.fee} is below the base fee ${TOY_BASE_FEE}`);

    // Every signature must verify, over the digest this ledger computes itself.
    const digest = fromHex(sha256Hex(canonicalize(payload)), 'digest', 32);
    if (!Array.isArray(signatures) || signatures.length === 0) throw new Rejection('malformed', 'signatures must be a non-empty array');
    const seen = new Set();
    let weight = 0;
    for (const [i, s] of signatures.entries()) {
      if (!isPlainObject(s) || !sameKeys(s, ['public_key', 'signature', 'signer'])) throw new Rejection('malformed', `signatures.${i} must be {signer, public_key, signature}`);
      if (typeof s.public_key !== 'string' || !/^[0-9a-f]{64}$/.test(s.public_key)) throw new Rejection('malformed', `signatures.${i}.public_key must be 32 bytes of hex`);
      if (typeof s.signature !== 'string' || !/^[0-9a-f]{128}$/.test(s.signature)) throw new Rejection('malformed', `signatures.${i}.signature must be 64 bytes of hex`);
      const publicKey = fromHex(s.public_key, 'public_key', 32);
      if (addressOf(publicKey) !== s.signer) throw new Rejection('bad_signer', `signatures.${i}: the public key does not control ${s.signer}`);
      const member = account.signers.members.find((m) => m.address === s.signer);
      if (!member) throw new Rejection('not_a_signer', `signatures.${i}: ${s.signer} is not on the signer list of ${payload.account}`);
      if (seen.has(s.signer)) throw new Rejection('duplicate_signer', `signatures.${i}: ${s.signer} signed twice`);
      if (!verifyEd25519(fromHex(s.signature, 'signature', 64), digest, publicKey)) throw new Rejection('bad_signature', `signatures.${i}: the signature of ${s.signer} does not verify`);
      seen.add(s.signer);
      weight += member.weight;
    }
    if (weight < account.signers.quorum) throw new Rejection('short_of_quorum', `signer weight ${weight} is below the quorum ${account.signers.quorum}`);

    const amount = BigInt(payload.amount);
    const cost = amount + BigInt(payload.fee);
    if (account.balance < cost) throw new Rejection('insufficient_funds', `balance ${account.balance} is below amount + fee ${cost}`, true);

    account.balance -= cost;
    account.sequence += 1;
    const dest = this.accounts.get(payload.destination) ?? { balance: 0n, sequence: 1, signers: null };
    dest.balance += amount;
    this.accounts.set(payload.destination, dest);
    this.ledgerIndex += 1;
    const record = { hash, ledger: this.ledgerIndex, applied: true, code: 'applied', payload, signers: [...seen].sort() };
    this.txs.set(hash, record);
    this.bySequence.set(`${payload.account}/${payload.sequence}`, hash);
    return record;
  }

  /** @param {string} account @param {number} sequence */
  bySeq(account, sequence) {
    const hash = this.bySequence.get(`${account}/${sequence}`);
    return {
      tx: hash ? this.txs.get(hash) : null,
      account_sequence: this.accounts.get(account)?.sequence ?? 0,
      ledger_index: this.ledgerIndex,
    };
  }
}

function isPlainObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sameKeys(obj, allowed, required = allowed) {
  const keys = Object.keys(obj);
  return keys.every((k) => allowed.includes(k)) && required.every((k) => keys.includes(k));
}

function checkSignerList(s) {
  const ok =
    isPlainObject(s) &&
    Array.isArray(s.members) &&
    s.members.length > 0 &&
    s.members.every((m) => isPlainObject(m) && ADDRESS_RE.test(m.address) && Number.isInteger(m.weight) && m.weight >= 1) &&
    new Set(s.members.map((m) => m.address)).size === s.members.length &&
    Number.isInteger(s.quorum) &&
    s.quorum >= 1 &&
    s.quorum <= s.members.reduce((sum, m) => sum + m.weight, 0);
  if (!ok) throw new Rejection('bad_request', 'signers must be {members: [{address, weight}], quorum} with a reachable quorum');
}

/** The one transaction the toy ledger models: a native transfer. Anything else is refused. */
function checkPayload(p, chain) {
  if (!isPlainObject(p)) throw new Rejection('malformed', 'payload must be an object');
  if (!sameKeys(p, PAYLOAD_KEYS, PAYLOAD_KEYS.filter((k) => k !== 'memo'))) throw new Rejection('malformed', `payload fields must be ${PAYLOAD_KEYS.join(', ')} (memo optional)`);
  if (p.format !== 'toy-tx-v1') throw new Rejection('unsupported', `payload format ${JSON.stringify(p.format)} is not toy-tx-v1`);
  if (p.type !== 'transfer') throw new Rejection('unsupported', `transaction type ${JSON.stringify(p.type)} is not modelled; only transfer`);
  if (p.chain !== chain) throw new Rejection('wrong_chain', `payload is for ${JSON.stringify(p.chain)}, this ledger is ${chain}`);
  if (!ADDRESS_RE.test(p.account) || !ADDRESS_RE.test(p.destination)) throw new Rejection('malformed', 'account and destination must be toy addresses');
  if (p.account === p.destination) throw new Rejection('malformed', 'destination must differ from account');
  if (typeof p.amount !== 'string' || !AMOUNT_RE.test(p.amount) || p.amount === '0') throw new Rejection('malformed', 'amount must be a positive integer string');
  if (typeof p.fee !== 'string' || !AMOUNT_RE.test(p.fee)) throw new Rejection('malformed', 'fee must be an integer string');
  if (!Number.isSafeInteger(p.sequence) || p.sequence < 1) throw new Rejection('malformed', 'sequence must be a positive integer');
  if (!Number.isSafeInteger(p.expires_ledger) || p.expires_ledger < 1) throw new Rejection('malformed', 'expires_ledger must be a positive integer');
  if (p.memo !== undefined && (typeof p.memo !== 'string' || p.memo.length > 1024)) throw new Rejection('malformed', 'memo must be a string of at most 1024 characters');
}

/**
 * Serves a ToyLedger on 127.0.0.1.
 *
 * @example
 * const devnet = await startToyLedger({ port: 0 })
 * // ... devnet.url is http://127.0.0.1:PORT
 * await devnet.close()
 * @param {{ port?: number, chain?: string }} [options]
 */
export async function startToyLedger({ port = 0, chain = TOY_CHAIN } = {}) {
  const ledger = new ToyLedger(chain);
  const routes = {
    '/account': (b) => ledger.account(str(b.address, 'address')),
    '/faucet': (b) => ledger.faucet(b),
    '/close': () => ({ ledger_index: ++ledger.ledgerIndex }),
    '/tx': (b) => ({ tx: ledger.txs.get(str(b.hash, 'hash')) ?? null }),
    '/tx_by_sequence': (b) => {
      if (!Number.isSafeInteger(b.sequence)) throw new Rejection('bad_request', 'sequence must be an integer');
      return ledger.bySeq(str(b.account, 'account'), b.sequence);
    },
    '/submit': (b) => {
      try {
        const r = ledger.submit(str(b.blob, 'blob'));
        return { result: 'applied', hash: r.hash, ledger: r.ledger };
      } catch (e) {
        if (!(e instanceof Rejection) || e.code === 'bad_request') throw e;
        // A rejection is an answer, not a fault: HTTP 200 with the code.
        return { result: 'rejected', code: e.code, message: e.message, retriable: e.retriable };
      }
    },
  };
  const server = createServer((req, res) => {
    const send = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const route = routes[req.url ?? ''];
    if (req.method !== 'POST' || !route) return send(404, { error: { code: 'not_found', message: `no route ${req.method} ${req.url}` } });
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => {
      raw += d;
      if (raw.length > 1_000_000) req.destroy();
    });
    req.on('end', () => {
      try {
        const body = JSON.parse(raw || '{}');
        if (!isPlainObject(body)) throw new Rejection('bad_request', 'body must be a JSON object');
        send(200, route(body));
      } catch (e) {
        send(400, { error: { code: e.code ?? 'bad_request', message: e instanceof Rejection || e instanceof SyntaxError ? e.message : 'bad request' } });
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(undefined));
  });
  const url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;
  const close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url, ledger, close };
}

function str(v, field) {
  if (typeof v !== 'string' || v === '') throw new Rejection('bad_request', `${field} must be a non-empty string`);
  return v;
}

// As a process: `node src/toy-ledger.mjs [--port N] [--chain toy:NAME]`; prints the URL, stops on SIGTERM.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : fallback;
  };
  const port = Number(arg('--port', '0'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('--port must be an integer 0..65535');
    process.exit(2);
  }
  const devnet = await startToyLedger({ port, chain: arg('--chain', TOY_CHAIN) });
  console.log(devnet.url);
  const stop = () => devnet.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
