import type { AgentConfig, WorkflowNode } from '../../../src/domain/definition.js';
import type { ErrorInfo } from '../../../src/domain/errors.js';
import type { EventType, WorkflowEvent } from '../../../src/domain/events.js';
import type { NodeRecord, WorkflowRecord } from '../../../src/domain/records.js';
import type { ReflectionEntry } from '../../../src/domain/reflection.js';
import type { Status } from '../../../src/domain/status.js';
import type { Task } from '../../../src/domain/task.js';
import type { SummarizeInput } from '../../../src/metrics/efficiency.js';
import { fixtureEvent } from '../../support/events.js';

/** Small run fixtures for summarizeRun: a definition, its node rows, and events added by hand. */

export const T0 = Date.parse('2026-01-06T10:00:00.000Z');

export const p = (name: string, extra: Record<string, unknown> = {}): WorkflowNode =>
  ({ type: 'prompt', name, agent: 'a', user: `say ${name}`, ...extra }) as WorkflowNode;
export const seq = (name: string, ...steps: WorkflowNode[]): WorkflowNode => ({ type: 'sequence', name, steps });
export const par = (name: string, ...steps: WorkflowNode[]): WorkflowNode => ({ type: 'parallel', name, steps });

export interface RunOptions {
  status?: Status;
  error?: ErrorInfo | null;
  task?: Task;
  agents?: Record<string, AgentConfig>;
  /** Seconds between start and end. */
  seconds?: number;
}

export class RunBuilder {
  readonly workflow: WorkflowRecord;
  readonly nodes: NodeRecord[] = [];
  readonly events: WorkflowEvent[] = [];
  readonly reflections: ReflectionEntry[] = [];
  private readonly endedAt: number;

  constructor(root: WorkflowNode, options: RunOptions = {}) {
    const id = 'wf_test';
    this.endedAt = T0 + (options.seconds ?? 30) * 1000;
    this.workflow = {
      id,
      tenantId: 'acme',
      name: 'flow',
      status: options.status ?? 'completed',
      correlationId: 'session-1',
      parentWorkflowId: null,
      parentNodeId: null,
      rootWorkflowId: id,
      depth: 0,
      traceId: 'trace_x',
      definition: {
        name: 'flow',
        agents: options.agents ?? { a: { model: 'sim/haiku' } },
        root,
        ...(options.task ? { task: options.task } : {}),
      },
      output: null,
      error: options.error ?? null,
      cancelRequested: false,
      checkpoint: null,
      routing: null,
      createdAt: T0 - 500,
      startedAt: T0,
      endedAt: this.endedAt,
    };
    const visit = (node: WorkflowNode, parentId: string | null) => {
      const record: NodeRecord = {
        id: `nd_${node.name}`,
        workflowId: id,
        parentId,
        name: node.name,
        type: node.type,
        position: 0,
        depth: 0,
        status: 'completed',
        attempts: 1,
        output: null,
        error: null,
        childWorkflowId: null,
        cacheKeys: [],
        startedAt: T0,
        endedAt: this.endedAt,
      };
      this.nodes.push(record);
      if (node.type === 'sequence' || node.type === 'parallel') for (const s of node.steps) visit(s, record.id);
    };
    visit(root, null);
  }

  node(name: string, patch: Partial<NodeRecord>): this {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name}`);
    Object.assign(node, patch);
    return this;
  }

  event(type: EventType, node: string | null, payload: Record<string, unknown> = {}): this {
    const base = {
      workflowId: this.workflow.id,
      tenantId: 'acme',
      seq: this.events.length + 1,
      nodeId: node === null ? null : `nd_${node}`,
      at: T0 + this.events.length,
    };
    this.events.push(fixtureEvent(base, type, node === null ? payload : { node, ...payload }));
    return this;
  }

  /** agentPromptStart + agentPromptEnd of one provider call (one request) in the node's first attempt. */
  call(node: string, model = 'sim/haiku', tokens: [number, number] = [100, 50], costUsd = 0.001, attempt = 1): this {
    this.event('agentPromptStart', node, { model, attempt });
    return this.event('agentPromptEnd', node, {
      model,
      attempt,
      requests: 1,
      tokenUsage: { inputTokens: tokens[0], outputTokens: tokens[1] },
      costUsd,
    });
  }

  step(node: string, status: Status = 'completed'): this {
    this.event('stepStart', node, { type: 'prompt', attempt: 1 });
    return this.event('stepEnd', node, { status, attempt: 1 });
  }

  reflection(node: string, fields: Partial<ReflectionEntry> = {}): this {
    this.reflections.push({
      id: `rf_${this.reflections.length}`,
      workflowId: this.workflow.id,
      tenantId: 'acme',
      nodeId: `nd_${node}`,
      nodeName: node,
      attempt: 1,
      timestamp: T0 + 100 + this.reflections.length,
      level: 'workflow',
      reason: 'retry it',
      error: { code: 'VALIDATION_FAILED', message: 'bad answer' },
      resolution: { decision: 'retry' },
      success: true,
      ...fields,
    });
    return this;
  }

  input(): SummarizeInput {
    return {
      workflow: this.workflow,
      nodes: this.nodes,
      events: this.events,
      reflections: this.reflections,
      endedAt: this.endedAt,
    };
  }
}
