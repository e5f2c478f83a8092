import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LlmRequest, responseText } from '../../../src/domain/llm.js';
import type { LlmProvider } from '../../../src/domain/ports.js';
import { createAnthropicProvider } from '../../../src/llm/anthropic.js';
import { waitUntil } from '../../helpers/api-fixtures.js';
import {
  errorBody,
  type FakeServer,
  startFakeAnthropic,
  textMessage,
  toolUseMessage,
} from '../../helpers/fake-anthropic.js';
import { providerFailure } from '../../helpers/provider-failure.js';
import { createGate } from '../../helpers/scripted-model.js';

const API_KEY = 'sk-ant-test-0123456789abcdef';
const signal = new AbortController().signal;

let fake: FakeServer;
let provider: LlmProvider;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  provider = createAnthropicProvider({ maxResponseBytes: 16 * 1024 * 1024, apiKey: API_KEY, baseURL: fake.url });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'claude-haiku-4-5',
    system: 'You review code for bugs.',
    messages: [{ role: 'user', content: 'Analyze this code' }],
    maxTokens: 512,
    ...overrides,
  };
}

describe('anthropic provider against the fake API', () => {
  it('maps a text message, its usage and its id', async () => {
    fake.enqueue({
      body: textMessage('No bugs found.', {
        input_tokens: 42,
        output_tokens: 7,
        cache_read_input_tokens: 30,
        cache_creation_input_tokens: 2,
      }),
    });
    const response = await provider.complete(request({ stop: ['END'] }), { signal });
    expect(responseText(response)).toBe('No bugs found.');
    expect(response.stopReason).toBe('end_turn');
    expect(response.usage).toEqual({ inputTokens: 42, outputTokens: 7, cacheReadTokens: 30, cacheWriteTokens: 2 });
    expect(response.model).toBe('claude-haiku-4-5');
    expect(response.requestId).toMatch(/^msg_fake_/);

    expect(fake.requests).toHaveLength(1);
    const sent = fake.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/messages');
    // SDK 1.x sends the key as a bearer token and speaks the API version without sampling parameters.
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.headers['anthropic-version']).toBe('2026-10-21');
    expect(sent.headers['x-stainless-retry-count']).toBe('0');
    expect(sent.body).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 512,
      system: 'You review code for bugs.',
      messages: [{ role: 'user', content: 'Analyze this code' }],
      stop_sequences: ['END'],
    });
  });

  it('sends tools and tool turns, and maps a tool_use answer', async () => {
    fake.enqueue({ body: toolUseMessage('retrieve', { query: 'retry policy' }) });
    const tools = [
      {
        name: 'retrieve',
        description: 'Search docs',
        input_schema: { type: 'object', properties: { query: { type: 'string' } } },
      },
    ];
    const messages: LlmRequest['messages'] = [
      { role: 'user', content: 'Find the policy' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'retrieve', input: { query: 'a' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'nothing', is_error: false }] },
    ];
    const response = await provider.complete(request({ tools, messages }), { signal });
    expect(response.stopReason).toBe('tool_use');
    expect(response.content).toEqual([
      {
        type: 'tool_use',
        id: expect.stringMatching(/^toolu_fake_/),
        name: 'retrieve',
        input: { query: 'retry policy' },
      },
    ]);
    const body = fake.requests[0]!.body as Record<string, unknown>;
    expect(body.tools).toEqual(tools);
    expect(body.messages).toEqual(messages);
  });

  it('429 with retry-after-ms → rate_limit with retryAfterMs, and the SDK does not retry', async () => {
    fake.enqueue({
      status: 429,
      headers: { 'retry-after-ms': '250', 'retry-after': '1' },
      body: errorBody('rate_limit_error', 'Number of requests has exceeded your rate limit'),
    });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('rate_limit');
    expect(err.code).toBe('LLM_RATE_LIMIT');
    expect(err.retryable).toBe(true);
    expect(err.httpStatus).toBe(429);
    expect(err.retryAfterMs).toBe(250);
    expect(fake.requests).toHaveLength(1);
  });

  it('falls back to retry-after seconds', async () => {
    fake.enqueue({ status: 529, headers: { 'retry-after': '2' }, body: errorBody('overloaded_error', 'Overloaded') });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('overloaded');
    expect(err.retryAfterMs).toBe(2000);
    expect(fake.requests).toHaveLength(1);
  });

  it('treats an overloaded_error body as overloaded whatever the status', async () => {
    fake.enqueue({ status: 500, body: errorBody('overloaded_error', 'Overloaded') });
    expect((await providerFailure(provider.complete(request(), { signal }))).kind).toBe('overloaded');
  });

  it.each([
    [401, 'authentication_error', 'invalid x-api-key', 'authentication', false],
    [403, 'permission_error', 'not allowed', 'permission', false],
    [400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API.', 'quota', false],
    [400, 'invalid_request_error', 'messages: field required', 'invalid_request', false],
    [500, 'api_error', 'Internal server error', 'server', true],
  ] as const)('%i %s → %s', async (status, type, message, kind, retryable) => {
    fake.enqueue({ status, body: errorBody(type, message) });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe(kind);
    expect(err.retryable).toBe(retryable);
    expect(err.message).toContain(message);
    expect(fake.requests).toHaveLength(1);
  });

  it('never puts the API key in an error message, even when the server echoes it', async () => {
    fake.enqueue({ status: 401, body: errorBody('authentication_error', `invalid key ${API_KEY}`) });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.message).not.toContain(API_KEY);
    expect(err.message).toContain('[redacted]');
  });

  it('an abort during a hanging call rethrows the signal reason unchanged', async () => {
    fake.enqueue({ hang: true });
    const controller = new AbortController();
    const reason = new Error('node deadline');
    const pending = provider.complete(request(), { signal: controller.signal });
    // Aborted once the server holds the request (not after a guessed delay).
    await waitUntil(() => fake.requests.length === 1, 'the request to reach the fake server');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(fake.requests).toHaveLength(1);
  });

  it('an already aborted signal throws its reason without a request', async () => {
    const reason = new Error('cancelled');
    await expect(provider.complete(request(), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(fake.requests).toHaveLength(0);
  });

  it('rejects temperature, which the SDK API version no longer accepts, before sending', async () => {
    const err = await providerFailure(provider.complete(request({ temperature: 0 }), { signal }));
    expect(err.kind).toBe('invalid_request');
    expect(err.message).toContain('temperature');
    expect(fake.requests).toHaveLength(0);
  });

  it('accepts a large max_tokens without the SDK demanding streaming (the signal is the deadline)', async () => {
    const response = await provider.complete(request({ maxTokens: 64_000 }), { signal });
    expect(responseText(response)).toBe('ok');
  });

  it('answers by content with a reply function', async () => {
    fake.enqueue((req) => ({ body: textMessage(`echo ${(req.body as { model: string }).model}`) }));
    expect(responseText(await provider.complete(request(), { signal }))).toBe('echo claude-haiku-4-5');
  });
});

describe('anthropic provider: transport failures', () => {
  it('a refused connection → connection', async () => {
    const closed = await startFakeAnthropic();
    const url = closed.url;
    await closed.close();
    const unreachable = createAnthropicProvider({ maxResponseBytes: 16 * 1024 * 1024, apiKey: API_KEY, baseURL: url });
    const err = await providerFailure(unreachable.complete(request(), { signal }));
    expect(err.kind).toBe('connection');
    expect(err.message).not.toContain(API_KEY);
  });

  it('close() ends a hanging reply so the client sees a connection failure', async () => {
    const server = await startFakeAnthropic();
    server.enqueue({ hang: true });
    const client = createAnthropicProvider({
      maxResponseBytes: 16 * 1024 * 1024,
      apiKey: API_KEY,
      baseURL: server.url,
    });
    const pending = providerFailure(client.complete(request(), { signal }));
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await server.close();
    expect((await pending).kind).toBe('connection');
  });
});

describe('anthropic provider: bodies that are not a usable message', () => {
  const thinkingOnly = { ...textMessage(''), content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }] };
  it.each([
    ['invalid JSON', { raw: '{"id": "msg_1", "content": [' }],
    ['an empty body', { raw: '' }],
    ['{}', { body: {} }],
    ['content that is not a list', { body: { ...textMessage('x'), content: 'x' } }],
    ['a text block without text', { body: { ...textMessage('x'), content: [{ type: 'text' }] } }],
    ['usage without token counts', { body: { ...textMessage('x'), usage: {} } }],
    ['a text/plain body', { raw: 'upstream says hi', headers: { 'content-type': 'text/plain' } }],
    ['a message with no content blocks', { body: { ...textMessage('x'), content: [] } }],
    ['a message with only a thinking block', { body: thinkingOnly }],
  ] as const)('2xx with %s → bad_response (LLM_BAD_RESPONSE, retryable)', async (_, reply) => {
    fake.enqueue(reply);
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('bad_response');
    expect(err.code).toBe('LLM_BAD_RESPONSE');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/^Anthropic answered with /);
    expect(fake.requests).toHaveLength(1);
  });

  it('never puts the API key in the message when an invalid body echoes it', async () => {
    fake.enqueue({ raw: `${API_KEY} is not JSON` });
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('bad_response');
    expect(err.message).not.toContain(API_KEY);
  });

  it.each([
    [
      'cut mid-body (content-length longer than what arrives)',
      { body: textMessage('a long answer'), fault: 'truncate' },
    ],
    ['reset before the response', { fault: 'reset' }],
  ] as const)('a connection %s → connection (LLM_CONNECTION, retryable)', async (_, reply) => {
    fake.enqueue(reply);
    const err = await providerFailure(provider.complete(request(), { signal }));
    expect(err.kind).toBe('connection');
    expect(err.code).toBe('LLM_CONNECTION');
    expect(err.retryable).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('an abort while the body is being read rethrows the signal reason', async () => {
    const controller = new AbortController();
    const reason = new Error('node deadline');
    // The answer is held until the test lets it go: the abort comes while the client waits for it.
    const held = createGate();
    fake.enqueue(() => held.promise.then(() => ({ body: textMessage('slow') })));
    const pending = provider.complete(request(), { signal: controller.signal });
    await waitUntil(() => fake.requests.length === 1, 'the request to reach the fake server');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    held.open();
  });
});
