import { z } from 'zod';

/** Provider-neutral, Anthropic-shaped model I/O (docs/design.md#providers-and-models). */

export type TextBlock = { type: 'text'; text: string };
export type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
export type ToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };
export type ContentBlock = TextBlock | ToolUseBlock;

/**
 * The longest tool name a provider accepts (Anthropic and OpenAI both say 64): a tool_use naming a
 * longer one calls no tool that can exist, and the adapters treat that answer as a bad response.
 */
export const MAX_TOOL_NAME_CHARS = 64;
/** A tool_use id longer than this is a bad response too (providers' own ids are about 30 characters). */
export const MAX_TOOL_USE_ID_CHARS = 256;

/**
 * A model-written tool name as it may be stored or shown: at most MAX_TOOL_NAME_CHARS characters,
 * a longer one cut with a marker that says how long it was (`…(8000000 chars)`).
 */
export function boundedToolName(name: string): string {
  if (name.length <= MAX_TOOL_NAME_CHARS) return name;
  const marker = `…(${name.length} chars)`;
  let end = MAX_TOOL_NAME_CHARS - marker.length;
  // Not between the halves of a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(name.charAt(end - 1))) end--;
  return `${name.slice(0, end)}${marker}`;
}

export interface LlmMessage {
  role: 'user' | 'assistant';
  content: string | Array<TextBlock | ToolUseBlock | ToolResultBlock>;
}

/** Anthropic tool format, the one format every tool is declared in (docs/design.md#agent-tools). */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export type JsonSchema = Record<string, unknown>;

export const SimulatedResponseSchema = z.union([
  z.strictObject({ text: z.string().max(100_000) }),
  z.strictObject({ json: z.unknown() }),
  z.strictObject({
    toolUse: z.strictObject({
      name: z.string().min(1).max(MAX_TOOL_NAME_CHARS),
      input: z.record(z.string(), z.unknown()).default({}),
    }),
  }),
  z.strictObject({
    error: z.strictObject({
      status: z.int().min(400).max(599),
      retryAfterMs: z.int().min(0).max(600_000).optional(),
      message: z.string().max(1000).optional(),
    }),
  }),
]);
export type SimulatedResponse = z.infer<typeof SimulatedResponseSchema>;

/** Script for the embedded `sim` provider; ignored by every real provider. */
export const SimulateSchema = z.strictObject({
  latencyMs: z.int().min(0).max(600_000).optional(),
  responses: z.array(SimulatedResponseSchema).max(100).optional(),
});
export type Simulate = z.infer<typeof SimulateSchema>;

export interface LlmRequest {
  /** The provider's own model id (no `provider/` prefix). */
  model: string;
  system?: string;
  messages: LlmMessage[];
  maxTokens: number;
  temperature?: number;
  stop?: string[];
  tools?: ToolDefinition[];
  /** The JSON Schema the final answer must satisfy; the sim provider answers with an instance of it. */
  responseFormat?: JsonSchema;
  /** sim only: the agent's script, and the key under which its position is tracked. */
  simulate?: Simulate & { scriptKey: string };
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export interface LlmResponse {
  content: ContentBlock[];
  stopReason: StopReason;
  usage: TokenUsage;
  model: string;
  requestId: string | null;
  /** True when produced by the embedded simulator, so it is labelled as such everywhere. */
  simulated?: boolean;
}

export function responseText(response: LlmResponse): string {
  let text = '';
  for (const block of response.content) if (block.type === 'text') text += block.text;
  return text;
}
