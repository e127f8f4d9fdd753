/**
 * @module control-plane/web
 * The browser apps the control plane serves (`/app/`: the approver app; `/app/console/`: the
 * operator console), from the files the
 * package build put in `dist/web/<name>/`. Read once at start into memory: a request can only ever
 * name one of those files (no path is joined from the URL), and each answer carries a strict CSP
 * (`default-src 'self'`, no inline script) so the page loads nothing from anywhere else.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  json: 'application/json',
  map: 'application/json',
  txt: 'text/plain; charset=utf-8',
  webmanifest: 'application/manifest+json',
};

/** What every web answer carries: the page may load and connect to its own origin only. */
export const WEB_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'permissions-policy': 'camera=(self), publickey-credentials-get=(self), publickey-credentials-create=(self)',
  'cross-origin-opener-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

/** File names a web folder may hold: flat, no dot-files, nothing that could climb out. */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** `dist/web/`, wherever this module was bundled to (dist/, dist/control-plane/) or run from (src/). */
export function defaultWebRoot(): string | null {
  for (const rel of ['./web/', '../web/', '../../dist/web/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(dir) && statSync(dir).isDirectory()) return dir;
  }
  return null;
}

/** The files of one built app, by name; empty when it was not built. */
export function loadWebApp(root: string | null, name: string): Map<string, { body: Uint8Array; type: string }> {
  const files = new Map<string, { body: Uint8Array; type: string }>();
  const dir = root === null ? null : join(root, name);
  if (dir === null || !existsSync(dir)) return files;
  for (const file of readdirSync(dir)) {
    const type = TYPES[file.slice(file.lastIndexOf('.') + 1)];
    // lstat: a symlink is no file of the build (it could point anywhere on the host).
    if (!FILE_NAME.test(file) || type === undefined || !lstatSync(join(dir, file)).isFile()) continue;
    files.set(file, { body: readFileSync(join(dir, file)), type });
  }
  return files;
}

/** Serves a built app at `<mount>/` (default `/<name>/`; index.html for the folder itself). */
export function serveWebApp(app: Hono, name: string, root: string | null, mount = `/${name}`): void {
  const files = loadWebApp(root, name);
  app.get(mount, (c) => c.redirect(`${mount}/`, 308));
  app.get(`${mount}/:file{.*}`, (c) => {
    const file = c.req.param('file') || 'index.html';
    const hit = files.get(file);
    if (hit === undefined) {
      const why = files.size === 0 ? `the ${name} app is not built (pnpm --filter @vault/server build)` : 'not found';
      return c.text(why, 404, { ...WEB_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
    }
    return c.body(hit.body as Uint8Array<ArrayBuffer>, 200, { ...WEB_HEADERS, 'content-type': hit.type });
  });
}
