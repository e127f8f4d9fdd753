/**
 * Issue #20 at the signer: the attacks of findings 2, 4, 6 and 7 against POST /sign and
 * verifyAndSign, each named after the attack, and the property behind finding 4: any one field of
 * a SignRequest replaced with an arbitrary or hostile JSON value is a 400 naming the field, a 403
 * refusal, or a signature, never a 500.
 */
import { APPROVAL_CLOCK_SKEW_SECONDS, intentId, SIGNER_TOKEN_HEADER, signApproval, type SignRequest } from '@vault/sdk';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignerApp } from '../../src/signer/app.js';
import { verifyAndSign, type SignOutcome } from '../../src/signer/sign.js';
import { EVERY_OPERATION, judge, pathsOf, replaced, replacement, serveForProbe, type Path } from '../malformed.js';
import { makeWorld, type World } from './helpers.js';

const TOKEN = 'test-token-0123456789abcdef-0123456789';
let w: World;
let probe: Awaited<ReturnType<typeof serveForProbe>>;

beforeAll(async () => {
  w = await makeWorld();
  probe = await serveForProbe(createSignerApp({ ...w.deps, token: TOKEN }));
});
afterAll(async () => {
  await probe.close();
  w.cleanup();
});

async function sign(body: string): Promise<{ status: number; body: any }> {
  return probe.post('/sign', body, { [SIGNER_TOKEN_HEADER]: TOKEN });
}

function refusal(outcome: SignOutcome): { reason: string; message: string } {
  if (outcome.ok) throw new Error(`expected a refusal, got a signature: ${outcome.response.summary}`);
  return { reason: outcome.refusal.refused.reason, message: outcome.refusal.message };
}

describe('attack: a device approves its own intent (finding 2)', () => {
  it.each(['Device:alice', 'device:alice ', 'device: alice', 'device:ALICE', 'device:\u200balice'])('an intent initiated as %j is a 400 naming the initiator at POST /sign', async (initiator) => {
    const req = await w.request();
    req.intent.request = { ...req.intent.request, initiator };
    const r = await sign(JSON.stringify(req));
    expect(r.status).toBe(400);
    expect(r.body.error.data.path).toBe('intent.request.initiator');
  });

  it('and is refused as intent_tampered when it reaches verifyAndSign unparsed, whatever id it carries', async () => {
    const req = await w.request();
    req.intent.request = { ...req.intent.request, initiator: 'Device:alice' };
    expect(refusal(await verifyAndSign(req, w.deps)).reason).toBe('intent_tampered');
  });

  it('device:alice\'s own approval of the intent it initiated is refused (self_approval)', async () => {
    const req = await w.request({ initiator: 'device:alice' });
    const r = refusal(await verifyAndSign(req, w.deps));
    expect(r.reason).toBe('approvals');
    expect(r.message).toMatch(/self_approval/);
  });
});

describe('attack: approvals with no freshness (finding 6)', () => {
  const dated = (at: number) => (id: string, who: string) => signApproval({ approver_id: who, intent: id, verdict: 'approve', at, strong_auth: true }, w.approvers.find((a) => a.id === who)!.secret);

  it('approvals dated at 1 are refused (stale)', async () => {
    const r = refusal(await verifyAndSign(await w.request(undefined, { sign: dated(1) }), w.deps));
    expect(r.reason).toBe('approvals');
    expect(r.message).toMatch(/stale/);
  });

  it('approvals dated ten years ahead of the signer\'s clock are refused (future)', async () => {
    const r = refusal(await verifyAndSign(await w.request(undefined, { sign: dated(w.clock.now + 10 * 365 * 86400) }), w.deps));
    expect(r.reason).toBe('approvals');
    expect(r.message).toMatch(/future/);
  });

  it('approvals dated before the intent\'s claimed creation, beyond the skew, are refused; within it they count', async () => {
    const createdAt = w.clock.now - 3600;
    const stale = refusal(await verifyAndSign(await w.request(undefined, { createdAt, sign: dated(createdAt - APPROVAL_CLOCK_SKEW_SECONDS - 1) }), w.deps));
    expect(stale.reason).toBe('approvals');
    const ok = await verifyAndSign(await w.request({ amount: '5000001' }, { createdAt, sign: dated(createdAt - APPROVAL_CLOCK_SKEW_SECONDS) }), w.deps);
    expect(ok.ok, ok.ok ? '' : ok.refusal.message).toBe(true);
  });
});

describe('attack: destinations not checked (finding 7)', () => {
  it.each([['abc'], [`mem1${'AB'.repeat(20)}`], [`mem2${'ab'.repeat(20)}`]])('an intent to %j, re-hashed to match, is refused as intent_tampered', async (destination) => {
    const req = await w.request();
    req.intent.request = { ...req.intent.request, destination };
    req.intent.id = `int_${'0'.repeat(64)}`;
    // the id cannot be made to match: the request is not an intent the control plane could create
    expect(() => intentId(req.intent.request)).not.toThrow();
    const r = refusal(await verifyAndSign(req, w.deps));
    expect(r.reason).toBe('intent_tampered');
    expect(r.message).toMatch(/destination/);
  });

  it.each([['NUL', '\u0000'], ['U+202E', '\u202e']])('a destination with %s is a 400 naming it at POST /sign', async (_what, destination) => {
    const req = await w.request();
    req.intent.request = { ...req.intent.request, destination };
    const r = await sign(JSON.stringify(req));
    expect(r.status).toBe(400);
    expect(r.body.error.data.path).toBe('intent.request.destination');
  });
});

describe('attack: HTTP 500 on malformed input (finding 4)', () => {
  it.each([['"abc"', 'abc'], ['"1.5"', '1.5'], ['"1e3"', '1e3'], ['NUL', '\u0000'], ['U+202E', '\u202e'], ['a 300 KB string', 'x'.repeat(300 * 1024)]])(
    'mpt_create maximum_amount %s is a 400 naming it',
    async (_what, maximum_amount) => {
      const req = await w.request();
      req.intent.request = { ...req.intent.request, operation: { op: 'mpt_create', asset_scale: 0, flags: 0, maximum_amount } as never };
      const r = await sign(JSON.stringify(req));
      expect(r.status).toBe(400);
      expect(r.body.error.data.path).toBe('intent.request.operation.maximum_amount');
    },
  );

  it('params.sequence given as -0 is a 400 naming it', async () => {
    const req = await w.request();
    const r = await sign(JSON.stringify(req).replace(/"sequence":\d+/, '"sequence":-0'));
    expect(r.status).toBe(400);
    expect(r.body.error.data.path).toBe('params.sequence');
  });
});

describe('property: no SignRequest answers 500 at POST /sign, whatever one field holds', () => {
  let base: SignRequest;
  beforeAll(async () => {
    base = await w.request({ asset_symbol: 'MEM', memo: 'rent', tags: [['invoice', '42']], initiator: 'agent:bot' });
    expect((await sign(JSON.stringify(base))).status).toBe(200);
  });

  it('one field replaced, at any depth', async () => {
    const paths = pathsOf(base);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), replacement, async (path: Path, r) => {
        judge(await sign(replaced(base, path, r)), path, r, [200, 403]);
      }),
      { numRuns: 300 },
    );
  });

  // The memory ledger builds transfers only, so these are refused once parsed (403); what is
  // tested is that every field of every operation is parsed without a fault.
  it.each(EVERY_OPERATION.filter((o) => o.op !== 'transfer'))('one field of the operation $op replaced', async (operation) => {
    const req = structuredClone(base);
    req.intent.request = { ...req.intent.request, operation } as SignRequest['intent']['request'];
    req.intent.id = intentId(req.intent.request);
    const paths = pathsOf(req).filter((p) => p[0] === 'intent');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), replacement, async (path: Path, r) => {
        judge(await sign(replaced(req, path, r)), path, r, [403]);
      }),
      { numRuns: 40 },
    );
  });

  it('left a receipt chain that verifies', () => {
    expect(w.state.verify().verified).toBe(true);
  });
});
