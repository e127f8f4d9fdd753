/**
 * @module answers/answerer
 * Turns (route, query string) into an answer. No HTTP and no payment here: the server verifies
 * payment, calls {@link Answerer.answer}, and settles only when the status is 200.
 *
 * Outcomes are values: a bad parameter is `{status: 400, body: {error: {code, message, field}}}`,
 * an unknown route is 404. Faults are not values: a provider that rejects, or data that fails
 * the checks in ./dataset.ts, makes `answer` reject, and the server treats that as a handler
 * failure (no charge).
 */
import { around, distance } from 'geokdbush';
import { PAID_PATHS, SEARCH_MODES, type PaidPath, type SearchMode } from '../routes.js';
import { loadDataset, textSearch, type Dataset, type DocKind, type TextHit } from './dataset.js';
import { localIso } from './hours.js';
import { centsOf, formatCents } from './money.js';
import { LIMITS, ROUTE_PARAMS } from './limits.js';
import { ParamError, QueryReader } from './params.js';
import { computePlan, planJson, STAY_STYLES, type Plan, type StayStyle } from './plan.js';
import type { AnswerResult, DataProvider, Deal, EventItem, Place } from './types.js';

export interface Answerer {
  answer(path: PaidPath, params: URLSearchParams): Promise<AnswerResult>;
}

export interface AnswererOptions {
  /** Current time in integer Unix seconds. Default: the wall clock. Tests pass a fixed value. */
  now?: () => number;
}

const DAY = 86_400;

function bad(e: ParamError): AnswerResult {
  return { status: 400, body: { error: { code: e.code, message: e.message, field: e.field } } };
}

/** The wall-clock default for `now`, in integer Unix seconds. */
function wallClock(): number {
  return Math.floor(Date.now() / 1000);
}

interface Ctx {
  ds: Dataset;
  now: number;
}

function iso(unix: number): string {
  return new Date(unix * 1000).toISOString().replace('.000Z', 'Z');
}

function checkArea(ds: Dataset, r: QueryReader): string | undefined {
  const area = r.text('area', 40);
  if (area !== undefined && !ds.areas.has(area)) {
    throw new ParamError('area', `area must be one of ${[...ds.areas.keys()].join(', ')} (got "${area}")`);
  }
  return area;
}

/** "who": "<adults>" or "<adults>,<kids>", e.g. "2,1". */
function parseWho(raw: string | undefined): { adults: number; kids: number } | undefined {
  if (raw === undefined) return undefined;
  const m = /^\s*(\d{1,2})\s*(?:,\s*(\d{1,2})\s*)?$/.exec(raw);
  const adults = m ? Number(m[1]) : NaN;
  const kids = m ? Number(m[2] ?? '0') : NaN;
  if (!m || adults < LIMITS.adults[0] || adults > LIMITS.adults[1] || kids > LIMITS.kids[1]) {
    throw new ParamError('who', `who must be "<adults>" or "<adults>,<kids>" with adults 1..20 and kids 0..20, e.g. "2,1" (got "${raw}")`);
  }
  return { adults, kids };
}

function placeJson(c: Ctx, p: Place) {
  const area = c.ds.areas.get(p.area);
  const h = c.ds.hours.get(p.id);
  return {
    kind: 'place' as const,
    id: p.id,
    name: p.name,
    area: p.area,
    category: p.category,
    description: p.description,
    tags: p.tags,
    lat: p.lat,
    lon: p.lon,
    price_level: p.price_level,
    adults_only: p.adults_only === true,
    hours: {
      opening_hours: p.opening_hours,
      // null: the value could not be evaluated (see error); open=1 never includes such a place.
      open_now: h ? h.isOpen(c.now) : null,
      timezone: area?.timezone ?? null,
      local_time: area ? localIso(c.now, area.timezone) : null,
      ...(h?.error ? { error: h.error } : {}),
    },
  };
}

function dealJson(d: Deal) {
  const saving = centsOf(d.regular_price, `deal ${d.id}`) - centsOf(d.price, `deal ${d.id}`);
  return {
    kind: 'deal' as const,
    id: d.id,
    title: d.title,
    area: d.area,
    place_id: d.place_id ?? null,
    operator_id: d.operator_id ?? null,
    category: d.category,
    description: d.description,
    tags: d.tags,
    price: d.price,
    regular_price: d.regular_price,
    saving: formatCents(saving),
    currency: d.currency,
    resident_only: d.resident_only === true,
    adults_only: d.adults_only === true,
  };
}

function eventJson(c: Ctx, e: EventItem) {
  const tz = c.ds.areas.get(e.area)?.timezone;
  return {
    kind: 'event' as const,
    id: e.id,
    title: e.title,
    area: e.area,
    venue: e.venue,
    category: e.category,
    description: e.description,
    tags: e.tags,
    lat: e.lat,
    lon: e.lon,
    start: e.start,
    end: e.end,
    start_iso: iso(e.start),
    end_iso: iso(e.end),
    start_local: tz ? localIso(e.start, tz) : null,
    timezone: tz ?? null,
    ongoing: e.start <= c.now && e.end > c.now,
    price: e.price,
    currency: e.currency,
    adults_only: e.adults_only === true,
  };
}

/** An event is in the window when it overlaps [now, now + days): upcoming or still running. */
function inWindow(e: EventItem, from: number, to: number): boolean {
  return e.end > from && e.start < to;
}

interface Filters {
  area?: string;
  kids: number;
  resident: boolean;
  budget?: bigint;
  from: number;
  to: number;
}

/** The shared keep-rule for search, deals and events; places have no price so budget ignores them. */
function keep(c: Ctx, f: Filters, kind: DocKind, ref: string): boolean {
  if (kind === 'place') {
    const p = c.ds.placeById.get(ref);
    return !!p && (!f.area || p.area === f.area) && !(f.kids > 0 && p.adults_only);
  }
  if (kind === 'deal') {
    const d = c.ds.dealById.get(ref);
    if (!d || (f.area && d.area !== f.area) || (f.kids > 0 && d.adults_only)) return false;
    if (d.resident_only && !f.resident) return false;
    return f.budget === undefined || centsOf(d.price, `deal ${d.id}`) <= f.budget;
  }
  const e = c.ds.eventById.get(ref);
  if (!e || (f.area && e.area !== f.area) || (f.kids > 0 && e.adults_only)) return false;
  if (!inWindow(e, f.from, f.to)) return false;
  return f.budget === undefined || centsOf(e.price, `event ${e.id}`) <= f.budget;
}

function full(c: Ctx, kind: DocKind, ref: string) {
  if (kind === 'place') return placeJson(c, c.ds.placeById.get(ref) as Place);
  if (kind === 'deal') return dealJson(c.ds.dealById.get(ref) as Deal);
  return eventJson(c, c.ds.eventById.get(ref) as EventItem);
}

function quickJson(c: Ctx, h: TextHit) {
  const base = { kind: h.kind, id: h.ref, score: h.score };
  if (h.kind === 'place') {
    const p = c.ds.placeById.get(h.ref) as Place;
    return { ...base, title: p.name, area: p.area, category: p.category, open_now: c.ds.hours.get(p.id)?.isOpen(c.now) ?? null };
  }
  if (h.kind === 'deal') {
    const d = c.ds.dealById.get(h.ref) as Deal;
    return { ...base, title: d.title, area: d.area, price: d.price, currency: d.currency };
  }
  const e = c.ds.eventById.get(h.ref) as EventItem;
  return { ...base, title: e.title, area: e.area, start: e.start, start_iso: iso(e.start), price: e.price, currency: e.currency };
}

function deepJson(c: Ctx, h: TextHit) {
  const record = full(c, h.kind, h.ref);
  const related =
    h.kind === 'place'
      ? { deals_here: c.ds.deals.filter((d) => d.place_id === h.ref).map((d) => d.id) }
      : h.kind === 'deal'
        ? { place: c.ds.dealById.get(h.ref)?.place_id ?? null }
        : {};
  return { kind: h.kind, id: h.ref, score: h.score, matched_terms: h.terms, matched_fields: h.fields, record, ...related };
}

function readMode(params: URLSearchParams): SearchMode {
  const all = params.getAll('mode');
  if (all.length > 1) throw new ParamError('mode', 'mode is given more than once', 'duplicate_parameter');
  const m = all[0] ?? 'quick';
  if (!(SEARCH_MODES as readonly string[]).includes(m)) {
    throw new ParamError('mode', `mode must be one of ${SEARCH_MODES.join(', ')} (got "${m}")`);
  }
  return m as SearchMode;
}

function search(c: Ctx, params: URLSearchParams) {
  const mode = readMode(params);
  if (mode === 'plan') return searchPlan(c, params);
  const r = new QueryReader(params, ROUTE_PARAMS.searchQuick, (n) =>
    (ROUTE_PARAMS.searchPlan as readonly string[]).includes(n) ? `${n} is accepted only with mode=plan` : undefined,
  );
  const q = r.text('q', LIMITS.qMax, true) as string;
  const area = checkArea(c.ds, r);
  const budget = r.cents('budget');
  const who = parseWho(r.raw('who'));
  const when = r.int('when', LIMITS.eventDays[0], LIMITS.eventDays[1], 30);
  const resident = r.flag('resident');
  const f: Filters = { kids: who?.kids ?? 0, resident, from: c.now, to: c.now + when * DAY, ...(area ? { area } : {}), ...(budget !== undefined ? { budget } : {}) };
  const hits = textSearch(c.ds, q, (kind, ref) => keep(c, f, kind, ref));
  const limit = mode === 'quick' ? LIMITS.quickResults : LIMITS.deepResults;
  const top = hits.slice(0, limit);
  const byKind = { place: 0, deal: 0, event: 0 };
  for (const h of hits) byKind[h.kind] += 1;
  return {
    mode,
    query: q,
    area: area ?? null,
    now: c.now,
    total_matches: hits.length,
    results: mode === 'quick' ? top.map((h) => quickJson(c, h)) : top.map((h) => deepJson(c, h)),
    ...(mode === 'deep'
      ? {
          matches_by_kind: byKind,
          filters: {
            budget: budget !== undefined ? formatCents(budget) : null,
            party: who ?? null,
            events_window: { from: f.from, to: f.to, from_iso: iso(f.from), to_iso: iso(f.to) },
            resident,
          },
        }
      : {}),
    source: c.ds.source,
  };
}

function optionsJson(p: Plan, budget: bigint | undefined) {
  return {
    parks: p.parks,
    stay_style: p.stay_style,
    total: p.total,
    currency: p.currency,
    within_budget: budget === undefined ? null : p.totalCents <= budget,
    plan: planJson(p),
  };
}

function searchPlan(c: Ctx, params: URLSearchParams) {
  const r = new QueryReader(params, ROUTE_PARAMS.searchPlan);
  const q = r.text('q', LIMITS.qMax);
  const area = checkArea(c.ds, r);
  const budget = r.cents('budget');
  const resident = r.flag('resident');
  const who = parseWho(r.raw('who'));
  if (who && (r.has('adults') || r.has('kids'))) {
    throw new ParamError('who', 'give either who or adults/kids, not both');
  }
  if (!who && !r.has('adults')) {
    throw new ParamError('who', 'mode=plan needs the party: who=<adults>[,<kids>] (e.g. "2,1") or adults (and kids)', 'missing_parameter');
  }
  const adults = who?.adults ?? r.int('adults', LIMITS.adults[0], LIMITS.adults[1]);
  const kids = who?.kids ?? r.int('kids', LIMITS.kids[0], LIMITS.kids[1], 0);
  if (r.has('when') && r.has('days')) throw new ParamError('when', 'give either when or days, not both');
  if (!r.has('when') && !r.has('days')) {
    throw new ParamError('when', 'mode=plan needs the trip length: when=<days> (1..14) or days', 'missing_parameter');
  }
  const days = r.has('when')
    ? r.int('when', LIMITS.tripDays[0], LIMITS.tripDays[1])
    : r.int('days', LIMITS.tripDays[0], LIMITS.tripDays[1]);
  const nights = r.int('nights', 0, days, days - 1);
  const ids = c.ds.resorts.map((x) => x.id);
  const parks = r.has('parks') ? r.oneOf('parks', [...ids, 'both']) : undefined;
  const style = r.has('stay_style') ? r.oneOf('stay_style', STAY_STYLES) : undefined;
  if (parks === 'both' && days < 2) throw new ParamError('days', `parks=both needs days of at least 2 (got ${days})`);

  const parkChoices = parks ? [parks] : [...ids, ...(days >= 2 ? ['both'] : [])];
  const styleChoices: StayStyle[] = style ? [style] : nights === 0 ? ['standard'] : [...STAY_STYLES];
  const plans: Plan[] = [];
  for (const p of parkChoices) {
    for (const s of styleChoices) plans.push(computePlan(c.ds.resorts, { parks: p, adults, kids, days, nights, resident, stay_style: s }));
  }
  plans.sort((a, b) => (a.totalCents < b.totalCents ? -1 : a.totalCents > b.totalCents ? 1 : 0));
  const fitting = budget === undefined ? plans : plans.filter((p) => p.totalCents <= budget);
  // With a budget: the most comfortable (dearest) option that fits. Without: the cheapest.
  const rec = budget === undefined ? plans[0] : fitting[fitting.length - 1];
  const cheapest = plans[0] as Plan;

  const f: Filters = { kids, resident, from: c.now, to: c.now + days * DAY, ...(area ? { area } : {}) };
  const extras = q ? textSearch(c.ds, q, (kind, ref) => keep(c, f, kind, ref)) : [];
  const resortAreas = [...new Set(c.ds.resorts.map((x) => x.area))];
  const notes =
    area && !resortAreas.includes(area)
      ? [`The resort operators are in ${resortAreas.join(', ')}; area=${area} only selects the places, deals and events.`]
      : [];
  const pick = (k: DocKind) => extras.filter((h) => h.kind === k).slice(0, LIMITS.planExtras).map((h) => full(c, h.kind, h.ref));
  return {
    mode: 'plan' as const,
    query: q ?? null,
    area: area ?? null,
    now: c.now,
    party: { adults, kids },
    days,
    nights,
    resident,
    budget: budget !== undefined ? formatCents(budget) : null,
    recommended: rec
      ? {
          parks: rec.parks,
          stay_style: rec.stay_style,
          total: rec.total,
          currency: rec.currency,
          reason: budget === undefined ? 'cheapest option (no budget given)' : 'the most comfortable option within the budget',
        }
      : null,
    ...(budget !== undefined && !rec
      ? { over_budget: { cheapest_total: cheapest.total, shortfall: formatCents(cheapest.totalCents - budget) } }
      : {}),
    options: plans.map((p) => optionsJson(p, budget)),
    places: pick('place'),
    deals: pick('deal'),
    events: pick('event'),
    trip_window: { from: f.from, to: f.to, from_iso: iso(f.from), to_iso: iso(f.to) },
    notes,
    source: c.ds.source,
  };
}

function places(c: Ctx, params: URLSearchParams) {
  const r = new QueryReader(params, ROUTE_PARAMS.places);
  const q = r.text('q', LIMITS.qMax);
  const area = checkArea(c.ds, r);
  const category = r.text('category', LIMITS.categoryMax)?.toLowerCase();
  const open = r.flag('open');
  const limit = r.int('limit', LIMITS.limit[0], LIMITS.limit[1], 10);
  const ok = (p: Place) =>
    (!area || p.area === area) && (!category || p.category === category) && (!open || c.ds.hours.get(p.id)?.isOpen(c.now) === true);
  let list: { p: Place; score: number | null }[];
  if (q) {
    list = textSearch(c.ds, q, (kind, ref) => kind === 'place' && ok(c.ds.placeById.get(ref) as Place)).map((h) => ({
      p: c.ds.placeById.get(h.ref) as Place,
      score: h.score,
    }));
  } else {
    list = c.ds.places.filter(ok).map((p) => ({ p, score: null }));
    list.sort((a, b) => a.p.name.localeCompare(b.p.name, 'en'));
  }
  return {
    query: q ?? null,
    area: area ?? null,
    now: c.now,
    total_matches: list.length,
    results: list.slice(0, limit).map((x) => ({ ...placeJson(c, x.p), score: x.score })),
    source: c.ds.source,
  };
}

function deals(c: Ctx, params: URLSearchParams) {
  const r = new QueryReader(params, ROUTE_PARAMS.deals);
  const q = r.text('q', LIMITS.qMax);
  const area = checkArea(c.ds, r);
  const category = r.text('category', LIMITS.categoryMax)?.toLowerCase();
  const maxPrice = r.cents('max_price');
  const resident = r.flag('resident');
  const limit = r.int('limit', LIMITS.limit[0], LIMITS.limit[1], 10);
  const f: Filters = { kids: 0, resident, from: c.now, to: c.now, ...(area ? { area } : {}), ...(maxPrice !== undefined ? { budget: maxPrice } : {}) };
  const ok = (d: Deal) => keep(c, f, 'deal', d.id) && (!category || d.category === category);
  let list: { d: Deal; score: number | null }[];
  if (q) {
    list = textSearch(c.ds, q, (kind, ref) => kind === 'deal' && ok(c.ds.dealById.get(ref) as Deal)).map((h) => ({
      d: c.ds.dealById.get(h.ref) as Deal,
      score: h.score,
    }));
  } else {
    // Without a query: biggest saving first (compared in cents), then by id for a stable order.
    const saving = (d: Deal) => centsOf(d.regular_price, d.id) - centsOf(d.price, d.id);
    list = c.ds.deals.filter(ok).map((d) => ({ d, score: null }));
    list.sort((a, b) => {
      const x = saving(b.d) - saving(a.d);
      return x > 0n ? 1 : x < 0n ? -1 : a.d.id.localeCompare(b.d.id);
    });
  }
  return {
    query: q ?? null,
    area: area ?? null,
    total_matches: list.length,
    results: list.slice(0, limit).map((x) => ({ ...dealJson(x.d), score: x.score })),
    source: c.ds.source,
  };
}

function stack(c: Ctx, params: URLSearchParams) {
  const r = new QueryReader(params, ROUTE_PARAMS.stack);
  const ids = c.ds.resorts.map((x) => x.id);
  const parks = r.oneOf('parks', [...ids, 'both']);
  const adults = r.int('adults', LIMITS.adults[0], LIMITS.adults[1]);
  const kids = r.int('kids', LIMITS.kids[0], LIMITS.kids[1], 0);
  const days = r.int('days', LIMITS.tripDays[0], LIMITS.tripDays[1]);
  const nights = r.int('nights', 0, days, days - 1);
  const resident = r.flag('resident');
  const stay_style = r.oneOf('stay_style', STAY_STYLES, 'standard');
  const plan = computePlan(c.ds.resorts, { parks, adults, kids, days, nights, resident, stay_style });
  const visited = new Set(plan.operators.map((o) => o.id));
  // The operators' own deals, for information: they are not applied to the total.
  const opDeals = c.ds.deals
    .filter((d) => d.operator_id !== undefined && visited.has(d.operator_id))
    .filter((d) => (resident || !d.resident_only) && !(kids > 0 && d.adults_only))
    .map(dealJson);
  return { plan: planJson(plan), related_deals: opDeals, related_deals_note: 'Not applied to the total; shown for information.', source: c.ds.source };
}

function geoPlaces(c: Ctx, params: URLSearchParams) {
  const r = new QueryReader(params, ROUTE_PARAMS.geoPlaces);
  const near = r.latLon('near', true) as { lat: number; lon: number };
  const q = r.text('q', LIMITS.qMax);
  const open = r.flag('open');
  const radius = r.int('radius_km', LIMITS.radiusKm[0], LIMITS.radiusKm[1], 25);
  const limit = r.int('limit', LIMITS.limit[0], LIMITS.limit[1], 10);
  // With q: only places matching it (by id → relevance score); the spatial index then orders by distance.
  const scores = q ? new Map(textSearch(c.ds, q, (kind) => kind === 'place').map((h) => [h.ref, h.score] as const)) : null;
  const ids = c.ds.geo
    ? around(c.ds.geo, near.lon, near.lat, limit, radius, (i) => {
        const p = c.ds.places[i] as Place;
        if (scores && !scores.has(p.id)) return false;
        return !open || c.ds.hours.get(p.id)?.isOpen(c.now) === true;
      })
    : [];
  const results = ids.map((i) => {
    const p = c.ds.places[i] as Place;
    const km = distance(near.lon, near.lat, p.lon, p.lat);
    return {
      ...placeJson(c, p),
      distance_km: Math.round(km * 1000) / 1000,
      distance_m: Math.round(km * 1000),
      score: scores?.get(p.id) ?? null,
    };
  });
  return { near, radius_km: radius, query: q ?? null, open_only: open, now: c.now, results, source: c.ds.source };
}

function geoEvents(c: Ctx, params: URLSearchParams) {
  const r = new QueryReader(params, ROUTE_PARAMS.geoEvents);
  const q = r.text('q', LIMITS.qMax);
  const days = r.int('days', LIMITS.eventDays[0], LIMITS.eventDays[1], 7);
  const area = checkArea(c.ds, r);
  const limit = r.int('limit', LIMITS.eventLimit[0], LIMITS.eventLimit[1], 20);
  const from = c.now;
  const to = c.now + days * DAY;
  const f: Filters = { kids: 0, resident: false, from, to, ...(area ? { area } : {}) };
  let list: EventItem[];
  if (q) {
    list = textSearch(c.ds, q, (kind, ref) => kind === 'event' && keep(c, f, kind, ref)).map((h) => c.ds.eventById.get(h.ref) as EventItem);
  } else {
    list = c.ds.events.filter((e) => keep(c, f, 'event', e.id));
  }
  // Chronological: an agent asking "what is on" wants the soonest first.
  list.sort((a, b) => a.start - b.start || a.id.localeCompare(b.id));
  return {
    query: q ?? null,
    area: area ?? null,
    days,
    from,
    to,
    from_iso: iso(from),
    to_iso: iso(to),
    total_matches: list.length,
    results: list.slice(0, limit).map((e) => eventJson(c, e)),
    source: c.ds.source,
  };
}

const HANDLERS: Record<PaidPath, (c: Ctx, params: URLSearchParams) => unknown> = {
  '/api/x402/search': search,
  '/api/x402/places': places,
  '/api/x402/deals': deals,
  '/api/x402/stack': stack,
  '/api/v1/geo/places': geoPlaces,
  '/api/v1/geo/events': geoEvents,
};

/**
 * Create an answerer over a data provider. The provider's data is fetched and indexed once, on
 * the first call (a failed load is retried on the next call), and shared by all later calls.
 *
 * @example
 * const answerer = createAnswerer(createSampleProvider());
 * const r = await answerer.answer('/api/x402/search', new URLSearchParams({ q: 'ramen', mode: 'quick' }));
 * if (r.status === 200) console.log(r.body);
 */
export function createAnswerer(provider: DataProvider, options: AnswererOptions = {}): Answerer {
  const clock = options.now ?? wallClock;
  let loading: Promise<Dataset> | undefined;
  const dataset = (): Promise<Dataset> => {
    if (!loading) {
      loading = loadDataset(provider);
      // Forget a failed load so a transient provider failure does not poison the answerer.
      loading.catch(() => {
        loading = undefined;
      });
    }
    return loading;
  };

  return {
    async answer(path: PaidPath, params: URLSearchParams): Promise<AnswerResult> {
      if (!(PAID_PATHS as readonly string[]).includes(path)) {
        return { status: 404, body: { error: { code: 'not_found', message: `no paid route ${String(path)}` } } };
      }
      const now = clock();
      if (!Number.isSafeInteger(now) || now < 0) throw new TypeError(`now() must return integer Unix seconds (got ${now})`);
      const ds = await dataset();
      try {
        return { status: 200, body: HANDLERS[path]({ ds, now }, params) };
      } catch (e) {
        if (e instanceof ParamError) return bad(e);
        throw e;
      }
    },
  };
}
