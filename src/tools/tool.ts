import type { z } from 'zod';
import type { ToolDefinition } from '../domain/llm.js';
import type { NodeRecord, WorkflowRecord } from '../domain/records.js';

/**
 * What a tool sees of the run that calls it: the calling node and the live node records of its
 * workflow. Tools are scoped to that workflow (and so to its tenant) by construction.
 */
export interface ToolContext {
  workflow: WorkflowRecord;
  node: NodeRecord;
  nodes: ReadonlyMap<string, NodeRecord>;
}

export interface Tool<Input = unknown> {
  definition: ToolDefinition;
  /** Validates the model's input; a failure becomes a tool-result error, never an exception. */
  input: z.ZodType<Input>;
  run(input: Input, context: ToolContext): Promise<unknown> | unknown;
}

export function defineTool<Input>(tool: Tool<Input>): Tool<unknown> {
  return tool as Tool<unknown>;
}
