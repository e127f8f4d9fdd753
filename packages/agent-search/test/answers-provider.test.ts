/**
 * The DataProvider contract as the answerer uses it: indexes are built once, a rejecting provider
 * makes answer() reject (and is retried), malformed data is a fault (never a 200), another
 * provider plugs in, and every 200 answer carries the provider's source label.
 */
import { describe, expect, it } from 'vitest';
import { createAnswerer, createSampleProvider, type DataProvider } from '../src/answers/index.js';
import { SAMPLE_DEALS, SAMPLE_EVENT_ROWS, SAMPLE_PLACES, SAMPLE_RESORTS, SAMPLE_SOURCE } from '../src/data/sample.js';
import { PAID_PATHS, type PaidPath } from '../src/routes.js';
import { SUNDAY_1500Z, countingProvider, ok } from './answers-fixtures.js';

const QUERIES: Record<PaidPath, string> = {
  '/api/x402/search': 'q=ramen',
  '/api/x402/places': 'q=coffee',
  '/api/x402/deals': '',
  '/api/x402/stack': 'parks=both&adults=2&days=2',
  '/api/v1/geo/places': 'near=38.7223,-9.1393',
  '/api/v1/geo/events': 'days=30',
};

describe('provider contract', () => {
  it('loads and indexes the data once for many calls on every route', async () => {
    const { provider, calls } = countingProvider(createSampleProvider({ anchor: SUNDAY_1500Z }));
    const a = createAnswerer(provider, { now: () => SUNDAY_1500Z });
    // Concurrent first calls share one load.
    await Promise.all(PAID_PATHS.map((p) => ok(a, p, QUERIES[p])));
    for (const p of PAID_PATHS) await ok(a, p, QUERIES[p]);
    expect(calls).toEqual({ areas: 1, places: 1, deals: 1, events: 1, resorts: 1 });
  });

  it('a rejecting provider makes answer() reject (no 200, no 4xx), and the next call retries', async () => {
    const inner = createSampleProvider({ anchor: SUNDAY_1500Z });
    let fail = true;
    const provider: DataProvider = {
      ...inner,
      deals: async () => {
        if (fail) throw new Error('upstream deals feed is down');
        return inner.deals();
      },
    };
    const a = createAnswerer(provider, { now: () => SUNDAY_1500Z });
    await expect(a.answer('/api/x402/search', new URLSearchParams('q=ramen'))).rejects.toThrow('upstream deals feed is down');
    await expect(a.answer('/api/x402/places', new URLSearchParams())).rejects.toThrow('upstream deals feed is down');
    fail = false;
    expect((await ok(a, '/api/x402/search', 'q=ramen')).results.length).toBeGreaterThan(0);
  });

  it('malformed provider data is a fault, named in the rejection', async () => {
    const inner = createSampleProvider({ anchor: SUNDAY_1500Z });
    const cases: [string, Partial<DataProvider>, RegExp][] = [
      ['float price', { deals: async () => [{ ...SAMPLE_DEALS[0]!, price: '12.499' }] }, /deal deal-kumo-lunch: price/],
      ['regular below price', { deals: async () => [{ ...SAMPLE_DEALS[0]!, regular_price: '1.00' }] }, /regular_price is below price/],
      ['unknown area', { places: async () => [{ ...SAMPLE_PLACES[0]!, area: 'atlantis' }] }, /unknown area "atlantis"/],
      ['duplicate place', { places: async () => [SAMPLE_PLACES[0]!, SAMPLE_PLACES[0]!] }, /duplicate place id/],
      ['bad latitude', { places: async () => [{ ...SAMPLE_PLACES[0]!, lat: 123 }] }, /lat must be/],
      ['float event time', { events: async () => [{ ...(await inner.events())[0]!, start: 1.5 }] }, /integer Unix seconds/],
      ['operator named both', { resorts: async () => [{ ...SAMPLE_RESORTS[0]!, id: 'both' }, SAMPLE_RESORTS[1]!] }, /"both"/],
      ['bad time zone', { areas: async () => [{ ...(await inner.areas())[0]!, timezone: 'Mars/Olympus' }, (await inner.areas())[1]!] }, /Mars\/Olympus|time zone/i],
    ];
    for (const [name, patch, msg] of cases) {
      const a = createAnswerer({ ...inner, ...patch }, { now: () => SUNDAY_1500Z });
      await expect(a.answer('/api/x402/deals', new URLSearchParams()), name).rejects.toThrow(msg);
    }
  });

  it('a non-integer clock is a fault, not an answer', async () => {
    const a = createAnswerer(createSampleProvider({ anchor: SUNDAY_1500Z }), { now: () => 1.5 });
    await expect(a.answer('/api/x402/deals', new URLSearchParams())).rejects.toThrow(/Unix seconds/);
  });

  it('an unknown path is 404 (a caller bug), without touching the provider', async () => {
    const { provider, calls } = countingProvider(createSampleProvider({ anchor: SUNDAY_1500Z }));
    const a = createAnswerer(provider, { now: () => SUNDAY_1500Z });
    const r = await a.answer('/api/x402/nope' as PaidPath, new URLSearchParams());
    expect(r).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'no paid route /api/x402/nope' } } });
    expect(calls.places).toBe(0);
  });

  it('another provider plugs in: its data and its source label are what the answers show', async () => {
    const live: DataProvider = {
      source: { kind: 'live', name: 'test feed', note: 'a second provider, to prove the interface' },
      areas: async () => [{ id: 'oslo', name: 'Oslo', timezone: 'Europe/Oslo', country_code: 'no', state: 'Oslo', lat: 59.91, lon: 10.75 }],
      places: async () => [
        { id: 'fjord-cafe', name: 'Fjord Cafe', area: 'oslo', category: 'cafe', description: 'Waffles.', tags: ['waffles'], lat: 59.91, lon: 10.74, opening_hours: 'Mo-Su 08:00-20:00', price_level: 2 },
      ],
      deals: async () => [],
      events: async () => [],
      resorts: async () => SAMPLE_RESORTS.map((r) => ({ ...r, area: 'oslo' })),
    };
    const a = createAnswerer(live, { now: () => SUNDAY_1500Z });
    const b = await ok(a, '/api/x402/places', 'q=waffles');
    expect(b.results.map((p: { id: string }) => p.id)).toEqual(['fjord-cafe']);
    expect(b.results[0].hours).toMatchObject({ timezone: 'Europe/Oslo', local_time: '2026-11-22T16:00:00', open_now: true });
    expect(b.source).toEqual(live.source);
    expect((await ok(a, '/api/x402/search', 'q=ramen')).results).toEqual([]);
    expect((await ok(a, '/api/v1/geo/events', 'days=365')).results).toEqual([]);
  });

  it('an empty provider answers empty lists (no spatial index to query)', async () => {
    const empty: DataProvider = {
      source: { kind: 'live', name: 'empty', note: 'no data' },
      areas: async () => [],
      places: async () => [],
      deals: async () => [],
      events: async () => [],
      resorts: async () => SAMPLE_RESORTS.map((r) => ({ ...r, area: 'x' })),
    };
    const a = createAnswerer({ ...empty, areas: async () => [{ id: 'x', name: 'X', timezone: 'UTC', country_code: 'de', state: 'Berlin', lat: 0, lon: 0 }] }, { now: () => SUNDAY_1500Z });
    expect((await ok(a, '/api/v1/geo/places', 'near=0,0')).results).toEqual([]);
    expect((await ok(a, '/api/x402/places', '')).results).toEqual([]);
  });
});

describe('sample data set', () => {
  it('is labelled as fictional sample data in the data and in every answer', async () => {
    expect(SAMPLE_SOURCE.kind).toBe('sample');
    expect(SAMPLE_SOURCE.note).toMatch(/fictional/i);
    for (const r of SAMPLE_RESORTS) expect(r.name).toMatch(/fictional sample operator/);
    const a = createAnswerer(createSampleProvider({ anchor: SUNDAY_1500Z }), { now: () => SUNDAY_1500Z });
    for (const p of PAID_PATHS) {
      const b = await ok(a, p, QUERIES[p]);
      expect(b.source, p).toEqual(SAMPLE_SOURCE);
    }
    const plan = await ok(a, '/api/x402/search', 'mode=plan&who=2&when=2');
    expect(plan.source).toEqual(SAMPLE_SOURCE);
  });

  it('is big enough for meaningful ranking, geo and hours tests', () => {
    expect(SAMPLE_PLACES.length).toBeGreaterThanOrEqual(30);
    expect(new Set(SAMPLE_PLACES.map((p) => p.area)).size).toBe(2);
    expect(SAMPLE_DEALS.length).toBeGreaterThanOrEqual(15);
    expect(SAMPLE_EVENT_ROWS.length).toBeGreaterThanOrEqual(20);
    expect(SAMPLE_RESORTS).toHaveLength(2);
    for (const r of SAMPLE_RESORTS) {
      expect(r.tickets.map((t) => t.days)).toEqual(r.tickets.map((_, i) => i + 1));
      expect(r.hotels.map((h) => h.tier).sort()).toEqual(['budget', 'premium', 'standard']);
    }
  });
});
