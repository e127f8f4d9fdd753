/**
 * A real vault on the XRPL devnet for the browser tests: the devnet (in this process, real
 * signature checks), three `vault-signer serve` processes with their own keystores and trust files,
 * `vault provision` setting up a 2-of-3 wallet (signer list, master key disabled), and
 * `vault-control-plane serve`, all built from source (test/cli-bundle.ts) with the front ends built
 * beside them (scripts/build-web.mjs), so the control plane serves the console from this checkout.
 * The same steps as examples/local-vault, for one ledger.
 */
import { generateEd25519KeyPair, sha256Hex } from '@vault/sdk';
import { startXrplDevnet, type XrplDevnet } from '@vault/driver-xrpl/devnet';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readStateFile, writeStateFile } from '../../src/control-plane/state.js';
import { bundleClis, SERVER_PKG } from '../cli-bundle.js';
import { kill9, waitLine } from '../control-plane/processes.js';
import { buildWeb } from '../../scripts/build-web.mjs';

export const CHAIN = 'xrpl:local';
export const WALLET = 'ops-xrpl';
const ENTRIES = ['signer/cli', 'control-plane/cli', 'provision/cli'] as const;

export interface XrplVault {
  dir: string;
  devnet: XrplDevnet;
  /** The control plane's base URL (the console is at `${url}/app/console/`). */
  url: string;
  passphrase: string;
  /** The approver device the wallet's policy counts (its key stays in the test, as on a phone). */
  device: { id: string; secretKey: Uint8Array; publicKeyHex: string };
  /** A funded account to pay. */
  destination: string;
  close(): Promise<void>;
}

/** Runs a bundled CLI to completion; resolves with its stdout, rejects with its stderr. */
function run(outDir: string, entry: (typeof ENTRIES)[number], args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(outDir, `${entry}.js`), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${entry} ${args[0]} exited ${code}: ${err.slice(-800)}`))));
  });
}

const secret = () => Buffer.from(generateEd25519KeyPair().secretKey).toString('hex');

/**
 * @param policyFor the wallet's policy rules given the approver device's id.
 */
export async function startXrplVault(policyFor: (deviceId: string) => unknown[]): Promise<XrplVault> {
  const outDir = join(SERVER_PKG, '.cache/browser-test');
  await bundleClis(ENTRIES, outDir);
  // The bundled control plane serves `<outDir>/web` (http/web.ts looks beside its own code).
  await buildWeb(join(outDir, 'web'));

  const dir = mkdtempSync(join(tmpdir(), 'vault-browser-'));
  const procs: ChildProcess[] = [];
  const devnet = await startXrplDevnet({ port: 0, networkId: 21337, closeIntervalMs: 500 });
  const closeAll = async () => {
    await Promise.all(procs.map((p) => kill9(p)));
    await devnet.close();
  };
  try {
    const drivers = [{ module: fileURLToPath(import.meta.resolve('@vault/driver-xrpl')), options: { chains: [{ chain: CHAIN, url: devnet.url, networkId: devnet.networkId }] } }];
    writeFileSync(join(dir, 'drivers.json'), JSON.stringify({ drivers }));
    const key = generateEd25519KeyPair();
    const device = { id: `dev_${sha256Hex(key.publicKeyHex).slice(0, 16)}`, secretKey: key.secretKey, publicKeyHex: key.publicKeyHex };

    const passphrase = secret();
    const cpDir = join(dir, 'control-plane');
    await run(outDir, 'control-plane/cli', ['init', '--state-dir', cpDir], { VAULT_OPERATOR_PASSPHRASE: passphrase });
    const statePath = join(cpDir, 'state.json');
    writeStateFile(statePath, {
      ...readStateFile(statePath),
      drivers,
      devices: [{ id: device.id, role: 'approver', label: 'test phone', public_key: device.publicKeyHex, paired_at: Math.floor(Date.now() / 1000) - 60, revoked_at: null }],
    });

    const signers = await Promise.all(
      ['a', 'b', 'c'].map(async (name) => {
        const home = join(dir, `signer-${name}`);
        mkdirSync(home, { recursive: true, mode: 0o700 });
        const env = { VAULT_SIGNER_PASSPHRASE: secret(), VAULT_SIGNER_TOKEN: secret() };
        const keystore = join(home, 'keys');
        const out = JSON.parse(await run(outDir, 'signer/cli', ['keygen', '--keystore', keystore, '--curve', 'ed25519', '--kdf-log2', '10', '--drivers', join(dir, 'drivers.json')], env)) as { addresses: Record<string, string> };
        const trust = join(home, 'trust.json');
        writeFileSync(trust, JSON.stringify({ format: 'vault-signer-trust', version: 1, wallets: [], approvers: [{ id: device.id, public_key: device.publicKeyHex, weight: 1 }], drivers }), { mode: 0o600 });
        return { name, home, env, keystore, trust, address: out.addresses[CHAIN] as string };
      }),
    );

    const provision = {
      state_dir: cpDir,
      trust_files: signers.map((s) => s.trust),
      wallets: [
        {
          wallet: WALLET,
          chain: CHAIN,
          members: signers.map((s) => ({ address: s.address, weight: 1, curve: 'ed25519', label: `signer-${s.name}` })),
          quorum: 2,
          funding: { kind: 'faucet', url: devnet.faucetUrl },
          fund_amount: '500000000',
          max_fee: 1000,
          policy: { wallet: WALLET, version: 1, rules: policyFor(device.id) },
        },
      ],
    };
    writeFileSync(join(dir, 'provision.json'), JSON.stringify(provision));
    await run(outDir, 'provision/cli', ['provision', '--config', join(dir, 'provision.json')], {});

    const endpoints: Record<string, { url: string; token: string; label: string }> = {};
    await Promise.all(
      signers.map(async (s) => {
        const p = spawn(process.execPath, [join(outDir, 'signer/cli.js'), 'serve', '--keystore', s.keystore, '--trust', s.trust, '--state-dir', join(s.home, 'state'), '--port', '0'], { env: { ...process.env, ...s.env }, stdio: ['ignore', 'pipe', 'pipe'] });
        procs.push(p);
        const line = await waitLine(p, (l) => l.includes('"listening"'), 60_000);
        endpoints[s.address] = { url: (JSON.parse(line) as { listening: string }).listening, token: s.env.VAULT_SIGNER_TOKEN, label: `signer-${s.name}` };
      }),
    );
    writeStateFile(statePath, { ...readStateFile(statePath), signers: endpoints });

    const cp = spawn(process.execPath, [join(outDir, 'control-plane/cli.js'), 'serve', '--state-dir', cpDir, '--port', '0'], { env: { ...process.env, VAULT_OPERATOR_PASSPHRASE: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    procs.push(cp);
    const line = await waitLine(cp, (l) => l.includes('"listening"'), 60_000);
    const url = (JSON.parse(line) as { url: string }).url.replace(/\/$/, '');
    return { dir, devnet, url, passphrase, device, destination: devnet.faucet().address, close: closeAll };
  } catch (e) {
    await closeAll();
    throw e;
  }
}
