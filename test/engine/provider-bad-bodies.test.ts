import { describe, expect, it } from 'vitest';
import { type TestApp, useAnthropicTestApp, useOpenAiTestApp, waitForStatus } from '../support/build-app.js';
import { type FakeReply, type FakeServer, textMessage } from '../support/fake-anthropic.js';
import { chatText } from '../support/fake-openai.js';

/**
 * Provider bodies that are not a usable answer (docs/design.md#transport-retries): through the real Anthropic SDK and
 * the real OpenAI-compatible adapter, a 2xx that is not valid JSON or not the expected shape is
 * LLM_BAD_RESPONSE, a connection cut mid-body or reset is LLM_CONNECTION. Both are transient: the
 * one retry layer backs off and tries again, up to RETRY_MAX_ATTEMPTS, and the node then fails with
 * that code — never INTERNAL.
 */
const ATTEMPTS = 4;
const env = { RETRY_MAX_ATTEMPTS: String(ATTEMPTS), RETRY_BASE_DELAY_MS: '2' };
const anthropic = useAnthropicTestApp({ env });
const openai = useOpenAiTestApp({ env });

interface Provider {
  name: string;
  app: { readonly fake: FakeServer; readonly t: TestApp };
  model: string;
  good: () => FakeReply;
  noContent: () => FakeReply;
}

const providers: Provider[] = [
  {
    name: 'Anthropic (real SDK)',
    app: anthropic,
    model: 'anthropic/claude-sonnet-5-5',
    good: () => ({ body: textMessage('fine now') }),
    noContent: () => ({ body: { ...textMessage(''), content: [] } }),
  },
  {
    name: 'OpenAI-compatible',
    app: openai,
    model: 'openai/qwen2.5',
    good: () => ({ body: chatText('fine now') }),
    noContent: () => {
      const body = chatText('');
      return { body: { ...body, choices: [{ ...body.choices[0]!, message: { role: 'assistant', content: null } }] } };
    },
  },
];

function definition(model: string) {
  return {
    name: 'bad-bodies',
    agents: { a: { model } },
    root: { type: 'prompt', name: 'ask', agent: 'a', user: 'Say something' },
    options: { cache: false },
  };
}

async function run(app: Provider['app'], model: string) {
  const res = await app.t.app.inject({ method: 'POST', url: '/v1/workflows', payload: definition(model) });
  expect(res.statusCode).toBe(202);
  const id = res.json().id as string;
  const done = await waitForStatus(app.t.app, id);
  const page = await app.t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/events?limit=1000` });
  const events = page.json().items as Array<{ type: string; payload: Record<string, unknown> }>;
  return { done, events };
}

describe.each(providers)('$name: bad bodies are provider errors, retried', (provider) => {
  const cases: Array<[string, string, () => FakeReply]> = [
    ['invalid JSON', 'LLM_BAD_RESPONSE', () => ({ raw: '{"id": "x", "content": [' })],
    ['{}', 'LLM_BAD_RESPONSE', () => ({ body: {} })],
    ['an empty body', 'LLM_BAD_RESPONSE', () => ({ raw: '' })],
    ['no content', 'LLM_BAD_RESPONSE', provider.noContent],
    ['a body cut mid-way', 'LLM_CONNECTION', () => ({ ...provider.good(), fault: 'truncate' })],
    ['a connection reset', 'LLM_CONNECTION', () => ({ fault: 'reset' })],
  ];

  it.each(cases)('%s on every attempt: %s after RETRY_MAX_ATTEMPTS requests', async (_, code, reply) => {
    const { app } = provider;
    app.fake.enqueue(...Array.from({ length: ATTEMPTS }, reply));
    const { done, events } = await run(app, provider.model);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code });
    expect(app.fake.requests).toHaveLength(ATTEMPTS);
    const retries = events.filter((e) => e.type === 'retry');
    expect(retries.map((e) => e.payload.code)).toEqual(Array(ATTEMPTS - 1).fill(code));
    expect(retries.every((e) => e.payload.reason === 'timeout')).toBe(true);
    const errors = events.filter((e) => e.type === 'error' || e.type === 'workflowEnd');
    expect(JSON.stringify(errors)).not.toContain('INTERNAL');
    expect(events.find((e) => e.type === 'error')?.payload).toMatchObject({ code });
  });

  it.each(cases)('%s once, then a good answer: completes on the second request', async (_, _code, reply) => {
    const { app } = provider;
    app.fake.enqueue(reply(), provider.good());
    const { done } = await run(app, provider.model);
    expect(done.status).toBe('completed');
    expect(done.output).toBe('fine now');
    expect(app.fake.requests).toHaveLength(2);
  });
});
