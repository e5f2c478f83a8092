import { toErrorInfo } from '../../domain/errors.js';
import type { EventBody, WorkflowEvent } from '../../domain/events.js';
import type { ChangeSet, NewWorkflow, TenantEfficiencyRecord, TenantRewardRecord } from '../../domain/ports.js';
import type { NodePatch, NodeRecord, WorkflowPatch, WorkflowRecord } from '../../domain/records.js';
import type { ReflectionEntry } from '../../domain/reflection.js';
import type { SpanStatus, SpanType } from '../../domain/spans.js';
import type { RetrievalRunRecord, ToolCallRecord } from '../../domain/tool-analytics.js';
import { isShutdown } from '../errors.js';
import type { Journal, SpanEnd, SpanStart } from '../node-context.js';
import type { EngineServices } from './services.js';
import { SpanRecorder } from './span-recorder.js';
import { utcDay } from './tenant-spend.js';

/**
 * Everything a run changes, kept in memory (node and workflow records are patched in place) and
 * queued for the next commit: events with the run's monotonic `seq`, node and workflow patches, new
 * child workflows, spans, reflection entries, the final efficiency record and reward. A commit is
 * one transaction (grouped with other runs' by the store); its events are published only after it.
 */
export class RunJournal implements Journal {
  private readonly spans: SpanRecorder;
  /** Every event of this execution, for the efficiency record at the end (no re-read of a fresh run). */
  readonly emitted: WorkflowEvent[] = [];
  private pending: Pending = emptyChanges();
  private readonly pendingNodes = new Map<string, NodePatch>();
  private commitScheduled = false;

  constructor(
    private readonly workflow: WorkflowRecord,
    private seq: number,
    private readonly services: Pick<EngineServices, 'store' | 'bus' | 'clock' | 'onError'>,
  ) {
    this.spans = new SpanRecorder(
      { traceId: workflow.traceId, workflowId: workflow.id, tenantId: workflow.tenantId },
      () => services.clock.now(),
    );
  }

  emit(nodeId: string | null, body: EventBody): void {
    const event: WorkflowEvent = {
      workflowId: this.workflow.id,
      tenantId: this.workflow.tenantId,
      seq: ++this.seq,
      nodeId,
      at: this.services.clock.now(),
      ...body,
    };
    this.pending.events.push(event);
    this.emitted.push(event);
  }

  patchNode(record: NodeRecord, patch: Omit<NodePatch, 'id'>): void {
    Object.assign(record, patch);
    // Patches of one node within one commit merge into one UPDATE (start + end of a fast step).
    const pending = this.pendingNodes.get(record.id);
    if (pending) Object.assign(pending, patch);
    else this.pendingNodes.set(record.id, { id: record.id, ...patch });
  }

  patchWorkflow(patch: Omit<WorkflowPatch, 'id'>): void {
    Object.assign(this.workflow, patch);
    this.pending.workflows.push({ id: this.workflow.id, ...patch });
  }

  addWorkflow(created: NewWorkflow): void {
    this.pending.newWorkflows.push(created);
  }

  addReflection(entry: ReflectionEntry): void {
    this.pending.reflections.push(entry);
  }

  addReflectionOutcome(id: string, success: boolean): void {
    this.pending.reflectionOutcomes.push({ id, success });
  }

  addToolCall(call: ToolCallRecord): void {
    this.pending.toolCalls.push(call);
  }

  addRetrievalRun(run: RetrievalRunRecord): void {
    this.pending.retrievalRuns.push(run);
  }

  addMetrics(efficiency: TenantEfficiencyRecord[], rewards: TenantRewardRecord[]): void {
    this.pending.efficiency.push(...efficiency);
    this.pending.rewards.push(...rewards);
  }

  async withSpan<T extends SpanType, R>(
    span: SpanStart<T>,
    work: (spanId: string) => Promise<R>,
    end?: (result: R) => SpanEnd<T>,
  ): Promise<R> {
    const id = this.spans.start(span.type, span.parentId, span.nodeId, span.fields, span.startedAt);
    try {
      const result = await work(id);
      const ending = end?.(result);
      this.spans.end(id, ending?.status ?? 'ok', ending?.fields);
      return result;
    } catch (err) {
      this.spans.end(id, isShutdown(err) ? 'interrupted' : 'error', undefined, toErrorInfo(err));
      throw err;
    }
  }

  recordSpan<T extends SpanType>(span: SpanStart<T>, status: SpanStatus = 'ok'): string {
    return this.spans.record(span.type, span.parentId, span.nodeId, span.fields, status, span.startedAt);
  }

  /** The run's own root span: opened when an execution starts, closed when it ends. */
  openSpan<T extends SpanType>(span: SpanStart<T>): string {
    return this.spans.start(span.type, span.parentId, span.nodeId, span.fields, span.startedAt);
  }

  closeSpan(spanId: string, status: SpanStatus, error?: unknown): void {
    this.spans.end(spanId, status, undefined, error === undefined ? undefined : toErrorInfo(error));
  }

  commit(): Promise<void> {
    const changes = this.pending;
    if (!this.spans.isEmpty) changes.spans = this.spans.drain();
    const usage = this.spans.drainUsage();
    if (usage) {
      changes.usage = [usage];
      // The day's real spend, summed with the cost records that make it (TENANT_DAILY_BUDGET_USD).
      if (usage.costUsd !== 0) {
        const { tenantId } = this.workflow;
        changes.tenantSpend = [{ tenantId, day: utcDay(this.services.clock.now()), costUsd: usage.costUsd }];
      }
    }
    if (this.pendingNodes.size > 0) {
      changes.nodes = [...this.pendingNodes.values()];
      this.pendingNodes.clear();
    }
    if (isEmpty(changes)) return Promise.resolve();
    this.pending = emptyChanges();
    changes.root = this.workflow.rootWorkflowId;
    return this.services.store.commit(changes).then(() => {
      if (changes.events.length > 0) this.services.bus.publish(changes.events);
    });
  }

  /**
   * Committed on the next turn of the event loop, unless an awaited commit in this turn takes it
   * along first — which is what happens for a fast step, so it costs one transaction, not two.
   */
  commitSoon(): void {
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    setImmediate(() => {
      this.commitScheduled = false;
      this.commit().catch((err) => {
        // A lost lease stops the run through the executor; it is no error of this commit's.
        if (!isShutdown(err)) this.services.onError(err, { workflowId: this.workflow.id });
      });
    });
  }
}

/** A change set's lists, always present while the run collects them. */
type Pending = Required<Omit<ChangeSet, 'root'>> & Pick<ChangeSet, 'root'>;

function isEmpty(changes: Pending): boolean {
  return Object.values(changes).every((list) => list === undefined || list.length === 0);
}

function emptyChanges(): Pending {
  return {
    newWorkflows: [],
    workflows: [],
    nodes: [],
    events: [],
    reflections: [],
    reflectionOutcomes: [],
    spans: [],
    usage: [],
    toolCalls: [],
    retrievalRuns: [],
    efficiency: [],
    rewards: [],
    requestsTaken: [],
    tenantSpend: [],
  };
}
