import type { ToolDefinition } from '../domain/llm.js';
import { redactValue } from '../domain/redact.js';
import { inspectCurrentNode } from './introspection.js';
import type { Tool, ToolContext } from './tool.js';

export interface ToolResult {
  content: string;
  isError: boolean;
  output: unknown;
}

export interface ToolRegistry {
  names(): string[];
  /** Full definitions for the given names, sorted by name (stable requests, stable cache keys). */
  definitions(names: readonly string[]): ToolDefinition[];
  /** Runs a tool; invalid input, unknown tools and thrown errors come back as error results. */
  run(name: string, input: unknown, context: ToolContext): Promise<ToolResult>;
}

function errorResult(message: string): ToolResult {
  return { content: JSON.stringify({ error: message }), isError: true, output: { error: message } };
}

export function createToolRegistry(tools: readonly Tool[] = [inspectCurrentNode]): ToolRegistry {
  const byName = new Map(tools.map((tool) => [tool.definition.name, tool]));
  return {
    names: () => [...byName.keys()].sort(),
    definitions(names) {
      return [...new Set(names)]
        .sort()
        .map((name) => byName.get(name)?.definition)
        .filter((d): d is ToolDefinition => d !== undefined);
    },
    async run(name, input, context) {
      const tool = byName.get(name);
      if (!tool) return errorResult(`unknown tool "${name}"`);
      const parsed = tool.input.safeParse(input);
      if (!parsed.success) {
        const reasons = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`);
        return errorResult(`invalid input: ${reasons.join('; ')}`);
      }
      try {
        // Tool outputs are untrusted data headed for a prompt and the event log: scrub secrets.
        const output = redactValue(await tool.run(parsed.data, context));
        return { content: JSON.stringify(output), isError: false, output };
      } catch (err) {
        return errorResult(err instanceof Error ? err.message : 'tool failed');
      }
    },
  };
}
