/**
 * @module @vault/example-custom-driver
 * A third-party driver for the toy ledger (src/toy-ledger.mjs), written only against @vault/sdk's
 * public exports. It is a `DriverPlugin`: the reference servers load it from configuration
 * (`{ "module": "<path>/src/index.mjs", "options": { "chain": "toy:devnet", "url": "http://127.0.0.1:PORT" } }`)
 * and call `createDriver(options)` (keyless: control plane and signer) and `createSigner(options)`
 * (the signing half: signer only).
 */
import {
  assembleContributions,
  canonicalize,
  defineChainDriver,
  defineChainSigner,
  endpointUrlProblem,
  fromHex,
  NotFoundError,
  sha256Hex,
  toHex,
  TransportError,
  ValidationError,
  verifyEd25519,
} from '@vault/sdk';

/**
 * @typedef {import('@vault/sdk').ChainDriver} ChainDriver
 * @typedef {import('@vault/sdk').ChainSigner} ChainSigner
 * @typedef {import('@vault/sdk').BuiltPayload} BuiltPayload
 * @typedef {import('@vault/sdk').Contribution} Contribution
 * @typedef {import('@vault/sdk').WalletDescriptor} WalletDescriptor
 * @typedef {{ chain: string, url: string, timeoutMs?: number }} ToyOptions
 * @typedef {{ format: 'toy-tx-v1', chain: string, type: 'transfer', account: string, destination: string,
 *   amount: string, fee: string, sequence: number, expires_ledger: number, memo?: string }} ToyPayload
 */

export const FAMILY = 'toy';
export const NAME = '@vault/example-custom-driver';
/** The native asset: integer minor units, 6 decimals. */
export const SYMBOL = 'TOY';
export const DECIMALS = 6;
/** How many ledgers a built payload stays valid for. */
export const EXPIRY_LEDGERS = 50;
/** The fee cap a signer applies when its trust file sets no max_fee: 100 times the toy base fee (10). */
export const DEFAULT_MAX_FEE = 1_000n;
export const SIGNATURE_ENCODING = 'toy-ed25519';

const ADDRESS_RE = /^toy1[0-9a-f]{40}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const INT_RE = /^(0|[1-9][0-9]*)$/;

/**
 * A ValidationError about `what`, naming the failing field: `invalid(what)(path, message)`.
 * @param {string} what
 */
const invalid = (what) => (/** @type {string} */ path, /** @type {string} */ message) => new ValidationError(what, [{ path, message }]);

/**
 * Checks the plugin options (the same JSON for both factories); every error names the option.
 * @param {unknown} options
 * @returns {Required<ToyOptions>}
 */
export function parseOptions(options) {
  const bad = invalid('options');
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw bad('', 'options must be an object {chain, url}');
  const o = /** @type {Record<string, unknown>} */ (options);
  for (const key of Object.keys(o)) if (!['chain', 'url', 'timeoutMs'].includes(key)) throw bad(key, `unknown option ${key} (known: chain, url, timeoutMs)`);
  if (typeof o.chain !== 'string' || !/^toy:[a-z0-9-]{1,32}$/.test(o.chain)) throw bad('chain', 'chain must be "toy:<name>", e.g. "toy:devnet"');
  // The SDK's one endpoint check: http(s), parsable, and no credentials (URLs reach error messages).
  const urlProblem = endpointUrlProblem(o.url);
  if (urlProblem !== null) throw bad('url', `url ${urlProblem} (the toy ledger URL, e.g. "http://127.0.0.1:7000")`);
  const timeoutMs = o.timeoutMs ?? 10_000;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 120_000) throw bad('timeoutMs', 'timeoutMs must be an integer 1..120000');
  return { chain: o.chain, url: String(o.url).replace(/\/+$/, ''), timeoutMs };
}

/** `toy1` + hex of the first 20 bytes of sha256(ed25519 public key). @param {Uint8Array} publicKey */
export function toyAddress(publicKey) {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) throw new ValidationError('publicKey', [{ path: '', message: 'an ed25519 public key is 32 bytes' }]);
  return `toy1${sha256Hex(publicKey).slice(0, 40)}`;
}

/** The signing digest: sha256 of the RFC 8785 canonical JSON of the payload. @param {unknown} payload */
export function payloadDigest(payload) {
  return sha256Hex(canonicalize(payload));
}

/** The payload of a BuiltPayload, re-hashed: a payload whose digest does not match is refused. @param {BuiltPayload} built */
function checkedPayload(built) {
  const p = /** @type {ToyPayload} */ (built?.payload);
  if (typeof p !== 'object' || p === null || p.format !== 'toy-tx-v1') throw new ValidationError('built', [{ path: 'payload', message: 'not a toy-tx-v1 payload' }]);
  if (payloadDigest(p) !== built.digest) throw new ValidationError('built', [{ path: 'digest', message: 'digest is not the hash of payload' }]);
  return p;
}

/** One JSON POST to the ledger. Anything but a JSON 200 is a TransportError: the caller cannot know the answer. */
function ledgerClient(/** @type {Required<ToyOptions>} */ opts) {
  return async function post(/** @type {string} */ path, /** @type {object} */ body) {
    let res;
    try {
      res = await fetch(`${opts.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
    } catch (cause) {
      throw new TransportError(`toy ledger ${opts.url} unreachable (${path})`, { cause });
    }
    const data = await res.json().catch(() => null);
    if (!res.ok || typeof data !== 'object' || data === null) {
      throw new TransportError(`toy ledger ${path} answered HTTP ${res.status}: ${data?.error?.message ?? 'no JSON body'}`);
    }
    return data;
  };
}

/** The wallet's account address; the toy ledger only models native multisig accounts. @param {WalletDescriptor} wallet */
function accountOf(wallet) {
  if (wallet.control.kind !== 'native_multisig') throw new ValidationError('wallet', [{ path: 'control.kind', message: 'the toy ledger only has native_multisig wallets' }]);
  return wallet.control.address;
}

/**
 * The keyless half: everything the control plane (and the signer, to rebuild) needs.
 *
 * @example
 * const driver = createDriver({ chain: 'toy:devnet', url: 'http://127.0.0.1:7000' })
 * const params = await driver.fetchParams({ wallet })
 * const built = driver.buildPayload({ intent, wallet, params })
 * @param {ToyOptions} options
 * @returns {ChainDriver}
 */
export function createDriver(options) {
  const opts = parseOptions(options);
  const post = ledgerClient(opts);
  const served = (/** @type {string} */ chain, /** @type {string} */ field = 'chain') => {
    if (chain !== opts.chain) throw new ValidationError(field, [{ path: '', message: `this driver serves ${opts.chain}, not ${chain}` }]);
  };

  /** The ledger's account record, shape-checked (fail closed on anything unexpected). */
  const account = async (/** @type {string} */ address) => {
    const a = await post('/account', { address });
    if (!INT_RE.test(a.balance) || !Number.isSafeInteger(a.sequence) || !Number.isSafeInteger(a.ledger_index) || !INT_RE.test(a.base_fee)) {
      throw new TransportError(`toy ledger /account answered an unexpected shape for ${address}`);
    }
    return a;
  };

  return defineChainDriver({
    name: NAME,
    family: FAMILY,
    chains: [opts.chain],
    paramsKind: 'custom',
    operations: ['transfer'],

    // Every method takes one object argument (ValidateAddressInput, FetchParamsInput, …).
    validateAddress({ chain, address }) {
      if (chain !== opts.chain) return { valid: false, reason: `this driver serves ${opts.chain}, not ${chain}` };
      if (typeof address !== 'string' || !ADDRESS_RE.test(address)) return { valid: false, reason: 'a toy address is "toy1" followed by 40 lowercase hex digits' };
      // Toy addresses carry no network tag: valid on any toy chain by their encoding.
      return { valid: true, normalized: address, network: null };
    },

    async fetchParams({ wallet }) {
      served(wallet.chain, 'wallet.chain');
      const a = await account(accountOf(wallet));
      if (!a.exists) throw new NotFoundError('account', accountOf(wallet));
      return {
        kind: 'custom',
        family: FAMILY,
        fields: { sequence: a.sequence, fee: a.base_fee, expires_ledger: a.ledger_index + EXPIRY_LEDGERS },
      };
    },

    // No tokens and no code on the toy ledger: the destination holds no code (hasCode null: the
    // question does not arise), no issuer, no on-chain symbol, no issuing key to burn.
    async fetchProtectInputs({ intent, wallet }) {
      served(wallet.chain, 'wallet.chain');
      return { destination: { address: intent.destination, hasCode: null, codeHash: null }, issuer: null, assetSymbol: null, issuerKeyBurned: false };
    },

    buildPayload({ intent, wallet, params }) {
      served(wallet.chain, 'wallet.chain');
      const refuse = invalid('intent');
      if (intent.wallet !== wallet.wallet) throw refuse('wallet', `the intent is for ${intent.wallet}, the descriptor is ${wallet.wallet}`);
      if (intent.operation.op !== 'transfer') throw refuse('operation.op', `the toy driver builds transfer only, not ${intent.operation.op}`);
      if (intent.asset_issuer !== undefined) throw refuse('asset_issuer', 'the toy ledger has only its native asset');
      if (intent.asset_symbol !== undefined && intent.asset_symbol !== SYMBOL) throw refuse('asset_symbol', `the toy ledger has only ${SYMBOL}`);
      if (intent.asset_decimals !== DECIMALS) throw refuse('asset_decimals', `${SYMBOL} has ${DECIMALS} decimals`);
      if (!ADDRESS_RE.test(intent.destination)) throw refuse('destination', 'not a toy address');
      const from = accountOf(wallet);
      if (intent.destination === from) throw refuse('destination', 'a wallet cannot pay itself');
      if (!INT_RE.test(intent.amount) || intent.amount === '0') throw refuse('amount', 'amount must be a positive integer in minor units');

      // Params come from the control plane: check them as untrusted input.
      const badParams = invalid('params');
      if (params.kind !== 'custom' || params.family !== FAMILY) throw badParams('kind', 'toy params are {kind: "custom", family: "toy"}');
      const { sequence, fee, expires_ledger, ...extra } = params.fields;
      if (Object.keys(extra).length > 0) throw badParams(`fields.${Object.keys(extra)[0]}`, 'unknown field');
      if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) throw badParams('fields.sequence', 'sequence must be a positive integer');
      if (typeof fee !== 'string' || !INT_RE.test(fee)) throw badParams('fields.fee', 'fee must be an integer string');
      if (typeof expires_ledger !== 'number' || !Number.isSafeInteger(expires_ledger) || expires_ledger < 1) throw badParams('fields.expires_ledger', 'expires_ledger must be a positive integer');

      // Fixed key set, values copied from the inputs only: same inputs, same bytes, same digest.
      /** @type {ToyPayload} */
      const payload = {
        format: 'toy-tx-v1',
        chain: wallet.chain,
        type: 'transfer',
        account: from,
        destination: intent.destination,
        amount: intent.amount,
        fee,
        sequence,
        expires_ledger,
        ...(intent.memo !== undefined ? { memo: intent.memo } : {}),
      };
      return {
        payload,
        digest: payloadDigest(payload),
        summary: `transfer ${intent.amount} ${SYMBOL} minor units ${from} -> ${intent.destination}, fee ${fee}, seq ${sequence}, expires after ledger ${expires_ledger}`,
      };
    },

    // The toy ledger takes exactly the payload's fee, so that is the most it can cost.
    fee({ built }) {
      return { amount: BigInt(checkedPayload(built).fee), unit: `minor units of ${SYMBOL}` };
    },
    defaultMaxFee: DEFAULT_MAX_FEE,

    assemble({ built, contributions, wallet }) {
      const payload = checkedPayload(built);
      if (payload.chain !== wallet.chain || payload.account !== accountOf(wallet)) {
        throw new ValidationError('built', [{ path: 'payload.account', message: `payload is for ${payload.chain} ${payload.account}, not this wallet` }]);
      }
      const digest = fromHex(built.digest, 'digest', 32);
      // The SDK counts (membership, one count per member, weights, missing, invalid); the toy
      // ledger decides only whether a signature is good and how the blob looks.
      return assembleContributions({
        contributions,
        wallet,
        verify: (c, member) => contributionProblem(c, member, digest),
        encode: (counted) => {
          // Signatures sorted by signer: the blob does not depend on the order they arrived in.
          const signatures = counted
            .map(({ contribution: c }) => ({ signer: c.signer_address, public_key: c.public_key.hex, signature: c.signature.hex }))
            .sort((a, b) => (a.signer < b.signer ? -1 : 1));
          const blob = canonicalize({ payload, signatures });
          return { blob, txHash: sha256Hex(blob) };
        },
      });
    },

    async submit({ chain, blob }) {
      served(chain);
      let txHash;
      try {
        txHash = sha256Hex(canonicalize(JSON.parse(blob)));
      } catch {
        throw new ValidationError('blob', [{ path: '', message: 'blob is not the JSON assemble produced' }]);
      }
      const r = await post('/submit', { blob });
      if (r.result === 'applied') return { status: 'submitted', txHash, code: 'applied' };
      if (r.result === 'rejected' && typeof r.code === 'string') {
        return { status: 'rejected', txHash, code: r.code, message: String(r.message ?? r.code), retriable: r.retriable === true };
      }
      throw new TransportError('toy ledger /submit answered neither applied nor rejected');
    },

    async confirm({ chain, txHash, built }) {
      served(chain);
      if (!HEX64.test(txHash)) throw new ValidationError('txHash', [{ path: '', message: 'txHash must be 64 lowercase hex digits' }]);
      const payload = checkedPayload(built);
      const { tx } = await post('/tx', { hash: txHash });
      if (tx) {
        if (tx.applied !== true || payloadDigest(tx.payload) !== built.digest) throw new TransportError(`toy ledger holds ${txHash}, but not as this applied payload`);
        return { status: 'confirmed', txHash, code: 'applied', ledger: tx.ledger };
      }
      // Not under this hash: ask by account + sequence what became of the payload.
      const fate = await payloadFateOf(post, payload);
      if (fate.fate === 'applied') return { status: 'confirmed', txHash: fate.hash, code: 'applied', ledger: fate.ledger };
      if (fate.fate === 'dead') return { status: 'failed', txHash, code: fate.code, message: fate.message ?? fate.code, dead: true };
      return { status: 'pending', txHash };
    },

    // Required: the double-spend rule (README section 5).
    async payloadFate({ chain, built }) {
      served(chain);
      const f = await payloadFateOf(post, checkedPayload(built));
      // Applied: name the transaction, so a control plane that lost its record can settle through it.
      return { fate: f.fate, code: f.code, ...(f.message ? { message: f.message } : {}), ...(f.fate === 'applied' ? { txHash: f.hash } : {}) };
    },

    async balances({ wallet }) {
      served(wallet.chain, 'wallet.chain');
      const a = await account(accountOf(wallet));
      return [{ asset: 'native', symbol: SYMBOL, amount: a.balance, decimals: DECIMALS }];
    },

    async controlState({ wallet }) {
      served(wallet.chain, 'wallet.chain');
      const address = accountOf(wallet);
      const a = await account(address);
      if (!a.exists) throw new NotFoundError('account', address);
      return { address, members: a.signers?.members ?? [], quorum: a.signers?.quorum ?? 0, masterKeyEnabled: false };
    },
  });
}

/**
 * The toy ledger's check of one contribution from `member`: an ed25519 key that controls the
 * member's address and a signature over the payload digest.
 * @param {Contribution} c @param {import('@vault/sdk').SignerDesc} member @param {Uint8Array} digest
 * @returns {import('@vault/sdk').ContributionProblem | null}
 */
function contributionProblem(c, member, digest) {
  if (c.public_key.curve !== 'ed25519' || !HEX64.test(c.public_key.hex)) return { reason: 'wrong_key', detail: 'public key must be ed25519 (32 bytes hex)' };
  const publicKey = fromHex(c.public_key.hex, 'public_key', 32);
  if (toyAddress(publicKey) !== member.address) return { reason: 'wrong_key', detail: `public key does not control ${member.address}` };
  if (c.signature.encoding !== SIGNATURE_ENCODING || !/^[0-9a-f]{128}$/.test(c.signature.hex)) return { reason: 'bad_signature', detail: `signature must be ${SIGNATURE_ENCODING}, 64 bytes hex` };
  if (!verifyEd25519(fromHex(c.signature.hex, 'signature', 64), digest, publicKey)) return { reason: 'bad_signature', detail: 'signature does not verify over the payload digest' };
  return null;
}

/**
 * What became of a payload, looked up by (account, sequence), never by a transaction hash.
 * Safety rule: a payload whose sequence holds a transaction with this payload is `applied`; it is
 * `dead` only when the ledger PROVES it can never land (another payload used the sequence, or the
 * expiry ledger is closed and the sequence is still free). Anything the ledger cannot explain throws.
 * @param {(path: string, body: object) => Promise<any>} post
 * @param {ToyPayload} payload
 * @returns {Promise<{ fate: 'applied', code: string, message?: string, hash: string, ledger: number } | { fate: 'dead' | 'live', code: string, message?: string }>}
 */
async function payloadFateOf(post, payload) {
  const r = await post('/tx_by_sequence', { account: payload.account, sequence: payload.sequence });
  if (!Number.isSafeInteger(r.account_sequence) || !Number.isSafeInteger(r.ledger_index)) throw new TransportError('toy ledger /tx_by_sequence answered an unexpected shape');
  if (r.tx) {
    if (typeof r.tx.payload !== 'object' || !HEX64.test(r.tx.hash)) throw new TransportError('toy ledger /tx_by_sequence returned a malformed transaction');
    // Same payload under other co-signers' signatures is still this payload: applied.
    if (payloadDigest(r.tx.payload) === payloadDigest(payload)) return { fate: 'applied', code: 'applied', hash: r.tx.hash, ledger: r.tx.ledger };
    return { fate: 'dead', code: 'sequence_consumed', message: `sequence ${payload.sequence} was used by transaction ${r.tx.hash}` };
  }
  if (r.account_sequence > payload.sequence) {
    // The sequence is used but the ledger shows no transaction for it: it cannot tell, so neither can we.
    throw new TransportError(`toy ledger shows sequence ${payload.sequence} of ${payload.account} used but holds no transaction for it`);
  }
  if (r.ledger_index >= payload.expires_ledger) return { fate: 'dead', code: 'expired', message: `ledger ${payload.expires_ledger} is closed` };
  return { fate: 'live', code: 'pending' };
}

/**
 * The signing half, loaded only by signer processes. It signs through the SigningKey interface
 * (the private key stays in the signer's backend) and only over a digest it recomputed itself.
 *
 * @example
 * const signer = createSigner({ chain: 'toy:devnet', url: 'http://127.0.0.1:7000' })
 * const signerAddress = signer.deriveAddress({ chain: 'toy:devnet', publicKey: key.publicKey, curve: key.curve })
 * const contribution = await signer.signPayload({ built, key, signerAddress })
 * @param {ToyOptions} options
 * @returns {ChainSigner}
 */
export function createSigner(options) {
  const opts = parseOptions(options);
  /** @param {import('@vault/sdk').DeriveAddressInput} input */
  const deriveAddress = ({ chain, publicKey, curve }) => {
    if (chain !== opts.chain) throw new ValidationError('chain', [{ path: '', message: `this signer serves ${opts.chain}, not ${chain}` }]);
    if (curve !== 'ed25519') throw new ValidationError('curve', [{ path: '', message: `the toy ledger signs with ed25519 only, not ${curve}` }]);
    return toyAddress(publicKey);
  };
  return defineChainSigner({
    name: `${NAME}/signer`,
    family: FAMILY,
    chains: [opts.chain],
    deriveAddress,
    async signPayload({ built, key, signerAddress }) {
      const payload = checkedPayload(built);
      const address = deriveAddress({ chain: payload.chain, publicKey: key.publicKey, curve: key.curve });
      if (address !== signerAddress) throw new ValidationError('signerAddress', [{ path: '', message: `the key controls ${address}, not ${signerAddress}` }]);
      const signature = await key.sign(fromHex(built.digest, 'digest', 32));
      return {
        signer_address: address,
        public_key: { curve: 'ed25519', hex: toHex(key.publicKey) },
        signature: { encoding: SIGNATURE_ENCODING, hex: toHex(signature) },
      };
    },
  });
}
