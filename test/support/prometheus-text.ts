/**
 * A small, strict parser and validator of the Prometheus text exposition format 0.0.4: it reads the
 * families the metrics tests assert on, and checks the format beside `promtool check metrics`
 * (test/support/promtool.ts). It throws on the first problem, naming the line.
 *
 * Checked: HELP/TYPE syntax and escapes, at most one of each per family, TYPE before the family's
 * first sample, families contiguous, metric and label name syntax, reserved `__` labels, label value
 * escapes (only \\ \" \n), duplicate label names, numeric values (incl. ±Inf and NaN, case-insensitive as Go parses them) and optional
 * integer timestamps, duplicate series, counters non-negative, histogram `_bucket{le}` / `_sum` /
 * `_count` completeness with increasing `le`, a `+Inf` bucket, cumulative non-decreasing buckets and
 * `+Inf` bucket = `_count`, summary `quantile` in [0, 1].
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestamp?: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help?: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** What Go's strconv.ParseFloat (Prometheus' parser) accepts in decimal: specials case-insensitively. */
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INF = /^[+-]?inf(?:inity)?$/i;
const NAN = /^nan$/i;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export class PrometheusTextError extends Error {}

function fail(lineNo: number, message: string, line?: string): never {
  throw new PrometheusTextError(`line ${lineNo}: ${message}${line === undefined ? '' : ` — ${JSON.stringify(line)}`}`);
}

function parseFloatStrict(text: string, lineNo: number): number {
  if (NAN.test(text)) return Number.NaN;
  if (INF.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (!FLOAT.test(text)) fail(lineNo, `invalid value "${text}"`);
  return Number(text);
}

/** The HELP docstring: only \\ and \n are escapes; anything else after a backslash is an error. */
function unescapeHelp(text: string, lineNo: number): string {
  return text.replace(/\\(.?)/g, (_m, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    return fail(lineNo, `invalid escape "\\${c}" in HELP`);
  });
}

/** Reads `{a="x",b="y"}` from `line` at `start` (the `{`); returns the labels and the index after `}`. */
function parseLabels(line: string, start: number, lineNo: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    if (line[i] === '}') return { labels, end: i + 1 };
    const nameMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
    if (!nameMatch) fail(lineNo, `invalid label name at column ${i + 1}`, line);
    const name = nameMatch[0];
    if (name.startsWith('__')) fail(lineNo, `reserved label name "${name}"`, line);
    if (Object.hasOwn(labels, name)) fail(lineNo, `duplicate label "${name}"`, line);
    i += name.length;
    if (line[i] !== '=' || line[i + 1] !== '"') fail(lineNo, `expected ="…" after label "${name}"`, line);
    i += 2;
    let value = '';
    for (;;) {
      const c = line[i];
      if (c === undefined) fail(lineNo, `unterminated value of label "${name}"`, line);
      if (c === '"') break;
      if (c === '\\') {
        const next = line[i + 1];
        if (next === '\\' || next === '"') value += next;
        else if (next === 'n') value += '\n';
        else fail(lineNo, `invalid escape "\\${next ?? ''}" in label "${name}"`, line);
        i += 2;
      } else {
        value += c;
        i += 1;
      }
    }
    labels[name] = value;
    i += 1;
    if (line[i] === ',') i += 1;
    else if (line[i] !== '}') fail(lineNo, `expected , or } after label "${name}"`, line);
  }
}

function parseSample(line: string, lineNo: number): Sample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) fail(lineNo, 'invalid metric name', line);
  const name = nameMatch[0];
  let labels: Record<string, string> = {};
  let rest = line.slice(name.length);
  if (rest.startsWith('{')) {
    const parsed = parseLabels(line, name.length, lineNo);
    labels = parsed.labels;
    rest = line.slice(parsed.end);
  }
  if (!/^[ \t]/.test(rest)) fail(lineNo, 'expected whitespace before the value', line);
  const fields = rest.trim().split(/[ \t]+/);
  if (fields.length > 2) fail(lineNo, 'trailing characters after the timestamp', line);
  const value = parseFloatStrict(fields[0] ?? '', lineNo);
  const sample: Sample = { name, labels, value };
  if (fields[1] !== undefined) {
    if (!/^-?\d+$/.test(fields[1])) fail(lineNo, `invalid timestamp "${fields[1]}"`, line);
    sample.timestamp = Number(fields[1]);
  }
  return sample;
}

/** The family a sample belongs to: `x_bucket`/`x_sum`/`x_count` belong to a declared histogram/summary `x`. */
function familyOf(sampleName: string, declared: ReadonlyMap<string, MetricFamily>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const base = sampleName.slice(0, -suffix.length);
    const family = declared.get(base);
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return sampleName;
}

function seriesKey(sample: Sample, without?: string): string {
  const pairs = Object.entries(sample.labels)
    .filter(([k]) => k !== without)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(pairs);
}

function checkHistogram(family: MetricFamily): void {
  const groups = new Map<string, { buckets: Array<{ le: number; count: number }>; sum?: number; count?: number }>();
  const group = (s: Sample) => {
    const key = seriesKey(s, 'le');
    let g = groups.get(key);
    if (!g) {
      g = { buckets: [] };
      groups.set(key, g);
    }
    return g;
  };
  for (const s of family.samples) {
    const g = group(s);
    if (s.name === `${family.name}_bucket`) {
      const le = s.labels.le;
      if (le === undefined) throw new PrometheusTextError(`${family.name}: a _bucket sample without le`);
      const bound = parseFloatStrict(le, 0);
      if (Number.isNaN(bound)) throw new PrometheusTextError(`${family.name}: le is NaN`);
      g.buckets.push({ le: bound, count: s.value });
    } else if (s.name === `${family.name}_sum`) g.sum = s.value;
    else if (s.name === `${family.name}_count`) g.count = s.value;
    else throw new PrometheusTextError(`${family.name}: unexpected sample ${s.name} in a histogram`);
  }
  for (const [key, g] of groups) {
    const where = `${family.name}${key}`;
    if (g.sum === undefined || g.count === undefined) throw new PrometheusTextError(`${where}: missing _sum or _count`);
    const last = g.buckets.at(-1);
    if (!last || last.le !== Infinity) throw new PrometheusTextError(`${where}: the last bucket is not le="+Inf"`);
    for (let i = 1; i < g.buckets.length; i++) {
      const prev = g.buckets[i - 1];
      const cur = g.buckets[i];
      if (!prev || !cur) continue;
      if (!(cur.le > prev.le)) throw new PrometheusTextError(`${where}: le not strictly increasing`);
      if (cur.count < prev.count) throw new PrometheusTextError(`${where}: buckets not cumulative`);
    }
    if (last.count !== g.count)
      throw new PrometheusTextError(`${where}: +Inf bucket ${last.count} ≠ _count ${g.count}`);
  }
}

function checkFamily(family: MetricFamily): void {
  for (const s of family.samples) {
    if (family.type === 'counter' && !(s.value >= 0)) {
      throw new PrometheusTextError(`${family.name}: counter value ${s.value} is negative or NaN`);
    }
    if (family.type === 'summary' && s.name === family.name) {
      const q = s.labels.quantile === undefined ? Number.NaN : Number(s.labels.quantile);
      if (!(q >= 0 && q <= 1))
        throw new PrometheusTextError(`${family.name}: quantile label missing or outside [0, 1]`);
    }
  }
  if (family.type === 'histogram') checkHistogram(family);
}

/** Parses and validates a whole exposition; returns the families in order of appearance. */
export function parsePrometheusText(text: string): MetricFamily[] {
  if (text.length > 0 && !text.endsWith('\n')) throw new PrometheusTextError('the exposition must end with a newline');
  const families = new Map<string, MetricFamily>();
  const helpSeen = new Set<string>();
  const typeSeen = new Set<string>();
  const series = new Set<string>();
  const closed = new Set<string>();
  let current: MetricFamily | undefined;

  const enter = (name: string, lineNo: number): MetricFamily => {
    if (current?.name === name) return current;
    if (closed.has(name)) fail(lineNo, `metric family "${name}" is not contiguous`);
    if (current) closed.add(current.name);
    let family = families.get(name);
    if (!family) {
      family = { name, type: 'untyped', samples: [] };
      families.set(name, family);
    }
    current = family;
    return family;
  };

  const lines = text.split('\n');
  lines.pop(); // the empty string after the final newline
  lines.forEach((line, index) => {
    const lineNo = index + 1;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
      if (!m) return; // a plain comment
      const [, keyword, name = '', rest = ''] = m;
      if (!METRIC_NAME.test(name)) fail(lineNo, `invalid metric name "${name}"`, line);
      const family = enter(name, lineNo);
      if (keyword === 'HELP') {
        if (helpSeen.has(name)) fail(lineNo, `second HELP for "${name}"`, line);
        helpSeen.add(name);
        family.help = unescapeHelp(rest, lineNo);
      } else {
        if (family.samples.length > 0) fail(lineNo, `TYPE of "${name}" after its samples`, line);
        if (typeSeen.has(name)) fail(lineNo, `second TYPE for "${name}"`, line);
        if (!TYPES.has(rest as MetricType)) fail(lineNo, `unknown type "${rest}"`, line);
        typeSeen.add(name);
        family.type = rest as MetricType;
      }
      return;
    }
    const sample = parseSample(line, lineNo);
    const family = enter(familyOf(sample.name, families), lineNo);
    const key = `${sample.name}${seriesKey(sample)}`;
    if (series.has(key)) fail(lineNo, `duplicate series ${sample.name}${seriesKey(sample)}`, line);
    series.add(key);
    family.samples.push(sample);
  });

  for (const family of families.values()) checkFamily(family);
  return [...families.values()];
}
