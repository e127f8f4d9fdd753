/**
 * @module http/web
 * The browser front ends (built by scripts/build-web.mjs into `dist/web/<name>/`) served under
 * /app/: `/app/<name>/…` from `<root>/<name>/`, anything else under /app/ from `<root>/app/`. Files
 * only, never a listing; every answer carries a CSP of `default-src 'self'` (the pages run no inline
 * script and load nothing from elsewhere) and may not be framed. A path that could leave its folder
 * (`..`, an encoded slash or backslash, a NUL, a symlink out) is a 404, like a missing file.
 */
import type { Context, Hono } from 'hono';
import { realpathSync, statSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEB_CSP = "default-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'; form-action 'self'";

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  json: 'application/json',
  webmanifest: 'application/manifest+json',
};
/** Longest request path this handler looks at; the built files are a handful of short names. */
const MAX_PATH = 512;

/**
 * Where the built front ends are: `web/` beside this module once bundled (dist/web, whether this
 * code sits in dist/ or in dist/control-plane/), or null when there are none (a build without them).
 */
export function defaultWebRoot(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, 'web'), join(here, '..', 'web')]) {
    try {
      if (statSync(dir).isDirectory()) return dir;
    } catch {
      // not here
    }
  }
  return null;
}

/** Path segments of `raw` (a URL path below the mount, still percent-encoded), or null if any could step out. */
function safeSegments(raw: string): string[] | null {
  if (raw.length > MAX_PATH) return null;
  const out: string[] = [];
  for (const part of raw.split('/')) {
    if (part === '') continue;
    let s: string;
    try {
      s = decodeURIComponent(part);
    } catch {
      return null;
    }
    if (s === '.' || s === '..' || /[/\\\0]/.test(s) || s.startsWith('.')) return null;
    out.push(s);
  }
  return out;
}

function notFound(c: Context): Response {
  return c.json({ error: { code: 4040, message: 'not found', data: { reason: 'not_found' } } }, 404);
}

/** Serves the files under `root` on GET /app/* (see the module note). */
export function mountWeb(app: Hono, root: string | null): void {
  const base = root === null ? null : realpathSync(resolve(root));
  app.get('/app', (c) => c.redirect('/app/', 301));
  app.get('/app/*', (c) => {
    if (base === null) return notFound(c);
    const pathname = new URL(c.req.url).pathname;
    const segments = safeSegments(pathname.slice('/app/'.length));
    if (segments === null) return notFound(c);
    // `/app/<name>` without its slash: the page's relative URLs need the slash.
    const first = segments[0];
    const isBundle = first !== undefined && first !== 'app' && isDir(join(base, first));
    if (isBundle && segments.length === 1 && !pathname.endsWith('/')) return c.redirect(`/app/${first}/`, 301);
    const folder = isBundle ? join(base, first) : join(base, 'app');
    const rest = isBundle ? segments.slice(1) : segments;
    let file = join(folder, ...rest);
    if (rest.length === 0 || isDir(file)) file = join(file, 'index.html');
    let real: string;
    try {
      real = realpathSync(file);
    } catch {
      return notFound(c);
    }
    // Symlinks resolved: the file must still be inside the root.
    if (!real.startsWith(base + sep) || !statSync(real).isFile()) return notFound(c);
    const type = TYPES[real.slice(real.lastIndexOf('.') + 1)];
    if (type === undefined) return notFound(c);
    return c.body(readFileSync(real), 200, {
      'content-type': type,
      'content-security-policy': WEB_CSP,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    });
  });
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
