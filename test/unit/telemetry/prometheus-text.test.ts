import { describe, expect, it } from 'vitest';
import { PrometheusTextError, parsePrometheusText } from '../../support/prometheus-text.js';

/** The strict validator the metrics tests use beside promtool must itself reject what promtool rejects. */
const VALID = [
  '# HELP a_total Things done, with a \\\\ backslash and a \\n newline.',
  '# TYPE a_total counter',
  'a_total{kind="x\\"y\\\\z\\nw",b="2",} 3 1700000000000',
  'a_total{kind="other"} 1e3',
  '# A plain comment.',
  '',
  '# TYPE g gauge',
  'g NaN',
  'g{x="1"} -Inf',
  'g{x="2"} Nan',
  '# HELP h_seconds Latency.',
  '# TYPE h_seconds histogram',
  'h_seconds_bucket{route="/a/:id",le="0.1"} 1',
  'h_seconds_bucket{route="/a/:id",le="1"} 3',
  'h_seconds_bucket{route="/a/:id",le="+Inf"} 4',
  'h_seconds_sum{route="/a/:id"} 2.5',
  'h_seconds_count{route="/a/:id"} 4',
  '# TYPE s summary',
  's{quantile="0.5"} 1',
  's_sum 3',
  's_count 2',
  'untyped_thing 1',
  '',
].join('\n');

function without(line: string): string {
  return VALID.split('\n')
    .filter((l) => l !== line)
    .join('\n');
}

function replace(from: string, to: string): string {
  if (!VALID.includes(from)) throw new Error(`fixture lacks ${from}`);
  return VALID.replace(from, to);
}

describe('parsePrometheusText', () => {
  it('parses a valid exposition: types, help escapes, label escapes, specials, timestamps', () => {
    const families = parsePrometheusText(VALID);
    expect(families.map((f) => [f.name, f.type])).toEqual([
      ['a_total', 'counter'],
      ['g', 'gauge'],
      ['h_seconds', 'histogram'],
      ['s', 'summary'],
      ['untyped_thing', 'untyped'],
    ]);
    const [a, g, h] = families;
    expect(a?.help).toBe('Things done, with a \\ backslash and a \n newline.');
    expect(a?.samples[0]).toEqual({
      name: 'a_total',
      labels: { kind: 'x"y\\z\nw', b: '2' },
      value: 3,
      timestamp: 1700000000000,
    });
    expect(a?.samples[1]?.value).toBe(1000);
    expect(g?.samples.map((s) => s.value)).toEqual([Number.NaN, -Infinity, Number.NaN]);
    expect(h?.samples).toHaveLength(5);
  });

  it.each([
    ['a missing final newline', VALID.trimEnd()],
    ['an invalid metric name', replace('untyped_thing 1', '9thing 1')],
    ['an invalid label name', replace('b="2"', '2b="2"')],
    ['a reserved label name', replace('b="2"', '__b="2"')],
    ['a duplicate label', replace('b="2"', 'b="2",b="3"')],
    ['an unknown escape in a label value', replace('b="2"', 'b="\\t"')],
    ['an unterminated label value', replace('s_sum 3', 's_sum{a="3} 3')],
    ['an unknown escape in HELP', replace('with a \\\\ backslash', 'with a \\t tab')],
    ['a bad value', replace('untyped_thing 1', 'untyped_thing one')],
    ['a bad timestamp', replace('1e3', '1e3 12.5')],
    ['trailing garbage', replace('1e3', '1e3 12 13')],
    ['no space before the value', replace('untyped_thing 1', 'untyped_thing{}1')],
    ['an unknown type', replace('# TYPE g gauge', '# TYPE g meter')],
    ['a second TYPE', replace('# TYPE g gauge', '# TYPE g gauge\n# TYPE g gauge')],
    ['a second HELP', replace('# TYPE g gauge', '# HELP g x\n# HELP g y\n# TYPE g gauge')],
    ['TYPE after samples', replace('g{x="2"} Nan', 'g{x="2"} Nan\n# TYPE g gauge')],
    ['a non-contiguous family', replace('untyped_thing 1', 'g{x="3"} 1')],
    ['a duplicate series', replace('g{x="2"} Nan', 'g{x="2"} Nan\ng{x="2"} 1')],
    [
      'a duplicate series with labels reordered',
      replace('a_total{kind="other"} 1e3', 'a_total{b="2",kind="x\\"y\\\\z\\nw"} 1'),
    ],
    ['a negative counter', replace('a_total{kind="other"} 1e3', 'a_total{kind="other"} -1')],
    ['a histogram without +Inf', without('h_seconds_bucket{route="/a/:id",le="+Inf"} 4')],
    ['a histogram without _count', without('h_seconds_count{route="/a/:id"} 4')],
    ['a histogram without _sum', without('h_seconds_sum{route="/a/:id"} 2.5')],
    ['non-cumulative buckets', replace('le="1"} 3', 'le="1"} 0')],
    ['+Inf bucket ≠ _count', replace('h_seconds_count{route="/a/:id"} 4', 'h_seconds_count{route="/a/:id"} 5')],
    ['le not increasing', replace('le="1"} 3', 'le="0.01"} 3')],
    ['a bucket without le', replace('le="1"} 3', 'xx="1"} 3')],
    ['a summary quantile out of range', replace('s{quantile="0.5"} 1', 's{quantile="1.5"} 1')],
  ])('rejects %s', (_what, text) => {
    expect(() => parsePrometheusText(text)).toThrow(PrometheusTextError);
  });
});
