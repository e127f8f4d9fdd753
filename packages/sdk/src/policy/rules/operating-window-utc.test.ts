import { describe, expect, it } from 'vitest';
import type { RuleOf } from '../../schemas/policy.js';
import { nextWindowOpening, operatingWindowUtc, windowOpenAt } from './operating-window-utc.js';

type Window = RuleOf<'operating_window_utc'>;

const utc = (iso: string): number => Date.parse(iso) / 1000;
const win = (start: string, end: string, days?: number[]): Window =>
  days === undefined ? { rule: 'operating_window_utc', start, end } : { rule: 'operating_window_utc', start, end, days };

/**
 * An independent oracle built on Date's own calendar (not the module's day arithmetic): open when
 * the UTC time of day is in [start, end) of an allowed day, or, for an overnight window
 * (end <= start), in [start, 24:00) of an allowed day or [00:00, end) of the day after one.
 */
function oracle(rule: Window): (t: number) => boolean {
  const seconds = (hhmm: string): number => {
    const [h, m] = hhmm.split(':').map(Number);
    return (h ?? 0) * 3600 + (m ?? 0) * 60;
  };
  const s = seconds(rule.start);
  const e = seconds(rule.end);
  const allowed = [0, 1, 2, 3, 4, 5, 6].map((wd) => rule.days === undefined || rule.days.includes(wd));
  return (t) => {
    const d = new Date(t * 1000);
    const secOfDay = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds();
    const today = d.getUTCDay();
    const yesterday = (today + 6) % 7;
    if (s < e) return allowed[today] === true && secOfDay >= s && secOfDay < e;
    return (allowed[today] === true && secOfDay >= s) || (allowed[yesterday] === true && secOfDay < e);
  };
}
const oracleOpen = (rule: Window, t: number): boolean => oracle(rule)(t);

/** Deterministic PRNG (mulberry32), so every run checks the same instants. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('windowOpenAt', () => {
  it.each<[string, Window, string, boolean]>([
    ['same-day window, at start', win('09:00', '17:00'), '2026-01-01T09:00:00Z', true],
    ['same-day window, one second before start', win('09:00', '17:00'), '2026-01-01T08:59:59Z', false],
    ['same-day window, last second', win('09:00', '17:00'), '2026-01-01T16:59:59Z', true],
    ['same-day window, at end (exclusive)', win('09:00', '17:00'), '2026-01-01T17:00:00Z', false],
    ['minute precision: 09:30-09:31 at 09:30:59', win('09:30', '09:31'), '2026-01-01T09:30:59Z', true],
    ['minute precision: 09:30-09:31 at 09:31:00', win('09:30', '09:31'), '2026-01-01T09:31:00Z', false],
    ['overnight, before midnight', win('22:00', '06:00'), '2026-01-01T23:59:59Z', true],
    ['overnight, at midnight', win('22:00', '06:00'), '2026-01-02T00:00:00Z', true],
    ['overnight, at end', win('22:00', '06:00'), '2026-01-02T06:00:00Z', false],
    ['overnight, midday', win('22:00', '06:00'), '2026-01-02T12:00:00Z', false],
    ['overnight Sat only: Sun 03:00 belongs to Saturday', win('22:00', '06:00', [6]), '2026-01-04T03:00:00Z', true],
    ['overnight Sat only: Sat 03:00 belongs to Friday', win('22:00', '06:00', [6]), '2026-01-03T03:00:00Z', false],
    ['overnight Sun only: Mon 05:59 belongs to Sunday', win('22:00', '06:00', [0]), '2026-01-05T05:59:00Z', true],
    ['overnight Sun only: Sun 05:59 belongs to Saturday', win('22:00', '06:00', [0]), '2026-01-04T05:59:00Z', false],
    ['whole day 00:00-00:00, any instant', win('00:00', '00:00'), '2026-01-01T13:37:00Z', true],
    ['whole day Sun: Sun 00:00', win('00:00', '00:00', [0]), '2026-01-04T00:00:00Z', true],
    ['whole day Sun: Sun 23:59:59', win('00:00', '00:00', [0]), '2026-01-04T23:59:59Z', true],
    ['whole day Sun: Mon 00:00', win('00:00', '00:00', [0]), '2026-01-05T00:00:00Z', false],
    ['whole day Sun: Sat 23:59:59', win('00:00', '00:00', [0]), '2026-01-03T23:59:59Z', false],
    ['09:00-00:00 runs to midnight: 23:59:59', win('09:00', '00:00'), '2026-01-01T23:59:59Z', true],
    ['09:00-00:00 runs to midnight: 00:00 closed', win('09:00', '00:00'), '2026-01-02T00:00:00Z', false],
    ['the Unix epoch (a Thursday)', win('00:00', '01:00', [4]), '1970-01-01T00:00:00Z', true],
    ['before the epoch (Wed 1969-12-31)', win('00:00', '01:00', [3]), '1969-12-31T00:30:00Z', true],
  ])('%s', (_name, rule, iso, open) => {
    expect(windowOpenAt(rule, utc(iso))).toBe(open);
    expect(oracleOpen(rule, utc(iso))).toBe(open);
  });
});

describe('nextWindowOpening', () => {
  it.each<[string, Window, string, string]>([
    ['open now: returns t itself', win('09:00', '17:00'), '2026-01-01T12:34:56Z', '2026-01-01T12:34:56Z'],
    ['before today’s opening', win('09:00', '17:00'), '2026-01-01T08:00:00Z', '2026-01-01T09:00:00Z'],
    ['after today’s closing', win('09:00', '17:00'), '2026-01-01T17:00:00Z', '2026-01-02T09:00:00Z'],
    ['23:59 before a 00:00 opening', win('00:00', '06:00'), '2026-01-01T23:59:00Z', '2026-01-02T00:00:00Z'],
    ['Mon-Fri from Saturday', win('09:00', '17:00', [1, 2, 3, 4, 5]), '2026-01-03T10:00:00Z', '2026-01-05T09:00:00Z'],
    ['overnight Sat from Sunday 06:00', win('22:00', '06:00', [6]), '2026-01-04T06:00:00Z', '2026-01-10T22:00:00Z'],
    ['one day a week, just after it closed: seven days on', win('09:00', '10:00', [4]), '2026-01-01T10:00:00Z', '2026-01-08T09:00:00Z'],
    ['one day a week, one second before', win('09:00', '10:00', [4]), '2026-01-01T08:59:59Z', '2026-01-01T09:00:00Z'],
  ])('%s', (_name, rule, from, expected) => {
    expect(nextWindowOpening(rule, utc(from))).toBe(utc(expected));
  });

  it('the rule module delays to the next opening and passes when open', () => {
    const rule = win('09:00', '17:00');
    expect(operatingWindowUtc.earliestAt).toBe(nextWindowOpening);
    const base = {
      intent: { wallet: 'w', destination: 'd', amount: '1', asset_decimals: 6, initiator: 'operator', operation: { op: 'transfer' as const } },
      amount: 1n,
      created_at: 0,
      intentId: undefined,
      history: [],
      approvals: [],
      compliance_cleared: false,
      attestation_valid: false,
      destination_account: 'rDest',
    };
    expect(operatingWindowUtc.evaluate(rule, { ...base, now: utc('2026-01-01T12:00:00Z') }, 'operating_window_utc[0]')).toEqual({ effect: 'pass' });
    expect(operatingWindowUtc.evaluate(rule, { ...base, now: utc('2026-01-01T18:00:00Z') }, 'operating_window_utc[0]')).toEqual({
      effect: 'delay',
      not_before: utc('2026-01-02T09:00:00Z'),
      reason: `operating_window_utc[0]: outside 09:00-17:00 UTC (every day); opens at ${utc('2026-01-02T09:00:00Z')} (2026-01-02T09:00:00.000Z)`,
    });
  });
});

describe('property: nextWindowOpening over pseudo-random windows and instants', () => {
  const rand = mulberry32(0x5eed_2026);
  const pick = (n: number) => Math.floor(rand() * n);
  const hhmm = (): string => {
    // Bias toward the edges that matter (midnight, on-the-hour) while still covering odd minutes.
    const r = rand();
    const h = r < 0.15 ? 0 : r < 0.25 ? 23 : pick(24);
    const m = rand() < 0.5 ? 0 : rand() < 0.2 ? 59 : pick(60);
    return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
  };
  const days = (): number[] | undefined => {
    if (rand() < 0.3) return undefined;
    const set = [0, 1, 2, 3, 4, 5, 6].filter(() => rand() < 0.35);
    return set.length > 0 ? set : [pick(7)];
  };

  const SAMPLES = 3000;
  const T_MIN = utc('2020-01-01T00:00:00Z');
  const T_SPAN = 10 * 365 * 86400;
  /** The longest possible wait is under 7 days plus a day; scan at most this far. */
  const MAX_SCAN = 8 * 86400;

  it(`holds for ${SAMPLES} deterministic samples`, () => {
    let delayed = 0;
    let openAtOnce = 0;
    for (let k = 0; k < SAMPLES; k++) {
      const rule = win(hhmm(), hhmm(), days());
      // Half the instants on exact minute/window edges, half anywhere in the second range.
      let t = T_MIN + pick(T_SPAN);
      if (k % 2 === 0) t -= t % 60;
      const ctx = JSON.stringify({ rule, t });
      const open = oracle(rule);

      const next = nextWindowOpening(rule, t);
      expect(next, ctx).not.toBeNull();
      const n = next as number;
      expect(n, ctx).toBeGreaterThanOrEqual(t);
      expect(n - t, ctx).toBeLessThan(MAX_SCAN);
      expect(windowOpenAt(rule, n), ctx).toBe(true);
      expect(open(n), ctx).toBe(true);
      // The module agrees with the oracle at t and one second either side of every opening and
      // closing edge of the days around t (where off-by-one mistakes live).
      expect(windowOpenAt(rule, t), ctx).toBe(open(t));
      const day0 = Math.floor(t / 86400) * 86400;
      for (const day of [day0 - 86400, day0, day0 + 86400]) {
        for (const edge of [rule.start, rule.end]) {
          const at = day + Number(edge.slice(0, 2)) * 3600 + Number(edge.slice(3)) * 60;
          for (const x of [at - 1, at, at + 1]) {
            if (windowOpenAt(rule, x) !== open(x)) expect.fail(`${ctx}: module and oracle disagree at ${x}`);
          }
        }
      }
      if (n === t) {
        openAtOnce++;
        continue;
      }
      delayed++;
      expect(windowOpenAt(rule, n - 1), ctx).toBe(false);
      expect(open(n - 1), ctx).toBe(false);
      // No earlier open instant: a window only opens on a minute boundary, so checking t and every
      // minute boundary in (t, n) proves nothing opens before n. The scan uses the oracle; the
      // module is checked too on the first and last two hours of it and a sample in between.
      expect(open(t), ctx).toBe(false);
      for (let m = t - (t % 60) + 60, i = 0; m < n; m += 60, i++) {
        const viaModule = m - t < 7200 || n - m <= 7200 || i % 97 === 0;
        if (open(m) || (viaModule && windowOpenAt(rule, m))) {
          expect.fail(`${ctx}: open at ${m}, before the reported opening ${n}`);
        }
      }
      // Idempotent: asking again from the opening returns the opening.
      expect(nextWindowOpening(rule, n), ctx).toBe(n);
    }
    // The sample exercises both branches substantially.
    expect(delayed).toBeGreaterThan(SAMPLES / 5);
    expect(openAtOnce).toBeGreaterThan(SAMPLES / 10);
  }, 60_000);
});
