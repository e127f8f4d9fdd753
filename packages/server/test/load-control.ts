/**
 * Drives the benches' load generator (control-plane/fixtures/load.mjs) in its control mode: one
 * process, started once, its sockets kept open between runs. The sign bench uses it, and
 * control-plane/load-generator.test.ts tests it against a real loopback server.
 */
import type { PolicySet } from '@vault/sdk';
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LOAD_GENERATOR = resolve(dirname(fileURLToPath(import.meta.url)), 'control-plane/fixtures/load.mjs');

/** One run's result line, as the generator prints it. */
export interface LoadRun {
  /** Responses received (each request is counted once it has one). */
  requests: number;
  ok: number;
  errors: number;
  statuses: Record<string, number>;
  /** ok / seconds */
  rps: number;
  p50: number;
  p99: number;
  /** From the run's start to its last response. */
  seconds: number;
  clientCpuUsPerRequest: number;
}

export interface LoadControlConfig {
  url: string;
  path: string;
  method: string;
  token: string;
  tokenHeader?: string;
  concurrency: number;
  /** A JSON array of request bodies, each sent at most once while offsets only move forward. */
  bodyFile: string;
}

export interface LoadControl {
  /** One run of `durationMs`, sending bodies from index `offset` on. */
  run(durationMs: number, offset: number): Promise<LoadRun>;
  /** Closes the sockets; resolves with the process's exit code. */
  exit(): Promise<number | null>;
  /** Kills the process (a test's cleanup). */
  kill(): void;
}

/** Starts the generator and resolves once it has built every request and is ready to run. */
export async function startLoadControl(cfg: LoadControlConfig): Promise<LoadControl> {
  const p = spawn(process.execPath, [LOAD_GENERATOR, JSON.stringify({ ...cfg, bodyKind: 'file', control: true })], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((res) => p.once('exit', res));
  let out = '';
  const waiting: { res: (line: string) => void; rej: (e: Error) => void }[] = [];
  p.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      waiting.shift()?.res(line);
    }
  });
  p.once('exit', (code) => {
    for (const w of waiting.splice(0)) w.rej(new Error(`load generator exited ${code}`));
  });
  const nextLine = () => new Promise<string>((res, rej) => waiting.push({ res, rej }));
  const ready = JSON.parse(await nextLine()) as { ready?: boolean };
  if (ready.ready !== true) {
    p.kill();
    throw new Error('load generator did not start');
  }
  return {
    async run(durationMs, offset) {
      const line = nextLine();
      p.stdin.write(`${JSON.stringify({ run: durationMs, offset })}\n`);
      return JSON.parse(await line) as LoadRun;
    },
    exit() {
      p.stdin.end(`${JSON.stringify({ exit: true })}\n`);
      return exited;
    },
    kill() {
      p.kill('SIGKILL');
    },
  };
}

/** One run of the generator in a process of its own (the benches that measure POST /intent). */
export interface LoadOnceConfig {
  url: string;
  path: string;
  method: string;
  token: string;
  concurrency: number;
  durationMs: number;
  bodyKind: 'intent' | 'none';
  client?: 'net' | 'http';
}

/** Runs the load generator once, in its own process (the servers keep the caller's event loop). */
export function loadOnce(cfg: LoadOnceConfig): Promise<LoadRun> {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, [LOAD_GENERATOR, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('exit', (code) => (code === 0 ? res(JSON.parse(out) as LoadRun) : rej(new Error(`load generator failed: ${err}`))));
  });
}

/** The five-rule policy the POST /intent benches evaluate (every rule kind an intent meets on the way). */
export const BENCH_INTENT_RULES: PolicySet['rules'] = [
  { rule: 'hard_ceiling', max: '1000000000000' },
  { rule: 'destination_blocklist', addresses: ['mem1' + 'ee'.repeat(20), 'mem1' + 'ef'.repeat(20)] },
  { rule: 'daily_velocity_cap', limit: '100000000000000' },
  { rule: 'approval_threshold', above: '1000000000', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] },
  { rule: 'require_tag', key: 'desk' },
];
