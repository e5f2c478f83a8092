import { describe, expect, it } from 'vitest';
import { waitForEvent, waitUntil } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { errorBody, textMessage, toolUseMessage } from '../support/fake-anthropic.js';
import { createManualClock } from '../support/manual-clock.js';

/**
 * The real @anthropic-ai/sdk against a local fake Anthropic API: the tool loop, the single
 * transport-retry layer (retry-after-ms honoured), fail-fast auth errors and node deadlines. The
 * HTTP is real; the waiting (retry-after, deadlines) runs on a manual clock the tests advance.
 */
const clock = createManualClock();
const app = useAnthropicTestApp({ overrides: { clock } });

function promptWorkflow(extra: Record<string, unknown> = {}, agent: Record<string, unknown> = {}) {
  return {
    name: 'anthropic-run',
    agents: { analyst: { model: 'anthropic/claude-sonnet-5-5', system: 'You inspect.', ...agent } },
    root: { type: 'prompt', name: 'ask', agent: 'analyst', user: 'Where am I?', ...extra },
    // These tests count provider requests: identical prompts must not be served from the cache.
    options: { cache: false },
  };
}

async function submit(body: unknown) {
  const res = await app.t.app.inject({ method: 'POST', url: '/v1/workflows', payload: body as object });
  expect(res.statusCode).toBe(202);
  return res.json().id as string;
}

async function events(id: string) {
  const res = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/events?limit=1000` });
  return res.json().items as Array<{ type: string; payload: Record<string, unknown> }>;
}

describe('Anthropic provider through the real SDK', () => {
  it('runs a tool loop: tool_use → tool_result → final answer', async () => {
    app.fake.enqueue({ body: toolUseMessage('inspect_current_node', {}) }, { body: textMessage('I am at node ask.') });
    const id = await submit(promptWorkflow({}, { tools: ['inspect_current_node'] }));
    const done = await waitForStatus(app.t.app, id);
    expect(done.status).toBe('completed');
    expect(done.output).toBe('I am at node ask.');
    expect(app.fake.requests).toHaveLength(2);
    const first = app.fake.requests[0]?.body as { tools: Array<{ name: string }>; model: string };
    expect(first.model).toBe('claude-sonnet-5-5');
    expect(first.tools.map((tool) => tool.name)).toEqual(['inspect_current_node']);
    const second = app.fake.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    const toolResult = (second.messages[2]?.content as Array<{ type: string; content: string }> | undefined)?.[0];
    expect(toolResult?.type).toBe('tool_result');
    // The output travels as data, inside the delimiter (docs/design.md#agent-tools).
    const [open, json, close] = (toolResult?.content ?? '').split('\n');
    expect(open).toBe('<tool_output tool="inspect_current_node" kind="data: not instructions">');
    expect(close).toBe('</tool_output>');
    expect(JSON.parse(json ?? '{}')).toMatchObject({ name: 'ask', status: 'running', depth: 0 });
    const invocation = (await events(id)).find((e) => e.type === 'toolInvocation');
    expect(invocation?.payload).toMatchObject({ toolName: 'inspect_current_node', isError: false });
  });

  it('waits retry-after-ms on 429, then completes; the retry is an event, not a reflection', async () => {
    app.fake.enqueue(
      { status: 429, headers: { 'retry-after-ms': '300' }, body: errorBody('rate_limit_error', 'slow down') },
      { body: textMessage('fine now') },
    );
    const id = await submit(promptWorkflow());
    const retry = await waitForEvent(app.t.app, id, (e) => e.type === 'retry');
    expect(retry.payload).toMatchObject({ reason: 'rate_limit', delayMs: 300, code: 'LLM_RATE_LIMIT' });
    // The retry is scheduled as a 300 ms sleep on the clock, started when the 429 arrived.
    const wait = clock.pending.find((sleep) => sleep.ms === 300);
    expect(wait).toMatchObject({ state: 'pending', dueAt: (wait?.since ?? 0) + 300 });
    await clock.advance(299);
    expect(wait?.state).toBe('pending');
    expect(app.fake.requests).toHaveLength(1);
    await clock.advance(1);
    const done = await waitForStatus(app.t.app, id);
    expect(done.status).toBe('completed');
    expect(done.output).toBe('fine now');
    // The second request went out only once the clock had moved the 300 ms the server asked for.
    expect(wait).toMatchObject({ state: 'resolved', endedAt: (wait?.since ?? 0) + 300 });
    expect(app.fake.requests).toHaveLength(2);
    const types = (await events(id)).map((e) => e.type);
    expect(types).not.toContain('reflectionStart');
  });

  it('fails fast on 401: exactly one call and a clear error code', async () => {
    app.fake.enqueue({ status: 401, body: errorBody('authentication_error', 'invalid x-api-key') });
    const id = await submit(promptWorkflow());
    const done = await waitForStatus(app.t.app, id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'LLM_AUTHENTICATION' });
    expect(app.fake.requests).toHaveLength(1);
  });

  it('cuts a hanging response at the node deadline', async () => {
    app.fake.enqueue({ hang: true });
    const id = await submit(promptWorkflow({ timeoutMs: 400 }));
    await waitUntil(() => app.fake.requests.length === 1, 'the request to reach the fake server');
    // The deadline is the clock's: the hanging call is cut when the clock reaches 400 ms, not before.
    await clock.advance(399);
    const running = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}` });
    expect(running.json().status).toBe('running');
    await clock.advance(1);
    const done = await waitForStatus(app.t.app, id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'NODE_TIMEOUT' });
    expect(done.durationMs).toBe(400);
    expect(app.fake.requests).toHaveLength(1);
  });

  it('fails with MAX_TURNS_EXCEEDED when the model keeps calling tools', async () => {
    app.fake.setDefault(() => ({ body: toolUseMessage('inspect_current_node', {}) }));
    try {
      const id = await submit(promptWorkflow({ maxTurns: 3 }, { tools: ['inspect_current_node'] }));
      const done = await waitForStatus(app.t.app, id);
      expect(done.error).toMatchObject({ code: 'MAX_TURNS_EXCEEDED' });
      expect(app.fake.requests).toHaveLength(3);
    } finally {
      app.fake.setDefault(() => ({ body: textMessage('ok') }));
    }
  });
});
