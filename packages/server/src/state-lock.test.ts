import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireStateLock } from './state-lock.js';

let dir: string;
let path: string;
const refusals: [number, boolean][] = [];
const refuse = (pid: number, self: boolean) => {
  refusals.push([pid, self]);
  return new Error(`held by ${pid}${self ? ' (this process)' : ''}`);
};
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vault-lock-'));
  path = join(dir, 'x.lock');
  refusals.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('acquireStateLock (both services)', () => {
  it('writes this pid to a 0600 file and removes it on release', () => {
    const release = acquireStateLock(path, refuse);
    expect(readFileSync(path, 'utf8')).toBe(`${process.pid}\n`);
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    release();
    expect(existsSync(path)).toBe(false);
    release(); // twice is harmless
  });

  it('a second take in this process is refused as such', () => {
    const release = acquireStateLock(path, refuse);
    expect(() => acquireStateLock(path, refuse)).toThrow('(this process)');
    expect(refusals).toEqual([[process.pid, true]]);
    release();
  });

  it('a live other process holding it is refused; the file is left to it', () => {
    writeFileSync(path, `${process.ppid}\n`); // alive, not us
    expect(() => acquireStateLock(path, refuse)).toThrow(`held by ${process.ppid}`);
    expect(refusals).toEqual([[process.ppid, false]]);
    expect(readFileSync(path, 'utf8')).toBe(`${process.ppid}\n`);
  });

  it('a lock left by a dead process, or unreadable, is taken over', () => {
    for (const left of ['999999999\n', 'not a pid\n', '']) {
      writeFileSync(path, left);
      const release = acquireStateLock(path, refuse);
      expect(readFileSync(path, 'utf8')).toBe(`${process.pid}\n`);
      release();
    }
    expect(refusals).toEqual([]);
  });

  it('release leaves a lock another process has taken since', () => {
    const release = acquireStateLock(path, refuse);
    writeFileSync(path, '12345\n');
    release();
    expect(readFileSync(path, 'utf8')).toBe('12345\n');
  });
});
