import { describe, expect, it } from 'vitest';
import { AGENT_REFLECTION_PREFIX } from '../../src/reflection/policy.js';
import { allEvents, severity, submit } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { errorBody, textMessage } from '../support/fake-anthropic.js';

/**
 * The three reflection levels end to end (docs/design.md#reflection-and-retries), on the simulator and on the real
 * Anthropic
 * SDK against a local fake: prompt-level re-asks, the workflow-level advice and its revisions, the
 * agent-level prefix, and transport retries that never consume a reflection attempt.
 */
const app = useAnthropicTestApp();

async function reflections(id: string) {
  const res = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/reflections` });
  expect(res.statusCode).toBe(200);
  return res.json().items as Array<{ level: string; success: boolean | null; resolution: { decision: string } }>;
}

async function run(body: unknown) {
  const res = await submit(app.t.app, body);
  expect(res.statusCode).toBe(202);
  const id = res.json().id as string;
  return { id, done: await waitForStatus(app.t.app, id) };
}

function simPrompt(responses: unknown[], extra: Record<string, unknown> = {}) {
  return {
    name: 'reflect-sim',
    agents: { a: { model: 'sim/sonnet', simulate: { responses } } },
    root: {
      type: 'prompt',
      name: 'rate',
      agent: 'a',
      user: 'Rate it',
      responseFormat: severity,
      enableReflection: true,
    },
    ...extra,
  };
}

describe('prompt-level reflection', () => {
  it('re-asks once after an answer that breaks the schema, then completes', async () => {
    const { id, done } = await run(simPrompt([{ json: { severity: 'catastrophic' } }, { json: { severity: 'high' } }]));
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ severity: 'high' });
    const entries = await reflections(id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ level: 'prompt', success: true, resolution: { decision: 'retry' } });
    const types = (await allEvents(app.t.app, id)).map((e) => e.type);
    expect(types.filter((type) => type === 'invalidResponse')).toHaveLength(1);
    expect(types.filter((type) => type === 'agentPromptEnd')).toHaveLength(2);
    expect(types.indexOf('reflectionStart')).toBeLessThan(types.indexOf('reflectionEnd'));
  });

  it('fails with VALIDATION_FAILED after exactly maxAttempts (3) provider calls', async () => {
    const body = {
      name: 'reflect-anthropic',
      agents: { a: { model: 'anthropic/claude-sonnet-5-5' } },
      root: {
        type: 'prompt',
        name: 'rate',
        agent: 'a',
        user: 'Rate it',
        responseFormat: severity,
        enableReflection: true,
      },
      options: { cache: false, reflection: { maxAttempts: 3 } },
    };
    app.fake.enqueue(
      { body: textMessage('not json at all') },
      { body: textMessage('{"severity": "catastrophic"}') },
      { body: textMessage('{"level": "high"}') },
    );
    const { id, done } = await run(body);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(app.fake.requests).toHaveLength(3);
    // The re-ask happens in the same conversation: bad assistant turn, then the reflection turn.
    const third = app.fake.requests[2]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(third.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(JSON.stringify(third.messages[4]?.content)).toContain('Reflect on the previous error and try again.');
    // `attempt` is the answer that failed (groundswell's `attempt: attempt` in its catch), here the second.
    expect(JSON.stringify(third.messages[4]?.content)).toContain('\\"attempt\\":2');
    const entries = await reflections(id);
    expect(entries.map((e) => e.success)).toEqual([false, false]);
  });
});

describe('workflow-level reflection', () => {
  it("applies the reflection's revisedPromptData to the retried request", async () => {
    const body = {
      name: 'reflect-workflow',
      agents: { a: { model: 'anthropic/claude-sonnet-5-5', system: 'You rate code.' } },
      root: {
        type: 'prompt',
        name: 'rate',
        agent: 'a',
        user: 'Rate it',
        data: { code: 'x = 1' },
        responseFormat: severity,
        enableReflection: false,
      },
      options: { cache: false, reflection: { enabled: true, maxAttempts: 2 } },
    };
    app.fake.enqueue(
      { body: textMessage('{"grade": 3}') },
      {
        body: textMessage(
          '{"shouldRetry": true, "reason": "severity was missing", "revisedPromptData": {"hint": "answer with a severity"}}',
        ),
      },
      { body: textMessage('{"severity": "low"}') },
    );
    const { id, done } = await run(body);
    expect(done.status).toBe('completed');
    expect(app.fake.requests).toHaveLength(3);
    const reflection = app.fake.requests[1]?.body as { messages: Array<{ content: string }>; system: string };
    expect(reflection.messages[0]?.content).toContain('failed on attempt 1 of 2');
    const retried = app.fake.requests[2]?.body as { messages: Array<{ content: string }>; system: string };
    expect(retried.messages[0]?.content).toContain('<hint>\n"answer with a severity"\n</hint>');
    expect(retried.messages[0]?.content).toContain('<code>\n"x = 1"\n</code>');
    const entries = await reflections(id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ level: 'workflow', success: true, resolution: { decision: 'retry' } });
    const steps = (await allEvents(app.t.app, id)).filter((e) => e.type === 'stepStart').map((e) => e.payload.attempt);
    expect(steps).toEqual([1, 2]);
  });

  it('does not retry when the advice says no', async () => {
    const body = {
      name: 'reflect-abort',
      agents: { a: { model: 'anthropic/claude-sonnet-5-5' } },
      root: {
        type: 'prompt',
        name: 'rate',
        agent: 'a',
        user: 'Rate it',
        responseFormat: severity,
        enableReflection: false,
      },
      options: { cache: false, reflection: { enabled: true } },
    };
    app.fake.enqueue(
      { body: textMessage('{"grade": 3}') },
      { body: textMessage('{"shouldRetry": false, "reason": "the task is impossible"}') },
    );
    const { id, done } = await run(body);
    expect(done.status).toBe('failed');
    expect(app.fake.requests).toHaveLength(2);
    expect((await reflections(id))[0]).toMatchObject({ level: 'workflow', resolution: { decision: 'abort' } });
  });
});

describe('agent-level reflection and transport retries', () => {
  it('prefixes the system prompt of a reflecting agent', async () => {
    const body = {
      name: 'reflect-agent',
      agents: { a: { model: 'anthropic/claude-sonnet-5-5', system: 'You review code.', enableReflection: true } },
      root: { type: 'prompt', name: 'review', agent: 'a', user: 'Review it' },
      options: { cache: false },
    };
    const { done } = await run(body);
    expect(done.status).toBe('completed');
    const request = app.fake.requests[0]?.body as { system: string };
    expect(request.system).toBe(`${AGENT_REFLECTION_PREFIX}\n\nYou review code.`);
  });

  it('rides out a 429 storm with transport retries and no reflection', async () => {
    const limited = () => ({
      status: 429,
      headers: { 'retry-after-ms': '20' },
      body: errorBody('rate_limit_error', 'slow down'),
    });
    app.fake.enqueue(limited(), limited(), limited(), { body: textMessage('{"severity": "medium"}') });
    const { id, done } = await run({
      name: 'storm',
      agents: { a: { model: 'anthropic/claude-sonnet-5-5' } },
      root: { type: 'prompt', name: 'rate', agent: 'a', user: 'Rate it', responseFormat: severity },
      options: { cache: false, reflection: { enabled: true } },
    });
    expect(done.status).toBe('completed');
    expect(app.fake.requests).toHaveLength(4);
    const retries = (await allEvents(app.t.app, id)).filter((e) => e.type === 'retry');
    expect(retries).toHaveLength(3);
    expect(retries.every((e) => e.payload.reason === 'rate_limit')).toBe(true);
    expect(await reflections(id)).toEqual([]);
    const metrics = (await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/metrics` })).json();
    expect(metrics.efficiency.metrics).toMatchObject({
      retry_count: 3,
      retry_reasons: ['rate_limit'],
      // Three retries of one call that recovered in the end: the whole chain counts as recovered.
      recovery_rate: 1,
    });
  });
});
