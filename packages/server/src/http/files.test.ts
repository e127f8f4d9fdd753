import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readOrCreateSecretFile, readSecretFile, writeFileAtomic } from './files.js';

let dir = '';
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('writeFileAtomic', () => {
  it('writes through a temp file and rename, 0600 by default, leaving no temp file behind', () => {
    dir = mkdtempSync(join(tmpdir(), 'files-'));
    const p = join(dir, 'sub', 'a.json');
    writeFileAtomic(p, 'one');
    writeFileAtomic(p, new TextEncoder().encode('two'));
    expect(readFileSync(p, 'utf8')).toBe('two');
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, 'sub'))).toEqual(['a.json']);
    writeFileAtomic(p, 'three', 0o644);
    expect(statSync(p).mode & 0o777).toBe(0o644);
  });
});

describe('secret files', () => {
  it('creates once, reads back trimmed, refuses group/other-readable files', () => {
    dir = mkdtempSync(join(tmpdir(), 'files-'));
    const p = join(dir, 'token');
    let calls = 0;
    const make = () => {
      calls++;
      return 'tok\n';
    };
    expect(readOrCreateSecretFile(p, make)).toBe('tok');
    expect(readOrCreateSecretFile(p, make)).toBe('tok');
    expect(calls).toBe(1);
    const loose = join(dir, 'loose');
    writeFileSync(loose, 'x');
    chmodSync(loose, 0o644);
    expect(() => readSecretFile(loose)).toThrow(/chmod 600/);
  });
});
