import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytesWithin } from '../../../src/domain/json-size.js';

const exact = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

describe('jsonBytesWithin', () => {
  it('counts exactly the bytes JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonBytesWithin(value, Number.MAX_SAFE_INTEGER)).toBe(exact(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('counts escapes, multi-byte characters and skipped members as JSON.stringify does', () => {
    const value = {
      'k"ey': 'line\nbreak \u2028 é 🎉',
      gone: undefined,
      n: -0.5e-7,
      list: [undefined, true, null, 1e21],
    };
    expect(jsonBytesWithin(value, 10_000)).toBe(exact(value));
  });

  it('answers undefined once the text would pass the limit, and the size at the limit itself', () => {
    const value = { text: 'x'.repeat(100) };
    const size = exact(value);
    expect(jsonBytesWithin(value, size)).toBe(size);
    expect(jsonBytesWithin(value, size - 1)).toBeUndefined();
  });

  it('walks 10 000 levels without overflowing the stack', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    expect(jsonBytesWithin(deep, 1_000_000)).toBe(10_000 * 6 + 8);
  });
});
