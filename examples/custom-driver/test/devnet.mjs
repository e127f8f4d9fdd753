/**
 * Test helpers: the toy ledger as a real child process, keys, funded wallets, and an
 * IndependentReader that reads the ledger over its own HTTP API (never through the driver).
 */
import { generateEd25519KeyPair, sha256Hex, signEd25519 } from '@vault/sdk';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CHAIN = 'toy:devnet';
export const LEDGER_SCRIPT = fileURLToPath(new URL('../src/toy-ledger.mjs', import.meta.url));
export const DRIVER_MODULE = fileURLToPath(new URL('../src/index.mjs', import.meta.url));

/**
 * Starts `node src/toy-ledger.mjs --port 0` and resolves with its URL and a stop function.
 * @returns {Promise<{ url: string, stop: () => Promise<void> }>}
 */
export function startLedgerProcess() {
  const child = spawn(process.execPath, [LEDGER_SCRIPT, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`toy ledger did not start: ${err}`)), 15_000);
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('http://'));
      if (line) {
        clearTimeout(timer);
        resolve({ url: line.trim(), stop });
      }
    });
    child.once('exit', (code) => reject(new Error(`toy ledger exited ${code}: ${err}`)));
  });
}

/** A SigningKey over an in-memory ed25519 secret (tests only; real signers use their keystore). */
export function testKey() {
  const { secretKey, publicKey } = generateEd25519KeyPair();
  return { curve: /** @type {const} */ ('ed25519'), publicKey, sign: async (/** @type {Uint8Array} */ m) => signEd25519(m, secretKey) };
}

/** The toy address of a public key, derived here again (independently of the driver). */
export const addressOf = (/** @type {Uint8Array} */ publicKey) => `toy1${sha256Hex(publicKey).slice(0, 40)}`;

/** JSON POST straight to the ledger. */
export async function ledgerPost(url, path, body) {
  const r = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const data = await r.json();
  if (!r.ok) throw new Error(`ledger ${path}: ${JSON.stringify(data)}`);
  return data;
}

/** @returns {import('@vault/sdk/testing').IndependentReader} */
export function independentReader(url) {
  return {
    balance: async (address) => BigInt((await ledgerPost(url, '/account', { address })).balance),
    txResult: async (hash) => {
      const { tx } = await ledgerPost(url, '/tx', { hash });
      return tx ? { applied: tx.applied, code: tx.code } : null;
    },
  };
}

/**
 * A funded multisig wallet on the ledger, with one key per member.
 * @param {string} url
 * @param {{ weights: number[], quorum: number, balance?: string, id?: string }} shape
 */
export async function fundedWallet(url, { weights, quorum, balance = '1000000000', id = 'toy-wallet' }) {
  const keys = weights.map(() => testKey());
  const members = keys.map((k, i) => ({ address: addressOf(k.publicKey), weight: weights[i] }));
  const account = await ledgerPost(url, '/faucet', { balance, signers: { members, quorum } });
  /** @type {import('@vault/sdk').WalletDescriptor} */
  const wallet = {
    wallet: `${id}-${account.address.slice(4, 12)}`,
    chain: CHAIN,
    control: {
      kind: 'native_multisig',
      address: account.address,
      quorum,
      signers: members.map((m, i) => ({ address: m.address, curve: 'ed25519', weight: m.weight, label: `member-${i}` })),
    },
  };
  return { wallet, keys, address: account.address };
}

export const freshAddress = () => addressOf(testKey().publicKey);
