import Anthropic, {
  AnthropicError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import type {
  StopReason as AnthropicStopReason,
  MessageCreateParamsNonStreaming,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { z } from 'zod';
import { ProviderError } from '../domain/errors.js';
import type { ContentBlock, LlmRequest, LlmResponse, StopReason } from '../domain/llm.js';
import type { LlmProvider } from '../domain/ports.js';
import { badResponse, firstIssue, requireContent } from './bad-response.js';
import { cappedFetch, isNetworkFailure, oversizedResponse } from './capped-body.js';
import { httpProviderError, redact } from './retry-after.js';

/**
 * What we read of a Messages API answer. The SDK hands back whatever the body parsed to (or
 * `undefined` for an empty one) typed as `Message`; this checks it before anything is read.
 */
const MessageSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  stop_reason: z.string().nullish(),
  content: z.array(
    z.union([
      z.object({ type: z.literal('text'), text: z.string() }),
      z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
      // Thinking, server-tool and future blocks: allowed, and left out of the neutral shape.
      z
        .looseObject({ type: z.string().refine((type) => type !== 'text' && type !== 'tool_use') })
        .transform(() => ({ type: 'other' as const })),
    ]),
  ),
  usage: z.object({
    input_tokens: z.number(),
    output_tokens: z.number(),
    cache_read_input_tokens: z.number().nullish(),
    cache_creation_input_tokens: z.number().nullish(),
  }),
});
type Message = z.infer<typeof MessageSchema>;

/**
 * `anthropic/<model>` through the official SDK (docs/design.md#providers-and-models). The SDK never retries
 * (`maxRetries: 0`):
 * the executor is the only retry layer, and it decides from the ProviderError kind alone.
 */
export function createAnthropicProvider(options: {
  apiKey: string;
  baseURL?: string;
  /** Bytes of one answer, read while it streams (MAX_PROVIDER_RESPONSE_BYTES). */
  maxResponseBytes: number;
}): LlmProvider {
  const client = new Anthropic({
    apiKey: options.apiKey,
    fetch: cappedFetch(options.maxResponseBytes),
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    maxRetries: 0,
    // An explicit timeout stops the SDK refusing large non-streaming `max_tokens`; the real deadline
    // is the executor's AbortSignal on every call.
    timeout: 10 * 60_000,
  });

  return {
    async complete(request, { signal }) {
      if (signal.aborted) throw signal.reason;
      if (request.temperature !== undefined) {
        // SDK 1.x speaks anthropic-version 2026-10-21, which removed sampling parameters: the API
        // answers 400 to any `temperature`. Rejected here, with a clear message, rather than dropped.
        throw new ProviderError(
          'invalid_request',
          'temperature is not supported by the Anthropic Messages API (anthropic-version 2026-10-21); remove it for anthropic/* models',
        );
      }
      let body: unknown;
      try {
        body = await client.messages.create(toParams(request), { signal });
      } catch (err) {
        throw toProviderFailure(err, signal, options.apiKey);
      }
      const message = MessageSchema.safeParse(body);
      if (!message.success) throw badResponse('Anthropic', firstIssue(message.error));
      return toResponse(message.data, request);
    },
  };
}

function toParams(request: LlmRequest): MessageCreateParamsNonStreaming {
  const params: MessageCreateParamsNonStreaming = {
    model: request.model,
    max_tokens: request.maxTokens,
    // Our message shape is the Anthropic one (docs/design.md#providers-and-models), so it is passed through as is.
    messages: request.messages as MessageParam[],
  };
  if (request.system !== undefined && request.system !== '') params.system = request.system;
  if (request.stop !== undefined && request.stop.length > 0) params.stop_sequences = request.stop;
  if (request.tools !== undefined && request.tools.length > 0) {
    params.tools = request.tools.map(
      (tool): Tool => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.input_schema as Tool.InputSchema,
      }),
    );
  }
  return params;
}

const STOP_REASONS: Record<AnthropicStopReason, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  // Server-tool pauses and refusals end the turn as far as the executor's loop is concerned.
  pause_turn: 'end_turn',
  refusal: 'end_turn',
  model_context_window_exceeded: 'max_tokens',
};

function toResponse(message: Message, request: LlmRequest): LlmResponse {
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') {
      const input = block.input;
      const record = typeof input === 'object' && input !== null && !Array.isArray(input);
      content.push({
        type: 'tool_use',
        id: block.id,
        name: block.name,
        input: record ? (input as Record<string, unknown>) : {},
      });
    }
    // Thinking and server-tool blocks have no place in the provider-neutral shape.
  }
  requireContent('Anthropic', content);
  const usage = message.usage;
  const stopReason = message.stop_reason as AnthropicStopReason | null | undefined;
  const response: LlmResponse = {
    content,
    stopReason: (stopReason && STOP_REASONS[stopReason]) || 'end_turn',
    usage: { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens },
    model: message.model ?? request.model,
    requestId: message.id ?? null,
  };
  if (typeof usage.cache_read_input_tokens === 'number') {
    response.usage.cacheReadTokens = usage.cache_read_input_tokens;
  }
  if (typeof usage.cache_creation_input_tokens === 'number') {
    response.usage.cacheWriteTokens = usage.cache_creation_input_tokens;
  }
  return response;
}

/** Classifies an SDK failure (docs/design.md#transport-retries); an abort is the caller's own reason, untouched. */
function toProviderFailure(err: unknown, signal: AbortSignal, apiKey: string): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof APIUserAbortError) return err;
  // Before the connection classes: the SDK wraps what its fetch throws in APIConnectionError.
  const oversized = oversizedResponse(err, 'Anthropic');
  if (oversized) return oversized;
  if (err instanceof APIConnectionTimeoutError) {
    return new ProviderError('timeout', 'Anthropic request timed out', { cause: err });
  }
  if (err instanceof APIConnectionError) {
    return new ProviderError('connection', `Anthropic connection failed: ${redact(err.message, apiKey)}`, {
      cause: err,
    });
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const message = redact(err.apiMessage ?? err.message, apiKey);
    const kind = err.type === 'overloaded_error' ? 'overloaded' : undefined;
    return httpProviderError('Anthropic', err.status, message, { headers: err.headers, kind, cause: err });
  }
  if (err instanceof AnthropicError) {
    // Raised by the SDK before sending (bad options): retrying the same request cannot help.
    return new ProviderError('invalid_request', `Anthropic: ${redact(err.message, apiKey)}`, { cause: err });
  }
  // Past the headers the SDK reads and parses the body itself and lets those failures through as is.
  if (err instanceof SyntaxError) {
    return badResponse('Anthropic', `a body that is not JSON (${err.message})`, { apiKey, cause: err });
  }
  // undici rejects a body read with `TypeError('terminated')` when the connection drops mid-body.
  if (isNetworkFailure(err)) {
    return new ProviderError('connection', 'Anthropic connection failed while reading the response body', {
      cause: err,
    });
  }
  return err;
}
