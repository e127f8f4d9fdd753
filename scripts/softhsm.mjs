/**
 * SoftHSM2 for the PKCS#11 tests and `npm start -- --hsm`: finds it, installs it when it is missing
 * and this machine can (root with apt-get: the Debian/Ubuntu package `softhsm2`), and otherwise
 * fails saying exactly what to run. Never skips: a test that needs a token gets one or fails.
 * Plain Node ESM, no dependencies (like run.mjs): the server's test set-up, the signer tests and
 * examples/local-vault import it.
 *
 *   const { module, util } = ensureSoftHsm()                  // installs if needed
 *   const token = initSoftToken({ label: 'vault-a', pin })    // a fresh token in a temp dir
 *   process.env.SOFTHSM2_CONF = token.conf                    // before the module is initialised
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** Where distributions put libsofthsm2.so (Debian/Ubuntu both paths, Fedora, Alpine, Homebrew, FreeBSD). */
const MODULE_PATHS = [
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/lib64/pkcs11/libsofthsm2.so',
  '/usr/lib64/softhsm/libsofthsm.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
  '/opt/homebrew/lib/softhsm/libsofthsm2.so',
];

/** The command that installs SoftHSM2 on this platform, for the failure message. */
export const INSTALL_HINT =
  process.platform === 'darwin'
    ? 'brew install softhsm'
    : 'sudo apt-get install -y softhsm2   (Debian/Ubuntu; Fedora: sudo dnf install -y softhsm; Alpine: apk add softhsm)';

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** `{ module, util }` when SoftHSM2 is installed (SOFTHSM2_MODULE overrides the library path), else null. */
export function findSoftHsm() {
  const util = onPath('softhsm2-util');
  const module = process.env.SOFTHSM2_MODULE || MODULE_PATHS.find((p) => existsSync(p));
  return util && module && existsSync(module) ? { module, util } : null;
}

const canApt = () => process.platform === 'linux' && typeof process.getuid === 'function' && process.getuid() === 0 && onPath('apt-get') !== null;

/**
 * SoftHSM2's library and util, installing the package first when it is missing and the machine can
 * (root + apt-get). Throws with the exact command to run otherwise, or when the install failed.
 *
 * @param {{ install?: boolean, log?: (line: string) => void }} [options]
 * @returns {{ module: string, util: string }}
 */
export function ensureSoftHsm(options = {}) {
  const found = findSoftHsm();
  if (found) return found;
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  if (options.install !== false && canApt()) {
    log('[softhsm] SoftHSM2 is missing: apt-get install -y softhsm2');
    const apt = (args) =>
      spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    let res = apt(['install', '-y', '--no-install-recommends', 'softhsm2']);
    // A fresh image may have no package lists yet.
    if (res.status !== 0) {
      apt(['update']);
      res = apt(['install', '-y', '--no-install-recommends', 'softhsm2']);
    }
    const after = findSoftHsm();
    if (after) return after;
    throw new Error(`SoftHSM2 is needed for the PKCS#11 signer tests and apt-get install softhsm2 did not provide it (exit ${res.status}); install it: ${INSTALL_HINT}`);
  }
  throw new Error(`SoftHSM2 is needed for the PKCS#11 signer tests and is not installed; run: ${INSTALL_HINT}  (or set SOFTHSM2_MODULE to libsofthsm2.so)`);
}

/**
 * A SoftHSM2 configuration in a fresh directory and one initialised token in it. Point
 * SOFTHSM2_CONF at `conf` before the process initialises the module (SoftHSM reads it then).
 * More tokens can be added to the same directory with `addToken`.
 *
 * @param {{ label: string, pin: string, soPin?: string, dir?: string }} options
 * @returns {{ dir: string, conf: string, tokens: string, module: string, util: string, addToken: (label: string, pin: string) => void }}
 */
export function initSoftToken(options) {
  const { module, util } = ensureSoftHsm();
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'vault-softhsm-'));
  const tokens = join(dir, 'tokens');
  mkdirSync(tokens, { recursive: true, mode: 0o700 });
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`, { mode: 0o600 });
  const addToken = (label, pin) => {
    const res = spawnSync(util, ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', options.soPin ?? `so-${pin}`], {
      env: { ...process.env, SOFTHSM2_CONF: conf },
      encoding: 'utf8',
    });
    // The PIN is on this command line only because softhsm2-util takes it so; its output never has it.
    if (res.status !== 0) throw new Error(`softhsm2-util --init-token --label ${label} failed: ${(res.stderr || res.stdout).trim()}`);
  };
  addToken(options.label, options.pin);
  return { dir, conf, tokens, module, util, addToken };
}
