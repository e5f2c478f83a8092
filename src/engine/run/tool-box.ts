import type { WorkflowDefinition } from '../../domain/definition.js';
import { AppError } from '../../domain/errors.js';
import { boundedToolName, type ToolDefinition, type ToolResultBlock, type ToolUseBlock } from '../../domain/llm.js';
import type { ChildLauncher } from '../../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import { REDACTED, redactSecrets } from '../../domain/redact.js';
import { isTerminal } from '../../domain/status.js';
import type { ToolResult } from '../../tools/registry.js';
import { type SpawnReceipt, type ToolContext, ToolRefusal } from '../../tools/tool.js';
import { asData } from '../../tools/tool-output.js';
import { isCancellation, isShutdown } from '../errors.js';
import type { RunView, ToolBox, ToolCallSite } from '../node-context.js';
import type { RunJournal } from './journal.js';
import type { EngineServices } from './services.js';

/** What the tool box needs of its run: where spawned children run, under the run's signal. */
export interface SpawnHost {
  /** Starts the child's run and keeps it: the parent does not end before its spawned children. */
  launch(child: WorkflowRecord, parentSpan: string): void;
}

/**
 * The tools of one run (docs/design.md#agent-tools): each call is a function_span, a toolInvocation event and a
 * tool_calls row; a tool outside the agent's list is refused back to the model as a tool-result
 * error, never run. The ToolContext it builds is the whole of what a tool may touch: this
 * workflow's records, this tenant's cache entries, spawning under the calling node, the prompt's
 * corpus.
 */
export class RunToolBox implements ToolBox {
  constructor(
    private readonly journal: RunJournal,
    private readonly view: RunView,
    private readonly children: ChildLauncher,
    private readonly host: SpawnHost,
    private readonly services: Pick<EngineServices, 'tools' | 'cache' | 'clock' | 'onError'>,
  ) {}

  definitions(names: readonly string[]): ToolDefinition[] {
    return this.services.tools.definitions(names);
  }

  async invoke(use: ToolUseBlock, site: ToolCallSite): Promise<ToolResultBlock & { output: unknown }> {
    // Each call on a fresh event-loop turn: a loop whose model answers without I/O (the sim
    // provider, cache hits) would otherwise run every turn in one task and hold /healthz behind it.
    await new Promise((resolve) => setImmediate(resolve));
    const { record } = site;
    const { clock, tools } = this.services;
    const started = clock.now();
    const input = tools.storedInput(use.input);
    // The model's words: an unknown name is stored and shown cut (the adapters already refuse one
    // longer than any tool's as a bad response; a cached or scripted answer is not checked there).
    const toolName = boundedToolName(use.name);
    const span = {
      type: 'function_span' as const,
      parentId: site.parentSpan,
      nodeId: record.id,
      fields: { function_name: toolName, arguments: input, result: null, success: false },
    };
    const result = await this.journal.withSpan(
      span,
      async (spanId) => {
        if (!site.allowed.has(use.name)) return refused(toolName);
        const r = await tools.run(use.name, use.input, this.context(site, spanId));
        // A tool's commit refused by the lease fence, or cut by a shutdown or a cancel, stops the
        // run like any commit of it: no tool result for the model to go on with, no fault of ours.
        if (isShutdown(r.fault) || isCancellation(r.fault)) throw r.fault;
        return r;
      },
      (r) => ({ fields: { result: r.output, success: !r.isError }, status: r.isError ? 'error' : 'ok' }),
    );
    if (result.fault !== undefined)
      this.services.onError(result.fault, { workflowId: this.view.workflow.id, tool: toolName });
    const latencyMs = clock.now() - started;
    this.journal.emit(record.id, {
      type: 'toolInvocation',
      payload: {
        node: record.name,
        toolName,
        input,
        output: result.output,
        isError: result.isError,
        duration: latencyMs,
      },
    });
    this.journal.addToolCall({
      tenantId: this.view.workflow.tenantId,
      workflowId: this.view.workflow.id,
      nodeId: record.id,
      tool: toolName,
      agent: site.agent,
      model: site.model,
      success: !result.isError,
      latencyMs,
      resultBytes: Buffer.byteLength(result.content),
      at: started,
    });
    const block: ToolResultBlock & { output: unknown } = {
      type: 'tool_result',
      tool_use_id: use.id,
      content: result.content,
      output: result.output,
    };
    if (result.isError) block.is_error = true;
    return block;
  }

  private context(site: ToolCallSite, spanId: string): ToolContext {
    const { workflow, nodes } = this.view;
    const record = site.record;
    return {
      tenantId: workflow.tenantId,
      workflowId: workflow.id,
      node: record,
      nodes,
      cacheEntry: (key) => this.services.cache.info(workflow.tenantId, key),
      spawn: (request) => this.spawn(record, site, request, spanId),
      retrieve: async (query) => {
        if (!site.retrieve) throw new ToolRefusal('this prompt has no corpus (retrieval is not configured)');
        return site.retrieve(query);
      },
    };
  }

  /**
   * A prompt step by the same agent, its user message the description (as data: no templates). The
   * name and description are the model's words: redacted like a submitted definition (docs/design.md#security),
   * since they become the child's stored row and its prompt.
   */
  private async spawn(
    record: NodeRecord,
    site: ToolCallSite,
    request: { name: string; description: string },
    parentSpan: string,
  ): Promise<SpawnReceipt> {
    const agentName = site.agent;
    const parent = this.view.definition;
    const agent = this.view.agent(agentName);
    if (!agent) throw new ToolRefusal(`agent "${agentName}" is not defined`);
    // Redaction must leave a valid name (NameSchema): its marker's brackets are not name characters,
    // and a stored definition is read back through the schema (after a restart, on another instance).
    const name = redactSecrets(request.name).replaceAll(REDACTED, 'REDACTED');
    const definition: WorkflowDefinition = {
      name,
      input: { task: redactSecrets(request.description) },
      agents: { [agentName]: agent },
      root: { type: 'prompt', name: 'spawned', agent: agentName, user: '{{input.task}}' },
    };
    if (parent.options) definition.options = { ...parent.options };
    if (this.view.workflow.correlationId) definition.correlationId = this.view.workflow.correlationId;
    let spawned: { workflow: WorkflowRecord; existing: boolean };
    try {
      spawned = await this.children.spawn({ nodeId: record.id, definition, requestedName: name, slot: site.slot });
    } catch (err) {
      if (err instanceof AppError && err.code === 'LIMIT_EXCEEDED') throw new ToolRefusal(err.message);
      throw err;
    }
    const child = spawned.workflow;
    // A child found again after a crash already runs under this run (resumed at its start) or has ended.
    if (!spawned.existing) this.host.launch(child, parentSpan);
    const status = spawned.existing && isTerminal(child.status) ? child.status : 'running';
    return { requestId: child.id, workflowId: child.id, status };
  }
}

function refused(name: string): ToolResult {
  const output = { error: `tool "${name}" is not available to this agent` };
  return { content: asData(name, output), isError: true, output };
}
