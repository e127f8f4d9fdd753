import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { entryGraph, expectLoadedLazily } from '../../src/testing/index.js';

// A bundler's output in miniature: an entry, shared chunks, a lazily loaded signer.
const dir = mkdtempSync(join(tmpdir(), 'entry-graph-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
file('chunk-a.js', 'import { x } from "./chunk-b.js";\nexport * from "./chunk-c.js";\nexport const a = x;\n');
file('chunk-b.js', 'import "./chunk-d.js";\nimport { sdk } from "@vault/sdk";\nexport const x = sdk;\n');
file('chunk-c.js', 'export {\n  y\n} from "./chunk-d.js";\n');
file('chunk-d.js', 'export const y = 1;\n');
file('signer.js', 'import { a } from "./chunk-a.js";\nexport function create() { return { async signPayload(built, key) { return key.sign(built) } } }\n');
const entry = file('index.js', 'import { a } from "./chunk-a.js";\nexport async function createSigner() { const { create } = await import("./signer.js"); return create(); }\n');
const eager = file('eager.js', 'import { create } from "./signer.js";\nexport { create };\n');

describe('entryGraph', () => {
  it('follows import, bare import and export-from (multi-line) statically; import() only lazily; never bare specifiers', () => {
    const g = entryGraph(entry);
    expect(g.static.map((f) => f.slice(dir.length + 1)).sort()).toEqual(['chunk-a.js', 'chunk-b.js', 'chunk-c.js', 'chunk-d.js', 'index.js']);
    expect(g.lazy.map((f) => f.slice(dir.length + 1))).toEqual(['signer.js']);
  });

  it('a missing relative import is an error naming the file, not an empty graph', () => {
    const broken = file('broken.js', 'import "./not-built.js";\n');
    expect(() => entryGraph(broken)).toThrow(/not-built\.js is imported but missing/);
  });
});

describe('expectLoadedLazily', () => {
  it('passes when the marker is reached only through import()', () => {
    expectLoadedLazily(entry, { signer: /\bsignPayload\s*\(/ });
  });

  it('fails an entry that imports the signer statically', () => {
    expect(() => expectLoadedLazily(eager, { signer: /\bsignPayload\s*\(/ })).toThrow(/must not be reached statically/);
  });

  it('fails a marker that matches nothing, so a test cannot pass by looking for the wrong thing', () => {
    expect(() => expectLoadedLazily(entry, { signer: /\bnoSuchFunction\(/ })).toThrow(/must be reachable through a dynamic import/);
  });
});
