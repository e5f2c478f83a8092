import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { AUTH_A, type FuzzApp, KEY_A, type OpenApiDocument, type OpenApiOperation } from './fuzz-app.js';
import {
  DEEP_LEVELS,
  deepJsonText,
  HOSTILE_STRINGS,
  INVALID_JSON_TEXTS,
  type Json,
  mutate,
  mutationArbitrary,
  nastyValue,
  PROPERTY_WORDS,
  pathsOf,
  setAt,
  textWithRawValue,
  WRONG_CONTENT_TYPES,
  withPrototypeKey,
} from './hostile-requests.js';
import type { RouteEntry } from './route-inventory.js';
import { type JsonSchema, limitsIn, schemaArbitrary, subschemaAt } from './schema-arbitrary.js';

/**
 * The requests the route fuzz sends to one route, derived from its OpenAPI operation: path, query
 * and header parameters from their schemas (or real ids, or hostile strings), and for every method
 * but GET a body from the body's JSON Schema mixed with the hostile mixins of hostile-requests.ts.
 */

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** Which generator made it (figures, and the counterexample's first line). */
  kind: string;
  /** Every path, query and header parameter is valid by the operation's own schema (and none is extra). */
  paramsValid: boolean;
}

/** `/v1/workflows/:id` → `/v1/workflows/{id}`, the OpenAPI path. */
const openApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export function operationOf(fuzz: FuzzApp, route: RouteEntry): OpenApiOperation | undefined {
  return fuzz.document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
}

/** encodeURIComponent that never throws: a lone surrogate is sent as the UTF-8 of U+FFFD, as a browser would. */
function percentEncode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return encodeURIComponent(Buffer.from(value, 'utf8').toString('utf8'));
  }
}

/** Path segments sent as they are (not encoded): traversal, bad percent escapes, separators. */
const RAW_SEGMENTS = ['..', '.', '%', '%zz', '%00', '%2e%2e', '%2F', '..%2F..%2Fetc', '..;', '~', '%ff', '%C0%AE'];

/** Strings at and one past each limit, and far past them; built once per length (they are immutable). */
function longStrings(limits: readonly number[]): fc.Arbitrary<string> {
  const lengths = [...new Set([...limits.flatMap((n) => [n, n + 1]), 1000, 10_000])];
  return fc.constantFrom(...lengths.flatMap((n) => ['a', 'é', '_'].map((c) => c.repeat(n))));
}

const resolver =
  (doc: OpenApiDocument) =>
  (ref: string): JsonSchema => {
    const name = ref.replace('#/components/schemas/', '');
    const schema = doc.components.schemas[name];
    if (!schema) throw new Error(`unknown $ref ${ref}`);
    return schema;
  };

const arbitraries = new WeakMap<JsonSchema, fc.Arbitrary<unknown>>();

/** The schema's arbitrary, built once per schema object of the document. */
function arbitraryOf(fuzz: FuzzApp, schema: JsonSchema): fc.Arbitrary<unknown> {
  let arbitrary = arbitraries.get(schema);
  if (!arbitrary) {
    arbitrary = schemaArbitrary(schema, { resolve: resolver(fuzz.document), words: PROPERTY_WORDS });
    arbitraries.set(schema, arbitrary);
  }
  return arbitrary;
}

/** A generated part of a request, and whether every parameter in it is valid by its declared schema. */
interface Part<T> {
  value: T;
  valid: boolean;
}

const tagged =
  (valid: boolean) =>
  <T>(value: T): Part<T> => ({ value, valid });

/** A parameter's value: valid by its schema, a real id, a hostile string, random text, or too long. */
function parameterValue(fuzz: FuzzApp, schema: JsonSchema, real: readonly string[]): fc.Arbitrary<Part<string>> {
  const valid = arbitraryOf(fuzz, schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const options: Array<fc.WeightedArbitrary<Part<string>>> = [
    { arbitrary: valid.map(tagged(true)), weight: 3 },
    { arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map(tagged(false)), weight: 2 },
    { arbitrary: fc.string({ maxLength: 30, unit: 'binary' }).map(tagged(false)), weight: 1 },
    // At a limit is still valid (the route must take it), one past is not: the schema says which.
    {
      arbitrary: longStrings(limitsIn(schema).maxLength).map((value) => ({
        value,
        valid: fuzz.validator(schema)(value),
      })),
      weight: 1,
    },
    // Opaque tokens (cursors) are base64url JSON: well-formed encodings of the wrong values.
    {
      arbitrary: nastyValue
        .map((v) => Buffer.from(JSON.stringify([v]) ?? 'null', 'utf8').toString('base64url'))
        .map(tagged(false)),
      weight: 1,
    },
  ];
  if (real.length > 0) options.push({ arbitrary: fc.constantFrom(...real).map(tagged(true)), weight: 4 });
  return fc.oneof(...options);
}

/** Header values Node would send at all: no control characters but tab, latin-1 only. */
const headerSafe = (value: string): string => value.replace(/[^\t\x20-\x7E\x80-\xFF]/g, '');

function pathArbitrary(
  fuzz: FuzzApp,
  route: RouteEntry,
  operation: OpenApiOperation | undefined,
): fc.Arbitrary<Part<string>> {
  const segments = route.url.split('/');
  const keys = segments.map((segment, i) => `${segments[i - 1]}/${segment}`);
  const parts = segments.map((segment, i): fc.Arbitrary<Part<string>> => {
    if (segment === '*' || segment.startsWith(':')) {
      const name = segment === '*' ? '*' : segment.slice(1);
      const param = operation?.parameters?.find((p) => p.in === 'path' && p.name === name);
      const real = fuzz.known[keys[i] as string] ?? [];
      const value = parameterValue(fuzz, param?.schema ?? { type: 'string' }, real).map((part) => ({
        value: percentEncode(part.value),
        // `.` and `..` are dot segments every URL parser resolves (encoded too): the route never sees them.
        valid: part.valid && part.value !== '.' && part.value !== '..',
      }));
      // A wildcard takes slashes as they are: traversal through it is the point.
      const raw = segment === '*' ? [...RAW_SEGMENTS, '../../package.json', 'a/../../b', '/etc/passwd'] : RAW_SEGMENTS;
      return fc.oneof({ arbitrary: value, weight: 9 }, fc.constantFrom(...raw).map(tagged(false)));
    }
    return fc.constant({ value: segment, valid: true });
  });
  const independent = fc.tuple(...parts);
  const joined = (values: Array<Part<string>>): Part<string> => ({
    value: values.map((v) => v.value).join('/'),
    valid: values.every((v) => v.valid),
  });
  // Ids that belong together (a workflow and one of its nodes) for routes that take several.
  const together = fuzz.related.filter((tuple) => keys.filter((k) => k in tuple).length >= 2);
  if (together.length === 0) return independent.map(joined);
  const coherent = fc.tuple(fc.constantFrom(...together), independent).map(([tuple, values]) =>
    values.map((v, i) => {
      const real = tuple[keys[i] as string];
      return real === undefined ? v : { value: real, valid: true };
    }),
  );
  return fc.oneof({ arbitrary: independent, weight: 3 }, coherent).map(joined);
}

function queryArbitrary(fuzz: FuzzApp, operation: OpenApiOperation | undefined): fc.Arbitrary<Part<string>> {
  const declared = (operation?.parameters ?? []).filter((p) => p.in === 'query');
  const pair = (name: string, value: string) => `${percentEncode(name)}=${percentEncode(value)}`;
  const params = declared.map((p) =>
    fc.option(
      fc.oneof(
        {
          arbitrary: parameterValue(fuzz, p.schema ?? {}, []).map((v) => ({ ...v, value: [pair(p.name, v.value)] })),
          weight: 6,
        },
        // Given twice: the parser hands over an array.
        fc
          .tuple(parameterValue(fuzz, p.schema ?? {}, []), fc.string())
          .map(([a, b]) => ({ value: [pair(p.name, a.value), pair(p.name, b)], valid: false })),
        fc.constant({ value: [percentEncode(p.name)], valid: false }),
      ),
      { nil: { value: [], valid: p.required !== true }, freq: 2 },
    ),
  );
  const extra = fc.oneof(
    { arbitrary: fc.constant<string[]>([]), weight: 6 },
    fc
      .tuple(
        fc.constantFrom(...PROPERTY_WORDS, 'a[b]', '__proto__[polluted]', 'constructor[prototype][polluted]'),
        fc.string(),
      )
      .map(([k, v]) => [pair(k, v)]),
    fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([k, v]) => [pair(k, v)]),
    fc.constantFrom(['%'], ['%zz=1'], ['=1'], ['&&&'], ['a=%ff'], ['__proto__=1'], ['limit=1&limit=%00']),
  );
  return fc.tuple(fc.tuple(...params), extra).map(([values, more]) => {
    const all = [...values.flatMap((v) => v.value), ...more];
    return {
      value: all.length > 0 ? `?${all.join('&')}` : '',
      valid: values.every((v) => v.valid) && more.length === 0,
    };
  });
}

function headerArbitrary(
  fuzz: FuzzApp,
  operation: OpenApiOperation | undefined,
): fc.Arbitrary<Part<Record<string, string>>> {
  const declared = (operation?.parameters ?? []).filter((p) => p.in === 'header');
  const auth = fc.oneof(
    { arbitrary: fc.constant<Record<string, string>>(AUTH_A), weight: 40 },
    fc.constantFrom<Record<string, string>>(
      {},
      { authorization: 'Bearer' },
      { authorization: `Basic ${KEY_A}` },
      { authorization: `Bearer ${KEY_A}x` },
      { authorization: `bearer   ${KEY_A}  ` },
    ),
  );
  const params = declared.map((p) =>
    fc.option(
      parameterValue(fuzz, p.schema ?? {}, []).map((v) => {
        const value = headerSafe(v.value);
        // HTTP trims a header value's ends: only an untouched value is still the one generated.
        return { value: { [p.name]: value }, valid: v.valid && value === v.value && value.trim() === value };
      }),
      { nil: { value: {}, valid: p.required !== true }, freq: 2 },
    ),
  );
  return fc.tuple(auth, fc.tuple(...params)).map(([a, parts]) => ({
    value: Object.assign({}, a, ...parts.map((part) => part.value)) as Record<string, string>,
    valid: parts.every((part) => part.valid),
  }));
}

/** examples/*.json the operation's body schema could take: more valid starting points for near-valid records. */
function exampleFiles(): Json[] {
  const dir = new URL('../../examples/', import.meta.url);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as Json);
}

const DEEP_TEXTS = DEEP_LEVELS.flatMap((depth) =>
  (['array', 'object', 'mixed'] as const).map((shape) => deepJsonText(depth, shape)),
);

const bodiesAtLimit = new Map<number, string[]>();

/** JSON texts of `limit - 64`, `limit` and `limit + 1` bytes, built once. */
function atBodyLimit(limit: number): string[] {
  let bodies = bodiesAtLimit.get(limit);
  if (!bodies) {
    const overhead = JSON.stringify({ name: '' }).length;
    bodies = [-64, 0, 1].map((delta) => JSON.stringify({ name: 'x'.repeat(limit + delta - overhead) }));
    bodiesAtLimit.set(limit, bodies);
  }
  return bodies;
}

interface Body {
  payload?: string;
  contentType?: string;
  kind: string;
}

function bodyArbitrary(
  fuzz: FuzzApp,
  operation: OpenApiOperation | undefined,
  files: readonly Json[],
): fc.Arbitrary<Body> {
  const media = operation?.requestBody?.content?.['application/json'];
  const schema = media?.schema;
  const resolve = resolver(fuzz.document);
  const json = (value: Json, kind: string): Body => ({
    payload: JSON.stringify(value) ?? 'null',
    contentType: 'application/json',
    kind,
  });
  const valid = schema ? arbitraryOf(fuzz, schema) : fc.constantFrom<Json>({}, null, []);
  // Valid starting points for near-valid records: the operation's example, its component's, and the
  // example files (examples/*.json) its schema takes.
  const componentName = typeof schema?.$ref === 'string' ? schema.$ref.split('/').at(-1) : undefined;
  const componentExamples = (componentName && fuzz.document.components.schemas[componentName]?.examples) || [];
  const accepts = schema ? fuzz.validator(schema) : () => false;
  const candidates = [media?.example, ...(componentExamples as Json[]), ...files];
  const bases = candidates.filter((c) => c !== undefined && accepts(c));
  const base = bases.length > 0 ? fc.oneof(fc.constantFrom(...bases), valid) : valid;
  const { maxLength } = schema ? limitsIn(schema, resolve) : { maxLength: [] };

  // One field of a valid record replaced by another value its schema allows: valid, but unlike the examples.
  const regenerated = schema
    ? fc.tuple(base, fc.nat()).chain(([b, pick]) => {
        const all = pathsOf(b);
        const path = all[pick % all.length] ?? [];
        const sub = subschemaAt(schema, path, b, resolve, fuzz.validator);
        return arbitraryOf(fuzz, sub).map((v) =>
          json(
            setAt(b, path, () => v),
            'regenerated',
          ),
        );
      })
    : valid.map((v) => json(v, 'regenerated'));

  return fc.oneof(
    { arbitrary: valid.map((v) => json(v, 'schema-valid')), weight: 3 },
    { arbitrary: regenerated, weight: 4 },
    { arbitrary: base.map((v) => json(v, 'example')), weight: 1 },
    {
      arbitrary: fc
        .tuple(base, fc.array(mutationArbitrary, { minLength: 1, maxLength: 3 }))
        .map(([b, ms]) => json(ms.reduce<Json>(mutate, b), 'near-valid')),
      weight: 6,
    },
    {
      arbitrary: fc
        .tuple(base, fc.nat(), fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.nat())
        .map(([b, pick, key, value]) => json(withPrototypeKey(b, pick, key, value), 'prototype-key')),
      weight: 2,
    },
    {
      arbitrary: fc.tuple(base, fc.nat(), fc.constantFrom(...DEEP_TEXTS)).map(([b, pick, deep]) => ({
        payload: textWithRawValue(b, pick, deep),
        contentType: 'application/json',
        kind: 'deep',
      })),
      weight: 2,
    },
    {
      arbitrary: fc.tuple(base, fc.nat(), longStrings(maxLength)).map(([b, pick, text]) => ({
        payload: textWithRawValue(b, pick, JSON.stringify(text)),
        contentType: 'application/json',
        kind: 'huge-string',
      })),
      weight: 2,
    },
    {
      // Just under, at and past the body limit (past it: a 413 before anything reads it).
      arbitrary: fc.constantFrom(...atBodyLimit(fuzz.bodyLimit)).map((payload) => ({
        payload,
        contentType: 'application/json',
        kind: 'body-limit',
      })),
      weight: 1,
    },
    {
      arbitrary: fc.oneof(fc.jsonValue(), fc.string()).map((v) => json(v, 'random-json')),
      weight: 1,
    },
    {
      arbitrary: fc.oneof(fc.constantFrom(...INVALID_JSON_TEXTS), fc.string({ unit: 'binary' })).map((text) => ({
        payload: text,
        contentType: 'application/json',
        kind: 'invalid-json',
      })),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...WRONG_CONTENT_TYPES), fc.boolean())
        .map(([v, contentType, asForm]) => ({
          payload: asForm ? 'name=x&root[type]=prompt&__proto__[polluted]=1' : (JSON.stringify(v) ?? 'null'),
          ...(contentType === undefined ? {} : { contentType }),
          kind: 'content-type',
        })),
      weight: 2,
    },
    { arbitrary: fc.constant<Body>({ kind: 'no-body' }), weight: 1 },
    { arbitrary: fc.constant<Body>({ payload: '', contentType: 'application/json', kind: 'empty-json' }), weight: 1 },
  );
}

/** Every request the fuzz sends to one route. GETs get no body; every other method gets the body mixins. */
export function requestArbitrary(fuzz: FuzzApp, route: RouteEntry): fc.Arbitrary<FuzzRequest> {
  const operation = operationOf(fuzz, route);
  const body =
    route.method === 'GET' ? fc.constant<Body>({ kind: 'params' }) : bodyArbitrary(fuzz, operation, exampleFiles());
  return fc
    .tuple(
      pathArbitrary(fuzz, route, operation),
      queryArbitrary(fuzz, operation),
      headerArbitrary(fuzz, operation),
      body,
    )
    .map(([path, query, headers, b]) => ({
      method: route.method,
      url: `${path.value}${query.value}`,
      headers: b.contentType === undefined ? headers.value : { ...headers.value, 'content-type': b.contentType },
      ...(b.payload === undefined ? {} : { payload: b.payload }),
      kind: b.kind,
      paramsValid: path.valid && query.valid && headers.valid,
    }));
}
