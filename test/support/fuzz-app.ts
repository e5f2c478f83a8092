import { createLogger } from '../../src/logging/logger.js';
import type { TestApp } from './build-app.js';
import type { Json } from './hostile-requests.js';
import { createManualClock, type ManualClock } from './manual-clock.js';
import { buildInventoriedApp, type RouteEntry } from './route-inventory.js';
import { createSchemaValidator, type JsonSchema } from './schema-arbitrary.js';

/**
 * The app the route fuzz runs against: fully wired over an in-memory database, auth on with two
 * tenants, its OpenAPI document, and the fixtures path parameters aim at (real ids of both tenants).
 */

export const KEY_A = 'fuzz-key-acme-0000000001';
const KEY_B = 'fuzz-key-globex-00000001';
export const AUTH_A = { authorization: `Bearer ${KEY_A}` };
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

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

/** Real ids and names of the tenants' objects, by `<collection>/:<param>` (`workflows/:id`). */
export type KnownValues = Record<string, string[]>;

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
  type: string;
  spawnedWorkflowId: string | null;
  cacheKeys: string[];
  children: TreeNode[];
}

/** The nodes of the view's own workflow: a child workflow's root (declared or spawned) starts another. */
function flatten(node: TreeNode | null): TreeNode[] {
  if (!node) return [];
  const own = node.type === 'workflow' ? [] : node.children.filter((c) => c.spawnedWorkflowId === null);
  return [node, ...own.flatMap(flatten)];
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
 * Creates a fixture; when an earlier route's fuzz filled the tenant's quota (409 LIMIT_EXCEEDED),
 * deletes the first page of what it made (`list` → the delete URL of each item) and tries again.
 */
async function createMakingRoom(
  t: TestApp,
  auth: Record<string, string>,
  create: { url: string; body: unknown },
  list: { url: string; deleteUrl: (item: Record<string, unknown>) => string },
): Promise<Record<string, unknown>> {
  const first = await t.app.inject({ method: 'POST', url: create.url, headers: auth, payload: create.body as object });
  if (first.statusCode < 300) return first.json();
  if (first.statusCode !== 409 || first.json().code !== 'LIMIT_EXCEEDED') {
    throw new Error(`fixture POST ${create.url} answered ${first.statusCode}: ${first.body}`);
  }
  const page = (await call(t, 'GET', list.url, auth)) as { items: Array<Record<string, unknown>> };
  for (const item of page.items) await t.app.inject({ method: 'DELETE', url: list.deleteUrl(item), headers: auth });
  return call(t, 'POST', create.url, auth, create.body);
}

export async function refreshFixtures(fuzz: FuzzApp): Promise<KnownValues> {
  const doc = fuzz.document;
  const fresh: KnownValues = { 'workflows/:id': [], 'corpora/:id': [], 'agents/:name': [] };
  for (const [tenant, auth] of TENANTS) {
    for (const body of [WAITING, WAITING, PARKED]) {
      fresh['workflows/:id']?.push(String((await call(fuzz, 'POST', '/v1/workflows', auth, body)).id));
    }
    // Named as the retrieval examples name it, so those examples reach the retrieval path.
    const corpus = exampleBody(doc, '/v1/corpora') as { name: string };
    if (!(await exists(fuzz, `/v1/corpora/${corpus.name}`, auth))) {
      const created = await createMakingRoom(
        fuzz,
        auth,
        { url: '/v1/corpora', body: corpus },
        { url: '/v1/corpora?limit=100', deleteUrl: (item) => `/v1/corpora/${item.id}` },
      );
      const documents = exampleBody(doc, '/v1/corpora/{id}/documents');
      await call(fuzz, 'POST', `/v1/corpora/${created.id}/documents`, auth, documents);
    }
    const view = await call(fuzz, 'GET', `/v1/corpora/${corpus.name}`, auth);
    fresh['corpora/:id']?.push(String(view.id), corpus.name);
    // The example's name for the first tenant, so definitions naming it reach the registry.
    const agent = exampleBody(doc, '/v1/agents') as { name: string };
    const name = tenant === 'acme' ? agent.name : `${agent.name}-${tenant}`;
    if (!(await exists(fuzz, `/v1/agents/${name}`, auth))) {
      await createMakingRoom(
        fuzz,
        auth,
        { url: '/v1/agents', body: { ...agent, name } },
        { url: '/v1/agents?limit=100', deleteUrl: (item) => `/v1/agents/${encodeURIComponent(String(item.name))}` },
      );
    }
    fresh['agents/:name']?.push(name);
  }
  const known: KnownValues = { ...fuzz.stable };
  for (const [key, values] of Object.entries(fresh)) known[key] = [...(known[key] ?? []), ...values];
  return known;
}
