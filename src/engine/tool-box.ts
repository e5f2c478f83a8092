import type { ToolDefinition, ToolResultBlock, ToolUseBlock } from '../domain/llm.js';
import type { NodeRecord } from '../domain/records.js';
import { redactValue } from '../domain/redact.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { RunJournal } from './journal.js';
import type { RunView, ToolBox } from './node-context.js';

/**
 * The tools of one run: each call is a function_span and a toolInvocation event; a tool outside the
 * agent's list is refused back to the model as a tool-result error, never run (DESIGN §10).
 */
export class RunToolBox implements ToolBox {
  constructor(
    private readonly journal: RunJournal,
    private readonly view: RunView,
    private readonly registry: ToolRegistry,
    private readonly now: () => number,
  ) {}

  definitions(names: readonly string[]): ToolDefinition[] {
    return this.registry.definitions(names);
  }

  async invoke(
    use: ToolUseBlock,
    record: NodeRecord,
    allowed: ReadonlySet<string>,
    parentSpan: string,
  ): Promise<ToolResultBlock> {
    const started = this.now();
    const input = redactValue(use.input);
    const span = {
      type: 'function_span' as const,
      parentId: parentSpan,
      nodeId: record.id,
      fields: { function_name: use.name, arguments: input, result: null, success: false },
    };
    const result = await this.journal.withSpan(
      span,
      async () =>
        allowed.has(use.name)
          ? this.registry.run(use.name, use.input, {
              workflow: this.view.workflow,
              node: record,
              nodes: this.view.nodes,
            })
          : refused(use.name),
      (r) => ({ fields: { result: r.output, success: !r.isError }, status: r.isError ? 'error' : 'ok' }),
    );
    this.journal.emit(record.id, {
      type: 'toolInvocation',
      payload: {
        node: record.name,
        toolName: use.name,
        input,
        output: result.output,
        isError: result.isError,
        duration: this.now() - started,
      },
    });
    const block: ToolResultBlock = { type: 'tool_result', tool_use_id: use.id, content: result.content };
    if (result.isError) block.is_error = true;
    return block;
  }
}

function refused(name: string) {
  const output = { error: `tool "${name}" is not available to this agent` };
  return { content: JSON.stringify(output), isError: true, output };
}
