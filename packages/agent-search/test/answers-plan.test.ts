/**
 * /api/x402/stack and /api/x402/search mode=plan: exact totals for hand-computed trips (prices
 * from the sample sheets in src/data/sample.ts), the arithmetic of every line, and every refusal.
 */
import { describe, expect, it } from 'vitest';
import { computePlan } from '../src/answers/plan.js';
import { ParamError } from '../src/answers/params.js';
import { SAMPLE_RESORTS } from '../src/data/sample.js';
import { ok, refused, sampleAnswerer } from './answers-fixtures.js';

const a = sampleAnswerer();
const ST = '/api/x402/stack' as const;
const S = '/api/x402/search' as const;

type Line = { label: string; unit_price: string; quantity: number; subtotal: string };
const cents = (s: string) => BigInt(s.replace('.', ''));

/** Every line is unit x quantity = subtotal, and the totals are the sums (checked in bigint cents). */
function checkArithmetic(plan: { line_items: Line[]; tickets_total: string; stay_total: string; total: string }) {
  let sum = 0n;
  for (const l of plan.line_items) {
    expect(l.unit_price).toMatch(/^\d+\.\d{2}$/);
    expect(l.subtotal).toMatch(/^\d+\.\d{2}$/);
    expect(cents(l.unit_price) * BigInt(l.quantity)).toBe(cents(l.subtotal));
    sum += cents(l.subtotal);
  }
  expect(cents(plan.tickets_total) + cents(plan.stay_total)).toBe(cents(plan.total));
  expect(sum).toBe(cents(plan.total));
}

describe('stack: exact totals', () => {
  it('one park, 2 adults + 1 kid, 3 days, 2 nights standard: 957.00 tickets + 458.00 stay = 1415.00', async () => {
    const b = await ok(a, ST, 'parks=starfall&adults=2&kids=1&days=3&nights=2&stay_style=standard');
    const p = b.plan;
    checkArithmetic(p);
    expect(p.line_items).toEqual([
      { label: 'Starfall Kingdom 3-day ticket, adult', unit_price: '329.00', quantity: 2, subtotal: '658.00' },
      { label: 'Starfall Kingdom 3-day ticket, child (ages 3-9)', unit_price: '299.00', quantity: 1, subtotal: '299.00' },
      { label: 'Nebula Lodge (Starfall Parks, standard): 2 nights x 1 room', unit_price: '229.00', quantity: 2, subtotal: '458.00' },
    ]);
    expect(p).toMatchObject({ tickets_total: '957.00', stay_total: '458.00', total: '1415.00', currency: 'USD', resident: false });
    expect(b.source.kind).toBe('sample');
  });

  it('resident pricing: the same trip as residents is 777.00 + 458.00 = 1235.00 (hotels unchanged)', async () => {
    const b = await ok(a, ST, 'parks=starfall&adults=2&kids=1&days=3&nights=2&stay_style=standard&resident=1');
    checkArithmetic(b.plan);
    expect(b.plan.line_items[0]).toEqual({ label: 'Starfall Kingdom 3-day ticket, resident adult', unit_price: '269.00', quantity: 2, subtotal: '538.00' });
    expect(b.plan.line_items[1]).toMatchObject({ unit_price: '239.00', quantity: 1, subtotal: '239.00' });
    expect(b.plan).toMatchObject({ tickets_total: '777.00', stay_total: '458.00', total: '1235.00', resident: true });
  });

  it('both parks, mix, residents, 2 adults + 2 kids, 5 days, 4 nights: 1692.00 + 1202.00 = 2894.00', async () => {
    const b = await ok(a, ST, 'parks=both&adults=2&kids=2&days=5&nights=4&stay_style=mix&resident=1');
    const p = b.plan;
    checkArithmetic(p);
    // 3 days Starfall then 2 days Tidewell; nights before days 2..5: 2 at Starfall, 2 at Tidewell.
    expect(p.operators).toEqual([
      { id: 'starfall', name: 'Starfall Parks (fictional sample operator)', park_name: 'Starfall Kingdom', days: 3, nights: 2 },
      { id: 'tidewell', name: 'Tidewell Resorts (fictional sample operator)', park_name: 'Tidewell Harbor Park', days: 2, nights: 2 },
    ]);
    expect(p.line_items.map((l: Line) => [l.unit_price, l.quantity, l.subtotal])).toEqual([
      ['269.00', 2, '538.00'], // Starfall 3-day resident adult
      ['239.00', 2, '478.00'], // Starfall 3-day resident child
      ['179.00', 2, '358.00'], // Tidewell 2-day resident adult
      ['159.00', 2, '318.00'], // Tidewell 2-day resident child
      ['489.00', 1, '489.00'], // Aurora Grand (premium), 1 night, 4 guests / 5 per room = 1 room
      ['139.00', 1, '139.00'], // Comet Value Inn (budget), 1 night
      ['455.00', 1, '455.00'], // Lighthouse Point (premium), 1 night
      ['119.00', 1, '119.00'], // Driftwood (budget), 1 night
    ]);
    expect(p.line_items[4].label).toContain('Aurora Grand Resort');
    expect(p.line_items[7].label).toContain('Driftwood Motor Lodge');
    expect(p).toMatchObject({ tickets_total: '1692.00', stay_total: '1202.00', total: '2894.00', stay_style: 'mix' });
  });

  it('rooms: 5 adults need two 4-guest rooms (2 x 229.00) but one 5-guest premium room', async () => {
    const std = await ok(a, ST, 'parks=starfall&adults=5&days=1&nights=1&stay_style=standard');
    checkArithmetic(std.plan);
    expect(std.plan.line_items[1]).toMatchObject({ label: 'Nebula Lodge (Starfall Parks, standard): 1 night x 2 rooms', quantity: 2, subtotal: '458.00' });
    expect(std.plan.total).toBe('1053.00'); // 5 x 119.00 + 458.00
    const prem = await ok(a, ST, 'parks=starfall&adults=5&days=1&nights=1&stay_style=premium');
    expect(prem.plan.line_items[1]).toMatchObject({ quantity: 1, subtotal: '489.00' });
  });

  it('days beyond the longest ticket add extra-day lines: Tidewell 7 days = 449.00 + 2 x 55.00 = 559.00', async () => {
    const b = await ok(a, ST, 'parks=tidewell&adults=1&days=7&nights=0');
    checkArithmetic(b.plan);
    expect(b.plan.line_items).toEqual([
      { label: 'Tidewell Harbor Park 5-day ticket, adult', unit_price: '449.00', quantity: 1, subtotal: '449.00' },
      { label: 'Tidewell Harbor Park extra park day beyond 5, adult', unit_price: '55.00', quantity: 2, subtotal: '110.00' },
    ]);
    expect(b.plan).toMatchObject({ total: '559.00', stay_total: '0.00' });
  });

  it('cents are exact: 3 x 109.50 + 209.50 = 538.00', async () => {
    const b = await ok(a, ST, 'parks=tidewell&adults=3&days=1&nights=1');
    checkArithmetic(b.plan);
    expect(b.plan.line_items[0]).toMatchObject({ unit_price: '109.50', quantity: 3, subtotal: '328.50' });
    expect(b.plan.line_items[1]).toMatchObject({ unit_price: '209.50', subtotal: '209.50' });
    expect(b.plan.total).toBe('538.00');
  });

  it('defaults: kids 0, nights = days - 1, stay_style standard', async () => {
    const b = await ok(a, ST, 'parks=tidewell&adults=2&days=3');
    expect(b.plan).toMatchObject({ nights: 2, stay_style: 'standard', party: { adults: 2, kids: 0 } });
    expect(b.plan.total).toBe('1017.00'); // 2 x 299.00 + 2 nights x 209.50
  });

  it('related deals are the visited operators\' own, shown but not applied', async () => {
    const b = await ok(a, ST, 'parks=tidewell&adults=2&days=2');
    const ids = b.related_deals.map((d: { id: string }) => d.id).sort();
    expect(ids).toEqual(['deal-tidewell-fastlane', 'deal-tidewell-kids-eat']);
    const res = await ok(a, ST, 'parks=starfall&adults=2&days=2&resident=1');
    expect(res.related_deals.map((d: { id: string }) => d.id)).toContain('deal-starfall-resident-fall');
  });

  it('refuses every bad parameter, naming it', async () => {
    const base = 'parks=starfall&adults=2&days=3';
    await refused(a, ST, 'adults=2&days=3', 'parks');
    await refused(a, ST, 'parks=disneyland&adults=2&days=3', 'parks');
    await refused(a, ST, 'parks=Starfall&adults=2&days=3', 'parks');
    await refused(a, ST, 'parks=starfall&days=3', 'adults');
    await refused(a, ST, 'parks=starfall&adults=0&days=3', 'adults');
    await refused(a, ST, 'parks=starfall&adults=21&days=3', 'adults');
    await refused(a, ST, 'parks=starfall&adults=1.5&days=3', 'adults');
    await refused(a, ST, 'parks=starfall&adults=+2&days=3', 'adults');
    await refused(a, ST, `${base}&kids=-1`, 'kids');
    await refused(a, ST, `${base}&kids=21`, 'kids');
    await refused(a, ST, 'parks=starfall&adults=2', 'days');
    await refused(a, ST, 'parks=starfall&adults=2&days=0', 'days');
    await refused(a, ST, 'parks=starfall&adults=2&days=15', 'days');
    await refused(a, ST, 'parks=both&adults=2&days=1', 'days');
    await refused(a, ST, `${base}&nights=4`, 'nights');
    await refused(a, ST, `${base}&stay_style=luxury`, 'stay_style');
    await refused(a, ST, `${base}&resident=yes`, 'resident');
    await refused(a, ST, `${base}&adult=2`, 'adult');
    await refused(a, ST, `${base}&adults=3`, 'adults');
    expect((await ok(a, ST, `${base}&nights=3`)).plan.nights).toBe(3);
  });

  it('computePlan refuses a malformed price sheet instead of guessing', () => {
    const input = { parks: 'starfall', adults: 1, kids: 0, days: 1, nights: 1, resident: false, stay_style: 'standard' as const };
    expect(() => computePlan(SAMPLE_RESORTS.slice(0, 1), input)).toThrow(/exactly two/);
    const noHotel = [{ ...SAMPLE_RESORTS[0]!, hotels: [] }, SAMPLE_RESORTS[1]!];
    expect(() => computePlan(noHotel, input)).toThrow(/no standard hotel/);
    const badPrice = [{ ...SAMPLE_RESORTS[0]!, tickets: [{ days: 1, adult: '1.999', child: '1', resident_adult: '1', resident_child: '1' }] }, SAMPLE_RESORTS[1]!];
    expect(() => computePlan(badPrice, input)).toThrow(/1\.999/);
    expect(() => computePlan(SAMPLE_RESORTS, { ...input, parks: 'nope' })).toThrow(ParamError);
  });
});

describe('search mode=plan', () => {
  it('costs every park and stay option, sorted by total, and recommends the dearest within budget', async () => {
    const b = await ok(a, S, 'mode=plan&who=2,2&when=3&budget=2500');
    expect(b).toMatchObject({ mode: 'plan', party: { adults: 2, kids: 2 }, days: 3, nights: 2, budget: '2500.00' });
    expect(b.options).toHaveLength(12); // (starfall, tidewell, both) x (budget, standard, premium, mix)
    const totals = b.options.map((o: { total: string }) => cents(o.total));
    for (let i = 1; i < totals.length; i++) expect(totals[i - 1] <= totals[i]).toBe(true);
    for (const o of b.options) {
      checkArithmetic(o.plan);
      expect(o.within_budget).toBe(cents(o.total) <= 250000n);
    }
    const fitting = b.options.filter((o: { within_budget: boolean }) => o.within_budget);
    const best = fitting[fitting.length - 1];
    expect(b.recommended).toMatchObject({ parks: best.parks, stay_style: best.stay_style, total: best.total });
  });

  it('each option equals the stack route for the same trip', async () => {
    const b = await ok(a, S, 'mode=plan&who=2,1&when=4&resident=1');
    for (const o of b.options) {
      const s = await ok(a, ST, `parks=${o.parks}&adults=2&kids=1&days=4&nights=3&resident=1&stay_style=${o.stay_style}`);
      expect(s.plan).toEqual(o.plan);
    }
    expect(b.recommended.reason).toMatch(/cheapest/);
    expect(b.recommended.total).toBe(b.options[0].total);
  });

  it('over budget: no recommendation, and the shortfall of the cheapest option', async () => {
    const b = await ok(a, S, 'mode=plan&adults=2&days=2&budget=100');
    expect(b.recommended).toBeNull();
    const cheapest = b.options[0];
    expect(b.over_budget).toEqual({ cheapest_total: cheapest.total, shortfall: `${((cents(cheapest.total) - 10000n) / 100n).toString()}.${((cents(cheapest.total) - 10000n) % 100n).toString().padStart(2, '0')}` });
  });

  it('explicit parks and stay_style narrow the options; q adds matching places, deals and events', async () => {
    const b = await ok(a, S, 'mode=plan&adults=2&kids=1&days=3&nights=2&parks=starfall&stay_style=standard&q=kids family&area=orlando');
    expect(b.options).toHaveLength(1);
    expect(b.options[0].total).toBe('1415.00'); // the hand-computed stack case above
    expect(b.places.length).toBeGreaterThan(0);
    for (const p of [...b.places, ...b.deals, ...b.events]) {
      expect(p.area).toBe('orlando');
      expect(p.adults_only).toBe(false);
    }
    for (const e of b.events) expect(e.start).toBeLessThan(b.trip_window.to);
    expect(b.notes).toEqual([]);
    const lis = await ok(a, S, 'mode=plan&adults=2&days=2&q=fado&area=lisbon');
    expect(lis.notes[0]).toContain('resort operators are in orlando');
    // ev-fado-night starts on day 3 at 20:00Z: outside a 2-day trip from now, inside a 4-day one.
    expect(lis.events).toEqual([]);
    expect(lis.places.map((p: { id: string }) => p.id)).toContain('lis-fado-house');
    const lis4 = await ok(a, S, 'mode=plan&adults=2&days=4&q=fado&area=lisbon');
    expect(lis4.events.map((e: { id: string }) => e.id)).toEqual(['ev-fado-night']);
  });

  it('refuses bad plan parameters, naming them', async () => {
    await refused(a, S, 'mode=plan&when=3', 'who');
    await refused(a, S, 'mode=plan&who=2', 'when');
    await refused(a, S, 'mode=plan&who=2&adults=2&when=3', 'who');
    await refused(a, S, 'mode=plan&who=2&when=3&days=3', 'when');
    await refused(a, S, 'mode=plan&who=2&when=15', 'when');
    await refused(a, S, 'mode=plan&who=0,1&when=3', 'who');
    await refused(a, S, 'mode=plan&who=2&when=3&nights=4', 'nights');
    await refused(a, S, 'mode=plan&who=2&when=1&parks=both', 'days');
    await refused(a, S, 'mode=plan&who=2&when=3&parks=atlantis', 'parks');
    await refused(a, S, 'mode=plan&who=2&when=3&stay_style=castle', 'stay_style');
    await refused(a, S, 'mode=plan&who=2&when=3&budget=12.345', 'budget');
    await refused(a, S, 'mode=plan&who=2&when=3&area=nowhere', 'area');
    await refused(a, S, 'mode=plan&who=2&when=3&limit=3', 'limit');
  });
});
