import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ProviderError } from '../domain/errors.js';
import type { ContentBlock, LlmMessage, LlmRequest, LlmResponse, StopReason } from '../domain/llm.js';
import type { LlmProvider } from '../domain/ports.js';
import { badResponse, firstIssue, requireContent } from './bad-response.js';
import { cappedFetch, isNetworkFailure, oversizedResponse } from './capped-body.js';
import { httpProviderError, redact } from './retry-after.js';

/**
 * `openai/<model>`: any OpenAI-compatible `/chat/completions` server (OpenAI, Ollama, vLLM,
 * llama.cpp). Our messages are Anthropic-shaped (docs/design.md#providers-and-models), so tool turns are translated
 * both ways.
 */

type OpenAiMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAiToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

// Lenient on purpose: compatible servers differ in which optional fields they fill.
const ChatCompletionSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                function: z.object({
                  name: z.string(),
                  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
                }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number().nullish(),
      completion_tokens: z.number().nullish(),
      prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
    })
    .nullish(),
});
type ChatCompletion = z.infer<typeof ChatCompletionSchema>;

const MAX_ERROR_BODY_CHARS = 2000;

export function createOpenAiProvider(options: {
  baseURL: string;
  apiKey?: string;
  /** Bytes of one answer, read while it streams (MAX_PROVIDER_RESPONSE_BYTES). */
  maxResponseBytes: number;
  fetch?: typeof fetch;
}): LlmProvider {
  const endpoint = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;
  const doFetch = cappedFetch(options.maxResponseBytes, options.fetch ?? fetch);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  return {
    async complete(request, { signal }) {
      if (signal.aborted) throw signal.reason;
      try {
        const response = await doFetch(endpoint, {
          method: 'POST',
          headers,
          body: JSON.stringify(toBody(request)),
          signal,
        });
        const text = await response.text();
        if (!response.ok) {
          const message = redact(errorMessage(text, response.statusText), options.apiKey);
          throw httpProviderError('OpenAI-compatible', response.status, message, { headers: response.headers });
        }
        return toResponse(parseCompletion(text, response.status, options.apiKey), request, response.status);
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        if (err instanceof ProviderError) throw err;
        const oversized = oversizedResponse(err, 'OpenAI-compatible server');
        if (oversized) throw oversized;
        const timedOut = err instanceof Error && err.name === 'TimeoutError';
        // Only the network's failures are connection errors (retried); anything else is ours.
        if (!timedOut && !isNetworkFailure(err)) throw err;
        const detail = redact(err instanceof Error ? err.message : String(err), options.apiKey);
        throw new ProviderError(timedOut ? 'timeout' : 'connection', `OpenAI-compatible request failed: ${detail}`, {
          cause: err,
        });
      }
    },
  };
}

function toBody(request: LlmRequest): Record<string, unknown> {
  const messages: OpenAiMessage[] = [];
  if (request.system !== undefined && request.system !== '') messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) appendMessage(messages, message);
  const body: Record<string, unknown> = { model: request.model, messages, max_tokens: request.maxTokens };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.stop !== undefined && request.stop.length > 0) body.stop = request.stop;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
    }));
  }
  return body;
}

/** Tool results become `tool` messages, which must directly follow the assistant's `tool_calls`. */
function appendMessage(out: OpenAiMessage[], message: LlmMessage): void {
  if (typeof message.content === 'string') {
    out.push({ role: message.role, content: message.content });
    return;
  }
  let text = '';
  const toolCalls: OpenAiToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input) },
      });
    } else {
      // OpenAI has no is_error flag; saying so in the content keeps the information.
      const content = block.is_error ? `Error: ${block.content}` : block.content;
      out.push({ role: 'tool', tool_call_id: block.tool_use_id, content });
    }
  }
  if (message.role === 'assistant') {
    if (toolCalls.length > 0)
      out.push({ role: 'assistant', content: text === '' ? null : text, tool_calls: toolCalls });
    else out.push({ role: 'assistant', content: text });
  } else if (text !== '') {
    out.push({ role: 'user', content: text });
  }
}

/** OpenAI's `{error: {message}}`, Ollama's `{error: "..."}`, or the raw text. */
function errorMessage(text: string, statusText: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = body.error;
    if (typeof error === 'string') return error;
    if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, MAX_ERROR_BODY_CHARS) || statusText || 'no body';
}

function parseCompletion(text: string, status: number, apiKey: string | undefined): ChatCompletion {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const detail = `a body that is not JSON (${err instanceof Error ? err.message : String(err)})`;
    throw badResponse('OpenAI-compatible server', detail, { apiKey, httpStatus: status });
  }
  const parsed = ChatCompletionSchema.safeParse(json);
  if (!parsed.success) {
    throw badResponse('OpenAI-compatible server', firstIssue(parsed.error), { httpStatus: status });
  }
  return parsed.data;
}

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
};

function toResponse(completion: ChatCompletion, request: LlmRequest, status: number): LlmResponse {
  const choice = completion.choices[0];
  const content: ContentBlock[] = [];
  const message = choice?.message;
  if (message?.content) content.push({ type: 'text', text: message.content });
  for (const call of message?.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id || `toolu_oai_${randomBytes(8).toString('hex')}`,
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  requireContent('OpenAI-compatible server', content, status);
  const hasToolCalls = content.some((block) => block.type === 'tool_use');
  // Some servers (Ollama) report `stop` even when the turn is a tool call.
  const stopReason = hasToolCalls ? 'tool_use' : (FINISH_REASONS[choice?.finish_reason ?? 'stop'] ?? 'end_turn');
  const usage = completion.usage;
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const response: LlmResponse = {
    content,
    stopReason,
    // OpenAI counts cached tokens inside prompt_tokens; Anthropic (our shape) counts them apart.
    usage: {
      inputTokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached),
      outputTokens: usage?.completion_tokens ?? 0,
    },
    model: completion.model ?? request.model,
    requestId: completion.id ?? null,
  };
  if (cached > 0) response.usage.cacheReadTokens = cached;
  return response;
}

/** Models sometimes emit broken argument JSON; `{}` lets the tool's own validation answer that. */
function parseArguments(raw: string | Record<string, unknown> | null | undefined): Record<string, unknown> {
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== 'string') return raw;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
