import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, type Json, type NodeJson } from '../support/api-fixtures.js';
import { type TestApp, waitForStatus } from '../support/build-app.js';
import { type FakeServer, startFakeAnthropic, textMessage } from '../support/fake-anthropic.js';
import { createManualClock } from '../support/manual-clock.js';
import { isPublic, PUBLIC_ROUTES, routeLabel } from '../support/public-routes.js';
import { buildInventoriedApp, type RouteEntry } from '../support/route-inventory.js';
import { reportFigures } from '../support/scale.js';

/**
 * Auth and tenancy over every route the app registers, enumerated by its onRoute hook:
 *
 * - every non-public route and method answers 401 (JSON error, `www-authenticate: Bearer`) without a
 *   key, with a wrong key and with another scheme; the public ones answer without a key;
 * - tenant A owns one object of every kind (workflows with a child, a checkpoint waiting for
 *   approval, reflections, retrieval and selection runs, traces, nodes, cache entries, feedback,
 *   a corpus with documents, registered agents); tenant B probes every object route — every route
 *   with a path parameter — and method with A's real ids: 100% 404, and A's objects are unchanged;
 * - every list, analytics and dashboard view B reads is exactly what it was before A existed;
 * - the response cache is never shared: B's identical prompt calls the model again.
 *
 * Real SQLite, the sim provider and the real Anthropic SDK against a local fake; time is a manual
 * clock that never moves, so every view is a pure function of the stored rows.
 */

const KEYS = {
  a: 'key-of-tenant-a-0123456789',
  b: 'key-of-tenant-b-9876543210',
  // Never used to create anything: what a tenant without data sees.
  c: 'key-of-tenant-c-5555555555',
};
type Tenant = keyof typeof KEYS;
const as = (tenant: Tenant) => ({ authorization: `Bearer ${KEYS[tenant]}` });

/** Everything of one tenant the probes use, and the strings that must never reach another tenant. */
interface Seeded {
  tag: string;
  workflows: string[];
  checkpointed: string;
  childWorkflow: string;
  traces: string[];
  nodes: string[];
  cacheKeys: string[];
  corpora: string[];
  agents: string[];
  taskTypes: string[];
  /** Every id and name above, workflow names and document ids included, and the tag itself. */
  markers: string[];
}

const clock = createManualClock();
let fake: FakeServer;
let t: TestApp & { routes: RouteEntry[] };
/** The served OpenAPI document, walked loosely like the openapi-*.test.ts suites do. */
let openApi: Record<string, any>;
let alpha: Seeded;
let bravo: Seeded;
/** B's answer to every view before A existed. */
let bravoViewsBefore: Map<string, Answer>;
/** A's answer to every GET of its own objects and its views, before B probed them. */
let alphaBefore: Map<string, Answer>;
const figures: Record<string, number> = {};

interface Answer {
  status: number;
  body: string;
}

beforeAll(async () => {
  fake = await startFakeAnthropic({ defaultReply: { body: textMessage('the cached answer') } });
  t = await buildInventoriedApp(
    {
      API_KEYS: Object.entries(KEYS)
        .map(([tenant, key]) => `${tenant}:${key}`)
        .join(','),
      ANTHROPIC_API_KEY: 'sk-ant-test-key-000',
      ANTHROPIC_BASE_URL: fake.url,
    },
    { clock },
  );
  openApi = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  bravo = await seed('bravo', 'b');
  bravoViewsBefore = await readAll(viewRequests(), 'b');
  alpha = await seed('alpha', 'a');
  alphaBefore = await readAll([...ownGets(alpha), ...viewRequests()], 'a');
}, 60_000);

afterAll(async () => {
  reportFigures('auth-tenancy', figures);
  await t?.close();
  await fake?.close();
});

// ---------------------------------------------------------------------------------------------
// Seeding: the same mix for every tenant, named after its tag, through the public API only.

async function call(
  tenant: Tenant | undefined,
  method: string,
  url: string,
  payload?: unknown,
  extra: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: { ...(tenant ? as(tenant) : {}), ...extra },
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

function expectStatus(res: LightMyRequestResponse, status: number, what: string): Json {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
  return res.json();
}

async function submitAndWait(tenant: Tenant, body: Json): Promise<Json & { id: string; traceId: string }> {
  const submitted = await expectStatus(await call(tenant, 'POST', '/v1/workflows', body), 202, `submit ${body.name}`);
  await waitForStatus(t.app, submitted.id as string, ['completed', 'failed'], 10_000, as(tenant));
  return (await call(tenant, 'GET', `/v1/workflows/${submitted.id}`)).json();
}

/** Polls the workflow's events (as its tenant) until its checkpoint event is there. */
async function waitForCheckpoint(tenant: Tenant, id: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await allEvents(t.app, id, as(tenant))).some((e) => e.type === 'checkpoint')) {
    if (Date.now() > deadline) throw new Error(`workflow ${id} did not reach its checkpoint`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function seed(tag: string, tenant: Tenant): Promise<Seeded> {
  const markers: string[] = [tag];
  const taskType = `${tag}-task`;
  const researchType = `${tag}-research`;

  // Registered agents (versioned: two versions of the first) for selection.
  const agents = [`${tag}-dev`, `${tag}-fixer`];
  for (const [i, name] of agents.entries()) {
    const config = { model: i === 0 ? 'sim/haiku' : 'sim/sonnet', role: 'development', system: `${tag} developer` };
    await expectStatus(await call(tenant, 'POST', '/v1/agents', { name, config }), 201, `agent ${name}`);
  }
  await expectStatus(
    await call(tenant, 'PUT', `/v1/agents/${agents[0]}`, {
      config: { model: 'sim/haiku', role: 'development', system: `${tag} developer, v2` },
    }),
    200,
    'agent v2',
  );

  // A corpus with documents.
  const corpusName = `${tag}-kb`;
  const corpus = await expectStatus(await call(tenant, 'POST', '/v1/corpora', { name: corpusName }), 201, 'corpus');
  const documents = [
    { title: `${tag} rivers`, text: `The ${tag} river passes the ${tag} city and reaches the ${tag} sea.` },
    { title: `${tag} mountains`, text: `The ${tag} mountains rise above the ${tag} valley.` },
  ];
  const added = await expectStatus(
    await call(tenant, 'POST', `/v1/corpora/${corpus.id}/documents`, { documents }),
    201,
    'documents',
  );
  markers.push(...((added.documentIds ?? []) as string[]));

  // The main workflow: a tool call, a second prompt, and a child workflow.
  const main = await submitAndWait(tenant, {
    name: `${tag}-main`,
    task: { type: taskType },
    agents: {
      w: {
        model: 'sim/sonnet',
        tools: ['inspect_current_node'],
        simulate: {
          responses: [{ toolUse: { name: 'inspect_current_node', input: {} } }, { text: `${tag} draft done` }],
        },
      },
      x: { model: 'sim/haiku' },
    },
    root: {
      type: 'sequence',
      name: 'steps',
      steps: [
        { type: 'prompt', name: 'draft', agent: 'w', user: `Draft the ${tag} plan` },
        { type: 'prompt', name: 'summary', agent: 'x', user: `Summarise the ${tag} plan` },
        {
          type: 'workflow',
          name: 'sub',
          definition: {
            name: `${tag}-child`,
            root: { type: 'prompt', name: 'leaf', agent: 'x', user: `The ${tag} child step` },
          },
        },
      ],
    },
  });
  expect(main.status, JSON.stringify(main.error)).toBe('completed');
  const childWorkflow = nodesOf(main).find((n) => n.childWorkflowId !== null)?.childWorkflowId;
  if (!childWorkflow) throw new Error('the main workflow started no child');

  // A critical task: it waits, idle, at its human checkpoint.
  const waiting = await expectStatus(
    await call(tenant, 'POST', '/v1/workflows', {
      name: `${tag}-critical`,
      task: { type: taskType, complexity: 'critical' },
      agents: { x: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'plan', agent: 'x', user: `Plan the ${tag} migration` },
    }),
    202,
    'critical workflow',
  );
  await waitForCheckpoint(tenant, waiting.id as string);

  // A reflection: the first answer breaks the schema, the re-ask passes.
  const reflected = await submitAndWait(tenant, {
    name: `${tag}-reflect`,
    task: { type: taskType },
    agents: {
      r: {
        model: 'sim/sonnet',
        simulate: { responses: [{ json: { severity: 'catastrophic' } }, { json: { severity: 'high' } }] },
      },
    },
    root: {
      type: 'prompt',
      name: 'rate',
      agent: 'r',
      user: `Rate the ${tag} risk`,
      responseFormat: { type: 'object', required: ['severity'], properties: { severity: { enum: ['low', 'high'] } } },
      enableReflection: true,
    },
  });
  expect(reflected.status).toBe('completed');
  const reflections = (await call(tenant, 'GET', `/v1/workflows/${reflected.id}/reflections`)).json();
  expect(reflections.items, 'a reflection entry was written').toHaveLength(1);

  // Retrieval by two models, one retrieving half as often: an engagement gap (analytics, tool tiers).
  const retrievals: string[] = [];
  for (const [model, calls] of [
    ['sim/haiku', 2],
    ['sim/sonnet', 1],
  ] as const) {
    const responses = [
      ...Array.from({ length: calls }, (_, i) => ({ json: { action: 'retrieve', query: `${tag} river ${i}` } })),
      { json: { action: 'finalize', response: `The ${tag} river reaches the sea.` } },
    ];
    const run = await submitAndWait(tenant, {
      name: `${tag}-retrieval`,
      task: { type: researchType },
      agents: { reader: { model, simulate: { responses } } },
      root: {
        type: 'prompt',
        name: 'answer',
        agent: 'reader',
        user: `Where does the ${tag} river go?`,
        retrieval: { corpus: corpusName, mode: 'json-actions' },
      },
    });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    retrievals.push(run.id);
  }

  // A prompt that selects its agent among the registered ones, then feedback on it and on main.
  const selected = await submitAndWait(tenant, {
    name: `${tag}-select`,
    task: { type: taskType, complexity: 'simple' },
    root: { type: 'prompt', name: 'fix', agent: { select: { role: 'development' } }, user: `Fix the ${tag} bug` },
  });
  expect(selected.status, JSON.stringify(selected.error)).toBe('completed');
  for (const id of [main.id, selected.id]) {
    await expectStatus(
      await call(tenant, 'POST', `/v1/workflows/${id}/feedback`, { actions: ['commit'] }),
      200,
      'feedback',
    );
  }

  // Five quick successes of one task type on one model: a top performing pattern (GET /v1/analytics/patterns).
  for (let i = 0; i < 5; i += 1) {
    const run = await submitAndWait(tenant, {
      name: `${tag}-pattern`,
      task: { type: `${tag}-pattern` },
      agents: { p: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'p', agent: 'p', user: `The ${tag} pattern ${i}` },
    });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
  }

  const workflows = [main.id, childWorkflow, waiting.id as string, reflected.id, ...retrievals, selected.id];
  const views = await Promise.all(
    workflows.map(async (id) => (await call(tenant, 'GET', `/v1/workflows/${id}`)).json()),
  );
  // The main workflow's first prompt first: probes use the first value of each kind together.
  // A child's nodes show in its parent's tree too: each node once.
  const nodes = [...new Set(views.flatMap((v) => nodesOf(v).map((n) => n.id)))];
  const draft = nodesOf(main).find((n) => n.name === 'draft')?.id as string;
  nodes.splice(nodes.indexOf(draft), 1);
  nodes.unshift(draft);
  const traces = [...new Set(views.map((v) => v.traceId as string))];
  const cache = (await call(tenant, 'GET', '/v1/cache')).json() as { entries: Array<{ key: string }> };
  const cacheKeys = cache.entries.map((e) => e.key);
  expect(cacheKeys.length, 'cache entries were written').toBeGreaterThan(0);

  const workflowNames = views.map((v) => v.name as string);
  markers.push(...workflows, ...workflowNames, ...traces, ...nodes, ...cacheKeys, corpus.id as string, corpusName);
  markers.push(...agents);
  return {
    tag,
    workflows,
    checkpointed: waiting.id as string,
    childWorkflow,
    traces,
    nodes,
    cacheKeys,
    corpora: [corpus.id as string, corpusName],
    agents,
    taskTypes: [taskType, researchType],
    markers: [...new Set(markers)],
  };
}

function nodesOf(view: Json): NodeJson[] {
  const all: NodeJson[] = [];
  const walk = (node: NodeJson | null) => {
    if (!node) return;
    all.push(node);
    node.children.forEach(walk);
  };
  walk(view.tree as NodeJson);
  return all;
}

// ---------------------------------------------------------------------------------------------
// Requests derived from the route inventory.

interface Probe {
  route: RouteEntry;
  method: string;
  url: string;
  payload?: unknown;
  headers?: Record<string, string>;
}

/**
 * Bodies that pass validation, so that what a probe meets is the route's auth or tenancy check and
 * not a 400. A body route without one falls back to the OpenAPI example of its body, else fails.
 */
const BODIES: Record<string, unknown> = {
  'POST /v1/workflows/:id/approve': { note: 'probe' },
  'POST /v1/workflows/:id/reject': { reason: 'probe' },
  'POST /v1/workflows/:id/feedback': { actions: ['revert'] },
  'POST /v1/workflows/:id/nodes/:nodeId/tools/:tool': {},
  'POST /v1/workflows/:id/nodes/:nodeId/reflect': { reason: 'probe' },
  'POST /v1/corpora/:id/documents': { documents: [{ title: 'probe', text: 'a probe document' }] },
  'PUT /v1/agents/:name': { config: { model: 'sim/sonnet', system: 'probe' } },
  'POST /v1/complexity/classify': { task: { type: 'migration', signals: ['security'] } },
  'POST /v1/tools/audit': {
    tools: [{ name: 'retrieve', description: 'Search the corpus.', input_schema: { type: 'object' } }],
  },
};

/** Query strings each route is probed with ('' = none); the first is the one A's own reads use. */
const QUERIES: Record<string, string[]> = {
  'GET /v1/workflows/:id/tree': ['', '?format=text'],
  'GET /v1/workflows/:id/events': ['', '?after=0'],
  'GET /v1/agents/:name': ['', '?version=1'],
  'GET /v1/corpora/:id/search': ['?q=river'],
};

function openApiOperation(route: RouteEntry): Record<string, any> | undefined {
  const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  return openApi.paths?.[path]?.[route.method.toLowerCase()];
}

function bodyFor(route: RouteEntry): unknown {
  const label = routeLabel(route);
  if (label in BODIES) return BODIES[label];
  const requestBody = openApiOperation(route)?.requestBody;
  if (requestBody === undefined) return undefined;
  const example = requestBody.content?.['application/json']?.example;
  if (example === undefined) throw new Error(`${label} takes a body: add a valid one to BODIES`);
  return example;
}

const paramNames = (url: string): string[] => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);
const isObjectRoute = (route: RouteEntry): boolean => paramNames(route.url).length > 0;
const protectedRoutes = (): RouteEntry[] => t.routes.filter((r) => !isPublic(r));

/** What a path parameter names is the collection before it: `/v1/corpora/:id` names a corpus. */
function valuesFor(seeded: Seeded, url: string, param: string, tools: string[]): string[] {
  const segments = url.split('/');
  const collection = segments[segments.indexOf(`:${param}`) - 1];
  switch (collection) {
    case 'workflows':
      return seeded.workflows;
    case 'nodes':
      return seeded.nodes;
    case 'tools':
      return tools;
    case 'cache':
      return seeded.cacheKeys;
    case 'traces':
      return seeded.traces;
    case 'corpora':
      return seeded.corpora;
    case 'agents':
      return seeded.agents;
    default:
      throw new Error(`no probe values for :${param} of ${url}: teach valuesFor what it names`);
  }
}

/** Every URL of a route with its parameters filled from `seeded` (all combinations, or the first values). */
function urlsOf(route: RouteEntry, seeded: Seeded, tools: string[], firstOnly = false): string[] {
  let urls = [route.url];
  for (const param of paramNames(route.url)) {
    const values = valuesFor(seeded, route.url, param, tools);
    const used = firstOnly ? values.slice(0, 1) : values;
    urls = urls.flatMap((url) => used.map((value) => url.replace(`:${param}`, encodeURIComponent(value))));
  }
  const queries = QUERIES[routeLabel(route)] ?? [''];
  return urls.flatMap((url) => (firstOnly ? queries.slice(0, 1) : queries).map((q) => `${url}${q}`));
}

/** GET /v1/tools: the tools an agent may call; read-only ones first (the first is probed as A's own). */
let toolNames: string[] = [];
async function tools(): Promise<string[]> {
  if (toolNames.length === 0) {
    const listed = (await call('a', 'GET', '/v1/tools')).json() as { items: Array<{ definition: { name: string } }> };
    toolNames = listed.items.map((i) => i.definition.name);
    toolNames.sort((x, y) => Number(x !== 'inspect_current_node') - Number(y !== 'inspect_current_node'));
  }
  return toolNames;
}

/** A's own objects as A reads them: every GET object route with A's values. */
function ownGets(seeded: Seeded): Array<{ method: string; url: string }> {
  return t.routes
    .filter((r) => r.method === 'GET' && isObjectRoute(r) && !r.url.includes('/nodes/'))
    .flatMap((r) => urlsOf(r, seeded, []).map((url) => ({ method: 'GET', url })));
}

/** Routes without a path parameter that read the tenant's data (lists, analytics, dashboard, audits). */
const VIEW_BODIES = ['POST /v1/tools/audit', 'POST /v1/complexity/classify'];
/** Routes without a path parameter that create or remove: each has its own check below. */
const PARAMLESS_WRITES: Record<string, string> = {
  'POST /v1/workflows': 'B reuses A’s names and Idempotency-Key; B cannot run on A’s corpus or agents',
  'POST /v1/corpora': 'B reuses A’s corpus name',
  'POST /v1/agents': 'B reuses A’s agent names',
  'DELETE /v1/cache': 'the cache suite: B’s prefix bust leaves A’s entries',
};
/** Views that hold no tenant data at all: every tenant reads the same answer. */
const SAME_FOR_EVERY_TENANT = ['GET /v1/models', 'POST /v1/complexity/classify'];

function viewRequests(): Array<{ method: string; url: string; payload?: unknown }> {
  const views: Array<{ method: string; url: string; payload?: unknown }> = [];
  for (const route of protectedRoutes().filter((r) => !isObjectRoute(r))) {
    const label = routeLabel(route);
    if (route.method === 'GET') views.push({ method: 'GET', url: route.url });
    else if (VIEW_BODIES.includes(label)) views.push({ method: route.method, url: route.url, payload: bodyFor(route) });
    else if (!(label in PARAMLESS_WRITES))
      throw new Error(`${label}: a view (VIEW_BODIES) or a write (PARAMLESS_WRITES)?`);
  }
  return views;
}

const requestKey = (r: { method: string; url: string }) => `${r.method} ${r.url}`;

async function readAll(
  requests: Array<{ method: string; url: string; payload?: unknown }>,
  tenant: Tenant,
): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  for (const r of requests) {
    const res = await call(tenant, r.method, r.url, r.payload);
    expect(res.statusCode, `${requestKey(r)} as ${tenant}: ${res.body}`).toBeLessThan(500);
    answers.set(requestKey(r), { status: res.statusCode, body: res.body });
  }
  return answers;
}

/** A GET over a real socket with the path exactly as given. */
function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function leaked(body: string, seeded: Seeded): string[] {
  return seeded.markers.filter((marker) => body.includes(marker));
}

// ---------------------------------------------------------------------------------------------

describe('authentication', () => {
  it('answers 401 (JSON, www-authenticate: Bearer) on every non-public route and method without a valid key', async () => {
    const credentials: Array<[string, Record<string, string>]> = [
      ['no Authorization', {}],
      ['a wrong key', { authorization: 'Bearer not-a-configured-key-000000' }],
      ['a non-Bearer scheme with a real key', { authorization: `Basic ${KEYS.a}` }],
      ['a real key without a scheme', { authorization: KEYS.a }],
      ['an empty bearer token', { authorization: 'Bearer ' }],
    ];
    const list = await tools();
    let probes = 0;
    const routes = protectedRoutes();
    for (const route of routes) {
      const [url] = urlsOf(route, alpha, list, true) as [string];
      const methods = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
      for (const method of methods) {
        for (const [what, headers] of credentials) {
          const res = await call(undefined, method, url, method === 'HEAD' ? undefined : bodyFor(route), headers);
          const label = `${method} ${url} with ${what}`;
          expect(res.statusCode, `${label}: ${res.body}`).toBe(401);
          expect(res.headers['www-authenticate'], label).toBe('Bearer');
          if (method !== 'HEAD') {
            expect(res.headers['content-type'], label).toMatch(/^application\/json/);
            expect(res.json(), label).toMatchObject({
              statusCode: 401,
              code: 'UNAUTHORIZED',
              message: expect.any(String),
            });
          }
          probes++;
        }
      }
      // Authentication comes before the body: a malformed body without a key is still a 401.
      if (route.method !== 'GET' && route.method !== 'DELETE') {
        const res = await call(undefined, route.method, url, '{"not json', { 'content-type': 'application/json' });
        expect(res.statusCode, `${route.method} ${url} with a malformed body and no key`).toBe(401);
        probes++;
      }
    }
    figures.unauthenticatedRoutes = routes.length;
    figures.unauthenticatedProbes = probes;
    expect(routes.length).toBeGreaterThan(30);
  });

  it('never serves a protected route without a key under another spelling of its URL (real socket)', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const list = await tools();
    let probes = 0;
    for (const route of protectedRoutes().filter((r) => r.method === 'GET')) {
      const [url] = urlsOf(route, alpha, list, true) as [string];
      const rest = url.slice('/v1/'.length);
      // Sent byte for byte (inject would normalise some of them): the router and the auth hook must agree.
      const spellings = [
        `${url}/`,
        `/v1//${rest}`,
        `/%76%31/${rest}`,
        `/./v1/${rest}`,
        `/docs/..${url}`,
        `/dashboard/..${url}`,
        `/healthz/..${url}`,
        `/docs/static/../..${url}`,
        `/docs/static/${encodeURIComponent(`../..${url}`)}`,
      ];
      for (const spelling of spellings) {
        const res = await rawGet(port, spelling);
        expect(res.status === 401 || res.status >= 403, `GET ${spelling} without a key → ${res.status}`).toBe(true);
        expect(
          leaked(res.body, alpha).filter((m) => !spelling.includes(m)),
          spelling,
        ).toEqual([]);
        probes++;
      }
    }
    // The public static route does not serve files outside its folder either.
    for (const spelling of [
      '/docs/static/../../package.json',
      '/docs/static/..%2F..%2F..%2Fpackage.json',
      '/docs/static/%2e%2e/%2e%2e/%2e%2e/package.json',
    ]) {
      const res = await rawGet(port, spelling);
      expect(res.status, spelling).toBeGreaterThanOrEqual(400);
      expect(res.body, spelling).not.toContain('"name": "baton"');
      probes++;
    }
    figures.urlSpellingProbes = probes;
  });

  it("answers every public route without a key, and none of them shows a tenant's data", async () => {
    // Ids and names only: the bare tags ("alpha") are ordinary words a script or stylesheet may hold.
    const tenantData = [...alpha.markers, ...bravo.markers].filter((m) => m !== alpha.tag && m !== bravo.tag);
    for (const entry of PUBLIC_ROUTES) {
      const url = entry.sample ?? entry.url;
      const res = await call(undefined, entry.method, url);
      expect(res.statusCode, `${entry.method} ${url}`).toBeGreaterThanOrEqual(200);
      expect(res.statusCode, `${entry.method} ${url}`).toBeLessThan(400);
      expect(
        tenantData.filter((m) => res.body.includes(m)),
        `${url} (public) shows tenant data`,
      ).toEqual([]);
    }
    figures.publicRoutes = PUBLIC_ROUTES.length;
  });
});

describe("another tenant's objects", () => {
  it("answers 404 to B on every object route and method probed with A's real ids, and changes nothing of A's", async () => {
    const list = await tools();
    const objectRoutes = protectedRoutes().filter(isObjectRoute);
    const probes: Probe[] = [];
    for (const route of objectRoutes) {
      const urls = urlsOf(route, alpha, list);
      const payload = bodyFor(route);
      for (const url of urls) {
        probes.push({ route, method: route.method, url, payload });
        if (route.method === 'GET') {
          probes.push({ route, method: 'HEAD', url });
          probes.push({ route, method: 'GET', url, headers: { accept: 'text/event-stream', 'last-event-id': '0' } });
        }
      }
    }
    // Not vacuous: A reads every one of these objects (409: metrics of the workflow still waiting).
    for (const [request, answer] of alphaBefore) expect([200, 409], `${request} as A`).toContain(answer.status);
    const covered = new Set<string>();
    /** Probes that were not a 404, by route and status: a count and the first of them. */
    const wrong = new Map<string, { count: number; first: string }>();
    for (const probe of probes) {
      const res = await call('b', probe.method, probe.url, probe.payload, probe.headers);
      const label = `${probe.method} ${probe.url}${probe.headers ? ' (SSE)' : ''}`;
      if (res.statusCode !== 404) {
        const key = `${probe.method} ${probe.route.url} → ${res.statusCode}`;
        const seen = wrong.get(key) ?? { count: 0, first: `${label}: ${res.body.slice(0, 200)}` };
        seen.count++;
        wrong.set(key, seen);
        continue;
      }
      if (probe.method !== 'HEAD') {
        expect(res.json(), label).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
        expect(
          leaked(res.body, alpha).filter((m) => !probe.url.includes(encodeURIComponent(m))),
          label,
        ).toEqual([]);
      }
      covered.add(routeLabel(probe.route));
    }
    expect(Object.fromEntries(wrong), 'cross-tenant probes that were not a 404').toEqual({});
    expect([...covered].sort(), 'object routes without a probe').toEqual(objectRoutes.map(routeLabel).sort());
    figures.objectRoutes = objectRoutes.length;
    figures.crossTenantProbes = probes.length;

    // A's objects are exactly as they were: no cancel, approval, rejection, feedback, document,
    // version or deletion of B's took effect.
    const after = await readAll([...ownGets(alpha), ...viewRequests()], 'a');
    for (const [request, answer] of alphaBefore) expect(after.get(request), request).toEqual(answer);
    const waiting = (await call('a', 'GET', `/v1/workflows/${alpha.checkpointed}`)).json();
    expect(waiting).toMatchObject({ status: 'idle', cancelRequested: false, checkpoint: { state: 'pending' } });
  });
});

describe("another tenant's lists and figures", () => {
  it('shows B every list, analytics and dashboard view exactly as before A existed, without a trace of A', async () => {
    const views = viewRequests();
    const now = await readAll(views, 'b');
    const empty = await readAll(views, 'c');
    const own = await readAll(views, 'a');
    for (const view of views) {
      const key = requestKey(view);
      const answer = now.get(key) as Answer;
      expect(answer.status, key).toBe(200);
      expect(answer, `${key}: B's view changed when A's data arrived`).toEqual(bravoViewsBefore.get(key));
      expect(leaked(answer.body, alpha), key).toEqual([]);
      expect(leaked(own.get(key)?.body ?? '', bravo), `${key} as A`).toEqual([]);
      if (SAME_FOR_EVERY_TENANT.includes(key)) {
        expect(own.get(key), key).toEqual(answer);
        continue;
      }
      // Not vacuous: A's data shows in A's own view of it (and B's in B's).
      expect(own.get(key)?.body, `${key}: A's seeding does not show in A's view`).not.toEqual(empty.get(key)?.body);
      expect(answer.body, `${key}: B's seeding does not show in B's view`).not.toEqual(empty.get(key)?.body);
    }
    figures.viewRoutes = views.length;
  });

  it("filters B's views by A's ids, names and task types exactly like by values that exist nowhere", async () => {
    const variants: Array<[string, string, string]> = [
      ['/v1/workflows?parentWorkflowId=', alpha.workflows[0] as string, 'wf_0000000000000000nowhere'],
      ['/v1/workflows?name=', `${alpha.tag}-main`, 'nowhere-main'],
      ['/v1/traces?workflowId=', alpha.workflows[0] as string, 'wf_0000000000000000nowhere'],
      ['/v1/traces?workflowId=', alpha.childWorkflow, 'wf_0000000000000000nowhere'],
      ['/v1/cache?prefix=', `${alpha.agents[0]}`, 'nowhere-dev'],
      ['/v1/metrics/efficiency?taskType=', alpha.taskTypes[0] as string, 'nowhere-task'],
      ['/v1/analytics/retrieval?taskType=', alpha.taskTypes[1] as string, 'nowhere-research'],
      ['/v1/analytics/selection?taskType=', alpha.taskTypes[0] as string, 'nowhere-task'],
    ];
    for (const [prefix, value, nowhere] of variants) {
      const withA = await call('b', 'GET', `${prefix}${encodeURIComponent(value)}`);
      const withNothing = await call('b', 'GET', `${prefix}${encodeURIComponent(nowhere)}`);
      expect(withA.statusCode, `${prefix}${value}`).toBe(200);
      expect(withA.body.replaceAll(value, '?'), `${prefix}${value}`).toBe(withNothing.body.replaceAll(nowhere, '?'));
    }
    figures.filterProbes = variants.length;
  });

  it("pages B's lists with A's cursors without showing A's rows", async () => {
    let cursors = 0;
    for (const view of viewRequests().filter((v) => v.method === 'GET')) {
      const page = await call('a', 'GET', `${view.url}?limit=1`);
      if (page.statusCode !== 200) continue; // a view without paging
      const body = page.json() as { nextCursor?: string | null; next_cursor?: string | null };
      const cursor = body.nextCursor ?? body.next_cursor;
      if (typeof cursor !== 'string') continue;
      const res = await call('b', 'GET', `${view.url}?limit=100&cursor=${encodeURIComponent(cursor)}`);
      expect([200, 400], `${view.url} with A's cursor: ${res.body}`).toContain(res.statusCode);
      expect(leaked(res.body, alpha), view.url).toEqual([]);
      cursors++;
    }
    // Workflows, traces, efficiency records, rewards, corpora and agents page with cursors.
    expect(cursors).toBeGreaterThanOrEqual(5);
    figures.cursorProbes = cursors;
  });
});

describe('names and references across tenants', () => {
  it("lets B reuse A's corpus name, agent names and Idempotency-Key without learning they exist", async () => {
    for (const name of alpha.agents) {
      const res = await call('b', 'POST', '/v1/agents', { name, config: { model: 'sim/haiku' } });
      expect(res.statusCode, `agent ${name}: ${res.body}`).toBe(201);
      expect(res.json().version, 'B starts its own numbering').toBe(1);
    }
    const corpus = await call('b', 'POST', '/v1/corpora', { name: alpha.corpora[1] });
    expect(corpus.statusCode, corpus.body).toBe(201);
    expect(corpus.json().id).not.toBe(alpha.corpora[0]);
    expect(corpus.json().documents ?? 0).toBe(0);
    const body = {
      name: 'same-key',
      agents: { x: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'p', agent: 'x', user: 'hello' },
    };
    const first = await call('a', 'POST', '/v1/workflows', body, { 'idempotency-key': 'shared-key' });
    const second = await call(
      'b',
      'POST',
      '/v1/workflows',
      { ...body, name: 'other-body' },
      { 'idempotency-key': 'shared-key' },
    );
    expect(first.statusCode).toBe(202);
    expect(second.statusCode, 'not a 422: the key is per tenant').toBe(202);
    expect(second.json().id).not.toBe(first.json().id);
    for (const res of [first, second]) {
      const tenant: Tenant = res === first ? 'a' : 'b';
      await waitForStatus(t.app, res.json().id, ['completed'], 10_000, as(tenant));
    }
  });

  it("treats A's corpus, agents, cache keys and nodes named in B's requests exactly like names of nothing", async () => {
    // B registered agents of A's names above: these probes use a name only A has.
    const onlyA = `${alpha.tag}-only-agent`;
    await expectStatus(
      await call('a', 'POST', '/v1/agents', { name: onlyA, config: { model: 'sim/haiku', role: 'review' } }),
      201,
      'agent',
    );
    const prompt = (extra: Json) => ({
      name: 'borrow',
      agents: { r: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'q', agent: 'r', user: 'Q?', ...extra },
    });
    const nodeTool = (tool: string) => `/v1/workflows/${bravo.workflows[0]}/nodes/${bravo.nodes[0]}/tools/${tool}`;
    const cases: Array<{ what: string; url: string; body: (value: string) => Json; value: string; nowhere: string }> = [
      {
        what: "a retrieval over A's corpus (id)",
        url: '/v1/workflows',
        body: (corpus) => prompt({ retrieval: { corpus, mode: 'json-actions' } }),
        value: alpha.corpora[0] as string,
        nowhere: 'cp_0000000000000000nowhere',
      },
      {
        what: "a retrieval over A's corpus (name)",
        url: '/v1/workflows',
        body: (corpus) => prompt({ retrieval: { corpus, mode: 'json-actions' } }),
        value: `${alpha.tag}-kb-only`,
        nowhere: 'nowhere-kb-only',
      },
      {
        what: "a prompt naming A's registered agent",
        url: '/v1/workflows',
        body: (agent) => ({ name: 'borrow', root: { type: 'prompt', name: 'q', agent, user: 'Q?' } }),
        value: onlyA,
        nowhere: 'nowhere-agent',
      },
      {
        what: "a selection among A's registered agents",
        url: '/v1/workflows',
        body: (agent) => ({
          name: 'borrow',
          root: { type: 'prompt', name: 'q', agent: { select: { role: 'review', candidates: [agent] } }, user: 'Q?' },
        }),
        value: onlyA,
        nowhere: 'nowhere-agent',
      },
      {
        what: "inspect_cache_status on B's node asking for A's cache key",
        url: nodeTool('inspect_cache_status'),
        body: (promptHash) => ({ promptHash }),
        value: alpha.cacheKeys[0] as string,
        nowhere: 'w:0000000000000000000000000000000000000000000000000000000000000000',
      },
      {
        what: "inspect_prior_outputs on B's node asking for A's node",
        url: nodeTool('inspect_prior_outputs'),
        body: (nodeId) => ({ nodeId }),
        value: alpha.nodes[0] as string,
        nowhere: 'nd_0000000000000000nowhere',
      },
    ];
    // A corpus name only A has (B made one of A's first name above).
    await expectStatus(await call('a', 'POST', '/v1/corpora', { name: `${alpha.tag}-kb-only` }), 201, 'corpus');
    for (const { what, url, body, value, nowhere } of cases) {
      const withA = await call('b', 'POST', url, body(value));
      const withNothing = await call('b', 'POST', url, body(nowhere));
      expect(withA.statusCode, `${what}: ${withA.body}`).toBeLessThan(500);
      expect(withA.body.replaceAll(value, '?'), what).toBe(withNothing.body.replaceAll(nowhere, '?'));
      expect(withA.statusCode, what).toBe(withNothing.statusCode);
    }
    figures.referenceProbes = cases.length;
  });
});

describe('the response cache across tenants', () => {
  const MODEL_PROMPT = {
    name: 'cached-across',
    agents: { w: { model: 'anthropic/claude-sonnet-5-5', system: 'You answer.' } },
    root: { type: 'prompt', name: 'answer', agent: 'w', user: 'The same question from everyone' },
  };
  const stats = async (tenant: Tenant) =>
    (await call(tenant, 'GET', '/v1/cache?prefix=w:')).json() as {
      hits: number;
      misses: number;
      entries: Array<{ key: string; hits: number }>;
    };

  it("calls the model again for B's identical prompt, and B's cache routes never show A's entry", async () => {
    const calls = () => fake.requests.length;
    const start = calls();
    await submitAndWait('a', MODEL_PROMPT);
    expect(calls() - start, "A's first run calls the model").toBe(1);
    await submitAndWait('a', MODEL_PROMPT);
    expect(calls() - start, "A's second run is a hit").toBe(1);
    const aStats = await stats('a');
    const aKeys = aStats.entries.map((e) => e.key);

    const bBefore = await stats('b');
    const b1 = await submitAndWait('b', MODEL_PROMPT);
    expect(b1.status).toBe('completed');
    expect(calls() - start, "B's identical prompt is a miss: the model is called again").toBe(2);
    const bAfter = await stats('b');
    expect(bAfter.misses - bBefore.misses).toBeGreaterThanOrEqual(1);
    expect(bAfter.hits).toBe(bBefore.hits);
    await submitAndWait('b', MODEL_PROMPT);
    expect(calls() - start, "B's second run is a hit of B's own entry").toBe(2);

    const bKeys = (await stats('b')).entries.map((e) => e.key);
    const newB = bKeys.filter((k) => !bBefore.entries.some((e) => e.key === k));
    expect(newB).toHaveLength(1);
    expect(aKeys, 'the same prompt has a different key per tenant').not.toContain(newB[0]);
    for (const key of aKeys) {
      expect(bKeys).not.toContain(key);
      expect((await call('b', 'GET', `/v1/cache/${encodeURIComponent(key)}`)).statusCode).toBe(404);
    }

    // B busting the prefix both share removes B's entries only.
    const busted = (await call('b', 'DELETE', '/v1/cache?prefix=w:')).json() as { deleted: number };
    expect(busted.deleted).toBe(bKeys.length);
    expect((await stats('b')).entries).toEqual([]);
    expect((await stats('a')).entries.map((e) => e.key)).toEqual(aKeys);
    await submitAndWait('a', MODEL_PROMPT);
    expect(calls() - start, "A's entry survived B's bust: still a hit").toBe(2);
  });

  it('does not collapse identical concurrent misses of two tenants into one model call', async () => {
    const prompt = { ...MODEL_PROMPT, root: { ...MODEL_PROMPT.root, user: 'Asked at the same moment' } };
    fake.enqueue({ delayMs: 100, body: textMessage('one') }, { delayMs: 100, body: textMessage('two') });
    const start = fake.requests.length;
    const [a, b] = await Promise.all([submitAndWait('a', prompt), submitAndWait('b', prompt)]);
    expect([a.status, b.status]).toEqual(['completed', 'completed']);
    expect(fake.requests.length - start).toBe(2);
    figures.cacheModelCalls = fake.requests.length;
  });
});

describe("A's own objects (the probes were not vacuous)", () => {
  it("answers A on every object route it answered B's probes on with a 404, with something other than a 404", async () => {
    const list = await tools();
    // Reads first, then writes, deletions last: every route finds A's objects still there.
    const order = (r: RouteEntry) => (r.method === 'GET' ? 0 : r.method === 'DELETE' ? 2 : 1);
    const objectRoutes = protectedRoutes()
      .filter(isObjectRoute)
      .sort((x, y) => order(x) - order(y));
    for (const route of objectRoutes) {
      const [url] = urlsOf(route, alpha, list, true) as [string];
      const res = await call('a', route.method, url, bodyFor(route));
      expect(res.statusCode, `${route.method} ${url} as A: ${res.body}`).not.toBe(404);
      expect(res.statusCode, `${route.method} ${url} as A: ${res.body}`).toBeLessThan(500);
    }
    // The checkpoint B could not approve, A can.
    const approved = await call('a', 'POST', `/v1/workflows/${alpha.checkpointed}/approve`, { note: 'mine' });
    expect(approved.statusCode, approved.body).toBe(202);
  });
});
