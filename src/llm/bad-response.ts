import type { z } from 'zod';
import { DEFAULTS } from '../domain/definition.js';
import { ProviderError } from '../domain/errors.js';
import { formatPath, tooDeepPath } from '../domain/json-depth.js';
import { boundedToolName, type ContentBlock, MAX_TOOL_NAME_CHARS, MAX_TOOL_USE_ID_CHARS } from '../domain/llm.js';
import { redact } from './retry-after.js';

/**
 * A 2xx the adapter cannot turn into an answer (docs/design.md#transport-retries): not JSON, not the expected shape, or
 * no content at all. It is `bad_response` (LLM_BAD_RESPONSE): transient like a 5xx, so the one
 * retry layer tries again, and the node fails with this code, not INTERNAL, when the tries run out.
 */
export function badResponse(
  provider: string,
  detail: string,
  options: { apiKey?: string; httpStatus?: number; cause?: unknown } = {},
): ProviderError {
  // JSON.parse messages quote the body, which may echo the credentials back.
  return new ProviderError('bad_response', `${provider} answered with ${redact(detail, options.apiKey)}`, {
    httpStatus: options.httpStatus,
    cause: options.cause,
  });
}

/** The first issue as `path: message`: enough to see what was wrong, without dumping the body. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'an unexpected shape';
  const path = issue.path.length === 0 ? 'the body' : issue.path.join('.');
  return `an unexpected shape (${path}: ${issue.message})`;
}

/**
 * A turn with neither text nor a tool call gives the executor nothing to act on: with no
 * responseFormat it would complete the node with "" as if that were the answer. Nor does a tool call
 * whose input is nested deeper than DEFAULTS.maxJsonDepth: the next request carries it back, and
 * whatever walks it (that request's JSON.stringify, storage) overflows its stack; nor one naming a
 * tool longer than any tool name (MAX_TOOL_NAME_CHARS) or with an over-long id. All are bad
 * responses, so the call is made again; the node fails with LLM_BAD_RESPONSE if it never improves.
 */
export function requireContent(provider: string, content: readonly ContentBlock[], httpStatus?: number): void {
  const usable = content.some((block) => block.type === 'tool_use' || (block.type === 'text' && block.text !== ''));
  if (!usable) throw badResponse(provider, 'a message without text or tool calls', { httpStatus });
  for (const block of content) {
    if (block.type !== 'tool_use') continue;
    // A name or id nothing can carry: every later request of the loop, its stored turn, the
    // tool-call row, event and span would hold it whole (an 8 000 000-character name was +72 MB).
    if (block.name.length > MAX_TOOL_NAME_CHARS) {
      const detail = `a call to a tool whose name has ${block.name.length} characters ("${boundedToolName(block.name)}"); no tool name is longer than ${MAX_TOOL_NAME_CHARS}`;
      throw badResponse(provider, detail, { httpStatus });
    }
    if (block.id.length > MAX_TOOL_USE_ID_CHARS) {
      const detail = `a ${boundedToolName(block.name)} call whose tool_use id has ${block.id.length} characters (at most ${MAX_TOOL_USE_ID_CHARS})`;
      throw badResponse(provider, detail, { httpStatus });
    }
    const deep = tooDeepPath(block.input, DEFAULTS.maxJsonDepth, ['input']);
    if (deep) {
      const detail = `a ${block.name} call whose input is nested deeper than ${DEFAULTS.maxJsonDepth} levels (at ${formatPath(deep)})`;
      throw badResponse(provider, detail, { httpStatus });
    }
  }
}
