/**
 * @module answers/schemas
 * JSON Schemas (draft 2020-12) of each route's query parameters and 200 body, published in the
 * route table (../routes.ts) and from there in /.well-known/x402 and /llms.txt. Parameter names
 * and limits come from ./limits.ts, the same constants the validators enforce.
 *
 * Query parameters are strings on the wire, so every input property is a string with a pattern
 * or an enum. Unknown parameters are refused (additionalProperties: false).
 */
import { LIMITS, ROUTE_PARAMS } from './limits.js';

type Schema = { readonly [key: string]: unknown };

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

/** A decimal amount as it appears in data and parameters: up to two fraction digits. */
export const DECIMAL_PATTERN = '^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,2})?$';
/** A computed amount: always exactly two fraction digits. */
const AMOUNT = { type: 'string', pattern: '^-?(0|[1-9][0-9]*)\\.[0-9]{2}$' } as const;
const PRICE = { type: 'string', pattern: DECIMAL_PATTERN } as const;
const UNIX = { type: 'integer', minimum: 0, description: 'Unix seconds' } as const;
const ISO = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$' } as const;
const LOCAL = { type: ['string', 'null'], pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$' } as const;
const STR = { type: 'string' } as const;
const NSTR = { type: ['string', 'null'] } as const;
const BOOL = { type: 'boolean' } as const;
const STRS = { type: 'array', items: STR } as const;
const SCORE = { type: ['number', 'null'], description: 'full-text relevance; null when no q was given' } as const;

/** Integer range as a query-string pattern plus the range in words (the validator checks the range). */
function intParam(min: number, max: number, description: string, dflt?: number): Schema {
  return {
    type: 'string',
    pattern: '^(0|[1-9][0-9]{0,8})$',
    description: `${description} (an integer ${min}..${max}${dflt !== undefined ? `, default ${dflt}` : ''})`,
    'x-minimum': min,
    'x-maximum': max,
    ...(dflt !== undefined ? { default: String(dflt) } : {}),
  };
}

const P = {
  q: { type: 'string', minLength: 1, maxLength: LIMITS.qMax, description: 'free-text query (prefix and fuzzy matching)' },
  area: {
    type: 'string',
    pattern: '^[a-z0-9-]{1,40}$',
    description: 'area id; the sample data set has orlando and lisbon',
    examples: ['orlando', 'lisbon'],
  },
  budget: { type: 'string', pattern: DECIMAL_PATTERN, description: 'a decimal amount, at most two fraction digits' },
  resident: { type: 'string', enum: ['1', '0'], description: '1: local resident (resident prices and resident-only deals)' },
  open: { type: 'string', enum: ['1', '0'], description: "1: only places open now, in the place's own time zone" },
  who: {
    type: 'string',
    pattern: '^\\s*[0-9]{1,2}\\s*(,\\s*[0-9]{1,2}\\s*)?$',
    description: 'the party: "<adults>" or "<adults>,<kids>", adults 1..20, kids 0..20, e.g. "2,1"',
  },
  parks: {
    type: 'string',
    pattern: '^[a-z0-9-]{1,40}$',
    description: 'a resort operator id or "both"; the sample operators are starfall and tidewell (fictional)',
    examples: ['starfall', 'tidewell', 'both'],
  },
  stay_style: {
    type: 'string',
    enum: ['budget', 'standard', 'premium', 'mix'],
    description:
      'hotel tier for every night, or mix: the first night of each operator run at its premium hotel, the rest at its budget hotel; default standard',
  },
  category: { type: 'string', minLength: 1, maxLength: LIMITS.categoryMax, description: 'exact category, e.g. restaurant, cafe, museum' },
  limit: intParam(LIMITS.limit[0], LIMITS.limit[1], 'maximum results', 10),
} as const;

/** `examples` are query objects; /llms.txt renders the first as an example request. */
function inputSchema(
  names: readonly string[],
  props: Record<string, unknown>,
  required: readonly string[],
  examples: readonly Record<string, string>[],
  extra: Schema = {},
): Schema {
  for (const n of names) if (!(n in props)) throw new Error(`schema: no property for parameter ${n}`);
  for (const e of examples) for (const k of Object.keys(e)) if (!names.includes(k)) throw new Error(`schema: example uses unknown parameter ${k}`);
  return {
    $schema: DRAFT,
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, props[n]])),
    required: [...required],
    additionalProperties: false,
    examples,
    ...extra,
  };
}

const source = {
  type: 'object',
  description: 'where the data came from; kind "sample" means fictional demo data',
  properties: { kind: STR, name: STR, note: STR },
  required: ['kind', 'name', 'note'],
} as const;

const place = {
  type: 'object',
  properties: {
    kind: { const: 'place' },
    id: STR,
    name: STR,
    area: STR,
    category: STR,
    description: STR,
    tags: STRS,
    lat: { type: 'number' },
    lon: { type: 'number' },
    price_level: { type: 'integer', minimum: 1, maximum: 4 },
    adults_only: BOOL,
    hours: {
      type: 'object',
      properties: {
        opening_hours: STR,
        open_now: { type: ['boolean', 'null'], description: 'null: the hours could not be evaluated' },
        timezone: NSTR,
        local_time: LOCAL,
        error: STR,
      },
      required: ['opening_hours', 'open_now', 'timezone', 'local_time'],
    },
  },
  required: ['kind', 'id', 'name', 'area', 'category', 'lat', 'lon', 'hours'],
} as const;

const deal = {
  type: 'object',
  properties: {
    kind: { const: 'deal' },
    id: STR,
    title: STR,
    area: STR,
    place_id: NSTR,
    operator_id: NSTR,
    category: STR,
    description: STR,
    tags: STRS,
    price: PRICE,
    regular_price: PRICE,
    saving: AMOUNT,
    currency: STR,
    resident_only: BOOL,
    adults_only: BOOL,
  },
  required: ['kind', 'id', 'title', 'area', 'price', 'regular_price', 'saving', 'currency'],
} as const;

const event = {
  type: 'object',
  properties: {
    kind: { const: 'event' },
    id: STR,
    title: STR,
    area: STR,
    venue: STR,
    category: STR,
    description: STR,
    tags: STRS,
    lat: { type: 'number' },
    lon: { type: 'number' },
    start: UNIX,
    end: UNIX,
    start_iso: ISO,
    end_iso: ISO,
    start_local: LOCAL,
    timezone: NSTR,
    ongoing: BOOL,
    price: PRICE,
    currency: STR,
    adults_only: BOOL,
  },
  required: ['kind', 'id', 'title', 'area', 'start', 'end', 'start_iso', 'end_iso', 'price', 'currency'],
} as const;

const lineItem = {
  type: 'object',
  properties: { label: STR, unit_price: AMOUNT, quantity: { type: 'integer', minimum: 0 }, subtotal: AMOUNT },
  required: ['label', 'unit_price', 'quantity', 'subtotal'],
  additionalProperties: false,
} as const;

const plan = {
  type: 'object',
  description: 'a costed trip: every line item (unit price x quantity = subtotal), then the totals',
  properties: {
    parks: STR,
    operators: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: STR, name: STR, park_name: STR, days: { type: 'integer' }, nights: { type: 'integer' } },
        required: ['id', 'name', 'park_name', 'days', 'nights'],
      },
    },
    party: {
      type: 'object',
      properties: { adults: { type: 'integer' }, kids: { type: 'integer' } },
      required: ['adults', 'kids'],
    },
    days: { type: 'integer' },
    nights: { type: 'integer' },
    resident: BOOL,
    stay_style: { enum: ['budget', 'standard', 'premium', 'mix'] },
    currency: STR,
    line_items: { type: 'array', items: lineItem },
    tickets_total: AMOUNT,
    stay_total: AMOUNT,
    total: AMOUNT,
    notes: STRS,
  },
  required: ['parks', 'operators', 'party', 'days', 'nights', 'resident', 'stay_style', 'currency', 'line_items', 'tickets_total', 'stay_total', 'total'],
} as const;

const anyRecord = { anyOf: [place, deal, event] } as const;
const windowSchema = {
  type: 'object',
  properties: { from: UNIX, to: UNIX, from_iso: ISO, to_iso: ISO },
  required: ['from', 'to', 'from_iso', 'to_iso'],
} as const;

const PLAN_ONLY = ROUTE_PARAMS.searchPlan.filter((n) => !(ROUTE_PARAMS.searchQuick as readonly string[]).includes(n));

/** Input and output schema per route path. */
export const ROUTE_SCHEMAS = {
  '/api/x402/search': {
    input: inputSchema(
      ROUTE_PARAMS.searchPlan,
      {
        ...P,
        mode: { type: 'string', enum: ['quick', 'deep', 'plan'], default: 'quick', description: 'quick: top 5; deep: top 20 with full records; plan: costed resort trip options' },
        when: {
          type: 'string',
          pattern: '^(0|[1-9][0-9]{0,8})$',
          description: `an integer. quick/deep: events within the next ${LIMITS.eventDays[0]}..${LIMITS.eventDays[1]} days (default 30); plan: trip length in days, ${LIMITS.tripDays[0]}..${LIMITS.tripDays[1]} (or use days)`,
          'x-minimum': 1,
          'x-maximum': LIMITS.eventDays[1],
        },
        adults: intParam(LIMITS.adults[0], LIMITS.adults[1], 'plan only: adults (or use who)'),
        kids: intParam(LIMITS.kids[0], LIMITS.kids[1], 'plan only: children (child prices)', 0),
        days: intParam(LIMITS.tripDays[0], LIMITS.tripDays[1], 'plan only: park days (or use when)'),
        nights: intParam(0, LIMITS.tripDays[1], 'plan only: hotel nights, at most days; default days - 1'),
        q: { ...P.q, description: 'free-text query; required for quick and deep, optional for plan (adds matching places, deals, events)' },
      },
      [],
      [
        { q: 'ramen', mode: 'quick' },
        { q: 'kids science', mode: 'deep', area: 'orlando', who: '2,2' },
        { mode: 'plan', who: '2,1', when: '3', budget: '2500', resident: '1' },
      ],
      {
        description: `q is required unless mode=plan. ${PLAN_ONLY.join(', ')} are accepted only with mode=plan; mode=plan needs the party (who or adults) and the length (when or days).`,
        if: { properties: { mode: { const: 'plan' } }, required: ['mode'] },
        then: {
          allOf: [
            { anyOf: [{ required: ['who'] }, { required: ['adults'] }] },
            { anyOf: [{ required: ['when'] }, { required: ['days'] }] },
          ],
        },
        else: { required: ['q'], not: { anyOf: PLAN_ONLY.map((n) => ({ required: [n] })) } },
      },
    ),
    output: {
      $schema: DRAFT,
      type: 'object',
      description: 'quick and deep: ranked results of every kind; plan: costed options and a recommendation',
      properties: {
        mode: { enum: ['quick', 'deep', 'plan'] },
        query: NSTR,
        area: NSTR,
        now: UNIX,
        total_matches: { type: 'integer', minimum: 0 },
        results: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              kind: { enum: ['place', 'deal', 'event'] },
              id: STR,
              score: { type: 'number' },
              title: STR,
              matched_terms: STRS,
              matched_fields: STRS,
              record: anyRecord,
            },
            required: ['kind', 'id', 'score'],
          },
        },
        matches_by_kind: {
          type: 'object',
          properties: { place: { type: 'integer' }, deal: { type: 'integer' }, event: { type: 'integer' } },
          required: ['place', 'deal', 'event'],
        },
        recommended: {
          type: ['object', 'null'],
          properties: { parks: STR, stay_style: STR, total: AMOUNT, currency: STR, reason: STR },
          required: ['parks', 'stay_style', 'total', 'currency', 'reason'],
        },
        over_budget: { type: 'object', properties: { cheapest_total: AMOUNT, shortfall: AMOUNT }, required: ['cheapest_total', 'shortfall'] },
        options: {
          type: 'array',
          items: {
            type: 'object',
            properties: { parks: STR, stay_style: STR, total: AMOUNT, currency: STR, within_budget: { type: ['boolean', 'null'] }, plan },
            required: ['parks', 'stay_style', 'total', 'currency', 'within_budget', 'plan'],
          },
        },
        budget: { type: ['string', 'null'] },
        places: { type: 'array', items: place },
        deals: { type: 'array', items: deal },
        events: { type: 'array', items: event },
        trip_window: windowSchema,
        notes: STRS,
        source,
      },
      required: ['mode', 'now', 'source'],
    },
  },
  '/api/x402/places': {
    input: inputSchema(ROUTE_PARAMS.places, P, [], [{ q: 'coffee', area: 'orlando', open: '1' }, { category: 'museum', limit: '5' }]),
    output: {
      $schema: DRAFT,
      type: 'object',
      properties: {
        query: NSTR,
        area: NSTR,
        now: UNIX,
        total_matches: { type: 'integer', minimum: 0 },
        results: { type: 'array', items: { ...place, properties: { ...place.properties, score: SCORE } } },
        source,
      },
      required: ['query', 'area', 'now', 'total_matches', 'results', 'source'],
    },
  },
  '/api/x402/deals': {
    input: inputSchema(
      ROUTE_PARAMS.deals,
      {
        ...P,
        category: { ...P.category, description: 'exact deal category, e.g. food, attraction, outdoor, resort, nightlife' },
        max_price: { ...P.budget, description: 'only deals at or below this price (decimal)' },
      },
      [],
      [{ q: 'family', max_price: '40' }, { area: 'lisbon', resident: '1' }],
    ),
    output: {
      $schema: DRAFT,
      type: 'object',
      properties: {
        query: NSTR,
        area: NSTR,
        total_matches: { type: 'integer', minimum: 0 },
        results: { type: 'array', items: { ...deal, properties: { ...deal.properties, score: SCORE } } },
        source,
      },
      required: ['query', 'area', 'total_matches', 'results', 'source'],
    },
  },
  '/api/x402/stack': {
    input: inputSchema(
      ROUTE_PARAMS.stack,
      {
        ...P,
        adults: intParam(LIMITS.adults[0], LIMITS.adults[1], 'adults'),
        kids: intParam(LIMITS.kids[0], LIMITS.kids[1], 'children (child prices)', 0),
        days: intParam(LIMITS.tripDays[0], LIMITS.tripDays[1], 'park days (parks=both needs at least 2)'),
        nights: intParam(0, LIMITS.tripDays[1], 'hotel nights, at most days; default days - 1'),
      },
      ['parks', 'adults', 'days'],
      [
        { parks: 'both', adults: '2', kids: '2', days: '5', nights: '4', stay_style: 'mix' },
        { parks: 'starfall', adults: '2', kids: '1', days: '3', resident: '1' },
      ],
    ),
    output: {
      $schema: DRAFT,
      type: 'object',
      properties: { plan, related_deals: { type: 'array', items: deal }, related_deals_note: STR, source },
      required: ['plan', 'related_deals', 'source'],
    },
  },
  '/api/v1/geo/places': {
    input: inputSchema(
      ROUTE_PARAMS.geoPlaces,
      {
        ...P,
        near: {
          type: 'string',
          pattern: '^\\s*-?[0-9]{1,3}(\\.[0-9]{1,10})?\\s*,\\s*-?[0-9]{1,3}(\\.[0-9]{1,10})?\\s*$',
          description: '"latitude,longitude" in decimal degrees, latitude -90..90, longitude -180..180',
        },
        radius_km: intParam(LIMITS.radiusKm[0], LIMITS.radiusKm[1], 'search radius in km', 25),
      },
      ['near'],
      [{ near: '28.5383,-81.3792', q: 'coffee', open: '1' }],
    ),
    output: {
      $schema: DRAFT,
      type: 'object',
      properties: {
        near: { type: 'object', properties: { lat: { type: 'number' }, lon: { type: 'number' } }, required: ['lat', 'lon'] },
        radius_km: { type: 'integer' },
        query: NSTR,
        open_only: BOOL,
        now: UNIX,
        results: {
          type: 'array',
          description: 'nearest first',
          items: {
            ...place,
            properties: { ...place.properties, distance_km: { type: 'number', minimum: 0 }, distance_m: { type: 'integer', minimum: 0 }, score: SCORE },
            required: [...place.required, 'distance_km', 'distance_m'],
          },
        },
        source,
      },
      required: ['near', 'radius_km', 'query', 'open_only', 'now', 'results', 'source'],
    },
  },
  '/api/v1/geo/events': {
    input: inputSchema(
      ROUTE_PARAMS.geoEvents,
      {
        ...P,
        days: intParam(LIMITS.eventDays[0], LIMITS.eventDays[1], 'events overlapping the next this many days from now', 7),
        limit: intParam(LIMITS.eventLimit[0], LIMITS.eventLimit[1], 'maximum results', 20),
      },
      [],
      [{ days: '14' }, { q: 'music', days: '30', area: 'lisbon' }],
    ),
    output: {
      $schema: DRAFT,
      type: 'object',
      properties: {
        query: NSTR,
        area: NSTR,
        days: { type: 'integer' },
        from: UNIX,
        to: UNIX,
        from_iso: ISO,
        to_iso: ISO,
        total_matches: { type: 'integer', minimum: 0 },
        results: { type: 'array', description: 'soonest first', items: event },
        source,
      },
      required: ['query', 'area', 'days', 'from', 'to', 'total_matches', 'results', 'source'],
    },
  },
} as const satisfies Record<string, { input: Schema; output: Schema }>;
