/**
 * @module answers/plan
 * Trip costing for the two resort operators: park tickets plus hotel nights, with every line of
 * the arithmetic in the answer. All money is integer cents (bigint) and rendered as decimal strings.
 *
 * Rules (also published in /llms.txt):
 * - Tickets: each person gets one multi-day ticket per operator visited, priced from that
 *   operator's table for the number of days at its park; days beyond the longest ticket in the
 *   table are added at the operator's extra-day price. Kids pay the child price; with
 *   resident=1, adults and kids pay the resident prices. Resident pricing applies to tickets only.
 * - parks=both: the days are split, the first operator (in the provider's order) gets
 *   ceil(days/2) days, then the second gets floor(days/2); it needs days >= 2.
 * - Nights: the stay covers the nights before the last `nights` park days (nights = days means
 *   arriving the evening before day 1). Each night is spent at the operator whose park is visited
 *   the next morning.
 * - Rooms per hotel: ceil((adults + kids) / room_sleeps) of that hotel.
 * - stay_style budget | standard | premium: every night at that tier's hotel of the operator.
 *   stay_style mix: in each operator's run of nights, the first night at its premium hotel (the
 *   on-site perks matter most before the first park day) and the rest at its budget hotel; with
 *   parks=both this combines stays across both operators' hotels.
 */
import { centsOf, formatCents } from './money.js';
import { ParamError } from './params.js';
import type { Hotel, ResortOperator, StayTier, TicketPrice } from './types.js';

export type StayStyle = StayTier | 'mix';
export const STAY_STYLES: readonly StayStyle[] = ['budget', 'standard', 'premium', 'mix'];

export interface PlanInput {
  /** An operator id, or "both". */
  readonly parks: string;
  readonly adults: number;
  readonly kids: number;
  readonly days: number;
  readonly nights: number;
  readonly resident: boolean;
  readonly stay_style: StayStyle;
}

export interface LineItem {
  readonly label: string;
  readonly unit_price: string;
  readonly quantity: number;
  readonly subtotal: string;
}

export interface Plan {
  readonly parks: string;
  readonly operators: readonly { id: string; name: string; park_name: string; days: number; nights: number }[];
  readonly party: { adults: number; kids: number };
  readonly days: number;
  readonly nights: number;
  readonly resident: boolean;
  readonly stay_style: StayStyle;
  readonly currency: string;
  readonly line_items: readonly LineItem[];
  readonly tickets_total: string;
  readonly stay_total: string;
  readonly total: string;
  /** Total as integer cents; internal, for budget comparison (not serialised). */
  readonly totalCents: bigint;
  readonly notes: readonly string[];
}

function line(label: string, unitCents: bigint, quantity: number): { item: LineItem; cents: bigint } {
  const cents = unitCents * BigInt(quantity);
  return { item: { label, unit_price: formatCents(unitCents), quantity, subtotal: formatCents(cents) }, cents };
}

function ticketFor(op: ResortOperator, days: number): { base: TicketPrice; extraDays: number } {
  const sorted = [...op.tickets].sort((a, b) => a.days - b.days);
  const longest = sorted[sorted.length - 1];
  if (!longest) throw new TypeError(`resort ${op.id}: no tickets in its price sheet`);
  const exact = sorted.find((t) => t.days === days);
  if (exact) return { base: exact, extraDays: 0 };
  if (days > longest.days) return { base: longest, extraDays: days - longest.days };
  throw new TypeError(`resort ${op.id}: no ${days}-day ticket in its price sheet`);
}

function hotelOf(op: ResortOperator, tier: StayTier): Hotel {
  const h = op.hotels.find((x) => x.tier === tier);
  if (!h) throw new TypeError(`resort ${op.id}: no ${tier} hotel in its price sheet`);
  if (!Number.isSafeInteger(h.room_sleeps) || h.room_sleeps < 1) throw new TypeError(`resort ${op.id}: hotel ${h.id} room_sleeps must be a positive integer`);
  return h;
}

/** Split `days` and `nights` between the visited operators (see module doc). */
export function allocate(
  ops: readonly ResortOperator[],
  days: number,
  nights: number,
): { op: ResortOperator; days: number; nights: number }[] {
  if (ops.length === 1) return [{ op: ops[0] as ResortOperator, days, nights }];
  const daysA = Math.ceil(days / 2);
  const daysB = days - daysA;
  const nightsB = Math.min(nights, daysB);
  return [
    { op: ops[0] as ResortOperator, days: daysA, nights: nights - nightsB },
    { op: ops[1] as ResortOperator, days: daysB, nights: nightsB },
  ];
}

/**
 * Cost one trip. Refuses (ParamError) a parks value that names no operator, parks=both with
 * fewer than two days, and nights > days; throws TypeError on a malformed price sheet.
 */
export function computePlan(resorts: readonly ResortOperator[], input: PlanInput): Plan {
  const { adults, kids, days, nights, resident, stay_style } = input;
  if (resorts.length !== 2) throw new TypeError(`the provider must give exactly two resort operators (got ${resorts.length})`);
  const ids = resorts.map((r) => r.id);
  let ops: ResortOperator[];
  if (input.parks === 'both') {
    if (days < 2) throw new ParamError('days', `parks=both needs days of at least 2, one park per day (got ${days})`);
    ops = [...resorts];
  } else {
    const op = resorts.find((r) => r.id === input.parks);
    if (!op) throw new ParamError('parks', `parks must be one of ${ids.join(', ')}, both (got "${input.parks}")`);
    ops = [op];
  }
  if (nights > days) throw new ParamError('nights', `nights must be at most days (${days}); got ${nights}`);
  const currency = ops[0]?.currency as string;
  if (ops.some((o) => o.currency !== currency)) throw new TypeError('the two resort operators price in different currencies');

  const items: LineItem[] = [];
  let tickets = 0n;
  let stay = 0n;
  const segments = allocate(ops, days, nights);
  const guests = adults + kids;
  const who = resident ? 'resident ' : '';

  for (const seg of segments) {
    const { op } = seg;
    const { base, extraDays } = ticketFor(op, seg.days);
    const people: [string, number, keyof Omit<TicketPrice, 'days'>][] = [
      ['adult', adults, resident ? 'resident_adult' : 'adult'],
      [`child (ages ${op.child_ages})`, kids, resident ? 'resident_child' : 'child'],
    ];
    for (const [kind, count, key] of people) {
      if (count === 0) continue;
      const t = line(`${op.park_name} ${base.days}-day ticket, ${who}${kind}`, centsOf(base[key], `${op.id} ticket ${key}`), count);
      items.push(t.item);
      tickets += t.cents;
      if (extraDays > 0) {
        const x = line(
          `${op.park_name} extra park day beyond ${base.days}, ${who}${kind}`,
          centsOf(op.extra_day[key], `${op.id} extra_day ${key}`),
          count * extraDays,
        );
        items.push(x.item);
        tickets += x.cents;
      }
    }
  }

  for (const seg of segments) {
    if (seg.nights === 0) continue;
    const runs: [StayTier, number][] =
      stay_style === 'mix'
        ? seg.nights === 1
          ? [['premium', 1]]
          : [['premium', 1], ['budget', seg.nights - 1]]
        : [[stay_style, seg.nights]];
    for (const [tier, n] of runs) {
      const h = hotelOf(seg.op, tier);
      const rooms = Math.ceil(guests / h.room_sleeps);
      const s = line(
        `${h.name} (${seg.op.name.replace(/ \(.*\)$/, '')}, ${tier}): ${n} night${n === 1 ? '' : 's'} x ${rooms} room${rooms === 1 ? '' : 's'}`,
        centsOf(h.nightly, `${h.id} nightly`),
        n * rooms,
      );
      items.push(s.item);
      stay += s.cents;
    }
  }

  const notes = [
    `Kids pay the child price (ages ${ops.map((o) => `${o.park_name}: ${o.child_ages}`).join('; ')}); resident prices apply to tickets only.`,
    'Rooms per hotel = ceil((adults + kids) / guests per room). Taxes and fees are not included.',
  ];
  if (segments.length === 2) {
    notes.push(
      `parks=both: ${segments[0]?.days} day(s) at ${segments[0]?.op.park_name} then ${segments[1]?.days} at ${segments[1]?.op.park_name}; each night is at the operator of the next morning's park.`,
    );
  }
  if (stay_style === 'mix' && nights > 0) notes.push('stay_style=mix: first night of each operator\'s run at its premium hotel, the rest at its budget hotel.');

  return {
    parks: input.parks,
    operators: segments.map((s) => ({ id: s.op.id, name: s.op.name, park_name: s.op.park_name, days: s.days, nights: s.nights })),
    party: { adults, kids },
    days,
    nights,
    resident,
    stay_style,
    currency,
    line_items: items,
    tickets_total: formatCents(tickets),
    stay_total: formatCents(stay),
    total: formatCents(tickets + stay),
    totalCents: tickets + stay,
    notes,
  };
}

/** The JSON form of a plan (drops the internal bigint). */
export function planJson(p: Plan): Omit<Plan, 'totalCents'> {
  const { totalCents: _omit, ...rest } = p;
  return rest;
}
