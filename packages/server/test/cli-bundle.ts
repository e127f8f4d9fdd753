/**
 * The server's CLIs bundled from source for the tests that run them as processes (so a test runs
 * the code it is next to, not a stale dist/). One tsup configuration for every such test.
 */
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** packages/server */
export const SERVER_PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles each `src/<entry>.ts` (e.g. `signer/cli`) to `<outDir>/<entry>.js`; dependencies stay external. */
export async function bundleClis(entries: readonly string[], outDir: string): Promise<void> {
  const { build } = await import('tsup');
  await build({
    config: false,
    entry: Object.fromEntries(entries.map((e) => [e, join(SERVER_PKG, `src/${e}.ts`)])),
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    clean: false,
    dts: false,
    splitting: false,
    sourcemap: false,
    silent: true,
    external: ['@vault/sdk', 'hono', '@hono/node-server', 'qrcode', 'lmdb', 'zod', '@noble/curves', '@noble/hashes', '@noble/ciphers', 'pkcs11js'],
  });
}
