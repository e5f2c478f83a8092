import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, definition, type Json, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * How cache hits are counted (docs/design.md#caching): a hit spends nothing and what it saved is its own field; an
 * identical concurrent miss that waited on another's call is a hit (`collapsed`) everywhere a hit
 * shows; a hit advances a simulate script as the call would have; simulated money is labelled.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

interface Span {
  type: string;
  node_id: string | null;
  [field: string]: unknown;
}

async function trace(id: string): Promise<Span[]> {
  const view = await waitForStatus(t.app, id);
  return (await t.app.inject({ method: 'GET', url: `/v1/traces/${view.traceId}` })).json().spans as Span[];
}

async function run(body: Json): Promise<string> {
  const res = await submit(t.app, body);
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().id as string;
  await waitForStatus(t.app, id);
  return id;
}

const stats = async () => (await t.app.inject({ method: 'GET', url: '/v1/cache' })).json();

describe('cache accounting', () => {
  it('a hit spends 0 tokens and 0 dollars; what it saved is its own field, labelled simulated', async () => {
    const body = definition(prompt('ask', { user: 'a question asked twice' }));
    const first = await run(body);
    const second = await run(body);
    const miss = (await trace(first)).find((s) => s.type === 'generation_span');
    const hit = (await trace(second)).find((s) => s.type === 'generation_span');
    expect(miss).toMatchObject({ cache_hit: false, simulated: true });
    expect(miss?.tokens_in).toBeGreaterThan(0);
    expect(hit).toMatchObject({
      cache_hit: true,
      tokens_in: 0,
      tokens_out: 0,
      cost_usd: 0,
      tokens_saved_in: miss?.tokens_in,
      tokens_saved_out: miss?.tokens_out,
      cost_saved_usd: miss?.cost_usd,
      simulated: true,
    });
    const metrics = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${second}/metrics` })).json();
    expect(metrics.efficiency.metrics).toMatchObject({ total_agent_calls: 0, provider_requests: 0, cache_hits: 1 });
    const hitEvent = (await allEvents(t.app, second)).find((e) => e.type === 'cacheHit');
    expect(hitEvent?.payload).toMatchObject({ simulated: true });
  });

  it('an identical concurrent miss that waited on the first call is a hit (collapsed) everywhere', async () => {
    const before = await stats();
    const twin = (name: string) => prompt(name, { user: 'the same question at the same time' });
    const body = definition(
      { type: 'parallel', name: 'both', steps: [twin('left'), twin('right')] },
      { agents: { a: { model: 'sim/sonnet', simulate: { latencyMs: 30 } } } },
    );
    const id = await run(body);
    const generations = (await trace(id)).filter((s) => s.type === 'generation_span');
    expect(generations).toHaveLength(2);
    const collapsed = generations.filter((s) => s.cache_hit === true);
    expect(collapsed).toHaveLength(1);
    expect(collapsed[0]).toMatchObject({ collapsed: true, tokens_in: 0, cost_usd: 0 });
    const events = await allEvents(t.app, id);
    expect(events.filter((e) => e.type === 'cacheMiss')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'cacheHit').map((e) => e.payload.collapsed)).toEqual([true]);
    const metrics = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` })).json();
    expect(metrics.efficiency.metrics).toMatchObject({ total_agent_calls: 1, cache_hits: 1, agents_spawned: 1 });
    const after = await stats();
    expect(after.hits - before.hits).toBe(1);
    expect(after.misses - before.misses).toBe(1);
    expect(after.tokensSaved).toBeGreaterThan(before.tokensSaved);
    expect(after.simulatedCostSavedUsd).toBeGreaterThan(before.simulatedCostSavedUsd);
    expect(after.costSavedUsd).toBe(before.costSavedUsd);
  });

  it('a cached replay of a scripted tool loop advances the script: the tool runs once per workflow', async () => {
    const body = definition(prompt('loop', { user: 'inspect yourself, then answer' }), {
      agents: {
        a: {
          model: 'sim/sonnet',
          tools: ['inspect_current_node'],
          simulate: { responses: [{ toolUse: { name: 'inspect_current_node', input: {} } }, { text: 'done' }] },
        },
      },
    });
    await run(body);
    const replay = await run(body);
    const events = await allEvents(t.app, replay);
    expect(events.filter((e) => e.type === 'toolInvocation')).toHaveLength(1);
    const view = await waitForStatus(t.app, replay);
    expect(view.status).toBe('completed');
    expect(view.output).toBe('done');
  });

  it('simulated costs are labelled in by_model and kept apart in the averages', async () => {
    const id = await run(definition(prompt('priced', { user: 'what would this cost' })));
    const metrics = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` })).json();
    expect(metrics.efficiency.metrics.by_model['sim/sonnet']).toMatchObject({ simulated: true });
    const list = (await t.app.inject({ method: 'GET', url: '/v1/metrics/efficiency' })).json();
    expect(list.aggregate.overall.avg_cost_usd).toBe(0);
    expect(list.aggregate.overall.avg_simulated_cost_usd).toBeGreaterThan(0);
  });
});
