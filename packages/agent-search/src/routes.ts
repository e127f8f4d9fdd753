/**
 * @module routes
 * The one route table of the paid search API (interface.md "Paid agent search API"). Prices,
 * the discovery document, /llms.txt, the payment middleware and the answer handlers all read it,
 * so a price or a parameter is stated exactly once.
 *
 * Prices are decimal strings in the payment stablecoin, exactly as the spec's table.
 */
import { ROUTE_SCHEMAS } from './answers/schemas.js';

export type SearchMode = 'quick' | 'deep' | 'plan';
export const SEARCH_MODES: readonly SearchMode[] = ['quick', 'deep', 'plan'];

/** A JSON Schema (draft 2020-12) object, published per route in /llms.txt and the descriptor. */
export type JsonSchema = { readonly [key: string]: unknown };

export interface RouteSpec {
  /** Path, e.g. "/api/x402/search". Every route is a GET. */
  readonly path: string;
  /** One price for every call, or a price per `mode` (only /api/x402/search). */
  readonly price: string | Readonly<Record<SearchMode, string>>;
  /** One line for the descriptor and /llms.txt. */
  readonly description: string;
  /** JSON Schema of the query parameters (all strings on the wire). */
  readonly input: JsonSchema;
  /** JSON Schema of the 200 body. */
  readonly output: JsonSchema;
}

/** The six paid routes, in the spec's order. Schemas are filled in by the answers module. */
export const PRICES = {
  '/api/x402/search': { quick: '0.01', deep: '0.05', plan: '0.05' },
  '/api/x402/places': '0.002',
  '/api/x402/deals': '0.002',
  '/api/x402/stack': '0.01',
  '/api/v1/geo/places': '0.005',
  '/api/v1/geo/events': '0.005',
} as const satisfies Record<string, RouteSpec['price']>;

export type PaidPath = keyof typeof PRICES;
export const PAID_PATHS = Object.keys(PRICES) as PaidPath[];

const DESCRIPTIONS: Record<PaidPath, string> = {
  '/api/x402/search':
    'Search places, deals and events by text (mode quick: top 5; deep: top 20 with full records), or mode plan: costed resort trip options for a party, days and budget.',
  '/api/x402/places': 'Places (cafes, restaurants, museums, parks...) by text, area and category, with opening hours and open-now state.',
  '/api/x402/deals': 'Current deals by text, area, category and maximum price, with the saving against the regular price.',
  '/api/x402/stack':
    'Cost a resort trip: park tickets for one or both operators plus hotel nights, with every line item, resident and child pricing.',
  '/api/v1/geo/places': 'Places nearest to a point, distance-sorted with distances, optionally matching text and open now.',
  '/api/v1/geo/events': 'Events in the next N days, soonest first, optionally matching text.',
};

/**
 * The route table: one entry per paid path, in the spec's order, with the price from
 * {@link PRICES} and the query-parameter and 200-body JSON Schemas the answers module enforces.
 */
export const ROUTES: readonly RouteSpec[] = Object.freeze(
  PAID_PATHS.map(
    (path): RouteSpec =>
      Object.freeze({
        path,
        price: PRICES[path],
        description: DESCRIPTIONS[path],
        input: ROUTE_SCHEMAS[path].input,
        output: ROUTE_SCHEMAS[path].output,
      }),
  ),
);
