/**
 * /api/v1/geo/places (kdbush + geokdbush spatial index) and opening hours (opening_hours library,
 * evaluated in each area's IANA time zone), with fixed instants only.
 */
import { describe, expect, it } from 'vitest';
import { createAnswerer } from '../src/answers/index.js';
import { parseHours, wallClock, zonedDate } from '../src/answers/hours.js';
import type { DataProvider, Place } from '../src/answers/types.js';
import { SAMPLE_AREAS, SAMPLE_PLACES, createSampleProvider } from '../src/data/sample.js';
import {
  DST_MONDAY_1330Z,
  MONDAY_0200Z,
  PRE_DST_FRIDAY_1330Z,
  SUNDAY_1500Z,
  THANKSGIVING_1500Z,
  WEDNESDAY_1500Z,
  haversineKm,
  ok,
  refused,
  sampleAnswerer,
} from './answers-fixtures.js';

const G = '/api/v1/geo/places' as const;
const ORLANDO = { lat: 28.5383, lon: -81.3792 };
const orlando = SAMPLE_AREAS.find((x) => x.id === 'orlando')!;
const lisbon = SAMPLE_AREAS.find((x) => x.id === 'lisbon')!;

describe('geo: near', () => {
  const a = sampleAnswerer();

  it('returns the k nearest places, distance-sorted, matching a brute-force haversine ranking', async () => {
    const b = await ok(a, G, `near=${ORLANDO.lat},${ORLANDO.lon}&limit=8&radius_km=500`);
    expect(b.results).toHaveLength(8);
    const d = b.results.map((r: { distance_km: number }) => r.distance_km);
    expect([...d].sort((x, y) => x - y)).toEqual(d);
    // Independent check of the spatial index: sort all places by our own haversine.
    const brute = [...SAMPLE_PLACES]
      .map((p) => ({ id: p.id, km: haversineKm(ORLANDO.lat, ORLANDO.lon, p.lat, p.lon) }))
      .sort((x, y) => x.km - y.km)
      .slice(0, 8);
    expect(b.results.map((r: { id: string }) => r.id)).toEqual(brute.map((x) => x.id));
    // Distances agree with the test's own haversine (to the metre).
    for (const [i, r] of b.results.entries()) {
      expect(Math.abs(r.distance_m - Math.round(brute[i]!.km * 1000))).toBeLessThanOrEqual(1);
      expect(r.distance_km).toBeCloseTo(brute[i]!.km, 3);
    }
  });

  it('one distance checked by hand: Kumo Ramen House from the Orlando centre', async () => {
    const b = await ok(a, G, `near=${ORLANDO.lat},${ORLANDO.lon}&q=kumo ramen`);
    const kumo = b.results.find((r: { id: string }) => r.id === 'orl-kumo-ramen');
    const expected = haversineKm(28.5383, -81.3792, 28.5412, -81.3781); // ~0.34 km
    expect(expected).toBeGreaterThan(0.3);
    expect(expected).toBeLessThan(0.4);
    expect(kumo.distance_km).toBeCloseTo(expected, 3);
  });

  it('radius_km excludes farther places; q keeps only matching ones', async () => {
    const near = await ok(a, G, `near=${ORLANDO.lat},${ORLANDO.lon}&radius_km=5&limit=50`);
    expect(near.results.length).toBeGreaterThan(5);
    for (const r of near.results) expect(r.distance_km).toBeLessThanOrEqual(5);
    const within5 = SAMPLE_PLACES.filter((p) => haversineKm(ORLANDO.lat, ORLANDO.lon, p.lat, p.lon) <= 5).length;
    expect(near.results).toHaveLength(within5);
    // The Tidewell gate is ~12 km from the centre, the Starfall gate ~26 km.
    expect(near.results.some((r: { category: string }) => r.category === 'theme park')).toBe(false);
    const gates = `near=${ORLANDO.lat},${ORLANDO.lon}&q=starfall tidewell gate`;
    const r25 = await ok(a, G, `${gates}&radius_km=25`);
    expect(r25.results.map((r: { id: string }) => r.id)).toEqual(['orl-tidewell-gate']);
    const r40 = await ok(a, G, `${gates}&radius_km=40`);
    expect(r40.results.map((r: { id: string }) => r.id)).toEqual(['orl-tidewell-gate', 'orl-starfall-gate']);
    expect(r40.results[1].distance_km).toBeGreaterThan(25);
    // Lisbon places are ~6,600 km away: never within the 500 km maximum radius.
    const far = await ok(a, G, `near=${ORLANDO.lat},${ORLANDO.lon}&q=custard tarts&radius_km=500`);
    expect(far.results).toEqual([]);
  });

  it('refuses a missing, malformed or out-of-range near, naming near', async () => {
    await refused(a, G, '', 'near');
    await refused(a, G, 'near=91,0', 'near');
    await refused(a, G, 'near=-90.5,0', 'near');
    await refused(a, G, 'near=0,181', 'near');
    await refused(a, G, 'near=0,-180.01', 'near');
    await refused(a, G, 'near=abc', 'near');
    await refused(a, G, 'near=1,2,3', 'near');
    await refused(a, G, 'near=1e1,2', 'near');
    await refused(a, G, 'near=NaN,0', 'near');
    expect((await ok(a, G, 'near=90,180')).results).toEqual([]);
    await refused(a, G, 'near=0,0&radius_km=0', 'radius_km');
    await refused(a, G, 'near=0,0&radius_km=501', 'radius_km');
    await refused(a, G, 'near=0,0&limit=51', 'limit');
    await refused(a, G, 'near=0,0&open=yes', 'open');
  });
});

describe('hours: open=1 at a fixed now, in the place time zone', () => {
  it('Sunday 10:00 in Orlando: a Mo-Fr 09:00-17:00 place is excluded, a Su 08:00-16:00 place included', async () => {
    const a = sampleAnswerer(SUNDAY_1500Z);
    const all = await ok(a, '/api/x402/places', 'area=orlando&limit=50');
    const bike = all.results.find((p: { id: string }) => p.id === 'orl-cypress-bike');
    expect(bike.hours).toMatchObject({ opening_hours: 'Mo-Fr 09:00-17:00; PH off', open_now: false, timezone: 'America/New_York', local_time: '2026-11-22T10:00:00' });
    const open = await ok(a, '/api/x402/places', 'area=orlando&open=1&limit=50');
    const ids = open.results.map((p: { id: string }) => p.id);
    expect(ids).toContain('orl-lakeside-coffee');
    expect(ids).toContain('orl-night-owl-diner');
    expect(ids).not.toContain('orl-cypress-bike');
    expect(ids).not.toContain('orl-moonlit-jazz');
    for (const p of open.results) expect(p.hours.open_now).toBe(true);
    // The same filter on the geo route.
    const geo = await ok(a, G, `near=${ORLANDO.lat},${ORLANDO.lon}&open=1&limit=50`);
    expect(geo.results.map((p: { id: string }) => p.id)).not.toContain('orl-cypress-bike');
    expect(geo.results.map((p: { id: string }) => p.id)).toContain('orl-lakeside-coffee');
  });

  it('time-zone edge: 02:00 UTC Monday is still Sunday 21:00 in Orlando', async () => {
    const a = sampleAnswerer(MONDAY_0200Z);
    const open = await ok(a, '/api/x402/places', 'area=orlando&open=1&limit=50');
    const ids = open.results.map((p: { id: string }) => p.id);
    // "Su 18:00-23:00" is open at Sunday 21:00 local (it would be closed if read as Monday 02:00 UTC).
    expect(ids).toContain('orl-moonlit-jazz');
    expect(ids).not.toContain('orl-lakeside-coffee');
    // Lisbon at the same instant is Monday 02:00: the bar open "Th-Sa 21:00-04:00" is closed.
    const lis = await ok(a, '/api/x402/places', 'area=lisbon&limit=50');
    const bica = lis.results.find((p: { id: string }) => p.id === 'lis-bica-bar');
    expect(bica.hours).toMatchObject({ open_now: false, local_time: '2026-11-23T02:00:00', timezone: 'Europe/Lisbon' });
  });

  it('daylight-saving edge: 13:30 UTC is 09:30 EDT after the change (open), 08:30 EST before (closed)', async () => {
    const after = await ok(sampleAnswerer(DST_MONDAY_1330Z), '/api/x402/places', 'q=cypress bike repair');
    expect(after.results[0].hours).toMatchObject({ open_now: true, local_time: '2026-03-09T09:30:00' });
    const before = await ok(sampleAnswerer(PRE_DST_FRIDAY_1330Z), '/api/x402/places', 'q=cypress bike repair');
    expect(before.results[0].hours).toMatchObject({ open_now: false, local_time: '2026-03-06T08:30:00' });
  });

  it('public holiday: "PH off" closes on US Thanksgiving but not the day before', async () => {
    const wed = await ok(sampleAnswerer(WEDNESDAY_1500Z), '/api/x402/places', 'q=cypress bike repair');
    expect(wed.results[0].hours.open_now).toBe(true);
    const thu = await ok(sampleAnswerer(THANKSGIVING_1500Z), '/api/x402/places', 'q=cypress bike repair');
    expect(thu.results[0].hours.open_now).toBe(false);
  });

  it('wallClock and zonedDate give the area wall clock whatever the host zone', () => {
    expect(wallClock(SUNDAY_1500Z, 'America/New_York')).toEqual({ year: 2026, month: 11, day: 22, hour: 10, minute: 0, second: 0 });
    expect(wallClock(SUNDAY_1500Z, 'Europe/Lisbon')).toMatchObject({ hour: 15 });
    expect(wallClock(DST_MONDAY_1330Z, 'Europe/Lisbon')).toMatchObject({ hour: 13, minute: 30 });
    const d = zonedDate(MONDAY_0200Z, 'America/New_York');
    expect([d.getDay(), d.getHours()]).toEqual([0, 21]);
  });

  it('fails closed on an unparseable opening_hours value: open_now null, excluded by open=1', async () => {
    const bad: Place = { ...SAMPLE_PLACES[0]!, id: 'bad-hours', name: 'Broken Hours Cafe', opening_hours: 'Mo-Fr 25:00-26:00' };
    const inner = createSampleProvider({ anchor: SUNDAY_1500Z });
    const provider: DataProvider = { ...inner, places: async () => [...SAMPLE_PLACES, bad] };
    const a = createAnswerer(provider, { now: () => SUNDAY_1500Z });
    const found = await ok(a, '/api/x402/places', 'q=broken hours cafe');
    expect(found.results[0].id).toBe('bad-hours');
    expect(found.results[0].hours.open_now).toBeNull();
    expect(found.results[0].hours.error).toMatch(/25:00/);
    const open = await ok(a, '/api/x402/places', 'open=1&limit=50');
    expect(open.results.map((p: { id: string }) => p.id)).not.toContain('bad-hours');
    expect(parseHours('Mo-Fr 25:00-26:00', orlando).isOpen(SUNDAY_1500Z)).toBeNull();
  });

  it('answers do not depend on the host time zone (process TZ switched at run time)', async () => {
    const probe = async () => {
      const sun = await ok(sampleAnswerer(SUNDAY_1500Z), '/api/x402/places', 'open=1&limit=50');
      const mon = await ok(sampleAnswerer(MONDAY_0200Z), '/api/x402/places', 'open=1&limit=50');
      const dst = await ok(sampleAnswerer(DST_MONDAY_1330Z), '/api/x402/places', 'q=cypress bike repair');
      return {
        sun: sun.results.map((p: { id: string }) => p.id),
        mon: mon.results.map((p: { id: string }) => p.id),
        local: sun.results.map((p: { hours: { local_time: string } }) => p.hours.local_time),
        dst: dst.results[0].hours.open_now,
      };
    };
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'UTC';
      const reference = await probe();
      expect(reference.mon).toContain('orl-moonlit-jazz');
      expect(reference.dst).toBe(true);
      for (const tz of ['Asia/Tokyo', 'America/Los_Angeles', 'Pacific/Kiritimati']) {
        process.env.TZ = tz;
        // The switch really took effect in this process (else the comparison proves nothing).
        expect(new Date(SUNDAY_1500Z * 1000).getTimezoneOffset(), tz).not.toBe(0);
        expect(await probe(), tz).toEqual(reference);
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('an "unknown" rule is not treated as open', () => {
    const h = parseHours('Mo-Su 09:00-17:00 unknown', lisbon);
    expect(h.error).toBeUndefined();
    expect(h.isOpen(SUNDAY_1500Z)).toBeNull();
  });
});
