#!/usr/bin/env node
/**
 * Bundles the browser front ends: every `web/<name>/main.ts` with esbuild into
 * `<out>/<name>/main.js`, beside copies of that folder's other files (index.html, style.css, icons;
 * not its TypeScript). The control
 * plane serves `<out>` under /app/ (src/http/web.ts) with a CSP of `default-src 'self'`, so a page
 * loads only these files: no inline script, nothing from another origin.
 *
 *   node scripts/build-web.mjs [OUT]    OUT defaults to dist/web (the server's build runs this after tsup)
 */
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WEB = join(PKG, 'web');
/** Copied as they are: what a page loads besides its script. */
const STATIC = /\.(html|css|svg|png|webmanifest)$/;

/** Builds every front end under web/ into `out`; resolves to the names built. */
export async function buildWeb(out = join(PKG, 'dist/web')) {
  const names = readdirSync(WEB, { withFileTypes: true }).filter((d) => d.isDirectory() && existsSync(join(WEB, d.name, 'main.ts'))).map((d) => d.name);
  for (const name of names) {
    const dest = join(out, name);
    rmSync(dest, { recursive: true, force: true });
    mkdirSync(dest, { recursive: true });
    await build({
      entryPoints: [join(WEB, name, 'main.ts')],
      outfile: join(dest, 'main.js'),
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      // One file, no eval, no inline source map: the CSP allows nothing else.
      sourcemap: false,
      legalComments: 'none',
      logLevel: 'warning',
    });
    for (const file of readdirSync(join(WEB, name))) if (STATIC.test(file)) copyFileSync(join(WEB, name, file), join(dest, file));
  }
  return names;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ? resolve(process.argv[2]) : undefined;
  const names = await buildWeb(out);
  console.log(`build-web: ${names.join(', ') || 'nothing'} -> ${out ?? 'dist/web'}`);
}
