/**
 * @module state-lock
 * One process per state directory, for both services: two control planes on one directory would
 * fork its receipt chain and could both submit; two signers would fork theirs and could each sign
 * a different payload for one intent. The lock file holds the owner's pid; a lock whose owner is
 * gone (kill -9) is taken over.
 */
import { InternalError } from '@vault/sdk';
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

/** Each service's own refusal: its error kind and its words. */
export interface StateLockRefusal {
  /**
   * The lock is held by the live process `owner`; `self` when that is this very process (the
   * directory is already open here).
   */
  (owner: number, self: boolean): Error;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock file at `path` (created 0600 holding this pid), or throws `refuse(owner, self)`
 * while a live process holds it. Returns the release, which removes the file only while it still
 * names this process.
 *
 * @example
 * const release = acquireStateLock(join(dir, 'serve.lock'), (pid) => new InternalError(`in use by ${pid}`))
 * try { serve() } finally { release() }
 */
export function acquireStateLock(path: string, refuse: StateLockRefusal): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      return () => releaseStateLock(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      if (owner === process.pid) throw refuse(owner, true);
      if (Number.isInteger(owner) && owner > 0 && pidAlive(owner)) throw refuse(owner, false);
      unlinkSync(path); // stale: its owner is gone
    }
  }
  throw new InternalError(`cannot lock ${path}: another process keeps taking it`);
}

function releaseStateLock(path: string): void {
  try {
    if (Number.parseInt(readFileSync(path, 'utf8').trim(), 10) === process.pid) unlinkSync(path);
  } catch {
    // already gone
  }
}
