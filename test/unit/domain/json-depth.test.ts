import { describe, expect, it } from 'vitest';
import { formatPath, tooDeepPath } from '../../../src/domain/json-depth.js';
import { toRe2Syntax } from '../../../src/domain/regex-syntax.js';

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { k: value } : [value];
  return value;
}

describe('tooDeepPath', () => {
  it('counts containers: a value at the limit passes, one more level is reported with its path', () => {
    expect(tooDeepPath(nested(64), 64)).toBeUndefined();
    const path = tooDeepPath(nested(65), 64);
    expect(path).toHaveLength(64);
    expect(path?.slice(0, 3)).toEqual(['k', '0', 'k']);
  });

  it('walks 100 000 levels without recursion', () => {
    let text = '1';
    for (let i = 0; i < 100_000; i++) text = `[${text}]`;
    expect(tooDeepPath(JSON.parse(text), 64)?.length).toBe(64);
  });

  it('prefixes the base path, ignores scalars and finds the deep branch among shallow ones', () => {
    expect(tooDeepPath('text', 1)).toBeUndefined();
    expect(tooDeepPath({ a: 1, b: { c: { d: {} } } }, 3, ['input'])).toEqual(['input', 'b', 'c', 'd']);
  });

  it('formats long paths on one line', () => {
    expect(formatPath(['a', 'b'])).toBe('a.b');
    expect(formatPath(Array.from({ length: 40 }, () => 'x'))).toBe(`${Array(10).fill('x').join('.')}…`);
  });
});

describe('toRe2Syntax', () => {
  it('spells \\uXXXX and \\u{…} the RE2 way and leaves every other escape alone', () => {
    expect(toRe2Syntax('^\\u0063at$')).toBe('^\\x{0063}at$');
    expect(toRe2Syntax('\\u{1F600}+')).toBe('\\x{1F600}+');
    expect(toRe2Syntax('\\\\u0063')).toBe('\\\\u0063');
    expect(toRe2Syntax('[\\d\\-]\\u00e9')).toBe('[\\d\\-]\\x{00e9}');
    expect(toRe2Syntax('plain')).toBe('plain');
  });
});
