/**
 * Failover with real processes: two `vault-control-plane serve` processes (instances `a` and `b`,
 * 2 s leases) on copies of one state directory and one PostgreSQL, the ledger and the signers in a
 * third process (fixtures/devnet.mjs) that outlives them. The writer is killed with SIGKILL during
 * a burst of creations and during executes, and paused with SIGSTOP; the other instance takes over
 * with a higher fence. Every check of "submitted once" reads the ledger itself through the devnet's
 * RPC, and every check of the fence reads cp_receipts in the database.
 */
import { signApproval, TransportError, verifyReceiptChain } from '@vault/sdk';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPostgres } from '../../../../scripts/postgres.mjs';
import { until } from './helpers.js';
import { buildControlPlaneCli, devnetRpc, initDevnetStateDir, kill9, serveControlPlane, startDevnet, type Devnet, type ServedControlPlane } from './processes.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const LEASE_SECONDS = 2;
// Slow enough that a kill lands while the signers are still answering (test 3).
const SIGNER_DELAY_MS = 300;

let dir = '';
let cli = '';
let db: Awaited<ReturnType<typeof startPostgres>> | undefined;
let sql: pg.Client | undefined;
let devnet: Devnet | undefined;
const procs: ChildProcess[] = [];
let amounts = 0;
let receiptKey = '';

const stateOf = (name: 'a' | 'b') => join(dir, `state-${name}`);

async function serve(name: 'a' | 'b'): Promise<ServedControlPlane> {
  const s = await serveControlPlane(cli, stateOf(name), { args: ['--instance-id', name, '--lease-seconds', String(LEASE_SECONDS)], env: { VAULT_DATABASE_URL: db!.url } });
  procs.push(s.proc);
  return s;
}

/** The process logged that it holds the lease (GET /ready does not say the role yet). */
const isWriter = (s: ServedControlPlane) => s.lines.some((l) => l.includes('"event":"lease_acquired"'));

/** Above this amount an intent needs the devnet approver's approval. */
const APPROVAL_ABOVE = 1_000_000;

/** A destination unique to each new intent, so ledger transactions map back to intents; `needsApproval` puts the amount above APPROVAL_ABOVE. */
function newIntent(needsApproval = false): { wallet: string; destination: string; amount: string } {
  const n = ++amounts;
  return { wallet: 'crash', destination: 'mem1' + String(n).padStart(40, 'e'), amount: String(needsApproval ? APPROVAL_ABOVE + n : n) };
}

/** The devnet approver's signed approval of `intentId`, now. */
const approval = (intentId: string) =>
  signApproval({ approver_id: devnet!.approver.id, intent: intentId, verdict: 'approve', at: Math.floor(Date.now() / 1000), strong_auth: false }, devnet!.approver.secret_key);

async function post(s: ServedControlPlane, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.client.getToken()}` }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

/** cp_receipts in seq order (the chain every instance replicates), with each receipt's fence. */
async function chainInDatabase(): Promise<{ seq: number; fence: number; record: unknown }[]> {
  const { rows } = await sql!.query('SELECT seq::int AS seq, fence::int AS fence, record FROM cp_receipts ORDER BY seq');
  return rows as { seq: number; fence: number; record: unknown }[];
}

/** The chain in the database has no gap, verifies under the receipt key, and its fence never goes down. */
async function expectChainInDatabase(): Promise<number[]> {
  const rows = await chainInDatabase();
  rows.forEach((r, i) => expect(r.seq, 'cp_receipts has no gap').toBe(i));
  for (let i = 1; i < rows.length; i++) {
    if (rows[i]!.fence < rows[i - 1]!.fence) throw new Error(`receipt ${rows[i]!.seq} has fence ${rows[i]!.fence} after one of fence ${rows[i - 1]!.fence}`);
  }
  const check = verifyReceiptChain(rows.map((r) => r.record), receiptKey);
  expect(check.verified, JSON.stringify(check)).toBe(true);
  return [...new Set(rows.map((r) => r.fence))];
}

/** What the ledger holds since `mark`: each transaction's destination, and the hashes of the submissions it accepted. */
async function ledgerSince(mark: { txs: number; subs: number }): Promise<{ dests: string[]; accepted: string[] }> {
  const txs = (await devnetRpc(devnet!, 'txs')) as { payload: { destination: string } }[];
  const subs = (await devnetRpc(devnet!, 'submissions')) as { hash: string; accepted: boolean }[];
  return { dests: txs.slice(mark.txs).map((t) => t.payload.destination), accepted: subs.slice(mark.subs).filter((x) => x.accepted).map((x) => x.hash) };
}

async function ledgerMark(): Promise<{ txs: number; subs: number }> {
  return { txs: ((await devnetRpc(devnet!, 'txs')) as unknown[]).length, subs: ((await devnetRpc(devnet!, 'submissions')) as unknown[]).length };
}

/** Retries a write until it is accepted (the instance may still be promoting); a timeout names the last refusal. */
async function writeWhenWriter<T>(what: string, fn: () => Promise<T>, ms = 20_000): Promise<T> {
  let last: unknown;
  try {
    return await until(what, async () => {
      try {
        return await fn();
      } catch (e) {
        last = e;
        return undefined;
      }
    }, ms);
  } catch (e) {
    throw new Error(`${(e as Error).message}; last refusal: ${last instanceof Error ? last.message : String(last)}`);
  }
}

let a: ServedControlPlane;
let b: ServedControlPlane;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vault-failover-'));
  [cli, db, devnet] = await Promise.all([buildControlPlaneCli('cli-failover'), startPostgres(), startDevnet(mkdtempSync(join(dir, 'devnet-')), SIGNER_DELAY_MS)]);
  const migrate = spawnSync(process.execPath, [cli, 'migrate'], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', VAULT_DATABASE_URL: db.url } });
  expect(migrate.stderr).toBe('');
  expect(migrate.stdout).toBe('applied migrations 1, 2, 3\n');
  expect(migrate.status).toBe(0);
  expect(spawnSync(process.execPath, [cli, 'migrate'], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', VAULT_DATABASE_URL: db.url } }).stdout).toBe('the schema is current\n');
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  receiptKey = await initDevnetStateDir(stateOf('a'), devnet, [
    { rule: 'always_allow' },
    { rule: 'approval_threshold', above: String(APPROVAL_ABOVE), required_weight: 1, approvers: [{ id: devnet.approver.id, weight: 1 }] },
  ]);
  // One state (receipt.key, operator.json, state.json) for both; each its own lock and replica.
  cpSync(stateOf('a'), stateOf('b'), { recursive: true, filter: (src) => !src.endsWith('serve.lock') && !src.includes('/replica') });
  a = await serve('a');
  expect(isWriter(a), 'a, alone, takes the lease before it listens').toBe(true);
  b = await serve('b');
  expect(isWriter(b)).toBe(false);
}, 180_000);

afterAll(async () => {
  for (const p of procs) {
    if (p.signalCode === null && p.exitCode === null) p.kill('SIGCONT');
    await kill9(p);
  }
  if (devnet) await kill9(devnet.proc);
  await sql?.end().catch(() => undefined);
  await db?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('control-plane failover (real processes on one PostgreSQL)', () => {
  it('concurrent executes of one intent across two instances submit once', async () => {
    const ids: string[] = [];
    const dests = new Map<string, string>();
    for (let i = 0; i < 6; i++) {
      const req = newIntent(true);
      const created = await a.client.createIntent(req);
      expect(created.status).toBe('pending_approvals');
      // An approval is a write too: the standby refuses it, naming the writer; the writer records it.
      const onB = await post(b, `/intent/${created.intentId}/approve-signed`, approval(created.intentId));
      expect(onB.status).toBe(503);
      expect(onB.body.error.data.writer).toBe(a.url);
      expect((await a.client.approveSigned(created.intentId, approval(created.intentId))).status).toBe('allowed');
      ids.push(created.intentId);
      dests.set(created.intentId, req.destination);
    }
    const mark = await ledgerMark();
    for (const id of ids) {
      // One intent at a time: each instance is asked at once, and that is what this test is about.
      const [onA, onB] = await Promise.all([post(a, `/intent/${id}/execute`, {}), post(b, `/intent/${id}/execute`, {})]);
      expect(onA.status, JSON.stringify(onA.body)).toBe(200);
      expect(onA.body.status).toBe('confirmed');
      expect(onB.status).toBe(503);
      expect(onB.body.error.data.reason).toBe('not_writer');
      expect(onB.body.error.data.writer).toBe(a.url);
    }
    const { dests: onLedger, accepted } = await ledgerSince(mark);
    expect(onLedger.sort()).toEqual([...dests.values()].sort());
    expect(accepted).toHaveLength(ids.length);
    for (const id of ids) {
      const seen = await until(`b to replicate ${id} confirmed`, async () => {
        const r = (await b.client.intent(id).catch(() => undefined)) as { status: string } | undefined;
        return r?.status === 'confirmed' ? r : undefined;
      });
      expect(seen.status).toBe('confirmed');
    }
  });

  it('kill -9 of the writer mid-burst: the standby takes over, every acknowledged intent is there', async () => {
    const acked: { id: string; amount: string }[] = [];
    const LIMIT = 300;
    let started = 0;
    let stop = false;
    const worker = async () => {
      while (!stop && started < LIMIT) {
        started++;
        const req = newIntent();
        try {
          const r = await a.client.createIntent(req);
          acked.push({ id: r.intentId, amount: req.amount });
        } catch {
          return; // a died under this request: it was never acknowledged
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    await until('100 acknowledged creations on a', () => acked.length >= 100, 30_000);
    const killedAt = performance.now();
    await kill9(a.proc);
    stop = true;
    await Promise.all(workers);
    expect(started, 'the kill landed mid-burst').toBeLessThan(LIMIT);

    await until('b to take the lease', () => isWriter(b), 20_000);
    const first = await writeWhenWriter('a first write on b', () => b.client.createIntent(newIntent()));
    const failoverMs = performance.now() - killedAt;
    process.stdout.write(`failover: kill -9 of the writer to the first acknowledged write on the new writer: ${failoverMs.toFixed(0)} ms (lease ${LEASE_SECONDS} s; ${acked.length} creations acknowledged before the kill)\n`);

    for (const x of acked) {
      const stored = (await b.client.intent(x.id)) as { intentId: string; intent: { amount: string } };
      expect(stored.intentId).toBe(x.id);
      expect(stored.intent.amount).toBe(x.amount);
    }
    expect(((await b.client.intent(first.intentId)) as { intentId: string }).intentId).toBe(first.intentId);
    const v = await b.client.ledgerVerify();
    expect(v.verified).toBe(true);
    expect(v.receipts).toBeGreaterThanOrEqual(acked.length);

    expect(await expectChainInDatabase()).toEqual([1, 2]);

    for (let i = 0; i < 5; i++) await b.client.createIntent(newIntent());
  });

  /** The instance that writes now and the one that follows it; a takeover swaps them. */
  let writer: ServedControlPlane;
  let standby: ServedControlPlane;
  /** Restarts the instance that died last as the standby (its own replica; the dead process's lock is stale). */
  async function restartStandby(): Promise<void> {
    const name = writer === a ? 'b' : 'a';
    standby = await serve(name);
    if (name === 'a') a = standby;
    else b = standby;
    expect(isWriter(standby)).toBe(false);
  }
  async function takeover(): Promise<void> {
    await until('the standby to take the lease', () => isWriter(standby), 20_000);
    [writer, standby] = [standby, writer];
  }

  /** Creates `n` intents on the writer and starts executing them all at once; resolves each to its status or 'died'. */
  async function executeMany(n: number): Promise<{ ids: string[]; dests: string[]; results: Promise<string>[] }> {
    const ids: string[] = [];
    const dests: string[] = [];
    for (let i = 0; i < n; i++) {
      const req = newIntent();
      ids.push((await writer.client.createIntent(req)).intentId);
      dests.push(req.destination);
    }
    // A refusal is an answer, not the kill: only a transport fault counts as died. (The writer runs
    // one wallet's executes one at a time, so these queue behind each other.)
    const w = writer;
    const results = ids.map((id) => w.client.execute(id).then((o) => o.status as string, (e: unknown) => (e instanceof TransportError ? 'died' : 'refused')));
    return { ids, dests, results };
  }

  /** Each intent confirms on the (new) writer, and the ledger holds exactly one transaction per intent. */
  async function expectConfirmedOnce(ids: string[], dests: string[], mark: { txs: number; subs: number }): Promise<void> {
    for (const id of ids) {
      const out = await writeWhenWriter(`${id} to confirm on the new writer`, async () => {
        const o = await writer.client.execute(id);
        if (o.status !== 'confirmed') throw new Error(o.status);
        return o;
      });
      expect(out.status).toBe('confirmed');
    }
    const { dests: onLedger, accepted } = await ledgerSince(mark);
    expect(onLedger.sort(), 'one ledger transaction per intent').toEqual([...dests].sort());
    expect(accepted).toHaveLength(ids.length);
    expect(new Set(accepted).size).toBe(ids.length);
    expect((await writer.client.ledgerVerify()).verified).toBe(true);
  }

  const intentsIn = async (ids: string[], status: string): Promise<number> =>
    (await sql!.query('SELECT count(*)::int AS n FROM cp_intents WHERE status = $1 AND intent_id = ANY($2)', [status, ids])).rows[0].n;

  it('kill -9 of the writer mid-execute: the new writer finishes it, one ledger transaction', async () => {
    [writer, standby] = [b, a]; // b writes (fence 2) since the last test; a died there
    await restartStandby();
    const mark = await ledgerMark();
    const { ids, dests, results } = await executeMany(6);
    // The attempt is committed (receipt intent.signing) before any signer is asked; the signers then
    // take SIGNER_DELAY_MS to answer. Kill once most executes are there.
    await until('executes on the writer to reach the signers', async () => {
      const { rows } = await sql!.query("SELECT count(DISTINCT intent_id)::int AS n FROM cp_receipts WHERE kind = 'intent.signing' AND intent_id = ANY($1)", [ids]);
      return rows[0].n >= 4 || undefined;
    });
    await kill9(writer.proc);
    expect(await Promise.all(results), 'the kill landed while executes were in flight').toContain('died');
    await takeover();
    await expectConfirmedOnce(ids, dests, mark);
    expect(await expectChainInDatabase()).toEqual([1, 2, 3]);
  });

  it('kill -9 of the writer after its transactions landed, before the ledger answered: the new writer resumes them, one ledger transaction', async () => {
    await restartStandby();
    const mark = await ledgerMark();
    await devnetRpc(devnet!, 'delaySubmitReplies', [60_000]);
    try {
      const { ids, dests, results } = await executeMany(3);
      // `submitted` (with the blob) is committed while the ledger takes the blob, and waited for
      // below; the ledger has applied it (txs grew) but holds its answer back.
      await until('a transaction on the ledger whose answer the writer has not had', async () => (await intentsIn(ids, 'submitted')) >= 1 && (await ledgerSince(mark)).dests.length >= 1);
      await kill9(writer.proc);
      await devnetRpc(devnet!, 'delaySubmitReplies', [0]);
      // The transaction the ledger applied (its answer held back); the others queued behind it, one
      // wallet's executes running one at a time, and died with the writer before any attempt.
      const landed = (await ledgerSince(mark)).dests.map((d) => ids[dests.indexOf(d)]!);
      expect(await Promise.all(results)).toContain('died');
      await takeover();
      // What the log shows submitted is in the new writer's in-flight index: it resumes it unasked,
      // and what landed confirms with no execute sent.
      await until('the new writer to resume the submitted intents', () => writer.lines.some((l) => l.includes('"event":"resume"')));
      await until(`the landed intents to confirm unasked (new writer's log: ${writer.lines.filter((l) => l.includes('resume')).join(' ')})`, async () => (await intentsIn(landed, 'confirmed')) === landed.length, 10_000);
      await expectConfirmedOnce(ids, dests, mark);
      expect(await expectChainInDatabase()).toEqual([1, 2, 3, 4]);
    } finally {
      await devnetRpc(devnet!, 'delaySubmitReplies', [0]);
    }
  });

  it('a paused writer cannot append after the takeover', async () => {
    await restartStandby();
    const paused = writer;
    await until('the standby to name the writer', async () => {
      const r = await post(standby, '/intent', newIntent());
      return r.status === 503 && r.body.error.data.writer === paused.url;
    });
    await paused.client.createIntent(newIntent());
    paused.proc.kill('SIGSTOP');
    await takeover();
    await writeWhenWriter('a first write on the new writer', () => writer.client.createIntent(newIntent()));
    // Sent while the old writer is stopped, so it is among the first things it reads when it wakes.
    const lateReq = newIntent();
    const late = post(paused, '/intent', lateReq);
    await new Promise((r) => setTimeout(r, 100));
    paused.proc.kill('SIGCONT');
    // The request that finds the lease gone must get its 503, not a closed socket: a client
    // cannot tell a dropped connection from a write that may have been made.
    const refused = await late.catch((e: unknown) => {
      throw new Error(`the paused writer answered nothing; its stderr: ${paused.stderr()}`, { cause: e });
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error.data.reason).toBe('not_writer');
    const code = await until('the paused writer to exit', () => paused.proc.exitCode ?? undefined, 15_000);
    expect(code).toBe(3);
    expect(paused.stderr()).toMatch(/lost the writer's lease/);

    const { rows } = await sql!.query("SELECT count(*)::int AS n FROM cp_intents WHERE record->'intent'->>'amount' = $1", [lateReq.amount]);
    expect(rows[0].n, 'the refused write left nothing').toBe(0);
    expect((await writer.client.ledgerVerify()).verified).toBe(true);
    expect(await expectChainInDatabase()).toEqual([1, 2, 3, 4, 5]);
    await writer.client.createIntent(newIntent());
  });

  it('attack: a writer paused mid-burst cannot hold the lease hostage', async () => {
    await restartStandby();
    const paused = writer;
    const acked: string[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        try {
          acked.push((await paused.client.createIntent(newIntent())).intentId);
        } catch {
          return;
        }
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await until('a few acknowledged creations', () => acked.length >= 20, 20_000);
    // A commit is one statement: the writer never leaves a transaction open between round trips,
    // so however it is paused it holds no lock a takeover waits for.
    for (let i = 0; i < 200; i++) {
      const { rows } = await sql!.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()");
      expect(rows[0].n, `sample ${i}: a transaction left open between round trips`).toBe(0);
    }
    paused.proc.kill('SIGSTOP');
    stop = true;
    await takeover();
    await writeWhenWriter('a first write on the new writer', () => writer.client.createIntent(newIntent()));
    paused.proc.kill('SIGCONT');
    await Promise.all(workers);
    const code = await until('the paused writer to exit', () => paused.proc.exitCode ?? undefined, 15_000);
    expect(code).toBe(3);
    for (const id of acked) expect((await writer.client.intent(id)).intentId).toBe(id);
    expect((await writer.client.ledgerVerify()).verified).toBe(true);
    expect(await expectChainInDatabase()).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
