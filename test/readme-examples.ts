/**
 * The TypeScript and JavaScript examples of the published packages' READMEs (and of docs/reference),
 * extracted so the tests type-check and run exactly what a reader copies.
 *
 * Every ```ts and ```js block is an example. A marker comment on the line just before the fence
 * says more about it:
 *   <!-- example: run -->       the package's minimal example: run from the installed tarballs
 *   <!-- example: fragment -->  a shape, not code: not compiled (use sparingly)
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { publishablePackages, ROOT } from '../scripts/pack.mjs';

export interface ReadmeExample {
  /** Repository-relative path of the markdown file. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: 'ts' | 'js';
  marker: 'run' | 'fragment' | null;
  code: string;
  /** The package whose README holds it, or null (docs/reference). */
  pkg: string | null;
}

const FENCE_OPEN = /^```(ts|typescript|js|javascript|mjs)\s*$/;
const MARKER = /^<!--\s*example:\s*(run|fragment)\s*-->\s*$/;

export function examplesIn(file: string, pkg: string | null): ReadmeExample[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: ReadmeExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i] ?? '');
    if (!open) {
      // Skip other fenced blocks whole, so a ```ts line inside one is not taken for a fence.
      if (/^```/.test(lines[i] ?? '')) {
        const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
        if (end === -1) throw new Error(`${relative(ROOT, file)}:${i + 1}: unclosed code fence`);
        i = end;
      }
      continue;
    }
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end === -1) throw new Error(`${relative(ROOT, file)}:${i + 1}: unclosed code fence`);
    const marker = MARKER.exec(lines[i - 1] ?? '')?.[1] as ReadmeExample['marker'] | undefined;
    out.push({
      file: relative(ROOT, file),
      line: i + 1,
      lang: open[1]!.startsWith('t') ? 'ts' : 'js',
      marker: marker ?? null,
      code: lines.slice(i + 1, end).join('\n'),
      pkg,
    });
    i = end;
  }
  return out;
}

/** Every example of every publishable package's README*.md and of docs/reference/*.md. */
export function readmeExamples(): ReadmeExample[] {
  const out: ReadmeExample[] = [];
  for (const p of publishablePackages()) {
    for (const f of readdirSync(p.dir).filter((n) => /^README.*\.md$/.test(n)).sort()) {
      out.push(...examplesIn(join(p.dir, f), p.name));
    }
  }
  const ref = join(ROOT, 'docs', 'reference');
  if (existsSync(ref)) {
    for (const f of readdirSync(ref).filter((n) => n.endsWith('.md')).sort()) out.push(...examplesIn(join(ref, f), null));
  }
  return out;
}

/** A file name for an example: `sdk-README-23.ts`. */
export function exampleFileName(e: ReadmeExample): string {
  return `${e.file.replace(/^packages\//, '').replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '-')}-${e.line}.ts`;
}
