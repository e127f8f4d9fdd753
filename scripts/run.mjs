#!/usr/bin/env node
/**
 * Workspace task runner behind the root npm scripts. Plain Node ESM, no dependencies, so it runs
 * on a fresh clone before anything is installed.
 *
 *   node scripts/run.mjs test            install? -> build -> typecheck -> tests -> package checks -> summary
 *   node scripts/run.mjs demo            install? -> build -> node examples/sdk-demo/demo.mjs
 *   node scripts/run.mjs vault [args]    install? -> build -> node examples/local-vault/vault.mjs [args]
 *   node scripts/run.mjs bench           install? -> build -> pnpm -r --if-present bench
 *   node scripts/run.mjs build           install? -> build
 *   node scripts/run.mjs check:packages  install? -> build -> publint + attw on each publishable package
 *   node scripts/run.mjs docs            install? -> build -> write docs/reference/{http-api,policy-rules}.md
 *   node scripts/run.mjs pack [DIR]      install? -> build -> pnpm pack of each publishable package into DIR
 *                                        (default dist-tarballs/): tarballs that install outside the workspace
 *
 * pnpm: the one on PATH if it is exactly PNPM_VERSION, else `npm exec --yes pnpm@PNPM_VERSION --`.
 * Install: `pnpm install --frozen-lockfile` when node_modules is missing or the lockfile (or a
 * workspace manifest) is newer than node_modules/.modules.yaml; always when CI=true.
 * Build: outside CI, only the packages whose inputs changed since their last successful build, and
 * the packages that depend on them (see `build` below); CI=true builds everything.
 * Test counts: every package whose `test` script passes `--outputFile[.json]=<file>` to vitest gets
 * that JSON report read and summed; the last line printed is `tests: N passed, M failed[, K skipped]`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_TARBALL_DIR, packTarballs } from './pack.mjs';

const PNPM_VERSION = '10.34.8';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEMO = join('examples', 'sdk-demo', 'demo.mjs');
const VAULT = join('examples', 'local-vault', 'vault.mjs');
const IS_WIN = process.platform === 'win32';
const IS_CI = /^(1|true)$/i.test(process.env.CI ?? '');

const log = (msg) => console.log(`\n[run] ${msg}`);

class StepError extends Error {
  constructor(step, detail) {
    super(`step "${step}" failed${detail ? `: ${detail}` : ''}`);
    this.name = 'StepError';
    this.step = step;
  }
}

/** Runs a command with inherited stdio; resolves to its exit code (1 if killed by a signal). */
function exec(cmd, args, opts = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: 'inherit', shell: IS_WIN, ...opts });
    child.on('error', (err) => {
      console.error(`[run] could not start ${cmd}: ${err.message}`);
      resolvePromise(127);
    });
    child.on('exit', (code, signal) => resolvePromise(signal ? 1 : (code ?? 1)));
  });
}

// ---------------------------------------------------------------------------------------------
// pnpm

let pnpmCmd;
function findPnpm() {
  if (pnpmCmd) return pnpmCmd;
  const probe = spawnSync('pnpm', ['--version'], { cwd: ROOT, encoding: 'utf8', shell: IS_WIN });
  const found = probe.status === 0 ? probe.stdout.trim() : null;
  if (found === PNPM_VERSION) {
    pnpmCmd = { cmd: 'pnpm', pre: [] };
  } else {
    console.log(
      `[run] pnpm ${found ? found : 'not found'} on PATH; using npm exec --yes pnpm@${PNPM_VERSION}`,
    );
    pnpmCmd = { cmd: IS_WIN ? 'npm.cmd' : 'npm', pre: ['exec', '--yes', `pnpm@${PNPM_VERSION}`, '--'] };
  }
  return pnpmCmd;
}

async function pnpm(step, args, opts) {
  const { cmd, pre } = findPnpm();
  log(`${step}: pnpm ${args.join(' ')}`);
  const code = await exec(cmd, [...pre, ...args], opts);
  if (code !== 0) throw new StepError(step, `pnpm ${args.join(' ')} exited with ${code}`);
}

function pnpmCapture(args) {
  const { cmd, pre } = findPnpm();
  const res = spawnSync(cmd, [...pre, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    shell: IS_WIN,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) {
    process.stderr.write(res.stderr ?? '');
    throw new StepError('workspace listing', `pnpm ${args.join(' ')} exited with ${res.status}`);
  }
  return res.stdout;
}

// ---------------------------------------------------------------------------------------------
// install

const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0);

/** Manifests whose change means node_modules may be stale: root, workspace file, each package. */
function manifests() {
  const files = [join(ROOT, 'package.json'), join(ROOT, 'pnpm-workspace.yaml')];
  const ws = join(ROOT, 'pnpm-workspace.yaml');
  if (!existsSync(ws)) return files;
  for (const line of readFileSync(ws, 'utf8').split('\n')) {
    const m = /^\s*-\s*['"]?([^'"#\s]+)['"]?\s*$/.exec(line);
    if (!m || m[1].startsWith('!')) continue;
    const pattern = m[1];
    if (pattern.endsWith('/*')) {
      const base = join(ROOT, pattern.slice(0, -2));
      if (!existsSync(base)) continue;
      for (const d of readdirSync(base, { withFileTypes: true })) {
        if (d.isDirectory()) files.push(join(base, d.name, 'package.json'));
      }
    } else if (!pattern.includes('*')) {
      files.push(join(ROOT, pattern, 'package.json'));
    }
  }
  return files.filter((f) => existsSync(f));
}

async function ensureInstall() {
  const lock = join(ROOT, 'pnpm-lock.yaml');
  const marker = join(ROOT, 'node_modules', '.modules.yaml');
  let reason = null;
  if (IS_CI) reason = 'CI=true';
  else if (!existsSync(join(ROOT, 'node_modules'))) reason = 'node_modules is missing';
  else if (!existsSync(marker)) reason = 'node_modules/.modules.yaml is missing';
  else {
    const installed = mtime(marker);
    const newer = [lock, ...manifests()].filter((f) => mtime(f) > installed);
    if (newer.length) reason = `${newer.map((f) => relative(ROOT, f)).join(', ')} newer than node_modules`;
  }
  if (!reason) {
    console.log('[run] install: node_modules is up to date');
    return;
  }
  if (!existsSync(lock)) {
    throw new StepError('install', 'pnpm-lock.yaml is missing; run `pnpm install` and commit the lockfile');
  }
  log(`install (${reason})`);
  try {
    await pnpm('install', ['install', '--frozen-lockfile']);
  } catch (err) {
    console.error(
      '[run] frozen install failed. If you changed a package.json, run `pnpm install` to update ' +
        'pnpm-lock.yaml and commit it.',
    );
    throw err;
  }
  // pnpm may leave .modules.yaml untouched when nothing changed; touch it so the check is stable.
  if (existsSync(marker)) {
    const now = new Date();
    utimesSync(marker, now, now);
  }
}

// ---------------------------------------------------------------------------------------------
// workspace packages

let packagesCache;
/** Workspace packages (root excluded): { name, dir, private, scripts }. */
function workspacePackages() {
  if (packagesCache) return packagesCache;
  const out = pnpmCapture(['ls', '-r', '--depth', '-1', '--json']);
  const list = JSON.parse(out.slice(out.indexOf('[')));
  packagesCache = list
    .filter((p) => resolve(p.path) !== ROOT)
    .map((p) => {
      const manifest = JSON.parse(readFileSync(join(p.path, 'package.json'), 'utf8'));
      return {
        name: manifest.name ?? p.name,
        dir: p.path,
        private: manifest.private === true,
        scripts: manifest.scripts ?? {},
      };
    });
  return packagesCache;
}

/** Where a package's vitest JSON report goes, read from its `test` script; null if none. */
function jsonReportOf(pkg) {
  const script = pkg.scripts.test;
  if (!script) return null;
  const m = /--outputFile(?:\.json)?[=\s]+("[^"]+"|'[^']+'|\S+)/.exec(script);
  return m ? join(pkg.dir, m[1].replace(/^["']|["']$/g, '')) : null;
}

// ---------------------------------------------------------------------------------------------
// steps

/** Workspace packages with a build script, read from their manifests (no pnpm start-up cost), dependencies first. */
function buildablePackages() {
  const all = manifests()
    .filter((f) => resolve(dirname(f)) !== ROOT)
    .map((file) => {
      const m = JSON.parse(readFileSync(file, 'utf8'));
      const deps = Object.keys({ ...m.dependencies, ...m.devDependencies, ...m.peerDependencies, ...m.optionalDependencies });
      return { name: m.name, dir: dirname(file), manifest: m, deps };
    });
  const byName = new Map(all.map((p) => [p.name, p]));
  const sorted = [];
  const seen = new Set();
  const visit = (p) => {
    if (seen.has(p.name)) return;
    seen.add(p.name);
    for (const d of p.deps) if (byName.has(d)) visit(byName.get(d));
    sorted.push(p);
  };
  for (const p of all) visit(p);
  return sorted
    .filter((p) => typeof p.manifest.scripts?.build === 'string')
    .map((p) => ({ ...p, deps: p.deps.filter((d) => byName.has(d)) }));
}

/** Newest mtime under `path` (a file or a directory, recursively); 0 if absent. */
function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs; // a deleted file shows only as its directory's mtime
  for (const d of readdirSync(path, { withFileTypes: true })) {
    if (d.name === 'node_modules') continue;
    newest = Math.max(newest, newestMtime(join(path, d.name)));
  }
  return newest;
}

/** Every file a package's exports map and bin point at (what a dependant loads). */
function builtFiles(p) {
  const out = [];
  const walk = (v) => {
    if (typeof v === 'string') out.push(v);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(p.manifest.exports);
  walk(p.manifest.bin);
  if (typeof p.manifest.main === 'string') out.push(p.manifest.main);
  return out.filter((f) => !f.includes('*')).map((f) => join(p.dir, f));
}

// Written after a package builds successfully, holding when that build started: a build that fails
// half-way (tsup writes JS before the declarations) leaves no stamp, so the next run builds again.
const stampOf = (p) => join(p.dir, 'node_modules', '.cache', 'vault-build-stamp.json');
const SHARED_BUILD_INPUTS = [join(ROOT, 'tsconfig.base.json'), join(ROOT, 'config'), join(ROOT, 'pnpm-lock.yaml')];

/** Why `p` must be built (a sentence), or null when its last successful build is newer than every input. */
function staleReason(p, rebuilt) {
  const dep = p.deps.find((d) => rebuilt.has(d));
  if (dep) return `${dep} is rebuilt`;
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampOf(p), 'utf8')).started_ms;
  } catch {
    return 'no record of a successful build';
  }
  if (typeof stamp !== 'number') return 'no record of a successful build';
  const missing = builtFiles(p).find((f) => !existsSync(f));
  if (missing) return `${relative(p.dir, missing)} is missing`;
  const inputs = [
    join(p.dir, 'src'),
    // Browser front ends and the scripts that build them (the server's web/, scripts/build-web.mjs).
    join(p.dir, 'web'),
    join(p.dir, 'scripts'),
    join(p.dir, 'package.json'),
    join(p.dir, 'tsconfig.json'),
    ...readdirSync(p.dir).filter((f) => /^tsup\.config\.[cm]?[jt]s$/.test(f)).map((f) => join(p.dir, f)),
    ...SHARED_BUILD_INPUTS,
  ];
  const changed = inputs.find((f) => newestMtime(f) > stamp);
  return changed ? `${relative(ROOT, changed)} changed since the last build` : null;
}

/**
 * Builds the workspace. Outside CI only what changed since the last successful build: a package
 * whose inputs (src/, web/, scripts/, package.json, tsconfig, tsup config, the shared build config, the lockfile)
 * are all older than its last build, and none of whose workspace dependencies is rebuilt, is
 * skipped. CI=true builds everything fresh.
 */
async function build() {
  if (IS_CI) {
    await pnpm('build', ['-r', 'run', 'build']);
    return;
  }
  const packages = buildablePackages();
  const rebuilt = new Set();
  const stale = [];
  for (const p of packages) {
    const reason = staleReason(p, rebuilt);
    if (reason === null) continue;
    rebuilt.add(p.name);
    stale.push(p);
    console.log(`[run] build ${p.name}: ${reason}`);
  }
  if (stale.length === 0) {
    console.log(`[run] build: all ${packages.length} packages are up to date (delete a package's dist/ to force a build)`);
    return;
  }
  // Taken before the build starts: a file saved during the build makes the next run build again.
  const started = Date.now();
  await pnpm('build', ['-r', ...stale.flatMap((p) => ['--filter', p.name]), 'run', 'build']);
  for (const p of stale) {
    mkdirSync(dirname(stampOf(p)), { recursive: true });
    writeFileSync(stampOf(p), `${JSON.stringify({ started_ms: started })}\n`);
  }
}

async function checkPackages() {
  const targets = workspacePackages().filter((p) => !p.private && p.scripts.build);
  if (targets.length === 0) {
    console.log('[run] check:packages: no publishable package with a build script');
    return;
  }
  const failed = [];
  for (const p of targets) {
    const dir = relative(ROOT, p.dir);
    for (const [tool, args] of [
      ['publint', ['exec', 'publint', '--strict', dir]],
      ['attw', ['exec', 'attw', '--pack', dir, '--profile', 'esm-only']],
    ]) {
      try {
        await pnpm(`check:packages ${tool} ${p.name}`, args);
      } catch {
        failed.push(`${tool} ${p.name}`);
      }
    }
  }
  if (failed.length) throw new StepError('check:packages', failed.join(', '));
}

async function runTests() {
  const reports = workspacePackages()
    .map((p) => ({ pkg: p, file: jsonReportOf(p) }))
    .filter((r) => r.file);
  for (const r of reports) rmSync(r.file, { force: true });

  let error = null;
  try {
    await pnpm('test', ['-r', '--workspace-concurrency=1', '--no-bail', 'run', 'test']);
  } catch (err) {
    error = err;
  }

  const totals = { passed: 0, failed: 0, skipped: 0 };
  const missing = [];
  for (const { pkg, file } of reports) {
    if (!existsSync(file)) {
      missing.push(pkg.name);
      continue;
    }
    const json = JSON.parse(readFileSync(file, 'utf8'));
    totals.passed += json.numPassedTests ?? 0;
    totals.failed += json.numFailedTests ?? 0;
    totals.skipped += (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
    // A test file that fails to load has no failed assertions; count it as one failure.
    for (const file of json.testResults ?? []) {
      const failedAssertions = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
      if (file.status === 'failed' && failedAssertions.length === 0) totals.failed += 1;
    }
  }
  if (missing.length) {
    console.error(`[run] no vitest JSON report from: ${missing.join(', ')} (vitest did not finish)`);
    error ??= new StepError('test', `no JSON report from ${missing.join(', ')}`);
  }
  if (reports.length === 0) console.error('[run] no package test script writes a vitest JSON report');
  if (totals.passed + totals.failed === 0) {
    console.error('[run] zero tests ran');
    error ??= new StepError('test', 'zero tests ran');
  }
  return { totals, error };
}

// ---------------------------------------------------------------------------------------------
// tasks

const TASKS = {
  async build() {
    await ensureInstall();
    await build();
  },

  async 'check:packages'() {
    await ensureInstall();
    await build();
    await checkPackages();
  },

  async docs() {
    await ensureInstall();
    await build();
    log('docs: node scripts/reference.mjs');
    const code = await exec(process.execPath, [join('scripts', 'reference.mjs')], { shell: false });
    if (code !== 0) throw new StepError('docs', `node scripts/reference.mjs exited with ${code}`);
  },

  async pack() {
    await ensureInstall();
    await build();
    const dest = process.argv[3] ? resolve(process.argv[3]) : DEFAULT_TARBALL_DIR;
    log(`pack: pnpm pack of each publishable package into ${relative(ROOT, dest) || dest}`);
    try {
      packTarballs(dest);
    } catch (err) {
      throw new StepError('pack', err.message);
    }
  },

  async bench() {
    await ensureInstall();
    await build();
    await pnpm('bench', ['-r', '--workspace-concurrency=1', '--if-present', 'run', 'bench']);
  },

  async demo() {
    if (!existsSync(join(ROOT, DEMO))) {
      throw new StepError('demo', `${DEMO} does not exist yet`);
    }
    await ensureInstall();
    await build();
    log(`demo: node ${DEMO}`);
    const code = await exec(process.execPath, [DEMO], { shell: false });
    if (code !== 0) throw new StepError('demo', `node ${DEMO} exited with ${code}`);
  },

  async vault() {
    await ensureInstall();
    await build();
    const extra = process.argv.slice(3);
    log(`vault: node ${VAULT} ${extra.join(' ')}`);
    // Ctrl-C reaches the launcher too (same process group); it stops what it started.
    process.on('SIGINT', () => undefined);
    const code = await exec(process.execPath, [VAULT, ...extra], { shell: false });
    // 130: stopped with Ctrl-C, which is how the running vault is meant to end.
    if (code !== 0 && code !== 130) throw new StepError('vault', `node ${VAULT} exited with ${code}`);
  },

  async test() {
    const failures = [];
    let totals = { passed: 0, failed: 0, skipped: 0 };
    try {
      // Without an install and a build nothing below is meaningful: stop here.
      await ensureInstall();
      await build();

      // Typecheck failures do not hide test results: record and carry on.
      try {
        await pnpm('typecheck', ['-r', '--no-bail', 'run', 'typecheck']);
      } catch (err) {
        failures.push(err);
      }

      const result = await runTests();
      totals = result.totals;
      if (result.error) failures.push(result.error);

      try {
        await checkPackages();
      } catch (err) {
        failures.push(err);
      }
    } catch (err) {
      failures.push(err);
    }

    console.log('');
    for (const err of failures) console.log(`[run] FAILED: ${err.message}`);
    if (failures.length === 0) console.log('[run] all steps passed');
    const skipped = totals.skipped ? `, ${totals.skipped} skipped` : '';
    console.log(`tests: ${totals.passed} passed, ${totals.failed} failed${skipped}`);
    if (failures.length) process.exitCode = 1;
  },
};

const task = process.argv[2];
if (!task || !Object.hasOwn(TASKS, task)) {
  console.error(`usage: node scripts/run.mjs <${Object.keys(TASKS).join('|')}>`);
  process.exit(2);
}

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`[run] Node ${process.versions.node} is too old: this workspace needs Node >= 20.19`);
  process.exit(1);
}

try {
  await TASKS[task]();
} catch (err) {
  if (!(err instanceof StepError)) throw err;
  console.error(`\n[run] FAILED: ${err.message}`);
  process.exitCode = 1;
}
