import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, definition, type Json, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * The numbers a careful auditor checks (docs/design.md#events-spans-metrics-and-rewards units): the request limit,
 * the record and the
 * Prometheus counters count the same things; a parent's record rolls up its children; factors and
 * spans tell the truth about the run.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ RETRY_BASE_DELAY_MS: '0' });
});
afterAll(async () => {
  await t.close();
});

async function run(body: Json) {
  const res = await submit(t.app, body);
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().id as string;
  const view = await waitForStatus(t.app, id);
  const metrics = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` })).json();
  return { id, view, record: metrics.efficiency, events: await allEvents(t.app, id) };
}

async function spansOf(traceId: unknown) {
  return (await t.app.inject({ method: 'GET', url: `/v1/traces/${traceId}` })).json().spans as Array<
    Record<string, unknown>
  >;
}

/** Σ of a Prometheus counter's series whose labels contain `match`. */
async function counter(name: string, match: string): Promise<number> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(match)) sum += Number(line.split(' ').at(-1));
  }
  return sum;
}

const rateLimited = { error: { status: 429, retryAfterMs: 0 } };
const scripted = (responses: Json[], options: Json = {}) =>
  definition(prompt('ask'), {
    agents: { a: { model: 'sim/sonnet', simulate: { responses } } },
    options: { cache: false, ...options },
  });

describe('limits.maxLlmCalls counts provider requests, and so do the record and Prometheus', () => {
  it('one call sent three times (two 429s) needs a budget of 3 requests; the record says 1 call, 3 requests', async () => {
    const { view, record } = await run(
      scripted([rateLimited, rateLimited, { text: 'ok' }], { limits: { maxLlmCalls: 3 } }),
    );
    expect(view.status).toBe('completed');
    expect(record.metrics).toMatchObject({ total_agent_calls: 1, provider_requests: 3, retry_count: 2 });
    expect(record.metrics.by_model['sim/sonnet']).toMatchObject({ calls: 1, requests: 3 });
  });

  it('with a budget of 2 the second retry is not sent nor announced, and the error names the unit', async () => {
    const { view, record, events } = await run(
      scripted([rateLimited, rateLimited, { text: 'ok' }], { limits: { maxLlmCalls: 2 } }),
    );
    expect(view.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect((view.error as { message: string }).message).toContain('2 provider requests');
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    expect(record.metrics).toMatchObject({ total_agent_calls: 1, provider_requests: 2 });
  });

  it('a call refused by the limit is no call: not in the record, no span, not in Prometheus', async () => {
    const callsBefore = await counter('baton_llm_calls_total', 'provider="sim",tier="haiku"');
    const requestsBefore = await counter('baton_llm_requests_total', 'provider="sim",tier="haiku"');
    const body = definition(
      { type: 'sequence', name: 'main', steps: [prompt('first'), prompt('second')] },
      { agents: { a: { model: 'sim/haiku' } }, options: { cache: false, limits: { maxLlmCalls: 1 } } },
    );
    const { view, record, events } = await run(body);
    expect(view.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(events.filter((e) => e.type === 'agentPromptStart')).toHaveLength(1);
    expect(record.metrics).toMatchObject({ total_agent_calls: 1, provider_requests: 1, agents_spawned: 1 });
    expect(record.metrics.by_model['sim/haiku']).toMatchObject({ calls: 1, requests: 1 });
    const generations = (await spansOf(view.traceId)).filter((s) => s.type === 'generation_span');
    expect(generations.map((s) => s.status)).toEqual(['ok']);
    expect((await counter('baton_llm_calls_total', 'provider="sim",tier="haiku"')) - callsBefore).toBe(1);
    expect((await counter('baton_llm_requests_total', 'provider="sim",tier="haiku"')) - requestsBefore).toBe(1);
  });
});

describe('a parent record rolls up its child workflows', () => {
  it('subtree: calls, requests, tokens, cost and agents of every descendant, beside the own figures', async () => {
    const child = (name: string, root: Json) => ({ type: 'workflow', name, definition: { name, root } });
    const body = definition(
      {
        type: 'sequence',
        name: 'main',
        steps: [
          prompt('own'),
          child('kid', {
            type: 'sequence',
            name: 'kid-main',
            steps: [prompt('k1'), prompt('k2'), child('grandkid', prompt('g1'))],
          }),
        ],
      },
      { options: { cache: false } },
    );
    const { view, record } = await run(body);
    expect(view.status).toBe('completed');
    expect(record.metrics).toMatchObject({ total_agent_calls: 1, agents_spawned: 1 });
    expect(record.subtree).toMatchObject({
      workflows: 2,
      agents_spawned: 3,
      total_agent_calls: 3,
      provider_requests: 3,
      cost_usd: 0,
    });
    expect(record.subtree.tokens_in).toBeGreaterThan(0);
    expect(record.subtree.tokens_out).toBeGreaterThan(0);
    expect(record.subtree.simulated_cost_usd).toBeGreaterThan(0);
  });
});

describe('factors and spans that tell the truth', () => {
  it('used_haiku_for_simple only for a successful run with an answered haiku call', async () => {
    const task = { type: 'typo', complexity: 'trivial' };
    const ok = await run(definition(prompt('fix'), { agents: { a: { model: 'sim/haiku' } }, task }));
    expect(ok.record.efficiency_factors).toContain('used_haiku_for_simple');
    const failing = definition(prompt('fix', { responseFormat: { type: 'object', required: ['x'] } }), {
      agents: { a: { model: 'sim/haiku', simulate: { responses: [{ json: { y: 1 } }] } } },
      task,
    });
    const failed = await run(failing);
    expect(failed.view.status).toBe('failed');
    expect(failed.record.efficiency_factors).not.toContain('used_haiku_for_simple');
  });

  it('agents_spawned leaves out an agent answered wholly from the cache', async () => {
    const body = definition(prompt('cached', { user: 'asked twice for agents_spawned' }));
    expect((await run(body)).record.metrics.agents_spawned).toBe(1);
    const replay = await run(body);
    expect(replay.record.metrics).toMatchObject({ agents_spawned: 0, cache_hits: 1 });
  });

  it('the input_validation guardrail lies inside the orchestrator span', async () => {
    const { view } = await run(definition(prompt('checked')));
    const spans = await spansOf(view.traceId);
    const root = spans.find((s) => s.parent_id === null);
    const guardrail = spans.find((s) => s.guardrail_name === 'input_validation');
    expect(guardrail?.parent_id).toBe(root?.span_id);
    expect(Date.parse(guardrail?.started_at as string)).toBeGreaterThanOrEqual(Date.parse(root?.started_at as string));
    expect(Date.parse(guardrail?.ended_at as string)).toBeLessThanOrEqual(Date.parse(root?.ended_at as string));
  });

  it('a prompt-level re-ask has one attempt number: the answer that failed, in events, entry and turn', async () => {
    const body = definition(
      prompt('rate', {
        enableReflection: true,
        responseFormat: { type: 'object', required: ['severity'], properties: { severity: { enum: ['low'] } } },
      }),
      {
        agents: {
          a: {
            model: 'sim/sonnet',
            simulate: { responses: [{ json: { severity: 'huge' } }, { json: { severity: 'low' } }] },
          },
        },
      },
    );
    const { id, view, events } = await run(body);
    expect(view.status).toBe('completed');
    const invalid = events.find((e) => e.type === 'invalidResponse')?.payload;
    const start = events.find((e) => e.type === 'reflectionStart')?.payload;
    const end = events.find((e) => e.type === 'reflectionEnd')?.payload;
    expect(invalid).toMatchObject({ attempt: 1, nodeAttempt: 1 });
    expect(start).toMatchObject({ level: 'prompt', attempt: 1, nodeAttempt: 1 });
    expect(end).toMatchObject({ level: 'prompt', attempt: 1, nodeAttempt: 1 });
    const entries = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/reflections` })).json().items;
    expect(entries.map((e: { attempt: number }) => e.attempt)).toEqual([1]);
  });
});
