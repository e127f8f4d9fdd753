/**
 * Lockout attacks (issue #20, finding 5): any local process can reach the loopback port, so no
 * limit may let it refuse the operator's unlock or a device's pairing. Measured with the attacks,
 * over real sockets on 127.0.0.1; every loop is bounded in count and in time.
 */
import { SessionError, fromHex, generateEd25519KeyPair, signEd25519, toHex } from '@vault/sdk';
import { randomBytes, scryptSync } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SCRYPT } from '../../src/control-plane/secrets.js';
import { UnlockQueue } from '../../src/control-plane/sessions.js';
import { PASSPHRASE, raw, setup, type Harness } from './helpers.js';

// Real scrypt cost, real sockets, on a shared 2-core machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Milliseconds of one scrypt at the default cost on this machine (best of three). */
function scryptMs(): number {
  const salt = randomBytes(16);
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    scryptSync('probe', salt, 32, { ...DEFAULT_SCRYPT, maxmem: 256 * DEFAULT_SCRYPT.N * DEFAULT_SCRYPT.r + 1024 * 1024 });
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

const unlockBody = (passphrase: string) => JSON.stringify({ passphrase });

/**
 * `clients` loops, each sending `send()` one request at a time until `ms` have passed or `max`
 * requests have been sent in all. Returns the status (and reason) of every reply.
 */
async function flood(clients: number, ms: number, max: number, send: () => Promise<{ status: number; body: any }>): Promise<{ counts: Map<string, number>; sent: number; elapsedMs: number }> {
  const counts = new Map<string, number>();
  const t0 = performance.now();
  let sent = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() - t0 < ms && sent < max) {
        sent += 1;
        const r = await send();
        const key = `${r.status}:${r.body?.error?.data?.reason ?? ''}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }),
  );
  return { counts, sent, elapsedMs: performance.now() - t0 };
}

describe('attack: a local process floods /session/unlock with wrong passphrases to lock the operator out', () => {
  it('the operator unlocks (200) during the flood; the attacker gets one scrypt per guess, serialised', async () => {
    h = await setup({ unlock: false, scrypt: DEFAULT_SCRYPT });
    const tBefore = scryptMs();
    const attack = flood(8, 4_000, 2_000, () => raw(h!, 'POST', '/session/unlock', { token: null, body: unlockBody(`guess-${Math.random()}`) }));
    // How many guesses wait behind the one being checked (they would be 0 if checks ran side by side).
    let maxWaiting = 0;
    const sampler = setInterval(() => (maxWaiting = Math.max(maxWaiting, h!.running.cp.unlockQueue.waiting)), 25);
    await new Promise((r) => setTimeout(r, 1_000)); // the queue is full of guesses by now
    const t0 = performance.now();
    const mine = await raw(h, 'POST', '/session/unlock', { token: null, body: unlockBody(PASSPHRASE) });
    const operatorMs = performance.now() - t0;
    const { counts, elapsedMs } = await attack;
    clearInterval(sampler);
    const t = Math.min(tBefore, scryptMs()); // the machine is shared: its speed moves
    const guesses = counts.get('401:passphrase') ?? 0;
    const rate = guesses / (elapsedMs / 1000);
    console.log(
      `unlock flood: 8 clients for ${Math.round(elapsedMs)} ms; replies ${JSON.stringify(Object.fromEntries(counts))}; ` +
        `attacker ${rate.toFixed(1)} guesses/s (one scrypt here: ${t.toFixed(0)} ms, bound ${(1000 / t).toFixed(1)}/s); up to ${maxWaiting} waiting; operator unlocked in ${operatorMs.toFixed(0)} ms`,
    );
    expect(mine.status).toBe(200);
    expect((await raw(h, 'GET', '/wallets', { token: mine.body.token })).status).toBe(200);
    // Every guess was checked and refused as a wrong passphrase: nothing was rate-limited, none let in.
    expect([...counts.keys()]).toEqual(['401:passphrase']);
    expect(guesses).toBeGreaterThan(5); // the old limit allowed 5 a minute, then refused everyone
    // Serialised: the guesses queued (one checked, the others waiting), and the rate stayed near one
    // scrypt at a time (the bound is loose: this machine's speed moves under other work).
    expect(maxWaiting).toBeGreaterThanOrEqual(4);
    expect(rate).toBeLessThan((3 * 1000) / t);
    // The operator waited only behind the eight guesses already queued (generous bound).
    expect(operatorMs).toBeLessThan(20_000);
  });

  it('wrong passphrases do not count: the right one is accepted straight after twenty of them', async () => {
    h = await setup({ unlock: false });
    for (let i = 0; i < 20; i++) expect((await raw(h, 'POST', '/session/unlock', { token: null, body: unlockBody(`wrong-${i}`) })).status).toBe(401);
    expect((await raw(h, 'POST', '/session/unlock', { token: null, body: unlockBody(PASSPHRASE) })).status).toBe(200);
  });

  it('successful unlocks count toward nothing: twenty in a row all succeed', async () => {
    h = await setup({ unlock: false });
    for (let i = 0; i < 20; i++) expect((await raw(h, 'POST', '/session/unlock', { token: null, body: unlockBody(PASSPHRASE) })).status).toBe(200);
  });

  it('abandoned attempts cost nothing: a guess whose client hung up while waiting is never checked', async () => {
    h = await setup({ unlock: false, scrypt: DEFAULT_SCRYPT });
    const abort = new AbortController();
    const sent = Array.from({ length: 40 }, (_, i) =>
      fetch(`${h!.url}/session/unlock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: unlockBody(`hang-up-${i}`), signal: abort.signal }).catch(() => null),
    );
    await new Promise((r) => setTimeout(r, 300));
    abort.abort();
    await Promise.all(sent);
    const t0 = performance.now();
    const mine = await raw(h, 'POST', '/session/unlock', { token: null, body: unlockBody(PASSPHRASE) });
    const ms = performance.now() - t0;
    const checked = h.logs.filter((l) => l.includes('"unlock_failed"')).length;
    console.log(`40 guesses abandoned after 300 ms: ${checked} were checked; the operator then unlocked in ${ms.toFixed(0)} ms`);
    expect(mine.status).toBe(200);
    // 40 checks would take 40 scrypts; those still waiting when their clients left were dropped.
    expect(checked).toBeLessThan(20);
    expect(h.running.cp.unlockQueue.waiting).toBe(0);
  });

  it('past the (generous) queue bound an attempt is refused as busy (503), never as rate-limited, and the bound frees as checks finish', async () => {
    h = await setup({ unlock: false, scrypt: DEFAULT_SCRYPT, unlockQueueMax: 2 });
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => raw(h!, 'POST', '/session/unlock', { token: null, body: unlockBody(`wrong-${i}`) })));
    const statuses = replies.map((r) => `${r.status}:${r.body.error.data.reason}`).sort();
    expect(statuses.filter((s) => s === '401:passphrase').length).toBeGreaterThanOrEqual(3); // one checking, two waiting
    expect(statuses.every((s) => s === '401:passphrase' || s === '503:busy')).toBe(true);
    expect((await raw(h, 'POST', '/session/unlock', { token: null, body: unlockBody(PASSPHRASE) })).status).toBe(200);
  });
});

describe('UnlockQueue', () => {
  const gate = () => {
    let open!: () => void;
    const p = new Promise<void>((r) => (open = r));
    return { p, open };
  };

  it('runs one check at a time, in arrival order, whatever each one answers', async () => {
    const q = new UnlockQueue(100);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const runs = Array.from({ length: 20 }, (_, i) =>
      q.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 1));
        order.push(i);
        running -= 1;
        if (i % 3 === 0) throw new Error('check failed');
        return i % 2 === 0;
      }),
    );
    const results = await Promise.allSettled(runs);
    expect(peak).toBe(1);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(7);
    expect(q.waiting).toBe(0);
  });

  it('drops a waiting attempt when its signal aborts, and refuses one already aborted', async () => {
    const q = new UnlockQueue(100);
    const first = gate();
    const checked: string[] = [];
    const a = q.run(async () => {
      checked.push('a');
      await first.p;
    });
    const ac = new AbortController();
    const b = q.run(async () => void checked.push('b'), ac.signal);
    const c = q.run(async () => void checked.push('c'));
    expect(q.waiting).toBe(2);
    ac.abort();
    await expect(b).rejects.toMatchObject({ data: { reason: 'aborted' } });
    expect(q.waiting).toBe(1);
    first.open();
    await Promise.all([a, c]);
    expect(checked).toEqual(['a', 'c']);
    await expect(q.run(async () => 1, AbortSignal.abort())).rejects.toBeInstanceOf(SessionError);
  });

  it('refuses past maxWaiting with a 503 busy (not 429), and accepts again once the line moves', async () => {
    const q = new UnlockQueue(2);
    const first = gate();
    const a = q.run(() => first.p);
    const waiting = [q.run(async () => 1), q.run(async () => 2)];
    await expect(q.run(async () => 3)).rejects.toMatchObject({ httpStatus: 503, data: { reason: 'busy' } });
    first.open();
    await Promise.all([a, ...waiting]);
    expect(await q.run(async () => 4)).toBe(4);
  });

  it('many abandoned attempts do not grow its memory without bound', async () => {
    const q = new UnlockQueue(4);
    const first = gate();
    const a = q.run(() => first.p);
    for (let i = 0; i < 1_000; i++) {
      const ac = new AbortController();
      const r = q.run(async () => 0, ac.signal);
      ac.abort();
      await r.catch(() => undefined);
    }
    expect(q.waiting).toBe(0);
    const live = q.run(async () => 'operator');
    first.open();
    await a;
    expect(await live).toBe('operator');
  });
});

describe('attack: a flood of bogus pairing claims to block a real device', () => {
  const claimBody = (code: string, challenge: string, key = generateEd25519KeyPair(), label = 'phone') =>
    JSON.stringify({ code, public_key: key.publicKeyHex, signature: toHex(signEd25519(fromHex(challenge, 'challenge', 32), key.secretKey)), label });

  it('claims with random codes (no session needed) are refused cheaply and never block the real claim', async () => {
    h = await setup();
    const p = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    const bogusChallenge = randomBytes(32).toString('hex');
    const attack = flood(8, 2_000, 20_000, () => raw(h!, 'POST', '/pair/claim', { token: null, body: claimBody(randomBytes(16).toString('base64url'), bogusChallenge) }));
    await new Promise((r) => setTimeout(r, 500));
    const t0 = performance.now();
    const real = await raw(h, 'POST', '/pair/claim', { token: null, body: claimBody(p.code, p.challenge) });
    const realMs = performance.now() - t0;
    const { counts, sent, elapsedMs } = await attack;
    console.log(`claim flood: ${sent} bogus claims from 8 clients in ${Math.round(elapsedMs)} ms (${(sent / (elapsedMs / 1000)).toFixed(0)}/s), replies ${JSON.stringify(Object.fromEntries(counts))}; the real claim took ${realMs.toFixed(0)} ms`);
    expect(real.status).toBe(200);
    expect(real.body.device.role).toBe('approver');
    expect([...counts.keys()]).toEqual(['403:pairing_code']);
    expect(sent).toBeGreaterThan(20); // the old global bucket refused every claim after 20 a minute
  });

  it('bad signatures on one code (sent by someone holding that code) do not touch another code; they burn only their own', async () => {
    h = await setup();
    const mine = await h.client.pairCreate({ role: 'approver', label: 'phone' });
    const theirs = await h.client.pairCreate({ role: 'viewer', label: 'leaked' });
    const wrongChallenge = randomBytes(32).toString('hex');
    const attack = flood(4, 1_000, 200, () => raw(h!, 'POST', '/pair/claim', { token: null, body: claimBody(theirs.code, wrongChallenge) }));
    const real = await raw(h, 'POST', '/pair/claim', { token: null, body: claimBody(mine.code, mine.challenge) });
    const { counts } = await attack;
    expect(real.status).toBe(200);
    // Three bad signatures burned the leaked code; every later claim with it is a plain 403.
    expect(counts.get('400:bad_signature')).toBe(3);
    expect([...counts.keys()].sort()).toEqual(['400:bad_signature', '403:pairing_code']);
    // Two bad signatures on a code leave it usable by its holder.
    const again = await h.client.pairCreate({ role: 'viewer', label: 'tablet' });
    for (let i = 0; i < 2; i++) expect((await raw(h, 'POST', '/pair/claim', { token: null, body: claimBody(again.code, wrongChallenge) })).status).toBe(400);
    expect((await raw(h, 'POST', '/pair/claim', { token: null, body: claimBody(again.code, again.challenge) })).status).toBe(200);
  });
});
