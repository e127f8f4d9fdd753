#!/usr/bin/env node
/**
 * @module signer/cli
 * `vault-signer keygen --keystore DIR --curve ed25519|secp256k1 [--scope wallet=ID,chain=NAME] [--drivers FILE | --trust FILE]`
 * `vault-signer keygen --backend pkcs11 --pkcs11 FILE --label LABEL --curve ed25519|secp256k1` (generated in the token)
 * `vault-signer import --keystore DIR --key ID --pkcs11 FILE --label LABEL --allow-import` (a software key into a token)
 * `vault-signer keys   --keystore DIR [--drivers FILE | --trust FILE]` (offline: no passphrase) or `--pkcs11 FILE` (the PIN)
 * `vault-signer serve (--keystore DIR | --pkcs11 FILE) --trust FILE [--state-dir DIR] [--port 7333] [--host 127.0.0.1] [--drivers FILE]`
 * `vault-signer lift (--keystore DIR | --state-dir DIR) (--approver ID | --wallet ID) ...`
 * `vault-signer admins --trust FILE --admins FILE` (sets the admin quorum once)
 *
 * `lift` is the only way a restriction (a revocation or freeze the control plane pushed) is lifted:
 * on the signer host, with the signer stopped (its state directory is locked to one process) and
 * the passphrase (the journal's receipts are signed with the receipt key it seals).
 *
 * The passphrase comes from VAULT_SIGNER_PASSPHRASE or `--passphrase-file` (0600); the token
 * from VAULT_SIGNER_TOKEN or a 0600 file the signer creates in its state dir; a PKCS#11 PIN from the
 * variable or 0600 file its configuration names (never a flag). None is printed.
 */
import { AdminQuorumSchema, DriverRegistry, parseWith, toHex, VaultError, type ChainSigner, type Curve } from '@vault/sdk';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readSecretFile, writeFileAtomic } from '../http/index.js';
import { loadDriverModules } from './drivers.js';
import { createKey, DEFAULT_KDF, keyIdOf, KeyFileSchema, listKeyFiles, loadOrCreateReceiptKey, openKey, type KdfParams, type KeyScope } from './keystore.js';
import { configuredScope, generateTokenKey, importTokenKey, listTokenKeys, loadPkcs11Config, readPin, refuseImport, type Pkcs11Config, type TokenKey } from './pkcs11.js';
import { liftRestrictions } from './restrictions.js';
import { signerStateDir, startSigner } from './serve.js';
import { SignerState } from './state.js';
import { importPlugin } from '../plugins.js';
import { deriveAddresses } from './sign.js';
import { DriversConfigSchema, loadTrust, parseTrust, type DriverModuleConfig } from './trust.js';

const USAGE = `usage:
  vault-signer keygen --keystore DIR --curve ed25519|secp256k1 [--scope wallet=ID,chain=NAME ...] [--drivers FILE | --trust FILE]
  vault-signer keygen --backend pkcs11 --pkcs11 FILE --label LABEL --curve ed25519|secp256k1 [--drivers FILE | --trust FILE]
  vault-signer import --keystore DIR --key ID --pkcs11 FILE --label LABEL --allow-import   (a software key into a token)
  vault-signer keys   --keystore DIR [--drivers FILE | --trust FILE]   (public keys and addresses; no passphrase)
  vault-signer keys   --pkcs11 FILE [--drivers FILE | --trust FILE]    (the configured token keys; needs the PIN)
  vault-signer serve  (--keystore DIR | --pkcs11 FILE) --trust FILE [--state-dir DIR] [--port 7333] [--host 127.0.0.1] [--drivers FILE]
  vault-signer lift   (--keystore DIR | --state-dir DIR) (--approver ID | --wallet ID) ...   (signer stopped)
  vault-signer admins --trust FILE --admins FILE   (admin keys, threshold, delay: set once, at bootstrap)
options:
  --passphrase-file FILE   keystore passphrase (else VAULT_SIGNER_PASSPHRASE)
  --kdf-log2 N             scrypt cost 2^N for new key files (default 17; lower only in tests)
  --pkcs11 FILE            PKCS#11 configuration (module, token, key labels, where the PIN is: pin_env or pin_file)`;

class UsageError extends Error {}

function passphrase(file: string | undefined): string {
  if (file !== undefined) return readSecretFile(file).replace(/\r?\n$/, '');
  const env = process.env['VAULT_SIGNER_PASSPHRASE'];
  if (env === undefined || env === '') throw new UsageError('set VAULT_SIGNER_PASSPHRASE or pass --passphrase-file');
  return env;
}

function kdfOf(log2: string | undefined): KdfParams {
  if (log2 === undefined) return DEFAULT_KDF;
  const n = Number(log2);
  if (!Number.isInteger(n) || n < 10 || n > 22) throw new UsageError('--kdf-log2 must be an integer 10..22');
  return { ...DEFAULT_KDF, N: 2 ** n };
}

/** `wallet=a,chain=xrpl:testnet` (repeatable) -> scope. */
export function parseScope(values: readonly string[]): KeyScope {
  const scope: KeyScope = {};
  for (const v of values) {
    for (const part of v.split(',').filter((p) => p !== '')) {
      const eq = part.indexOf('=');
      const k = part.slice(0, eq);
      const val = part.slice(eq + 1);
      if (eq < 1 || val === '' || (k !== 'wallet' && k !== 'chain')) throw new UsageError(`--scope takes wallet=ID or chain=NAME, got ${part}`);
      const list = k === 'wallet' ? (scope.wallets ??= []) : (scope.chains ??= []);
      list.push(val);
    }
  }
  return scope;
}

/**
 * The chains addresses are shown for when neither --drivers nor --trust names any: the public
 * networks of the first-party drivers that are installed. A signer never contacts these URLs (they
 * only satisfy the plugins' option checks); an address does not depend on the network within a
 * family, so the key's XRPL address is the same on `xrpl:local`.
 */
const DEFAULT_ADDRESS_DRIVERS: readonly DriverModuleConfig[] = [
  { module: '@vault/driver-xrpl', options: { chains: [{ chain: 'xrpl:mainnet', url: 'https://xrplcluster.com/' }, { chain: 'xrpl:testnet', url: 'https://s.altnet.rippletest.net:51234/' }, { chain: 'xrpl:devnet', url: 'https://s.devnet.rippletest.net:51234/' }, { chain: 'xrpl:local', url: 'http://127.0.0.1:5005/', networkId: 21337 }] } },
  { module: '@vault/driver-stellar', options: { chains: [{ chain: 'stellar:pubnet', horizonUrl: 'https://horizon.stellar.org' }, { chain: 'stellar:testnet', horizonUrl: 'https://horizon-testnet.stellar.org' }] } },
  { module: '@vault/driver-evm-safe', options: { chains: [{ chain_id: 1, rpc_url: 'https://ethereum-rpc.publicnode.com' }, { chain_id: 11155111, rpc_url: 'https://ethereum-sepolia-rpc.publicnode.com' }] } },
];

/** Only the signers (address derivation); with no configuration, the installed first-party ones. */
async function addressSigners(values: { drivers?: string | undefined; trust?: string | undefined }): Promise<Pick<DriverRegistry<ChainSigner>, 'chains' | 'get'>> {
  const { configs, base } = driverConfigs(values);
  if (configs.length > 0) return (await loadDriverModules(configs, base)).signers;
  const signers = new DriverRegistry<ChainSigner>();
  for (const cfg of DEFAULT_ADDRESS_DRIVERS) {
    let api: Awaited<ReturnType<typeof importPlugin>>;
    try {
      api = await importPlugin(cfg.module, base);
    } catch {
      continue; // not installed: no addresses for that family
    }
    if (typeof api.createSigner === 'function') signers.register(await api.createSigner(cfg.options ?? {}));
  }
  return signers;
}

function driverConfigs(values: { drivers?: string | undefined; trust?: string | undefined }): { configs: readonly DriverModuleConfig[]; base: string } {
  if (values.drivers !== undefined) {
    const path = resolve(values.drivers);
    return { configs: parseWith(DriversConfigSchema, JSON.parse(readFileSync(path, 'utf8')), 'drivers').drivers, base: dirname(path) };
  }
  if (values.trust !== undefined) {
    const path = resolve(values.trust);
    return { configs: loadTrust(path).file.drivers ?? [], base: dirname(path) };
  }
  return { configs: [], base: process.cwd() };
}

/** `--help`, `-h` or `help` anywhere: the usage on stdout and exit 0 (asking is not a mistake). */
const asksForHelp = (argv: readonly string[]): boolean => argv.some((a) => a === '--help' || a === '-h') || argv[0] === 'help';

export async function main(argv: readonly string[]): Promise<number> {
  if (asksForHelp(argv)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      keystore: { type: 'string' },
      curve: { type: 'string' },
      scope: { type: 'string', multiple: true },
      trust: { type: 'string' },
      'state-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      drivers: { type: 'string' },
      'passphrase-file': { type: 'string' },
      'kdf-log2': { type: 'string' },
      approver: { type: 'string', multiple: true },
      wallet: { type: 'string', multiple: true },
      backend: { type: 'string' },
      pkcs11: { type: 'string' },
      label: { type: 'string' },
      key: { type: 'string' },
      'allow-import': { type: 'boolean' },
      admins: { type: 'string' },
    },
    strict: true,
  });
  if (command === 'keygen' && (values.backend ?? 'software') === 'pkcs11') {
    if (values.pkcs11 === undefined || values.label === undefined) throw new UsageError('keygen --backend pkcs11 needs --pkcs11 FILE and --label LABEL');
    const curve = values.curve as Curve | undefined;
    if (curve !== 'ed25519' && curve !== 'secp256k1') throw new UsageError('--curve must be ed25519 or secp256k1');
    const config = loadPkcs11Config(values.pkcs11);
    const signers = await addressSigners(values);
    const key = generateTokenKey(config, readPin(config), { curve, label: values.label });
    process.stdout.write(`${JSON.stringify(tokenKeyJson(key, signers, config), null, 2)}\n`);
    return 0;
  }
  if (command === 'import') {
    if (values.keystore === undefined || values.key === undefined || values.pkcs11 === undefined || values.label === undefined) {
      throw new UsageError('import needs --keystore DIR --key ID --pkcs11 FILE --label LABEL');
    }
    const config = loadPkcs11Config(values.pkcs11);
    // Refused before the passphrase or the PIN is read: nothing is decrypted unless asked for.
    if (values['allow-import'] !== true) refuseImport();
    const info = listKeyFiles(resolve(values.keystore)).find((k) => k.id === values.key);
    if (!info) throw new UsageError(`no signing key ${values.key} in ${resolve(values.keystore)}`);
    const file = parseWith(KeyFileSchema, JSON.parse(readSecretFile(join(resolve(values.keystore), `${info.id}.json`))), 'key file');
    const secret = await openKey(file, passphrase(values['passphrase-file']));
    try {
      const signers = await addressSigners(values);
      const key = importTokenKey(config, readPin(config), { curve: file.curve, label: values.label, secret, publicKey: info.publicKey, allowImport: true });
      process.stdout.write(`${JSON.stringify(tokenKeyJson(key, signers, config), null, 2)}\n`);
    } finally {
      secret.fill(0);
    }
    return 0;
  }
  if (command === 'keygen') {
    if (values.backend !== undefined && values.backend !== 'software') throw new UsageError('--backend must be software or pkcs11');
    if (values.keystore === undefined) throw new UsageError('--keystore is required');
    const curve = values.curve as Curve | undefined;
    if (curve !== 'ed25519' && curve !== 'secp256k1') throw new UsageError('--curve must be ed25519 or secp256k1');
    const signers = await addressSigners(values);
    const key = await createKey(resolve(values.keystore), { curve, passphrase: passphrase(values['passphrase-file']), scope: parseScope(values.scope ?? []), kdf: kdfOf(values['kdf-log2']) });
    const addresses = deriveAddresses(signers, Buffer.from(key.publicKeyHex, 'hex'), curve);
    process.stdout.write(`${JSON.stringify({ id: key.id, curve, public_key: key.publicKeyHex, scope: key.scope, file: key.path, addresses }, null, 2)}\n`);
    return 0;
  }
  if (command === 'keys' && values.pkcs11 !== undefined) {
    const config = loadPkcs11Config(values.pkcs11);
    const signers = await addressSigners(values);
    const keys = listTokenKeys(config, readPin(config)).map((k) => tokenKeyJson(k, signers, config));
    process.stdout.write(`${JSON.stringify({ pkcs11: resolve(values.pkcs11), keys }, null, 2)}\n`);
    return 0;
  }
  if (command === 'keys') {
    if (values.keystore === undefined) throw new UsageError('--keystore or --pkcs11 is required');
    const signers = await addressSigners(values);
    const keys = listKeyFiles(resolve(values.keystore)).map((k) => {
      // The header is authenticated only when a key is unlocked; at least the id must name this public key.
      if (keyIdOf(k.publicKey) !== k.id) throw new Error(`key file ${k.id}: the id does not match its public key`);
      return { id: k.id, curve: k.curve, public_key: k.publicKeyHex, scope: k.scope, addresses: deriveAddresses(signers, k.publicKey, k.curve) };
    });
    process.stdout.write(`${JSON.stringify({ keystore: resolve(values.keystore), keys }, null, 2)}\n`);
    return 0;
  }
  if (command === 'serve') {
    if ((values.keystore === undefined) === (values.pkcs11 === undefined) || values.trust === undefined) throw new UsageError('--trust and one of --keystore or --pkcs11 are required');
    const port = values.port === undefined ? 7333 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0..65535');
    const signer = await startSigner({
      ...(values.keystore !== undefined ? { keystore: values.keystore } : { pkcs11: values.pkcs11 as string }),
      trust: values.trust,
      ...(values['state-dir'] !== undefined ? { stateDir: values['state-dir'] } : {}),
      ...(values.drivers !== undefined ? { drivers: values.drivers } : {}),
      host: values.host ?? '127.0.0.1',
      port,
      passphrase: passphrase(values['passphrase-file']),
      kdf: kdfOf(values['kdf-log2']),
    });
    // Handlers first: whoever reads the line below may signal at once.
    const stop = () => {
      void signer.stop().then(() => process.exit(0));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    process.stdout.write(
      `${JSON.stringify({ listening: signer.url, pid: process.pid, receipt_head: signer.state.head, receipt_public_key: signer.state.receiptPublicKey, token_file: signer.tokenFile, repaired_bytes: signer.state.repairedBytes })}\n`,
    );
    return -1; // keep running
  }
  if (command === 'lift') {
    if (values.keystore === undefined && values['state-dir'] === undefined) throw new UsageError('--keystore or --state-dir is required');
    const approvers = values.approver ?? [];
    const wallets = values.wallet ?? [];
    if (approvers.length === 0 && wallets.length === 0) throw new UsageError('name what to lift: --approver ID or --wallet ID');
    const stateDir = values['state-dir'] !== undefined ? resolve(values['state-dir']) : signerStateDir(values.keystore as string);
    // Never create a state here: lifting only makes sense on the journal a signer wrote.
    if (!existsSync(join(stateDir, 'journal.jsonl')) || !existsSync(join(stateDir, 'receipt-key.json'))) throw new UsageError(`no signer state in ${stateDir}`);
    const receiptKey = await loadOrCreateReceiptKey(stateDir, passphrase(values['passphrase-file']));
    const state = SignerState.open(stateDir, receiptKey);
    receiptKey.fill(0);
    try {
      const lifted = await liftRestrictions(state, { approvers, wallets }, Math.floor(Date.now() / 1000));
      if (lifted.length === 0) throw new Error(`nothing to lift: no restriction in force names ${[...approvers, ...wallets].join(', ')}`);
      process.stdout.write(`${JSON.stringify({ lifted, count: state.restrictionCount, digest: state.restrictionDigest, receipt_head: state.head })}\n`);
      return 0;
    } finally {
      state.close();
    }
  }
  if (command === 'admins') {
    if (values.trust === undefined || values.admins === undefined) throw new UsageError('admins needs --trust FILE and --admins FILE');
    const path = resolve(values.trust);
    const trust = loadTrust(path);
    // Set once: from then on only a change set the admins signed moves it (POST /governance/changes).
    if (trust.file.governance !== undefined) throw new UsageError(`${path} already has admins (version ${trust.file.governance.version}); change them with a change set the admins approve`);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(resolve(values.admins), 'utf8'));
    } catch {
      throw new UsageError(`${values.admins} is not readable JSON`);
    }
    const quorum = parseWith(AdminQuorumSchema, raw, 'admins');
    const next = parseTrust({ ...trust.file, governance: { ...quorum, version: 0 } });
    writeFileAtomic(path, `${JSON.stringify(next.file, null, 2)}\n`, 0o600);
    process.stdout.write(`${JSON.stringify({ trust: path, version: 0, admins: quorum.admins.map((a) => a.id), threshold: quorum.threshold, delay_seconds: quorum.delay_seconds })}\n`);
    return 0;
  }
  throw new UsageError(command === undefined ? 'no command' : `unknown command ${command}`);
}

/**
 * Runs the CLI with `argv` (without node and the script) and sets the exit code; `serve` keeps the
 * process running. The published bin (bin/vault-signer.cjs) calls this after sizing libuv's pool.
 */
export function run(argv: string[]): Promise<void> {
  return main(argv).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
    },
    (e: unknown) => {
      if (e instanceof UsageError || (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
        process.stderr.write(`vault-signer: ${(e as Error).message}\n${USAGE}\n`);
        process.exitCode = 2;
      } else {
        process.stderr.write(`vault-signer: ${e instanceof VaultError ? e.shortMessage : (e as Error).message}\n`);
        process.exitCode = 1;
      }
    },
  );
}

/** A token key as the CLI prints it: public facts, how the token holds it, its addresses. */
function tokenKeyJson(key: TokenKey, signers: Pick<DriverRegistry<ChainSigner>, 'chains' | 'get'>, config: Pkcs11Config): Record<string, unknown> {
  return {
    id: key.id,
    curve: key.curve,
    public_key: toHex(key.publicKey),
    label: key.label,
    token: config.token_label ?? config.slot,
    // sensitive true, extractable false; local false means it was imported, not generated there.
    attributes: key.attributes,
    scope: configuredScope(config, key.label),
    addresses: deriveAddresses(signers, key.publicKey, key.curve),
    config_entry: { label: key.label },
  };
}

const isMain = process.argv[1] !== undefined && /(?:^|[\\/])cli\.(?:js|ts|mjs)$/.test(process.argv[1]);
if (isMain) void run(process.argv.slice(2));
