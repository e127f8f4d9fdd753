/**
 * Restrictions at the signer, over a real loopback socket with the SDK's signer client: what the
 * control plane may push (revoke or drop an approver, freeze a wallet) takes effect at once and
 * survives restarts; nothing that arrives over HTTP adds power back; only the operator's
 * `vault-signer lift`, on the signer host with the signer stopped, lifts one.
 */
import {
  restrictionDigest,
  SIGNER_TOKEN_HEADER,
  ValidationError,
  type Restriction,
  type SignerClient,
  type SignRequest,
} from '@vault/sdk';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Listening } from '../../src/http/index.js';
import { main } from '../../src/signer/cli.js';
import { sealKey } from '../../src/signer/keystore.js';
import { applyRestrictions, MAX_RESTRICTIONS_IN_FORCE } from '../../src/signer/restrictions.js';
import { makeWorld, PASSPHRASE, serveWorld, TEST_KDF, type World } from './helpers.js';

const TOKEN = 'restrictions-test-token-0123456789abcdef';

let w: World;
let server: Listening;
let signer: SignerClient;

beforeEach(async () => {
  w = await makeWorld();
  // The app reads w.state through a getter: the restart tests reopen the journal under it.
  ({ server, client: signer } = await serveWorld(w, TOKEN));
});
afterEach(async () => {
  await server.close();
  w.cleanup();
});

const bob = () => w.approvers[1] as World['approvers'][number];
const revokeBob = (): Restriction => ({ restriction: 'revoke_approver', approver_id: 'bob', public_key: bob().publicKeyHex });
const freeze: Restriction = { restriction: 'freeze_wallet', wallet: 'treasury' };

let amount = 5_000_000;
/** A fresh intent (a new amount each time) approved by `approvers` (basePolicy: weight 2 above 1 000 000). */
function fresh(approvers: string[]): Promise<SignRequest> {
  amount += 1;
  return w.request({ amount: String(amount) }, { approvers });
}

async function expectSigned(req: SignRequest): Promise<void> {
  const r = await signer.sign(req);
  if (!r.ok) throw new Error(`expected a signature, got ${r.refusal.refused.reason}: ${r.refusal.message}`);
}

async function expectRefused(req: SignRequest, reason: string, message: RegExp): Promise<void> {
  const before = w.signedDigests.length;
  const r = await signer.sign(req);
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.refusal.refused.reason).toBe(reason);
  expect(r.refusal.message).toMatch(message);
  expect(w.signedDigests).toHaveLength(before);
}

async function post(path: string, body: unknown, method = 'POST'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, { method, headers: { 'content-type': 'application/json', [SIGNER_TOKEN_HEADER]: TOKEN }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

function passphraseFile(): string {
  const file = join(w.stateDir, '..', 'passphrase');
  writeFileSync(file, `${PASSPHRASE}\n`, { mode: 0o600 });
  return file;
}

/** The world's receipt key, sealed with the passphrase where a real signer keeps it. */
async function sealReceiptKey(): Promise<void> {
  writeFileSync(join(w.stateDir, 'receipt-key.json'), JSON.stringify(await sealKey(w.receiptKey, { curve: 'ed25519', passphrase: PASSPHRASE, purpose: 'receipts', kdf: TEST_KDF })), { mode: 0o600 });
}

/** The operator's lift, as the CLI runs it. */
async function lift(...args: string[]): Promise<{ lifted: Restriction[]; count: number }> {
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  try {
    expect(await main(['lift', '--state-dir', w.stateDir, '--passphrase-file', passphraseFile(), ...args])).toBe(0);
  } finally {
    spy.mockRestore();
  }
  return JSON.parse(out) as { lifted: Restriction[]; count: number };
}

describe('restrictions at the signer', () => {
  it("attack: a revoked approver's approval no longer counts at the signer", async () => {
    await expectSigned(await fresh(['alice', 'bob']));
    const r = await signer.restrict([revokeBob()]);
    expect(r).toMatchObject({ received: restrictionDigest([revokeBob()]), added: 1, count: 1, digest: restrictionDigest([revokeBob()]), receipt_head: w.state.head });
    await expectRefused(await fresh(['alice', 'bob']), 'approvals', /bob.*revoked/);
    await expectRefused(await fresh(['bob', 'carol']), 'approvals', /bob.*revoked/);
    // Only bob lost power.
    await expectSigned(await fresh(['alice', 'carol']));
  });

  it('attack: drop_approver takes an approver out the same way', async () => {
    await signer.restrict([{ restriction: 'drop_approver', approver_id: 'carol' }]);
    await expectRefused(await fresh(['alice', 'carol']), 'approvals', /carol.*revoked/);
    await expectSigned(await fresh(['alice', 'bob']));
  });

  it('attack: a frozen wallet is refused at the signer even with every approval', async () => {
    const signedBefore = await fresh(['alice', 'bob', 'carol']);
    await expectSigned(signedBefore);
    // A freeze of a wallet this signer does not serve is kept and changes nothing here.
    expect(await signer.restrict([{ restriction: 'freeze_wallet', wallet: 'elsewhere' }])).toMatchObject({ added: 1, count: 1 });
    await expectSigned(await fresh(['alice', 'bob', 'carol']));
    await signer.restrict([freeze]);
    await expectRefused(await fresh(['alice', 'bob', 'carol']), 'policy_denied', /treasury is frozen on this signer/);
    // Even the payload it signed before the freeze (re-signing it is idempotent otherwise).
    await expectRefused(signedBefore, 'policy_denied', /frozen/);
    expect(w.state.recent(1)[0]?.kind).toBe('sign.refused');
  });

  it('a push is idempotent, durable before the reply, and answered with the digests both sides compute', async () => {
    const set = [revokeBob(), freeze];
    const first = await signer.restrict(set);
    expect(first).toMatchObject({ received: restrictionDigest(set), added: 2, count: 2 });
    const receipts = w.state.length;
    expect(w.state.recent(1)[0]?.kind).toBe('restrictions.added');
    // Same set again, reordered and repeated: nothing new, no receipt.
    const again = await signer.restrict([freeze, revokeBob(), freeze]);
    expect(again).toEqual({ ...first, added: 0 });
    expect(w.state.length).toBe(receipts);
    // A set that only partly overlaps adds the rest; the empty set lifts nothing.
    expect(await signer.restrict([freeze, { restriction: 'drop_approver', approver_id: 'carol' }])).toMatchObject({ added: 1, count: 3 });
    expect(await signer.restrict([])).toMatchObject({ received: restrictionDigest([]), added: 0, count: 3 });
    const shown = await signer.restrictions();
    expect(shown.count).toBe(3);
    expect(shown.digest).toBe(restrictionDigest([revokeBob(), freeze, { restriction: 'drop_approver', approver_id: 'carol' }]));
    expect(shown.restrictions.map((r) => r.since)).toEqual([w.clock.now, w.clock.now, w.clock.now]);
    expect(w.state.verify().verified).toBe(true);
  });

  it('attack: the restriction route cannot add power (unrevoke, unfreeze, a weight, a new approver): 400, nothing changes', async () => {
    await signer.restrict([revokeBob(), freeze]);
    const before = { shown: await signer.restrictions(), receipts: w.state.length };
    const attempts: unknown[] = [
      { restrictions: [{ restriction: 'unrevoke_approver', approver_id: 'bob' }] },
      { restrictions: [{ restriction: 'unfreeze_wallet', wallet: 'treasury' }] },
      { restrictions: [{ ...revokeBob(), revoked: false }] },
      { restrictions: [{ ...freeze, frozen: false }] },
      { restrictions: [{ restriction: 'drop_approver', approver_id: 'alice', weight: 5 }] },
      { restrictions: [{ restriction: 'add_approver', approver_id: 'mallory', public_key: 'ab'.repeat(32), weight: 2 }] },
      { restrictions: [], lift: [freeze] },
      // One valid restriction beside an invalid one: nothing of the body is applied.
      { restrictions: [{ restriction: 'drop_approver', approver_id: 'carol' }, { restriction: 'unfreeze_wallet', wallet: 'treasury' }] },
    ];
    for (const body of attempts) {
      const r = await post('/restrictions', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe(4000);
    }
    for (const method of ['DELETE', 'PUT', 'PATCH']) expect((await post('/restrictions', { restrictions: [] }, method)).status).toBe(404);
    // Without the signer token nothing is taken at all.
    const anon = await fetch(`${server.url}/restrictions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ restrictions: [{ restriction: 'drop_approver', approver_id: 'carol' }] }) });
    expect(anon.status).toBe(401);
    expect((await fetch(`${server.url}/restrictions`)).status).toBe(401);
    expect(await signer.restrictions()).toEqual(before.shown);
    expect(w.state.length).toBe(before.receipts);
    await expectRefused(await fresh(['alice', 'carol']), 'policy_denied', /frozen/);
  });

  it('past MAX_RESTRICTIONS_IN_FORCE a push is refused whole (400) and the signer keeps what it holds', async () => {
    const drops = (from: number, n: number): Restriction[] => Array.from({ length: n }, (_, i) => ({ restriction: 'drop_approver', approver_id: `gone-${from + i}` }));
    for (let i = 0; i < MAX_RESTRICTIONS_IN_FORCE; i += 4096) await applyRestrictions(drops(i, 4096), w.deps);
    expect(w.state.restrictionCount).toBe(MAX_RESTRICTIONS_IN_FORCE);
    const receipts = w.state.length;
    const r = await post('/restrictions', { restrictions: [freeze] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/at most 16384/);
    await expect(applyRestrictions([freeze], w.deps)).rejects.toBeInstanceOf(ValidationError);
    expect(w.state.length).toBe(receipts);
    // Restrictions it already holds are still acknowledged.
    expect(await signer.restrict(drops(0, 2))).toMatchObject({ added: 0, count: MAX_RESTRICTIONS_IN_FORCE });
  });

  it('restrictions survive a restart of the signer', async () => {
    await signer.restrict([revokeBob(), freeze]);
    const digest = w.state.restrictionDigest;
    w.reopen();
    expect(w.state.restrictionCount).toBe(2);
    expect((await signer.restrictions()).digest).toBe(digest);
    await expectRefused(await fresh(['alice', 'carol']), 'policy_denied', /frozen/);
  });

  it('lifting works only through the operator: `vault-signer lift` with the signer stopped', async () => {
    await signer.restrict([revokeBob(), freeze, { restriction: 'drop_approver', approver_id: 'carol' }]);
    await sealReceiptKey();
    // While the signer runs, its state directory is locked to it.
    await expect(main(['lift', '--state-dir', w.stateDir, '--passphrase-file', passphraseFile(), '--approver', 'bob'])).rejects.toThrow(/in use by signer process/);
    expect(w.state.restrictionCount).toBe(3);
    w.state.close();
    await expect(lift('--approver', 'nobody')).rejects.toThrow(/nothing to lift/);
    const first = await lift('--approver', 'bob');
    expect(first).toMatchObject({ lifted: [revokeBob()], count: 2 });
    w.reopen();
    expect(w.state.recent(1)[0]?.kind).toBe('restrictions.lifted');
    // bob counts again, but the wallet is still frozen.
    await expectRefused(await fresh(['alice', 'bob']), 'policy_denied', /frozen/);
    w.state.close();
    expect(await lift('--wallet', 'treasury')).toMatchObject({ lifted: [freeze], count: 1 });
    w.reopen();
    await expectSigned(await fresh(['alice', 'bob']));
    await expectRefused(await fresh(['alice', 'carol']), 'approvals', /carol.*revoked/);
    expect(w.state.verify().verified).toBe(true);
    // Lift needs the passphrase, something to lift, and a state it did not make up.
    w.state.close();
    const wrong = join(w.stateDir, '..', 'wrong-passphrase');
    writeFileSync(wrong, 'not the passphrase\n', { mode: 0o600 });
    await expect(main(['lift', '--state-dir', w.stateDir, '--passphrase-file', wrong, '--approver', 'carol'])).rejects.toThrow();
    w.reopen();
    expect(w.state.restrictionCount).toBe(1);
    await expect(main(['lift', '--state-dir', w.stateDir])).rejects.toThrow(/--approver ID or --wallet ID/);
    await expect(main(['lift', '--state-dir', join(w.stateDir, 'nowhere'), '--wallet', 'treasury'])).rejects.toThrow(/no signer state/);
  });
});
