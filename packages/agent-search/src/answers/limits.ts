/**
 * @module answers/limits
 * The accepted query parameters and numeric limits of each route, in one place: the validators
 * in ./answerer.ts and the JSON Schemas in ./schemas.ts both read them, so the published schema
 * and the enforced rule cannot drift apart. This module imports nothing (no import cycles).
 */

/** Query parameters each route accepts (search: by mode). Published in ROUTES' input schemas too. */
export const ROUTE_PARAMS = {
  searchQuick: ['q', 'mode', 'area', 'budget', 'who', 'when', 'resident'],
  searchPlan: ['q', 'mode', 'area', 'budget', 'who', 'when', 'resident', 'parks', 'adults', 'kids', 'days', 'nights', 'stay_style'],
  places: ['q', 'area', 'category', 'open', 'limit'],
  deals: ['q', 'area', 'category', 'max_price', 'resident', 'limit'],
  stack: ['parks', 'adults', 'kids', 'days', 'nights', 'resident', 'stay_style'],
  geoPlaces: ['near', 'q', 'open', 'radius_km', 'limit'],
  geoEvents: ['q', 'days', 'area', 'limit'],
} as const;

/** Limits shared by the validators and the published schemas. */
export const LIMITS = {
  qMax: 200,
  categoryMax: 40,
  adults: [1, 20],
  kids: [0, 20],
  tripDays: [1, 14],
  eventDays: [1, 365],
  limit: [1, 50],
  eventLimit: [1, 100],
  radiusKm: [1, 500],
  quickResults: 5,
  deepResults: 20,
  planExtras: 5,
} as const;

