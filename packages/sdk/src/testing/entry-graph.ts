/**
 * @module testing/entry-graph
 * What a built ES module loads: its static import graph (what `import '@vault/driver-x'` loads
 * at once) and the modules only a dynamic `import()` reaches. A driver package's tests use it to
 * prove its root entry, which the keyless control plane loads, reaches no signing or provisioning
 * code until a signer or `vault provision` asks for it (DESIGN.md §2: split at the trust boundary).
 *
 * It reads the bundler's output as text: `import … from "x"`, `import "x"`, `export … from "x"`,
 * and `import("x")`. Only relative specifiers are followed (the package's own files and chunks);
 * bare ones (dependencies, `@vault/sdk`) are not.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { expect } from 'vitest';

const STATIC_RE = /\b(?:import|export)\s*(?:[^'"();]*?\bfrom\s*)?(["'])([^"'\n]+)\1/g;
const DYNAMIC_RE = /\bimport\s*\(\s*(["'])([^"'\n]+)\1\s*\)/g;

export interface EntryGraph {
  /** Absolute paths of every file the entry loads statically (the entry first). */
  static: string[];
  /** Files reached only through at least one dynamic `import()` (loaded on demand). */
  lazy: string[];
}

/**
 * Walks a built module's relative imports.
 *
 * @example
 * const { static: eager, lazy } = entryGraph(fileURLToPath(new URL('../dist/index.js', import.meta.url)))
 */
export function entryGraph(entry: string): EntryGraph {
  const specifiers = (file: string, re: RegExp) =>
    [...readFileSync(file, 'utf8').matchAll(re)].map((m) => m[2] as string).filter((s) => s.startsWith('./') || s.startsWith('../')).map((s) => resolve(dirname(file), s));
  const walk = (roots: readonly string[], withDynamic: boolean): Set<string> => {
    const seen = new Set<string>();
    const queue = [...roots];
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      if (seen.has(file)) continue;
      if (!existsSync(file)) throw new Error(`${file} is imported but missing: build the package first`);
      seen.add(file);
      queue.push(...specifiers(file, STATIC_RE));
      if (withDynamic) queue.push(...specifiers(file, DYNAMIC_RE));
    }
    return seen;
  };
  const eager = walk([resolve(entry)], false);
  const all = walk([resolve(entry)], true);
  return { static: [...eager], lazy: [...all].filter((f) => !eager.has(f)) };
}

/**
 * Asserts that a built entry reaches code matching each marker only lazily: no file in its static
 * graph matches, and some file behind a dynamic `import()` does (so the marker is known to find
 * the code it names, and the code is still reachable on demand).
 *
 * @example
 * expectLoadedLazily(fileURLToPath(new URL('../dist/index.js', import.meta.url)), {
 *   'the ChainSigner': /\bsignPayload\s*\(/,
 *   'the provisioner': /\bgenerateSeed\s*\(/,
 * })
 */
export function expectLoadedLazily(entry: string, markers: Readonly<Record<string, RegExp>>): void {
  const graph = entryGraph(entry);
  const matching = (files: readonly string[], marker: RegExp) => files.filter((f) => marker.test(readFileSync(f, 'utf8')));
  for (const [what, marker] of Object.entries(markers)) {
    expect(matching(graph.static, marker), `${what} (${marker}) must not be reached statically from ${entry}`).toEqual([]);
    expect(matching(graph.lazy, marker).length, `${what} (${marker}) must be reachable through a dynamic import from ${entry}`).toBeGreaterThan(0);
  }
}
