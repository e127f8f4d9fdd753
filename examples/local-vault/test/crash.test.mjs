/**
 * Issue #20, item 9: kill -9 of the control plane at a random moment during execute, on each of the
 * three devnets. The local vault's own set-up (vault.mjs `setUp`) starts the devnets in this process
 * (anvil is its own), the three signers and the control plane as processes, and provisions a 2-of-3
 * wallet on each ledger; so the ledgers and the signers outlive the control plane this test kills.
 *
 * Per ledger: one execute is timed; then each round creates an intent, starts its execute, kills the
 * control plane (SIGKILL, by the PID this test started it with), restarts it on the same state
 * directory and executes once more. Round 1 kills the moment the first signer's receipt chain moves
 * (it has signed; the control plane has not committed `submitted` unless the quorum's second answer
 * beat the kill): the window of the finding, a few tens of ms out of an XRPL execute's second or so,
 * which random delays alone hit only now and then. The round that outlasts LastLedgerSequence needs
 * that window every time, so it freezes the other two signers until the kill.
 * The other rounds kill after a delay drawn uniformly within the timed execute. While the control
 * plane is down its ledger moves on, as it does during any real restart (seconds): XRPL closes two
 * ledgers, Stellar's clock passes a second (fresh parameters would then give another LastLedgerSequence
 * or max_time, so another payload); a Safe's nonce is all its payload depends on. The first execute
 * after the restart must confirm (no signer refusing "payload already signed and live"), and the
 * ledger must hold exactly one transaction for the intent: the wallet's sequence (Safe nonce) advanced
 * by one and the destination received the amount once. Each round prints where the kill landed and
 * how many executes the intent took after the restart.
 *
 * Seeded: VAULT_CRASH_SEED (default 20) and VAULT_CRASH_ROUNDS (default 4 per ledger: 1 + 3 random).
 */
import { createControlPlaneClient, createSignerClient, generateEd25519KeyPair } from '@vault/sdk';
import { createSigner as createStellarSigner } from '@vault/driver-stellar';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectExit, setUp, signalSigner, startControlPlane, stopAll } from '../vault.mjs';

const SEED = Number(process.env.VAULT_CRASH_SEED ?? 20);
const ROUNDS = Number(process.env.VAULT_CRASH_ROUNDS ?? 4);
/** Executes allowed after a restart before giving up (one a second): enough to count a stall. */
const MAX_EXECUTES = 40;

/** mulberry32: a small seeded PRNG, so a run's delays can be replayed from its printed seed. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(SEED);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const say = (line) => process.stdout.write(`${line}\n`);

const SAFE_NONCE_ABI = [{ type: 'function', name: 'nonce', inputs: [], outputs: [{ type: 'uint256' }], stateMutability: 'view' }];

let dir;
let v;
let cp;
let cpChild;

/** SIGKILL to the control plane this test started (its PID), and wait until it is gone. */
async function killControlPlane() {
  const child = cpChild;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  expectExit(child); // killed on purpose: the launcher does not report it
  process.kill(child.pid, 'SIGKILL');
  await gone;
}

async function restartControlPlane() {
  const started = await startControlPlane(v.cpDir, 0, v.cpEnv);
  cpChild = started.child;
  cp = createControlPlaneClient({ baseUrl: started.url, timeoutMs: 60_000 });
  await cp.unlock(v.operatorPassphrase);
}

/**
 * Resolves once any signer's receipt head moves from `heads` (it signed or refused something), or
 * `done` settles first. Polls /health, which needs no token and answers from memory.
 */
async function firstSignature(heads, done, frozen = []) {
  let settled = false;
  void done.finally(() => (settled = true));
  // A frozen signer answers nothing, /health included: only the others are watched.
  const watched = v.signers.flatMap((s, i) => (frozen.includes(s) ? [] : [{ i, client: createSignerClient({ baseUrl: s.url, token: s.env.VAULT_SIGNER_TOKEN }) }]));
  for (;;) {
    const now = await Promise.all(watched.map(({ i, client }) => client.health().then((h) => ({ i, head: h.receipt_head }))));
    if (now.some(({ i, head }) => head !== heads[i]) || settled) return;
    await sleep(2);
  }
}

const signerHeads = () => Promise.all(v.signers.map((s) => createSignerClient({ baseUrl: s.url, token: s.env.VAULT_SIGNER_TOKEN }).health().then((h) => h.receipt_head)));

/** Receipt kinds each side holds for an intent: the control plane's, and every signer's. */
async function receiptsOf(id) {
  const mine = (await cp.ledgerRecent(1000)).receipts.filter((r) => r.intentId === id).map((r) => r.kind);
  const signers = [];
  for (const s of v.signers) {
    const { receipts } = await createSignerClient({ baseUrl: s.url, token: s.env.VAULT_SIGNER_TOKEN }).receipts(1000);
    signers.push(...receipts.filter((r) => r.intentId === id).map((r) => r.kind));
  }
  return { mine, signers };
}

/**
 * Where the kill landed, read from the receipts on disk after the restart (a `submitted` intent is
 * resumed at start-up, so it may be confirmed by the time they are read).
 */
function phaseOf({ mine, signers }, killed) {
  if (killed === 'confirmed') return 'after the execute returned';
  if (mine.includes('intent.submitting')) return 'submitted';
  if (signers.includes('sign.signed')) return 'signed, not submitted';
  if (mine.includes('intent.signing')) return 'attempt committed, nothing signed';
  return 'before signing';
}

/**
 * One round: creates the intent `req`, starts its execute, kills the control plane after `delay` ms
 * (null: the moment the first signer signs), lets `moveOn()` run while it is down, restarts it and
 * executes until the intent confirms (at most MAX_EXECUTES). `read()` gives the wallet's sequence (or
 * nonce) and the destination's balance, straight from the devnet (never through the driver).
 * `hold`: signers frozen (SIGSTOP) from before the execute until the kill, so that the control
 * plane, short of the quorum, is still waiting when it dies: execute goes on at the quorum, and
 * otherwise the second signature can beat the kill.
 */
async function crashRound(label, req, read, moveOn, delay, hold = []) {
  const before = await read();
  const { intentId: id } = await cp.createIntent(req);
  const heads = await signerHeads();
  for (const s of hold) signalSigner(s, 'SIGSTOP');
  const t0 = performance.now();
  const inFlight = cp.execute(id).then(
    (o) => o.status,
    () => 'cut off',
  );
  try {
    if (delay === null) await firstSignature(heads, inFlight, hold);
    else await sleep(delay);
    await killControlPlane();
  } finally {
    // The dead control plane's requests wait in their sockets: they sign its payload now.
    for (const s of hold) signalSigner(s, 'SIGCONT');
  }
  const when = delay === null ? `as the first signer signed, ${Math.round(performance.now() - t0)} ms in` : `after ${delay} ms`;
  const killed = await inFlight;
  await moveOn();
  await restartControlPlane();
  const phase = phaseOf(await receiptsOf(id), killed);

  let executes = 0;
  let out;
  const problems = [];
  while (executes < MAX_EXECUTES) {
    executes += 1;
    try {
      out = await cp.execute(id);
      if (out.status === 'confirmed') break;
      problems.push(out.status);
    } catch (e) {
      problems.push(e.message);
    }
    await sleep(1000);
  }
  const after = await read();
  const { mine, signers } = await receiptsOf(id);
  const refused = signers.filter((k) => k === 'sign.refused').length;
  const payloads = mine.filter((k) => k === 'intent.signing').length;
  const line = `${label}: kill ${when} (${phase}; the killed execute: ${killed}); executes after the restart: ${executes}${problems.length ? ` (${problems[0]})` : ''}; sequence +${after.sequence - before.sequence}, destination +${after.balance - before.balance}; payloads put to the signers ${payloads}, signer refusals ${refused}`;
  say(line);
  return { executes, status: out?.status, sequence: after.sequence - before.sequence, received: after.balance - before.balance, refused, payloads, amount: BigInt(req.amount), line };
}

/**
 * The goal: recovered on the first execute after the restart, one ledger transaction, no refusal,
 * and `payloads` payloads put to the signers (one, unless the first died while the plane was down).
 */
function expectRecovered(r, payloads = 1) {
  expect(r.payloads, r.line).toBe(payloads);
  expect(r.status, r.line).toBe('confirmed');
  expect(r.executes, r.line).toBe(1);
  expect(r.refused, r.line).toBe(0);
  expect(r.sequence, r.line).toBe(1n);
  expect(r.received, r.line).toBe(r.amount);
}

/**
 * One ledger's attack: an execute is timed, then ROUNDS crash rounds (round 1 targeted, the rest at
 * seeded random delays within the timed execute); `request(round)` is each round's intent.
 */
async function attack(name, request, read, moveOn) {
  const { intentId } = await cp.createIntent(request(0));
  const t0 = performance.now();
  expect((await cp.execute(intentId)).status).toBe('confirmed');
  const measured = Math.round(performance.now() - t0);
  say(`${name}: seed ${SEED}, an execute takes ${measured} ms; ${ROUNDS} rounds`);
  const rounds = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const delay = round === 1 ? null : Math.floor(random() * measured);
    rounds.push(await crashRound(`${name} round ${round}`, request(round), read, moveOn, delay));
  }
  for (const r of rounds) expectRecovered(r);
  expect((await cp.ledgerVerify()).verified).toBe(true);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vault-crash-'));
  v = await setUp({ dir: join(dir, 'vault'), port: 0, kdfLog2: 10 });
  cp = v.cp;
  cpChild = v.cpChild;
}, 240_000);

afterAll(async () => {
  await stopAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('attack: kill -9 of the control plane at a random moment during execute (issue #20, item 9)', () => {
  it('attack: kill -9 during an XRPL execute: the first execute after the restart confirms, exactly one ledger transaction', async () => {
    const wallet = v.addressOf['ops-xrpl'];
    const dest = v.xrpl.faucet().address;
    await attack(
      'xrpl',
      (round) => ({ wallet: 'ops-xrpl', destination: dest, amount: String(1_000_000 + round), memo: `crash round ${round}` }),
      async () => ({ sequence: BigInt(v.xrpl.ledger.account(wallet).sequence), balance: BigInt(v.xrpl.ledger.account(dest).balance) }),
      async () => {
        v.xrpl.closeLedger();
        v.xrpl.closeLedger();
      },
    );
  }, 600_000);

  it('attack: kill -9 as the signers sign, and the control plane stays down past the XRPL payload\'s LastLedgerSequence: the first execute after the restart builds afresh, one ledger transaction', async () => {
    const wallet = v.addressOf['ops-xrpl'];
    const dest = v.xrpl.faucet().address;
    // The signed payload is dead when the control plane comes back: fresh parameters, a new payload,
    // and each signer signs it once the ledger shows the first can never land.
    const r = await crashRound(
      'xrpl, down past LastLedgerSequence',
      { wallet: 'ops-xrpl', destination: dest, amount: '2000000', memo: 'crash, long downtime' },
      async () => ({ sequence: BigInt(v.xrpl.ledger.account(wallet).sequence), balance: BigInt(v.xrpl.ledger.account(dest).balance) }),
      async () => {
        for (let i = 0; i < 25; i++) v.xrpl.closeLedger();
      },
      null,
      v.signers.slice(1),
    );
    expectRecovered(r, 2);
  }, 600_000);

  it('attack: kill -9 during a Stellar execute: the first execute after the restart confirms, exactly one ledger transaction', async () => {
    const wallet = v.addressOf['ops-stellar'];
    const chain = 'stellar:local';
    const signer = await createStellarSigner({ chains: [{ chain, horizonUrl: v.stellar.url, networkPassphrase: v.stellar.networkPassphrase }] });
    const dest = signer.deriveAddress({ chain, publicKey: generateEd25519KeyPair().publicKey, curve: 'ed25519' });
    await v.stellar.fund(dest);
    await attack(
      'stellar',
      (round) => ({ wallet: 'ops-stellar', destination: dest, amount: String(10_000_000 + round), asset_decimals: 7 }),
      async () => ({ sequence: v.stellar.ledger.account(wallet).seq, balance: v.stellar.ledger.nativeBalance(dest) }),
      // max_time is whole seconds from the control plane's clock: wait into the next one.
      () => sleep(1000 - (Date.now() % 1000) + 20),
    );
  }, 600_000);

  it('attack: kill -9 during an EVM (Safe) execute: the first execute after the restart confirms, exactly one ledger transaction', async () => {
    const safe = v.addressOf['ops-evm'];
    const dest = v.evm.accounts.funded[1].address;
    const client = v.evm.publicClient;
    await attack(
      'evm',
      (round) => ({ wallet: 'ops-evm', destination: dest, amount: String(1_000_000_000_000_000n + BigInt(round)), asset_decimals: 18 }),
      async () => ({
        sequence: await client.readContract({ address: safe, abi: SAFE_NONCE_ABI, functionName: 'nonce' }),
        balance: await client.getBalance({ address: dest }),
      }),
      async () => undefined,
    );
  }, 600_000);
});
