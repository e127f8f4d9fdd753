import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signApproval, verifyApprovals } from './approvals.js';
import { normalizeIntent } from './digest.js';
import { generateEd25519KeyPair } from './ed25519.js';
import { ValidationError } from './errors.js';
import { formatIdentity, isInitiator, parseInitiator, sameIdentity } from './identity.js';
import { evaluatePolicy } from './policy/engine.js';
import { PolicySetSchema } from './schemas/policy.js';

const request = (initiator?: string) => ({ wallet: 'w', destination: 'rDest', amount: '10', ...(initiator !== undefined ? { initiator } : {}) });

/** The spellings the probe used to let device alice approve what it initiated (issue #20, finding 2). */
const RESPELLINGS = ['Device:alice', 'device:alice ', ' device:alice', 'device: alice', 'DEVICE:alice', 'device:ALICE', 'device:\u200balice', 'device:alice\u200b', 'device:alice\n', 'device:\u0430lice' /* Cyrillic a */, 'alice'];

/** Strings near a valid initiator: one character inserted, deleted, or its case flipped. */
const nearInitiator = fc
  .tuple(
    fc.constantFrom('device:alice', 'agent:bot', 'operator', 'device:dev_3f2a9c'),
    fc.array(
      fc.tuple(
        fc.constantFrom('insert', 'delete', 'case'),
        fc.nat(),
        fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u200b', '\u200d', '\u202e', '\ufeff', '\u0000', ':', 'A', 'a', '\u0130', '\u0131', '\uff41', '\u0430', '-', '.', '_', '/'),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([base, edits]) => {
    let s = base;
    for (const [kind, at, ch] of edits) {
      const i = s.length === 0 ? 0 : at % (s.length + (kind === 'insert' ? 1 : 0));
      if (kind === 'insert') s = s.slice(0, i) + ch + s.slice(i);
      else if (kind === 'delete') s = s.slice(0, i) + s.slice(i + 1);
      else {
        const c = s.charAt(i);
        s = s.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + s.slice(i + 1);
      }
    }
    return s;
  });

describe('parseInitiator: one spelling per identity', () => {
  it.each([
    ['operator', { kind: 'operator' }],
    ['device:alice', { kind: 'device', id: 'alice' }],
    ['device:dev_3f2a9c', { kind: 'device', id: 'dev_3f2a9c' }],
    ['agent:bot', { kind: 'agent', name: 'bot' }],
    ['agent:demo-bot.v2', { kind: 'agent', name: 'demo-bot.v2' }],
    [`device:${'a'.repeat(120)}`, { kind: 'device', id: 'a'.repeat(120) }],
    ['app:billing-2', { kind: 'app', id: 'billing-2' }],
  ])('%j is %j', (s, want) => {
    expect(parseInitiator(s)).toEqual(want);
    expect(formatIdentity(parseInitiator(s)!)).toBe(s);
  });

  it.each([['Operator'], ['operator '], ['device:'], ['agent:'], ['device'], ['user:alice'], ['device:a:b'], [`device:${'a'.repeat(121)}`], ['agent:b ot'], [''], ['useragent:x'], ['app:'], ['App:x'], ['app:X']])(
    'refuses %j',
    (s) => {
      expect(parseInitiator(s)).toBeNull();
      expect(() => normalizeIntent(request(s))).toThrow(ValidationError);
    },
  );

  it('an app is not the agent or device of the same name', () => {
    expect(sameIdentity(parseInitiator('app:x')!, parseInitiator('agent:x')!)).toBe(false);
    expect(sameIdentity(parseInitiator('app:x')!, parseInitiator('device:x')!)).toBe(false);
    expect(sameIdentity(parseInitiator('app:x')!, parseInitiator('app:x')!)).toBe(true);
    expect(isInitiator('app:x', 'x')).toBe(false);
  });

  it('refuses what is not a string', () => {
    for (const v of [null, undefined, 1, {}, ['operator']]) expect(parseInitiator(v)).toBeNull();
  });

  it('the default initiator is operator', () => {
    expect(normalizeIntent(request()).initiator).toBe('operator');
  });

  it('compares identities as values: kind and id both', () => {
    expect(sameIdentity({ kind: 'device', id: 'alice' }, { kind: 'device', id: 'alice' })).toBe(true);
    expect(sameIdentity({ kind: 'device', id: 'alice' }, { kind: 'agent', name: 'alice' })).toBe(false);
    expect(sameIdentity({ kind: 'device', id: 'alice' }, { kind: 'device', id: 'Alice' })).toBe(false);
    expect(sameIdentity({ kind: 'operator' }, { kind: 'operator' })).toBe(true);
    expect(isInitiator('agent:alice', 'alice')).toBe(false);
    expect(isInitiator('operator', 'operator')).toBe(false);
  });
});

describe('attack: a device approves its own intent by respelling its initiator', () => {
  const alice = generateEd25519KeyPair();
  const approvers = new Map([['alice', { publicKey: alice.publicKeyHex }]]);
  const at = 1_767_225_600;
  const window = { createdAt: at, now: at };
  const approve = (id: string) => signApproval({ approver_id: 'alice', intent: id, verdict: 'approve', at, strong_auth: true }, alice.secretKey);

  it.each(RESPELLINGS)('an intent initiated as %j is refused at creation, naming initiator', (s) => {
    try {
      normalizeIntent(request(s));
      expect.unreachable('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).path).toBe('initiator');
    }
  });

  it('a stored intent whose initiator is not an identity counts no approval (fail closed)', () => {
    const id = `int_${'ab'.repeat(32)}`;
    for (const s of RESPELLINGS) {
      const r = verifyApprovals([approve(id)], { intentId: id, approvers, initiator: s, window });
      expect(r.valid).toEqual([]);
      expect(r.problems.map((p) => p.reason)).toEqual(['self_approval']);
    }
  });

  it('property: whatever the spelling, alice\'s approval counts exactly when the intent was not initiated by device alice', () => {
    const id = `int_${'cd'.repeat(32)}`;
    const approval = approve(id);
    fc.assert(
      fc.property(nearInitiator, (s) => {
        const who = parseInitiator(s);
        // the schema and the parser agree, and an accepted initiator has exactly one spelling
        let accepted = true;
        try {
          normalizeIntent(request(s));
        } catch (e) {
          if (!(e instanceof ValidationError)) throw e;
          accepted = false;
        }
        expect(accepted).toBe(who !== null);
        if (who !== null) expect(formatIdentity(who)).toBe(s);
        const counted = verifyApprovals([approval], { intentId: id, approvers, initiator: s, window }).valid.length === 1;
        expect(counted).toBe(who !== null && s !== 'device:alice');
      }),
      { numRuns: 1500 },
    );
  });
});

describe('agent rules read the parsed initiator', () => {
  const policy = (agent?: string) =>
    PolicySetSchema.parse({ wallet: 'w', version: 1, rules: [{ rule: 'agent_budget_ceiling', budget: '5', ...(agent ? { agent } : {}) }] });

  it('agent_budget_ceiling names its agent as an initiator; another spelling is refused when the policy loads', () => {
    expect(() => policy('Agent:bot')).toThrow();
    expect(() => policy('bot')).toThrow();
    expect(() => policy('agent:bot ')).toThrow();
    const d = evaluatePolicy(policy('agent:bot'), { ...request('agent:bot'), amount: '6' }, { now: 1_767_225_600 });
    expect(d.decision).toBe('deny');
    expect(evaluatePolicy(policy('agent:bot'), { ...request('agent:other'), amount: '6' }, { now: 1_767_225_600 }).decision).toBe('allow');
  });
});
