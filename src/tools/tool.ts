import { z } from 'zod';
import type { CacheEntryInfo } from '../domain/cache.js';
import type { ToolDefinition } from '../domain/llm.js';
import type { NodeRecord } from '../domain/records.js';

/** A chunk a `retrieve` call returns (the corpus store's hit, as the tool shows it). */
export interface RetrievedChunk {
  chunkId: string;
  documentId: string;
  title: string | null;
  text: string;
  score: number;
}

/** What `request_spawn_workflow` answers when the child was started. */
export interface SpawnReceipt {
  requestId: string;
  workflowId: string;
  status: string;
}

/**
 * What a tool sees of the run that calls it (docs/design.md#agent-tools): the calling node, the live node records
 * of its own workflow, and the few capabilities the engine lends it. Everything is scoped to the
 * calling workflow — and so to its tenant — by construction: no tool is given an id to look up.
 */
export interface ToolContext {
  tenantId: string;
  workflowId: string;
  node: NodeRecord;
  nodes: ReadonlyMap<string, NodeRecord>;
  /** A cache entry of this tenant, or undefined. */
  cacheEntry(key: string): Promise<CacheEntryInfo | undefined>;
  /** Starts a child workflow under the calling node; throws a ToolRefusal naming the limit. */
  spawn(request: { name: string; description: string }): Promise<SpawnReceipt>;
  /** The calling prompt's corpus, when it has `retrieval`; throws a ToolRefusal otherwise. */
  retrieve(query: string): Promise<RetrievedChunk[]>;
}

/**
 * A refused action or a bad request: its message (and code, when it has one) goes back to the model
 * as a tool-result error; nothing is reported as a fault.
 */
export class ToolRefusal extends Error {
  constructor(
    message: string,
    /** An error code of the API's table (e.g. NOT_FOUND), for a model or a client to tell cases apart. */
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface Tool<Input = unknown> {
  name: string;
  /** Imperative, unbiased (the description audit keeps baton's own at Tier 0). */
  description: string;
  /** The one schema of the input: validates the model's input and generates `input_schema`. */
  input: z.ZodType<Input>;
  /** Changes nothing: may run from the exploration endpoint as a node of a finished workflow. */
  readOnly: boolean;
  run(input: Input, context: ToolContext): Promise<unknown> | unknown;
}

export function defineTool<Input>(tool: Tool<Input>): Tool<unknown> {
  return tool as Tool<unknown>;
}

/** The Anthropic tool definition, its `input_schema` generated from the zod input. */
export function toolDefinition(tool: Tool): ToolDefinition {
  const { $schema: _, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, input_schema: inputSchema };
}
