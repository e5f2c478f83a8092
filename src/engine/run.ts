import {
  type AgentConfig,
  DEFAULTS,
  type PromptNode,
  type WorkflowDefinition,
  type WorkflowNode,
} from '../domain/definition.js';
import { AppError, type ErrorInfo, toErrorInfo } from '../domain/errors.js';
import type { EventType } from '../domain/events.js';
import type { EfficiencyRecord } from '../domain/metrics.js';
import type { NewWorkflow } from '../domain/ports.js';
import type { NodePatch, NodeRecord, WorkflowPatch, WorkflowRecord } from '../domain/records.js';
import type { ReflectionEntry } from '../domain/reflection.js';
import type { Status } from '../domain/status.js';
import { metricsChanges, withPending } from '../metrics/final.js';
import { ChangeBuffer } from './change-buffer.js';
import { runChildWorkflowNode } from './child-runner.js';
import { runParallel, runSequence } from './container-runner.js';
import { inheritDeadline, withDeadline } from './deadline.js';
import { runPromptNode } from './prompt-runner.js';
import { ReflectionLedger } from './reflection-ledger.js';
import { cancelledError, type EngineServices, isCancellation, isShutdown, shuttingDownError } from './services.js';
import type { SpanRecorder } from './span-recorder.js';
import { MISSING, type TemplateScope } from './templates.js';
import { reflectOnFailure } from './workflow-reflection.js';

/**
 * One execution of one workflow: walks its tree, keeps the node records in memory, and commits each
 * node's result with its events in one transaction before moving on (DESIGN §4). Completed nodes
 * replay their stored output without calling a model, which is what makes restarts resumable.
 */
export class Run {
  readonly nodesByName = new Map<string, NodeRecord>();
  readonly nodesById = new Map<string, NodeRecord>();
  readonly definition: WorkflowDefinition;
  readonly agents: Record<string, AgentConfig>;
  readonly templateScope: TemplateScope;
  /** Provider requests sent by this workflow, every attempt (what limits.maxLlmCalls bounds). */
  providerRequests: number;
  private readonly controller = new AbortController();
  readonly reflections: ReflectionLedger;
  readonly changes: ChangeBuffer;
  private readonly reported = new WeakSet<object>();
  private readonly startSeq: number;

  constructor(
    readonly workflow: WorkflowRecord,
    nodes: readonly NodeRecord[],
    seq: number,
    readonly services: EngineServices,
    history: readonly ReflectionEntry[] = [],
    /** Requests earlier executions of this workflow sent (a resumed run keeps paying from the same budget). */
    requestsSent = 0,
  ) {
    this.providerRequests = requestsSent;
    this.reflections = new ReflectionLedger(this, history);
    this.startSeq = seq;
    this.changes = new ChangeBuffer(workflow, seq, services);
    for (const node of nodes) {
      this.nodesByName.set(node.name, node);
      this.nodesById.set(node.id, node);
    }
    this.definition = workflow.definition;
    this.agents = workflow.definition.agents;
    this.templateScope = {
      input: workflow.definition.input,
      stepOutput: (name) => {
        const node = this.nodesByName.get(name);
        return node?.status === 'completed' ? node.output : MISSING;
      },
    };
  }

  get spans(): SpanRecorder {
    return this.changes.spans;
  }

  get requestLimit(): number {
    return this.definition.options?.limits?.maxLlmCalls ?? DEFAULTS.limits.maxLlmCalls;
  }

  abort(reason: AppError): void {
    this.controller.abort(reason);
  }

  /** Runs to a terminal state; rethrows only SHUTTING_DOWN (the workflow then resumes at next start). */
  async execute(
    parentSignal: AbortSignal | undefined,
    cancelRequested: boolean,
    parentSpan: string | null = null,
  ): Promise<void> {
    const { clock } = this.services;
    const wf = this.workflow;
    if (cancelRequested || wf.cancelRequested) this.controller.abort(cancelledError());
    const onParentAbort = () => this.controller.abort(parentSignal?.reason);
    if (parentSignal?.aborted) onParentAbort();
    else parentSignal?.addEventListener('abort', onParentAbort, { once: true });
    // A child workflow ends no later than its parent's deadline.
    inheritDeadline(this.controller.signal, parentSignal);

    const now = clock.now();
    const startedAt = wf.startedAt ?? now;
    const timeoutMs = this.definition.options?.timeoutMs ?? DEFAULTS.workflowTimeoutMs;
    const deadline = withDeadline(
      this.controller.signal,
      Math.max(0, startedAt + timeoutMs - now),
      () => new AppError('WORKFLOW_TIMEOUT', `the workflow did not finish within ${timeoutMs} ms`),
      now,
    );
    // One root agent_span per execution: after a crash the old one ends `interrupted`, and the
    // resumed execution gets its own (DESIGN §9: the run is an "orchestrator" agent_span).
    // A fresh root run's span starts at submission, so the input_validation check lies inside it
    // (DESIGN §9: no span starts before its parent); a child's starts under its parent's handoff.
    const submittedHere = wf.status === 'idle' && wf.parentWorkflowId === null;
    const rootStart = submittedHere ? wf.createdAt : clock.now();
    const root = this.spans.start('agent_span', parentSpan, null, { agent_name: 'orchestrator' }, rootStart);
    if (wf.status === 'idle') {
      this.patchWorkflow({ status: 'running', startedAt });
      this.emit('workflowStart', null, { name: wf.name, parentWorkflowId: wf.parentWorkflowId });
      // The definition passed its checks at submission; recorded from the root span's start.
      this.spans.record(
        'guardrail_span',
        root,
        null,
        { guardrail_name: 'input_validation', triggered: false, blocking: true },
        'ok',
        rootStart,
      );
    }
    try {
      const output = await this.runNode(this.definition.root, deadline.signal, root);
      this.spans.end(root, 'ok');
      await this.finish('completed', output, null);
    } catch (err) {
      if (isShutdown(err)) {
        this.spans.end(root, 'interrupted');
        await this.flush();
        throw err;
      }
      const error = this.errorInfo(err);
      this.spans.end(root, 'error', undefined, error);
      await this.finish(isCancellation(err) ? 'cancelled' : 'failed', null, error);
    } finally {
      deadline.dispose();
      parentSignal?.removeEventListener('abort', onParentAbort);
    }
    await this.flush();
  }

  /** The terminal state, its workflowEnd event, efficiency record and reward: one commit (the caller flushes). */
  private async finish(status: Status, output: unknown, error: ErrorInfo | null): Promise<void> {
    const now = this.services.clock.now();
    if (status === 'cancelled') {
      for (const node of this.nodesById.values()) {
        if (node.status === 'idle' || node.status === 'running')
          this.patchNode(node, { status: 'cancelled', endedAt: now });
      }
    }
    this.patchWorkflow({ status, output, error, endedAt: now });
    const durationMs = now - (this.workflow.startedAt ?? now);
    this.emit('workflowEnd', null, { status, durationMs, ...(error ? { error } : {}) });

    try {
      await this.recordMetrics(now);
    } catch (err) {
      // Observability must never keep a workflow from ending: report and finish without a record.
      this.services.onError(err, { workflowId: this.workflow.id, during: 'efficiency record' });
    }
  }

  /** The efficiency record and reward (DESIGN §9), computed from the whole history of the run. */
  private async recordMetrics(endedAt: number): Promise<void> {
    // A resumed run reads what earlier executions committed; a fresh one has it all in memory.
    const earlier = this.startSeq > 0 ? await this.services.store.events(this.workflow.id, 0, this.startSeq) : [];
    const { events, reflections } = withPending(
      { events: [...earlier, ...this.changes.emitted], reflections: this.reflections.history },
      { reflections: this.reflections.recorded, reflectionOutcomes: this.reflections.outcomes },
    );
    const metrics = metricsChanges({
      workflow: this.workflow,
      nodes: [...this.nodesById.values()],
      events,
      reflections,
      endedAt,
      children: await this.childRecords(),
    });
    this.changes.addMetrics(metrics.efficiency, metrics.rewards);
  }

  /** The efficiency records of the child workflows this run started (committed before it ends). */
  private async childRecords(): Promise<EfficiencyRecord[]> {
    const ids = [...this.nodesById.values()].flatMap((n) => (n.childWorkflowId === null ? [] : [n.childWorkflowId]));
    const records = await Promise.all(ids.map((id) => this.services.metrics.efficiency(this.workflow.tenantId, id)));
    return records.filter((r): r is EfficiencyRecord => r !== undefined);
  }

  /** `parentSpan`: the span this node's spans hang under (its container's, or the run's root). */
  async runNode(node: WorkflowNode, signal: AbortSignal, parentSpan: string): Promise<unknown> {
    const record = this.nodesByName.get(node.name);
    if (!record) throw new AppError('INTERNAL', `node "${node.name}" has no record`);
    if (record.status === 'completed') return record.output;
    if (record.status === 'failed' && node.optional) return null;
    if (signal.aborted) throw signal.reason;
    if (this.services.isStopping()) throw shuttingDownError();

    const { clock } = this.services;
    for (;;) {
      const startedAt = clock.now();
      const attempt = record.attempts + 1;
      this.patchNode(record, { status: 'running', attempts: attempt, startedAt, endedAt: null, error: null });
      this.emit('stepStart', record.id, { node: node.name, type: node.type, attempt });
      this.flushInBackground();
      try {
        const output = await this.runKind(node, record, signal, attempt, parentSpan);
        const endedAt = clock.now();
        this.reflections.settleNode(record.id, true);
        this.patchNode(record, { status: 'completed', output, endedAt });
        this.emit('stepEnd', record.id, {
          node: node.name,
          status: 'completed',
          attempt,
          durationMs: endedAt - startedAt,
        });
        // A prompt's result must be durable before the run moves on (no second model call after a
        // crash). A container's need not: after a crash it completes again from its children's stored
        // outputs at no cost, so its commit rides along with the next one.
        if (node.type === 'prompt') await this.flush();
        else this.flushInBackground();
        return output;
      } catch (err) {
        if (isShutdown(err)) throw err;
        const endedAt = clock.now();
        const status: Status = isCancellation(err) ? 'cancelled' : 'failed';
        const error = this.errorInfo(err);
        this.reflections.settleNode(record.id, false);
        this.patchNode(record, { status, error, endedAt });
        if (status === 'failed' && typeof err === 'object' && err !== null && !this.reported.has(err)) {
          this.reported.add(err);
          this.emit('error', record.id, { node: node.name, attempt, ...error });
        }
        const retry =
          status === 'failed' && node.type === 'prompt' && !signal.aborted
            ? await reflectOnFailure(this, node, record, err, attempt, signal, parentSpan)
            : false;
        this.emit('stepEnd', record.id, {
          node: node.name,
          status,
          attempt,
          durationMs: endedAt - startedAt,
          error,
          retry,
        });
        await this.flush();
        if (retry) {
          const delayMs = this.reflections.retryDelayMs;
          if (delayMs > 0) await clock.sleep(delayMs, signal);
          continue;
        }
        if (status === 'failed' && node.optional) return null;
        throw err;
      }
    }
  }

  private async runKind(
    node: WorkflowNode,
    record: NodeRecord,
    signal: AbortSignal,
    attempt: number,
    parentSpan: string,
  ): Promise<unknown> {
    if (node.type === 'prompt') {
      const revised = this.reflections.revisedInputs(node, record);
      return runPromptNode(this, node, record, signal, attempt, revised, parentSpan);
    }
    if (node.type === 'workflow') return runChildWorkflowNode(this, node, record, signal, parentSpan);
    const span = this.spans.start('custom_span', parentSpan, record.id, {
      operation_name: node.type,
      metadata: { node: node.name, attempt },
    });
    try {
      const output =
        node.type === 'sequence'
          ? await runSequence(this, node, signal, span)
          : await runParallel(this, node, signal, span);
      this.spans.end(span, 'ok');
      return output;
    } catch (err) {
      this.spans.end(span, isShutdown(err) ? 'interrupted' : 'error', undefined, toErrorInfo(err));
      throw err;
    }
  }

  private errorInfo(err: unknown): ErrorInfo {
    if (!(err instanceof AppError)) this.services.onError(err, { workflowId: this.workflow.id });
    return toErrorInfo(err);
  }

  /** DESIGN §6 toggles: the workflow's `options.cache`, the agent's `enableCache`, the prompt's `disableCache`. */
  cacheEnabled(node: PromptNode, agent: AgentConfig): boolean {
    return (
      this.definition.options?.cache !== false && agent.enableCache !== false && node.overrides?.disableCache !== true
    );
  }

  // ── change tracking: every mutation goes to memory and to the next commit (ChangeBuffer) ──

  emit(type: EventType, nodeId: string | null, payload: Record<string, unknown>): void {
    this.changes.emit(type, nodeId, payload);
  }

  patchNode(record: NodeRecord, patch: Omit<NodePatch, 'id'>): void {
    this.changes.patchNode(record, patch);
  }

  patchWorkflow(patch: Omit<WorkflowPatch, 'id'>): void {
    this.changes.patchWorkflow(patch);
  }

  addWorkflow(created: NewWorkflow): void {
    this.changes.addWorkflow(created);
  }

  flush(): Promise<void> {
    return this.changes.flush();
  }

  flushInBackground(): void {
    this.changes.flushInBackground();
  }
}
