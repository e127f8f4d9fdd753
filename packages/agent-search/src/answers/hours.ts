/**
 * @module answers/hours
 * Opening hours, evaluated with the opening_hours library in the place's own time zone.
 *
 * Time-zone rule: every area has an IANA zone; a place's hours are read as wall-clock times in its
 * area's zone. The library reads a Date through its local-time getters (getDay, getHours), i.e.
 * in the host's zone, so we hand it a Date whose host-local fields equal the wall clock in the
 * area's zone at `now` (computed with Intl, which knows the zone's daylight-saving rules). The
 * answer is then right whatever zone the server runs in. One residual edge: if that wall-clock
 * time does not exist in the host's own zone (inside the host's spring-forward gap), the host
 * shifts it by the gap; servers should run with TZ=UTC, which has no gaps.
 *
 * Public holidays ("PH off") use the area's country and state, passed explicitly to the library,
 * so it never needs a geocoding lookup. Sunrise/sunset rules are not used by the sample data.
 */
import OpeningHours from 'opening_hours';
import type { Area } from './types.js';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    // Throws RangeError for an unknown zone: a data fault, surfaced when the index is built.
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock fields in `timeZone` at Unix second `unix`. */
export function wallClock(
  unix: number,
  timeZone: string,
): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(unix * 1000))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year as number,
    month: parts.month as number,
    day: parts.day as number,
    hour: parts.hour as number,
    minute: parts.minute as number,
    second: parts.second as number,
  };
}

/** A Date whose host-local fields read as the wall clock in `timeZone` at `unix` (see module doc). */
export function zonedDate(unix: number, timeZone: string): Date {
  const w = wallClock(unix, timeZone);
  return new Date(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

/** "2026-03-09T09:30:00" — the local wall-clock time in `timeZone`, for answers. */
export function localIso(unix: number, timeZone: string): string {
  const w = wallClock(unix, timeZone);
  const p = (n: number, l = 2) => String(n).padStart(l, '0');
  return `${p(w.year, 4)}-${p(w.month)}-${p(w.day)}T${p(w.hour)}:${p(w.minute)}:${p(w.second)}`;
}

/** Parsed hours of one place; `error` is set (and `isOpen` answers null) when the value does not parse. */
export interface ParsedHours {
  readonly value: string;
  readonly error?: string;
  /** true open, false closed, null unknown (unparseable value or an "unknown" rule): fail closed on null. */
  isOpen(unix: number): boolean | null;
}

/** Parse an opening_hours value for a place in `area`. Never throws for a bad value; see {@link ParsedHours.error}. */
export function parseHours(value: string, area: Area): ParsedHours {
  // Validate the zone now so a bad area fails at index time, not on some later call.
  formatter(area.timezone);
  let oh: OpeningHours;
  try {
    oh = new OpeningHours(value, {
      // The library reads lat/lon only as strings (for sunrise); the typings say number.
      lat: String(area.lat) as unknown as number,
      lon: String(area.lon) as unknown as number,
      address: { country_code: area.country_code, state: area.state },
    });
  } catch (e) {
    const error = typeof e === 'string' ? e : e instanceof Error ? e.message : String(e);
    return { value, error, isOpen: () => null };
  }
  return {
    value,
    isOpen(unix: number): boolean | null {
      const d = zonedDate(unix, area.timezone);
      if (oh.getUnknown(d)) return null;
      return oh.getState(d);
    },
  };
}
