/**
 * Canonical JSON (docs/design.md#caching): JSON.stringify semantics, but object keys sorted by UTF-16 code
 * units, so the text, and therefore the cache key, never depends on insertion order.
 *
 * It runs before every provider call, so it is written for speed (docs/design.md#tests-and-checks: key + lookup
 * ≤ 15 µs over a 2 KB request):
 * - one recursive pass building the string with `+=` (V8 ropes), no intermediate arrays;
 * - strings go through JSON.stringify (native escaping), finite numbers through String();
 * - objects whose keys are already in order skip sorting; two-key objects swap; larger ones reuse
 *   the sorted order of their "shape" (key list) from a small Map, since requests repeat the same
 *   few shapes (messages, content blocks, tool definitions);
 * - the quoted form of each key is memoised too: the key vocabulary of requests is small.
 */

/** Sorted key orders by shape. Bounded: cleared when full, so a flood of odd shapes costs only speed. */
const MAX_SHAPES = 256;
const shapes = new Map<string, { keys: string[]; sorted: string[] }>();

/** `"key"` for each key seen; bounded like the shapes. Keys longer than this are quoted afresh. */
const MAX_QUOTED = 2048;
const MAX_QUOTED_KEY_LENGTH = 64;
const quoted = new Map<string, string>();

const CIRCULAR = 'Converting circular structure to JSON';

/**
 * The canonical JSON text of `value`. Undefined, functions and symbols are omitted as object
 * members and written `null` in arrays; `toJSON` is honoured; NaN and ±Infinity are `null`;
 * a BigInt or a circular structure throws the TypeError JSON.stringify would. Where
 * JSON.stringify would return undefined (a bare `undefined` or function), this returns `null`
 * so the result is always a string.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '', []) ?? 'null';
}

/** Characters JSON must escape (and lone surrogates, which well-formed JSON.stringify escapes). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what JSON escapes.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function quote(value: string): string {
  // Most request text needs no escaping: skip JSON.stringify's call and copy when it does not.
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/** `key` is the member name or array index, needed only to call toJSON(key); numbers avoid a String() per element. */
function write(value: unknown, key: string | number, stack: object[]): string | undefined {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        return writeResolved((value as { toJSON: (key: string) => unknown }).toJSON(String(key)), stack);
      }
      return writeObject(value, stack);
    case 'bigint':
      if (typeof (value as unknown as { toJSON?: unknown }).toJSON === 'function') {
        return writeResolved((value as unknown as { toJSON: (key: string) => unknown }).toJSON(String(key)), stack);
      }
      throw new TypeError('Do not know how to serialize a BigInt');
    default:
      return undefined;
  }
}

/** A value returned by toJSON: serialised as is (JSON.stringify calls toJSON once per member). */
function writeResolved(value: unknown, stack: object[]): string | undefined {
  if (typeof value === 'object' && value !== null) return writeObject(value, stack);
  if (typeof value === 'bigint') throw new TypeError('Do not know how to serialize a BigInt');
  return write(value, '', stack);
}

function writeObject(value: object, stack: object[]): string {
  const depth = stack.length;
  // Ancestors only (not every object seen): a shared, acyclic reference is legal JSON.
  for (let i = 0; i < depth; i++) if (stack[i] === value) throw new TypeError(CIRCULAR);
  stack.push(value);

  let out: string;
  if (Array.isArray(value)) {
    const n = value.length;
    out = '[';
    for (let i = 0; i < n; i++) {
      if (i > 0) out += ',';
      out += write(value[i], i, stack) ?? 'null';
    }
    out += ']';
  } else if (
    Object.getPrototypeOf(value) !== Object.prototype &&
    (value instanceof Number || value instanceof String || value instanceof Boolean)
  ) {
    // Boxed primitives serialise as their primitive, as in JSON.stringify.
    out = write(value.valueOf(), '', stack) ?? 'null';
  } else {
    const record = value as Record<string, unknown>;
    const keys = sortedKeys(Object.keys(record));
    out = '{';
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const member = write(record[k], k, stack);
      if (member === undefined) continue;
      if (first) first = false;
      else out += ',';
      out += quoteKey(k);
      out += ':';
      out += member;
    }
    out += '}';
  }

  stack.pop();
  return out;
}

function sortedKeys(keys: string[]): string[] {
  const n = keys.length;
  if (n < 2) return keys;
  let inOrder = true;
  for (let i = 1; i < n; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) {
      inOrder = false;
      break;
    }
  }
  if (inOrder) return keys;
  if (n === 2) return [keys[1] as string, keys[0] as string];

  // The joined shape can collide for keys containing \u0000, so a hit is confirmed key by key.
  const shape = keys.join('\u0000');
  const cached = shapes.get(shape);
  if (cached !== undefined && sameKeys(cached.keys, keys)) return cached.sorted;
  const sorted = keys.slice().sort();
  if (shapes.size >= MAX_SHAPES) shapes.clear();
  shapes.set(shape, { keys, sorted });
  return sorted;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function quoteKey(key: string): string {
  let q = quoted.get(key);
  if (q !== undefined) return q;
  q = quote(key);
  if (key.length <= MAX_QUOTED_KEY_LENGTH) {
    if (quoted.size >= MAX_QUOTED) quoted.clear();
    quoted.set(key, q);
  }
  return q;
}
