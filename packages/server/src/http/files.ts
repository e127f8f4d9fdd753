/**
 * @module http/files
 * Durable file writes: nothing half-written after a crash, secrets created 0600.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync, chmodSync, statSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';
import { randomBytes } from 'node:crypto';

function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  }
}

/**
 * Writes a file atomically and durably: a temp file in the same directory is written, fsynced,
 * renamed over the target, and the directory fsynced. A crash leaves the old or the new file.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, mode);
  renameSync(tmp, path);
  fsyncDir(dir);
}

/** Reads a secret file, refusing one that others can read (mode must be 0600 or stricter). */
export function readSecretFile(path: string): string {
  const st = statSync(path);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    throw new Error(`${path} is readable by group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`);
  }
  return readFileSync(path, 'utf8');
}

/** Reads a 0600 secret file, creating it with `create()` first if it does not exist. */
export function readOrCreateSecretFile(path: string, create: () => string): string {
  if (!existsSync(path)) writeFileAtomic(path, create(), 0o600);
  return readSecretFile(path).trim();
}
