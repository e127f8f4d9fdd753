import { Webhook } from 'standardwebhooks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signWebhook, verifyWebhook, WEBHOOK_SECRET_PREFIX } from './webhooks.js';

const NOW = 1_767_225_600;
const body = JSON.stringify({ id: 'evt_0000000000000001', type: 'intent.created', data: { amount: '12.5', note: 'é ✓' } });

function headers(secret: string | string[], id = 'evt_0000000000000001', timestamp = NOW, b: string = body) {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook({ secret, id, timestamp, body: b }) };
}

describe('webhook signatures (Standard Webhooks)', () => {
  it('generates whsec_ secrets of 32 random bytes, each different', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a.startsWith(WEBHOOK_SECRET_PREFIX)).toBe(true);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('what we sign verifies with the standardwebhooks package, and what it signs verifies with ours', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.integer({ min: 0, max: 2 ** 33 }), fc.stringMatching(/^[a-z0-9_]{1,40}$/), (b, ts, id) => {
        const secret = generateWebhookSecret();
        const theirs = new Webhook(secret);
        const h = headers(secret, id, ts, b);
        // Theirs checks the timestamp against the system clock: give it one it accepts.
        const now = Math.floor(Date.now() / 1000);
        const hNow = headers(secret, id, now, b);
        // Theirs throws when no signature matches (and would parse the body as JSON unless asked not to).
        expect(() => theirs.verify(b, hNow, { jsonParse: false })).not.toThrow();
        expect(() => theirs.verify(`${b}x`, hNow, { jsonParse: false })).toThrow(/signature/i);
        const sig = theirs.sign(id, new Date(ts * 1000), b);
        expect(sig).toBe(h['webhook-signature']);
        expect(verifyWebhook({ secret, headers: { ...h, 'webhook-signature': sig }, body: b, now: ts })).toEqual({ valid: true, id, timestamp: ts });
      }),
      { numRuns: 50 },
    );
  });

  it('accepts the body as bytes, and headers as a fetch Headers or with any case', () => {
    const secret = generateWebhookSecret();
    const h = headers(secret);
    expect(verifyWebhook({ secret, headers: new Headers(h), body: new TextEncoder().encode(body), now: NOW }).valid).toBe(true);
    const upper = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook({ secret, headers: upper, body, now: NOW }).valid).toBe(true);
  });

  it('supports several signatures (secret rotation) on either side', () => {
    const old = generateWebhookSecret();
    const next = generateWebhookSecret();
    const h = headers([old, next]);
    expect(h['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook({ secret: old, headers: h, body, now: NOW }).valid).toBe(true);
    expect(verifyWebhook({ secret: next, headers: h, body, now: NOW }).valid).toBe(true);
    // A receiver holding both accepts a delivery signed with either.
    expect(verifyWebhook({ secret: [old, next], headers: headers(next), body, now: NOW }).valid).toBe(true);
    // Entries of other schemes (v1a: asymmetric) are skipped, not misread.
    expect(verifyWebhook({ secret: old, headers: { ...h, 'webhook-signature': `v1a,xyz ${h['webhook-signature']}` }, body, now: NOW }).valid).toBe(true);
  });

  it('attack: a body changed in transit does not verify', () => {
    const secret = generateWebhookSecret();
    const r = verifyWebhook({ secret, headers: headers(secret), body: body.replace('12.5', '99.5'), now: NOW });
    expect(r).toMatchObject({ valid: false, reason: 'no_matching_signature' });
  });

  it('attack: a delivery signed with another secret does not verify', () => {
    const r = verifyWebhook({ secret: generateWebhookSecret(), headers: headers(generateWebhookSecret()), body, now: NOW });
    expect(r).toMatchObject({ valid: false, reason: 'no_matching_signature' });
  });

  it('attack: a replayed delivery outside the tolerance is refused, either side of now', () => {
    const secret = generateWebhookSecret();
    expect(verifyWebhook({ secret, headers: headers(secret), body, now: NOW + 300 }).valid).toBe(true);
    expect(verifyWebhook({ secret, headers: headers(secret), body, now: NOW + 301 })).toMatchObject({ valid: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyWebhook({ secret, headers: headers(secret), body, now: NOW - 301 })).toMatchObject({ valid: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyWebhook({ secret, headers: headers(secret), body, now: NOW + 3600, tolerance: 3600 }).valid).toBe(true);
  });

  it('attack: a timestamp or id swapped onto another signature does not verify', () => {
    const secret = generateWebhookSecret();
    const h = headers(secret);
    expect(verifyWebhook({ secret, headers: { ...h, 'webhook-timestamp': String(NOW + 1) }, body, now: NOW }).valid).toBe(false);
    expect(verifyWebhook({ secret, headers: { ...h, 'webhook-id': 'evt_0000000000000002' }, body, now: NOW }).valid).toBe(false);
  });

  it('refuses missing, repeated, malformed and oversized headers as invalid, not by throwing', () => {
    const secret = generateWebhookSecret();
    const h = headers(secret);
    const cases: [Record<string, string | string[]>, string][] = [
      [{ 'webhook-id': h['webhook-id'], 'webhook-timestamp': h['webhook-timestamp'] }, 'missing_header'],
      [{ ...h, 'webhook-id': [h['webhook-id'], 'other'] }, 'missing_header'],
      [{ ...h, 'webhook-timestamp': '1.7e9' }, 'bad_header'],
      [{ ...h, 'webhook-timestamp': '-1' }, 'bad_header'],
      [{ ...h, 'webhook-id': 'a b' }, 'bad_header'],
      [{ ...h, 'webhook-id': 'x'.repeat(257) }, 'bad_header'],
      [{ ...h, 'webhook-signature': `${'v1,AAAA '.repeat(600)}${h['webhook-signature']}` }, 'bad_header'],
      [{ ...h, 'webhook-signature': h['webhook-signature'].replace('v1,', 'v2,') }, 'no_matching_signature'],
      [{ ...h, 'webhook-signature': '' }, 'no_matching_signature'],
    ];
    for (const [hs, reason] of cases) expect(verifyWebhook({ secret, headers: hs, body, now: NOW })).toMatchObject({ valid: false, reason });
  });

  it('a secret that is not one is a configuration fault (throws), never a quiet false', () => {
    for (const bad of ['', 'whsec_', 'whsec_***', `whsec_${Buffer.alloc(8).toString('base64')}`, 'whsec_abc']) {
      expect(() => verifyWebhook({ secret: bad, headers: {}, body, now: NOW })).toThrow(RangeError);
      expect(() => signWebhook({ secret: bad, id: 'evt_1', timestamp: NOW, body })).toThrow(RangeError);
    }
    expect(() => signWebhook({ secret: generateWebhookSecret(), id: 'has space', timestamp: NOW, body })).toThrow(RangeError);
    expect(() => signWebhook({ secret: generateWebhookSecret(), id: 'evt_1', timestamp: 1.5, body })).toThrow(RangeError);
  });
});
