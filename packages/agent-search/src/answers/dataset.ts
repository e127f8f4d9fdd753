/**
 * @module answers/dataset
 * Loads a provider's data once, checks it, and builds the indexes every answer reads: one
 * minisearch full-text index over places, deals and events, one kdbush spatial index over
 * places, and the parsed opening hours of every place.
 */
import KDBush from 'kdbush';
import MiniSearch from 'minisearch';
import { parseHours, type ParsedHours } from './hours.js';
import { isDecimal, toCents } from './money.js';
import type { Area, DataProvider, Deal, EventItem, Place, ResortOperator, SourceInfo } from './types.js';

export type DocKind = 'place' | 'deal' | 'event';

interface SearchDoc {
  id: string;
  kind: DocKind;
  ref: string;
  area: string;
  title: string;
  category: string;
  tags: string;
  description: string;
  venue: string;
}

export interface Dataset {
  readonly source: SourceInfo;
  readonly areas: ReadonlyMap<string, Area>;
  readonly places: readonly Place[];
  readonly placeById: ReadonlyMap<string, Place>;
  readonly deals: readonly Deal[];
  readonly dealById: ReadonlyMap<string, Deal>;
  readonly events: readonly EventItem[];
  readonly eventById: ReadonlyMap<string, EventItem>;
  readonly resorts: readonly ResortOperator[];
  readonly hours: ReadonlyMap<string, ParsedHours>;
  /** Spatial index over places (item i is places[i]); null when there are no places. */
  readonly geo: KDBush | null;
  readonly text: MiniSearch<SearchDoc>;
}

export interface TextHit {
  readonly kind: DocKind;
  readonly ref: string;
  readonly score: number;
  readonly terms: readonly string[];
  readonly fields: readonly string[];
}

/** Words that carry no meaning for ranking. */
const STOP = new Set(['a', 'an', 'and', 'the', 'of', 'in', 'on', 'at', 'for', 'to', 'with', 'near', 'me', 'by', 'or']);

/**
 * Full-text search. Prefix matching for terms of 3+ characters and fuzzy matching (20% edit
 * distance) for terms of 5+ characters, so "ram" and "raamen" still find "ramen". Title matches
 * weigh 3x, tags 2x, category 1.5x, description and venue 1x.
 */
export function textSearch(
  ds: Dataset,
  query: string,
  filter: (kind: DocKind, ref: string) => boolean,
): TextHit[] {
  const hits = ds.text.search(query, {
    prefix: (term) => term.length >= 3,
    fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
    boost: { title: 3, tags: 2, category: 1.5 },
    combineWith: 'OR',
    filter: (r) => filter(r.kind as DocKind, r.ref as string),
  });
  return hits.map((h) => ({
    kind: h.kind as DocKind,
    ref: h.ref as string,
    score: Math.round(h.score * 10_000) / 10_000,
    terms: h.terms,
    fields: [...new Set(Object.values(h.match).flat())].sort(),
  }));
}

function fault(msg: string): never {
  throw new TypeError(`data provider: ${msg}`);
}

function checkId(kind: string, id: unknown, seen: Set<string>): void {
  if (typeof id !== 'string' || id === '') fault(`${kind} without an id`);
  if (seen.has(id)) fault(`duplicate ${kind} id "${id}"`);
  seen.add(id);
}

function checkCoord(what: string, lat: unknown, lon: unknown): void {
  if (typeof lat !== 'number' || !(lat >= -90 && lat <= 90)) fault(`${what}: lat must be a number in -90..90`);
  if (typeof lon !== 'number' || !(lon >= -180 && lon <= 180)) fault(`${what}: lon must be a number in -180..180`);
}

/** Fetch everything from the provider and build the indexes. Malformed data throws (a fault, not a 400). */
export async function loadDataset(provider: DataProvider): Promise<Dataset> {
  const [areaList, places, deals, events, resorts] = await Promise.all([
    provider.areas(),
    provider.places(),
    provider.deals(),
    provider.events(),
    provider.resorts(),
  ]);
  const areas = new Map<string, Area>();
  for (const a of areaList) {
    if (areas.has(a.id)) fault(`duplicate area id "${a.id}"`);
    checkCoord(`area ${a.id}`, a.lat, a.lon);
    areas.set(a.id, a);
  }
  const areaOf = (what: string, id: string): Area => areas.get(id) ?? fault(`${what} names unknown area "${id}"`);

  const seen = new Set<string>();
  const placeById = new Map<string, Place>();
  const hours = new Map<string, ParsedHours>();
  const docs: SearchDoc[] = [];
  for (const p of places) {
    checkId('place', p.id, seen);
    checkCoord(`place ${p.id}`, p.lat, p.lon);
    const area = areaOf(`place ${p.id}`, p.area);
    placeById.set(p.id, p);
    hours.set(p.id, parseHours(p.opening_hours, area));
    docs.push({ id: `place:${p.id}`, kind: 'place', ref: p.id, area: p.area, title: p.name, category: p.category, tags: p.tags.join(' '), description: p.description, venue: '' });
  }
  seen.clear();
  const dealById = new Map<string, Deal>();
  for (const d of deals) {
    checkId('deal', d.id, seen);
    areaOf(`deal ${d.id}`, d.area);
    const price = toCents(d.price);
    const regular = toCents(d.regular_price);
    if (price === undefined || regular === undefined) fault(`deal ${d.id}: price and regular_price must be decimal strings`);
    if (regular < price) fault(`deal ${d.id}: regular_price is below price`);
    dealById.set(d.id, d);
    docs.push({ id: `deal:${d.id}`, kind: 'deal', ref: d.id, area: d.area, title: d.title, category: d.category, tags: d.tags.join(' '), description: d.description, venue: d.place_id ? (placeById.get(d.place_id)?.name ?? '') : '' });
  }
  seen.clear();
  const eventById = new Map<string, EventItem>();
  for (const e of events) {
    checkId('event', e.id, seen);
    checkCoord(`event ${e.id}`, e.lat, e.lon);
    areaOf(`event ${e.id}`, e.area);
    if (!Number.isSafeInteger(e.start) || !Number.isSafeInteger(e.end) || e.end <= e.start) fault(`event ${e.id}: start and end must be integer Unix seconds with end > start`);
    if (!isDecimal(e.price)) fault(`event ${e.id}: price must be a decimal string`);
    eventById.set(e.id, e);
    docs.push({ id: `event:${e.id}`, kind: 'event', ref: e.id, area: e.area, title: e.title, category: e.category, tags: e.tags.join(' '), description: e.description, venue: e.venue });
  }
  seen.clear();
  for (const r of resorts) {
    checkId('resort operator', r.id, seen);
    if (r.id === 'both') fault('a resort operator may not have the id "both"');
    areaOf(`resort ${r.id}`, r.area);
  }

  const text = new MiniSearch<SearchDoc>({
    fields: ['title', 'category', 'tags', 'description', 'venue'],
    storeFields: ['kind', 'ref', 'area'],
    processTerm: (term) => {
      const t = term.toLowerCase();
      return STOP.has(t) ? null : t;
    },
  });
  text.addAll(docs);

  // kdbush refuses an empty index; a provider with no places simply has no spatial index.
  let geo: KDBush | null = null;
  if (places.length > 0) {
    geo = new KDBush(places.length);
    for (const p of places) geo.add(p.lon, p.lat);
    geo.finish();
  }

  return {
    source: provider.source,
    areas,
    places,
    placeById,
    deals,
    dealById,
    events,
    eventById,
    resorts,
    hours,
    geo,
    text,
  };
}
