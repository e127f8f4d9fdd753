/**
 * Builds the browser apps the control plane serves: each `web/<name>/main.ts` is bundled by
 * esbuild (every import, jsQR included, inlined: no CDN, no request leaves the origin) into
 * `dist/web/<name>/main.js`, and the folder's other files (index.html, style.css, icons) are
 * copied beside it. Runs after tsup (whose clean empties dist/). `web/shared/` holds code the apps
 * import; it has no main.ts, so it is no app of its own.
 *
 *   node scripts/build-web.mjs [OUT]    OUT defaults to dist/web (the package build runs this after tsup)
 */
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const WEB = join(ROOT, 'web');

/**
 * `node:crypto` resolves to web/shared/node-crypto.ts in a page: the SDK's pure functions come in,
 * its Node-only paths throw if ever called (they are not). `@vault/sdk` is bundled from its
 * source modules (the same workspace version), so esbuild keeps only what the page imports
 * (190 KB instead of 670 KB from the bundled dist chunks).
 */
const nodeCryptoShim = {
  name: 'node-crypto-shim',
  setup(b) {
    b.onResolve({ filter: /^(node:)?crypto$/ }, () => ({ path: join(WEB, 'shared', 'node-crypto.ts') }));
    b.onResolve({ filter: /^@vault\/sdk$/ }, () => ({ path: join(ROOT, '..', 'sdk', 'src', 'index.ts') }));
  },
};

/** Builds every app under web/ into `outDir` (default dist/web); resolves to the names built. */
export async function buildWeb(outDir = join(ROOT, 'dist', 'web')) {
  const apps = existsSync(WEB) ? readdirSync(WEB).filter((name) => existsSync(join(WEB, name, 'main.ts'))) : [];
  for (const name of apps) {
    const src = join(WEB, name);
    const out = join(outDir, name);
    mkdirSync(out, { recursive: true });
    await build({
      entryPoints: [join(src, 'main.ts')],
      outfile: join(out, 'main.js'),
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: ['es2022'],
      minify: true,
      sourcemap: true,
      legalComments: 'linked',
      logLevel: 'warning',
      plugins: [nodeCryptoShim],
    });
    for (const file of readdirSync(src)) {
      const path = join(src, file);
      if (statSync(path).isFile() && !file.endsWith('.ts') && file !== 'tsconfig.json') copyFileSync(path, join(out, file));
    }
}
  return apps;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ? resolve(process.argv[2]) : undefined;
  const names = await buildWeb(out);
  process.stdout.write(`web: built ${names.join(', ') || 'nothing'} -> ${out ?? 'dist/web'}\n`);
}
