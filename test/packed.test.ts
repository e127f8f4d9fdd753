/**
 * The published packages as a user gets them: every publishable package packed with pnpm (the
 * tarballs `npm run pack` writes), installed with npm into a fresh project outside the workspace,
 * then every README example type-checked there with `tsc --strict` (skipLibCheck false, so the
 * packages' declarations are checked too) and each package's minimal example run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packTarballs, publishablePackages, ROOT } from '../scripts/pack.mjs';
import { exampleFileName, readmeExamples, type ReadmeExample } from './readme-examples.js';

// The workspace's own pins, so the install is served from the npm cache after the first run.
const TYPESCRIPT = '5.9.3';
const TYPES_NODE = '20.19.43';
const IS_WIN = process.platform === 'win32';

const examples = readmeExamples();
const checked = examples.filter((e) => e.marker !== 'fragment');
const runnable = examples.filter((e) => e.marker === 'run');
const packages = publishablePackages();

let project = '';
const timings: Record<string, number> = {};
let diagnostics = new Map<string, string[]>();

function run(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, shell: IS_WIN, env: { ...process.env, NODE_OPTIONS: '' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'vault-packed-'));
  let t = Date.now();
  const tarballs = packTarballs(join(project, 'tarballs'), { quiet: true });
  timings['pnpm pack'] = Date.now() - t;

  const app = join(project, 'app');
  mkdirSync(join(app, 'examples'), { recursive: true });
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'packed-check', private: true, type: 'module' }, null, 2)}\n`);
  t = Date.now();
  // --prefer-offline: the npm cache answers what it holds; only what it lacks is fetched.
  const install = await run(
    IS_WIN ? 'npm.cmd' : 'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs, `typescript@${TYPESCRIPT}`, `@types/node@${TYPES_NODE}`],
    app,
    540_000,
  );
  timings['npm install'] = Date.now() - t;
  if (install.code !== 0) throw new Error(`npm install of the tarballs failed (${install.code}):\n${install.out.slice(-4000)}`);

  for (const e of checked) {
    // `export {}` keeps a block without imports a module (top-level await, no global clashes).
    writeFileSync(join(app, 'examples', exampleFileName(e)), `${e.code}\nexport {};\n`);
  }
  writeFileSync(
    join(app, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
          skipLibCheck: false,
          rootDir: 'examples',
          outDir: 'out',
        },
        include: ['examples'],
      },
      null,
      2,
    )}\n`,
  );
  t = Date.now();
  // One tsc run for all examples: it type-checks them and emits the JavaScript the run tests start.
  const tsc = spawnSync(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.', '--pretty', 'false'], {
    cwd: app,
    encoding: 'utf8',
  });
  timings['tsc --strict'] = Date.now() - t;
  diagnostics = new Map();
  let last = '(project)';
  for (const line of `${tsc.stdout}${tsc.stderr}`.split('\n')) {
    if (!line.trim()) continue;
    const m = /^(?:examples[\\/])?([^(\s]+\.ts)\(\d+,\d+\): error/.exec(line);
    // An indented line elaborates the diagnostic above it.
    if (m) last = m[1]!;
    else if (!/^\s/.test(line)) last = '(project)';
    diagnostics.set(last, [...(diagnostics.get(last) ?? []), line]);
  }
}, 600_000);

afterAll(() => {
  console.log(`[packed] ${Object.entries(timings).map(([k, v]) => `${k} ${v} ms`).join(', ')}`);
  // Deleting the installed project (~300 MB) took 90 s on a busy disk here: a detached process
  // removes it after the test has ended.
  if (project) {
    spawn(process.execPath, ['-e', `require('node:fs').rmSync(${JSON.stringify(project)}, { recursive: true, force: true })`], {
      detached: true,
      stdio: 'ignore',
    }).unref();
  }
});

describe('README examples', () => {
  it('every publishable package README marks exactly one minimal example to run', () => {
    for (const p of packages) {
      const marked = runnable.filter((e) => e.pkg === p.name);
      expect(marked.map((e) => `${e.file}:${e.line}`), `${p.name}: one <!-- example: run --> block in its README`).toHaveLength(1);
    }
  });

  it('tsc found no problem outside the examples (the packages\' own declarations included)', () => {
    const outside = [...diagnostics].filter(([file]) => !checked.some((e) => exampleFileName(e) === file));
    expect(outside).toEqual([]);
  });

  it.each(checked.map((e) => [`${e.file}:${e.line}`, e] as const))('%s type-checks with tsc --strict against the installed tarballs', (_name, e: ReadmeExample) => {
    expect(diagnostics.get(exampleFileName(e)) ?? []).toEqual([]);
  });

  it.each(runnable.map((e) => [e.pkg ?? `${e.file}:${e.line}`, e] as const))('%s: the marked example runs from the installed tarballs', async (_pkg, e: ReadmeExample) => {
    const t = Date.now();
    const js = join(project, 'app', 'out', exampleFileName(e).replace(/\.ts$/, '.js'));
    const res = await run(process.execPath, [js], join(project, 'app'), 150_000);
    timings[`run ${e.pkg ?? e.file}`] = Date.now() - t;
    expect(res.code, res.out).toBe(0);
    expect(res.out.trim(), 'the example prints what it shows').not.toBe('');
  });
});
