import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ErrorBodySchema } from '../../src/api/schemas.js';
import { ERROR_CODES, type ErrorCode } from '../../src/domain/errors.js';
import { createLogger } from '../../src/logging/logger.js';
import type { TestApp } from './build-app.js';
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
import { createManualClock, type ManualClock } from './manual-clock.js';
import { buildInventoriedApp, type RouteEntry } from './route-inventory.js';
import { createSchemaValidator, type JsonSchema, limitsIn, schemaArbitrary, subschemaAt } from './schema-arbitrary.js';

/**
 * The route fuzz (issue 11): every route the app registers (its onRoute inventory, not a list kept
 * here), each request derived from the route's OpenAPI operation — its body's JSON Schema and its
 * path, query and header parameters — mixed with hostile values, sent in-process with app.inject.
 * The properties every answer must keep: no 5xx, every 4xx the JSON error shape, no stack trace or
 * source path in a body, no error logged, Object.prototype untouched.
 */

const KEY_A = 'fuzz-key-acme-0000000001';
const KEY_B = 'fuzz-key-globex-00000001';
const AUTH_A = { authorization: `Bearer ${KEY_A}` };
const AUTH_B = { authorization: `Bearer ${KEY_B}` };

interface OpenApiParameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema; example?: Json }> };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

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

/** Real ids and names of the tenants' objects, by `<collection>/:<param>` (`workflows/:id`). */
type KnownValues = Record<string, string[]>;

export interface FuzzApp extends TestApp {
  routes: RouteEntry[];
  clock: ManualClock;
  document: OpenApiDocument;
  /** Known values that hold for the whole suite (finished workflows, their nodes, the tools). */
  stable: KnownValues;
  /** Known values that belong together, by the same keys: a workflow and one of its nodes. */
  related: Array<Record<string, string>>;
  /** The values the route being fuzzed aims at: `stable` plus what refreshFixtures made for it. */
  known: KnownValues;
  /** error-level log lines (a 5xx's "request failed", the engine's "unexpected error"). */
  errorLines: string[];
  bodyLimit: number;
  validator: (schema: JsonSchema) => (value: unknown) => boolean;
}

export async function startFuzzApp(): Promise<FuzzApp> {
  const errorLines: string[] = [];
  const clock = createManualClock();
  const logger = createLogger({
    level: 'error',
    destination: {
      write(line: string) {
        errorLines.push(line);
      },
    },
  });
  // Auth on (two tenants), no rate limit: a 429 for everything would hide the deep paths. Nothing
  // advances the manual clock, so a fuzzed definition that sleeps (latencyMs, a retry) stays parked
  // instead of loading the machine.
  const t = await buildInventoriedApp(
    { API_KEYS: `acme:${KEY_A},globex:${KEY_B}`, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'error' },
    { clock, logger },
  );
  const document = t.app.swagger() as unknown as OpenApiDocument;
  const { known: stable, related } = await createFixtures(t, document);
  const validator = createSchemaValidator(document.components);
  return {
    ...t,
    clock,
    document,
    stable,
    related,
    known: stable,
    errorLines,
    bodyLimit: t.deps.config.BODY_LIMIT_BYTES,
    validator,
  };
}

async function call(
  t: TestApp,
  method: string,
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
): Promise<Record<string, unknown>> {
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  if (res.statusCode >= 300) throw new Error(`fixture ${method} ${url} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

interface TreeNode {
  id: string;
  cacheKeys: string[];
  children: TreeNode[];
}

function flatten(node: TreeNode | null): TreeNode[] {
  return node ? [node, ...node.children.flatMap(flatten)] : [];
}

async function finished(t: TestApp, id: string, auth: Record<string, string>): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const view = await call(t, 'GET', `/v1/workflows/${id}`, auth);
    if (view.status !== 'running' && view.status !== 'idle') return view;
    if (view.checkpoint !== null && (view.checkpoint as { state: string }).state === 'pending') return view;
    if (Date.now() > deadline) throw new Error(`fixture workflow ${id} is still ${view.status}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const exampleBody = (doc: OpenApiDocument, path: string): Json =>
  doc.paths[path]?.post?.requestBody?.content?.['application/json']?.example;

const TENANTS = [
  ['acme', AUTH_A],
  ['globex', AUTH_B],
] as const;

/**
 * What the fuzz aims path parameters at besides random strings, per tenant: a finished workflow
 * (its nodes, cache keys and trace), and the built-in tools. The second tenant's ids must be as
 * unknown to the first as random ones.
 */
async function createFixtures(
  t: TestApp,
  doc: OpenApiDocument,
): Promise<{ known: KnownValues; related: Array<Record<string, string>> }> {
  const known: KnownValues = { 'workflows/:id': [], 'nodes/:nodeId': [], 'cache/:key': [], 'traces/:traceId': [] };
  const related: Array<Record<string, string>> = [];
  const add = (key: string, ...values: string[]) => known[key]?.push(...values);
  for (const [, auth] of TENANTS) {
    const submitted = await call(t, 'POST', '/v1/workflows', auth, exampleBody(doc, '/v1/workflows'));
    const view = await finished(t, String(submitted.id), auth);
    if (view.status !== 'completed') throw new Error(`fixture workflow ended ${view.status}`);
    const nodes = flatten(view.tree as TreeNode | null);
    add('workflows/:id', String(view.id));
    add('traces/:traceId', String(view.traceId));
    add('nodes/:nodeId', ...nodes.map((n) => n.id));
    add('cache/:key', ...nodes.flatMap((n) => n.cacheKeys));
    for (const node of nodes) related.push({ 'workflows/:id': String(view.id), 'nodes/:nodeId': node.id });
  }
  const tools = (await call(t, 'GET', '/v1/tools', AUTH_A)) as { items: Array<{ definition: { name: string } }> };
  known['tools/:tool'] = tools.items.map((tool) => tool.definition.name);
  if (known['tools/:tool'].length === 0) throw new Error('GET /v1/tools lists no tool');
  return { known, related };
}

const WAITING = {
  name: 'migrate-billing',
  task: { type: 'migration', complexity: 'critical' },
  agents: { dev: { model: 'sim/haiku' } },
  root: { type: 'prompt', name: 'plan', agent: 'dev', user: 'Plan the billing migration.' },
};
const PARKED = {
  name: 'parked',
  agents: { slow: { model: 'sim/haiku', simulate: { latencyMs: 600_000 } } },
  root: { type: 'prompt', name: 'wait', agent: 'slow', user: 'Take your time.' },
};

async function exists(t: TestApp, url: string, auth: Record<string, string>): Promise<boolean> {
  return (await t.app.inject({ method: 'GET', url, headers: auth })).statusCode === 200;
}

/**
 * The state a route's fuzz may use up, made again before each route: workflows waiting at a
 * checkpoint (approve, reject) and parked in a model call (cancel), a corpus with documents and a
 * registered agent per tenant (delete). Returns the known values with them.
 */
async function refreshFixtures(fuzz: FuzzApp): Promise<KnownValues> {
  const doc = fuzz.document;
  const fresh: KnownValues = { 'workflows/:id': [], 'corpora/:id': [], 'agents/:name': [] };
  for (const [tenant, auth] of TENANTS) {
    for (const body of [WAITING, WAITING, PARKED]) {
      fresh['workflows/:id']?.push(String((await call(fuzz, 'POST', '/v1/workflows', auth, body)).id));
    }
    // Named as the retrieval examples name it, so those examples reach the retrieval path.
    const corpus = exampleBody(doc, '/v1/corpora') as { name: string };
    if (!(await exists(fuzz, `/v1/corpora/${corpus.name}`, auth))) {
      const created = await call(fuzz, 'POST', '/v1/corpora', auth, corpus);
      await call(
        fuzz,
        'POST',
        `/v1/corpora/${created.id}/documents`,
        auth,
        exampleBody(doc, '/v1/corpora/{id}/documents'),
      );
    }
    const view = await call(fuzz, 'GET', `/v1/corpora/${corpus.name}`, auth);
    fresh['corpora/:id']?.push(String(view.id), corpus.name);
    // The example's name for the first tenant, so definitions naming it reach the registry.
    const agent = exampleBody(doc, '/v1/agents') as { name: string };
    const name = tenant === 'acme' ? agent.name : `${agent.name}-${tenant}`;
    if (!(await exists(fuzz, `/v1/agents/${name}`, auth)))
      await call(fuzz, 'POST', '/v1/agents', auth, { ...agent, name });
    fresh['agents/:name']?.push(name);
  }
  const known: KnownValues = { ...fuzz.stable };
  for (const [key, values] of Object.entries(fresh)) known[key] = [...(known[key] ?? []), ...values];
  return known;
}

/* ------------------------------------------------------------------------------------------------
 * Requests
 * --------------------------------------------------------------------------------------------- */

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

/* ------------------------------------------------------------------------------------------------
 * Properties
 * --------------------------------------------------------------------------------------------- */

/** A V8 stack frame, a source path, Node's internals, or the checkout's own directory. */
const LEAKS = [
  /^\s*at .*:\d+:\d+\)?$/m,
  /node:internal/,
  /\/(?:src|node_modules)\/[\w./@-]+\.(?:ts|js|mjs|cjs)\b/,
  /file:\/\//,
  new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
];
/** Error class names and engine messages a client should never read. */
const INTERNAL_WORDS = /Maximum call stack|RangeError|TypeError|ReferenceError|SyntaxError:|SQLITE_|better-sqlite3/;

const StrictErrorBody = ErrorBodySchema.strict();

function snippet(res: LightMyRequestResponse): string {
  return `${res.statusCode} ${res.headers['content-type'] ?? '(no content-type)'} ${res.body.slice(0, 400)}`;
}

/** Throws (the property fails) when an answer breaks one of the suite's rules. */
export function checkAnswer(res: LightMyRequestResponse, request: Pick<FuzzRequest, 'paramsValid'>): void {
  if (res.statusCode >= 500) throw new Error(`a 5xx: ${snippet(res)}`);
  const contentType = String(res.headers['content-type'] ?? '');
  const isJson = contentType.startsWith('application/json');
  if (res.statusCode >= 400) {
    if (!isJson) throw new Error(`a 4xx that is not JSON: ${snippet(res)}`);
    const parsed = StrictErrorBody.safeParse(JSON.parse(res.body));
    if (!parsed.success) throw new Error(`a 4xx not of the error shape (${parsed.error.message}): ${snippet(res)}`);
    const { statusCode, code, details } = parsed.data;
    if (statusCode !== res.statusCode) throw new Error(`statusCode differs from the status: ${snippet(res)}`);
    // The code is the public contract: one of the table's (ERROR_CODES), with the table's status.
    if (!Object.hasOwn(ERROR_CODES, code) || ERROR_CODES[code as ErrorCode].status !== statusCode) {
      throw new Error(`a 4xx whose code is not the table's for its status: ${snippet(res)}`);
    }
    // What the OpenAPI document says a path or header parameter may be, the service takes (a 422
    // for a reused idempotency key is about the state, not the value). Not the query: a cursor is
    // an opaque token its schema can only bound.
    const blamed = statusCode === 400 && details?.find((d) => /^(?:params|headers)\b/.test(d.path));
    if (request.paramsValid && (statusCode === 414 || blamed)) {
      throw new Error(`parameters valid by the route's schema refused: ${snippet(res)}`);
    }
    if (INTERNAL_WORDS.test(res.body)) throw new Error(`a 4xx with internal text: ${snippet(res)}`);
  }
  // Served files (the dashboard's JS, Swagger UI) are code, not answers: only generated bodies are read.
  if (isJson || res.statusCode >= 300 || contentType.startsWith('text/plain')) {
    const leak = LEAKS.find((pattern) => pattern.test(res.body));
    if (leak) throw new Error(`a body with a stack trace or source path (${leak}): ${snippet(res)}`);
  }
}

type Snapshot = Map<object, Map<string | symbol, unknown>>;

const PROTOTYPES: readonly object[] = [Object.prototype, Array.prototype, Function.prototype, String.prototype];

/** Every own property (value or accessor) of the built-in prototypes a pollution would reach. */
export function snapshotPrototypes(prototypes: readonly object[] = PROTOTYPES): Snapshot {
  const snapshot: Snapshot = new Map();
  for (const proto of prototypes) {
    const props = new Map<string | symbol, unknown>();
    for (const key of Reflect.ownKeys(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, key);
      props.set(key, d && ('value' in d ? d.value : `${String(d.get)}|${String(d.set)}`));
    }
    snapshot.set(proto, props);
  }
  return snapshot;
}

const PROBES = ['polluted', 'isAdmin', 'x', 'a', 'b'];

/**
 * Throws when a prototype of `before` gained, lost or changed a property, or a probe on a fresh
 * object reads through to one. Cheap enough for Object.prototype after every request.
 */
export function checkPrototypes(before: Snapshot): void {
  const probe = {} as Record<string, unknown>;
  for (const name of PROBES) {
    if (probe[name] !== undefined) throw new Error(`({}).${name} is ${String(probe[name])}: Object.prototype polluted`);
  }
  const now = snapshotPrototypes([...before.keys()]);
  for (const [proto, props] of before) {
    const after = now.get(proto) as Map<string | symbol, unknown>;
    for (const [key, value] of after) {
      if (!props.has(key) || props.get(key) !== value)
        throw new Error(`prototype property ${String(key)} added or changed`);
    }
    if (after.size !== props.size) throw new Error('a prototype property was removed');
  }
}

export interface RouteFigures {
  route: string;
  seed: number;
  runs: number;
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
  statuses: Record<string, number>;
  /** 2xx answers by request kind: proof the valid and near-valid requests reached the handler. */
  okByKind: Record<string, number>;
  ms: number;
  /** Workflows of the app still running afterwards: accepted ones parked on the manual clock. */
  running: number;
}

/** A seed per route from the suite's base seed (FUZZ_SEED overrides it), so each route explores its own cases. */
export function seedFor(route: RouteEntry): number {
  let hash = Number(process.env.FUZZ_SEED ?? 110_411) >>> 0;
  for (const c of `${route.method} ${route.url}`) hash = Math.imul(hash ^ c.charCodeAt(0), 16_777_619) >>> 0;
  return hash | 0;
}

export interface RouteResult {
  figures: RouteFigures;
  /** fast-check's report (seed, counterexample, cause) when a property failed. */
  failure?: string;
}

/**
 * Fuzzes one route with `numRuns` requests under fc.assert (seeded; a failure is shrunk and replays
 * with the printed seed) and returns what it saw. Each run checks the answer, the error log and
 * Object.prototype; the other built-in prototypes are checked at the end.
 */
export async function fuzzRoute(fuzz: FuzzApp, route: RouteEntry, numRuns: number): Promise<RouteResult> {
  const seed = seedFor(route);
  fuzz.known = await refreshFixtures(fuzz);
  const figures: RouteFigures = {
    route: `${route.method} ${route.url}`,
    seed,
    runs: 0,
    '2xx': 0,
    '3xx': 0,
    '4xx': 0,
    '5xx': 0,
    statuses: {},
    okByKind: {},
    ms: 0,
    running: 0,
  };
  const allPrototypes = snapshotPrototypes();
  const objectPrototype = snapshotPrototypes([Object.prototype]);
  const started = performance.now();
  try {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(fuzz, route), async (request) => {
        const logged = fuzz.errorLines.length;
        const res = await fuzz.app.inject({
          method: request.method as 'GET',
          url: request.url,
          headers: request.headers,
          ...(request.payload === undefined ? {} : { payload: request.payload }),
        });
        figures.runs++;
        const klass = `${Math.floor(res.statusCode / 100)}xx` as '2xx';
        figures[klass] = (figures[klass] ?? 0) + 1;
        figures.statuses[res.statusCode] = (figures.statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode < 300) figures.okByKind[request.kind] = (figures.okByKind[request.kind] ?? 0) + 1;
        checkAnswer(res, request);
        const newErrors = fuzz.errorLines.slice(logged);
        if (newErrors.length > 0) throw new Error(`an error was logged: ${newErrors.join('\n').slice(0, 1500)}`);
        checkPrototypes(objectPrototype);
      }),
      { numRuns, seed },
    );
    checkPrototypes(allPrototypes);
    return { figures };
  } catch (err) {
    return { figures, failure: err instanceof Error ? err.message : String(err) };
  } finally {
    figures.ms = Math.round(performance.now() - started);
    figures.running = fuzz.deps.executor.running;
  }
}
