/**
 * /sign throughput and latency for a request with three approvals, over loopback HTTP, and beside
 * it in the same run the raw floor: the crypto and the rebuild the signer cannot skip
 * (verifyApprovals ×3 + evaluatePolicy + buildPayload + the payload signature). The difference is
 * the server's overhead: HTTP, JSON, schema validation, guards, the receipt and the fdatasync'd
 * journal line written before each reply (group commit: one receipt signature and one fdatasync per
 * group). A second, fuller floor adds the other crypto a signer must do per request (intent id,
 * policy digest, receipt hash), so the overhead can be read either way. The 16-concurrent line
 * from a separate load process (raw keep-alive sockets, every fresh request's bytes built before
 * timing; one warm process for the warm-up and every slice) is the throughput figure. It runs in
 * slices, with the raw floor measured just before and after each,
 * and each slice is compared with the floor around it (the host's speed drifts by tens of percent
 * between minutes); the median of those ratios is the figure for the goal. The overall rate
 * against the fastest raw-floor median of the whole run is printed too, as a conservative bound.
 * The floor verifies its three approvals one after another on one
 * thread; the signer verifies them on libuv's thread pool, so the throughput ratio can fall below
 * the CPU ratio, and both are printed.
 *
 * The HTTP server is the published bin (`bin/vault-signer.cjs serve`: it sizes libuv's thread
 * pool, then runs dist/signer/cli.js, built with tsup first) in its own process, so the client's
 * own work (request validation, JSON, undici) does not count as server time; the in-process line
 * shows verifyAndSign alone. Every iteration signs a fresh intent (distinct memo), prepared before
 * timing starts.
 * Run: `pnpm bench` (or `npx vitest bench --run src/signer/sign.bench.ts`).
 */
import {
  approvalMessage,
  createSignerClient,
  evaluatePolicy,
  intentId,
  normalizeIntent,
  policyDigest,
  policyWindows,
  preparePolicy,
  ReceiptChain,
  verifyApprovals,
  verifyStatements,
  type SignRequest,
  type SignedApproval,
} from '@vault/sdk';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createPrivateKey, sign as edSign } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { procCpuSeconds } from '../../test/cpu.js';
import { startLoadControl, type LoadRun } from '../../test/load-control.js';
import { makeWorld, PASSPHRASE, type World, CLEARER } from '../../test/signer/helpers.js';
import { verifyAndSign } from './sign.js';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const TOKEN = 'bench-token-0123456789abcdef0123456789';
const POOL = 4000;
/** Fresh requests for the separate-process load run (each intent signed once). */
const LOAD_POOL = Number(process.env['BENCH_SIGN_LOAD_POOL'] ?? 20000);
let loadFile = '';
let signerUrl = '';
/**
 * The throughput run is cut into LOAD_SLICES slices of SLICE_MS, with the raw floor measured for
 * FLOOR_SLICE_MS before the first and after each: the host's speed drifts by tens of percent
 * between minutes, so each slice is compared with the floor measured around it, moments apart.
 */
const LOAD_SLICES = 6;
const SLICE_MS = 1500;
const FLOOR_SLICE_MS = 700;
/** Load before the first slice, not counted. */
const WARMUP_MS = 1000;

let w: World;
let child: ChildProcess;
let benchDir: string;
let client: ReturnType<typeof createSignerClient>;
const requests: SignRequest[] = [];
let next = 0;
const latency: Record<string, number[]> = { http: [], inproc: [], raw: [], rawFull: [], concurrent: [], pairRaw: [], pairHttp: [], rawSliced: [] };
/** A receipt chain in memory for the full floor (the same hash per receipt; the signer signs one per commit group). */
const floorChain = new ReceiptChain(new Uint8Array(32).fill(9));

function fastApprover(world: World) {
  const keys = new Map(
    world.approvers.map((a) => [a.id, createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(a.secret)]), format: 'der', type: 'pkcs8' })]),
  );
  return (id: string, who: string): SignedApproval => {
    const statement = { approver_id: who, intent: id, verdict: 'approve' as const, at: world.clock.now - 5, strong_auth: true };
    const sig = edSign(null, approvalMessage(statement), keys.get(who)!).toString('hex');
    return { ...statement, signature: { curve: 'ed25519', sig } };
  };
}

function take(): SignRequest {
  const r = requests[next % requests.length] as SignRequest;
  next += 1;
  return r;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

beforeAll(async () => {
  w = await makeWorld({
    diskState: true,
    policy: (wallet) => ({
      wallet,
      version: 1,
      rules: [
        { rule: 'hard_ceiling', max: '900000000' },
        { rule: 'daily_velocity_cap', limit: '1000000000000000' },
        { rule: 'approval_threshold', above: '0', required_weight: 3, approvers: [{ id: 'alice', weight: 1 }, { id: 'bob', weight: 1 }, { id: 'carol', weight: 1 }] },
        { rule: 'destination_blocklist', addresses: [`mem1${'dd'.repeat(20)}`] },
        { rule: 'require_compliance_clearance', clearers: [CLEARER.publicKeyHex] },
      ],
    }),
  });
  w.clock.now = Math.floor(Date.now() / 1000);
  w.deps.now = () => Math.floor(Date.now() / 1000);
  const sign = fastApprover(w);
  for (let i = 0; i < POOL; i++) requests.push(await w.request({ amount: '2000000', memo: `bench-${i}` }, { sign }));
  const fresh: SignRequest[] = [];
  for (let i = 0; i < LOAD_POOL; i++) fresh.push(await w.request({ amount: '2000000', memo: `load-${i}` }, { sign }));
  execFileSync(join(pkg, 'node_modules/.bin/tsup'), ['src/signer/cli.ts', '--format', 'esm', '--platform', 'node', '--target', 'node20', '--out-dir', 'dist/signer', '--no-config'], { cwd: pkg, stdio: 'pipe' });
  benchDir = mkdtempSync(join(tmpdir(), 'vault-signer-bench-'));
  loadFile = join(benchDir, 'load-requests.json');
  writeFileSync(loadFile, JSON.stringify(fresh));
  const trust = join(benchDir, 'trust.json');
  writeFileSync(trust, JSON.stringify({ ...w.trustFile, drivers: [{ module: join(pkg, 'test/signer/fixtures/memory-driver.mjs') }] }));
  // BENCH_SIGNER_NODE_ARGS passes node flags to the signer process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p` to profile it under load).
  const nodeArgs = (process.env['BENCH_SIGNER_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  child = spawn(process.execPath, [...nodeArgs, join(pkg, 'bin/vault-signer.cjs'), 'serve', '--keystore', w.keystoreDir, '--trust', trust, '--state-dir', join(benchDir, 'state'), '--port', '0', '--kdf-log2', '10'], {
    env: { ...process.env, VAULT_SIGNER_PASSPHRASE: PASSPHRASE, VAULT_SIGNER_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) res((JSON.parse(out.slice(0, out.indexOf('\n'))) as { listening: string }).listening);
    });
    child.once('exit', (code) => rej(new Error(`signer exited ${code}`)));
  });
  signerUrl = url;
  client = createSignerClient({ baseUrl: url, token: TOKEN, timeoutMs: 120_000 });
}, 300_000);

/** The raw floor's median over `ms` of back-to-back runs, with the signer idle (samples kept under `key`). */
async function floorMedian(ms: number, key: string): Promise<number> {
  const xs: number[] = [];
  for (const stop = performance.now() + ms; performance.now() < stop; ) {
    const t = performance.now();
    await rawFloor(take());
    xs.push(performance.now() - t);
  }
  latency[key]!.push(...xs);
  return pct(xs, 50);
}

/** CPU seconds used so far by process `pid` (all threads) and by its main thread; null where /proc is not there. */
function cpuOf(pid: number): { all: number; main: number } | null {
  const all = procCpuSeconds(pid);
  const main = procCpuSeconds(pid, pid);
  return all === null || main === null ? null : { all, main };
}

/**
 * Lines in the signer's journal, how many of them are checkpoints (a signed receipt, one per group
 * commit), and how many record a fresh signature (`sign.signed`, not an idempotent repeat).
 */
function journalCounts(): { lines: number; checkpoints: number; signed: number } {
  const path = join(benchDir, 'state', 'journal.jsonl');
  if (!existsSync(path)) return { lines: 0, checkpoints: 0, signed: 0 };
  const receipts = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => (JSON.parse(l) as { receipt: { sig?: string; kind: string } }).receipt);
  return { lines: receipts.length, checkpoints: receipts.filter((r) => r.sig !== undefined).length, signed: receipts.filter((r) => r.kind === 'sign.signed').length };
}

// The signer process and the temporary files go whatever happens in the report (a throw there
// would otherwise leave the signer running).
afterAll(async () => {
  try {
    await loadAndReport();
  } finally {
    child?.kill('SIGTERM');
    w?.cleanup();
    if (benchDir) rmSync(benchDir, { recursive: true, force: true });
  }
});

/** The sliced load run against the signer process, then every figure of the bench. */
async function loadAndReport(): Promise<void> {
  const signerCpu = () => (child.pid === undefined ? null : cpuOf(child.pid));
  // Slices of load with the raw floor measured around each (see LOAD_SLICES).
  const slices: { run: LoadRun; floor: number }[] = [];
  // 16 concurrent keep-alive connections from a separate process (the client's own cost is not on
  // this process's event loop), one process for every slice: its code warm, its sockets open and
  // every request's bytes built before the first, so a slice costs it little more than the socket I/O.
  const load = await startLoadControl({ url: signerUrl, path: '/sign', method: 'POST', token: TOKEN, tokenHeader: 'x-vault-signer-token', concurrency: 16, bodyFile: loadFile });
  let sent = 0;
  let journal0: ReturnType<typeof journalCounts>;
  // The signer's CPU summed over the slices only; null where /proc is not there.
  let cpuLoad: { all: number; main: number } | null = { all: 0, main: 0 };
  try {
    // Warm-up, not counted: the generator's code and sockets, and the signer's code for this client.
    sent = (await load.run(WARMUP_MS, 0)).requests;
    let before = await floorMedian(FLOOR_SLICE_MS, 'rawSliced');
    journal0 = journalCounts();
    for (let i = 0; i < LOAD_SLICES; i++) {
      const c0 = signerCpu();
      const run = await load.run(SLICE_MS, sent);
      const c1 = signerCpu();
      cpuLoad = cpuLoad && c0 && c1 ? { all: cpuLoad.all + c1.all - c0.all, main: cpuLoad.main + c1.main - c0.main } : null;
      sent += run.requests;
      const after = await floorMedian(FLOOR_SLICE_MS, 'rawSliced');
      slices.push({ run, floor: (before + after) / 2 });
      before = after;
    }
  } finally {
    await load.exit();
  }
  const journal1 = journalCounts();
  const groups = journal1.checkpoints - journal0.checkpoints;
  const journalLine = `signer journal during the load: ${journal1.lines - journal0.lines} lines (${journal1.signed - journal0.signed} fresh signatures) in ${groups} group commits (${((journal1.lines - journal0.lines) / Math.max(1, groups)).toFixed(2)} lines per checkpoint signature and fdatasync)`;
  if (sent > LOAD_POOL) console.warn(`warning: ${sent} requests sent from a pool of ${LOAD_POOL}; some were repeats (raise BENCH_SIGN_LOAD_POOL)`);
  const okAll = slices.reduce((a, x) => a + x.run.ok, 0);
  const secondsAll = slices.reduce((a, x) => a + x.run.seconds, 0);
  const measured = slices.reduce((a, x) => a + x.run.requests, 0);
  const loaded: Omit<LoadRun, 'statuses'> = {
    requests: measured,
    ok: okAll,
    errors: slices.reduce((a, x) => a + x.run.errors, 0),
    seconds: secondsAll,
    rps: okAll / secondsAll,
    p50: pct(slices.map((x) => x.run.p50), 50),
    p99: Math.max(...slices.map((x) => x.run.p99)),
    clientCpuUsPerRequest: slices.reduce((a, x) => a + x.run.clientCpuUsPerRequest * x.run.requests, 0) / Math.max(1, measured),
  };
  const sliceRatios = slices.map((x) => 1000 / x.floor / x.run.rps);
  const line = (k: string) => {
    const xs = latency[k] as number[];
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    return `${k.padEnd(7)} n=${xs.length} mean=${mean.toFixed(3)}ms p50=${pct(xs, 50).toFixed(3)}ms p99=${pct(xs, 99).toFixed(3)}ms => ${(1000 / mean).toFixed(0)}/s`;
  };
  const http = latency['http'] as number[];
  const raw = latency['raw'] as number[];
  const ratio = http.length && raw.length ? pct(http, 50) / pct(raw, 50) : NaN;
  const conc = latency['concurrent'] as number[];
  const concRate = conc.length ? 1000 / (conc.reduce((a, b) => a + b, 0) / conc.length) : NaN;
  const pr = latency['pairRaw'] as number[];
  const ph = latency['pairHttp'] as number[];
  // The conservative comparison: the overall rate against the fastest of three raw-floor medians
  // measured in this run (before the HTTP benches, interleaved with HTTP requests, and around the
  // load slices), so a slow moment of the host during one of them cannot flatter the ratio.
  const floorP50 = Math.min(pct(raw, 50), pct(pr, 50), pct(latency['rawSliced'] as number[], 50));
  const floorFull = pct(latency['rawFull'] as number[], 50);
  const cpuLine =
    cpuLoad && loaded.ok > 0
      ? `signer CPU per sign under that load: ${((cpuLoad.all * 1e3) / loaded.ok).toFixed(3)}ms all threads, ${((cpuLoad.main * 1e3) / loaded.ok).toFixed(3)}ms main thread (raw floor p50 ${floorP50.toFixed(3)}ms)`
      : 'signer CPU per sign: not available on this platform';
  const sorted = [...sliceRatios].sort((a, b) => a - b);
  const sliceLine = `per slice (${LOAD_SLICES} x ${SLICE_MS} ms, each against the raw floor measured just before and after it): ${slices.map((x, i) => `${x.run.rps.toFixed(0)}/s vs floor ${x.floor.toFixed(3)}ms = ${sliceRatios[i]!.toFixed(2)}x`).join(', ')}; median ${pct(sorted, 50).toFixed(2)}x, range ${sorted[0]!.toFixed(2)}-${sorted[sorted.length - 1]!.toFixed(2)}x (goal <= 1.5x)`;
  console.log(
    `\n/sign bench (3 approvals)\n  ${line('pairRaw')}\n  ${line('pairHttp')}\n  paired overhead: http p50 / raw p50 = ${(pct(ph, 50) / pct(pr, 50)).toFixed(2)}x, p99 ${(pct(ph, 99) / pct(pr, 99)).toFixed(2)}x\n  ${line('http')}\n  ${line('inproc')}\n  ${line('raw')}\n  ${line('rawSliced')}\n  ${line('rawFull')}\n  16 concurrent over HTTP (client in this process): ${concRate.toFixed(0)} signs/s\n  16 concurrent over HTTP (separate load process, fresh intents): ${loaded.rps.toFixed(0)} signs/s, p50 ${loaded.p50.toFixed(2)}ms, p99 ${loaded.p99.toFixed(2)}ms, ${loaded.ok} ok, ${loaded.errors} errors, load generator CPU ${(loaded.clientCpuUsPerRequest / 1000).toFixed(3)}ms per request (p50 is the median of the slices' p50s, p99 the largest slice p99)\n  ${sliceLine}\n  conservative: raw floor rate (p50 ${floorP50.toFixed(3)}ms, the fastest of raw, pairRaw and the sliced floor) / overall rate = ${(1000 / floorP50 / loaded.rps).toFixed(2)}x; full floor rate / overall rate = ${(1000 / floorFull / loaded.rps).toFixed(2)}x\n  ${cpuLine}\n  ${journalLine}\n  overhead: http p50 / raw p50 = ${ratio.toFixed(2)}x; in-process p50 / raw p50 = ${(pct(latency['inproc'] as number[], 50) / pct(raw, 50)).toFixed(2)}x`,
  );
}

/** The work the signer cannot skip, on one request: verify 3 approvals and the clearance, re-run policy, rebuild, sign. */
async function rawFloor(req: SignRequest): Promise<void> {
  const intent = normalizeIntent(req.intent.request);
  const { counted } = verifyApprovals(req.approvals, { intentId: req.intent.id, approvers: w.trust.approvers, initiator: intent.initiator, window: { createdAt: req.intent.created_at, now: w.clock.now } });
  const { compliance_cleared } = verifyStatements(req.protect.statements ?? [], { policy: req.policy, wallet: intent.wallet, chain: w.wallet.chain, destination: intent.destination, now: w.clock.now });
  const d = evaluatePolicy(req.policy, intent, { now: w.clock.now, intentId: req.intent.id, history: w.state.historyFor(intent.wallet, w.clock.now, policyWindows(req.policy), req.intent.id), approvals: counted, compliance_cleared });
  if (d.decision !== 'allow') throw new Error(d.reasons.join('; '));
  const built = w.driver.buildPayload({ intent, wallet: w.wallet, params: req.params });
  await w.chainSigner.signPayload({ built, key: w.keys.signingKey(w.keys.list()[0]!.publicKeyHex)!, signerAddress: req.signer_address });
}

/**
 * The raw floor plus the other crypto a signer must do per request: the intent id (normalise +
 * JCS + SHA-256), the policy digest, and its receipt hash (JCS + SHA-256; the receipt signature is
 * one per commit group, so not per request under load). Reported beside the narrower floor so the
 * overhead can be read either way.
 */
async function fullFloor(req: SignRequest): Promise<void> {
  const intent = normalizeIntent(req.intent.request);
  if (intentId(intent) !== req.intent.id) throw new Error('intent id');
  const policy = preparePolicy(req.policy);
  if (policyDigest(policy) !== req.policy_digest) throw new Error('policy digest');
  const { counted } = verifyApprovals(req.approvals, { intentId: req.intent.id, approvers: w.trust.approvers, initiator: intent.initiator, window: { createdAt: req.intent.created_at, now: w.clock.now } });
  const { compliance_cleared } = verifyStatements(req.protect.statements ?? [], { policy, wallet: intent.wallet, chain: w.wallet.chain, destination: intent.destination, now: w.clock.now });
  const d = evaluatePolicy(policy, intent, { now: w.clock.now, intentId: req.intent.id, history: w.state.historyFor(intent.wallet, w.clock.now, policyWindows(policy), req.intent.id), approvals: counted, compliance_cleared });
  if (d.decision !== 'allow') throw new Error(d.reasons.join('; '));
  const built = w.driver.buildPayload({ intent, wallet: w.wallet, params: req.params });
  const c = await w.chainSigner.signPayload({ built, key: w.keys.signingKey(w.keys.list()[0]!.publicKeyHex)!, signerAddress: req.signer_address });
  floorChain.append({ at: w.clock.now, kind: 'sign.signed', intentId: req.intent.id, body: { payload_digest: built.digest, signature: c.signature.hex } }, { sign: false });
}

describe('/sign, three approvals', () => {
  bench(
    'raw floor: verifyApprovals(3) + evaluatePolicy + buildPayload + sign',
    async () => {
      const t = performance.now();
      const req = take();
      await rawFloor(req);
      latency['raw']!.push(performance.now() - t);
    },
    { time: 3000, warmupTime: 300 },
  );

  bench(
    'full floor: + intent id, policy digest and the receipt hash',
    async () => {
      const t = performance.now();
      await fullFloor(take());
      latency['rawFull']!.push(performance.now() - t);
    },
    { time: 3000, warmupTime: 300 },
  );

  bench(
    'verifyAndSign in-process (all checks + receipt + fdatasync)',
    async () => {
      const t = performance.now();
      const out = await verifyAndSign(take(), w.deps);
      if (!out.ok) throw new Error(out.refusal.message);
      latency['inproc']!.push(performance.now() - t);
    },
    { time: 3000, warmupTime: 300 },
  );

  bench(
    'POST /sign over loopback HTTP (sequential)',
    async () => {
      const t = performance.now();
      const out = await client.sign(take());
      if (!out.ok) throw new Error(out.refusal.message);
      latency['http']!.push(performance.now() - t);
    },
    { time: 3000, warmupTime: 300 },
  );

  bench(
    'POST /sign over loopback HTTP, 16 concurrent (hz x 16 = signs/s)',
    async () => {
      const t = performance.now();
      const outs = await Promise.all(Array.from({ length: 16 }, () => client.sign(take())));
      if (outs.some((o) => !o.ok)) throw new Error('refused');
      latency['concurrent']!.push((performance.now() - t) / 16);
    },
    { time: 3000, warmupTime: 300 },
  );

  bench(
    'paired (load-robust, server warm): raw floor, then POST /sign of a fresh request',
    async () => {
      let t = performance.now();
      await rawFloor(take());
      latency['pairRaw']!.push(performance.now() - t);
      t = performance.now();
      const out = await client.sign(take());
      if (!out.ok) throw new Error(out.refusal.message);
      latency['pairHttp']!.push(performance.now() - t);
    },
    { time: 4000, warmupTime: 300 },
  );
});
