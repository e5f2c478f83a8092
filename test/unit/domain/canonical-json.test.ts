import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/domain/canonical-json.js';

/** The same value with every object's keys re-inserted in a shuffled order (arrays keep theirs). */
function shuffledKeys(value: unknown, rand: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffledKeys(v, rand));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  const out: Record<string, unknown> = {};
  // defineProperty, not assignment: a `__proto__` key must stay an own member.
  for (const k of keys) define(out, k, shuffledKeys((value as Record<string, unknown>)[k], rand));
  return out;
}

/**
 * Reference: JSON.stringify first (it settles toJSON, undefined, boxed values…), then a naive
 * sorted-key writer over the parsed result. Written as text, not by rebuilding objects: V8 would
 * put integer-like keys first again.
 */
function reference(value: unknown): string {
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${write((v as Record<string, unknown>)[k])}`).join(',')}}`;
  };
  const json = JSON.stringify(value);
  return json === undefined ? 'null' : write(JSON.parse(json));
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const anyJson = fc.jsonValue();
const anyValue = fc.anything({
  withBoxedValues: true,
  withDate: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
});

describe('canonicalJson', () => {
  it('key order never changes the text', () => {
    fc.assert(
      fc.property(anyJson, fc.integer(), (value, seed) => {
        let s = seed;
        const rand = () => {
          s = (s * 1103515245 + 12345) & 0x7fffffff;
          return s / 0x80000000;
        };
        expect(canonicalJson(shuffledKeys(value, rand))).toBe(canonicalJson(value));
      }),
      { numRuns: 300 },
    );
  });

  it('is valid JSON that parses back to the same value, with sorted keys', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        const text = canonicalJson(value);
        expect(text).toBe(reference(value));
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });

  it('follows JSON.stringify semantics on arbitrary JavaScript values', () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 500 },
    );
  });

  it('omits undefined, functions and symbols in objects and writes null for them in arrays', () => {
    const value = { b: undefined, a: () => 1, c: Symbol('s'), d: [undefined, () => 1, Symbol('s'), 1] };
    expect(canonicalJson(value)).toBe('{"d":[null,null,null,1]}');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('writes non-finite numbers as null and -0 as 0', () => {
    expect(canonicalJson({ z: Number.NaN, y: Number.POSITIVE_INFINITY, x: Number.NEGATIVE_INFINITY, w: -0 })).toBe(
      '{"w":0,"x":null,"y":null,"z":null}',
    );
  });

  it('honours toJSON (with the member key) and unwraps boxed primitives', () => {
    const at = new Date(Date.UTC(2025, 0, 2, 3, 4, 5));
    const custom = { toJSON: (key: string) => ({ k: key, b: 2, a: 1 }) };
    expect(canonicalJson({ at, custom, n: Object(3), s: Object('x') })).toBe(
      '{"at":"2025-01-02T03:04:05.000Z","custom":{"a":1,"b":2,"k":"custom"},"n":3,"s":"x"}',
    );
  });

  it('sorts keys by code unit, including integer-like keys', () => {
    expect(canonicalJson({ b: 1, 10: 2, 9: 3, a: 4, é: 5, Z: 6 })).toBe('{"10":2,"9":3,"Z":6,"a":4,"b":1,"é":5}');
  });

  it('escapes strings and keys like JSON.stringify', () => {
    const value = { 'q"uote': 'line\nbreak \u2028 \u0000 "x"', '\\': '\ud800' };
    expect(canonicalJson(value)).toBe(reference(value));
  });

  it('throws the JSON.stringify TypeError on a circular structure, at any depth', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    expect(() => canonicalJson(a)).toThrow(new TypeError('Converting circular structure to JSON'));
    const arr: unknown[] = [1];
    arr.push({ inner: [arr] });
    expect(() => canonicalJson(arr)).toThrowError(TypeError);
    expect(() => canonicalJson(arr)).toThrow('Converting circular structure to JSON');
  });

  it('accepts a shared reference that is not a cycle', () => {
    const shared = { z: 1, a: 2 };
    expect(canonicalJson({ p: shared, q: [shared, shared] })).toBe(
      '{"p":{"a":2,"z":1},"q":[{"a":2,"z":1},{"a":2,"z":1}]}',
    );
  });

  it('throws on BigInt like JSON.stringify', () => {
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
  });

  it('never confuses two shapes whose joined key lists collide', () => {
    const one = { b: 1, 'a\u0000c': 2, d: 3 };
    const two = { 'b\u0000a': 1, c: 2, d: 3 };
    expect(canonicalJson(one)).toBe(reference(one));
    expect(canonicalJson(two)).toBe(reference(two));
    expect(canonicalJson(one)).toBe(reference(one));
  });
});
