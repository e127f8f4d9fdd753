/**
 * /api/x402/search (quick, deep), /api/x402/places and /api/x402/deals over the sample data:
 * ranking, richness of deep vs quick, empty results, filters, and every refusal naming its field.
 */
import { describe, expect, it } from 'vitest';
import { SAMPLE_DEALS, SAMPLE_PLACES } from '../src/data/sample.js';
import { ok, refused, sampleAnswerer } from './answers-fixtures.js';

const a = sampleAnswerer();
const S = '/api/x402/search' as const;

describe('search ranking', () => {
  it('ranks the obviously best match first', async () => {
    const b = await ok(a, S, 'q=kumo ramen house');
    expect(b.mode).toBe('quick');
    expect(b.results[0]).toMatchObject({ kind: 'place', id: 'orl-kumo-ramen', title: 'Kumo Ramen House' });
    const t = await ok(a, S, 'q=tile painting workshop&when=30');
    expect(t.results[0]).toMatchObject({ kind: 'event', id: 'ev-tile-workshop' });
    // Scores are in descending order.
    const scores = (b.results as { score: number }[]).map((r) => r.score);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
  });

  it('still finds it with a typo (fuzzy) and with a word prefix', async () => {
    const fuzzy = await ok(a, S, 'q=kumo raamen hous');
    expect(fuzzy.results[0].id).toBe('orl-kumo-ramen');
    const prefix = await ok(a, S, 'q=planetar');
    const ids = (prefix.results as { id: string }[]).map((r) => r.id);
    expect(ids).toContain('orl-science-dome');
    const azu = await ok(a, S, 'q=azulej');
    expect((azu.results as { id: string }[]).map((r) => r.id)).toContain('lis-azulejo-museum');
  });

  it('deep returns more and richer results than quick for the same query', async () => {
    const quick = await ok(a, S, 'q=kids family&mode=quick');
    const deep = await ok(a, S, 'q=kids family&mode=deep');
    expect(quick.results.length).toBe(5);
    expect(deep.results.length).toBeGreaterThan(quick.results.length);
    expect(deep.results.length).toBeLessThanOrEqual(20);
    expect(deep.total_matches).toBe(quick.total_matches);
    // Same ranking at the top.
    expect(deep.results.slice(0, 5).map((r: { id: string }) => r.id)).toEqual(quick.results.map((r: { id: string }) => r.id));
    // Richer: full record, matched terms and fields, counts by kind.
    for (const r of deep.results) {
      expect(r.record.id).toBe(r.id);
      expect(r.matched_terms.length).toBeGreaterThan(0);
      expect(r.matched_fields.length).toBeGreaterThan(0);
    }
    expect(quick.results[0].record).toBeUndefined();
    expect(deep.matches_by_kind.place + deep.matches_by_kind.deal + deep.matches_by_kind.event).toBe(deep.total_matches);
    const place = deep.results.find((r: { kind: string }) => r.kind === 'place');
    expect(place.record.hours.timezone).toMatch(/\//);
    expect(Array.isArray(place.deals_here)).toBe(true);
  });

  it('a query with no match is an empty 200 answer, not an error', async () => {
    for (const mode of ['quick', 'deep']) {
      const b = await ok(a, S, `q=xylophonequartz&mode=${mode}`);
      expect(b.results).toEqual([]);
      expect(b.total_matches).toBe(0);
      expect(b.source.kind).toBe('sample');
    }
  });

  it('area restricts results to that area', async () => {
    const all = await ok(a, S, 'q=ramen&mode=deep');
    const areas = new Set(all.results.map((r: { record: { area: string } }) => r.record.area));
    expect(areas).toEqual(new Set(['orlando', 'lisbon']));
    const lis = await ok(a, S, 'q=ramen&mode=deep&area=lisbon');
    expect(lis.results.length).toBeGreaterThan(0);
    for (const r of lis.results) expect(r.record.area).toBe('lisbon');
  });

  it('who with kids drops adults-only items; resident shows resident-only deals; budget caps prices', async () => {
    const adults = await ok(a, S, 'q=cocktails nightlife&mode=deep&who=2');
    expect(adults.results.some((r: { record: { adults_only: boolean } }) => r.record.adults_only)).toBe(true);
    const family = await ok(a, S, 'q=cocktails nightlife&mode=deep&who=2,1');
    for (const r of family.results) expect(r.record.adults_only).toBe(false);

    const visitor = await ok(a, S, 'q=resident&mode=deep');
    expect(visitor.results.some((r: { id: string }) => r.id === 'deal-aquarium-resident')).toBe(false);
    const resident = await ok(a, S, 'q=resident&mode=deep&resident=1');
    expect(resident.results.some((r: { id: string }) => r.id === 'deal-aquarium-resident')).toBe(true);

    const cheap = await ok(a, S, 'q=family kids&mode=deep&budget=10');
    const priced = cheap.results.filter((r: { kind: string }) => r.kind !== 'place');
    expect(priced.length).toBeGreaterThan(0);
    for (const r of priced) expect(Number(r.record.price) * 100).toBeLessThanOrEqual(1000);
    // 39.00 family pass is excluded at budget 10, included at 39.00 exactly.
    expect(cheap.results.some((r: { id: string }) => r.id === 'deal-science-family')).toBe(false);
    const exact = await ok(a, S, 'q=planetarium family pass&mode=deep&budget=39.00');
    expect(exact.results.some((r: { id: string }) => r.id === 'deal-science-family')).toBe(true);
  });

  it('events in search results are limited to the `when` window', async () => {
    // ev-ramen-fest starts 12 days after the anchor day; ev-ramen-popup 7 days after.
    const soon = await ok(a, S, 'q=ramen&mode=deep&when=10');
    const ids = soon.results.map((r: { id: string }) => r.id);
    expect(ids).toContain('ev-ramen-popup');
    expect(ids).not.toContain('ev-ramen-fest');
    const later = await ok(a, S, 'q=ramen&mode=deep&when=13');
    expect(later.results.map((r: { id: string }) => r.id)).toContain('ev-ramen-fest');
  });
});

describe('places and deals', () => {
  it('places without q lists by name, with category and limit', async () => {
    const b = await ok(a, '/api/x402/places', 'area=lisbon&limit=50');
    expect(b.total_matches).toBe(SAMPLE_PLACES.filter((p) => p.area === 'lisbon').length);
    const names = b.results.map((p: { name: string }) => p.name);
    expect(names).toEqual([...names].sort((x: string, y: string) => x.localeCompare(y, 'en')));
    const museums = await ok(a, '/api/x402/places', 'category=museum&limit=2');
    expect(museums.results).toHaveLength(2);
    expect(museums.total_matches).toBe(SAMPLE_PLACES.filter((p) => p.category === 'museum').length);
    for (const p of museums.results) expect(p.category).toBe('museum');
  });

  it('places with q ranks the best match first', async () => {
    const b = await ok(a, '/api/x402/places', 'q=custard tarts');
    expect(b.results[0].id).toBe('lis-pasteis-do-rio');
    expect(typeof b.results[0].score).toBe('number');
  });

  it('deals without q are sorted by saving (computed in cents), resident-only hidden unless resident=1', async () => {
    const b = await ok(a, '/api/x402/deals', 'limit=50');
    const savings = b.results.map((d: { saving: string }) => d.saving);
    const cents = savings.map((s: string) => BigInt(s.replace('.', '')));
    for (let i = 1; i < cents.length; i++) expect(cents[i - 1] >= cents[i]).toBe(true);
    expect(b.results.some((d: { resident_only: boolean }) => d.resident_only)).toBe(false);
    expect(b.total_matches).toBe(SAMPLE_DEALS.filter((d) => !d.resident_only).length);
    const r = await ok(a, '/api/x402/deals', 'limit=50&resident=1');
    expect(r.total_matches).toBe(SAMPLE_DEALS.length);
    const lunch = r.results.find((d: { id: string }) => d.id === 'deal-kumo-lunch');
    expect(lunch).toMatchObject({ price: '12.50', regular_price: '17.00', saving: '4.50' });
  });

  it('deals max_price is inclusive and compared in cents', async () => {
    const b = await ok(a, '/api/x402/deals', 'max_price=12.5&limit=50');
    const ids = b.results.map((d: { id: string }) => d.id);
    expect(ids).toContain('deal-kumo-lunch');
    expect(ids).not.toContain('deal-pho-combo');
    for (const d of b.results) expect(BigInt(d.price.replace('.', ''))).toBeLessThanOrEqual(1250n);
  });
});

describe('refusals name their field', () => {
  it('search quick/deep', async () => {
    await refused(a, S, '', 'q');
    await refused(a, S, 'q=%20%20', 'q');
    await refused(a, S, `q=${'x'.repeat(201)}`, 'q');
    expect((await ok(a, S, `q=${'x'.repeat(200)}`)).results).toEqual([]);
    await refused(a, S, 'q=ramen&mode=fast', 'mode');
    await refused(a, S, 'q=ramen&mode=quick&mode=deep', 'mode');
    await refused(a, S, 'q=ramen&budget=abc', 'budget');
    await refused(a, S, 'q=ramen&budget=1.234', 'budget');
    await refused(a, S, 'q=ramen&budget=-5', 'budget');
    await refused(a, S, 'q=ramen&who=0', 'who');
    await refused(a, S, 'q=ramen&who=2,21', 'who');
    await refused(a, S, 'q=ramen&who=two', 'who');
    await refused(a, S, 'q=ramen&when=0', 'when');
    await refused(a, S, 'q=ramen&when=366', 'when');
    await refused(a, S, 'q=ramen&when=1e2', 'when');
    await refused(a, S, 'q=ramen&resident=yes', 'resident');
    await refused(a, S, 'q=ramen&area=paris', 'area');
    const planOnly = await refused(a, S, 'q=ramen&days=3', 'days');
    expect(planOnly.message).toContain('mode=plan');
    expect(planOnly.code).toBe('unknown_parameter');
    const unknown = await refused(a, S, 'q=ramen&sort=price', 'sort');
    expect(unknown.code).toBe('unknown_parameter');
    const dup = await refused(a, S, 'q=ramen&q=pho', 'q');
    expect(dup.code).toBe('duplicate_parameter');
  });

  it('places and deals', async () => {
    await refused(a, '/api/x402/places', 'limit=0', 'limit');
    await refused(a, '/api/x402/places', 'limit=51', 'limit');
    await refused(a, '/api/x402/places', 'open=true', 'open');
    await refused(a, '/api/x402/places', 'area=atlantis', 'area');
    await refused(a, '/api/x402/places', `category=${'c'.repeat(41)}`, 'category');
    await refused(a, '/api/x402/places', 'near=1,1', 'near');
    await refused(a, '/api/x402/deals', 'max_price=-1', 'max_price');
    await refused(a, '/api/x402/deals', 'max_price=1,00', 'max_price');
    await refused(a, '/api/x402/deals', 'resident=2', 'resident');
    await refused(a, '/api/x402/deals', 'limit=07', 'limit');
  });
});
