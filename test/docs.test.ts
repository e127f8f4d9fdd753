/**
 * The repository's documents stand on their own: the generated reference matches the code it is
 * generated from, and no markdown link leaves the repository for a file (the contract included).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/pack.mjs';
import { REGENERATE, staleFiles } from '../scripts/reference.mjs';

/** Markdown files of the repository: tracked, or new and not ignored. */
function markdownFiles(): string[] {
  const res = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*.md'], { cwd: ROOT, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`git ls-files failed: ${res.stderr}`);
  return [...new Set(res.stdout.split('\n').filter(Boolean))].filter((f) => existsSync(join(ROOT, f))).sort();
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Inline links `[text](target)`, images, and reference definitions `[id]: target`, outside code. */
export function linksIn(file: string, text: string): Link[] {
  const out: Link[] = [];
  let fenced = false;
  text.split('\n').forEach((raw, i) => {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const line = raw.replace(/`[^`]*`/g, '``'); // inline code is not a link
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ file, line: i + 1, target: m[1]! });
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (def) out.push({ file, line: i + 1, target: def[1]! });
  });
  return out;
}

const isExternal = (t: string) => /^[a-z][a-z0-9+.-]*:/i.test(t);

/** Whether a relative link names an existing file inside the repository. */
function insideRepo(file: string, target: string): boolean {
  const abs = resolve(ROOT, dirname(file), decodeURIComponent(target.split('#')[0]!));
  const rel = relative(ROOT, abs);
  return !rel.startsWith('..') && !isAbsolute(rel) && existsSync(abs);
}

/** Why a link is not acceptable, or null. */
export function linkProblem(link: Link): string | null {
  const { target } = link;
  if (/shared\/spec|(^|\/)(interface|DESIGN)\.md(#|$)/.test(target) && (isExternal(target) || !insideRepo(link.file, target))) {
    return 'points at the specification outside this repository: link docs/reference instead';
  }
  if (isExternal(target) || target.startsWith('#')) return null;
  const path = decodeURIComponent(target.split('#')[0]!.split('?')[0]!);
  if (isAbsolute(path)) return 'an absolute path: write it relative to the file';
  const abs = resolve(ROOT, dirname(link.file), path);
  const rel = relative(ROOT, abs);
  if (rel.startsWith('..') || isAbsolute(rel)) return 'leaves the repository';
  if (!existsSync(abs)) return `${rel} does not exist`;
  return null;
}

describe('documents', () => {
  it('docs/reference is what scripts/reference.mjs generates from the built packages', async () => {
    const stale = await staleFiles();
    expect(stale, `out of date: ${stale.join(', ')}. Run \`${REGENERATE}\` and commit the result.`).toEqual([]);
  });

  it('no markdown link leaves the repository or points at a missing file', () => {
    const files = markdownFiles();
    expect(files).toContain('README.md');
    const bad: string[] = [];
    let count = 0;
    for (const f of files) {
      for (const link of linksIn(f, readFileSync(join(ROOT, f), 'utf8'))) {
        count += 1;
        const problem = linkProblem(link);
        if (problem) bad.push(`${link.file}:${link.line}: (${link.target}) ${problem}`);
      }
    }
    expect(count).toBeGreaterThan(10);
    expect(bad).toEqual([]);
  });

  it('the link check refuses what it is meant to refuse', () => {
    const at = (target: string) => linkProblem({ file: 'README.md', line: 1, target });
    expect(at('../shared/spec/interface.md')).toMatch(/specification/);
    expect(at('https://github.com/example/vault/blob/main/shared/spec/DESIGN.md')).toMatch(/specification/);
    expect(at('../outside.md')).toMatch(/leaves the repository/);
    expect(at('docs/no-such-file.md')).toMatch(/does not exist/);
    expect(at('docs/reference/README.md')).toBeNull();
    expect(at('https://horizon-testnet.stellar.org')).toBeNull();
    expect(linksIn('x.md', 'see `[a](../x)` and\n```\n[b](../y)\n```\n[c](docs/z.md)').map((l) => l.target)).toEqual(['docs/z.md']);
  });
});
