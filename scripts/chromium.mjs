#!/usr/bin/env node
/**
 * Makes Debian's `chromium` present for the browser tests (Playwright drives it through
 * playwright-core, which downloads no browser of its own).
 *
 *   node scripts/chromium.mjs         prints the path of the Chromium binary; installs it first when
 *                                     missing and this process is root with apt-get; else prints the
 *                                     command to run and exits 1
 *
 * Imported: `chromiumPath()` does the same and returns the path (or throws with the command).
 * CHROMIUM_PATH overrides where the binary is looked for.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
export const INSTALL_COMMAND = 'apt-get update && apt-get install -y chromium';

function found() {
  const own = process.env.CHROMIUM_PATH;
  if (own) return existsSync(own) ? own : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;
const hasAptGet = () => spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;

/** The Chromium binary's path, installing Debian's package first when missing and possible. */
export function chromiumPath() {
  const have = found();
  if (have) return have;
  if (!isRoot() || !hasAptGet()) {
    throw new Error(`Chromium is not installed (looked at ${process.env.CHROMIUM_PATH ?? CANDIDATES.join(', ')}); run as root: ${INSTALL_COMMAND}`);
  }
  // Another apt-get may hold the dpkg lock (a parallel install): apt waits for it rather than fail.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lockWait = ['-o', 'DPkg::Lock::Timeout=600'];
  for (const args of [['update', ...lockWait], ['install', '-y', '--no-install-recommends', ...lockWait, 'chromium']]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
    if (r.status !== 0) throw new Error(`apt-get ${args[0]} failed (exit ${r.status}); run as root: ${INSTALL_COMMAND}`);
  }
  const now = found();
  if (!now) throw new Error(`apt-get installed chromium but no binary is at ${CANDIDATES.join(' or ')}`);
  return now;
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(chromiumPath());
  } catch (err) {
    console.error(`chromium: ${err.message}`);
    process.exit(1);
  }
}
