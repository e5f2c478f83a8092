import { type FakeServer, type ReplySource, startFakeServer } from './fake-anthropic.js';

/**
 * A fake OpenAI-compatible `/chat/completions` server (Ollama, vLLM, OpenAI shapes) on 127.0.0.1.
 * Same replies, queue and recording as fake-anthropic.
 */

export type { FakeServer, ReplySource } from './fake-anthropic.js';

let completionCounter = 0;

export interface FakeChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
}

function completion(message: Record<string, unknown>, finishReason: string, usage: FakeChatUsage = {}) {
  completionCounter++;
  const promptTokens = usage.prompt_tokens ?? 10;
  const completionTokens = usage.completion_tokens ?? 5;
  return {
    id: `chatcmpl-fake-${completionCounter}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      ...(usage.cached_tokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached_tokens } }),
    },
  };
}

/** A `chat.completion` body (serve it as `{ body }`); `model` is filled from the request. */
export function chatText(text: string, usage?: FakeChatUsage) {
  return completion({ content: text }, 'stop', usage);
}

/** One tool call; pass `rawArguments` to send arguments that are not valid JSON. */
export function chatToolCall(name: string, input: Record<string, unknown>, options: { rawArguments?: string } = {}) {
  const call = {
    id: `call_fake_${completionCounter + 1}`,
    type: 'function',
    function: { name, arguments: options.rawArguments ?? JSON.stringify(input) },
  };
  return completion({ content: null, tool_calls: [call] }, 'tool_calls');
}

/** OpenAI's error envelope, e.g. `chatError('rate_limit_exceeded', 'slow down')`. */
export function chatError(type: string, message: string) {
  return { error: { message, type, param: null, code: type } };
}

/** `url` ends in `/v1`: it is the `OPENAI_BASE_URL` (the adapter adds `/chat/completions`). */
export async function startFakeOpenAi(options: { defaultReply?: ReplySource } = {}): Promise<FakeServer> {
  return startFakeServer({
    paths: ['/v1/chat/completions', '/chat/completions'],
    basePath: '/v1',
    defaultReply: options.defaultReply ?? (() => ({ body: chatText('ok') })),
    finishBody: (body, request) => {
      const isCompletion =
        typeof body === 'object' && body !== null && (body as { object?: unknown }).object === 'chat.completion';
      if (!isCompletion || 'model' in body) return body;
      const requested = (request.body as { model?: unknown } | undefined)?.model;
      return { ...body, model: typeof requested === 'string' ? requested : 'fake-model' };
    },
  });
}
