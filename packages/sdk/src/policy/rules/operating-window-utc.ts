import type { RuleOf } from '../../schemas/policy.js';
import type { RuleModule } from '../types.js';

const DAY = 86400;
const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

function seconds(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 3600 + Number(m) * 60;
}

/** 0 = Sunday. 1970-01-01 was a Thursday. */
function weekday(dayIndex: number): number {
  return (((dayIndex + 4) % 7) + 7) % 7;
}

type Window = RuleOf<'operating_window_utc'>;

/**
 * Is the window open at `t`? A window opens at `start` on each allowed day and closes at `end`;
 * when `end` <= `start` it runs past midnight and belongs to the day it opened on
 * (`00:00`-`00:00` is the whole day).
 */
export function windowOpenAt(rule: Window, t: number): boolean {
  const start = seconds(rule.start);
  const end = seconds(rule.end);
  const day = Math.floor(t / DAY);
  const sec = t - day * DAY;
  const allowed = (d: number) => rule.days === undefined || rule.days.includes(weekday(d));
  if (start < end) return allowed(day) && sec >= start && sec < end;
  return (sec >= start && allowed(day)) || (sec < end && allowed(day - 1));
}

/** The earliest instant >= t at which the window is open, or null if it never opens. */
export function nextWindowOpening(rule: Window, t: number): number | null {
  if (windowOpenAt(rule, t)) return t;
  const start = seconds(rule.start);
  const day = Math.floor(t / DAY);
  for (let d = 0; d <= 7; d++) {
    const opening = (day + d) * DAY + start;
    if (opening >= t && windowOpenAt(rule, opening)) return opening;
  }
  return null;
}

function describe(rule: Window): string {
  const days = rule.days === undefined ? 'every day' : rule.days.map((d) => DAY_NAMES[d]).join(',');
  return `${rule.start}-${rule.end} UTC (${days})`;
}

/** operating_window_utc: outside the window, delay until its next opening (execute re-checks). */
export const operatingWindowUtc: RuleModule<'operating_window_utc'> = {
  kind: 'operating_window_utc',
  evaluate(rule, input, label) {
    const next = nextWindowOpening(rule, input.now);
    if (next === null) return { effect: 'deny', reason: `${label}: window ${describe(rule)} never opens` };
    if (next === input.now) return { effect: 'pass' };
    return {
      effect: 'delay',
      reason: `${label}: outside ${describe(rule)}; opens at ${next} (${new Date(next * 1000).toISOString()})`,
      not_before: next,
    };
  },
  earliestAt: nextWindowOpening,
};
