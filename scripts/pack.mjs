/**
 * Writes an installable tarball of every publishable workspace package into one directory.
 *
 * pnpm's pack, not npm's: only pnpm replaces `workspace:^` ranges with the version they point at,
 * so only its tarballs install outside the workspace. Plain Node ESM, no dependencies; used by
 * `npm run pack` (scripts/run.mjs, after the build) and by the tarball test (test/packed.test.ts),
 * which packs what is already built.
 *
 *   node scripts/pack.mjs [DIR]     DIR defaults to dist-tarballs/ at the repository root
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PNPM_VERSION = '10.34.8';
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_TARBALL_DIR = join(ROOT, 'dist-tarballs');
const IS_WIN = process.platform === 'win32';

/** pnpm to run: the one on PATH if it is exactly PNPM_VERSION, else through `npm exec`. */
export function pnpmCommand() {
  const probe = spawnSync('pnpm', ['--version'], { cwd: ROOT, encoding: 'utf8', shell: IS_WIN });
  if (probe.status === 0 && probe.stdout.trim() === PNPM_VERSION) return { cmd: 'pnpm', pre: [] };
  return { cmd: IS_WIN ? 'npm.cmd' : 'npm', pre: ['exec', '--yes', `pnpm@${PNPM_VERSION}`, '--'] };
}

/** Publishable workspace packages (not `private`): { name, version, dir, manifest }, by directory. */
export function publishablePackages() {
  const dirs = [];
  for (const line of readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8').split('\n')) {
    const m = /^\s*-\s*['"]?([^'"#\s]+)['"]?\s*$/.exec(line);
    if (!m || m[1].startsWith('!')) continue;
    if (m[1].endsWith('/*')) {
      const base = join(ROOT, m[1].slice(0, -2));
      if (!existsSync(base)) continue;
      for (const d of readdirSync(base, { withFileTypes: true })) if (d.isDirectory()) dirs.push(join(base, d.name));
    } else if (!m[1].includes('*')) dirs.push(join(ROOT, m[1]));
  }
  return dirs
    .filter((d) => existsSync(join(d, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter((p) => p.manifest.private !== true)
    .map((p) => ({ name: p.manifest.name, version: p.manifest.version, dir: p.dir, manifest: p.manifest }))
    .sort((a, b) => a.dir.localeCompare(b.dir));
}

/** The tarball file name pnpm gives a package: `@scope/name@1.2.3` -> `scope-name-1.2.3.tgz`. */
export const tarballName = (p) => `${p.name.replace(/^@/, '').replace('/', '-')}-${p.version}.tgz`;

/**
 * Packs every publishable package (as built: it does not build) into `dest`, emptied first, and
 * returns the tarballs' absolute paths. Throws when pnpm fails or a tarball is missing, or when a
 * packed manifest still holds a `workspace:` range (it would not install anywhere else).
 */
export function packTarballs(dest = DEFAULT_TARBALL_DIR, { quiet = false } = {}) {
  const packages = publishablePackages();
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const { cmd, pre } = pnpmCommand();
  // One recursive pnpm run: each pnpm start-up through npm exec costs seconds.
  const args = [...pre, '-r', ...packages.flatMap((p) => ['--filter', p.name]), 'pack', '--pack-destination', dest];
  const res = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', shell: IS_WIN, maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) {
    throw new Error(`pnpm pack exited with ${res.status}:\n${res.stderr}${res.stdout.slice(-4000)}`);
  }
  const tarballs = packages.map((p) => join(dest, tarballName(p)));
  const missing = tarballs.filter((t) => !existsSync(t));
  if (missing.length) throw new Error(`pnpm pack wrote no ${missing.join(', ')}`);
  for (const t of tarballs) {
    const manifest = spawnSync('tar', ['-xzOf', t, 'package/package.json'], { encoding: 'utf8' });
    if (manifest.status !== 0) throw new Error(`cannot read package/package.json in ${t}: ${manifest.stderr}`);
    if (manifest.stdout.includes('"workspace:')) throw new Error(`${t}: its package.json still holds a workspace: range`);
  }
  if (!quiet) for (const t of tarballs) console.log(t);
  return tarballs;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    packTarballs(process.argv[2] ? resolve(process.argv[2]) : DEFAULT_TARBALL_DIR);
  } catch (err) {
    console.error(`[pack] ${err.message}`);
    process.exitCode = 1;
  }
}
