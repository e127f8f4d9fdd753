/**
 * Chromium for the approver app's browser tests: finds it, installs it when it is missing and this
 * machine can (root with apt-get: Debian's `chromium` package), and otherwise fails saying exactly
 * what to run. Never skips: a test that needs a browser gets one or fails. Plain Node ESM, no
 * dependencies (like softhsm.mjs).
 *
 *   const executablePath = ensureChromium()           // installs if needed
 *   const browser = await chromium.launch({ executablePath })
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Executable names distributions use (Debian `chromium`, Ubuntu's snap shim, Google Chrome). */
const NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];
const MAC_PATHS = ['/Applications/Chromium.app/Contents/MacOS/Chromium', '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'];

/** The command that installs Chromium on this platform, for the failure message. */
export const INSTALL_HINT =
  process.platform === 'darwin'
    ? 'brew install --cask chromium   (or set CHROMIUM_PATH to a Chrome/Chromium executable)'
    : 'sudo apt-get update && sudo apt-get install -y chromium   (Debian; Ubuntu: chromium-browser; Fedora: sudo dnf install -y chromium; or set CHROMIUM_PATH)';

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** The Chromium executable (CHROMIUM_PATH overrides), or null when there is none. */
export function findChromium() {
  if (process.env.CHROMIUM_PATH) return existsSync(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : null;
  for (const n of NAMES) {
    const p = onPath(n);
    if (p) return p;
  }
  return MAC_PATHS.find((p) => existsSync(p)) ?? null;
}

const canApt = () => process.platform === 'linux' && typeof process.getuid === 'function' && process.getuid() === 0 && onPath('apt-get') !== null;

/**
 * Chromium's executable, installing Debian's package first when it is missing and the machine can
 * (root + apt-get). Throws with the exact command to run otherwise, or when the install failed.
 *
 * @param {{ install?: boolean, log?: (line: string) => void }} [options]
 * @returns {string}
 */
export function ensureChromium(options = {}) {
  const found = findChromium();
  if (found) return found;
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  if (options.install !== false && canApt()) {
    log('[chromium] Chromium is missing: apt-get install -y chromium');
    // Another apt-get may hold the lock (a parallel test set-up): wait for it rather than fail.
    const apt = (args) =>
      spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    let res = apt(['install', '-y', '--no-install-recommends', 'chromium']);
    // A fresh image may have no package lists yet.
    if (res.status !== 0) {
      apt(['update']);
      res = apt(['install', '-y', '--no-install-recommends', 'chromium']);
    }
    const after = findChromium();
    if (after) return after;
    throw new Error(`Chromium is needed for the approver app's browser tests and apt-get install chromium did not provide it (exit ${res.status}); install it: ${INSTALL_HINT}`);
  }
  throw new Error(`Chromium is needed for the approver app's browser tests and is not installed; run: ${INSTALL_HINT}`);
}
