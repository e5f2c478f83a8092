import fc from 'fast-check';

/**
 * What the route fuzz mixes into schema-valid requests: near-valid records (one part
 * replaced, removed, renamed or wrapped), `__proto__` / `constructor` / `prototype` keys at any
 * depth, nesting deep enough to overflow a recursive reader, strings at and past their limits, and
 * bodies a JSON route should refuse (wrong content types, invalid JSON text). Bodies are JSON
 * *text*, so keys JavaScript treats specially and depths JSON.stringify cannot reach are sent as
 * they are.
 */

export type Json = unknown;
type Path = ReadonlyArray<string | number>;

/** Names every object inherits: as keys they shadow, as looked-up names they find Object.prototype. */
export const PROPERTY_WORDS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'isPrototypeOf',
] as const;

/** Strings that have broken parsers, paths, templates, SQL and FTS queries somewhere. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\t\n',
  '.',
  '..',
  '../../../etc/passwd',
  '..%2f..%2f',
  '%00',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uFFFE',
  'é́́́', // a letter under stacked combining marks
  '\u202Eevil', // right-to-left override
  '👩‍👩‍👧‍👦',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '"; DROP TABLE workflows; --',
  '"unbalanced',
  'NEAR(a b)',
  'a* OR b*',
  '*',
  '-',
  '^',
  '{{input.x}}',
  '{{steps.ghost.output}}',
  '{{',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as it is
  '${7*7}',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-1',
  '0',
  '1e309',
  '0x1F',
  ' 1',
  '1.5',
  'true',
  'wf_',
  'wf_00000000000000000000000000',
  ...PROPERTY_WORDS,
];

export const HOSTILE_NUMBERS: readonly number[] = [
  -1,
  0,
  -0,
  0.5,
  1.5,
  2 ** 31,
  2 ** 53,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER,
  1e308,
  -1e308,
  5e-324,
];

/**
 * Sets `key` as an own, enumerable property, even `__proto__` (an assignment or Object.assign would
 * call the prototype setter instead), so JSON.stringify writes it out.
 */
function defineOwn<T extends object>(target: T, key: string, value: Json): T {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

const ownEntry = (key: string, value: Json): Record<string, Json> => defineOwn({}, key, value);

/** A shallow copy of a record that keeps every own key. */
function copyRecord(record: Record<string, Json>): Record<string, Json> {
  const copy: Record<string, Json> = {};
  for (const [k, v] of Object.entries(record)) defineOwn(copy, k, v);
  return copy;
}

const POLLUTING_VALUES: readonly Json[] = [
  { polluted: true },
  { prototype: { polluted: true } },
  ownEntry('__proto__', { polluted: true }),
  { toString: 'polluted', valueOf: 1 },
];

/** A JSON value nested `depth` levels: arrays, objects, or both in turn. */
export function deepJsonText(depth: number, shape: 'array' | 'object' | 'mixed', leaf = '1'): string {
  if (shape === 'array') return `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
  if (shape === 'object') return `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
  const pairs = Math.ceil(depth / 2);
  return `${'[{"a":'.repeat(pairs)}${leaf}${'}]'.repeat(pairs)}`;
}

/** Node trees `depth` sequences deep (zod's parse of such trees once overflowed the stack: a 500). */
function nestedSequences(depth: number): Json {
  let node: Json = { type: 'prompt', name: 'leaf', agent: 'analyst', user: 'hi' };
  for (let i = 0; i < depth; i++) node = { type: 'sequence', name: `level-${i}`, steps: [node] };
  return node;
}

/** Values that are wrong almost anywhere, as JavaScript values (their JSON text is what gets sent). */
export const nastyValue: fc.Arbitrary<Json> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.constantFrom(...HOSTILE_NUMBERS),
  fc.constantFrom(...POLLUTING_VALUES),
  fc.constantFrom(null, true, false, [], {}, [null], { '': '' }),
  // Built once: values are never mutated in place (setAt copies the path it changes).
  fc.constantFrom(...[60, 64, 65, 500, 2000].map((depth) => JSON.parse(deepJsonText(depth, 'array')) as Json)),
  fc.constantFrom(...[9, 10, 63, 64, 65, 300, 1500].map(nestedSequences)),
  // Schemas that are expensive to honour, where a JSON Schema is accepted (responseFormat).
  fc.constantFrom<Json>(
    { type: 'array', minItems: 1e9 },
    { type: 'string', pattern: '(a+)+$' },
    { type: 'string', pattern: '(' },
    { type: 'nope' },
    { $ref: '#' },
    { $ref: 'http://127.0.0.1:1/schema.json' },
  ),
);

/** Every path into a JSON value (arrays of keys), the root included, down to `limit` levels. */
export function pathsOf(value: Json, limit = 12, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (prefix.length >= limit) return out;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...pathsOf(v, limit, [...prefix, i]));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, limit, [...prefix, k]));
  }
  return out;
}

/** A copy of `root` with the value at `path` replaced by `mutate(current)`; `undefined` removes it. */
export function setAt(root: Json, path: Path, mutate: (current: Json) => Json | undefined): Json {
  if (path.length === 0) return mutate(root);
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  if (Array.isArray(root)) {
    const copy = [...root];
    const next = setAt(copy[Number(head)], rest, mutate);
    if (next === undefined) copy.splice(Number(head), 1);
    else copy[Number(head)] = next;
    return copy;
  }
  if (root === null || typeof root !== 'object') return root;
  // Own properties copied one by one: a spread would drop a `__proto__` key a mixin put in.
  const copy = copyRecord(root as Record<string, Json>);
  const key = String(head);
  const next = setAt(Object.hasOwn(copy, key) ? copy[key] : undefined, rest, mutate);
  if (next === undefined) delete copy[key];
  else defineOwn(copy, key, next);
  return copy;
}

const MUTATIONS = ['replace', 'remove', 'extra-key', 'rename-key', 'wrap', 'duplicate', 'stringify'] as const;

/** One change to a record: which path (an index into pathsOf), how, with what. */
export type Mutation = [pick: number, kind: (typeof MUTATIONS)[number], value: Json, key: string];

export const mutationArbitrary: fc.Arbitrary<Mutation> = fc.tuple(
  fc.nat(),
  fc.constantFrom(...MUTATIONS),
  nastyValue,
  fc.oneof(fc.constantFrom(...PROPERTY_WORDS), fc.string({ maxLength: 20 })),
);

const isRecord = (value: Json): value is Record<string, Json> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The near-valid record: `base` with one field replaced, removed, renamed, duplicated or given a sibling. */
export function mutate(base: Json, [pick, kind, value, key]: Mutation): Json {
  const all = pathsOf(base);
  const path = all[pick % all.length] as Path;
  switch (kind) {
    case 'replace':
      return setAt(base, path, () => value);
    case 'remove':
      return setAt(base, path, () => undefined) ?? {};
    case 'extra-key':
      return setAt(base, path, (current) => (isRecord(current) ? defineOwn(copyRecord(current), key, value) : current));
    case 'rename-key': {
      const last = path.at(-1);
      if (typeof last !== 'string') return base;
      const parent = path.slice(0, -1);
      return setAt(base, parent, (current) => {
        if (!isRecord(current)) return current;
        const renamed = copyRecord(current);
        delete renamed[last];
        return defineOwn(renamed, key, current[last]);
      });
    }
    case 'wrap':
      return setAt(base, path, (current) => ({ type: 'sequence', name: 'wrap', steps: [current, current] }));
    case 'duplicate':
      return setAt(base, path, (current) => [current, current]);
    default:
      return setAt(base, path, (current) => JSON.stringify(current) ?? 'null');
  }
}

/** `base` with a `__proto__`, `constructor` or `prototype` key holding a polluting value at one of its paths. */
export function withPrototypeKey(base: Json, pick: number, key: string, valuePick: number): Json {
  const objects = pathsOf(base).filter((p) => {
    let v: Json = base;
    for (const k of p) v = (v as Record<string | number, Json>)[k];
    return isRecord(v);
  });
  const value = POLLUTING_VALUES[valuePick % POLLUTING_VALUES.length];
  const path = objects[pick % objects.length];
  if (path === undefined) return ownEntry(key, value);
  return setAt(base, path, (current) => defineOwn(copyRecord(current as Record<string, Json>), key, value));
}

const SENTINEL = '__fuzz_sentinel_6b1f__';

/** JSON text of `base` with the value at one of its paths replaced by `replacement` (raw JSON text). */
export function textWithRawValue(base: Json, pick: number, replacement: string): string {
  const all = pathsOf(base);
  const path = all[pick % all.length] as Path;
  const text = JSON.stringify(setAt(base, path, () => SENTINEL)) ?? 'null';
  return text.replace(`"${SENTINEL}"`, () => replacement);
}

/** How deep the deep-nesting mixin goes: just under and over the body guard's 64, and far past it. */
export const DEEP_LEVELS = [32, 63, 64, 65, 100, 1000, 5000] as const;

/**
 * JSON text that is not what a JSON route expects: truncated, trailing garbage, comments, NaN,
 * duplicated keys, a byte-order mark, numbers JSON.parse turns into Infinity, lone surrogates.
 */
export const INVALID_JSON_TEXTS: readonly string[] = [
  '',
  ' ',
  '{',
  '{"name":',
  '{"a":1,}',
  '[1,2',
  '{"a":1}}',
  '{"a":1} trailing',
  "{'a':1}",
  '{a:1}',
  '/* c */ {}',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":1e400}',
  '{"a":-1e400}',
  '{"a":1,"a":2}',
  '\uFEFF{}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '"just a string"',
  'null',
  'true',
  '0',
  '[]',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"a":{"__proto__":{"polluted":true}}}',
  '\u0000',
];

/** Content types a JSON route gets sent by mistake or on purpose; `undefined` sends none. */
export const WRONG_CONTENT_TYPES: ReadonlyArray<string | undefined> = [
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  'application/jsonx',
  'application/json-patch+json',
  'APPLICATION/JSON',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json;;',
  'text/json',
  '*/*',
  '',
  'application/',
  ';',
];
