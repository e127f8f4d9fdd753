/**
 * @module answers/types
 * The data model behind the paid answers, and the {@link DataProvider} interface a real data
 * source implements to replace the embedded sample set.
 *
 * Money is a decimal string with at most two fraction digits (e.g. "109.00"), in the currency the
 * record names; all arithmetic on it is done in integer cents (see ./money.ts). Times are integer
 * Unix seconds.
 */

/** Where an answer's data came from. Every 200 body carries it, so sample data is never mistaken for real data. */
export interface SourceInfo {
  /** "sample" for the embedded fictional data set; a real provider uses its own kind, e.g. "live". */
  readonly kind: string;
  /** Human-readable name of the source. */
  readonly name: string;
  /** A plain sentence about the data: for the sample, that it is fictional and must not be relied on. */
  readonly note: string;
}

/** A geographic area that places, deals, events and resorts belong to. */
export interface Area {
  /** Stable lower-case id used by the `area` query parameter, e.g. "orlando". */
  readonly id: string;
  readonly name: string;
  /** IANA time zone; opening hours of places in this area are evaluated in it. */
  readonly timezone: string;
  /** ISO 3166-1 alpha-2 country code, lower case; selects the public-holiday calendar. */
  readonly country_code: string;
  /** State or region name as the opening_hours library knows it (public holidays may depend on it). */
  readonly state: string;
  readonly lat: number;
  readonly lon: number;
}

export interface Place {
  readonly id: string;
  readonly name: string;
  /** Area id ({@link Area.id}). */
  readonly area: string;
  /** One word, e.g. "cafe", "restaurant", "museum", "park". */
  readonly category: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly lat: number;
  readonly lon: number;
  /** OpenStreetMap opening_hours value, e.g. "Mo-Fr 09:00-17:00; PH off". */
  readonly opening_hours: string;
  /** 1 (cheap) to 4 (expensive). */
  readonly price_level: 1 | 2 | 3 | 4;
  /** True for a place unsuitable for children (filtered out when the party includes kids). */
  readonly adults_only?: boolean;
}

export interface Deal {
  readonly id: string;
  readonly title: string;
  readonly area: string;
  /** The place the deal is redeemed at, if any ({@link Place.id}). */
  readonly place_id?: string;
  /** Resort operator id the deal belongs to, if any ({@link ResortOperator.id}). */
  readonly operator_id?: string;
  readonly category: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** Deal price, decimal string. */
  readonly price: string;
  /** Regular price the deal is compared with, decimal string (>= price). */
  readonly regular_price: string;
  /** ISO 4217 code, e.g. "USD". */
  readonly currency: string;
  /** Only for local residents (shown only when the caller says resident=1). */
  readonly resident_only?: boolean;
  readonly adults_only?: boolean;
}

export interface EventItem {
  readonly id: string;
  readonly title: string;
  readonly area: string;
  readonly venue: string;
  readonly category: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly lat: number;
  readonly lon: number;
  /** Start, Unix seconds. */
  readonly start: number;
  /** End, Unix seconds (> start). */
  readonly end: number;
  /** Ticket price, decimal string; "0.00" for free events. */
  readonly price: string;
  readonly currency: string;
  readonly adults_only?: boolean;
}

/** Per-person price of a multi-day park ticket, decimal strings. */
export interface TicketPrice {
  /** Number of park days the ticket covers (1..7 in the sample). */
  readonly days: number;
  readonly adult: string;
  readonly child: string;
  readonly resident_adult: string;
  readonly resident_child: string;
}

export type StayTier = 'budget' | 'standard' | 'premium';

export interface Hotel {
  readonly id: string;
  readonly name: string;
  readonly tier: StayTier;
  /** Price per room per night, decimal string. */
  readonly nightly: string;
  /** Guests (adults + kids) one room sleeps. */
  readonly room_sleeps: number;
}

/** One resort operator's price sheet: its park tickets and its on-site hotels. */
export interface ResortOperator {
  /** Stable lower-case id; also the value of the `parks` query parameter. */
  readonly id: string;
  readonly name: string;
  readonly area: string;
  readonly park_name: string;
  readonly currency: string;
  /** Age range the child price applies to, for the answer's notes. */
  readonly child_ages: string;
  /** Multi-day tickets, one per day count, ascending and contiguous from 1. */
  readonly tickets: readonly TicketPrice[];
  /** Per-person price of each day beyond the longest ticket in {@link tickets}. */
  readonly extra_day: Omit<TicketPrice, 'days'>;
  /** Exactly one hotel per tier. */
  readonly hotels: readonly Hotel[];
}

/**
 * A source of the data the answers are built from. Real sources plug in by implementing this;
 * the answerer calls each method once and caches the result (see createAnswerer), so an
 * implementation may fetch from a network or a database. A rejected promise is a fault: the
 * answerer lets it propagate and tries again on the next call.
 */
export interface DataProvider {
  /** Labels every answer built from this provider's data. */
  readonly source: SourceInfo;
  areas(): Promise<readonly Area[]>;
  places(): Promise<readonly Place[]>;
  deals(): Promise<readonly Deal[]>;
  /** All events the provider knows, with absolute times; the answerer filters by window. */
  events(): Promise<readonly EventItem[]>;
  /** Exactly two resort operators' price sheets (the `parks` parameter names them). */
  resorts(): Promise<readonly ResortOperator[]>;
}

/** A refusal carries `{error: {code, message, field?}}`; `field` names the offending query parameter. */
export type AnswerResult =
  | { status: 200; body: unknown }
  | { status: 400 | 404 | 500; body: { error: { code: string; message: string; field?: string } } };
