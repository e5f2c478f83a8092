import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** Small builders shared by the API tests; definitions run on the embedded sim provider. */

export type Json = Record<string, unknown>;

export function prompt(name: string, extra: Json = {}): Json {
  return { type: 'prompt', name, agent: 'a', user: `say ${name}`, ...extra };
}

export function definition(root: Json, extra: Json = {}): Json {
  return { name: 'test-flow', agents: { a: { model: 'sim/sonnet' } }, root, ...extra };
}

export function submit(
  app: FastifyInstance,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: '/v1/workflows', payload: body as Json, headers });
}

export interface EventJson {
  seq: number;
  type: string;
  nodeId: string | null;
  at: string;
  payload: Json;
}

export async function allEvents(
  app: FastifyInstance,
  id: string,
  headers: Record<string, string> = {},
): Promise<EventJson[]> {
  const items: EventJson[] = [];
  for (let after = 0; ; ) {
    const res = await app.inject({
      method: 'GET',
      url: `/v1/workflows/${id}/events?limit=1000&after=${after}`,
      headers,
    });
    if (res.statusCode !== 200) throw new Error(`events answered ${res.statusCode}: ${res.body}`);
    const page = res.json() as { items: EventJson[]; nextAfter: number };
    items.push(...page.items);
    if (page.items.length < 1000) return items;
    after = page.nextAfter;
  }
}

/** Resolves once the workflow has an event matching `match`; polls the JSON events page. */
export async function waitForEvent(
  app: FastifyInstance,
  id: string,
  match: (event: EventJson) => boolean,
  timeoutMs = 5_000,
): Promise<EventJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await allEvents(app, id)).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no matching event for ${id} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Polls until `check()` holds (something that must happen, never the absence of something); the
 * timeout only turns a hang into a clear failure.
 */
export async function waitUntil(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A node of GET /v1/workflows/:id's `tree`, as tests read it. */
export interface NodeJson {
  id: string;
  name: string;
  type: string;
  status: string;
  output: unknown;
  childWorkflowId: string | null;
  children: NodeJson[];
}

export function findNode(root: NodeJson, name: string): NodeJson | undefined {
  if (root.name === name) return root;
  for (const child of root.children) {
    const found = findNode(child, name);
    if (found) return found;
  }
  return undefined;
}

/** A response format the sim's scripts break on purpose: one required `severity` of three values. */
export const severity = {
  type: 'object',
  required: ['severity'],
  properties: { severity: { enum: ['low', 'medium', 'high'] } },
};
