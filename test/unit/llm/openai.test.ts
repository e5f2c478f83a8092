import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LlmRequest, responseText } from '../../../src/domain/llm.js';
import type { LlmProvider } from '../../../src/domain/ports.js';
import { createOpenAiProvider } from '../../../src/llm/openai.js';
import { waitUntil } from '../../helpers/api-fixtures.js';
import { chatError, chatText, chatToolCall, type FakeServer, startFakeOpenAi } from '../../helpers/fake-openai.js';
import { providerFailure } from '../../helpers/provider-failure.js';

const API_KEY = 'sk-openai-test-0123456789';
const signal = new AbortController().signal;

let fake: FakeServer;
let provider: LlmProvider;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  provider = createOpenAiProvider({ maxResponseBytes: 16 * 1024 * 1024, baseURL: fake.url, apiKey: API_KEY });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'qwen2.5',
    system: 'You are terse.',
    messages: [{ role: 'user', content: 'Say hi' }],
    maxTokens: 256,
    ...overrides,
  };
}

const retrieveTool = {
  name: 'retrieve',
  description: 'Search docs',
  input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};

describe('openai-compatible provider against the fake server', () => {
  it('sends a chat completion and maps text, finish reason and usage', async () => {
    fake.enqueue({ body: chatText('hi', { prompt_tokens: 20, completion_tokens: 3, cached_tokens: 8 }) });
    const response = await provider.complete(request({ temperature: 0.2, stop: ['\n\n'] }), { signal });
    expect(responseText(response)).toBe('hi');
    expect(response.stopReason).toBe('end_turn');
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 3, cacheReadTokens: 8 });
    expect(response.model).toBe('qwen2.5');
    expect(response.requestId).toMatch(/^chatcmpl-fake-/);

    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.body).toEqual({
      model: 'qwen2.5',
      max_tokens: 256,
      temperature: 0.2,
      stop: ['\n\n'],
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Say hi' },
      ],
    });
  });

  it('round-trips a tool call: tool_calls → tool_use, then tool_use/tool_result → OpenAI messages', async () => {
    fake.enqueue({ body: chatToolCall('retrieve', { query: 'retries' }) }, { body: chatText('done') });
    const first = await provider.complete(request({ tools: [retrieveTool] }), { signal });
    expect(first.stopReason).toBe('tool_use');
    const [call] = first.content;
    expect(call).toEqual({
      type: 'tool_use',
      id: expect.stringMatching(/^call_fake_/),
      name: 'retrieve',
      input: { query: 'retries' },
    });
    if (call?.type !== 'tool_use') throw new Error('expected a tool call');

    const messages: LlmRequest['messages'] = [
      { role: 'user', content: 'Say hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, call] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: call.id, content: 'no results', is_error: true },
          { type: 'text', text: 'Go on.' },
        ],
      },
    ];
    const second = await provider.complete(request({ tools: [retrieveTool], messages }), { signal });
    expect(responseText(second)).toBe('done');

    const firstBody = fake.requests[0]!.body as Record<string, unknown>;
    expect(firstBody.tools).toEqual([
      {
        type: 'function',
        function: { name: 'retrieve', description: 'Search docs', parameters: retrieveTool.input_schema },
      },
    ]);
    const secondBody = fake.requests[1]!.body as { messages: unknown[] };
    expect(secondBody.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hi' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: call.id, type: 'function', function: { name: 'retrieve', arguments: '{"query":"retries"}' } },
        ],
      },
      { role: 'tool', tool_call_id: call.id, content: 'Error: no results' },
      { role: 'user', content: 'Go on.' },
    ]);
  });

  it('keeps going with input {} when tool arguments are not valid JSON', async () => {
    fake.enqueue({ body: chatToolCall('retrieve', {}, { rawArguments: '{"query": "unterminated' }) });
    const response = await provider.complete(request({ tools: [retrieveTool] }), { signal });
    expect(response.content).toEqual([{ type: 'tool_use', id: expect.any(String), name: 'retrieve', input: {} }]);
  });

  it('reports a tool call as tool_use even when the server says finish_reason "stop" (Ollama)', async () => {
    const body = chatToolCall('retrieve', { query: 'x' });
    body.choices[0]!.finish_reason = 'stop';
    fake.enqueue({ body });
    expect((await provider.complete(request({ tools: [retrieveTool] }), { signal })).stopReason).toBe('tool_use');
  });

  it('maps finish_reason "length" to max_tokens', async () => {
    const body = chatText('truncat');
    body.choices[0]!.finish_reason = 'length';
    fake.enqueue({ body });
    expect((await provider.complete(request(), { signal })).stopReason).toBe('max_tokens');
  });

  it('429 → rate_limit with retry-after (seconds)', async () => {
    fake.enqueue({
      status: 429,
      headers: { 'retry-after': '3' },
      body: chatError('rate_limit_exceeded', 'Rate limit reached'),
    });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('rate_limit');
    expect(err.retryAfterMs).toBe(3000);
    expect(err.httpStatus).toBe(429);
    expect(fake.requests).toHaveLength(1);
  });

  it('429 about quota → quota (fail fast)', async () => {
    fake.enqueue({ status: 429, body: chatError('insufficient_quota', 'You exceeded your current quota') });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('quota');
    expect(err.retryable).toBe(false);
  });

  it('401 → authentication, without leaking the key', async () => {
    fake.enqueue({ status: 401, body: chatError('invalid_api_key', `Incorrect API key provided: ${API_KEY}`) });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('authentication');
    expect(err.message).not.toContain(API_KEY);
  });

  it("reads Ollama's string error bodies", async () => {
    fake.enqueue({ status: 404, body: { error: 'model "qwen9" not found, try pulling it first' } });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('invalid_request');
    expect(err.message).toContain('not found, try pulling it first');
  });

  it('an abort during a hanging call rethrows the signal reason unchanged', async () => {
    fake.enqueue({ hang: true });
    const controller = new AbortController();
    const reason = new Error('workflow cancelled');
    const pending = provider.complete(request(), { signal: controller.signal });
    // Aborted once the server holds the request (not after a guessed delay).
    await waitUntil(() => fake.requests.length === 1, 'the request to reach the fake server');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('works without an API key and with a base URL without /v1', async () => {
    const bare = createOpenAiProvider({ maxResponseBytes: 16 * 1024 * 1024, baseURL: fake.url.replace(/\/v1$/, '/') });
    fake.enqueue({ body: chatText('local') });
    expect(responseText(await bare.complete(request({ system: undefined }), { signal }))).toBe('local');
    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/chat/completions');
    expect(sent.headers.authorization).toBeUndefined();
    expect((sent.body as { messages: unknown[] }).messages).toEqual([{ role: 'user', content: 'Say hi' }]);
  });
});

describe('openai-compatible provider: transport failures', () => {
  it('a refused connection → connection', async () => {
    const closed = await startFakeOpenAi();
    await closed.close();
    const unreachable = createOpenAiProvider({
      maxResponseBytes: 16 * 1024 * 1024,
      baseURL: closed.url,
      apiKey: API_KEY,
    });
    const err = await providerFailure(unreachable.complete(request(), { signal }));
    expect(err.kind).toBe('connection');
    expect(err.retryable).toBe(true);
  });
});

describe('openai-compatible provider: bodies that are not a usable completion', () => {
  const withMessage = (message: Record<string, unknown>) => {
    const body = chatText('x');
    return { ...body, choices: [{ ...body.choices[0]!, message: { role: 'assistant', ...message } }] };
  };
  it.each([
    ['invalid JSON', { raw: '{"id": "chatcmpl-1", "choices": [' }],
    ['an empty body', { raw: '' }],
    ['{}', { body: {} }],
    ['no choices', { body: { ...chatText('x'), choices: [] } }],
    ['a choice without a message', { body: { ...chatText('x'), choices: [{ index: 0, finish_reason: 'stop' }] } }],
    ['a text/plain body', { raw: 'upstream says hi', headers: { 'content-type': 'text/plain' } }],
    ['a message with neither content nor tool calls', { body: withMessage({ content: null }) }],
    ['a message with empty content', { body: withMessage({ content: '' }) }],
  ] as const)('2xx with %s → bad_response (LLM_BAD_RESPONSE, retryable)', async (_, reply) => {
    fake.enqueue(reply);
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('bad_response');
    expect(err.code).toBe('LLM_BAD_RESPONSE');
    expect(err.retryable).toBe(true);
    expect(err.httpStatus).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });

  it('never puts the API key in the message when an invalid body echoes it', async () => {
    fake.enqueue({ raw: `${API_KEY} is not JSON` });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('bad_response');
    expect(err.message).not.toContain(API_KEY);
  });

  it.each([
    ['cut mid-body (content-length longer than what arrives)', { body: chatText('a long answer'), fault: 'truncate' }],
    ['reset before the response', { fault: 'reset' }],
  ] as const)('a connection %s → connection (LLM_CONNECTION, retryable)', async (_, reply) => {
    fake.enqueue(reply);
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('connection');
    expect(err.code).toBe('LLM_CONNECTION');
    expect(err.retryable).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });
});
