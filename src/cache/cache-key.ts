import { createHash } from 'node:crypto';
import { canonicalJson } from '../domain/canonical-json.js';
import type { JsonSchema, LlmMessage, LlmRequest, ToolDefinition } from '../domain/llm.js';

/**
 * Cache keys (docs/design.md#caching): `<namespace>:<sha256 hex>` over the canonical JSON of the request as it
 * is actually sent to the provider. Everything that can change the answer is in it, including
 * call-time overrides (model, temperature, maxTokens…): build it from the final request, never
 * from the agent's defaults.
 */

/** Bumped whenever the key's content or encoding changes, so old entries simply stop matching. */
const KEY_VERSION = 1;

export const NO_SCHEMA = 'no-schema';

/** The fields that determine a provider's answer. */
export interface EffectiveRequest {
  tenant: string;
  /** `anthropic`, `openai`, `sim`… */
  provider: string;
  /** The resolved provider model id (never a tier name). */
  model: string;
  system?: string | undefined;
  /** User message, data, and every tool turn so far. */
  messages: LlmMessage[];
  temperature?: number | undefined;
  maxTokens: number;
  stop?: string[] | undefined;
  /** Full definitions: a changed description or input schema changes the answer. */
  tools?: ToolDefinition[] | undefined;
  /** schemaHash(responseFormat). */
  schemaHash: string;
  /** sim only: the script decides the answer, so it is part of the question (its position key is not). */
  simulate?: { latencyMs?: number | undefined; responses?: unknown[] | undefined } | undefined;
}

/**
 * SHA-256 hex of the canonical JSON of the whole schema. Hashing the complete document (not a
 * name, version or a library's internal description of it) means two schemas that differ in any
 * keyword, such as one `minLength` or one `enum` value, never share a hash.
 */
export function schemaHash(responseFormat?: JsonSchema): string {
  if (responseFormat === undefined) return NO_SCHEMA;
  // Every call of a prompt carries the same schema object: hash it once.
  let hash = schemaHashes.get(responseFormat);
  // Stryker disable next-line ConditionalExpression: a memo; hashing the schema again gives the same hash
  if (hash === undefined) {
    hash = createHash('sha256').update(canonicalJson(responseFormat)).digest('hex');
    schemaHashes.set(responseFormat, hash);
  }
  return hash;
}
const schemaHashes = new WeakMap<JsonSchema, string>();

/** `${namespace}:${sha256 hex}`. The namespace is the agent name, so busting `analyst:` is a true prefix. */
export function cacheKey(namespace: string, request: EffectiveRequest): string {
  const tools = request.tools === undefined ? undefined : sortedByName(request.tools);
  const text = canonicalJson({ v: KEY_VERSION, ...request, tools });
  return `${namespace}:${createHash('sha256').update(text).digest('hex')}`;
}

/**
 * The effective request of a provider call, taken from the very LlmRequest handed to the provider
 * so the key can never disagree with what was asked. A sim script is included (without its
 * per-run position key): two runs with different scripts must not share answers.
 */
export function effectiveRequest(tenant: string, provider: string, request: LlmRequest): EffectiveRequest {
  return {
    tenant,
    provider,
    model: request.model,
    system: request.system,
    messages: request.messages,
    temperature: request.temperature,
    maxTokens: request.maxTokens,
    stop: request.stop,
    tools: request.tools,
    schemaHash: schemaHash(request.responseFormat),
    simulate: request.simulate && { latencyMs: request.simulate.latencyMs, responses: request.simulate.responses },
  };
}

/**
 * Tools sorted by name (docs/design.md#caching); the caller's array is left untouched. A request's
 * tool names are unique (one definition per name), so no two ever compare equal.
 */
function sortedByName(tools: ToolDefinition[]): ToolDefinition[] {
  for (let i = 1; i < tools.length; i++) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: sorting tools already in order gives the same order
    if ((tools[i - 1] as ToolDefinition).name > (tools[i] as ToolDefinition).name) {
      // Stryker disable next-line EqualityOperator: names are unique, so `<=` and `<` never differ
      return tools.slice().sort((a, b) => (a.name < b.name ? -1 : 1));
    }
  }
  return tools;
}
