/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for the metrics tests: every
 * sample must belong to a family declared by # HELP and # TYPE before it, label sets are parsed
 * with their escapes, and histograms must be cumulative with +Inf equal to _count.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

function value(s: string): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  const n = Number(s);
  if (!/^-?[0-9]/.test(s) || !Number.isFinite(n)) throw new Error(`bad sample value ${s}`);
  return n;
}

function labels(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (text === undefined || text === '') return out;
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    if (!m) throw new Error(`bad label set {${text}}`);
    const name = m[1] as string;
    if (name in out) throw new Error(`label ${name} twice in {${text}}`);
    out[name] = (m[2] as string).replace(/\\(.)/g, (_x, c: string) => (c === 'n' ? '\n' : c));
    if (m[3] === '') break;
  }
  return out;
}

export function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, Family>();
  let current: Family | undefined;
  const seen = new Set<string>();
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.startsWith('# HELP ')) {
      const n = line.split(' ')[2] as string;
      if (families.has(n)) throw new Error(`family ${n} declared twice`);
      current = { name: n, help: line.slice(`# HELP ${n} `.length), type: 'untyped', samples: [] };
      families.set(n, current);
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [, , n, t] = line.split(' ');
      if (!current || current.name !== n) throw new Error(`# TYPE ${n} without its # HELP`);
      if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(t as string)) throw new Error(`bad type ${t}`);
      current.type = t as Family['type'];
      continue;
    }
    if (line.startsWith('#') || line === '') throw new Error(`unexpected line ${JSON.stringify(line)}`);
    const m = SAMPLE.exec(line);
    if (!m || !current) throw new Error(`bad sample line ${JSON.stringify(line)}`);
    const name = m[1] as string;
    const base = current.type === 'histogram' ? name.replace(/_(bucket|sum|count)$/, '') : name;
    if (base !== current.name) throw new Error(`sample ${name} outside its family (${current.name})`);
    const sample = { name, labels: labels(m[2]), value: value(m[3] as string) };
    const key = `${name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) throw new Error(`sample ${key} twice`);
    seen.add(key);
    current.samples.push(sample);
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const groups = new Map<string, Sample[]>();
  for (const s of f.samples) {
    if (!s.name.endsWith('_bucket')) continue;
    const { le: _le, ...rest } = s.labels;
    const k = JSON.stringify(Object.entries(rest).sort());
    (groups.get(k) ?? groups.set(k, []).get(k)!).push(s);
  }
  for (const [k, bs] of groups) {
    let prev = -1;
    let prevLe = -Infinity;
    for (const b of bs) {
      const le = value(b.labels['le'] as string);
      if (le <= prevLe || b.value < prev) throw new Error(`${f.name}${k}: buckets not cumulative`);
      prev = b.value;
      prevLe = le;
    }
    if (prevLe !== Infinity) throw new Error(`${f.name}${k}: no +Inf bucket`);
    const count = f.samples.find((s) => s.name === `${f.name}_count` && JSON.stringify(Object.entries(s.labels).sort()) === k);
    if (count?.value !== prev) throw new Error(`${f.name}${k}: +Inf bucket is not _count`);
  }
}

/** The value of one series (0 when absent: a counter not yet touched). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const base = name.replace(/_(bucket|sum|count)$/, '');
  const f = families.get(name) ?? families.get(base);
  const s = f?.samples.find((x) => x.name === name && Object.keys(labels).length === Object.keys(x.labels).length && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value ?? 0;
}
