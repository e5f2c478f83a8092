import { randomBytes } from 'node:crypto';
import { classifyHttpFailure, ProviderError } from '../domain/errors.js';
import type {
  ContentBlock,
  JsonSchema,
  LlmMessage,
  LlmRequest,
  LlmResponse,
  SimulatedResponse,
} from '../domain/llm.js';
import type { Clock, LlmProvider } from '../domain/ports.js';
import { instanceOf } from './schema-instance.js';

/**
 * The embedded `sim` provider (docs/design.md#providers-and-models): no key, no network, deterministic. It runs on the
 * executor's hot path, so the unscripted answer costs a few string operations and no timers.
 */

/** Script cursors live in memory; past this many keys the oldest are forgotten (replayed from the start). */
const MAX_SCRIPT_KEYS = 50_000;
const SNIPPET_CHARS = 120;

// A per-process prefix keeps ids from different runs apart; the counter keeps them unique within one.
const processTag = randomBytes(4).toString('hex');
let sequence = 0;
function nextId(prefix: string): string {
  sequence++;
  return `${prefix}${processTag}${sequence.toString(36)}`;
}

/** `instanceOf` + stringify once per schema object: agents reuse the same parsed definition. */
const answerBySchema = new WeakMap<JsonSchema, string>();
function schemaAnswer(schema: JsonSchema): string {
  let answer = answerBySchema.get(schema);
  if (answer === undefined) {
    answer = JSON.stringify(instanceOf(schema)) ?? 'null';
    answerBySchema.set(schema, answer);
  }
  return answer;
}

export function createSimulatedProvider(options: { clock: Clock }): LlmProvider {
  const { clock } = options;
  const cursors = new Map<string, number>();

  /** The next unconsumed scripted response for this key, advancing its cursor; undefined when none is left. */
  function takeScripted(request: LlmRequest): SimulatedResponse | undefined {
    const simulate = request.simulate;
    const responses = simulate?.responses;
    if (!simulate || !responses || responses.length === 0) return undefined;
    const position = cursors.get(simulate.scriptKey) ?? 0;
    if (position >= responses.length) return undefined;
    if (position === 0 && cursors.size >= MAX_SCRIPT_KEYS) {
      const oldest = cursors.keys().next();
      if (!oldest.done) cursors.delete(oldest.value);
    }
    cursors.set(simulate.scriptKey, position + 1);
    return responses[position];
  }

  return {
    replayed(request) {
      takeScripted(request);
    },

    async complete(request, { signal }) {
      if (signal.aborted) throw signal.reason;
      const latencyMs = request.simulate?.latencyMs;
      if (latencyMs !== undefined && latencyMs > 0) await clock.sleep(latencyMs, signal);
      // Taken after the latency so an aborted call does not consume its script entry.
      const scripted = takeScripted(request);
      if (scripted && 'error' in scripted) {
        const { status, retryAfterMs, message } = scripted.error;
        const text = message ?? `simulated HTTP ${status} error`;
        throw new ProviderError(classifyHttpFailure(status, text), text, { httpStatus: status, retryAfterMs });
      }
      if (scripted && 'toolUse' in scripted) {
        const { name, input } = scripted.toolUse;
        const outputChars = name.length + (JSON.stringify(input)?.length ?? 0);
        return respond(request, [{ type: 'tool_use', id: nextId('toolu_sim_'), name, input }], 'tool_use', outputChars);
      }
      let text: string;
      if (scripted && 'text' in scripted) text = scripted.text;
      else if (scripted && 'json' in scripted) text = JSON.stringify(scripted.json) ?? 'null';
      else if (request.responseFormat) text = schemaAnswer(request.responseFormat);
      else text = `[simulated ${request.model}] ${lastUserText(request.messages)}`;
      return respond(request, [{ type: 'text', text }], 'end_turn', text.length);
    },
  };
}

function respond(
  request: LlmRequest,
  content: ContentBlock[],
  stopReason: LlmResponse['stopReason'],
  outputChars: number,
): LlmResponse {
  return {
    content,
    stopReason,
    usage: { inputTokens: estimateTokens(inputChars(request)), outputTokens: estimateTokens(outputChars) },
    model: request.model,
    requestId: nextId('sim_'),
    simulated: true,
  };
}

/** The usual ~4 characters per token, never less than one token. */
function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function inputChars(request: LlmRequest): number {
  let chars = request.system?.length ?? 0;
  for (const message of request.messages) {
    if (typeof message.content === 'string') {
      chars += message.content.length;
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'text') chars += block.text.length;
      else if (block.type === 'tool_result') chars += block.content.length;
      else chars += block.name.length + (JSON.stringify(block.input)?.length ?? 0);
    }
  }
  return chars;
}

/** The start of the most recent user turn with any text (tool results count), on one line. */
function lastUserText(messages: readonly LlmMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'user') continue;
    let text = '';
    if (typeof message.content === 'string') text = message.content;
    else {
      for (const block of message.content) {
        if (text.length >= SNIPPET_CHARS) break;
        if (block.type === 'text') text += block.text;
        else if (block.type === 'tool_result') text += block.content;
      }
    }
    if (text.length > 0) return text.slice(0, SNIPPET_CHARS).replace(/\s+/g, ' ').trim();
  }
  return '';
}
