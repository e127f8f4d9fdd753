/**
 * /api/v1/geo/events: only events overlapping [now, now + days) and matching q, soonest first.
 * The sample events are anchored to the UTC midnight of a fixed instant; now is fixed too.
 */
import { describe, expect, it } from 'vitest';
import { sampleEvents, utcMidnight } from '../src/data/sample.js';
import { SUNDAY_1500Z, ok, refused, sampleAnswerer } from './answers-fixtures.js';

const E = '/api/v1/geo/events' as const;
const ANCHOR = utcMidnight(SUNDAY_1500Z); // 2026-11-22T00:00Z; now is 15:00Z that day

describe('events window', () => {
  const a = sampleAnswerer(SUNDAY_1500Z, SUNDAY_1500Z);

  it('days=7 lists exactly the seven events starting in the next 7 days, soonest first', async () => {
    const b = await ok(a, E, 'days=7');
    // Hand list from the sample rows: day offsets 1..6 (and none on day 0 after 15:00, none on day 7 before 15:00).
    expect(b.results.map((e: { id: string }) => e.id)).toEqual([
      'ev-comedy', // day 1 02:00Z
      'ev-dj-rooftop', // day 1 22:00Z
      'ev-jazz-lake', // day 2 23:00Z
      'ev-fado-night', // day 3 20:00Z
      'ev-kids-science', // day 4 14:00Z
      'ev-food-trucks', // day 5 22:00Z
      'ev-science-night', // day 6 22:00Z
    ]);
    expect(b.from).toBe(SUNDAY_1500Z);
    expect(b.to).toBe(SUNDAY_1500Z + 7 * 86_400);
    expect(b.from_iso).toBe('2026-11-22T15:00:00Z');
    const first = b.results[0];
    expect(first.start).toBe(ANCHOR + 86_400 + 2 * 3_600);
    expect(first.start_iso).toBe('2026-11-23T02:00:00Z');
    // 02:00Z is 21:00 the evening before in Orlando.
    expect(first.start_local).toBe('2026-11-22T21:00:00');
    expect(first.timezone).toBe('America/New_York');
  });

  it('the window end is exclusive to the hour: the day-7 19:00Z event needs days=8', async () => {
    const seven = await ok(a, E, 'days=7&q=ramen');
    expect(seven.results).toEqual([]);
    const eight = await ok(a, E, 'days=8&q=ramen');
    expect(eight.results.map((e: { id: string }) => e.id)).toEqual(['ev-ramen-popup']);
  });

  it('q keeps only matching events, still chronological; past events never appear', async () => {
    const b = await ok(a, E, 'q=ramen&days=30');
    expect(b.results.map((e: { id: string }) => e.id)).toEqual(['ev-ramen-popup', 'ev-ramen-fest']);
    const all = await ok(a, E, 'days=365&limit=100');
    const expected = sampleEvents(ANCHOR).filter((e) => e.end > SUNDAY_1500Z).length;
    expect(all.total_matches).toBe(expected);
    for (const e of all.results) expect(e.end).toBeGreaterThan(SUNDAY_1500Z);
    expect(all.results.map((e: { id: string }) => e.id)).not.toContain('ev-farmers-market'); // 3 days ago
  });

  it('an event already running at now is included and marked ongoing', async () => {
    const during = ANCHOR + 86_400 + 3 * 3_600; // ev-comedy runs 02:00-04:00Z on day 1
    const b = await ok(sampleAnswerer(during, SUNDAY_1500Z), E, 'days=1&q=comedy');
    expect(b.results).toHaveLength(1);
    expect(b.results[0]).toMatchObject({ id: 'ev-comedy', ongoing: true });
    const after = await ok(sampleAnswerer(ANCHOR + 86_400 + 4 * 3_600, SUNDAY_1500Z), E, 'days=1&q=comedy');
    expect(after.results).toEqual([]);
  });

  it('area and limit', async () => {
    const lis = await ok(a, E, 'days=30&area=lisbon');
    expect(lis.results.length).toBeGreaterThan(3);
    for (const e of lis.results) {
      expect(e.area).toBe('lisbon');
      expect(e.currency).toBe('EUR');
    }
    const two = await ok(a, E, 'days=30&limit=2');
    expect(two.results).toHaveLength(2);
    expect(two.total_matches).toBeGreaterThan(2);
  });

  it('refuses bad days, limit and area, naming the field', async () => {
    await refused(a, E, 'days=0', 'days');
    await refused(a, E, 'days=366', 'days');
    await refused(a, E, 'days=-1', 'days');
    await refused(a, E, 'days=1.5', 'days');
    await refused(a, E, 'days=', 'days');
    await refused(a, E, 'limit=101', 'limit');
    await refused(a, E, 'area=mars', 'area');
    await refused(a, E, `q=${'q'.repeat(201)}`, 'q');
    await refused(a, E, 'when=3', 'when');
  });

  it('sample events span -60..+60 days around the anchor day and the anchor must be integer seconds', async () => {
    const { createSampleProvider } = await import('../src/data/sample.js');
    const events = await createSampleProvider({ anchor: SUNDAY_1500Z }).events();
    expect(events.length).toBeGreaterThanOrEqual(20);
    const starts = events.map((e) => e.start);
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(ANCHOR - 60 * 86_400);
    expect(Math.max(...starts)).toBeLessThanOrEqual(ANCHOR + 60 * 86_400);
    expect(() => createSampleProvider({ anchor: 1.5 })).toThrow(/anchor/);
  });
});
