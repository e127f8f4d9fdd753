#!/usr/bin/env node
/**
 * The local vault in one command (README Quick start).
 *
 *   node examples/local-vault/vault.mjs [--walkthrough] [--hsm] [--port 7331] [--dir DIR]
 *
 * Starts, all on 127.0.0.1 and offline:
 *   - three devnets: XRPL (JSON-RPC), Stellar (Horizon), EVM (anvil with Safe v1.4.1);
 *   - three signer services (`vault-signer serve`), each with its own keystore (an ed25519 and a
 *     secp256k1 key), token and trust file;
 *   - the control plane (`vault-control-plane serve`) on --port, with a generated state;
 * then provisions a 2-of-3 wallet on each ledger with `vault provision` (XRPL signer list + master
 * key disabled, Stellar signers + master weight 0, a Safe; the drivers and the demo approver's key
 * go into the state and trust files with it), pairs a demo approver device over HTTP
 * and prints the URLs, the operator passphrase and what to try. Ctrl-C stops every process.
 *
 * --hsm puts signer a's keys in a SoftHSM2 token (PKCS#11; installed first when missing and this
 * machine can): they are generated in the token (`vault-signer keygen --backend pkcs11`) and the
 * signer serves with `--pkcs11`; b and c keep software keystores.
 *
 * --walkthrough drives the whole path over HTTP, printing each step, and exits non-zero if any step
 * does not behave as described (see WALKTHROUGH below).
 *
 * Imported (not run), it starts nothing: tests take `setUp`, `startControlPlane` and `stopAll` from
 * it (test/crash.test.mjs kills the control plane it starts and restarts it on the same state), and
 * `expectExit` to kill a process without the launcher reporting its exit.
 *
 * Each process's output goes to a file in `<dir>/logs/`; one that exits while the vault runs, and
 * was not stopped on purpose, is reported on stderr with its last lines and its log's path.
 */
import {
  createControlPlaneClient,
  createSignerClient,
  generateEd25519KeyPair,
  sha256Hex,
  signApproval,
  signEd25519,
  fromHex,
  policyDigest,
  toHex,
  verifyReceiptChain,
} from '@vault/sdk';
import { createSoftwarePasskey } from '@vault/sdk/testing';
import { startXrplDevnet } from '@vault/driver-xrpl/devnet';
import { startDevnet as startStellarDevnet } from '@vault/driver-stellar/devnet';
import { startEvmDevnet } from '@vault/driver-evm-safe/devnet';
import { createSigner as createStellarSigner } from '@vault/driver-stellar';
import { readStateFile, writeStateFile } from '@vault/server/control-plane';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { initSoftToken } from '../../scripts/softhsm.mjs';

const require = createRequire(import.meta.url);
const pkgDir = (name) => dirname(require.resolve(`${name}/package.json`));
const SERVER = pkgDir('@vault/server');
// The server's own QR encoder (a dependency of @vault/server), for the terminal pairing code.
const QRCode = createRequire(join(SERVER, 'package.json'))('qrcode');
const CLI = {
  // The published bin: it sizes libuv's thread pool before running dist/signer/cli.js.
  signer: join(SERVER, 'bin/vault-signer.cjs'),
  controlPlane: join(SERVER, 'dist/control-plane/cli.js'),
  provision: join(SERVER, 'dist/provision/cli.js'),
};
const PLUGIN = {
  xrpl: fileURLToPath(import.meta.resolve('@vault/driver-xrpl')),
  stellar: fileURLToPath(import.meta.resolve('@vault/driver-stellar')),
  evm: fileURLToPath(import.meta.resolve('@vault/driver-evm-safe')),
};
const CHAIN = { xrpl: 'xrpl:local', stellar: 'stellar:local', evm: 'eip155:31337' };
const WALLET = { xrpl: 'ops-xrpl', stellar: 'ops-stellar', evm: 'ops-evm' };
const EXECUTOR_ENV = 'VAULT_EVM_EXECUTOR_KEY';
/** Stellar transfers above 100 XLM wait this long (short, so the walkthrough can show one released). */
const TIMELOCK_SECONDS = 5;

// ------------------------------------------------------------------ processes and cleanup

const children = [];
const closers = [];
let stopping = false;
/** `<working directory>/logs`: one file per process this launcher runs (setUp sets it). */
let logDir;

const say = (line = '') => process.stdout.write(`${line}\n`);
/** `signer a` -> `<logDir>/signer-a.log`. */
const logPathOf = (name) => join(logDir, `${name.replace(/\s+/g, '-')}.log`);
/** How many of a process's last output lines a report of its exit repeats. */
const TAIL_LINES = 15;

/**
 * Marks a child that is being stopped on purpose (the walkthrough's signer kills, a test's kill of
 * the control plane it started): its exit is not reported.
 */
export const expectExit = (child) => {
  child.vaultExpectedExit = true;
};

export async function stopAll() {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r)))));
  for (const close of closers.reverse()) await close().catch(() => undefined);
}

/** Runs a CLI to completion (its output also goes to `<logDir>/<name>.log`); resolves with its stdout, rejects with its stderr. */
function run(name, script, argv, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...argv], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      if (logDir) appendFileSync(logPathOf(name), `${out}${err}`, { mode: 0o600 });
      if (code === 0) resolve(out);
      else reject(new Error(`${name} (${script.split('/').slice(-2).join('/')} ${argv[0]}) exited ${code}: ${err.trim()}${logDir ? ` (log: ${logPathOf(name)})` : ''}`));
    });
  });
}

/** Tells the user that a process it relies on stopped, what it said last and where its whole log is. */
function reportExit(name, child, code, signal, tail) {
  const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  process.stderr.write(
    `\nvault: ${name} (pid ${child.pid}) ${how}; the vault keeps running without it.\n` +
      (tail.length ? `  its last output:\n${tail.map((l) => `    ${l}`).join('\n')}\n` : '') +
      (logDir ? `  its whole log: ${logPathOf(name)}\n` : ''),
  );
}

/**
 * Starts a long-running CLI and resolves with the first JSON line it prints that `match`es. All it
 * writes (stdout and stderr) goes on to `<logDir>/<name>.log` for as long as it runs (a restart
 * appends); if it exits after start-up, and this launcher did not stop it, the exit is reported
 * with its last lines and the log's path.
 */
function start(name, script, argv, env, match, nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, script, ...argv], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    if (logDir) {
      const log = createWriteStream(logPathOf(name), { flags: 'a', mode: 0o600 });
      log.write(`--- ${new Date().toISOString()} started ${name}, pid ${child.pid}\n`);
      child.stdout.pipe(log, { end: false });
      child.stderr.pipe(log, { end: false });
      child.once('close', () => log.end());
      child.vaultLog = logPathOf(name);
    }
    let ready = false;
    let buf = '';
    // The last lines it wrote (both streams), bounded: what a report of its exit repeats.
    const tail = [];
    let partial = '';
    const keep = (d) => {
      const lines = (partial + d).split('\n');
      partial = lines.pop().slice(-2000);
      for (const l of lines) if (tail.push(l.slice(0, 2000)) > TAIL_LINES) tail.shift();
    };
    child.stderr.on('data', keep);
    child.stdout.on('data', (d) => {
      keep(d);
      if (ready) return;
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          const j = JSON.parse(line);
          if (!ready && match(j)) {
            ready = true;
            buf = '';
            resolve({ child, line: j });
          }
        } catch {
          // not a JSON line
        }
      }
    });
    // 'close' (not 'exit'): by then every line it wrote has been read.
    child.once('close', (code, signal) => {
      if (partial) tail.push(partial);
      if (!ready) reject(new Error(`${name} exited ${code ?? signal} before it was ready: ${tail.join('\n').trim()}${logDir ? ` (log: ${logPathOf(name)})` : ''}`));
      else if (!stopping && !child.vaultExpectedExit) reportExit(name, child, code, signal, tail.slice(-TAIL_LINES));
    });
  });
}

// ------------------------------------------------------------------ set-up

const secret = () => randomBytes(24).toString('base64url');

/**
 * The control plane's `serve` on its state directory; resolves with the process and its URL.
 * `nodeArgs` are flags for node itself (the execute bench passes BENCH_CP_NODE_ARGS, e.g. --cpu-prof).
 */
export async function startControlPlane(cpDir, port, env, nodeArgs = []) {
  const { child, line } = await start('control plane', CLI.controlPlane, ['serve', '--state-dir', cpDir, '--port', String(port)], env, (j) => j.event === 'listening', nodeArgs);
  return { child, url: line.url };
}

/**
 * Starts and provisions everything (see the top of this file); `kdfLog2` sizes the signers' keystore
 * KDF; `hsm` puts signer a's keys in a SoftHSM2 token.
 */
export async function setUp({ dir: where, port = '7331', kdfLog2 = '15', hsm = false, admins } = {}) {
  const dir = where ?? mkdtempSync(join(tmpdir(), 'vault-local-'));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  logDir = join(dir, 'logs');
  mkdirSync(logDir, { recursive: true, mode: 0o700 });
  say(`vault: working directory ${dir}; each process's log in ${logDir}`);

  // 1. Devnets (in this process; anvil is its own process).
  const xrpl = await startXrplDevnet({ port: 0, networkId: 21337, closeIntervalMs: 1000 });
  closers.push(() => xrpl.close());
  const stellar = await startStellarDevnet({ port: 0 });
  closers.push(() => stellar.close());
  const evm = await startEvmDevnet({ port: 0, chainId: 31337 });
  closers.push(() => evm.stop());
  say(`devnets: xrpl ${xrpl.url}  stellar ${stellar.url}  evm ${evm.rpcUrl}`);

  const drivers = [
    { module: PLUGIN.xrpl, options: { chains: [{ chain: CHAIN.xrpl, url: xrpl.url, networkId: xrpl.networkId }] } },
    { module: PLUGIN.stellar, options: { chains: [{ chain: CHAIN.stellar, horizonUrl: stellar.url, networkPassphrase: stellar.networkPassphrase }] } },
    { module: PLUGIN.evm, options: { chains: [{ chain_id: evm.chainId, rpc_url: evm.rpcUrl, finality: 'latest', polling_interval_ms: 100, executor_key_env: EXECUTOR_ENV }] } },
  ];
  writeFileSync(join(dir, 'drivers.json'), JSON.stringify({ drivers }, null, 2));

  // 2. The demo approver device: its id is what the control plane derives when it pairs.
  const device = generateEd25519KeyPair();
  const deviceId = `dev_${sha256Hex(device.publicKeyHex).slice(0, 16)}`;
  // Its passkey (issue #24), a software authenticator answering as a browser at the app's page
  // origin would: only its assertions make the device's approvals strong. With --port 0 the
  // origin is not known ahead, so the demo names the default port's (state.json's `webauthn`).
  const pageOrigin = `http://localhost:${Number(port) || 7331}`;
  const passkey = createSoftwarePasskey({ rp_id: 'localhost', origin: pageOrigin });
  const trustedPasskey = { credential_id: passkey.credential_id, public_key: passkey.public_key, backup_eligible: false, rp_id: 'localhost', origins: [pageOrigin] };

  // 3. The control plane's state directory, made while the signers' keys are (below).
  const cpDir = join(dir, 'control-plane');
  const operatorPassphrase = secret();
  const cpInit = run('control-plane-init', CLI.controlPlane, ['init', '--state-dir', cpDir], { VAULT_OPERATOR_PASSPHRASE: operatorPassphrase });

  // 4. Three signers, each with an ed25519 key (XRPL, Stellar) and a secp256k1 key (EVM).
  // The three run side by side (each keygen is a process of its own, mostly start-up time): a
  // second `npm start` is up sooner. One signer's two keys are made in turn: one keystore directory.
  const signers = await Promise.all(['a', 'b', 'c'].map(async (name) => {
    const home = join(dir, `signer-${name}`);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const env = { VAULT_SIGNER_PASSPHRASE: secret(), VAULT_SIGNER_TOKEN: secret() };
    // Where the keys are: a keystore directory, or (--hsm, signer a) a PKCS#11 token.
    let keyArgs = ['--keystore', join(home, 'keys')];
    let keygenArgs = (curve) => ['keygen', ...keyArgs, '--curve', curve, '--kdf-log2', String(kdfLog2)];
    if (hsm && name === 'a') {
      const label = `vault-signer-${name}`;
      const pin = secret();
      const token = initSoftToken({ label, pin, dir: join(home, 'softhsm') });
      const config = join(home, 'pkcs11.json');
      writeFileSync(config, JSON.stringify({ format: 'vault-signer-pkcs11', version: 1, module: token.module, token_label: label, pin_env: 'VAULT_PKCS11_PIN', keys: [{ label: `${name}-ed25519` }, { label: `${name}-secp256k1` }] }, null, 2), { mode: 0o600 });
      Object.assign(env, { SOFTHSM2_CONF: token.conf, VAULT_PKCS11_PIN: pin });
      keyArgs = ['--pkcs11', config];
      keygenArgs = (curve) => ['keygen', '--backend', 'pkcs11', ...keyArgs, '--label', `${name}-${curve}`, '--curve', curve];
    }
    const addresses = {};
    for (const curve of ['ed25519', 'secp256k1']) {
      const out = JSON.parse(await run(`keygen-${name}`, CLI.signer, [...keygenArgs(curve), '--drivers', join(dir, 'drivers.json')], env));
      for (const [chain, address] of Object.entries(out.addresses)) {
        if ((curve === 'secp256k1') === (chain === CHAIN.evm)) addresses[chain] = { address, curve };
      }
    }
    const trust = join(home, 'trust.json');
    // Empty: `vault provision` writes the wallets, the approver and the drivers into it.
    writeFileSync(trust, JSON.stringify({ format: 'vault-signer-trust', version: 1, wallets: [], approvers: [] }, null, 2), { mode: 0o600 });
    return { name, home, env, addresses, trust, keyArgs, backend: keyArgs[0] === '--pkcs11' ? 'pkcs11' : 'software' };
  }));
  say(`signers: ${signers.map((s) => `${s.name} (${Object.values(s.addresses).map((a) => a.address.slice(0, 8)).join(', ')}; keys: ${s.backend === 'pkcs11' ? 'SoftHSM2 token over PKCS#11' : 'software keystore'})`).join('; ')}`);

  await cpInit;
  const statePath = join(cpDir, 'state.json');

  // 5. Provision the three 2-of-3 wallets: ledgers first, then the state file and trust files.
  const members = (chain) => signers.map((s, i) => ({ address: s.addresses[chain].address, weight: 1, curve: s.addresses[chain].curve, label: `signer-${s.name}` }));
  const approvers = [{ id: deviceId, weight: 1 }];
  // Each wallet's fee cap, written into every signer's trust file: about 20x what the devnets charge
  // (XRPL 12 drops x (1 + 3 signers) = 48 drops; Stellar 100 stroops for one operation; a Safe pays
  // no fee of its own). Tighter than the drivers' defaults, which a signer applies when max_fee is absent.
  const MAX_FEE = { xrpl: 1000, stellar: 2000, evm: 0 };
  // The drivers and the approver go into the state file and every trust file through provision.
  const provision = {
    state_dir: cpDir,
    trust_files: signers.map((s) => s.trust),
    drivers,
    approvers: [{ id: deviceId, public_key: device.publicKeyHex, passkey: trustedPasskey }],
    wallets: [
      {
        wallet: WALLET.xrpl,
        chain: CHAIN.xrpl,
        members: members(CHAIN.xrpl),
        quorum: 2,
        funding: { kind: 'faucet', url: xrpl.faucetUrl },
        fund_amount: '500000000',
        max_fee: MAX_FEE.xrpl,
        policy: {
          wallet: WALLET.xrpl,
          version: 1,
          rules: [
            { rule: 'allow_operations', ops: ['transfer', 'mpt_create'] },
            { rule: 'hard_ceiling', max: '1000000000' },
            { rule: 'approval_threshold', above: '50000000', required_weight: 1, approvers },
            { rule: 'daily_velocity_cap', limit: '300000000' },
          ],
        },
      },
      {
        wallet: WALLET.stellar,
        chain: CHAIN.stellar,
        members: members(CHAIN.stellar),
        quorum: 2,
        funding: { kind: 'faucet', url: `${stellar.url}${stellar.friendbotPath}` },
        max_fee: MAX_FEE.stellar,
        policy: {
          wallet: WALLET.stellar,
          version: 1,
          rules: [
            { rule: 'hard_ceiling', max: '100000000000' },
            { rule: 'timelock_above', above: '1000000000', seconds: TIMELOCK_SECONDS },
          ],
        },
      },
      {
        wallet: WALLET.evm,
        chain: CHAIN.evm,
        members: members(CHAIN.evm),
        quorum: 2,
        funding: { kind: 'faucet', url: evm.rpcUrl },
        fund_amount: '5000000000000000000',
        max_fee: MAX_FEE.evm,
        policy: {
          wallet: WALLET.evm,
          version: 1,
          rules: [
            { rule: 'allow_operations', ops: ['transfer', 'contract_call'] },
            { rule: 'require_human_approver_for_agent_initiated' },
            { rule: 'agent_budget_ceiling', budget: '1000000000000000000', window_seconds: 86400 },
            { rule: 'approval_threshold', above: '2000000000000000000', required_weight: 1, approvers },
          ],
        },
      },
    ],
  };
  const provisionFile = join(dir, 'provision.json');
  writeFileSync(provisionFile, JSON.stringify(provision, null, 2));
  const provisioned = (await run('provision', CLI.provision, ['provision', '--config', provisionFile])).trim().split('\n').map((l) => JSON.parse(l));
  for (const p of provisioned) say(`provisioned ${p.wallet} on ${p.chain}: ${p.address} (${p.transactions.length} transactions, reconcile ${p.reconcile})`);
  const addressOf = Object.fromEntries(provisioned.map((p) => [p.wallet, p.address]));

  // The Safe gets a test token it owns (for the token transfer and the contract_call).
  const token = await evm.deployToken(addressOf[WALLET.evm]);
  await evm.setTokenBalance(token, addressOf[WALLET.evm], 1_000_000_000n);

  // A funded account to send to on each ledger (the banner prints each with a ready-to-run request).
  // A Stellar payment to an account that does not exist fails at the ledger (op_no_destination)
  // after costing a fee; so the signers' own Stellar accounts, the addresses a user tries first, are
  // funded too.
  const friendbot = async (address) => {
    const r = await fetch(`${stellar.url}${stellar.friendbotPath}?addr=${address}`);
    if (!r.ok) throw new Error(`friendbot refused ${address}: ${r.status}`);
    return address;
  };
  const stellarDriver = await createStellarSigner({ chains: [{ chain: CHAIN.stellar, horizonUrl: stellar.url, networkPassphrase: stellar.networkPassphrase }] });
  const examples = {
    xrpl: xrpl.faucet().address,
    stellar: await friendbot(stellarDriver.deriveAddress({ chain: CHAIN.stellar, publicKey: generateEd25519KeyPair().publicKey, curve: 'ed25519' })),
    evm: evm.accounts.funded[0].address,
  };
  for (const s of signers) await friendbot(s.addresses[CHAIN.stellar].address);

  // Change sets (issue #23), when asked for: the same admin quorum in every signer's trust file,
  // set with the signer's own bootstrap command, and in the control plane's state.
  if (admins !== undefined) {
    const adminsFile = join(dir, 'admins.json');
    writeFileSync(adminsFile, JSON.stringify(admins, null, 2));
    for (const s of signers) await run(`admins-${s.name}`, CLI.signer, ['admins', '--trust', s.trust, '--admins', adminsFile], s.env);
  }

  // 6. Signer services.
  await Promise.all(signers.map(async (s) => {
    const { line } = await start(`signer ${s.name}`, CLI.signer, ['serve', ...s.keyArgs, '--trust', s.trust, '--state-dir', join(s.home, 'state'), '--port', '0'], s.env, (j) => typeof j.listening === 'string');
    s.url = line.listening;
    s.receiptPublicKey = line.receipt_public_key;
    s.pid = line.pid;
  }));

  // 7. The control plane learns where each member address's signer is, then starts.
  const state = readStateFile(statePath);
  const endpoints = {};
  for (const s of signers) for (const { address } of Object.values(s.addresses)) endpoints[address] = { url: s.url, token: s.env.VAULT_SIGNER_TOKEN, label: `signer-${s.name}` };
  writeStateFile(statePath, { ...state, signers: endpoints, webauthn: { rp_id: 'localhost', origins: [pageOrigin] } });
  const cpEnv = { [EXECUTOR_ENV]: evm.accounts.executor.privateKey };
  const { child: cpChild, url: cpUrl } = await startControlPlane(cpDir, port, cpEnv);

  // 8. Pair the demo approver device over HTTP (a real pairing code, a real signature over its challenge).
  const cp = createControlPlaneClient({ baseUrl: cpUrl });
  await cp.unlock(operatorPassphrase);
  // With --port 0 the app's origin is known only now: passkeys made in the browser come from it.
  const appOrigin = new URL(appUrlOf(cpUrl)).origin;
  if (appOrigin !== pageOrigin) {
    writeStateFile(statePath, { ...readStateFile(statePath), webauthn: { rp_id: 'localhost', origins: [pageOrigin, appOrigin] } });
    await cp.reload();
  }
  const code = await cp.pairCreate({ role: 'approver', label: 'demo approver device' });
  const challenge = fromHex(code.challenge, 'challenge', 32);
  const claimed = await cp.pairClaim({ code: code.code, public_key: device.publicKeyHex, signature: toHex(signEd25519(challenge, device.secretKey)), label: 'demo approver device', passkey: passkey.register(challenge) });
  if (claimed.device?.id !== deviceId) throw new Error(`paired device id ${claimed.device?.id} is not the expected ${deviceId}`);

  // 9. Change sets, when asked for: the admin quorum is set up once the demo device is paired as an
  // approver (under governance a pairing makes a viewer until a change set gives it a role). The
  // control plane records the digests of the governed sections when it reloads this file.
  if (admins !== undefined) {
    writeStateFile(statePath, { ...readStateFile(statePath), governance: { policy: { ...admins, version: 0 }, policy_since: {}, changes: [] } });
    await cp.reload();
  }

  return { dir, logDir, xrpl, stellar, evm, drivers, signers, device, deviceId, passkey, cp, cpUrl, cpChild, cpDir, cpEnv, operatorPassphrase, addressOf, token, examples, statePath };
}

// ------------------------------------------------------------------ your approver (the browser app)

/**
 * The approver app's address. `localhost`, not 127.0.0.1: browsers make keys and passkeys only on
 * a secure origin, which http://localhost is and an IP address is not for passkeys (WebAuthn
 * refuses IP-address relying parties).
 */
export const appUrlOf = (cpUrl) => `http://localhost:${new URL(cpUrl).port}/app/`;

/**
 * A pairing code for the user's own approver, as the banner shows it: the app's URL with the code
 * in its fragment (a phone's camera opens the app with it; a fragment never reaches a server log),
 * the same as a QR for the terminal, and the code alone (`<code>.<challenge>`) to paste.
 */
export async function yourApproverPairing(v) {
  const p = await v.cp.pairCreate({ role: 'approver', label: 'your approver' });
  const code = `${p.code}.${p.challenge}`;
  const url = `${appUrlOf(v.cpUrl)}#pair=${code}`;
  const qr = await QRCode.toString(url, { type: 'terminal', small: true, errorCorrectionLevel: 'M' });
  return { code, url, qr, expires_at: p.expires_at };
}

/**
 * Makes the demo policies count an approver the user paired from the browser. The demo policies
 * name the demo device, and a signer counts an approval only from an approver its trust file lists
 * (with the key) under a policy whose digest it pins, so a new approver is a policy change, done
 * the way an operator would: each approval_threshold gains the device (weight 1) in a new policy
 * version; each signer's trust file gains the approver and the new digests, and the signer is
 * restarted on its port (a signer reads its trust file at start); then the control plane reloads
 * state.json. Signers first: until the reload they refuse only the old digest, for a moment.
 */
export async function adoptApprover(v, device) {
  const state = readStateFile(v.statePath);
  let edited = false;
  const policies = state.policies.map((p) => {
    let touched = false;
    const rules = p.rules.map((r) => {
      if (r.rule !== 'approval_threshold' || r.approvers.some((a) => a.id === device.id)) return r;
      touched = true;
      return { ...r, approvers: [...r.approvers, { id: device.id, weight: 1 }] };
    });
    edited ||= touched;
    return touched ? { ...p, version: p.version + 1, rules } : p;
  });
  // Every step below can be repeated: a second call finishes what a failed first one began.
  const digests = new Map(policies.filter((p) => p.rules.some((r) => r.rule === 'approval_threshold' && r.approvers.some((a) => a.id === device.id))).map((p) => [p.wallet, policyDigest(p)]));
  if (digests.size === 0) return [];
  // A passkey registered at pairing goes to the signers too (when the control plane's device
  // record in state.json carries one), so they count its strong approvals as strong on their own check.
  const registered = state.devices.find((d) => d.id === device.id)?.passkey;
  const passkey = registered ? { passkey: { ...registered, origins: [new URL(appUrlOf(v.cpUrl)).origin] } } : {};
  for (const s of v.signers) {
    const before = readFileSync(s.trust, 'utf8');
    const trust = JSON.parse(before);
    trust.approvers = [...trust.approvers.filter((a) => a.id !== device.id), { id: device.id, public_key: device.public_key, weight: 1, ...passkey }];
    trust.wallets = trust.wallets.map((w) => (digests.has(w.descriptor.wallet) ? { ...w, policy_digest: digests.get(w.descriptor.wallet) } : w));
    const after = JSON.stringify(trust, null, 2);
    if (after === before) continue;
    writeFileSync(s.trust, after, { mode: 0o600 });
    await restartSigner(s);
  }
  if (edited) writeStateFile(v.statePath, { ...readStateFile(v.statePath), policies });
  await v.cp.reload();
  return [...digests.keys()];
}

/** Stops a signer (not reported as an exit) and starts it again on the same port with the same files. */
/** The running process of signer `s` (one of `setUp`'s `signers`), found among the children this module started. */
const signerChild = (s) => children.find((x) => x.spawnargs.includes(s.trust) && x.exitCode === null && x.signalCode === null);

/** Sends `signal` to signer `s`'s process, by the PID this module started it with (tests freeze one with SIGSTOP). */
export function signalSigner(s, signal) {
  const child = signerChild(s);
  if (!child) throw new Error(`signer ${s.name} is not running`);
  process.kill(child.pid, signal);
}

async function stopSigner(s, signal = 'SIGTERM') {
  const child = signerChild(s);
  if (!child) return;
  expectExit(child);
  const gone = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await gone;
}
async function startSigner(s) {
  const { line } = await start(`signer ${s.name}`, CLI.signer, ['serve', ...s.keyArgs, '--trust', s.trust, '--state-dir', join(s.home, 'state'), '--port', new URL(s.url).port], s.env, (j) => typeof j.listening === 'string');
  s.url = line.listening;
}
async function restartSigner(s) {
  await stopSigner(s);
  await startSigner(s);
}

/**
 * Watches for approvers the user pairs (any approver device besides the demo one) and adopts each
 * (adoptApprover), printing what changed. Polls GET /devices: a pairing is rare and a second's
 * delay is nothing next to a person scanning a code. Resolves `stop` to end it.
 */
export function watchYourApprovers(v, onAdopted = () => undefined) {
  const adopted = new Set([v.deviceId]);
  let stopped = false;
  let timer;
  const tick = async () => {
    try {
      const { devices } = await v.cp.devices().catch(async (e) => {
        // The operator session lapsed (idle): unlock again.
        if (e?.name !== 'SessionError') throw e;
        await v.cp.unlock(v.operatorPassphrase);
        return v.cp.devices();
      });
      for (const d of devices) {
        if (stopped || d.role !== 'approver' || d.revoked || adopted.has(d.id)) continue;
        adopted.add(d.id);
        let wallets;
        try {
          wallets = await adoptApprover(v, d);
        } catch (e) {
          // Tried again at the next poll (each step of adoptApprover can be repeated).
          adopted.delete(d.id);
          throw e;
        }
        say(`\nyour approver ${d.id} ("${d.label}") is paired: ${wallets.length ? `${wallets.join(', ')} now count it (policy version +1; signers restarted with it in their trust files)` : 'no policy has an approval threshold for it'}`);
        onAdopted(d, wallets);
      }
    } catch (e) {
      process.stderr.write(`vault: watching for your approver: ${e?.message ?? e}\n`);
    }
    if (!stopped) timer = setTimeout(tick, 1000);
  };
  timer = setTimeout(tick, 0);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

// ------------------------------------------------------------------ walkthrough

class StepFailed extends Error {}
let stepNo = 0;
async function step(title, fn) {
  stepNo += 1;
  say(`\n[${stepNo}] ${title}`);
  const out = await fn();
  return out;
}
function expectThat(ok, what) {
  if (!ok) throw new StepFailed(what);
  say(`    ok: ${what}`);
}
const show = (label, value) => say(`    ${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);

/** mint(address,uint256) calldata for the test token. */
function mintCall(to, amount) {
  return `0x40c10f19${to.slice(2).toLowerCase().padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`;
}

async function walkthrough(v) {
  const { cp, deviceId, device, passkey } = v;
  const now = () => Math.floor(Date.now() / 1000);
  // Strong: the device's passkey signs over this very approval (user verified, low-S).
  const approve = (id) => cp.approveSigned(id, passkey.attach(signApproval({ approver_id: deviceId, intent: id, verdict: 'approve', at: now(), strong_auth: true }, device.secretKey)));
  const { xrpl: xrplDest, stellar: stellarAddress, evm: evmDest } = v.examples;
  /** Every intent `execute` saw confirmed: which wallet, which id. */
  const confirmedIntents = [];

  const execute = async (label, request, { approveFirst = false } = {}) => {
    const created = await cp.createIntent(request);
    show('intent', `${created.intentId} ${created.status} (${created.decision.decision}${created.decision.reasons.length ? `: ${created.decision.reasons.join('; ')}` : ''})`);
    if (approveFirst) {
      expectThat(created.status === 'pending_approvals', `${label}: needs the device's approval first`);
      const a = await approve(created.intentId);
      expectThat(a.status === 'allowed', `${label}: approved with the device key, now allowed`);
    } else {
      expectThat(created.status === 'allowed', `${label}: allowed by the policy`);
    }
    const out = await cp.execute(created.intentId);
    show('outcome', { status: out.status, txHash: out.txHash, ...(out.mptIssuanceId ? { mptIssuanceId: out.mptIssuanceId } : {}) });
    expectThat(out.status === 'confirmed' && typeof out.txHash === 'string', `${label}: confirmed on the ledger with txHash ${out.txHash}`);
    confirmedIntents.push({ wallet: request.wallet, id: created.intentId });
    return { created, out };
  };

  await step('XRPL: transfer 10 XRP (under every threshold)', () => execute('xrpl transfer', { wallet: WALLET.xrpl, destination: xrplDest, amount: '10000000', memo: 'walkthrough 1' }));
  await step('XRPL: transfer 60 XRP (above 50 XRP: the paired device must approve)', () => execute('xrpl approved transfer', { wallet: WALLET.xrpl, destination: xrplDest, amount: '60000000' }, { approveFirst: true }));
  await step('XRPL: mpt_create (a multi-purpose token issued by the wallet)', async () => {
    const { out } = await execute('mpt_create', { wallet: WALLET.xrpl, destination: v.addressOf[WALLET.xrpl], amount: '0', operation: { op: 'mpt_create', asset_scale: 2, flags: 0x20, maximum_amount: '100000000' } });
    expectThat(/^[0-9A-F]{48}$/.test(out.mptIssuanceId ?? ''), `mpt_create: outcome carries mptIssuanceId ${out.mptIssuanceId}`);
  });
  await step('XRPL: a transfer past the daily velocity cap is denied', async () => {
    const r = await cp.createIntent({ wallet: WALLET.xrpl, destination: xrplDest, amount: '250000000', memo: 'over the cap' });
    show('decision', r.decision);
    expectThat(r.status === 'denied' && r.decision.reasons.some((x) => x.startsWith('daily_velocity_cap')), 'denied by daily_velocity_cap, naming the numbers');
  });
  await step('Stellar: transfer 10 XLM', () => execute('stellar transfer', { wallet: WALLET.stellar, destination: stellarAddress, amount: '100000000', asset_decimals: 7 }));
  await step(`Stellar: transfer 200 XLM (above 100 XLM: a ${TIMELOCK_SECONDS}-second timelock, then released)`, async () => {
    const r = await cp.createIntent({ wallet: WALLET.stellar, destination: stellarAddress, amount: '2000000000', asset_decimals: 7 });
    show('decision', r.decision);
    expectThat(r.status === 'timelocked' && r.decision.not_before >= now() + TIMELOCK_SECONDS - 1, `timelocked until ${new Date(r.decision.not_before * 1000).toISOString()}`);
    let early;
    try {
      await cp.execute(r.intentId);
    } catch (e) {
      early = e;
    }
    expectThat(early?.data?.reason === 'timelocked', 'an execute before then is refused: timelocked');
    // The signers observed the intent when it was created (the control plane has them: POST /observe), so their
    // own timelocks end with the control plane's, not a full timelock after the first execute.
    await new Promise((res) => setTimeout(res, (r.decision.not_before - now() + 2) * 1000));
    const out = await cp.execute(r.intentId);
    show('outcome', { status: out.status, txHash: out.txHash });
    expectThat(out.status === 'confirmed', 'after the timelock: executed and confirmed');
  });
  await step('EVM: transfer 0.5 ETH from the Safe', () => execute('evm transfer', { wallet: WALLET.evm, destination: evmDest, amount: '500000000000000000', asset_decimals: 18 }));
  await step('EVM: ERC-20 token transfer (the test token the Safe owns)', () => execute('token transfer', { wallet: WALLET.evm, destination: evmDest, amount: '12345', asset_issuer: v.token, asset_symbol: v.evm.token.symbol, asset_decimals: v.evm.token.decimals }));
  await step('EVM: contract_call (the Safe mints test tokens)', () => execute('contract_call', { wallet: WALLET.evm, destination: v.token, amount: '0', asset_decimals: 18, operation: { op: 'contract_call', data_hex: mintCall(evmDest, 777n) } }));
  await step('EVM: an agent-initiated transfer needs a human approver', async () => {
    const r = await cp.createIntent({ wallet: WALLET.evm, destination: evmDest, amount: '1000', asset_decimals: 18, initiator: 'agent:demo-bot' });
    show('decision', r.decision);
    expectThat(r.status === 'pending_approvals' && r.decision.reasons.some((x) => x.startsWith('require_human_approver_for_agent_initiated')), 'pending_approvals: require_human_approver_for_agent_initiated');
  });

  /**
   * Executes an intent whose earlier attempt stopped short of quorum. The control plane reuses that
   * attempt's payload while the ledger says it can still land (the signer that signed it refuses any
   * other); if it expires at the ledger just before submission (XRPL LastLedgerSequence), the intent
   * is `failed` and one more execute builds it afresh — said, not hidden.
   */
  const executeAgain = async (id) => {
    try {
      return await cp.execute(id);
    } catch (e) {
      if (e?.data?.stage !== 'submit') throw e;
      show('the reused payload expired at the ledger', e.message);
      return cp.execute(id);
    }
  };
  const killSigner = (s, signal) => stopSigner(s, signal);

  await step('A signer is stopped: two of three are down, the intent waits for signatures', async () => {
    const [, b, c] = v.signers;
    for (const s of [b, c]) await killSigner(s, 'SIGTERM');
    const created = await cp.createIntent({ wallet: WALLET.xrpl, destination: xrplDest, amount: '1000000', memo: 'while signers are down' });
    const out = await cp.execute(created.intentId);
    show('outcome', { status: out.status, weight: out.weight, quorum: out.quorum, signers: out.signers?.map((s) => `${s.signer}: ${s.ok ? 'signed' : s.detail}`) });
    expectThat(out.status === 'awaiting_signatures' && out.weight === 1 && out.quorum === 2, 'awaiting_signatures: weight 1 of quorum 2, each signer outcome recorded');
    for (const s of [b, c]) await startSigner(s);
    const again = await executeAgain(created.intentId);
    show('after restarting them', { status: again.status, txHash: again.txHash });
    expectThat(again.status === 'confirmed', 'the same intent confirms once the signers are back');
  });

  await step('A signer is killed mid-execute (SIGKILL), restarted, and the intent finishes with exactly one ledger transaction', async () => {
    const [, b, c] = v.signers;
    const wallet = v.addressOf[WALLET.xrpl];
    const sequenceBefore = v.xrpl.ledger.account(wallet).sequence;
    const txsBefore = v.xrpl.ledger.txsOf(wallet).length;
    const memo = `kill test ${Date.now()}`;
    const created = await cp.createIntent({ wallet: WALLET.xrpl, destination: xrplDest, amount: '3000000', memo });
    // C is down from the start, so the intent needs B; B is killed while the execute is in flight.
    await killSigner(c, 'SIGKILL');
    const inFlight = cp.execute(created.intentId);
    await new Promise((r) => setTimeout(r, 25));
    await killSigner(b, 'SIGKILL');
    const first = await inFlight;
    show('execute while B died', { status: first.status, weight: first.weight, signers: first.signers?.map((x) => `${x.signer}: ${x.ok ? 'signed' : x.detail}`) });
    expectThat(first.status === 'awaiting_signatures' || first.status === 'confirmed', `first execute ended ${first.status} (no 500, nothing half-done)`);
    await startSigner(b);
    await startSigner(c);
    const done = await executeAgain(created.intentId);
    show('after the restart', { status: done.status, txHash: done.txHash });
    expectThat(done.status === 'confirmed', 'the intent is confirmed after the restart');
    const sent = v.xrpl.ledger.txsOf(wallet).slice(txsBefore).filter((t) => t.tx.TransactionType === 'Payment' && t.tx.Destination === xrplDest && t.tx.Amount === '3000000');
    expectThat(sent.length === 1 && v.xrpl.ledger.account(wallet).sequence === sequenceBefore + 1, `exactly one ledger transaction for the intent (${sent[0]?.hash}), wallet sequence +1`);
  });

  await step('A tampered request sent straight to a signer is refused', async () => {
    const a = v.signers[0];
    const signer = createSignerClient({ baseUrl: a.url, token: a.env.VAULT_SIGNER_TOKEN });
    const created = await cp.createIntent({ wallet: WALLET.xrpl, destination: xrplDest, amount: '2000000', memo: 'tamper target' });
    const stored = await cp.intent(created.intentId);
    const policy = await cp.policy(WALLET.xrpl);
    const wallet = (await cp.wallets()).find((w) => w.wallet === WALLET.xrpl);
    const descriptor = readStateFile(join(v.cpDir, 'state.json')).wallets.find((w) => w.wallet === WALLET.xrpl);
    const request = {
      intent: { id: created.intentId, created_at: stored.created_at, request: { ...stored.intent, amount: '900000000' } },
      wallet: descriptor,
      policy,
      policy_digest: wallet.policy_digest,
      approvals: [],
      params: { kind: 'xrpl', sequence: 1, base_fee_drops: 12, last_ledger_sequence: 100, network_id: v.xrpl.networkId },
      protect: { known_destinations: [], burned: [], evm_code: [], token_owner_burned: false, onchain_symbol: null, compliance_cleared: false, attestation_valid: false },
      expected_payload_digest: '0'.repeat(64),
      signer_address: a.addresses[CHAIN.xrpl].address,
    };
    const out = await signer.sign(request);
    const reason = out.ok ? 'signed (it must not have)' : out.refusal.refused.reason;
    show('signer said', out.ok ? reason : `403 ${reason}: ${out.refusal.message}`);
    expectThat(reason === 'intent_tampered', 'refused with intent_tampered (the amount no longer matches the intent id)');
  });

  await step('Both receipt chains verify', async () => {
    const verified = await cp.ledgerVerify();
    show('control plane', verified);
    expectThat(verified.verified === true, `control plane chain verifies (${verified.receipts} receipts)`);
    for (const s of v.signers) {
      const client = createSignerClient({ baseUrl: s.url, token: s.env.VAULT_SIGNER_TOKEN });
      const { receipts } = await client.receipts(1000);
      const r = verifyReceiptChain([...receipts].reverse(), s.receiptPublicKey);
      expectThat(r.verified === true, `signer ${s.name} chain verifies (${r.receipts} receipts, head ${r.head.slice(0, 16)}…)`);
    }
  });

  const hsmSigner = v.signers.find((s) => s.backend === 'pkcs11');
  if (hsmSigner) {
    await step(`Signer ${hsmSigner.name} signs with keys in its SoftHSM2 token (PKCS#11) on every ledger`, async () => {
      const health = await (await fetch(`${hsmSigner.url}/health`)).json();
      expectThat(health.backend === 'pkcs11', `signer ${hsmSigner.name} reports backend pkcs11: its keys were generated in the token and never left it`);
      const client = createSignerClient({ baseUrl: hsmSigner.url, token: hsmSigner.env.VAULT_SIGNER_TOKEN });
      const { receipts } = await client.receipts(1000);
      const signed = new Set(receipts.filter((r) => r.kind === 'sign.signed').map((r) => r.intentId));
      for (const w of Object.values(WALLET)) {
        const ids = confirmedIntents.filter((e) => e.wallet === w).map((e) => e.id);
        expectThat(ids.some((id) => signed.has(id)), `${w}: signer ${hsmSigner.name} signed, in its token, intents the ledger confirmed (${ids.filter((id) => signed.has(id)).length} of ${ids.length})`);
      }
    });
  }

  await step('Every wallet reconciles with its ledger', async () => {
    for (const w of Object.values(WALLET)) {
      const r = await cp.reconcile(w);
      expectThat(r.clean === true, `${w}: clean (${r.checked.length} checks)`);
    }
  });
}

// ------------------------------------------------------------------ main

/**
 * A transfer per ledger to its funded example account, each under every approval threshold and
 * timelock of the demo policies: created, it is `allowed`, and its execute confirms.
 */
function exampleRequests(examples) {
  return [
    { ledger: 'XRPL', what: '10 XRP', body: { wallet: WALLET.xrpl, destination: examples.xrpl, amount: '10000000', memo: 'first try' } },
    { ledger: 'Stellar', what: '10 XLM', body: { wallet: WALLET.stellar, destination: examples.stellar, amount: '100000000', asset_decimals: 7 } },
    { ledger: 'EVM', what: '0.5 ETH', body: { wallet: WALLET.evm, destination: examples.evm, amount: '500000000000000000', asset_decimals: 18 } },
  ];
}

/** The banner's "Try" block: commands a user can paste as they are (POSIX shell, curl and node). */
function tryIt(v) {
  const auth = `-H "authorization: Bearer $TOKEN"`;
  const json = `-H 'content-type: application/json'`;
  return [
    'Try (each line runs as it is in a POSIX shell):',
    `  TOKEN=$(curl -s -X POST ${v.cpUrl}/session/unlock ${json} -d '{"passphrase":"${v.operatorPassphrase}"}' | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).token')`,
    ...exampleRequests(v.examples).flatMap(({ ledger, what, body }) => [
      `  # ${ledger}: ${what} to a funded account; the answer's intentId is what to execute`,
      `  curl -s -X POST ${v.cpUrl}/intent ${auth} ${json} -d '${JSON.stringify(body)}'`,
    ]),
    `  curl -s -X POST ${v.cpUrl}/intent/<intentId>/execute ${auth}`,
    `  more, with the same header: GET /wallets, GET /estate, GET /intents, GET /recovery/status, GET /ledger/verify`,
  ].join('\n');
}

/**
 * Prints the pairing code for the user's own approver (QR, link and code). A code lives 5 minutes
 * (single use); on a terminal, Enter prints a fresh one.
 */
async function offerPairing(v) {
  const show = async () => {
    const p = await yourApproverPairing(v);
    say(`
Your approver: open the app in a browser on this machine (the vault listens on 127.0.0.1 only),
  ${appUrlOf(v.cpUrl)}
and scan this code with its camera, or paste the code below (it expires ${new Date(p.expires_at * 1000).toLocaleTimeString()}, single use):
${p.qr}
  pairing code  ${p.code}
  or open       ${p.url}
Once paired, the demo policies count it: an XRPL transfer above 50 XRP, or an EVM one above 2 ETH
or by an agent, waits for your approval in the app.${process.stdin.isTTY ? '\nEnter prints a fresh code.' : ''}`);
  };
  await show();
  if (process.stdin.isTTY) {
    process.stdin.on('data', () => void show().catch((e) => process.stderr.write(`vault: a new pairing code: ${e?.message ?? e}\n`)));
    process.stdin.unref?.();
  }
}

async function main() {
  const { values: args } = parseArgs({
    options: {
      walkthrough: { type: 'boolean', default: false },
      hsm: { type: 'boolean', default: false },
      port: { type: 'string', default: '7331' },
      dir: { type: 'string' },
      'kdf-log2': { type: 'string', default: '15' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (args.help) {
    process.stdout.write('usage: node examples/local-vault/vault.mjs [--walkthrough] [--hsm] [--port 7331] [--dir DIR] [--kdf-log2 15]\n');
    process.exit(0);
  }

  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      say(`\n${sig}: stopping every process this vault started`);
      void stopAll().then(() => process.exit(130));
    });
  }

  let exitCode = 0;
  let workDir;
  try {
    const v = await setUp({ dir: args.dir, port: args.port, kdfLog2: args['kdf-log2'], hsm: args.hsm });
    workDir = v.dir;
    say(`
The local vault is up.
  control plane   ${v.cpUrl}   (operator passphrase: ${v.operatorPassphrase})
  console         ${v.cpUrl}/app/console/   (in a browser on this machine; unlock with the passphrase)
  signers         ${v.signers.map((s) => `${s.url}${s.backend === 'pkcs11' ? ' (keys in SoftHSM2)' : ''}`).join('  ')}
  wallets         ${Object.entries(v.addressOf).map(([w, a]) => `${w} ${a}`).join('\n                  ')}
  demo approver   ${v.deviceId} (key in memory of this process; the walkthrough's)
  files           ${v.dir}
  logs            ${children.filter((c) => c.vaultLog).map((c) => `${basename(c.vaultLog)} (pid ${c.pid})`).join('  ')}
                  in ${v.logDir}; a process that exits is reported here
  processes       ${JSON.stringify({ launcher: process.pid, anvil: v.evm.pid, children: children.map((c) => c.pid) })}
  destinations    funded accounts to send to: ${Object.entries(v.examples).map(([ledger, a]) => `${ledger} ${a}`).join('  ')}

${tryIt(v)}`);
    if (args.walkthrough) {
      await walkthrough(v);
      say(`\nwalkthrough: all ${stepNo} steps behaved as described`);
    } else {
      await offerPairing(v);
      watchYourApprovers(v);
      say('\nCtrl-C stops every process.');
      await new Promise(() => undefined);
    }
  } catch (e) {
    exitCode = 1;
    process.stderr.write(`\nvault: ${e instanceof StepFailed ? `step ${stepNo} did not behave as described: ${e.message}` : (e?.stack ?? e)}\n`);
  } finally {
    await stopAll();
    // A passing walkthrough in a directory of its own leaves nothing behind; a failed one keeps its
    // files (keystores, journals, state) for a look.
    if (!args.dir && exitCode === 0 && args.walkthrough && workDir) rmSync(workDir, { recursive: true, force: true });
    else if (workDir) say(`files kept in ${workDir}`);
  }
  process.exit(exitCode);
}

// Run as a program (node vault.mjs, npm start, the vault-local bin), not when a test imports it.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
