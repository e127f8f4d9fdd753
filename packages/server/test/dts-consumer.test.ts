/**
 * A consumer type-checks against the published declarations with `skipLibCheck: false` and
 * `strict`: every .d.ts the package's types pull in is compiled, so a third-party type that leaks
 * into them (lmdb's, whose `export =` does not compile under ESM module settings) fails the
 * consumer's build. The declarations are built from the current sources with the package's own
 * tsup configuration into a private, ignored directory.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import config from '../tsup.config.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const work = join(pkg, '.cache/dts-consumer-test');
const outDir = join(work, 'dist');
const ENTRIES = ['index', 'control-plane/index', 'signer/index', 'provision/index'] as const;

beforeAll(async () => {
  const { build } = await import('tsup');
  const base = config as unknown as { dts: { entry: Record<string, string>; compilerOptions?: Record<string, unknown> } };
  await build({ ...(config as object), config: false, outDir, clean: true, silent: true, sourcemap: false, entry: base.dts.entry, dts: { ...base.dts, only: true } });
  mkdirSync(work, { recursive: true });
});

function dtsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.d.ts')).map((f) => join(dir, f));
}

function typeCheck(source: string): { status: number | null; out: string } {
  writeFileSync(join(work, 'consumer.ts'), source);
  const paths = Object.fromEntries(ENTRIES.map((e) => [e === 'index' ? '@vault/server' : `@vault/server/${e.replace(/\/index$/, '')}`, [`./dist/${e}.d.ts`]]));
  writeFileSync(
    join(work, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], typeRoots: [join(pkg, 'node_modules/@types')], paths },
      files: ['consumer.ts'],
    }),
  );
  const tsc = createRequire(join(pkg, 'package.json')).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(work, 'tsconfig.json')], { encoding: 'utf8', cwd: pkg, timeout: 100_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('published declarations, skipLibCheck false', () => {
  it('no declaration file imports lmdb', () => {
    const files = dtsFiles(outDir);
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toMatch(/from ['"]lmdb['"]/);
  });

  it('a strict consumer of every entry compiles', () => {
    const r = typeCheck(`import { createServiceApp } from '@vault/server';
import { IntentStore, startControlPlane, type ControlPlane } from '@vault/server/control-plane';
import { createKey, startSigner } from '@vault/server/signer';
import { provision } from '@vault/server/provision';

export async function openStore(path: string): Promise<number> {
  const store = new IntentStore(path);
  const n = store.size;
  await store.close();
  return n;
}
export const uses: unknown[] = [createServiceApp, startControlPlane, createKey, startSigner, provision];
export type CP = ControlPlane;
`);
    expect(r.out).toBe('');
    expect(r.status).toBe(0);
  });

  it("the store's LMDB handles are not part of the public type", () => {
    const r = typeCheck(`import { IntentStore } from '@vault/server/control-plane';
export const handle = (s: IntentStore) => s.receipts;
`);
    expect(r.status).not.toBe(0);
    expect(r.out).toContain("Property 'receipts' does not exist on type 'IntentStore'");
  });
});
