import { beforeAll, describe, expect, it } from 'vitest';
import { useOpenAiTestApp, waitForStatus } from '../support/build-app.js';
import { riversWorkflow, seedCorpus } from '../support/corpus-fixture.js';
import { chatText } from '../support/fake-openai.js';

/**
 * `maxTurns` on a retrieval prompt was accepted and ignored (its loop is bounded by
 * `retrieval.maxSteps`): it is refused with a 400. `responseFormat` with `retrieval` was refused; it
 * is allowed: the final answer is validated against the schema, with the usual re-ask turn.
 */
const SCHEMA = {
  type: 'object',
  properties: { cities: { type: 'array', items: { type: 'string' } } },
  required: ['cities'],
  additionalProperties: false,
};

function definition(prompt: Record<string, unknown>) {
  return riversWorkflow('openai/gpt-reader', { mode: 'json-actions', maxSteps: 3 }, prompt);
}

describe('retrieval prompts: maxTurns and responseFormat', () => {
  const app = useOpenAiTestApp();
  beforeAll(async () => {
    await seedCorpus(app.t.app, 'rivers');
  });

  it('maxTurns with retrieval is a 400 naming retrieval.maxSteps', async () => {
    const res = await app.t.app.inject({ method: 'POST', url: '/v1/workflows', payload: definition({ maxTurns: 1 }) });
    expect(res.statusCode, res.body).toBe(400);
    const issue = (res.json().details as Array<{ path: string; message: string }>).find(
      (d) => d.path === 'root.maxTurns',
    );
    expect(issue?.message).toContain('retrieval.maxSteps');
  });

  it('responseFormat: the final answer is validated and parsed; with reflection a bad one is re-asked', async () => {
    const finalize = (response: string) => chatText(JSON.stringify({ action: 'finalize', response }));
    app.fake.enqueue(
      { body: chatText(JSON.stringify({ action: 'retrieve', query: 'Danube cities' })) },
      { body: finalize('Vienna and Budapest') },
      { body: finalize(JSON.stringify({ cities: ['Vienna', 'Budapest'] })) },
    );
    const res = await app.t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: definition({ responseFormat: SCHEMA, enableReflection: true }),
    });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().id as string;
    const done = await waitForStatus(app.t.app, id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.output).toEqual({ cities: ['Vienna', 'Budapest'] });
    // The system prompt carried the schema; the re-ask told the model what was wrong.
    const requests = app.fake.requests.map((r) => r.body as { messages: Array<{ role: string; content: string }> });
    expect(requests).toHaveLength(3);
    expect(requests[0]?.messages[0]?.content).toContain('"cities"');
    expect(requests[2]?.messages.at(-1)?.content).toContain('INVALID_RESPONSE_FORMAT');
    const events = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/events?limit=200` });
    const types = (events.json().items as Array<{ type: string }>).map((e) => e.type);
    expect(types).toContain('invalidResponse');
    expect(types).toContain('retrievalEnd');
  });

  it('responseFormat without reflection: an answer that breaks the schema fails the node, as for any prompt', async () => {
    app.fake.enqueue({
      body: chatText(JSON.stringify({ action: 'finalize', response: JSON.stringify({ towns: ['Vienna'] }) })),
    });
    const res = await app.t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: definition({ responseFormat: SCHEMA }),
    });
    expect(res.statusCode, res.body).toBe(202);
    const done = await waitForStatus(app.t.app, res.json().id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(app.fake.requests).toHaveLength(1);
  });

  it('the loop has its own custom_span under the agent span, holding its calls and ending with the counts', async () => {
    app.fake.enqueue(
      { body: chatText(JSON.stringify({ action: 'retrieve', query: 'Danube cities' })) },
      { body: chatText(JSON.stringify({ action: 'finalize', response: 'Vienna and Budapest.' })) },
    );
    const res = await app.t.app.inject({ method: 'POST', url: '/v1/workflows', payload: definition({}) });
    const done = await waitForStatus(app.t.app, res.json().id);
    expect(done.status).toBe('completed');
    const trace = await app.t.app.inject({ method: 'GET', url: `/v1/traces/${done.traceId}` });
    type Span = Record<string, unknown> & { span_id: string; parent_id: string | null; type: string };
    const spans = trace.json().spans as Span[];
    const loops = spans.filter((s) => s.type === 'custom_span' && s.operation_name === 'retrieval_loop');
    expect(loops).toHaveLength(1);
    const loop = loops[0] as Span;
    const agent = spans.find((s) => s.span_id === loop.parent_id);
    expect(agent?.type).toBe('agent_span');
    expect(loop.status).toBe('ok');
    expect(loop.metadata).toEqual({
      corpus: 'rivers',
      mode: 'json-actions',
      max_steps: 3,
      max_chunks: 8,
      retrieval_calls: 1,
      steps: 2,
      loop_exhausted: false,
      halt_reason: 'finalized',
      guard_interventions: 0,
      // The answer shares fewer than 3 content words with any retrieved chunk.
      relevant: false,
    });
    const inside = spans.filter((s) => s.parent_id === loop.span_id).map((s) => s.type);
    expect(inside.filter((t) => t === 'generation_span')).toHaveLength(2);
    expect(inside).toContain('function_span');
  });
});
