import type { ToolDefinition } from '../domain/llm.js';
import { INTROSPECTION_TOOLS } from './introspection.js';
import { retrieveTool } from './retrieve.js';
import { type Tool, type ToolContext, ToolRefusal, toolDefinition } from './tool.js';
import { dataOutput, storedInput } from './tool-output.js';

export interface ToolResult {
  /** What the model reads: the output as JSON inside the data delimiter (see tool-output.ts). */
  content: string;
  isError: boolean;
  output: unknown;
  /** A failure that was not a refusal (a bug, an I/O error): the caller reports it. */
  fault?: unknown;
}

export interface ToolRegistry {
  names(): string[];
  /** Full definitions for the given names, sorted by name (stable requests, stable cache keys). */
  definitions(names: readonly string[]): ToolDefinition[];
  /** Whether the tool changes nothing (the exploration endpoint runs only those). */
  isReadOnly(name: string): boolean;
  /** Why `input` is not valid for the tool, or undefined when it is (unknown tools included). */
  inputError(name: string, input: unknown): string | undefined;
  /** A model-written input as the event and the span keep it: redacted, cut past MAX_TOOL_RESULT_BYTES. */
  storedInput(input: unknown): unknown;
  /** Runs a tool; invalid input, unknown tools, refusals and failures come back as error results. */
  run(name: string, input: unknown, context: ToolContext): Promise<ToolResult>;
}

export const BUILT_IN_TOOLS: readonly Tool[] = [...INTROSPECTION_TOOLS, retrieveTool];

function describeIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return `invalid input: ${issues.map((i) => `${i.path.map(String).join('.') || 'input'}: ${i.message}`).join('; ')}`;
}

export interface ToolRegistryOptions {
  /** MAX_TOOL_RESULT_BYTES: a result's content is at most this; a bigger output is cut (tool-output.ts). */
  maxResultBytes: number;
}

export function createToolRegistry(
  { maxResultBytes }: ToolRegistryOptions,
  tools: readonly Tool[] = BUILT_IN_TOOLS,
): ToolRegistry {
  const errorResult = (tool: string, message: string, code?: string): ToolResult => ({
    ...dataOutput(tool, code === undefined ? { error: message } : { error: message, code }, maxResultBytes),
    isError: true,
  });
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const definitions = new Map(tools.map((tool) => [tool.name, toolDefinition(tool)]));
  return {
    names: () => [...byName.keys()].sort(),
    definitions(names) {
      return [...new Set(names)]
        .sort()
        .map((name) => definitions.get(name))
        .filter((d): d is ToolDefinition => d !== undefined);
    },
    isReadOnly: (name) => byName.get(name)?.readOnly === true,
    storedInput: (input) => storedInput(input, maxResultBytes),
    inputError(name, input) {
      const parsed = byName.get(name)?.input.safeParse(input);
      return parsed === undefined || parsed.success ? undefined : describeIssues(parsed.error.issues);
    },
    async run(name, input, context) {
      const tool = byName.get(name);
      if (!tool) return errorResult(name, `unknown tool "${name}"`);
      const parsed = tool.input.safeParse(input);
      if (!parsed.success) {
        return errorResult(name, describeIssues(parsed.error.issues));
      }
      try {
        // Tool outputs are untrusted data headed for a prompt and the event log: dataOutput scrubs
        // secrets from what it keeps.
        return { ...dataOutput(name, await tool.run(parsed.data, context), maxResultBytes), isError: false };
      } catch (err) {
        // A refusal says why; anything else is a fault of ours, not shown to the model.
        if (err instanceof ToolRefusal) return errorResult(name, err.message, err.code);
        return { ...errorResult(name, `tool "${name}" failed`), fault: err };
      }
    },
  };
}
