/**
 * @module http/metrics
 * Prometheus metrics for both services, in the text exposition format 0.0.4, written by hand.
 *
 * Why not prom-client: we use counters, gauges and histograms and nothing else, and the part that
 * matters here (a hard cap on series per metric, so no caller can grow memory or a scrape by
 * sending new label values) is ours to enforce either way. A hand-written registry is one small
 * file, no dependency, and no process-global state (prom-client's default registry is shared by
 * everything in the process; two services in one test process would collide on metric names).
 *
 * Label values are bounded twice: callers pass only values from closed sets (route templates,
 * status classes, reasons from the SDK's tables), and each metric holds at most `maxSeries` label
 * sets; a new set beyond that is counted in the metric's `other` series instead, and the overflow
 * is itself counted (`vault_metrics_overflow_total`), so a dropped series is visible.
 */
import { SessionError, ValidationError } from '@vault/sdk';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { bearerToken, secretMatches } from './auth.js';

/** Every label of a metric's series takes this value once the metric is full. */
export const OTHER = 'other';
/** Series one metric may hold (plus its `other` series). */
export const DEFAULT_MAX_SERIES = 256;
/** Label values are cut here (they come from closed sets; this is a second fence). */
const MAX_LABEL_VALUE = 96;
/** Request latency buckets, seconds: a loopback read is sub-millisecond, an execute waits on ledgers. */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.25, 1, 2.5, 10, 30] as const;

export type LabelValues = Readonly<Record<string, string>>;
type Kind = 'counter' | 'gauge' | 'histogram';

interface HistogramCell {
  buckets: number[];
  sum: number;
  count: number;
}

interface Family {
  name: string;
  help: string;
  kind: Kind;
  labelNames: readonly string[];
  maxSeries: number;
  /** Series key (label values joined by NUL) -> value or histogram cell. */
  series: Map<string, number | HistogramCell>;
  buckets?: readonly number[];
  /** Gauges computed at scrape time. */
  collect?: () => Iterable<readonly [LabelValues, number]>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export interface Counter {
  inc(labels?: LabelValues, by?: number): void;
}
export interface Gauge {
  set(labels: LabelValues, value: number): void;
}
export interface Histogram {
  observe(labels: LabelValues, value: number): void;
}

/**
 * A set of metric families rendered together.
 *
 * @example
 * const m = new MetricsRegistry()
 * const hits = m.counter('vault_hits_total', 'Hits.', ['route'])
 * hits.inc({ route: '/health' })
 * m.render() // '# HELP vault_hits_total Hits.\n# TYPE vault_hits_total counter\nvault_hits_total{route="/health"} 1\n…'
 */
export class MetricsRegistry {
  readonly #families = new Map<string, Family>();
  readonly #overflow: Family;

  constructor() {
    this.#overflow = this.#add({ name: 'vault_metrics_overflow_total', help: 'Label sets counted under "other" because their metric held its maximum number of series.', kind: 'counter', labelNames: ['metric'], maxSeries: DEFAULT_MAX_SERIES, series: new Map() });
  }

  counter(name: string, help: string, labelNames: readonly string[] = [], options: { maxSeries?: number } = {}): Counter {
    const f = this.#add({ name, help, kind: 'counter', labelNames, maxSeries: options.maxSeries ?? DEFAULT_MAX_SERIES, series: new Map() });
    return {
      inc: (labels = {}, by = 1) => {
        if (!(by >= 0) || !Number.isFinite(by)) throw new RangeError(`${name}: a counter only goes up by a finite amount`);
        const key = this.#key(f, labels);
        f.series.set(key, ((f.series.get(key) as number | undefined) ?? 0) + by);
      },
    };
  }

  gauge(name: string, help: string, labelNames: readonly string[] = [], options: { maxSeries?: number } = {}): Gauge {
    const f = this.#add({ name, help, kind: 'gauge', labelNames, maxSeries: options.maxSeries ?? DEFAULT_MAX_SERIES, series: new Map() });
    return { set: (labels, value) => void f.series.set(this.#key(f, labels), value) };
  }

  /** A gauge whose series are read at scrape time (bounded by `maxSeries` like any other). */
  collectGauge(name: string, help: string, labelNames: readonly string[], collect: () => Iterable<readonly [LabelValues, number]>, options: { maxSeries?: number } = {}): void {
    this.#add({ name, help, kind: 'gauge', labelNames, maxSeries: options.maxSeries ?? DEFAULT_MAX_SERIES, series: new Map(), collect });
  }

  histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[] = LATENCY_BUCKETS, options: { maxSeries?: number } = {}): Histogram {
    if (buckets.length === 0 || buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= (buckets[i - 1] as number)))) {
      throw new RangeError(`${name}: buckets must be finite and increasing`);
    }
    const f = this.#add({ name, help, kind: 'histogram', labelNames, maxSeries: options.maxSeries ?? DEFAULT_MAX_SERIES, series: new Map(), buckets });
    return {
      observe: (labels, value) => {
        const key = this.#key(f, labels);
        let cell = f.series.get(key) as HistogramCell | undefined;
        if (!cell) f.series.set(key, (cell = { buckets: buckets.map(() => 0), sum: 0, count: 0 }));
        for (let i = 0; i < buckets.length; i++) if (value <= (buckets[i] as number)) (cell.buckets[i] as number)++;
        cell.sum += value;
        cell.count++;
      },
    };
  }

  /** Number of series a metric holds now (tests, and the cardinality attack test). */
  seriesCount(name: string): number {
    return this.#families.get(name)?.series.size ?? 0;
  }

  /** The exposition, text format 0.0.4. */
  render(): string {
    const out: string[] = [];
    for (const f of this.#families.values()) {
      if (f.collect) {
        f.series.clear();
        for (const [labels, value] of f.collect()) f.series.set(this.#key(f, labels), value);
      }
      out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.kind}`);
      for (const [key, v] of f.series) {
        const values = key === '' && f.labelNames.length === 0 ? [] : key.split('\u0000');
        if (typeof v === 'number') {
          out.push(`${f.name}${labelText(f.labelNames, values)} ${num(v)}`);
          continue;
        }
        const bs = f.buckets as readonly number[];
        for (let i = 0; i < bs.length; i++) out.push(`${f.name}_bucket${labelText([...f.labelNames, 'le'], [...values, num(bs[i] as number)])} ${v.buckets[i]}`);
        out.push(`${f.name}_bucket${labelText([...f.labelNames, 'le'], [...values, '+Inf'])} ${v.count}`);
        out.push(`${f.name}_sum${labelText(f.labelNames, values)} ${num(v.sum)}`);
        out.push(`${f.name}_count${labelText(f.labelNames, values)} ${v.count}`);
      }
    }
    return `${out.join('\n')}\n`;
  }

  #add(f: Family): Family {
    if (!NAME.test(f.name)) throw new RangeError(`metric name ${f.name} is not a Prometheus name`);
    if (this.#families.has(f.name)) throw new RangeError(`metric ${f.name} is registered twice`);
    for (const l of f.labelNames) if (!LABEL.test(l) || l === 'le' || l.startsWith('__')) throw new RangeError(`${f.name}: label name ${l} is not allowed`);
    this.#families.set(f.name, f);
    return f;
  }

  /** The series key of `labels`, or the `other` series once the metric is full. */
  #key(f: Family, labels: LabelValues): string {
    const key = f.labelNames.map((n) => String(labels[n] ?? '').slice(0, MAX_LABEL_VALUE)).join('\u0000');
    if (f.series.has(key) || f.series.size < f.maxSeries) return key;
    if (f !== this.#overflow) {
      const k = this.#key(this.#overflow, { metric: f.name });
      this.#overflow.series.set(k, ((this.#overflow.series.get(k) as number | undefined) ?? 0) + 1);
    }
    return f.labelNames.map(() => OTHER).join('\u0000');
  }
}

function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabel(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return '';
  return `{${names.map((n, i) => `${n}="${escapeLabel(values[i] ?? '')}"`).join(',')}}`;
}

function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** The content type of the 0.0.4 text exposition. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH']);

/**
 * The route template that answered (`/intent/{id}`, never `/intent/int_…`), or `other` when no
 * route matched (a 404): raw paths never become label values.
 */
export function routeTemplate(c: Context): string {
  let path: string | undefined;
  for (const r of matchedRoutes(c)) if (r.method !== 'ALL') path = r.path;
  if (path === undefined || path === '*') return OTHER;
  return path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}');
}

/** `2xx` … `5xx`. */
export function statusClass(status: number): string {
  return status >= 100 && status <= 599 ? `${Math.floor(status / 100)}xx` : OTHER;
}

/** The request metrics every service exposes. */
export interface HttpMetrics {
  requests: Counter;
  duration: Histogram;
}

export function httpMetricFamilies(m: MetricsRegistry): HttpMetrics {
  return {
    requests: m.counter('vault_http_requests_total', 'HTTP requests answered, by method, route template and status class.', ['method', 'route', 'status']),
    duration: m.histogram('vault_http_request_duration_seconds', 'Time to answer an HTTP request (to the response head), by method and route template.', ['method', 'route']),
  };
}

/** Middleware counting every request once it is answered (errors included: onError has set c.res). */
export function httpMetrics(h: HttpMetrics): MiddlewareHandler {
  return async (c, next) => {
    const t0 = performance.now();
    try {
      await next();
    } finally {
      const method = METHODS.has(c.req.method) ? c.req.method : OTHER;
      const route = routeTemplate(c);
      h.requests.inc({ method, route, status: statusClass(c.res.status) });
      h.duration.observe({ method, route }, (performance.now() - t0) / 1000);
    }
  };
}

/**
 * The GET /metrics handler. With a token (VAULT_METRICS_TOKEN) it wants `Authorization: Bearer
 * <token>`, compared in constant time; a miss is a 401 session error with no exposition.
 */
export function metricsHandler(m: MetricsRegistry, token: string | undefined): (c: Context) => Response {
  if (token !== undefined && token.length < 16) throw new ValidationError('VAULT_METRICS_TOKEN', [{ path: '', message: 'the metrics token must be at least 16 characters' }]);
  return (c) => {
    if (token !== undefined && !secretMatches(bearerToken(c.req.header('authorization')), token)) {
      throw new SessionError('GET /metrics wants Authorization: Bearer <VAULT_METRICS_TOKEN>');
    }
    return c.body(m.render(), 200, { 'content-type': EXPOSITION_CONTENT_TYPE, 'cache-control': 'no-store' });
  };
}

/** One readiness check: its name, whether it passes, and why not. */
export interface ReadyCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

/** GET /ready: 200 when every check passes, else 503 naming the ones that fail. */
export function readyResponse(c: Context, service: string, checks: readonly ReadyCheck[]): Response {
  const ready = checks.every((k) => k.ok);
  return c.json({ ready, service, checks }, ready ? 200 : 503, { 'cache-control': 'no-store' });
}
