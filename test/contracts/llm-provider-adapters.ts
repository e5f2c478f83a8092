import { expect } from 'vitest';
import { createAnthropicProvider } from '../../src/llm/anthropic.js';
import { createOpenAiProvider } from '../../src/llm/openai.js';
import {
  errorBody,
  type FakeReply,
  startFakeAnthropic,
  textMessage,
  toolUseMessage,
} from '../support/fake-anthropic.js';
import { chatError, chatText, chatToolCall, startFakeOpenAi } from '../support/fake-openai.js';
import {
  httpHarness,
  MAX_RESPONSE_BYTES,
  MAX_TOKENS,
  type ProviderAdapter,
  type Reply,
  SYSTEM,
  USER,
} from './llm-provider-harness.js';

/** The two HTTP LlmProvider adapters the contract runs against, each described in its own dialect. */

const ANTHROPIC_KEY = 'sk-ant-test-0123456789abcdef';
const OPENAI_KEY = 'sk-openai-test-0123456789';

/** Both headers, so a test of `retry-after-ms` also proves it wins over `retry-after`. */
const retryHeaders = (ms: number | undefined): Record<string, string> =>
  ms === undefined ? {} : { 'retry-after-ms': String(ms), 'retry-after': '1' };

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

const makeAnthropic = (url: string) =>
  createAnthropicProvider({ maxResponseBytes: MAX_RESPONSE_BYTES, apiKey: ANTHROPIC_KEY, baseURL: url });

export const anthropic: ProviderAdapter<FakeReply> = {
  name: 'anthropic (real @anthropic-ai/sdk against the fake Anthropic API)',
  model: 'claude-haiku-4-5',
  start: () => httpHarness(anthropic.http!, anthropic.model),
  requestId: /^msg_fake_/,
  toolUseId: /^toolu_fake_/,
  usage: {
    reply: {
      native: {
        body: textMessage('No bugs found.', {
          input_tokens: 42,
          output_tokens: 7,
          cache_read_input_tokens: 30,
          cache_creation_input_tokens: 2,
        }),
      },
    },
    expected: { inputTokens: 42, outputTokens: 7, cacheReadTokens: 30, cacheWriteTokens: 2 },
  },
  // SDK 1.x speaks anthropic-version 2026-10-21, which has no sampling parameters.
  temperature: 'refused',
  stopReasons: [
    [
      'stop_reason "max_tokens"',
      { native: { body: { ...textMessage('cut'), stop_reason: 'max_tokens' } } },
      'max_tokens',
    ],
    [
      'stop_reason "stop_sequence"',
      { native: { body: { ...textMessage('done'), stop_reason: 'stop_sequence' } } },
      'stop_sequence',
    ],
  ],
  dialectAnswers: [],
  http: {
    apiKey: ANTHROPIC_KEY,
    errorHead: 'Anthropic',
    start: () => startFakeAnthropic(),
    make: makeAnthropic,
    reply: (reply: Reply): FakeReply => {
      if ('hang' in reply) return { hang: true };
      if ('text' in reply) return { body: textMessage(reply.text) };
      if ('toolUse' in reply) return { body: toolUseMessage(reply.toolUse.name, reply.toolUse.input) };
      const { status, message, retryAfterMs } = reply.error;
      const type = ANTHROPIC_ERROR_TYPES[status] ?? 'api_error';
      return { status, headers: retryHeaders(retryAfterMs), body: errorBody(type, message) };
    },
    toolCall: (name, id) => {
      const body = toolUseMessage(name, {});
      if (id !== undefined) (body.content[0] as { id: string }).id = id;
      return { body };
    },
    textWire: {
      method: 'POST',
      path: '/v1/messages',
      // SDK 1.x sends the key as a bearer token and speaks the API version without sampling parameters.
      headers: {
        authorization: `Bearer ${ANTHROPIC_KEY}`,
        'anthropic-version': '2026-10-21',
        'x-stainless-retry-count': '0',
      },
      body: {
        model: 'claude-haiku-4-5',
        max_tokens: MAX_TOKENS,
        system: SYSTEM,
        messages: [{ role: 'user', content: USER }],
        stop_sequences: ['END'],
      },
    },
    variants: [
      {
        label: 'without a system prompt',
        make: makeAnthropic,
        overrides: { system: undefined },
        path: '/v1/messages',
        headers: { authorization: `Bearer ${ANTHROPIC_KEY}` },
        messages: [{ role: 'user', content: USER }],
        bodyLacks: ['system'],
      },
    ],
    // The message and tool shapes are Anthropic's own: passed through as they are.
    toolsWire: (tools) => tools,
    turnsWire: (messages) => messages,
    badBodies: [
      ['content that is not a list', { body: { ...textMessage('x'), content: 'x' } }],
      ['a text block without text', { body: { ...textMessage('x'), content: [{ type: 'text' }] } }],
      ['usage without token counts', { body: { ...textMessage('x'), usage: {} } }],
      ['a message with no content blocks', { body: { ...textMessage('x'), content: [] } }],
      [
        'a message with only a thinking block',
        { body: { ...textMessage(''), content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }] } },
      ],
    ],
    badResponse: { message: /^Anthropic answered with /, httpStatus: undefined },
    dialectErrors: [
      [
        'an overloaded_error body, whatever the status',
        { status: 500, body: errorBody('overloaded_error', 'Overloaded') },
        'overloaded',
        'Overloaded',
      ],
    ],
  },
};

const makeOpenAi = (url: string) =>
  createOpenAiProvider({ maxResponseBytes: MAX_RESPONSE_BYTES, baseURL: url, apiKey: OPENAI_KEY });

function chatWithMessage(message: Record<string, unknown>) {
  const body = chatText('x');
  return { ...body, choices: [{ ...body.choices[0]!, message: { role: 'assistant', ...message } }] };
}

function chatWithFinish(body: ReturnType<typeof chatText>, finishReason: string) {
  return { ...body, choices: [{ ...body.choices[0]!, finish_reason: finishReason }] };
}

export const openai: ProviderAdapter<FakeReply> = {
  name: 'openai-compatible (against the fake OpenAI server)',
  model: 'qwen2.5',
  start: () => httpHarness(openai.http!, openai.model),
  requestId: /^chatcmpl-fake-/,
  toolUseId: /^call_fake_/,
  usage: {
    reply: {
      native: { body: chatText('No bugs found.', { prompt_tokens: 20, completion_tokens: 3, cached_tokens: 8 }) },
    },
    // prompt_tokens counts the cached ones; inputTokens does not.
    expected: { inputTokens: 12, outputTokens: 3, cacheReadTokens: 8 },
  },
  temperature: 'sent',
  stopReasons: [
    ['finish_reason "length"', { native: { body: chatWithFinish(chatText('truncat'), 'length') } }, 'max_tokens'],
    [
      'a tool call with finish_reason "stop" (Ollama)',
      { native: { body: chatWithFinish(chatToolCall('retrieve', { query: 'x' }), 'stop') } },
      'tool_use',
    ],
  ],
  dialectAnswers: [
    [
      'tool arguments that are not valid JSON (input {})',
      { native: { body: chatToolCall('retrieve', {}, { rawArguments: '{"query": "unterminated' }) } },
      [{ type: 'tool_use', id: expect.any(String), name: 'retrieve', input: {} }],
    ],
  ],
  http: {
    apiKey: OPENAI_KEY,
    errorHead: 'OpenAI-compatible',
    start: () => startFakeOpenAi(),
    make: makeOpenAi,
    reply: (reply: Reply): FakeReply => {
      if ('hang' in reply) return { hang: true };
      if ('text' in reply) return { body: chatText(reply.text) };
      if ('toolUse' in reply) return { body: chatToolCall(reply.toolUse.name, reply.toolUse.input) };
      const { status, message, retryAfterMs } = reply.error;
      return { status, headers: retryHeaders(retryAfterMs), body: chatError('api_error', message) };
    },
    toolCall: (name, id) => {
      const body = chatToolCall(name, {});
      const [choice] = body.choices as unknown as Array<{ message: { tool_calls: Array<{ id: string }> } }>;
      const [toolCall] = choice?.message.tool_calls ?? [];
      if (id !== undefined && toolCall) toolCall.id = id;
      return { body };
    },
    textWire: {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${OPENAI_KEY}` },
      body: {
        model: 'qwen2.5',
        max_tokens: MAX_TOKENS,
        stop: ['END'],
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: USER },
        ],
      },
    },
    variants: [
      {
        label: 'without an API key, at a base URL without /v1, without a system prompt',
        make: (url) =>
          createOpenAiProvider({ maxResponseBytes: MAX_RESPONSE_BYTES, baseURL: url.replace(/\/v1$/, '/') }),
        overrides: { system: undefined },
        path: '/chat/completions',
        headers: { authorization: undefined },
        messages: [{ role: 'user', content: USER }],
        bodyLacks: [],
      },
    ],
    toolsWire: (tools) =>
      tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
      })),
    // The contract's turns: the assistant's text and call, then a failed tool result and more user text.
    turnsWire: (_, callId) => [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: callId, type: 'function', function: { name: 'retrieve', arguments: '{"query":"retries"}' } },
        ],
      },
      // OpenAI has no is_error flag: the content says so.
      { role: 'tool', tool_call_id: callId, content: 'Error: no results' },
      { role: 'user', content: 'Go on.' },
    ],
    badBodies: [
      ['no choices', { body: { ...chatText('x'), choices: [] } }],
      ['a choice without a message', { body: { ...chatText('x'), choices: [{ index: 0, finish_reason: 'stop' }] } }],
      ['a message with neither content nor tool calls', { body: chatWithMessage({ content: null }) }],
      ['a message with empty content', { body: chatWithMessage({ content: '' }) }],
    ],
    badResponse: { message: /^OpenAI-compatible server answered with /, httpStatus: 200 },
    dialectErrors: [
      [
        "Ollama's string error body",
        { status: 404, body: { error: 'model "qwen9" not found, try pulling it first' } },
        'invalid_request',
        'not found, try pulling it first',
      ],
    ],
  },
};
